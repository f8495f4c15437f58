#!/usr/bin/env bash
# make demo: Loom's main job on its offline default. A copy of examples/demo
# (a small project whose test fails) is handed to `loom -p`; the model's side
# is scripted by a replay cassette, but every tool call really runs: Loom
# runs the test, reads the file, edits it, runs the test again. The test
# goes from red to green on disk, and the session can be resumed.
set -euo pipefail
loom=$(cd "$(dirname "${1:-build/loom}")" && pwd)/$(basename "${1:-build/loom}")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/loom-demo.XXXXXX)
export LOOM_HOME=${LOOM_HOME:-$work/home}
cp -r "$root/examples/demo" "$work/project"
cd "$work/project"

bold=$(tput bold 2>/dev/null || true); dim=$(tput dim 2>/dev/null || true); off=$(tput sgr0 2>/dev/null || true)
echo "${dim}# The model is scripted (examples/cassettes/fix-test.json); tools run for real in $work/project.${off}"
echo "${bold}\$ bash test.sh${off}"
bash test.sh || true
echo
echo "${bold}\$ loom -p \"The test in this project fails. Fix it.\" --permission-mode acceptEdits --allowedTools \"Bash(bash test.sh)\" --verbose${off}"
"$loom" -p "The test in this project fails. Fix it." --verbose \
  --permission-mode acceptEdits --allowedTools "Bash(bash test.sh)" \
  --provider replay --cassette "$root/examples/cassettes/fix-test.json"
echo
echo "${bold}\$ bash test.sh${off}"
bash test.sh
echo
session=$(ls -t "$LOOM_HOME"/projects/*/*.jsonl | head -n 1)
echo "${dim}Session: $(basename "$session" .jsonl) — $(wc -l < "$session") records in $session"
echo "With a live model: export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY=…) and run build/loom -p \"…\" in your project.${off}"

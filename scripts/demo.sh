#!/usr/bin/env bash
# make demo: Loom's main job on its offline default — a prompt through the
# replay provider, streamed to the terminal, written as a session on disk,
# then resumed from that file.
set -euo pipefail
loom=${1:-build/loom}
root=$(cd "$(dirname "$0")/.." && pwd)
export LOOM_HOME=${LOOM_HOME:-$(mktemp -d /tmp/loom-demo.XXXXXX)}
cassette="$root/examples/cassettes/demo.json"

echo "\$ loom -p \"What is Loom?\" --provider replay --cassette examples/cassettes/demo.json"
"$loom" -p "What is Loom?" --provider replay --cassette "$cassette"
file=$(ls -t "$LOOM_HOME"/projects/*/*.jsonl | head -n 1)
id=$(basename "$file" .jsonl)
echo
echo "\$ loom -p \"And now?\" --provider replay --cassette … --resume $id"
"$loom" -p "And now?" --provider replay --cassette "$cassette" --resume "$id"
echo
echo "Session $id: $(wc -l < "$file") records in $file"

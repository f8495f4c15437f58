#!/usr/bin/env bash
# bench/resume.sh BUILD — resuming a long session: a generated session file
# of BENCH_RESUME_RECORDS records (default 100,000, about 80 MB; compaction
# summaries and rewind branches, bench/gen_session.py), then
# `loom --resume <id> -p "go on"` against mockllm. Prints loom's CPU and
# peak RSS (its own getrusage, the process line of LOOM_LOG) and the size of
# the request it sent, for the first resume (which builds the session's
# index, docs/session-format.md) and for a resume with the index in place
# (median of BENCH_RESUME_RUNS). Figures only.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
records=${BENCH_RESUME_RECORDS:-100000}
runs=${BENCH_RESUME_RUNS:-5}
t=$(mktemp -d /tmp/loom-bench-resume.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export no_proxy='*' LOOM_HOME="$t/home"
mkdir -p "$t/proj"
slug=$(printf '%s' "$t/proj" | tr -c 'A-Za-z0-9' '-')
sid=0190a000-0000-7000-8000-000000000000
mkdir -p "$LOOM_HOME/projects/$slug"
python3 "$root/bench/gen_session.py" "$LOOM_HOME/projects/$slug/$sid.jsonl" "$records"
cp "$LOOM_HOME/projects/$slug/$sid.jsonl" "$t/pristine.jsonl"
size=$(stat -c %s "$t/pristine.jsonl")
echo '{"sequence": true, "turns": [{"reply": {"text": "going on."}, "repeat": 1000}]}' > "$t/s.json"
"$build/mockllm" --scenario "$t/s.json" --port 0 --port-file "$t/port" --log "$t/mock.jsonl" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$t/port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
one() { # one resume of a fresh copy of the file; $1: keep the index (1) or not (0)
  cp "$t/pristine.jsonl" "$LOOM_HOME/projects/$slug/$sid.jsonl"
  [ "$1" = 1 ] || rm -f "$LOOM_HOME/projects/$slug/$sid.idx"
  : > "$t/run.log"
  LOOM_LOG="$t/run.log" "$build/loom" --resume "$sid" -p "go on" --cwd "$t/proj" >/dev/null
  jq -r 'select(.module=="process") | "\(.cpu_user_ms + .cpu_sys_ms) \(.max_rss_kb)"' "$t/run.log"
}
cold=$(one 0)
# The index built by the cold run is for the pristine bytes plus that run's
# turn; rebuild it for the pristine file alone so each warm run starts alike.
cp "$t/pristine.jsonl" "$LOOM_HOME/projects/$slug/$sid.jsonl"
rm -f "$LOOM_HOME/projects/$slug/$sid.idx"
LOOM_LOG=/dev/null "$build/loom" --resume "$sid" -p "go on" --cwd "$t/proj" >/dev/null
warm=$(for _ in $(seq 1 "$runs"); do
  cp "$t/pristine.jsonl" "$LOOM_HOME/projects/$slug/$sid.jsonl"
  one 1
done)
req=$(tail -n 1 "$t/mock.jsonl" | jq -c .body | wc -c)
warm_cpu=$(echo "$warm" | awk '{print $1}' | median)
warm_rss=$(echo "$warm" | awk '{print $2}' | median)
read -r cold_cpu cold_rss <<< "$cold"
printf 'resume of a %d-record session (%d MB) to the first request:\n' "$records" $((size / 1000000))
printf '  %-30s CPU %8.1f ms   peak RSS %7d KiB\n' "without an index (builds it)" "$cold_cpu" "$cold_rss"
printf '  %-30s CPU %8.1f ms   peak RSS %7d KiB   (median of %d)\n' "with the index" \
  "$warm_cpu" "$warm_rss" "$runs"
printf '  %-30s %d bytes\n' "request body" "$req"

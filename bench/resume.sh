#!/usr/bin/env bash
# bench/resume.sh BUILD — resuming a long session: a generated session file
# of BENCH_RESUME_RECORDS records (default 100,000, about 80 MB; compaction
# summaries and rewind branches, bench/gen_session.py), then
# `loom --resume <id> -p "go on"` against mockllm. Prints loom's CPU and
# peak RSS (its own getrusage, the process line of LOOM_LOG) and the size of
# the request it sent: the file read whole (LOOM_SESSION_INDEX=0, how every
# resume worked before the index), the first resume (which builds the index
# beside the file, docs/session-format.md), and resumes through the index
# (medians of BENCH_RESUME_RUNS), and whether the request bodies of the
# whole read and of the indexed resume are the same bytes. Figures only.
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
mv "$LOOM_HOME/projects/$slug/$sid.jsonl" "$t/pristine.jsonl"
size=$(stat -c %s "$t/pristine.jsonl")
echo '{"sequence": true, "turns": [{"reply": {"text": "going on."}, "repeat": 1000}]}' > "$t/s.json"
"$build/mockllm" --scenario "$t/s.json" --port 0 --port-file "$t/port" --log "$t/mock.jsonl" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$t/port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
dir="$LOOM_HOME/projects/$slug"
resume() { # one resume; prints "cpu_ms rss_kb" and keeps the request body in $t/body.$1
  : > "$t/run.log"
  env "${@:2}" LOOM_LOG="$t/run.log" "$build/loom" --resume "$sid" -p "go on" --cwd "$t/proj" \
    >/dev/null
  tail -n 1 "$t/mock.jsonl" | jq -c .body > "$t/body.$1"
  jq -r 'select(.module=="process") | "\(.cpu_user_ms + .cpu_sys_ms) \(.max_rss_kb)"' "$t/run.log"
}
# cp onto the existing file keeps its inode, which the index names; the
# index is copied after the file, so it is not older than the file.
restore() { cp "$t/$1.jsonl" "$dir/$sid.jsonl"; rm -f "$dir/$sid.idx"; [ "$1" = pristine ] ||
  cp "$t/$1.idx" "$dir/$sid.idx"; }
restore pristine
cold=$(resume cold)
# The state the cold run left (its turn appended, the index built) is
# where the other runs start, read whole or through the index.
cp "$dir/$sid.jsonl" "$t/warm.jsonl"; cp "$dir/$sid.idx" "$t/warm.idx"
whole=$(for _ in $(seq 1 "$runs"); do restore warm; resume whole LOOM_SESSION_INDEX=0; done)
warm=$(for _ in $(seq 1 "$runs"); do restore warm; resume warm; done)
cmp -s "$t/body.whole" "$t/body.warm" && same=same || same=DIFFERENT
req=$(wc -c < "$t/body.warm")
col() { echo "$1" | awk -v c="$2" '{print $c}' | median; }
read -r cold_cpu cold_rss <<< "$cold"
printf 'resume of a %d-record session (%d MB) to the first request:\n' "$records" $((size / 1000000))
printf '  %-34s CPU %8.1f ms   peak RSS %7d KiB   (median of %d)\n' "read whole (LOOM_SESSION_INDEX=0)" \
  "$(col "$whole" 1)" "$(col "$whole" 2)" "$runs"
printf '  %-34s CPU %8.1f ms   peak RSS %7d KiB\n' "no index yet (builds it)" "$cold_cpu" "$cold_rss"
printf '  %-34s CPU %8.1f ms   peak RSS %7d KiB   (median of %d)\n' "with the index" \
  "$(col "$warm" 1)" "$(col "$warm" 2)" "$runs"
printf '  %-34s %d bytes (%s as the whole read)\n' "request body" "$req" "$same"

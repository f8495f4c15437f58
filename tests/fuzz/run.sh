#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target for SECONDS each, starting from the
# seed corpus in tests/fuzz/corpus/<target>/ (copied, so runs never grow the
# repo). Any crash, leak or timeout fails the run and leaves the input here.
set -euo pipefail
build=$1
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/loom-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  seeds="$here/corpus/${name#fuzz_}"
  mkdir -p "$work/$name"
  [ -d "$seeds" ] && cp -r "$seeds"/. "$work/$name"/ 2>/dev/null || true
  echo "== $name: ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$here/" -print_final_stats=1 "$work/$name" 2>"$work/$name.log"; then
    tail -n 30 "$work/$name.log"
    echo "!! $name found a problem (input saved in tests/fuzz/)"
    failed=1
  else
    grep -E 'stat::number_of_executed_units|cov:' "$work/$name.log" | tail -n 2
  fi
done
exit $failed

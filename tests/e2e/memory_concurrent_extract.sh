#!/usr/bin/env bash
# Two sessions of one project ending at once (docs/memory.md, "Extraction"):
# each extraction reads the entries and MEMORY.md and writes them back, so
# without the lock of <memory>/.lock one run's index line (or the
# extraction cursor of its session) is lost to the other's write. Twelve
# runs, each extracting its own fact, started together: twelve entry files,
# twelve index lines, twelve sessions in the cursor. (Without the lock this
# lost lines in every one of several tries; with it, nothing can be lost,
# so the test cannot fail spuriously.)
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

R="$T/repo"
mkdir -p "$R/.git" "$R/.loom/memory"
echo "ref: refs/heads/main" > "$R/.git/HEAD"
echo '{"memory": {"extraction": {"enabled": true}}}' > "$LOOM_HOME/settings.json"
N=12
jq -n --argjson n $N '{turns: ([range(1; $n + 1) | tostring as $i |
  {match: {system_contains: "memory extractor", no_tools: true, body_contains: "FACT-\($i)-X"},
   reply: {text: ({memories: [{action: "add", name: "Fact number \($i)",
     description: "Fact \($i) of the project", type: "project",
     body: "The value of fact \($i) is \($i)."}]} | tojson)}}]
  + [{reply: {text: "Noted."}}])}' > "$T/steps.json"
start_mock "$T/steps.json"
use_provider anthropic

pids=()
for i in $(seq 1 $N); do
  "$LOOM_BIN" -p "Remember FACT-$i-X: the value of fact $i is $i." --output-format json \
    --permission-mode bypassPermissions --cwd "$R" >"$T/out$i" 2>"$T/err$i" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done

extracted=0
for i in $(seq 1 $N); do
  [ "$(jq -r .memory.status "$T/out$i")" = extracted ] && extracted=$((extracted + 1))
done
assert_eq "every run extracted" "$extracted" "$N"
assert_eq "every entry file is there" "$(ls "$R/.loom/memory" | grep -c '^fact-number-.*\.md$')" "$N"
assert_eq "MEMORY.md indexes every one" "$(grep -c '^- \[Fact number ' "$R/.loom/memory/MEMORY.md")" "$N"
assert_eq "each index line once" "$(sort -u "$R/.loom/memory/MEMORY.md" | grep -c '^- \[Fact number ')" "$N"
assert_eq "the cursor keeps every session" \
  "$(jq '.sessions | length' "$R/.loom/memory/.extraction_cursor.json")" "$N"
check_not "the lock file is no entry: the next run does not list it" \
  grep -q '\.lock' <<<"$(ls "$R/.loom/memory" | grep -v '^\.')"

finish

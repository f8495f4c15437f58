#!/usr/bin/env bash
# Issue 14 item 7 (seed 000 row 4.7, the M_f bus): a sub-agent publishes its
# findings with the Publish tool. The ΔH gate keeps an event at or below
# δ_min off the bus (nothing written, the child is told); an event above it
# is one JSON file under <session>.mf/bus/<topic>/ in the mf_events format;
# a payload over ε (4 KiB) is compressed to a summary with the whole payload
# spilled to .blobs/<id>.json, its delta_h kept. With the heartbeat on
# (mf_events on the run's bus), the parent's next request carries the
# child's event in its working memory — results flow back through the shared
# layer, not only in the final message.
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj/.loom" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
cat > "$T/proj/.loom/settings.json" <<'JSON'
{"heartbeat": {"T_hb": 0.05, "T_hb_act": 0.05, "watch_sources": [{"type": "mf_events"}]}}
JSON
big=$(head -c 9000 /dev/zero | tr '\0' 'x')
G="You are Loom's general-purpose agent"
jq -n --arg g "$G" --arg big "$big" '{turns: [
  {match: {system_contains: $g, assistant_turns: 0},
   reply: {text: "Publishing.", tool_calls: [
     {id: "p_low", name: "Publish", input: {topic: "findings", summary: "LOW-VALUE progress note", delta_h: 0.01}},
     {id: "p_hi", name: "Publish", input: {topic: "findings", summary: "ROOT-CAUSE found in the parser", delta_h: 0.9, urgency: "high"}},
     {id: "p_big", name: "Publish", input: {topic: "findings", summary: "BIG-PAYLOAD table of results", delta_h: 0.5,
                                           payload: {rows: [range(0; 40) | {n: ., ok: true}], blob: $big}}}]}},
  {match: {system_contains: $g, assistant_turns: 1}, reply: {text: "CHILD-DONE"}},
  {match: {assistant_turns: 0},
   reply: {tool_calls: [{id: "ag1", name: "Agent", input: {description: "investigate", prompt: "BUS-CHILD find the bug"}}]}},
  {match: {assistant_turns: 1},
   reply: {tool_calls: [{id: "s1", name: "Bash", input: {command: "sleep 1"}}]}},
  {match: {assistant_turns: 2}, reply: {text: "PARENT-DONE"}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
"$LOOM_BIN" -p "BUS-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events" 2> "$T/err" || true
last=$(tail -n 1 "$T/events")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
sid=$(jq -r .payload.session_id <<<"$last")
bus=$(ls -d "$LOOM_HOME"/projects/*/"$sid".mf/bus 2>/dev/null | head -n 1 || true)

child_first=$(jq -c --arg g "$G" 'select((.body.system|tostring|contains($g)) and (.body.messages|length)==1)' "$MOCK_LOG" | sed -n 1p)
check "the child declares Publish" jtrue '[.body.tools[].name] | index("Publish") != null' <<<"$child_first"
child_second=$(jq -c --arg g "$G" 'select((.body.system|tostring|contains($g)) and (.body.messages|length)==3)' "$MOCK_LOG" | sed -n 1p)
result_of() { jq -r --arg id "$1" '.body.messages[-1].content[] | select(.type=="tool_result" and .tool_use_id==$id) | .content | tostring' <<<"$child_second"; }
assert_contains "below δ_min: the child is told it was not published" "$(result_of p_low)" "Not published"
assert_contains "above δ_min: published" "$(result_of p_hi)" "Published"
assert_contains "big: published" "$(result_of p_big)" "Published"

check "the bus directory is the session's ($bus)" test -n "$bus" -a -d "${bus:-/nonexistent}/findings"
files=$(ls "${bus:-/nonexistent}"/findings/*.json 2>/dev/null || true)
assert_eq "two events written (the low one gated out)" "$(grep -c . <<<"$files" || true)" "2"
check "no event file holds the low one" bash -c "! cat ${bus:-/nonexistent}/findings/*.json 2>/dev/null | grep -q LOW-VALUE"
hi=$(grep -l "ROOT-CAUSE" $files 2>/dev/null | head -n 1 || true)
check "the high event is in mf_events' format" \
  jtrue '(.id|type=="string") and .topic=="findings" and (.sender|startswith("agent_")) and .summary=="ROOT-CAUSE found in the parser" and .delta_h==0.9 and .urgency=="high"' "${hi:-/dev/null}"
bg=$(grep -l "BIG-PAYLOAD" $files 2>/dev/null | head -n 1 || true)
check "the big payload is compressed, delta_h kept" \
  jtrue '.delta_h==0.5 and .payload.compressed==true and (.payload.blob|type=="string")' "${bg:-/dev/null}"
check "the compressed event file is small (under 4 KiB + envelope)" test "$(wc -c < "${bg:-/dev/null}")" -lt 6000
bid=$(jq -r '.id // empty' "${bg:-/dev/null}" 2>/dev/null || true)
blob="${bus:-/nonexistent}/.blobs/$bid.json"
check "the whole payload is spilled to .blobs/<id>.json" \
  jtrue --arg big "$big" '.blob == $big and (.rows|length) == 40' "$blob"

# The shared layer: a parent request after the child ran carries the event.
after=$(jq -c --arg g "$G" 'select((.body.system|tostring|contains($g))|not) | select((.body.messages|length) >= 3)' "$MOCK_LOG")
check "the parent's next request carries the child's event (working memory)" \
  bash -c "grep -q 'ROOT-CAUSE found in the parser' <<<'$(jq -c '[.body.messages[-1].content[]? | select(.type=="text") | .text]' <<<"$after" | tr "'" ' ')'"
check "the gated-out one never reaches the parent" bash -c "! grep -q 'LOW-VALUE' <<<'$(jq -c '[.body.messages[-1].content[]? | select(.type=="text") | .text]' <<<"$after" | tr "'" ' ')'"
finish

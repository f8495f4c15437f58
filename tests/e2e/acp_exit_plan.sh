#!/usr/bin/env bash
# ExitPlanMode through ACP (docs/acp.md, docs/tools.md): in plan mode (set
# by session/set_mode after acceptEdits) the model's ExitPlanMode is a
# session/request_permission of kind switch_mode carrying the plan and the
# mode approval restores; reject_once keeps plan mode (the model is told),
# allow_once leaves it and a current_mode_update to acceptEdits follows
# (tests/e2e/_acp_exit_plan.py speaks the raw protocol).
source "$(dirname "$0")/_lib.sh"
ACP_BIN="$(dirname "$LOOM_BIN")/loom-acp"
check "loom-acp is built beside loom" test -x "$ACP_BIN"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"last_user_contains": "PLAN-ONE"},
   "reply": {"tool_calls": [{"id": "p1", "name": "ExitPlanMode", "input": {"plan": "1. Write notes.txt with the summary\n2. Run the tests"}}]}},
  {"match": {"tool_results": 1, "assistant_turns": 1}, "reply": {"text": "Revising."}},
  {"match": {"last_user_contains": "PLAN-TWO"},
   "reply": {"tool_calls": [{"id": "p2", "name": "ExitPlanMode", "input": {"plan": "1. Write notes.txt (revised)"}}]}},
  {"match": {"tool_results": 2, "assistant_turns": 3}, "reply": {"text": "Approved, starting."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
out=$(timeout 120 python3 "$LOOM_SRC/tests/e2e/_acp_exit_plan.py" "$ACP_BIN" "$T/proj" 2>"$T/client.err") || true
while IFS= read -r line; do
  case "$line" in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) not_ok "${line#not ok - }" ;;
  esac
done <<< "$out"
[ "$PASSED" -ge 9 ] || not_ok "the client ran only $PASSED checks: $(tail -c 2000 "$T/client.err")"
# The model was told the rejection kept it in plan mode.
check "the rejection reached the model with the plan-mode note" grep -q 'you are still in plan mode' "$MOCK_LOG"
check "the approval reached the model with the mode" grep -q 'the permission mode is now acceptEdits' "$MOCK_LOG"
finish

#!/usr/bin/env bash
# ExitPlanMode in loom serve (docs/tools.md): a run in plan mode (a policy
# of mode plan) presents its plan as an approval (tests/serve/exit_plan.mjs):
# :reject keeps plan mode and the model is told; :approve leaves it for
# default (the run started in plan) and the model is told the mode.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"last_user_contains": "PLAN-SRV-", "tool_results": 0},
   "reply": {"tool_calls": [{"id": "p1", "name": "ExitPlanMode", "input": {"plan": "1. Write notes.txt with the summary\n2. Run the tests"}}]}},
  {"match": {"tool_results": 1}, "reply": {"text": "Planned."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
serve_config
# One more policy, plan mode, offered by every profile.
cat >> "$SERVE_CONF/policies.yaml" <<'YAML'
  policy_plan:
    permissions:
      mode: plan
YAML
sed -i 's/policies: \[policy_safe_default,/policies: [policy_plan, policy_safe_default,/' "$SERVE_CONF/profiles.yaml"
start_serve
serve_node exit_plan.mjs
serve_finish

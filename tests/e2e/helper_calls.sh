#!/usr/bin/env bash
# Helper ("meta") model calls (issue 25 item 1, seed 001 §7.2): every call
# Loom makes besides the agent's own turns goes through one module that
# routes it by purpose and tier, records it and guards it with a breaker.
#
# 1. Routing: `modelTiers.lite` names a model; a prompt hook (lite by
#    default) and auto mode's classifier (routed by `helperModels`) are sent
#    to it — mockllm answers them only when the request's model field is that
#    model — while the agent's turns keep the main model.
# 2. Records: each call is a `helper-call` record in the session and a
#    helper_call line in the audit log, with purpose, tier, model, usage and
#    cost; its tokens are in the run's usage and its cost in cost_usd, priced
#    by the model it went to; a model.usage event names the purpose.
#    WebFetch's question, when `helperModels.webfetch` routes it, is answered
#    by a helper over the page, and only the answer reaches the main model.
# 3. The breaker: a judge model that fails every time is asked three times,
#    then its breaker opens and the fourth hook is refused without a request;
#    every tool call still runs (a failing hook never blocks) and the run
#    completes.
source "$(dirname "$0")/_lib.sh"
export LOOM_MAX_RETRIES=0
mkdir -p "$T/proj"

# --- 1 + 2: routing and records ------------------------------------------------
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"modelTiers": {"lite": "mock-lite-1"},
 "helperModels": {"permission_classifier": "lite"},
 "models": {"mock-lite-1": {"price": {"input": 1, "output": 10}},
            "mock-main": {"price": {"input": 100, "output": 1000}}},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
   {"type": "prompt", "prompt": "Refuse any command that deletes files. The call: $ARGUMENTS"}]}]}}
JSON
cat > "$T/route.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "hook judge", "body_contains": "\"model\":\"mock-lite-1\"",
             "last_user_contains": "rm -f"},
   "reply": {"text": "{\"ok\": false, \"reason\": \"it deletes keep.txt\"}",
             "usage": {"input_tokens": 40, "output_tokens": 4}}},
  {"match": {"system_contains": "hook judge", "body_contains": "\"model\":\"mock-lite-1\""},
   "reply": {"text": "Sure: {\"ok\": true}", "usage": {"input_tokens": 30, "output_tokens": 3}}},
  {"match": {"system_contains": "security monitor", "body_contains": "\"model\":\"mock-lite-1\""},
   "reply": {"text": "{\"decision\": \"allow\", \"reason\": \"a project file\"}",
             "usage": {"input_tokens": 20, "output_tokens": 2}}},
  {"reply": {"tool_calls": [{"id": "r1", "name": "Bash", "input": {"command": "rm -f keep.txt"}}],
             "usage": {"input_tokens": 100, "output_tokens": 10}}},
  {"reply": {"tool_calls": [{"id": "r2", "name": "Bash", "input": {"command": "echo made > made.txt"}}],
             "usage": {"input_tokens": 100, "output_tokens": 10}}},
  {"reply": {"text": "One refused, one made.", "usage": {"input_tokens": 100, "output_tokens": 10}}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  echo keep > "$T/proj/keep.txt"
  rm -f "$T/proj/made.txt"
  start_mock "$T/route.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "tidy up" --model mock-main --permission-mode auto --cwd "$T/proj" \
    --output-format events > "$T/events.jsonl"
  final=$(jq -c 'select(.type=="run.state_changed" and .payload.state=="completed") | .payload' "$T/events.jsonl")
  assert_eq "$provider: the run completed" "$(jq -r .result <<<"$final")" "One refused, one made."
  check "$provider: the prompt hook's block kept the file" test -e "$T/proj/keep.txt"
  check "$provider: the other call ran" test -e "$T/proj/made.txt"
  judged=$(jq -r 'select(.body | tostring | contains("hook judge")) | .body.model' "$MOCK_LOG" | sort -u | paste -sd,)
  assert_eq "$provider: every judge request went to the lite model" "$judged" "mock-lite-1"
  classified=$(jq -r 'select(.body | tostring | contains("security monitor")) | .body.model' "$MOCK_LOG" | sort -u | paste -sd,)
  assert_eq "$provider: the classifier went to the lite model" "$classified" "mock-lite-1"
  turns=$(jq -r 'select(.body | tostring | contains("hook judge") or contains("security monitor") | not) | .body.model' "$MOCK_LOG" | sort -u | paste -sd,)
  assert_eq "$provider: the agent's turns kept the main model" "$turns" "mock-main"
  id=$(jq -r 'select(.type=="run.state_changed") | .payload.session_id // empty' "$T/events.jsonl" | head -1)
  [ -n "$id" ] || id=$(ls "$LOOM_HOME"/projects/*/ -t | head -1 | sed 's/\.jsonl$//')
  file=$(session_file "$id")
  result=$(jq -r 'select(.type=="function_call_result" and .callId=="r1") | .output' "$file")
  assert_contains "$provider: the model is told the judge's reason" "$result" "it deletes keep.txt"
  recs=$(jq -c 'select(.type=="helper-call") | [.purpose, .tier, .model, .status, .usage.inputTokens, .costUsd]' "$file" | paste -sd' ')
  assert_eq "$provider: each helper call is a session record" "$recs" \
    '["hook_prompt","lite","mock-lite-1","ok",40,8e-05] ["hook_prompt","lite","mock-lite-1","ok",30,6e-05] ["permission_classifier","lite","mock-lite-1","ok",20,4e-05]'
  audit="$LOOM_HOME/audit/$id.jsonl"
  arecs=$(jq -c 'select(.kind=="helper_call") | [.purpose, .tier, .model, .usage.outputTokens, .costUsd]' "$audit" | paste -sd' ')
  assert_eq "$provider: and an audit line" "$arecs" \
    '["hook_prompt","lite","mock-lite-1",4,8e-05] ["hook_prompt","lite","mock-lite-1",3,6e-05] ["permission_classifier","lite","mock-lite-1",2,4e-05]'
  assert_eq "$provider: the run's tokens count them" "$(jq -r .usage.inputTokens <<<"$final")" "390"
  # 3 turns at mock-main (300 in, 30 out: $0.06) + the helpers at mock-lite-1 ($0.00018).
  assert_eq "$provider: priced by the model each went to" "$(jq -r '.cost_usd * 1e6 | round' <<<"$final")" "60180"
  assert_eq "$provider: model.usage names each purpose" \
    "$(jq -r 'select(.type=="model.usage") | "\(.payload.purpose):\(.payload.tier):\(.payload.model):\(.correlation_id)"' "$T/events.jsonl" | paste -sd,)" \
    "hook_prompt:lite:mock-lite-1:r1,hook_prompt:lite:mock-lite-1:r2,permission_classifier:lite:mock-lite-1:r2"
done

# loom stats attributes them: --by purpose puts each helper call under its
# purpose, the agent's turns under main; --by model under its own model.
n=$(wc -w <<<"${PROVIDERS:-anthropic openai}")
stats=$("$LOOM_BIN" stats --json --by purpose)
row() { jq -r --arg k "$1" '.rows[] | select(.key==$k) | "\(.model_calls):\(.tokens.input)"' <<<"$stats"; }
assert_eq "stats: the prompt hook's calls" "$(row hook_prompt)" "$((2 * n)):$((70 * n))"
assert_eq "stats: the classifier's calls" "$(row permission_classifier)" "$n:$((20 * n))"
assert_eq "stats: the agent's own turns" "$(row main)" "$((3 * n)):$((300 * n))"
assert_eq "stats: by model, under the lite model" \
  "$("$LOOM_BIN" stats --json --by model | jq -r '.rows[] | select(.key=="mock-lite-1") | .model_calls')" "$((3 * n))"

# A malformed route is an error naming the file and the key.
echo '{"helperModels": {"classifer": "lite"}}' > "$LOOM_HOME/settings.json"
start_mock "$T/route.json"
use_provider anthropic
out=$("$LOOM_BIN" -p "hi" --cwd "$T/proj" 2>&1) && rc=0 || rc=$?
check "a bad helperModels key stops the run" test "$rc" -ne 0
assert_contains "and names the key" "$out" "helperModels.classifer: unknown purpose"

# --- WebFetch's question: routed to a helper, the answer replaces the page ------
start_listener
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"modelTiers": {"lite": "mock-lite-1"}, "helperModels": {"webfetch": "lite"}}
JSON
cat > "$T/fetch.json" <<JSON
{"turns": [
  {"match": {"system_contains": "page reader", "body_contains": "\"model\":\"mock-lite-1\"",
             "last_user_contains": "listener says hello"},
   "reply": {"text": "The page greets: hello.", "usage": {"input_tokens": 25, "output_tokens": 5}}},
  {"reply": {"tool_calls": [{"id": "f1", "name": "WebFetch",
             "input": {"url": "http://127.0.0.1:$LISTEN_PORT/", "prompt": "what does it say?"}}]}},
  {"reply": {"text": "It says hello."}}
]}
JSON
start_mock "$T/fetch.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "read it" --model mock-main --permission-mode bypassPermissions \
         --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
out=$(jq -r 'select(.type=="function_call_result" and .callId=="f1") | .output' "$file")
assert_contains "webfetch: the helper's answer is the result" "$out" "The page greets: hello."
check "webfetch: the page itself stays out of the main model's context" \
  bash -c '! grep -q "listener says hello" <<<"$1"' _ "$out"
assert_eq "webfetch: recorded as its purpose" \
  "$(jq -r 'select(.type=="helper-call") | "\(.purpose):\(.model):\(.correlationId)"' "$file")" "webfetch:mock-lite-1:f1"
stop_listener() { kill "$LISTEN_PID" 2>/dev/null; wait "$LISTEN_PID" 2>/dev/null || true; LISTEN_PID=; }
stop_listener

# --- compaction is a helper call too (main tier unless routed) -----------------
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"modelTiers": {"lite": "mock-lite-1"}, "helperModels": {"compaction": "lite"}}
JSON
jq -n '{sequence: true, turns: [
  {match: {no_tools: true, body_contains: "\"model\":\"mock-lite-1\""},
   reply: {text: "<summary>1. Primary Request and Intent: say hi.</summary>",
           usage: {input_tokens: 700, output_tokens: 30}}},
  {reply: {tool_calls: [{id: "k1", name: "Bash", input: {command: "echo hi"}}],
           usage: {input_tokens: 100, output_tokens: 10}}},
  {faults: [{status: 413, times: 1}],
   reply: {text: "Done after compaction.", usage: {input_tokens: 100, output_tokens: 10}}}]}' > "$T/compact.json"
start_mock "$T/compact.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "say hi" --model mock-main --permission-mode bypassPermissions \
         --cwd "$T/proj" --output-format json)
assert_eq "compaction: the run went on" "$(jq -r .result <<<"$json")" "Done after compaction."
id=$(jq -r .session_id <<<"$json")
assert_eq "compaction: its record names the route" \
  "$(jq -r 'select(.type=="helper-call") | "\(.purpose):\(.tier):\(.model):\(.status):\(.usage.inputTokens):\(.countedBy)"' "$(session_file "$id")")" \
  "compaction:lite:mock-lite-1:ok:700:caller"
assert_eq "compaction: and so does the audit" \
  "$(jq -r 'select(.kind=="helper_call") | "\(.purpose):\(.model)"' "$LOOM_HOME/audit/$id.jsonl")" "compaction:mock-lite-1"
assert_eq "compaction: its tokens counted once" "$(jq -r .usage.input_tokens <<<"$json")" "900"

# --- 3: the breaker -------------------------------------------------------------
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"modelTiers": {"lite": "mock-lite-1"},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
   {"type": "prompt", "prompt": "Is this call safe? $ARGUMENTS"}]}]}}
JSON
cat > "$T/breaker.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "hook judge"}, "faults": [{"status": 500, "times": 100}],
   "reply": {"text": "{\"ok\": false, \"reason\": \"never reached\"}"}},
  {"reply": {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "echo 1 > 1.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "b2", "name": "Bash", "input": {"command": "echo 2 > 2.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "b3", "name": "Bash", "input": {"command": "echo 3 > 3.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "b4", "name": "Bash", "input": {"command": "echo 4 > 4.txt"}}]}},
  {"reply": {"text": "All four ran."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -f "$T/proj"/[0-9].txt
  start_mock "$T/breaker.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "four files" --model mock-main --permission-mode bypassPermissions \
           --cwd "$T/proj" --output-format json)
  assert_eq "$provider: the main run went on" "$(jq -r .result <<<"$json")" "All four ran."
  check "$provider: every call ran (a failing hook never blocks)" test -e "$T/proj/4.txt"
  asked=$(jq -r 'select(.body | tostring | contains("hook judge")) | .t' "$MOCK_LOG" | wc -l)
  assert_eq "$provider: three failures opened the breaker: no fourth request" "$asked" "3"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  assert_eq "$provider: the records say so" \
    "$(jq -r 'select(.type=="helper-call") | .status' "$file" | paste -sd,)" "error,error,error,breaker_open"
  assert_contains "$provider: with a clear message" \
    "$(jq -r 'select(.type=="helper-call" and .status=="breaker_open") | .error' "$file")" \
    "circuit breaker is open after 3 failures"
done
rm -f "$LOOM_HOME/settings.json"
finish

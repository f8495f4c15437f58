#!/usr/bin/env bash
# The run console (docs/console.md) in a real browser: Debian's Chromium,
# headless, driven by puppeteer-core (tests/console/console.mjs) against
# loom-serve and mockllm. From the page: log in, start a run, watch its
# tokens stream in, approve its Bash call by clicking while a second
# browser (another context, 390 px wide) watches the same run and sees the
# approval card vanish; the run completes and its patch.diff opens in the
# diff viewer; a wrong token sees nothing, another tenant's token sees
# none of these runs; every request the browsers made
# went to the server's origin; a third run is cancelled from the page; a
# fourth is paused and resumed while its plan fills the working-memory
# panel; a fifth, of a profile with a heartbeat block, shows the filesystem
# watch's heartbeat.event in its timeline and the event in the panel.
# Screenshots (1280 and 390 px) go to $T/shots,
# and to docs/console/ with CONSOLE_SHOTS_DIR=docs/console.
source "$(dirname "$0")/_lib.sh"
# loom-serve is started, stopped and cleaned up by _serve_lib.sh, on this
# scenario's own config folder and workspace.
SERVE_CONF="$T/config" SERVE_WORKSPACE="$T/work"
source "$(dirname "$0")/_serve_lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ] || [ ! -d "$LOOM_SRC/tests/console/node_modules/puppeteer-core" ]; then
  # scripts/deps.sh installs both; a machine without them cannot run this.
  echo "console_browser: needs $CHROMIUM and tests/console/node_modules (scripts/deps.sh)" >&2
  exit 1
fi


# The model: a Bash call that needs approval, a file written, then a
# markdown answer dripped a few bytes at a time (so the page must show it
# growing), with HTML in it that must stay text. A second run ("count the
# files", profile second) has an approval that expires after a second, a
# Bash call that fails and a sub-agent, for the expired card, the agent
# tree and the charts.
cat > "$T/scenario.json" <<JSON
{ "turns": [
  { "match": {"assistant_turns": 0, "body_contains": "plan-console"},
    "reply": {"text": "Planning first.", "tool_calls": [{"id": "toolu_p1", "name": "TodoWrite",
              "input": {"todos": [
                {"content": "draft-the-plan", "status": "in_progress", "activeForm": "Drafting the plan"},
                {"content": "check-the-panel", "status": "pending", "activeForm": "Checking the panel"}]}}]} },
  { "match": {"assistant_turns": 1, "body_contains": "plan-console"},
    "reply": {"text": "The draft is done; now the panel gets checked, slowly enough that a person can press Pause while this reply is still streaming in, a few bytes at a time, from the mock model to the page.",
              "tool_calls": [{"id": "toolu_p2", "name": "TodoWrite", "input": {"todos": [
                {"content": "draft-the-plan", "status": "completed", "activeForm": "Drafting the plan"},
                {"content": "check-the-panel", "status": "in_progress", "activeForm": "Checking the panel"}]}}]},
    "chunk_size": 4, "drip_ms": 60 },
  { "match": {"assistant_turns": 2, "body_contains": "plan-console"},
    "reply": {"text": "The plan is done."} },
  { "match": {"assistant_turns": 0, "body_contains": "subtask-console"},
    "reply": {"text": "Nothing to count here."} },
  { "match": {"assistant_turns": 0, "body_contains": "count the files"},
    "reply": {"text": "Counting.", "tool_calls": [{"id": "toolu_c1", "name": "Bash",
              "input": {"command": "echo counting"}}]} },
  { "match": {"assistant_turns": 1, "body_contains": "count the files"},
    "reply": {"text": "Listing, with a helper.", "tool_calls": [
              {"id": "toolu_c2", "name": "Bash", "input": {"command": "ls /nonexistent-console-dir"}},
              {"id": "toolu_c3", "name": "Agent", "input": {"description": "count helper",
               "prompt": "subtask-console: count what is there", "name": "counter"}}]} },
  { "match": {"assistant_turns": 2, "body_contains": "count the files"},
    "reply": {"text": "I could not count them."} },
  { "match": {"assistant_turns": 0, "body_contains": "heartbeat-console"},
    "reply": {"text": "Changing a file, then waiting.", "tool_calls": [{"id": "toolu_hb1", "name": "Bash",
              "input": {"command": "echo changed > watched.txt && sleep 2"}}]} },
  { "match": {"assistant_turns": 1, "body_contains": "heartbeat-console"},
    "reply": {"text": "The watch saw it."} },
  { "match": {"assistant_turns": 0},
    "reply": {"text": "Checking the greeting before I write anything.",
              "tool_calls": [{"id": "toolu_echo", "name": "Bash",
                              "input": {"command": "echo hello-console"}}]},
    "chunk_size": 6, "drip_ms": 40 },
  { "match": {"assistant_turns": 1},
    "reply": {"text": "Writing the file.",
              "tool_calls": [{"id": "toolu_write", "name": "Write",
                              "input": {"file_path": "$T/work/new.txt", "content": "fresh\\nfrom the console\\n"}}]} },
  { "match": {"assistant_turns": 2},
    "reply": {"text": "## Done\\n\\nI wrote **new.txt** after the echo was approved.\\n\\n- it holds two lines\\n- the patch is in \`patch.diff\`\\n\\nThis stays text: <img src=x onerror=alert(1)> <script>alert(2)</script>\\n\\n\`\`\`\\n\$ cat new.txt\\nfresh\\n\`\`\`",
              "usage": {"input_tokens": 120, "output_tokens": 60}},
    "chunk_size": 5, "drip_ms": 45 } ] }
JSON
start_mock "$T/scenario.json"
use_provider anthropic

mkdir -p "$T/config" "$T/globex"
cat > "$T/config/profiles.yaml" <<YAML
profiles:
  default:
    provider: anthropic
    model: claude-sonnet-4-5
    base_url: $MOCK_URL
    policies: [ask_echo]
  second:
    provider: anthropic
    model: claude-haiku-4-5
    base_url: $MOCK_URL
    policies: [ask_fast]
  watching:
    provider: anthropic
    model: claude-sonnet-4-5
    base_url: $MOCK_URL
    policies: [watch_ok]
    heartbeat:
      T_hb: 0.2
      T_hb_act: 0.2
      watch_sources:
        - {type: filesystem, paths: ["."], method: hash, urgency: high}
      interrupt_policy: {high: queue}
YAML
cat > "$T/config/policies.yaml" <<'YAML'
policies:
  ask_echo:
    permissions: {mode: acceptEdits, ask: ["Bash(echo:*)"]}
  ask_fast:
    permissions: {mode: acceptEdits, ask: ["Bash(echo:*)"]}
    approvals: {timeout_seconds: 1}
  watch_ok:
    permissions: {mode: acceptEdits, allow: ["echo", "sleep"]}
YAML
cat > "$T/config/knowledge_sources.yaml" <<'YAML'
knowledge_sources: {}
YAML
cat > "$T/config/tenants.yaml" <<YAML
tenants:
  acme:
    projects:
      default: {workspace: $T/work}
  globex:
    projects:
      default: {workspace: $T/globex}
tokens:
  - token: globex-viewer-token
    tenant: globex
    role: viewer
  - token: console-approver-token
    tenant: acme
    role: approver
    actor_id: ana@acme
YAML

start_serve --keepalive-ms 1000
BASE=$SERVE_URL

# The files as served: types, the CSP, the ETag and its 304.
curl -sS --noproxy '*' -D "$T/index.h" -o "$T/index.html" "$BASE/"
check "GET / is the console page" grep -q '<title>Loom console</title>' "$T/index.html"
check "as text/html" grep -qi '^content-type: text/html; charset=utf-8' "$T/index.h"
check "with the strict CSP" grep -qi "^content-security-policy: default-src 'self'" "$T/index.h"
check "revalidated (no-cache)" grep -qi '^cache-control: no-cache' "$T/index.h"
etag=$(grep -i '^etag:' "$T/index.h" | cut -d' ' -f2 | tr -d '\r')
check "with an ETag" test -n "$etag"
status=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$BASE/")
assert_eq "the same ETag is a 304" "$status" "304"
curl -sS --noproxy '*' -D "$T/js.h" -o "$T/console.js" "$BASE/console/console.js"
check "console.js as JavaScript" grep -qi '^content-type: text/javascript' "$T/js.h"
check "it is the file in the repository" \
  cmp -s "$T/console.js" "$LOOM_SRC/src/surfaces/server/console/console.js"
check "console.css as CSS" sh -c "curl -sS --noproxy '*' -D - -o /dev/null '$BASE/console/console.css' | grep -qi '^content-type: text/css'"
status=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' "$BASE/console/nope.js")
assert_eq "another console file is a 404" "$status" "404"
curl -sS --noproxy '*' -o "$T/profiles.json" -H 'Authorization: Bearer console-approver-token' "$BASE/profiles"
assert_eq "GET /profiles lists the tenant's profiles" \
  "$(jq -c '[.items[] | .profile_id // .id] | sort' "$T/profiles.json")" '["default","second","watching"]'
curl -sS --noproxy '*' -o "$T/openapi.json" "$BASE/openapi.json"
check "GET /profiles matches the OpenAPI document" \
  node "$LOOM_SRC/tests/validate/openapi_check.mjs" response "$T/openapi.json" GET /profiles 200 \
  "$T/profiles.json" "application/json; charset=utf-8"
check "GET / matches it too" \
  node "$LOOM_SRC/tests/validate/openapi_check.mjs" response "$T/openapi.json" GET / 200 \
  "$T/index.html" "text/html; charset=utf-8"
curl -sS --noproxy '*' -o "$T/usage0.json" -H 'Authorization: Bearer console-approver-token' "$BASE/usage"
check "GET /usage (no runs yet) matches the document" \
  node "$LOOM_SRC/tests/validate/openapi_check.mjs" response "$T/openapi.json" GET /usage 200 \
  "$T/usage0.json" "application/json; charset=utf-8"
status=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer console-approver-token' "$BASE/usage?state=nope")
assert_eq "GET /usage refuses an unknown state" "$status" "400"
status=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' "$BASE/profiles")
assert_eq "GET /profiles needs a token" "$status" "401"

mkdir -p "$T/shots"
set +e
BASE="$BASE" TOKEN=console-approver-token OTHER_TOKEN=globex-viewer-token CHROMIUM="$CHROMIUM" SHOTS="$T/shots" \
  CONSOLE_SHOTS_DIR="${CONSOLE_SHOTS_DIR:+$(cd "$LOOM_SRC" && mkdir -p "$CONSOLE_SHOTS_DIR" && cd "$CONSOLE_SHOTS_DIR" && pwd)}" \
  timeout 110 node "$LOOM_SRC/tests/console/console.mjs" > "$T/browser.out" 2> "$T/browser.err"
rc=$?
set -e
cat "$T/browser.out"
if [ $rc -ne 0 ]; then
  sed -n '1,60p' "$T/browser.err" >&2
  tail -n 20 "$SERVE_LOG" >&2
fi
assert_eq "the browser scenario passed" "$rc" "0"
for shot in run-1280 approval-1280 diff-1280 usage-1280 working-1280 run-390 approval-390 diff-390 usage-390 working-390 heartbeat-1280; do
  check "screenshot $shot.png" test -s "$T/shots/$shot.png"
done
curl -sS --noproxy '*' -o "$T/usage.json" -H 'Authorization: Bearer console-approver-token' "$BASE/usage"
check "GET /usage after the runs matches the document" \
  node "$LOOM_SRC/tests/validate/openapi_check.mjs" response "$T/openapi.json" GET /usage 200 \
  "$T/usage.json" "application/json; charset=utf-8"
assert_eq "GET /usage: both runs, their models, a cost each, the failures" \
  "$(jq -c '[.items[] | select(.state != "cancelled") | [.agent_profile, .model, (.cost_usd > 0), .tool_calls, .tool_failures]] | sort' "$T/usage.json")" \
  '[["default","claude-sonnet-4-5",true,2,0],["default","claude-sonnet-4-5",true,2,0],["second","claude-haiku-4-5",true,3,2],["watching","claude-sonnet-4-5",true,1,0]]'
assert_eq "and the run cancelled from the page" \
  "$(jq -c '[.items[] | select(.state == "cancelled") | .agent_profile]' "$T/usage.json")" '["default"]'
check "the patch is on disk too" grep -q '^from the console$' "$T/work/new.txt"
check "the watched run's file is on disk" grep -q '^changed$' "$T/work/watched.txt"

stop_serve
finish

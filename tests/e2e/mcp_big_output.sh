#!/usr/bin/env bash
# An MCP result over the cap (MAX_MCP_OUTPUT_TOKENS, default 25 000 tokens)
# reaches the model cut, with a note naming a file that holds the whole
# result; the model can Read that file and it has every byte. A result under
# the cap is passed whole. (The file is in the session's directory under
# LOOM_HOME, outside the workspace; that directory reads like the
# workspace, so a headless Read of it in default mode runs without asking.)
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
echo '{"permissions": {"allow": ["mcp__fake__big"]}}' > "$LOOM_HOME/settings.json"
cfg=$(mcp_config fake "$(fake_entry)")
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "g1", "name": "mcp__fake__big", "input": {"bytes": 3000}}]}},
  {"reply": {"tool_calls": [{"id": "g2", "name": "mcp__fake__big", "input": {"bytes": 40000}}]}},
  {"reply": {"tool_calls": [{"id": "rd", "name": "Read", "input": {"file_path": "$last:the whole result \\([0-9]+ chars\\) is in ([^ ]+) ", "offset": 1, "limit": 5}}]}},
  {"reply": {"text": "Read the rest."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
json=$(MAX_MCP_OUTPUT_TOKENS=2000 "$LOOM_BIN" -p "big results" --cwd "$T/proj" --mcp-config "$cfg" \
        --output-format json)
assert_eq "the run completed" "$(jq -r .result <<<"$json")" "Read the rest."
g1=$(tool_result g1)
assert_eq "a result under the cap is passed whole" "${#g1}" "3000"
g2=$(tool_result g2)
check "a result over the cap is cut (${#g2} chars reached the model)" test "${#g2}" -lt 12000
assert_contains "the cut result says where the whole is" "$g2" "the whole result (40000 chars) is in "
path=$(sed -n 's/.*the whole result (40000 chars) is in \([^ ]*\) .*/\1/p' <<<"$g2")
check "the spilled file exists ($path)" test -f "$path"
assert_eq "the spilled file has every byte" "$(wc -c < "$path" | tr -d ' ')" "40000"
assert_eq "the model's Read of the file is no error" "$(tool_is_error rd)" "false"
assert_contains "the model's Read of the file has its content" "$(tool_result rd)" "xxxxxxxxxx"
finish

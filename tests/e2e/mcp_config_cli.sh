#!/usr/bin/env bash
# `loom mcp list|get|add|add-json|remove` (docs/mcp.md, "Configuration"):
# servers added in each scope land in the file that scope means (local
# .loom/settings.local.json, project .mcp.json, user $LOOM_HOME/settings.json)
# with the files' other keys kept; a project server waits for approval until
# the user or local settings name it — and neither the project's own
# .loom/settings.json nor a local file in an untrusted folder can approve it
# (a hostile repository can commit both); ${VAR} / ${VAR:-default} expanded in
# `get`, an unset one an error for that server only; a bad entry listed with
# its error; --mcp-config twice (a file and a JSON text) and
# --strict-mcp-config; remove by scope or from the one scope holding it.
source "$(dirname "$0")/_lib.sh"

L="$LOOM_BIN"
W="$T/work"
U="$LOOM_HOME/settings.json"
cd "$W"
unset MCPT_TOKEN MCP_TIMEOUT MCP_TOOL_TIMEOUT LOOM_TRUST_WORKSPACE

jqt() { jq -e "$@" >/dev/null; }
# list as JSON, one server's field: field NAME KEY [flags...]
field() { local n=$1 k=$2; shift 2; "$L" mcp list --json "$@" | jq -r --arg n "$n" ".[] | select(.name == \$n) | .$k"; }
status() { # ok | needs-approval | disabled | error
  local n=$1; shift
  "$L" mcp list --json "$@" | jq -r --arg n "$n" '.[] | select(.name == $n) |
    if .error then "error" elif .disabled then "disabled"
    elif .needs_approval then "needs-approval" else "ok" end'
}

assert_contains "empty list says how to add" "$("$L" mcp list)" "No MCP servers configured"
assert_contains "help names the scopes" "$("$L" mcp --help)" ".mcp.json"
assert_contains "loom --help names --mcp-config" "$("$L" --help)" "--mcp-config FILE|JSON"

# ---- add in the three scopes ---------------------------------------------------
printf '{"model": "keep-me"}\n' > "$U"
mkdir -p .loom
printf '{"permissions": {"allow": ["Read"]}}\n' > .loom/settings.local.json
out=$("$L" mcp add loc -- node server.js --port 1)
assert_contains "add: default scope is local" "$out" "local configuration"
check "local: written to .loom/settings.local.json" \
  jqt '.mcpServers.loc == {"type": "stdio", "command": "node", "args": ["server.js", "--port", "1"]}' \
  .loom/settings.local.json
check "local: other keys kept" jqt '.permissions.allow == ["Read"]' .loom/settings.local.json

"$L" mcp add --scope user -e 'TOKEN=${MCPT_TOKEN}' usr -- usr-bin >/dev/null
check "user: written to the user settings" \
  jqt '.mcpServers.usr.env.TOKEN == "${MCPT_TOKEN}" and .model == "keep-me"' "$U"

"$L" mcp add --transport http --scope project -H 'Authorization: Bearer ${MCPT_TOKEN:-anon}' \
  web https://mcp.example/mcp >/dev/null
"$L" mcp add-json -s project pj '{"command": "pj-bin", "args": ["x"]}' >/dev/null
check "project: written to .mcp.json" \
  jqt '.mcpServers.web.type == "http" and .mcpServers.web.url == "https://mcp.example/mcp"
         and .mcpServers.web.headers.Authorization == "Bearer ${MCPT_TOKEN:-anon}"
         and .mcpServers.pj.command == "pj-bin"' .mcp.json
check "nothing else written" test ! -e .loom/settings.json

set +e
"$L" mcp add loc -- other 2>"$T/err"; st=$?
"$L" mcp add-json bad '{"type": "http"}' 2>"$T/err2"; st2=$?
"$L" mcp add --transport ws x y 2>/dev/null; st3=$?
set -e
assert_eq "add: an existing name fails" "$st" "1"
assert_contains "add: says it exists" "$(cat "$T/err")" "already exists"
assert_eq "add-json: a bad entry fails" "$st2" "1"
assert_contains "add-json: says why" "$(cat "$T/err2")" "needs a \"url\""
assert_eq "add: a bad transport is a usage error" "$st3" "2"
"$L" mcp add --replace loc -- node server.js --port 2 >/dev/null
check "add --replace overwrites" jqt '.mcpServers.loc.args[2] == "2"' .loom/settings.local.json

# ---- list and approval (untrusted folder) ------------------------------------------
table=$("$L" mcp list 2>&1)
assert_contains "list: table header" "$table" "TRANSPORT"
assert_contains "list: a project server needs approval" "$(grep '^web ' <<<"$table")" "needs approval"
assert_contains "list: http target is the URL" "$(grep '^web ' <<<"$table")" "https://mcp.example/mcp"
assert_contains "list: stdio target is the command" "$(grep '^pj ' <<<"$table")" "pj-bin x"
assert_eq "untrusted: a local server waits too" "$(status loc)" "needs-approval"
assert_eq "user server: unset \${VAR} is its error" "$(status usr)" "error"
assert_contains "the error names the variable" "$(field usr error)" '${MCPT_TOKEN} is not set'
assert_eq "the error is that server's only" "$(status pj)" "needs-approval"

# A hostile repository approves itself: its own settings and a committed local file.
printf '{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["web", "pj"]}\n' \
  > .loom/settings.json
jq '.enabledMcpjsonServers = ["web"]' .loom/settings.local.json > "$T/l" && mv "$T/l" .loom/settings.local.json
assert_eq "untrusted: project settings cannot approve" "$(status pj)" "needs-approval"
assert_eq "untrusted: a local file cannot approve either" "$(status web)" "needs-approval"
# The user's own settings can.
jq '.enabledMcpjsonServers = ["web"]' "$U" > "$T/u" && mv "$T/u" "$U"
assert_eq "user settings approve" "$(status web)" "ok"
assert_eq "only the one named" "$(status pj)" "needs-approval"
jq 'del(.enabledMcpjsonServers)' "$U" > "$T/u" && mv "$T/u" "$U"

# ---- a trusted folder -------------------------------------------------------------
rm .loom/settings.json
jq --arg w "$(cd "$W" && pwd -P)" '.trustedWorkspaces = [$w]' "$U" > "$T/u" && mv "$T/u" "$U"
jq 'del(.enabledMcpjsonServers)' .loom/settings.local.json > "$T/l" && mv "$T/l" .loom/settings.local.json
assert_eq "trusted: a local server starts" "$(status loc)" "ok"
assert_eq "trusted: project server waits until named" "$(status web)" "needs-approval"
jq '.enabledMcpjsonServers = ["web"]' .loom/settings.local.json > "$T/l" && mv "$T/l" .loom/settings.local.json
assert_eq "trusted: named in the local settings: approved" "$(status web)" "ok"
assert_eq "trusted: the other still waits" "$(status pj)" "needs-approval"
printf '{"enableAllProjectMcpServers": true}\n' > .loom/settings.json
assert_eq "trusted: the project's own settings count" "$(status pj)" "ok"
jq '.disabledMcpjsonServers = ["pj"]' .loom/settings.local.json > "$T/l" && mv "$T/l" .loom/settings.local.json
assert_eq "disabledMcpjsonServers wins" "$(status pj)" "disabled"
assert_contains "table says disabled" "$("$L" mcp list | grep '^pj ')" "disabled"

# ---- ${VAR} expansion in get -----------------------------------------------------------
assert_contains "get: default used" "$("$L" mcp get web)" "Authorization: Bearer anon"
export MCPT_TOKEN=s3cret
assert_contains "get: variable expanded" "$("$L" mcp get web)" "Authorization: Bearer s3cret"
assert_eq "get --json: env expanded" "$("$L" mcp get usr --json | jq -r .env.TOKEN)" "s3cret"
assert_eq "user server fine once the variable is set" "$(status usr)" "ok"
get=$("$L" mcp get pj)
assert_contains "get: scope and file" "$get" "Scope: project ($W/.mcp.json)"
assert_contains "get: status" "$get" "Status: disabled"
unset MCPT_TOKEN

# ---- a bad entry --------------------------------------------------------------------
jq '.mcpServers.broken = {"type": "ws", "url": "http://x"}' .mcp.json > "$T/m" && mv "$T/m" .mcp.json
jq '.enabledMcpjsonServers += ["broken"]' .loom/settings.local.json > "$T/l" && mv "$T/l" .loom/settings.local.json
assert_contains "list: a bad entry shows its error" "$("$L" mcp list | grep '^broken ')" \
  'error: '"$W"'/.mcp.json: MCP server "broken": "type" must be "stdio", "http" or "sse"'
assert_eq "the others still listed" "$("$L" mcp list --json | jq length)" "5"

# ---- --mcp-config twice, --strict-mcp-config -----------------------------------------
printf '{"mcpServers": {"c1": {"command": "c1-bin"}, "dup": {"command": "from-file"}}}\n' > "$T/a.json"
j='{"mcpServers": {"c2": {"url": "https://c2.example/mcp"}, "dup": {"command": "from-json"}}}'
assert_eq "--mcp-config twice: both taken" \
  "$("$L" mcp list --json --mcp-config "$T/a.json" --mcp-config "$j" | jq -c '[.[] | select(.scope == "cli") | .name]')" \
  '["c1","dup","c2"]'
assert_eq "the later --mcp-config wins" "$(field dup command --mcp-config "$T/a.json" --mcp-config "$j")" "from-json"
assert_eq "a file's source is its path" "$(field c1 source --mcp-config "$T/a.json")" "$T/a.json"
assert_eq "cli servers need no approval" "$(status c2 --mcp-config "$j")" "ok"
assert_eq "strict: only the --mcp-config servers" \
  "$("$L" mcp list --json --strict-mcp-config --mcp-config "$T/a.json" --mcp-config "$j" | jq -c '[.[].name]')" \
  '["c1","dup","c2"]'
assert_contains "strict: table" "$("$L" mcp list --strict-mcp-config --mcp-config "$j")" "c2    cli"
set +e
"$L" mcp list --mcp-config "$T/none.json" 2>"$T/err"; st=$?
set -e
assert_eq "a missing --mcp-config fails" "$st" "1"
assert_contains "and says so" "$(cat "$T/err")" "neither a readable file nor JSON"
# The main command takes the flags as the config options.
check "loom -p accepts --mcp-config and --strict-mcp-config" \
  "$L" -p "What is Loom?" --provider replay --cassette "$LOOM_SRC/examples/cassettes/demo.json" \
  --mcp-config "$j" --mcp-config "$T/a.json" --strict-mcp-config >/dev/null

# ---- remove ---------------------------------------------------------------------------
"$L" mcp add -s user loc -- dup-bin >/dev/null
set +e
"$L" mcp remove loc 2>"$T/err"; st=$?
set -e
assert_eq "remove: a name in two scopes fails" "$st" "1"
assert_contains "and names both" "$(cat "$T/err")" "user and the local"
"$L" mcp remove --scope user loc >/dev/null
check "remove --scope user: gone from the user settings, other keys kept" \
  jqt '(.mcpServers | has("loc") | not) and .model == "keep-me" and (.trustedWorkspaces | length) == 1' "$U"
"$L" mcp remove loc >/dev/null
check "remove: from the one scope holding it" \
  jqt '(.mcpServers | has("loc") | not) and .permissions.allow == ["Read"]' .loom/settings.local.json
"$L" mcp remove -s project web >/dev/null
check "remove -s project: .mcp.json keeps the others" \
  jqt '(.mcpServers | keys) == ["broken", "pj"]' .mcp.json
set +e
"$L" mcp remove nosuch 2>"$T/err"; st=$?
set -e
assert_eq "remove: unknown name fails" "$st" "1"
assert_contains "and says where it looked" "$(cat "$T/err")" "no MCP server \"nosuch\""
assert_eq "list after removes" "$("$L" mcp list --json | jq -c '[.[].name]')" '["usr","pj","broken"]'

finish

#!/usr/bin/env bash
# A WebFetch(domain:…) deny rule binds every spelling of its host. The HTTP
# client reads "127.3", "0x7f.0.0.3", "2130706435", "0177.0.0.3",
# "[::ffff:127.0.0.3]" as 127.0.0.3, decodes "%6c%6fcalhost" and maps the
# full-width "ｌocalhost" to localhost; the rules judge the host as written.
# In bypassPermissions mode (deny rules still hold) with deny rules for
# 127.0.0.3 and localhost, each such spelling is refused before anything is
# sent — the listener on 127.0.0.3 gets nothing — and the result says why;
# the plain spellings (upper case, trailing dot) meet the deny rule itself.
# A first run without the deny rules shows the listener is reachable.
source "$(dirname "$0")/_lib.sh"

start_listener 127.0.0.3
P=$LISTEN_PORT
check "the listener is up" test -n "$P"

# id|url — every one names 127.0.0.3 or localhost to the HTTP client.
SPELLINGS=(
  "short|http://127.3:$P/?k=short"
  "hex|http://0x7f.0.0.3:$P/?k=hex"
  "decimal|http://2130706435:$P/?k=decimal"
  "octal|http://0177.0.0.3:$P/?k=octal"
  "zeros|http://127.0.0.03:$P/?k=zeros"
  "mapped|http://[::ffff:127.0.0.3]:$P/?k=mapped"
  "mappedhex|http://[::ffff:7f00:3]:$P/?k=mappedhex"
  "dotnum|http://127.0.0.3.:$P/?k=dotnum"
  "percent|http://%6c%6fcalhost:$P/?k=percent"
  "percentip|http://127.0.0.%33:$P/?k=percentip"
  "fullwidth|http://ｌocalhost:$P/?k=fullwidth"
  "upper|http://LOCALHOST:$P/?k=upper"
  "trailing|http://localhost.:$P/?k=trailing"
  "userinfo|http://x@127.0.0.3:$P/?k=userinfo"
)
{
  echo '{"turns": ['
  echo "{\"reply\": {\"tool_calls\": [{\"id\": \"canon\", \"name\": \"WebFetch\", \"input\": {\"url\": \"http://127.0.0.3:$P/?k=canon\", \"prompt\": \"what\"}}]}},"
  for s in "${SPELLINGS[@]}"; do
    printf '{"reply": {"tool_calls": [{"id": "%s", "name": "WebFetch", "input": {"url": "%s", "prompt": "what"}}]}},\n' "${s%%|*}" "${s#*|}"
  done
  echo '{"reply": {"text": "done"}}]}'
} > "$T/scenario.json"
jq -e . "$T/scenario.json" >/dev/null

run() {
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "fetch" --permission-mode bypassPermissions --cwd "$T/work" \
         --output-format json 2>/dev/null) || true
  file=$(session_file "$(jq -r .session_id <<<"$json")")
}
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }

# Without deny rules the canonical spelling reaches the listener.
run
check "without a deny rule the listener is reached" grep -q "k=canon" "$LISTEN_LOG"

echo '{"permissions": {"deny": ["WebFetch(domain:127.0.0.3)", "WebFetch(domain:localhost)"]}}' \
  > "$LOOM_HOME/settings.json"
: > "$LISTEN_LOG"
run
assert_contains "the canonical spelling meets the deny rule" "$(result canon)" "denied"
for s in "${SPELLINGS[@]}"; do
  id=${s%%|*}
  r=$(result "$id")
  check "$id: refused or denied, never fetched ($r)" \
    bash -c '[[ "$1" == *"Cannot fetch"* || "$1" == *denied* ]] && [[ "$1" != *"Fetching"*"failed"* ]]' _ "$r"
done
assert_contains "a numeric spelling is told the form to use" "$(result hex)" "dotted-quad"
assert_contains "a percent-encoded host is told why" "$(result percent)" "percent-encoded"
assert_contains "a full-width host is told why" "$(result fullwidth)" "xn--"
assert_contains "a mapped IPv6 address is told why" "$(result mapped)" "IPv4 address in disguise"
check "the listener got nothing with the deny rules" test ! -s "$LISTEN_LOG"
finish

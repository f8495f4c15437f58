#!/usr/bin/env bash
# WebSearch (docs/tools.md): with "webSearch" in the user's settings the
# tool is offered and asks the configured search API (a SearXNG-shaped
# stand-in on loopback); the query is URL-encoded into {query}; results
# come numbered with title, URL and snippet; the settings' blockedDomains
# and the call's allowed_domains filter them by host; a bad call, a failing
# service, a bad setting are clear errors. Without the setting, or with it
# only in a repository's settings, there is no WebSearch tool.
source "$(dirname "$0")/_lib.sh"

python3 "$LOOM_SRC/tests/e2e/_search_server.py" "$T/search.port" "$T/search.log" &
SEARCH_PID=$!
trap 'kill $SEARCH_PID 2>/dev/null' EXIT
for _ in $(seq 1 100); do [ -s "$T/search.port" ] && break; sleep 0.05; done
SEARCH="http://127.0.0.1:$(cat "$T/search.port")"
mkdir -p "$T/proj"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [
    {"id": "w1", "name": "WebSearch", "input": {"query": "loom agent harness & more"}},
    {"id": "w2", "name": "WebSearch", "input": {"query": "loom docs", "allowed_domains": ["docs.example.org"]}},
    {"id": "w3", "name": "WebSearch", "input": {"query": "x"}},
    {"id": "w4", "name": "WebSearch", "input": {"query": "loom", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}},
    {"id": "w5", "name": "WebSearch", "input": {"query": "loom", "blocked_domains": ["example.com"]}}]}},
  {"reply": {"text": "Searched."}}
]}
JSON
settings() { # settings URL [EXTRA] — the user's settings with a search service
  echo "{\"permissions\": {\"allow\": [\"WebSearch\"]}, \"webSearch\": {\"url\": \"$1\", \"blockedDomains\": [\"blocked.example.net\"]${2:-}}}" > "$LOOM_HOME/settings.json"
}
settings "$SEARCH/search?q={query}&format=json"
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "search" --cwd "$T/proj" --output-format json)
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
check "WebSearch is declared to the model" jq -e 'select(.body.tools) | [.body.tools[].name] | index("WebSearch")' <(head -n 1 "$MOCK_LOG")
check "the service got the query, URL-decoded as sent" jq -se 'any(.[]; .path=="/search" and .q=="loom agent harness & more")' "$T/search.log"
r=$(result w1)
assert_contains "the results are numbered with title and URL" "$r" $'1. Loom docs\n   https://docs.example.org/loom\n   The Loom harness documentation.'
assert_contains "  the second" "$r" $'2. Example\n   https://www.example.com/b'
check "  the settings' blocked domain is left out" bash -c '! grep -q blocked.example.net <<<"$1"' _ "$r"
check "  a non-web URL is left out" bash -c '! grep -q ftp:// <<<"$1"' _ "$r"
assert_contains "  the rest is there" "$r" "3. Other"
r=$(result w2)
assert_contains "allowed_domains keeps docs.example.org" "$r" "docs.example.org/loom"
check "  and only it" bash -c '! grep -q -e example.com/b -e evil.test <<<"$1"' _ "$r"
assert_contains "a one-letter query is refused" "$(result w3)" "at least 2 characters"
assert_contains "both lists at once are refused" "$(result w4)" "not both"
r=$(result w5)
check "blocked_domains blocks subdomains (www.example.com)" bash -c '! grep -q www.example.com <<<"$1"' _ "$r"
assert_contains "  and keeps the rest" "$r" "docs.example.org"
assert_eq "final answer" "$(jq -r .result <<<"$json")" "Searched."
stop_mock

# A failing service is an error result the run goes on from.
settings "$SEARCH/fail?q={query}"
cat > "$T/one.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "f1", "name": "WebSearch", "input": {"query": "loom"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
start_mock "$T/one.json"
json=$("$LOOM_BIN" -p "search" --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "a service answering 500 is an error naming it" "$(result f1)" "The search service answered HTTP 500."
assert_eq "  and the run completes" "$(jq -r .subtype <<<"$json")" "success"
stop_mock

# Without the setting there is no WebSearch; in a trusted project's
# settings it is ignored with a warning (a repository would read every
# query; an untrusted one's settings are not read at all).
cat > "$T/chat.json" <<'JSON'
{"turns": [{"reply": {"text": "Hi."}}]}
JSON
echo "{\"trustedWorkspaces\": [\"$T/proj\"]}" > "$LOOM_HOME/settings.json"
mkdir -p "$T/proj/.loom"
echo "{\"webSearch\": {\"url\": \"$SEARCH/search?q={query}\"}}" > "$T/proj/.loom/settings.json"
start_mock "$T/chat.json"
err=$("$LOOM_BIN" -p "hi" --cwd "$T/proj" 2>&1 >/dev/null)
check "no WebSearch without the user's setting" bash -c '! jq -e "[.body.tools[].name] | index(\"WebSearch\")" <(head -n 1 "$1") >/dev/null' _ "$MOCK_LOG"
assert_contains "a project's webSearch is ignored, with a warning" "$err" "webSearch in the project's settings is ignored"
stop_mock
rm -rf "$T/proj/.loom"

# A bad setting stops loom with the key named.
echo '{"webSearch": {"url": "https://search.example/api"}}' > "$LOOM_HOME/settings.json"
start_mock "$T/chat.json"
if err=$("$LOOM_BIN" -p "hi" --cwd "$T/proj" 2>&1 >/dev/null); then not_ok "a url without {query} is refused"; else
  assert_contains "a url without {query} is refused, naming the key" "$err" "webSearch.url must be an http(s) URL with {query}"; fi
echo '{"webSearch": {"url": "https://s.example/?q={query}", "allowedDomains": ["not a domain"]}}' > "$LOOM_HOME/settings.json"
if err=$("$LOOM_BIN" -p "hi" --cwd "$T/proj" 2>&1 >/dev/null); then not_ok "a bad domain is refused"; else
  assert_contains "a bad domain is refused, naming its place" "$err" "webSearch.allowedDomains[0] is not a domain"; fi
stop_mock
finish

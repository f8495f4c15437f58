#!/usr/bin/env bash
# mcp_serve_conformance.sh — the MCP conformance suite in server mode against
# `loom mcp serve --http` (tests/mcp_server/conformance.sh; the expected
# failures, each with its reason, are in
# tests/mcp_server/conformance-expected-failures.yml).
source "$(dirname "$0")/_lib.sh"
if LOOM_BIN="$LOOM_BIN" bash "$LOOM_SRC/tests/mcp_server/conformance.sh" > "$T/table" 2> "$T/err"; then
  ok "every server scenario passes or fails as expected"
else
  not_ok "a server scenario did not go as expected: $(tail -n 40 "$T/err")"
fi
cat "$T/table"
check "server-initialize passes" grep -Eq '^server-initialize +[0-9]+ +0 .* ok$' "$T/table"
check "tools-list passes" grep -Eq '^tools-list +[0-9]+ +0 .* ok$' "$T/table"
check "dns-rebinding-protection passes" grep -Eq '^dns-rebinding-protection +2 +0 .* ok$' "$T/table"
finish

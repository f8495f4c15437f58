#!/usr/bin/env bash
# Done when 6 (issue 14, role "fork"): a fork inherits the conversation and
# the tool set with a byte-identical system prompt and tool list, and the
# same model, so its first request is a cache hit on the parent's prefix:
# the parent's last request before the fork, up to its dynamic tail (the
# working-memory element, from the comma before it), is a byte prefix of
# the fork's first request. On a mismatch the test names the first
# differing byte and shows both sides. Anthropic's cache_control markers
# move by design and are removed first (as in context_cache.sh). The run has
# an MCP server, so the tool list the fork must repeat holds MCP tools too.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
# Only the body tells the fork from its parent (same system, same counts):
# the parent's last request holds the fork's answer, so it is matched first;
# the fork's first request holds the directive.
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"body_contains": "FORK-ANSWER-42"}, "reply": {"text": "PARENT-DONE"}},
  {"match": {"body_contains": "FORK-DIRECTIVE"}, "reply": {"text": "FORK-ANSWER-42"}},
  {"reply": {"text": "Looking first.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "echo history"}}]}},
  {"reply": {"text": "Forking.", "tool_calls": [{"id": "f1", "name": "Agent", "input": {
     "description": "fork it", "subagent_type": "fork", "prompt": "FORK-DIRECTIVE check the other half"}}]}}
]}
JSON

# body N — the N-th logged request's raw body, cache markers removed.
body() { sed -n "${1}p" "$MOCK_LOG" | jq -j .raw_body | sed 's/,"cache_control":{"type":"ephemeral"}//g'; }
# tail_offset FILE — where the working-memory element starts (its comma).
tail_offset() {
  local off
  off=$(grep -b -o '{"type":"text","text":"<working-memory>\|{"role":"user","content":"<working-memory>\|{"role":"user","content":\[{"type":"input_text","text":"<working-memory>' "$1" | tail -n 1 | cut -d: -f1)
  [ -n "$off" ] && echo $((off - 1))
}

for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "FORK-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
    --mcp-config "$(mcp_config fake "$(fake_entry)")" --output-format events > "$T/events" 2> "$T/err" || true
  last=$(tail -n 1 "$T/events")
  assert_eq "$provider: the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
  assert_eq "$provider: the parent answered after the fork" "$(jq -r .payload.result <<<"$last")" "PARENT-DONE"
  # Requests: 1 parent (Bash), 2 parent (Agent), 3 the fork, 4 parent (done).
  n_fork=$(jq -s 'map(.raw_body | contains("FORK-DIRECTIVE") and (contains("FORK-ANSWER-42") | not)) | index(true) // empty | . + 1' "$MOCK_LOG")
  if [ -z "$n_fork" ] || [ "$n_fork" -lt 2 ]; then
    not_ok "$provider: no request of the fork was made: $(jq -c '.error // empty' "$MOCK_LOG" | head -c 400)"
    stop_mock; continue
  fi
  # The parent's request that made the fork call is the one before the fork's.
  n_parent=$((n_fork - 1))
  body "$n_parent" > "$T/parent.$provider"
  body "$n_fork" > "$T/fork.$provider"
  p=$(sed -n "${n_parent}p" "$MOCK_LOG"); f=$(sed -n "${n_fork}p" "$MOCK_LOG")
  assert_eq "$provider: the fork's system prompt is the parent's" \
    "$(jq -c '.body.system // [.body.messages[]? | select(.role=="system")]' <<<"$f" | sed 's/,"cache_control":{"type":"ephemeral"}//g')" \
    "$(jq -c '.body.system // [.body.messages[]? | select(.role=="system")]' <<<"$p" | sed 's/,"cache_control":{"type":"ephemeral"}//g')"
  names() { jq -r '[.body.tools[]? | (.name // .function.name)] | join(",")'; }
  assert_eq "$provider: the fork declares the parent's tools, in order" "$(names <<<"$f")" "$(names <<<"$p")"
  # (Anthropic's tools follow the messages in the JSON text, so the prefix
  # comparison below does not cover them: they are compared whole here.)
  check "$provider: the fork's tool list is the parent's, byte for byte" \
    test "$(jq -c '.body.tools' <<<"$f" | sed 's/,"cache_control":{"type":"ephemeral"}//g')" = \
         "$(jq -c '.body.tools' <<<"$p" | sed 's/,"cache_control":{"type":"ephemeral"}//g')"
  check "$provider: the parent's tool list holds the MCP tools" grep -q 'mcp__fake__echo' <<<"$(jq -c '.body.tools' <<<"$p")"
  assert_eq "$provider: the fork's model is the parent's" "$(jq -r .body.model <<<"$f")" "$(jq -r .body.model <<<"$p")"
  off=$(tail_offset "$T/parent.$provider" || true)
  if [ -z "$off" ]; then
    not_ok "$provider: the parent's request $n_parent has no working-memory tail"
  elif out=$(cmp -n "$off" "$T/parent.$provider" "$T/fork.$provider" 2>&1); then
    ok "$provider: the fork's first request extends the parent's last byte for byte up to the tail ($off bytes)"
  else
    at=${out##*byte }; at=${at%%,*}
    [[ $at =~ ^[0-9]+$ ]] || at=1
    not_ok "$provider: the fork's first request differs from the parent's at byte $at (of the $off before the tail): $out"
    echo "  parent at byte $at: $(tail -c +$((at > 60 ? at - 60 : 1)) "$T/parent.$provider" | head -c 140)" >&2
    echo "  fork   at byte $at: $(tail -c +$((at > 60 ? at - 60 : 1)) "$T/fork.$provider" | head -c 140)" >&2
  fi
  check "$provider: the fork's request carries the directive after the shared prefix" \
    bash -c "tail -c +$(( ${off:-0} + 1 )) '$T/fork.$provider' | grep -q FORK-DIRECTIVE"
  check "$provider: the fork carries the parent's history (the Bash call)" grep -q 'echo history' "$T/fork.$provider"
  # The comparison can fail: one changed byte before the tail is caught.
  cp "$T/fork.$provider" "$T/forkx" && printf 'X' | dd of="$T/forkx" bs=1 seek=60 conv=notrunc 2>/dev/null
  check "$provider: the comparison catches a changed byte" bash -c "! cmp -s -n ${off:-200} '$T/parent.$provider' '$T/forkx'"
  stop_mock
done
finish

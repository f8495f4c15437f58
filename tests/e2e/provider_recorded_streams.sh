#!/usr/bin/env bash
# The recorded-stream corpus (tests/corpus/, MANIFEST.json / MANIFEST.md):
# every stream and body the official SDKs keep in their tests, and the
# documented shapes the API references show, is served byte for byte from a
# loopback server (sse_replay.py) to the real loom binary — its HTTP client,
# SSE reader and decoders — and what Loom printed, the tool calls it ran, the
# stop reason, the usage in its events and session file, how many requests
# it made and what it sent back on the next turn are compared with the
# manifest (recorded_streams_check.py). Entries marked known_failure name a
# Loom bug and must still fail until it is fixed.
#
# CORPUS_ONLY=REGEX replays only the entries whose name matches.
source "$(dirname "$0")/_lib.sh"

CORPUS="$LOOM_SRC/tests/corpus"
QUEUE="$T/replay.queue"
REQLOG="$T/replay.log"
: > "$QUEUE"
: > "$REQLOG"
python3 "$LOOM_SRC/tests/e2e/sse_replay.py" "$QUEUE" "$REQLOG" "$T/replay.port" "$CORPUS/followup" &
LISTEN_PID=$!
for _ in $(seq 1 250); do [ -s "$T/replay.port" ] && break; sleep 0.02; done
[ -s "$T/replay.port" ] || { echo "the replay server did not start" >&2; exit 1; }
URL="http://127.0.0.1:$(cat "$T/replay.port")"
export LOOM_RETRY_BASE_MS=10

count=0
known=0
while IFS= read -r entry; do
  name=$(jq -r .name <<<"$entry")
  [[ -n "${CORPUS_ONLY:-}" && ! "$name" =~ $CORPUS_ONLY ]] && continue
  count=$((count + 1))
  [ "$(jq -r '.known_failure // empty' <<<"$entry")" ] && known=$((known + 1))
  # One queue line per recorded reply: a conversation or retry sequence has several.
  jq -r --arg c "$CORPUS" '(.replies // [{status, file}])[] | "\(.status) \($c)/\(.file)"' <<<"$entry" > "$QUEUE"
  : > "$REQLOG"
  export LOOM_HOME="$T/home-$count"
  mkdir -p "$LOOM_HOME"
  unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY OPENAI_BASE_URL OPENAI_API_KEY LOOM_PROVIDER
  case "$(jq -r .api <<<"$entry")" in
    anthropic) export ANTHROPIC_BASE_URL="$URL" ANTHROPIC_API_KEY=test-key ;;
    chat) export OPENAI_BASE_URL="$URL/v1" OPENAI_API_KEY=test-key ;;
    responses) export OPENAI_BASE_URL="$URL/v1" OPENAI_API_KEY=test-key LOOM_PROVIDER=openai-responses ;;
  esac
  stream_flag=()
  [ "$(jq -r .stream <<<"$entry")" = false ] && stream_flag=(--no-stream)
  "$LOOM_BIN" -p "replay $name" --output-format events "${stream_flag[@]}" < /dev/null \
    > "$T/events.jsonl" 2> "$T/stderr" || true
  while IFS= read -r line; do
    case "$line" in
      "ok - "*) ok "${line#ok - }" ;;
      *) not_ok "${line#not ok - }" ;;
    esac
  done < <(python3 "$LOOM_SRC/tests/e2e/recorded_streams_check.py" "$entry" "$T/events.jsonl" \
             "$REQLOG" "$LOOM_HOME/projects")
done < <(jq -c '.entries[]' "$CORPUS/MANIFEST.json")

echo "corpus: $count entries replayed, $known marked known_failure"
check "the corpus has at least 50 entries" test "$count" -ge "${CORPUS_MIN:-50}"
finish

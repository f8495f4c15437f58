#!/usr/bin/env bash
# mockllm_smoke.sh — checks the scripted model server itself, before any Loom
# test relies on it: for the Anthropic Messages, OpenAI Chat Completions and
# OpenAI Responses formats it asserts the non-streaming reply, that streamed
# deltas reassemble to the scripted text and tool arguments, usage fields,
# a 429 + Retry-After fault followed by success, and conversation-derived turn
# selection; plus a few robustness cases (bad JSON, no match, dropped stream).
# A second server runs a "sequence": true script with a context_window: turns
# consumed in order, faults not advancing, repeat, over-long prompts refused
# in Anthropic and OpenAI shape, no_tools matching, and raw_body in the log.
# A third server checks reply templates ("$match:REGEX", "$last:REGEX") in
# tool inputs and text, misses in the log, and bad regexes at start-up.
# A fourth checks body_contains (a substring of the raw body) and that three
# parallel, overlapping streams each get the turn their own body selects.
set -euo pipefail

MOCKLLM_BIN=${MOCKLLM_BIN:-/work/main/build/mockllm}
# Loopback traffic must never be sent through a proxy.
export no_proxy='*' NO_PROXY='*'
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

if [[ ! -x $MOCKLLM_BIN ]]; then
    echo "mockllm_smoke: $MOCKLLM_BIN is not an executable (set MOCKLLM_BIN)" >&2
    exit 1
fi

work=$(mktemp -d)
server_pids=()
cleanup() {
    local pid
    for pid in ${server_pids[@]+"${server_pids[@]}"}; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

# start_server SCENARIO LOG NAME: starts mockllm and sets base to its URL.
start_server() {
    local pid
    "$MOCKLLM_BIN" --scenario "$1" --port 0 --port-file "$work/$3.port" --log "$2" \
        >"$work/$3.stdout" 2>"$work/$3.stderr" &
    pid=$!
    server_pids+=("$pid")
    for _ in $(seq 100); do
        [[ -s $work/$3.port ]] && break
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "mockllm_smoke: server exited early:" >&2
            cat "$work/$3.stderr" >&2
            exit 1
        fi
        sleep 0.05
    done
    base="http://127.0.0.1:$(cat "$work/$3.port")"
}

cat >"$work/scenario.json" <<'EOF'
{ "comment": "mockllm_smoke scenario",
  "turns": [
    { "comment": "positional turn 0: the first answer of any conversation",
      "chunk_size": 5,
      "reply": { "text": "Hello from mockllm: ünïcode ✓ and \"quotes\"",
                 "thinking": "let me think about it",
                 "thinking_signature": "sig123",
                 "tool_calls": [{ "id": "toolu_01", "name": "Bash",
                                  "input": { "command": "ls -la /tmp", "timeout": 5 } }],
                 "usage": { "input_tokens": 12, "output_tokens": 7,
                            "cache_read_input_tokens": 3,
                            "cache_creation_input_tokens": 2,
                            "reasoning_tokens": 2 } } },
    { "comment": "positional turn 1: after one assistant turn",
      "reply": { "text": "second turn answer" } },
    { "match": { "last_user_contains": "retry-anthropic" },
      "faults": [{ "status": 429, "headers": { "Retry-After": "1" } }],
      "reply": { "text": "recovered" } },
    { "match": { "last_user_contains": "retry-chat" },
      "faults": [{ "status": 429, "headers": { "Retry-After": "1" } }],
      "reply": { "text": "recovered" } },
    { "match": { "last_user_contains": "retry-responses" },
      "faults": [{ "status": 429, "headers": { "Retry-After": "1" } }],
      "reply": { "text": "recovered" } },
    { "match": { "last_user_contains": "drop-me" },
      "faults": [{ "drop_after_bytes": 200 }],
      "reply": { "text": "this reply is cut off after two hundred bytes of stream" } },
    { "match": { "last_user_contains": "malformed-please" },
      "faults": [{ "malformed": "data: {not json", "after_events": 1 }],
      "reply": { "text": "ok" } },
    { "match": { "last_user_contains": "too-large-please" },
      "faults": [{ "status": 413, "times": 2 }] }
  ] }
EOF

WANT_TEXT='Hello from mockllm: ünïcode ✓ and "quotes"'
WANT_THINKING='let me think about it'
WANT_INPUT='{"command":"ls -la /tmp","timeout":5}'

start_server "$work/scenario.json" "$work/log.jsonl" main

passed=0
failed=0
record() { # name ok got want
    if [[ $2 == ok ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        printf 'FAIL: %s\n  got:  %s\n  want: %s\n' "$1" "$3" "$4"
    fi
}
expect_eq() { # name got want
    if [[ $2 == "$3" ]]; then record "$1" ok; else record "$1" fail "$2" "$3"; fi
}

# Every jq start costs tens of milliseconds, so each response is checked in a
# single jq run. check LABEL INPUT FILTER [jq args]: INPUT is one or more JSON
# values, slurped into an array; FILTER emits c(name; got; want) checks.
JQ_PRELUDE='def c($n; g; w): {n: $n, got: g, want: w};'
check() {
    local label=$1 input=$2 filter=$3 out name res got want
    shift 3
    if ! out=$(jq -rs --arg lbl "$label" --arg text "$WANT_TEXT" \
        --arg thinking "$WANT_THINKING" --argjson input "$WANT_INPUT" "$@" \
        "$JQ_PRELUDE [ $filter ] | .[] |
         [(\$lbl + \": \" + .n), (if .got == .want then \"ok\" else \"fail\" end),
          (.got|tojson), (.want|tojson)] | @tsv" <<<"$input" 2>&1); then
        record "$label: jq failed" fail "$out" "checks to run"
        return
    fi
    while IFS=$'\t' read -r name res got want; do
        record "$name" "$res" "$got" "$want"
    done <<<"$out"
}

# post PATH JSON: prints the response body.
post() { curl -sS --max-time 5 -H 'content-type: application/json' "$base$1" -d "$2"; }
# post_full PATH JSON: response body to $work/body, headers to $work/hdr,
# prints the status code.
post_full() {
    curl -sS --max-time 5 -H 'content-type: application/json' -D "$work/hdr" \
        -o "$work/body" -w '%{http_code}' "$base$1" -d "$2"
}
header() { # NAME: value of that response header in $work/hdr
    local name value
    while IFS=: read -r name value; do
        if [[ ${name,,} == "$1" ]]; then
            value=${value%$'\r'}
            echo "${value# }"
            return
        fi
    done <"$work/hdr"
}
# The JSON payloads of an SSE stream, one per line, without [DONE].
sse_data() { sed -n '/^data: \[DONE\]$/d; s/^data: //p'; }
event_names() { sed -n 's/^event: //p'; }

first_user_anthropic='{"model":"claude-mock","max_tokens":100,"stream":false,"messages":[{"role":"user","content":"hi"}]}'
first_user_chat='{"model":"gpt-mock","stream":false,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}'
first_user_responses='{"model":"gpt-mock","stream":false,"instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}'
with_stream() { sed 's/"stream":false/"stream":true/' <<<"$1"; }

# ---- Anthropic Messages --------------------------------------------------

check anthropic "$(post /v1/messages "$first_user_anthropic")" '.[0] as $b |
    c("text"; [$b.content[]|select(.type=="text").text]|join(""); $text),
    c("thinking"; $b.content[0].thinking; $thinking),
    c("signature"; $b.content[0].signature; "sig123"),
    c("tool call"; $b.content[]|select(.type=="tool_use")|[.id, .name, .input]; ["toolu_01", "Bash", $input]),
    c("message fields"; [$b.type, $b.role, $b.model, ($b.id|startswith("msg_")), $b.stop_reason, $b.stop_sequence];
      ["message", "assistant", "claude-mock", true, "tool_use", null]),
    c("usage"; $b.usage; {"input_tokens":12,"cache_creation_input_tokens":2,"cache_read_input_tokens":3,"output_tokens":7,"output_tokens_details":{"thinking_tokens":2}})'

sse=$(post /v1/messages "$(with_stream "$first_user_anthropic")")
check "anthropic stream" "$(sse_data <<<"$sse")" '
    c("text deltas"; [.[]|select(.type=="content_block_delta" and .delta.type=="text_delta").delta.text]|join(""); $text),
    c("thinking deltas"; [.[]|select(.delta.type?=="thinking_delta").delta.thinking]|join(""); $thinking),
    c("signature delta"; [.[]|select(.delta.type?=="signature_delta").delta.signature]; ["sig123"]),
    c("input_json deltas"; [.[]|select(.delta.type?=="input_json_delta").delta.partial_json]|join("")|fromjson; $input),
    c("tool_use start"; [.[]|select(.type=="content_block_start" and .content_block.type=="tool_use").content_block];
      [{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}}]),
    c("first and last"; [.[0].type, .[-1].type]; ["message_start", "message_stop"]),
    c("has a ping"; any(.[]; .type=="ping"); true),
    c("event lines equal data types"; [.[].type]|join("\n"); $names),
    c("message_start usage"; .[0].message.usage|keys; ["cache_creation_input_tokens","cache_read_input_tokens","input_tokens","output_tokens"]),
    c("message_start model"; .[0].message|[.model, .content, .stop_reason]; ["claude-mock", [], null]),
    c("message_delta"; [.[]|select(.type=="message_delta")|[.delta.stop_reason, .usage.output_tokens]]; [["tool_use", 7]])' \
    --arg names "$(event_names <<<"$sse")"

status=$(post_full /v1/messages '{"model":"m","messages":[{"role":"user","content":"please retry-anthropic"}]}')
expect_eq "anthropic 429: status" "$status" 429
expect_eq "anthropic 429: retry-after" "$(header retry-after)" 1
expect_eq "anthropic: request-id header" "$(header request-id | cut -c1-9)" req_mock_
check "anthropic 429" "$(cat "$work/body")" '
    c("error body"; .[0]|[.type, .error.type, (.error.message|length > 0)]; ["error", "rate_limit_error", true])'
status=$(post_full /v1/messages '{"model":"m","messages":[{"role":"user","content":"please retry-anthropic"}]}')
expect_eq "anthropic retry: status" "$status" 200
expect_eq "anthropic retry: text" "$(jq -j '.content[0].text' "$work/body")" recovered

check anthropic "$(post /v1/messages '{"model":"m","messages":[
  {"role":"user","content":"hi"},
  {"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"ok"}]}]}')" '
    c("second turn chosen from the conversation"; .[0].content[0].text; "second turn answer")'

# ---- OpenAI Chat Completions ---------------------------------------------

check chat "$(post /v1/chat/completions "$first_user_chat")" '.[0] as $b | $b.choices[0].message as $m |
    c("text"; $m.content; $text),
    c("reasoning_content"; $m.reasoning_content; $thinking),
    c("tool call"; $m.tool_calls[0]|[.id, .type, .function.name, (.function.arguments|fromjson)];
      ["toolu_01", "function", "Bash", $input]),
    c("completion fields"; [$b.object, $b.model, $b.choices[0].finish_reason, $m.role];
      ["chat.completion", "gpt-mock", "tool_calls", "assistant"]),
    c("usage"; $b.usage|[.prompt_tokens, .completion_tokens, .total_tokens,
                         .prompt_tokens_details.cached_tokens, .completion_tokens_details.reasoning_tokens];
      [17, 7, 24, 3, 2])'

sse=$(post /v1/chat/completions "$(with_stream "$first_user_chat" | jq -c '. + {stream_options:{include_usage:true}}')")
expect_eq "chat stream: ends with [DONE]" "$(grep '^data: ' <<<"$sse" | tail -1)" "data: [DONE]"
check "chat stream" "$(sse_data <<<"$sse")" '[.[].choices[0].delta.tool_calls // empty | .[]] as $calls |
    c("role first"; .[0].choices[0].delta.role; "assistant"),
    c("content deltas"; [.[].choices[0].delta.content? // empty]|join(""); $text),
    c("reasoning deltas"; [.[].choices[0].delta.reasoning_content? // empty]|join(""); $thinking),
    c("argument deltas"; [$calls[]|select(.index==0).function.arguments]|join("")|fromjson; $input),
    c("tool call head"; [$calls[]|select(.id)];
      [{"index":0,"id":"toolu_01","type":"function","function":{"name":"Bash","arguments":""}}]),
    c("later pieces carry only index and arguments"; [$calls[]|select(.id|not)|keys]|unique;
      [["function","index"]]),
    c("finish_reason"; [.[].choices[0].finish_reason? // empty]; ["tool_calls"]),
    c("chunk object"; [.[].object]|unique; ["chat.completion.chunk"]),
    c("usage chunk"; .[-1]|[.choices, .usage.prompt_tokens, .usage.completion_tokens, .usage.total_tokens,
                           .usage.prompt_tokens_details.cached_tokens, .usage.completion_tokens_details.reasoning_tokens];
      [[], 17, 7, 24, 3, 2])'
check "chat stream without include_usage" "$(post /v1/chat/completions "$(with_stream "$first_user_chat")" | sse_data)" '
    c("no usage chunk"; [.[]|select(.usage)]|length; 0)'

status=$(post_full /v1/chat/completions '{"model":"m","messages":[{"role":"user","content":"retry-chat"}]}')
expect_eq "chat 429: status" "$status" 429
expect_eq "chat 429: retry-after" "$(header retry-after)" 1
expect_eq "chat: x-request-id header" "$(header x-request-id | cut -c1-9)" req_mock_
check "chat 429" "$(cat "$work/body")" '
    c("error body"; .[0].error|[.code, (.message|length > 0), has("type")]; ["rate_limit_exceeded", true, true])'
status=$(post_full /v1/chat/completions '{"model":"m","messages":[{"role":"user","content":"retry-chat"}]}')
expect_eq "chat retry: status" "$status" 200
expect_eq "chat retry: text" "$(jq -j '.choices[0].message.content' "$work/body")" recovered

check chat "$(post /v1/chat/completions '{"model":"m","messages":[
  {"role":"user","content":"hi"},
  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"Bash","arguments":"{}"}}]},
  {"role":"tool","tool_call_id":"c1","content":"ok"}]}')" '
    c("second turn chosen from the conversation"; .[0].choices[0].message.content; "second turn answer")'

# ---- OpenAI Responses ----------------------------------------------------

check responses "$(post /v1/responses "$first_user_responses")" '.[0] as $b |
    c("text"; [$b.output[]|select(.type=="message").content[0].text]|join(""); $text),
    c("reasoning summary"; $b.output[]|select(.type=="reasoning").summary[0].text; $thinking),
    c("function call"; $b.output[]|select(.type=="function_call")|[.call_id, .name, (.id|startswith("fc_")), (.arguments|fromjson)];
      ["toolu_01", "Bash", true, $input]),
    c("object fields"; [$b.object, $b.status, $b.model, ($b.id|startswith("resp_"))]; ["response", "completed", "gpt-mock", true]),
    c("usage"; $b.usage|[.input_tokens, .input_tokens_details.cached_tokens, .output_tokens,
                         .output_tokens_details.reasoning_tokens, .total_tokens];
      [17, 3, 7, 2, 24])'

sse=$(post /v1/responses "$(with_stream "$first_user_responses")")
check "responses stream" "$(sse_data <<<"$sse")" '
    c("text deltas"; [.[]|select(.type=="response.output_text.delta").delta]|join(""); $text),
    c("reasoning deltas"; [.[]|select(.type=="response.reasoning_summary_text.delta").delta]|join(""); $thinking),
    c("argument deltas"; [.[]|select(.type=="response.function_call_arguments.delta").delta]|join("")|fromjson; $input),
    c("arguments done"; [.[]|select(.type=="response.function_call_arguments.done").arguments|fromjson]; [$input]),
    c("sequence numbers"; [.[].sequence_number] == [range(length)]; true),
    c("first and last"; [.[0].type, .[1].type, .[-1].type]; ["response.created", "response.in_progress", "response.completed"]),
    c("event lines equal data types"; [.[].type]|join("\n"); $names),
    c("items added"; [.[]|select(.type=="response.output_item.added").item.type]; ["reasoning", "message", "function_call"]),
    c("function_call item added"; [.[]|select(.type=="response.output_item.added").item|select(.type=="function_call")|[.call_id, .name, .arguments]];
      [["toolu_01", "Bash", ""]]),
    c("completed response"; .[-1].response|[.object, .status, (.output|length)]; ["response", "completed", 3]),
    c("completed usage"; .[-1].response.usage|[.input_tokens, .input_tokens_details.cached_tokens, .output_tokens,
                                               .output_tokens_details.reasoning_tokens, .total_tokens];
      [17, 3, 7, 2, 24])' \
    --arg names "$(event_names <<<"$sse")"

status=$(post_full /v1/responses '{"model":"m","input":"retry-responses"}')
expect_eq "responses 429: status" "$status" 429
expect_eq "responses 429: retry-after" "$(header retry-after)" 1
check "responses 429" "$(cat "$work/body")" '
    c("error body"; .[0].error|[.code, (.message|length > 0)]; ["rate_limit_exceeded", true])'
status=$(post_full /v1/responses '{"model":"m","input":"retry-responses"}')
expect_eq "responses retry: status" "$status" 200
expect_eq "responses retry: text" "$(jq -j '.output[0].content[0].text' "$work/body")" recovered

check responses "$(post /v1/responses '{"model":"m","input":[
  {"role":"user","content":"hi"},
  {"type":"reasoning","id":"rs_1","summary":[]},
  {"type":"function_call","call_id":"c1","name":"Bash","arguments":"{}"},
  {"type":"function_call_output","call_id":"c1","output":"ok"}]}')" '
    c("second turn chosen from the conversation"; .[0].output[0].content[0].text; "second turn answer")'

# ---- robustness ------------------------------------------------------------

status=$(post_full /v1/messages '{"messages": [')
expect_eq "bad JSON: status" "$status" 400
expect_eq "bad JSON: message" "$(grep -c 'not valid JSON' "$work/body")" 1

status=$(post_full /v1/chat/completions '{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"},{"role":"user","content":"e"},{"role":"assistant","content":"f"}]}')
expect_eq "no match: status" "$status" 500
expect_eq "no match: message gives counts" \
    "$(grep -c 'no scripted turn matched this request (assistant_turns=3, tool_results=0' "$work/body")" 1

rc=0
curl -sS --max-time 5 -o "$work/dropped" "$base/v1/messages" \
    -d '{"stream":true,"messages":[{"role":"user","content":"drop-me"}]}' 2>/dev/null || rc=$?
expect_eq "drop fault: curl sees a cut transfer" "$rc" 18
expect_eq "drop fault: bytes before the cut" "$(wc -c <"$work/dropped" | tr -d ' ')" 200

sse=$(post /v1/chat/completions '{"stream":true,"messages":[{"role":"user","content":"malformed-please"}]}')
expect_eq "malformed fault: injected after 1 event" "$(grep '^data: ' <<<"$sse" | sed -n 2p)" "data: {not json"

status=$(post_full /v1/messages '{"messages":[{"role":"user","content":"too-large-please"}]}')
expect_eq "413 fault (anthropic): status" "$status" 413
check "413 fault (anthropic)" "$(cat "$work/body")" '
    c("default body"; .[0]; {"type":"error","error":{"type":"request_too_large",
      "message":"Request exceeds the maximum allowed number of bytes."}})'
status=$(post_full /v1/chat/completions '{"messages":[{"role":"user","content":"too-large-please"}]}')
expect_eq "413 fault (chat): status" "$status" 413
check "413 fault (chat)" "$(cat "$work/body")" '
    c("default body"; .[0].error|[.type, .code, .param]; ["invalid_request_error", "context_length_exceeded", "messages"])'

# ---- the request log -------------------------------------------------------

check log "$(cat "$work/log.jsonl")" '
    c("one line per request"; length; '"$(grep -c . "$work/log.jsonl")"'),
    c("fields"; all(.[]; has("t") and has("method") and has("path") and has("format") and has("stream")
                    and has("turn") and has("attempt") and has("fault") and has("status") and has("headers")
                    and has("body") and has("raw_body")); true),
    c("no sequence or window fields without those options";
      [.[]|select(has("seq") or has("window_exceeded") or has("est_tokens"))]|length; 0),
    c("raw_body of a body that is not JSON"; [.[]|select(.status==400).raw_body]; ["{\"messages\": ["]),
    c("429 entry"; [.[]|select(.fault=="status 429")|[.status, .attempt, .headers["content-type"]]];
      [[429, 1, "application/json"], [429, 1, "application/json"], [429, 1, "application/json"]]),
    c("retries are attempt 2"; [.[]|select((.body|objects|.messages[0]?.content?) == "retry-chat")|.attempt]; [1, 2]),
    c("turn 1 chosen three times"; [.[]|select(.turn==1)]|length; 3),
    c("stream flag"; [.[]|select(.stream)]|length > 3; true),
    c("raw body kept when not JSON"; [.[]|select(.status==400).body]; ["{\"messages\": ["])'

# ---- sequence mode and context_window ----------------------------------------

cat >"$work/seq.json" <<'EOF'
{ "sequence": true, "context_window": 300,
  "turns": [
    { "comment": "a side request: never advances the sequence",
      "match": { "no_tools": true, "last_user_contains": "summarize" },
      "reply": { "text": "the summary" } },
    { "comment": "seq 0: three faults, then the answer",
      "faults": [{ "status": 529 }, { "drop_after_bytes": 10 }, { "malformed": "{not json" }],
      "reply": { "text": "step one" } },
    { "comment": "seq 1: answers twice", "repeat": 2, "reply": { "text": "step two" } },
    { "comment": "seq 2: a stall is a fault too", "faults": [{ "stall_ms": 50 }],
      "reply": { "text": "step three" } }
  ] }
EOF
start_server "$work/seq.json" "$work/seq.jsonl" seq

# The same conversation every time: in sequence mode only the order counts.
go='{"model":"m","tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"go"}]}'
big_text=$(printf 'x%.0s' $(seq 2000))
big_anthropic='{"model":"m","messages":[{"role":"user","content":"'$big_text'"}]}'
big_est=$(( $(printf '%s' "$big_anthropic" | wc -c) / 4 + 1 ))
# A request body written oddly on purpose (spacing, newlines, tabs, escapes,
# key order), which re-serialising would change.
printf '{ "messages" : [ {"content":"go \\u00e9 \\/ \xc3\xa9\\t", "role":"user"} ],\n\t"model":"m",  "tools":[{"name":"Bash"}] }\n' >"$work/raw.json"

status=$(post_full /v1/messages "$go")
expect_eq "sequence: seq 0 attempt 1 is the 529" "$status" 529
rc=0
curl -sS --max-time 5 -o /dev/null "$base/v1/messages" -d "$go" 2>/dev/null || rc=$?
expect_eq "sequence: seq 0 attempt 2 is dropped" "$rc" 18
status=$(post_full /v1/messages "$go")
expect_eq "sequence: seq 0 attempt 3 is malformed" "$status $(cat "$work/body")" "200 {not json"

status=$(post_full /v1/messages "$big_anthropic")
expect_eq "context_window (anthropic): status" "$status" 400
check "context_window (anthropic)" "$(cat "$work/body")" '
    c("body"; .[0]; {"type":"error","error":{"type":"invalid_request_error",
      "message":("prompt is too long: " + $est + " tokens > 300 maximum")}})' --arg est "$big_est"
status=$(post_full /v1/chat/completions "$big_anthropic")
expect_eq "context_window (chat): status" "$status" 400
check "context_window (chat)" "$(cat "$work/body")" '
    c("body"; .[0]; {"error":{"message":("This model'"'"'s maximum context length is 300 tokens. However, your messages resulted in " + $est + " tokens. Please reduce the length of the messages."),
      "type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})' --arg est "$big_est"

status=$(curl -sS --max-time 5 -H 'content-type: application/json' -o "$work/body" -w '%{http_code}' \
    "$base/v1/messages" --data-binary @"$work/raw.json")
expect_eq "sequence: faults and refusals did not advance" "$status $(jq -j '.content[0].text' "$work/body")" "200 step one"
expect_eq "no_tools match: side request" \
    "$(post /v1/chat/completions '{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"please summarize"}]}' | jq -j '.choices[0].message.content')" \
    "the summary"
expect_eq "no_tools match: an empty tools array is no tools" \
    "$(post /v1/chat/completions '{"model":"m","tools":[],"messages":[{"role":"user","content":"summarize"}]}' | jq -j '.choices[0].message.content')" \
    "the summary"
expect_eq "no_tools match: tools present, so the sequence answers" \
    "$(post /v1/messages '{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"summarize"}]}' | jq -j '.content[0].text')" \
    "step two"
expect_eq "sequence: repeat 2 (and across formats)" \
    "$(post /v1/responses '{"model":"m","input":"go"}' | jq -j '.output[0].content[0].text')" "step two"
expect_eq "sequence: seq 2 after a stall" "$(post /v1/messages "$go" | jq -j '.content[0].text')" "step three"
expect_eq "sequence: the stall did not advance" "$(post /v1/messages "$go" | jq -j '.content[0].text')" "step three"
status=$(post_full /v1/messages "$go")
expect_eq "sequence: exhausted is a 500" "$status" 500
expect_eq "sequence: exhausted says the script ran out" \
    "$(grep -c 'no scripted turn matched this request.*3 in the sequence, 3 of them used up (the script ran out)' "$work/body")" 1

check "sequence log" "$(cat "$work/seq.jsonl")" '
    c("seq"; [.[].seq]; [0, 0, 0, null, null, 0, null, null, 1, 1, 2, 2, null]),
    c("turn"; [.[].turn]; [1, 1, 1, null, null, 1, 0, 0, 2, 2, 3, 3, null]),
    c("attempt"; [.[].attempt]; [1, 2, 3, null, null, 4, 1, 2, 1, 2, 1, 2, null]),
    c("fault"; [.[].fault]; ["status 529", "drop_after_bytes 10", "malformed after 0 events",
      null, null, null, null, null, null, null, "stall 50ms after 0 events", null, null]),
    c("status"; [.[].status]; [529, 200, 200, 400, 400, 200, 200, 200, 200, 200, 200, 200, 500]),
    c("window_exceeded"; [.[].window_exceeded]; [false, false, false, true, true, false, false,
      false, false, false, false, false, false]),
    c("est_tokens is raw_body bytes / 4 + 1"; all(.[]; .est_tokens == (.raw_body|utf8bytelength/4|floor) + 1); true),
    c("refused est_tokens"; [.[3].est_tokens, .[4].est_tokens]; [($est|tonumber), ($est|tonumber)]),
    c("raw_body is the exact bytes sent"; .[5].raw_body; $raw),
    c("body is still the parsed request"; .[5].body.messages[0].content; "go é / é\t")' \
    --arg est "$big_est" --rawfile raw "$work/raw.json"
# Byte for byte, outside jq's string handling too.
jq -j 'select(.turn == 1 and .attempt == 4).raw_body' "$work/seq.jsonl" >"$work/raw.logged"
expect_eq "raw_body: cmp with the file sent" "$(cmp "$work/raw.logged" "$work/raw.json" 2>&1 && echo same)" same

# ---- reply templates ($match / $last) --------------------------------------

cat >"$work/tpl.json" <<'EOF'
{ "turns": [
    { "match": { "last_user_contains": "echo-events" },
      "reply": { "text": "$last:ev_[0-9a-f-]+",
                 "tool_calls": [{ "id": "toolu_t1", "name": "Recall",
                   "input": { "first": "$match:ev_[0-9a-f-]+",
                              "newest": "$last:ev_[0-9a-f-]+",
                              "nested": { "ids": ["$match:\"tool_use_id\":\"([^\"]+)\"", 7,
                                                  "$last:\"tool_use_id\":\"([^\"]+)\""] },
                              "quoted": "$match:say \\\\\"([a-z]+)\\\\\"",
                              "plain": "ev_not_a_template",
                              "dollar": "$matchless" } }] } },
    { "match": { "last_user_contains": "miss-please" },
      "reply": { "text": "$match:zz([0-9]+)",
                 "tool_calls": [{ "name": "Recall",
                   "input": { "event_id": "$match:ev_[0-9a-f-]+", "again": "$match:ev_[0-9a-f-]+",
                              "other": "$last:nomatch[0-9]", "hit": "$match:miss-(please)" } }] } }
  ] }
EOF
start_server "$work/tpl.json" "$work/tpl.jsonl" tpl

ev1=ev_01a22c13-8705-743c-b566-5fe6b797b8c9
ev2=ev_01a22c13-9a10-7c11-8e2f-0123456789ab
ev3=ev_01a22c14-0000-7000-8000-ffffffffffff
# Three event ids in order; the middle one after JSON-escaped quotes, which
# the regex sees as the two characters \" (the raw body is JSON text).
tpl_req='{"model":"m","messages":[
  {"role":"user","content":"start '$ev1'"},
  {"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"X","input":{}}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"say \"hello\" about '$ev2'"},
    {"type":"tool_result","tool_use_id":"toolu_B","content":"ok"},
    {"type":"text","text":"echo-events '$ev3'"}]}]}'
want_tpl='{"first":"'$ev1'","newest":"'$ev3'","nested":{"ids":["toolu_A",7,"toolu_B"]},"quoted":"hello","plain":"ev_not_a_template","dollar":"$matchless"}'

check "templates (anthropic)" "$(post /v1/messages "$tpl_req")" '.[0] as $b |
    c("$last in text"; $b.content[0].text; $ev3),
    c("input: $match first, $last last, capture groups, nested, other strings untouched";
      $b.content[]|select(.type=="tool_use").input; $want)' \
    --arg ev3 "$ev3" --argjson want "$want_tpl"
check "templates (chat stream)" \
    "$(post /v1/chat/completions "$(jq -c '. + {stream: true}' <<<"$tpl_req")" | sse_data)" '
    c("streamed arguments"; [.[].choices[0].delta.tool_calls // empty | .[].function.arguments]|join("")|fromjson; $want),
    c("streamed text"; [.[].choices[0].delta.content? // empty]|join(""); $ev3)' \
    --arg ev3 "$ev3" --argjson want "$want_tpl"
check "templates (responses)" "$(post /v1/responses "$(jq -c '. + {input: "echo-events"}' <<<"$tpl_req")")" '
    c("arguments"; .[0].output[]|select(.type=="function_call").arguments|fromjson; $want)' \
    --argjson want "$want_tpl"

check "template miss" "$(post /v1/messages '{"model":"m","messages":[{"role":"user","content":"miss-please, no ids here"}]}')" '
    c("text stays literal"; .[0].content[0].text; "$match:zz([0-9]+)"),
    c("input: misses stay literal, a hit is replaced"; .[0].content[1].input;
      {"event_id":"$match:ev_[0-9a-f-]+","again":"$match:ev_[0-9a-f-]+",
       "other":"$last:nomatch[0-9]","hit":"please"})'
check "template log" "$(cat "$work/tpl.jsonl")" '
    c("no template_misses when all matched"; [.[0:3][]|has("template_misses")]; [false, false, false]),
    c("template_misses lists each missing regex once"; .[3].template_misses;
      ["zz([0-9]+)", "ev_[0-9a-f-]+", "nomatch[0-9]"])'

# ---- body_contains, and parallel connections -------------------------------

# body_contains is a substring of the raw body (JSON text: escapes, spacing and
# all), the one key that tells apart two requests whose system, last user text
# and counts are the same — a fork's first request and its parent's.
cat >"$work/body.json" <<'EOF'
{ "turns": [
    { "match": { "body_contains": "\"directive\":\"child-A\"" }, "drip_ms": 150,
      "reply": { "text": "reply A" } },
    { "match": { "body_contains": "child-B", "system_contains": "sys" }, "drip_ms": 150,
      "reply": { "text": "reply B" } },
    { "match": { "body_contains": "child-C" }, "drip_ms": 150, "reply": { "text": "reply C" } },
    { "match": { "body_contains": "\\u00e9t\\u00e9" }, "reply": { "text": "escaped" } },
    { "reply": { "text": "positional" } }
  ] }
EOF
start_server "$work/body.json" "$work/body.jsonl" body
body_req() { # DIRECTIVE [STREAM] — same system, last user text and counts
    printf '{"model":"m",%s"system":"sys","metadata":{"directive":"%s"},"messages":[{"role":"user","content":"go"}]}' \
        "${2:+\"stream\":true,}" "$1"
}
# Three connections at once, each dripping its reply (~1.5 s): turn selection
# is stateless per request, so each gets its own turn whatever the overlap.
par_pids=()
for who in A B C; do
    { curl -sS --max-time 10 -H 'content-type: application/json' "$base/v1/messages" \
          -d "$(body_req "child-$who" stream)" >"$work/par.$who"
      date +%s.%N >"$work/end.$who"; } &
    par_pids+=($!)
done
wait "${par_pids[@]}"
for who in A B C; do
    expect_eq "body_contains: parallel stream $who got its own turn" \
        "$(sse_data <"$work/par.$who" | jq -sj '[.[] | .delta.text // empty] | join("")')" "reply $who"
done
# By order, not by a time limit: every reply was started (the log's t) before
# the first stream ended, so no connection waited for another.
first_end=$(sort -n "$work"/end.[ABC] | head -1)
expect_eq "body_contains: the three streams overlapped" \
    "$(jq -s --argjson first "$first_end" '[.[0:3][].t] | max < $first' "$work/body.jsonl")" true
expect_eq "body_contains: a quoted JSON fragment matches" \
    "$(post /v1/messages "$(body_req child-A)" | jq -j '.content[0].text')" "reply A"
expect_eq "body_contains: a \\u escape is matched as sent" \
    "$(post /v1/messages '{"model":"m","messages":[{"role":"user","content":"\u00e9t\u00e9"}]}' | jq -j '.content[0].text')" "escaped"
expect_eq "body_contains: the decoded text does not match the escaped form" \
    "$(post /v1/messages '{"model":"m","messages":[{"role":"user","content":"été"}]}' | jq -j '.content[0].text')" "positional"
expect_eq "body_contains: every given key must hold (system differs)" \
    "$(post /v1/messages '{"model":"m","system":"other","metadata":{"d":"child-B"},"messages":[{"role":"user","content":"go"}]}' | jq -j '.content[0].text')" "positional"
expect_eq "body_contains: no substring, positional turn" \
    "$(post /v1/chat/completions "$(body_req child-D)" | jq -j '.choices[0].message.content')" "positional"
check "body_contains log" "$(cat "$work/body.jsonl")" '
    c("turns"; [.[].turn] | sort; [0, 0, 1, 2, 3, 4, 4, 4])'

# ---- scenario validation ---------------------------------------------------

bad_scenario() { # NAME JSON EXPECTED-MESSAGE
    local rc=0
    printf '%s' "$2" >"$work/bad.json"
    "$MOCKLLM_BIN" --scenario "$work/bad.json" --port-file "$work/bad.port" \
        >/dev/null 2>"$work/bad.err" || rc=$?
    expect_eq "rejects $1: exit status" "$rc" 2
    expect_eq "rejects $1: message" "$(cat "$work/bad.err")" "mockllm: scenario $work/bad.json: $3"
}
bad_scenario "a non-boolean sequence" '{"sequence":1,"turns":[{}]}' \
    'top level: "sequence" must be true or false'
bad_scenario "context_window 0" '{"context_window":0,"turns":[{}]}' \
    'top level: "context_window" must be an integer >= 1'
bad_scenario "repeat without sequence" '{"turns":[{"repeat":2}]}' \
    'turns[0]: "repeat" needs "sequence": true at the top level'
bad_scenario "repeat on a match turn" '{"sequence":true,"turns":[{},{"match":{},"repeat":2}]}' \
    'turns[1]: "repeat" only applies to a turn without "match"'
bad_scenario "repeat 0" '{"sequence":true,"turns":[{"repeat":0}]}' \
    'turns[0]: "repeat" must be an integer >= 1'
bad_scenario "a non-boolean no_tools" '{"turns":[{"match":{"no_tools":"yes"}}]}' \
    'turns[0].match: "no_tools" must be true or false'

bad_scenario "a non-string body_contains" '{"turns":[{"match":{"body_contains":1}}]}' \
    'turns[0].match: "body_contains" must be a string'
bad_scenario "an empty body_contains" '{"turns":[{"match":{"body_contains":""}}]}' \
    'turns[0].match: "body_contains" must not be empty'

bad_scenario "an empty template regex" '{"turns":[{"reply":{"text":"$last:"}}]}' \
    'turns[0].reply.text: bad regex "": empty (write $last:REGEX)'
# bad_regex NAME JSON EXPECTED-PREFIX: the regex library's reason follows.
bad_regex() {
    local rc=0 msg want="mockllm: scenario $work/bad.json: $3"
    printf '%s' "$2" >"$work/bad.json"
    "$MOCKLLM_BIN" --scenario "$work/bad.json" --port-file "$work/bad.port" \
        >/dev/null 2>"$work/bad.err" || rc=$?
    expect_eq "rejects $1: exit status" "$rc" 2
    msg=$(cat "$work/bad.err")
    if [[ $msg == "$want"?* ]]; then
        record "rejects $1: message" ok
    else
        record "rejects $1: message" fail "$msg" "$want…"
    fi
}
bad_regex "a bad regex in a tool input" \
    '{"turns":[{},{},{"reply":{"tool_calls":[{"name":"A"},{"name":"B","input":{"x":1}},
      {"name":"C","input":{"event_id":"$match:("}}]}}]}' \
    'turns[2].reply.tool_calls[2].input.event_id: bad regex "(": '
bad_regex "a bad regex nested in arrays" \
    '{"turns":[{"reply":{"tool_calls":[{"name":"A","input":{"a":[1,{"b":["ok","$last:[z-a]"]}]}}]}}]}' \
    'turns[0].reply.tool_calls[0].input.a[1].b[1]: bad regex "[z-a]": '
bad_regex "a bad regex in text" '{"turns":[{"reply":{"text":"$match:a{2,1}"}}]}' \
    'turns[0].reply.text: bad regex "a{2,1}": '

echo "mockllm_smoke: $passed passed, $failed failed"
[[ $failed -eq 0 ]]

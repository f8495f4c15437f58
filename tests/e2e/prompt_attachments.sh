#!/usr/bin/env bash
# A plain prompt's attachments (docs/repl.md): an @file's text reaches the
# request, read as a Read call through the pipeline (so a deny rule keeps a
# file out), @dir/ lists the folder, and a path to an image in the prompt
# becomes an image block of the user message. `loom -p` and the REPL share
# the library's handling; -p is driven here.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj/sub"
cd "$T/proj"
echo "NOTE-CONTENT-42" > notes.txt
echo "SECRET-CONTENT-99" > secret.txt
touch sub/alpha.c sub/beta.c
# A 1x1 PNG.
printf '%s' 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==' \
  | base64 -d > shot.png
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "one"}}, {"reply": {"text": "two"}}, {"reply": {"text": "three"}},
           {"reply": {"text": "four"}}, {"reply": {"text": "five"}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

# Request N of the log, and its last user message's text blocks joined
# (the working-memory block Loom adds left out).
req() { sed -n "${1}p" "$MOCK_LOG"; }
text_of() { req "$1" | jq -r '.body.messages[-1].content | if type=="string" then . else map(select(.type=="text") | .text | select(startswith("<working-memory>") | not)) | join("\n") end'; }

"$LOOM_BIN" -p "summarize @notes.txt please" > "$T/out1" 2> "$T/err1"
t=$(text_of 1)
assert_contains "the @file's content is in the request" "$t" "NOTE-CONTENT-42"
assert_contains "the prompt itself is kept" "$t" "summarize @notes.txt please"
assert_contains "the content is introduced by the file's name" "$t" "Contents of notes.txt:"

"$LOOM_BIN" -p "compare @notes.txt and @secret.txt" --disallowedTools 'Read(./secret.txt)' \
  > "$T/out2" 2> "$T/err2"
t=$(text_of 2)
assert_contains "an allowed file still comes along" "$t" "NOTE-CONTENT-42"
check "a denied file's content is not attached" bash -c "! grep -q SECRET-CONTENT-99 <<< \"\$1\"" _ "$t"
assert_contains "the denial is said in its place" "$t" "(@secret.txt was not included:"

"$LOOM_BIN" -p "what is in @sub/ ?" > "$T/out3" 2> "$T/err3"
t=$(text_of 3)
assert_contains "@dir/ lists the folder" "$t" "Files in sub/:"
assert_contains "the listing names the files" "$t" "alpha.c"

"$LOOM_BIN" -p "look at ./shot.png and tell me" > "$T/out4" 2> "$T/err4"
img=$(req 4 | jq -c '[.body.messages[-1].content[] | select(.type=="image")]')
assert_eq "one image block in the user message" "$(jq length <<< "$img")" "1"
assert_eq "the image's media type" "$(jq -r '.[0].source.media_type' <<< "$img")" "image/png"
assert_eq "the image's bytes" "$(jq -r '.[0].source.data' <<< "$img" | base64 -d | cmp - shot.png && echo same)" "same"
assert_contains "the prompt's text is kept beside the image" "$(text_of 4)" "look at ./shot.png and tell me"
rec=$(grep -h '"role":"user"' "$LOOM_HOME"/projects/*/*.jsonl | grep -c '"type":"image"' || true)
check "the session file keeps the image in the user record" test "$rec" -ge 1

"$LOOM_BIN" -p "no attachments: user@example.com wrote about a.png" > "$T/out5" 2> "$T/err5"
t=$(text_of 5)
assert_eq "a prompt naming no file is sent as typed" "$t" "no attachments: user@example.com wrote about a.png"
assert_eq "and carries no image" "$(req 5 | jq '[.body.messages[-1].content | if type=="string" then empty else .[] | select(.type=="image") end] | length')" "0"
finish

#!/usr/bin/env bash
# Context commands: /compact with instructions summarizes through one
# tool-less model request and records a manual summary; /compact again with
# nothing new is skipped without calling the model; `# text` adds a line to
# ./AGENTS.md that the next request's system prompt carries, without a model
# call; /context shows the partitions and ρ; /memory lists the files;
# /memory edit runs $EDITOR and the next request has the edited memory.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"no_tools": true},
   "reply": {"text": "<summary>1. Primary Request and Intent: answer a question about X.</summary>"}},
  {"match": {"last_user_contains": "first question"}, "reply": {"text": "First answer."}},
  {"match": {"last_user_contains": "second question"}, "reply": {"text": "Second answer."}},
  {"match": {"last_user_contains": "third question"}, "reply": {"text": "Third answer."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
# /memory edit runs it on ./AGENTS.md (the shell splits it into words).
export EDITOR="sed -i s/tabs/spaces/"
repl_start "$T/proj" --model ctx-model
id=$(header_session_id)
wait_prompt

no_tools() { jq -s '[.[] | select((.body.tools // []) | length == 0)] | length' "$MOCK_LOG"; }
system_of_last() {
  jq -rs '.[-1].body.system | if type=="string" then . else map(.text) | join("\n") end' "$MOCK_LOG"
}

type_line "the first question"
wait_screen "the first answer" "First answer."
wait_prompt

type_line "/compact focus on X"
wait_screen "/compact" "Compacted: ~"
wait_prompt
assert_eq "one summarization request (no tools)" "$(no_tools)" "1"
assert_eq "it carries the instructions" \
  "$(jq -s '[.[] | select((.body.tools // []) | length == 0) | .raw_body | contains("focus on X")] | all' "$MOCK_LOG")" "true"
file=$(session_file "$id")
assert_eq "a manual summary record in the session" \
  "$(jq -r 'select(.type=="summary" and .providerData.compactType=="manual") | .type' "$file" | wc -l)" "1"

type_line "/compact"
wait_screen "/compact with nothing new" "nothing new since the last compaction: not compacting again"
wait_prompt
assert_eq "still one summarization request" "$(no_tools)" "1"
assert_eq "still one summary record" \
  "$(jq -r 'select(.type=="summary") | .type' "$file" | wc -l)" "1"

requests=$(wc -l < "$MOCK_LOG")
type_line "# always use tabs"
wait_screen "#" "Remembered in ./AGENTS.md"
check "./AGENTS.md holds the line" grep -qxF -- "- always use tabs" "$T/proj/AGENTS.md"
assert_eq "# is not sent to the model" "$(wc -l < "$MOCK_LOG")" "$requests"

type_line "the second question"
wait_screen "the second answer" "Second answer."
wait_prompt
assert_contains "the next request's system prompt has the memory" "$(system_of_last)" "always use tabs"

type_line "/context"
wait_screen "/context" "Next step"
s=$(screen)
for part in system memory tools history working; do
  check "/context has a $part row" grep -qE "^  $part +[0-9,]+ +[0-9.]+%" <<<"$s"
done
check "/context shows ρ as a percentage" grep -qE '^Context +[0-9,]+ of [0-9,]+ tokens · [0-9.]+%' <<<"$s"
assert_contains "/context lists AGENTS.md" "$s" "$T/proj/AGENTS.md"

type_line "/memory"
wait_screen "/memory" "/memory edit  opens ./AGENTS.md in sed"
check "/memory lists the project file" grep -qE "^  $T/proj/AGENTS.md +project" <<<"$(screen)"

type_line "/memory edit"
wait_screen "/memory edit" "./AGENTS.md reloaded"
check "the editor changed the file" grep -qxF -- "- always use spaces" "$T/proj/AGENTS.md"
type_line "the third question"
wait_screen "the third answer" "Third answer."
wait_prompt
sys=$(system_of_last)
assert_contains "after /memory edit the request has the edited memory" "$sys" "always use spaces"
check "and not the old line" lacks "$sys" "always use tabs"
check "the conversation went on in the same session file" grep -q "the third question" "$file"

type_line "/help"
wait_screen "/help" "/rewind [N]"
s=$(screen)
for c in "/compact [FOCUS]" /context "/memory [edit [N]]" "# text"; do
  assert_contains "/help lists $c" "$s" "$c"
done

type_line "/exit"
assert_eq "/exit leaves with status 0" "$(wait_exit)" "0"
assert_eq "model requests: three prompts and one summary" "$(wc -l < "$MOCK_LOG")" "4"
finish

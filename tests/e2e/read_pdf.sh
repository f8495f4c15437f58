#!/usr/bin/env bash
# Read of a PDF (docs/tools-files.md): its text page by page through
# poppler-utils, as the model gets it; `pages` chooses a range; a PDF of
# more than 10 pages needs one, at most 20 a call; a bad range, `pages` on a
# text file, a damaged PDF and a page past the end are error results the run
# goes on from; without pdftotext on PATH the error says what to install.
source "$(dirname "$0")/_lib.sh"
command -v pdftotext >/dev/null && command -v pdfinfo >/dev/null ||
  { echo "read_pdf: needs poppler-utils (scripts/deps.sh installs it)" >&2; exit 1; }

mkdir -p "$T/proj"
mk() { python3 "$LOOM_SRC/tests/e2e/_make_pdf.py" "$@"; }
mk "$T/proj/short.pdf" "ALPHA-first page" "" "GAMMA (third) page"
long=(); for i in $(seq 1 25); do long+=("LONG-PAGE-$i"); done
mk "$T/proj/long.pdf" "${long[@]}"
printf '%%PDF-1.4\nthis is no PDF at all\n' > "$T/proj/broken.pdf"
printf 'plain text\n' > "$T/proj/notes.txt"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [
    {"id": "p1", "name": "Read", "input": {"file_path": "short.pdf"}},
    {"id": "p2", "name": "Read", "input": {"file_path": "long.pdf"}},
    {"id": "p3", "name": "Read", "input": {"file_path": "long.pdf", "pages": "19-21"}},
    {"id": "p4", "name": "Read", "input": {"file_path": "long.pdf", "pages": "1-21"}},
    {"id": "p5", "name": "Read", "input": {"file_path": "long.pdf", "pages": "5-x"}},
    {"id": "p6", "name": "Read", "input": {"file_path": "notes.txt", "pages": "1"}},
    {"id": "p7", "name": "Read", "input": {"file_path": "broken.pdf"}},
    {"id": "p8", "name": "Read", "input": {"file_path": "short.pdf", "pages": "4-6"}},
    {"id": "p9", "name": "Read", "input": {"file_path": "long.pdf", "pages": "24-30"}}]}},
  {"reply": {"text": "Read them."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "read the pdfs" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
  assert_eq "$provider: the run completed" "$(jq -r .subtype <<<"$json")" "success"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  is_error() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .isError' "$file"; }

  r=$(result p1)
  assert_contains "$provider: a short PDF is read whole, with its page count" "$r" "pages 1-3 of 3"
  assert_contains "$provider:   page 1's text under its heading" "$r" $'--- page 1 ---\nALPHA-first page'
  assert_contains "$provider:   an empty page says it has no text" "$r" $'--- page 2 ---\n(no text on this page'
  assert_contains "$provider:   page 3's text, parentheses and all" "$r" $'--- page 3 ---\nGAMMA (third) page'
  assert_eq "$provider:   it is no error" "$(is_error p1)" "false"
  assert_contains "$provider: 25 pages without a range: an error naming the count" "$(result p2)" "has 25 pages, too many to read at once"
  assert_eq "$provider:   as an error result" "$(is_error p2)" "true"
  r=$(result p3)
  assert_contains "$provider: pages 19-21 of 25" "$r" "pages 19-21 of 25"
  check "$provider:   holds exactly pages 19, 20 and 21" \
    bash -c '[ "$(grep -o "LONG-PAGE-[0-9]*" <<<"$1" | tr "\n" " ")" = "LONG-PAGE-19 LONG-PAGE-20 LONG-PAGE-21 " ]' _ "$r"
  assert_contains "$provider: 21 pages at once are refused" "$(result p4)" "at most 20 pages"
  assert_contains "$provider: a bad range is explained" "$(result p5)" 'got "5-x"'
  assert_contains "$provider: pages on a text file is refused" "$(result p6)" "pages is only for PDF files"
  assert_eq "$provider:   as an error" "$(is_error p6)" "true"
  assert_contains "$provider: a damaged PDF says it could not be read, with poppler's reason" "$(result p7)" "could not be read as a PDF: "
  assert_eq "$provider:   as an error" "$(is_error p7)" "true"
  assert_contains "$provider: a range past the end is explained" "$(result p8)" 'has 3 pages; pages "4-6" starts past its end'
  r=$(result p9)
  assert_contains "$provider: a range running past the end stops at the last page" "$r" "pages 24-25 of 25"
  check "$provider: the model's second request carries the PDF's text" \
    bash -c 'jq -c "select(.turn == 1 or .request_index == 1) // empty" "$1" | grep -q "GAMMA (third) page" || grep -q "GAMMA (third) page" "$1"' _ "$MOCK_LOG"
  assert_eq "$provider: final answer" "$(jq -r .result <<<"$json")" "Read them."
  stop_mock
done

# Without poppler-utils on PATH: an error that says what to install.
start_mock "$T/scenario.json"
use_provider anthropic
mkdir -p "$T/bin"
for tool in jq python3 bash sh env; do ln -sf "$(command -v $tool)" "$T/bin/$tool"; done
json=$(PATH="$T/bin" "$LOOM_BIN" -p "read the pdfs" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "without pdfinfo: the error names poppler-utils" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="p1") | .output' "$file")" "Install poppler-utils"
assert_eq "  and the run still completes" "$(jq -r .subtype <<<"$json")" "success"
finish

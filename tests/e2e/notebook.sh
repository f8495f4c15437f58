#!/usr/bin/env bash
# Notebooks (docs/tools-files.md): Read shows a .ipynb as its cells and
# their outputs (streams, results, errors without terminal escapes, other
# media named); NotebookEdit replaces, inserts and deletes cells by id or
# cell-N and leaves the rest of the notebook as it was — Jupyter's own
# validator (python3-nbformat) accepts what it writes. An unread notebook,
# an unknown cell, an insert without a type are error results the run goes
# on from; offset/limit read the JSON; a broken notebook is explained; a
# deny rule on Edit holds for NotebookEdit.
source "$(dirname "$0")/_lib.sh"
/usr/bin/python3 -c 'import nbformat' 2>/dev/null ||
  { echo "notebook: needs python3-nbformat (scripts/deps.sh installs it)" >&2; exit 1; }

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "nb.ipynb"}}]}},
  {"reply": {"tool_calls": [
    {"id": "e1", "name": "NotebookEdit", "input": {"notebook_path": "nb.ipynb", "cell_id": "load", "new_source": "rows = load_all()\nlen(rows)"}},
    {"id": "e2", "name": "NotebookEdit", "input": {"notebook_path": "nb.ipynb", "cell_id": "load", "edit_mode": "insert", "cell_type": "markdown", "new_source": "## Plot"}},
    {"id": "e3", "name": "NotebookEdit", "input": {"notebook_path": "nb.ipynb", "cell_id": "cell-4", "edit_mode": "delete", "new_source": ""}},
    {"id": "e4", "name": "NotebookEdit", "input": {"notebook_path": "other.ipynb", "cell_id": "load", "new_source": "x = 1"}},
    {"id": "e5", "name": "NotebookEdit", "input": {"notebook_path": "nb.ipynb", "cell_id": "nope", "new_source": "x"}},
    {"id": "e6", "name": "NotebookEdit", "input": {"notebook_path": "nb.ipynb", "edit_mode": "insert", "new_source": "x"}},
    {"id": "r2", "name": "Read", "input": {"file_path": "nb.ipynb", "offset": 1, "limit": 3}},
    {"id": "r3", "name": "Read", "input": {"file_path": "broken.ipynb"}}]}},
  {"reply": {"text": "Notebook edited."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -rf "$T/proj" && mkdir -p "$T/proj"
  python3 "$LOOM_SRC/tests/e2e/_make_notebook.py" "$T/proj/nb.ipynb"
  cp "$T/proj/nb.ipynb" "$T/proj/other.ipynb"
  printf '{"cells": [' > "$T/proj/broken.ipynb"
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "edit the notebook" --permission-mode acceptEdits --cwd "$T/proj" --output-format json)
  assert_eq "$provider: the run completed" "$(jq -r .subtype <<<"$json")" "success"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  is_error() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .isError' "$file"; }

  r=$(result r1)
  assert_contains "$provider: Read names the notebook, its cells and language" "$r" "nb.ipynb: 4 cells, language python."
  assert_contains "$provider:   a code cell with its id and count, then its source" "$r" \
    $'<cell id="load" type="code" execution_count="1">\nrows = load()\nprint(f\'loaded {len(rows)} rows\')\nlen(rows)\n</cell>'
  assert_contains "$provider:   its stream output" "$r" $'<output type="stream">\nloaded 42 rows\n</output>'
  assert_contains "$provider:   its result" "$r" $'<output type="execute_result">\n42\n</output>'
  assert_contains "$provider:   a figure is named, not dumped" "$r" "[image/png output, 96 bytes, not shown]"
  assert_contains "$provider:   an error with its traceback" "$r" "ZeroDivisionError: division by zero"
  check "$provider:   without the traceback's terminal escapes" bash -c '! grep -q $'"'"'\x1b'"'"' <<<"$1"' _ "$r"
  assert_contains "$provider:   a markdown cell" "$r" $'<cell id="intro" type="markdown">\n# Sales\nLoad the data.\n</cell>'
  check "$provider: the model's next request carries the cells" grep -q 'loaded 42 rows' "$MOCK_LOG"

  assert_eq "$provider: replace said what it did" "$(result e1)" "Updated cell load of $T/proj/nb.ipynb."
  assert_contains "$provider: insert names the new cell" "$(result e2)" "Inserted cell "
  assert_eq "$provider: delete by cell-N" "$(result e3)" "Deleted cell fail of $T/proj/nb.ipynb."
  nb=$T/proj/nb.ipynb
  check "$provider: Jupyter's validator accepts the edited notebook" \
    /usr/bin/python3 -c 'import nbformat, sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))' "$nb"
  assert_eq "$provider: the cells, in order" "$(jq -r '[.cells[] | .cell_type] | join(",")' "$nb")" "markdown,code,markdown,code"
  assert_eq "$provider:   the fail cell is gone" "$(jq -r '[.cells[].id] | index("fail")' "$nb")" "null"
  assert_eq "$provider: the replaced cell's source, as lines" "$(jq -c '.cells[1].source' "$nb")" '["rows = load_all()\n","len(rows)"]'
  assert_eq "$provider:   its outputs and count cleared" "$(jq -c '[.cells[1].outputs, .cells[1].execution_count]' "$nb")" '[[],null]'
  assert_eq "$provider:   its metadata kept" "$(jq -c '.cells[1].metadata' "$nb")" '{"tags":["keep"]}'
  check "$provider: the inserted cell has a fresh id and no outputs" \
    jq -e '.cells[2] | (.id | test("^[0-9a-f]{8}$")) and .source == ["## Plot"] and (has("outputs") | not)' "$nb"
  assert_contains "$provider:   the id insert reported is that cell's" "$(result e2)" "$(jq -r '.cells[2].id' "$nb")"
  assert_eq "$provider: another cell's figure is kept" "$(jq -r '.cells[3].outputs[0].data["image/png"] | length' "$nb")" "96"
  assert_eq "$provider: the notebook's metadata is kept" "$(jq -r '.metadata.kernelspec.name' "$nb")" "python3"

  assert_eq "$provider: an unread notebook is refused" "$(result e4)" \
    "File has not been read yet. Read it first before writing to it."
  check "$provider:   and left as it was" cmp -s "$T/proj/other.ipynb" <(python3 "$LOOM_SRC/tests/e2e/_make_notebook.py" /dev/stdout)
  assert_contains "$provider: an unknown cell is explained" "$(result e5)" 'The notebook has no cell "nope" (it has 4 cells'
  assert_eq "$provider:   as an error" "$(is_error e5)" "true"
  assert_contains "$provider: insert needs a cell_type" "$(result e6)" "cell_type is required to insert a cell"
  assert_contains "$provider: offset and limit read the JSON" "$(result r2)" '"cells": ['
  assert_contains "$provider: a broken notebook is explained" "$(result r3)" "broken.ipynb is not a valid notebook: its JSON is broken at line 1"
  assert_eq "$provider:   as an error" "$(is_error r3)" "true"
  assert_eq "$provider: final answer" "$(jq -r .result <<<"$json")" "Notebook edited."
  stop_mock
done

# A deny rule on Edit covers NotebookEdit.
rm -rf "$T/proj" && mkdir -p "$T/proj/.loom"
python3 "$LOOM_SRC/tests/e2e/_make_notebook.py" "$T/proj/nb.ipynb"
echo '{"permissions": {"deny": ["Edit(nb.ipynb)"]}}' > "$T/proj/.loom/settings.json"
cat > "$T/deny.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "nb.ipynb"}}]}},
  {"reply": {"tool_calls": [{"id": "d1", "name": "NotebookEdit", "input": {"notebook_path": "nb.ipynb", "cell_id": "load", "new_source": "x"}}]}},
  {"reply": {"text": "Refused."}}
]}
JSON
start_mock "$T/deny.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "edit" --permission-mode acceptEdits --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "deny Edit(nb.ipynb): NotebookEdit is denied" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="d1") | .output' "$file")" "denied"
check "  and the notebook is unchanged" cmp -s "$T/proj/nb.ipynb" <(python3 "$LOOM_SRC/tests/e2e/_make_notebook.py" /dev/stdout)
finish

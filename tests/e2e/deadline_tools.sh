#!/usr/bin/env bash
# Tools never hang (issue #10, class 14): Read, Grep and Glob refuse or skip
# FIFOs and devices and do not wander into /proc, /sys or /dev; a search
# rooted there finishes; every call has an overall deadline
# (LOOM_TOOL_TIMEOUT_MS) that ends a hanging tool with a clear error; one
# SIGTERM ends a run whose search is stuck, and kills the search engine.
# Every loom run is wrapped in `timeout 60` only as a hang guard: the
# assertions are on outcomes, never on timings.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj/tree/sub"
cd "$T/proj"
mkfifo fifo tree/pipe tree/sub/blocked.txt
echo "needle in a file" > tree/a.txt
echo "another needle" > tree/sub/b.txt
ln -s ../fifo tree/link-to-fifo.txt

# one_call ID TOOL INPUT_JSON — a scenario: the tool call, then an answer.
one_call() {
  cat > "$T/s-$1.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "$1", "name": "$2", "input": $3}]}},
  {"reply": {"text": "DONE $1"}}
]}
JSON
  start_mock "$T/s-$1.json"
  use_provider anthropic
}
# run_loom — loom -p (hang guard only); sets JSON, RC, ERR.
run_loom() {
  set +e
  JSON=$(timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" --permission-mode bypassPermissions \
         --output-format json 2>"$T/err")
  RC=$?
  set -e
  ERR=$(cat "$T/err")
}
result() {
  local file
  file=$(session_file "$(jq -r .session_id <<<"$JSON" 2>/dev/null)")
  [ -n "$file" ] || { echo "(no session)"; return; }
  jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | "\(.isError) \(.output)"' "$file"
}
# expect ID TOOL INPUT WANT — the call finishes, loom exits 0 with the
# answer, and the result contains WANT.
expect() {
  one_call "$1" "$2" "$3"
  run_loom
  assert_eq "$1: loom -p finished ($2 $3)" "$RC" "0"
  assert_eq "$1: the run reached its answer" "$(jq -r .result <<<"$JSON" 2>/dev/null)" "DONE $1"
  local r
  r=$(result "$1")
  case "$4" in
    true|false) assert_eq "$1: is_error" "${r%% *}" "$4" ;;
    *) assert_contains "$1: result" "$r" "$4" ;;
  esac
  LAST_RESULT=$r
}

for engine in rg pcre2; do
  export LOOM_GREP_ENGINE=$engine
  expect "grep_fifo_$engine" Grep '{"pattern": "x", "path": "fifo"}' "true"
  assert_contains "grep_fifo_$engine: says why" "$(result "grep_fifo_$engine")" "not a regular file"
  expect "grep_fifo_abs_$engine" Grep "{\"pattern\": \"x\", \"path\": \"$T/proj/tree/sub/blocked.txt\"}" "not a regular file"
  expect "grep_link_fifo_$engine" Grep '{"pattern": "x", "path": "tree/link-to-fifo.txt"}' "not a regular file"
  expect "grep_dir_fifo_$engine" Grep '{"pattern": "needle", "path": "tree"}' "Found 2 files"
  expect "grep_dir_fifo_content_$engine" Grep '{"pattern": "needle", "path": "tree", "output_mode": "content", "glob": "*.txt"}' "needle in a file"
  expect "grep_count_$engine" Grep '{"pattern": "needle", "output_mode": "count"}' "a.txt:1"
  expect "grep_chardev_$engine" Grep '{"pattern": "x", "path": "/dev/zero"}' "not a regular file"
  expect "grep_proc_$engine" Grep '{"pattern": "zz9-no-such-text-qq", "path": "/proc/self"}' "false"
  expect "grep_sys_$engine" Grep '{"pattern": "zz9-no-such-text-qq", "path": "/sys/kernel", "output_mode": "count"}' "false"
  expect "grep_dev_$engine" Grep '{"pattern": "zz9-no-such-text-qq", "path": "/dev"}' "false"
done
unset LOOM_GREP_ENGINE
# The whole of /proc (kmsg blocks a reader, kcore never ends): it finishes.
expect grep_proc_all Grep '{"pattern": "zz9-no-such-text-qq", "path": "/proc", "output_mode": "files_with_matches"}' "false"
assert_eq "grep_proc_all: a search result" "$LAST_RESULT" "false No matches found"

expect read_fifo Read '{"file_path": "fifo"}' "not a regular file"
expect read_fifo_abs Read "{\"file_path\": \"$T/proj/tree/pipe\"}" "not a regular file"
expect read_link_fifo Read '{"file_path": "tree/link-to-fifo.txt"}' "not a regular file"
expect read_zero Read '{"file_path": "/dev/zero"}' "not a regular file"
expect read_null Read '{"file_path": "/dev/null"}' "not a regular file"
expect read_urandom Read '{"file_path": "/dev/urandom", "limit": 5}' "not a regular file"
expect read_tty Read '{"file_path": "/dev/tty"}' "true"
expect read_kmsg Read '{"file_path": "/proc/kmsg"}' "true"

expect glob_tree Glob '{"pattern": "**/*", "path": "tree"}' "a.txt"
check "glob_tree: the FIFOs are not listed" bash -c "! grep -q -e pipe -e blocked -e link-to-fifo <<<'$(result glob_tree)'"
expect glob_txt Glob '{"pattern": "tree/**/*.txt"}' "b.txt"
check "glob_txt: no FIFO named *.txt" bash -c "! grep -q -e blocked -e link-to-fifo <<<'$(result glob_txt)'"
expect glob_dev Glob '{"pattern": "*", "path": "/dev"}' "false"
expect glob_proc Glob '{"pattern": "self/*", "path": "/proc"}' "false"

# The per-call deadline: a command that hangs (on a FIFO, or asleep), a
# search engine that hangs, all ended with a clear error; the run goes on.
export LOOM_TOOL_TIMEOUT_MS=1500
expect deadline_bash_fifo Bash '{"command": "cat fifo", "timeout": 600000}' "did not finish within its deadline of 1500 ms"
expect deadline_bash_sleep Bash '{"command": "sleep 120", "timeout": 600000}' "LOOM_TOOL_TIMEOUT_MS"
mkdir -p "$T/fakebin"
cat > "$T/fakebin/rg" <<SH
#!/usr/bin/env bash
echo \$\$ > "$T/rg.pid"
exec sleep 300
SH
chmod +x "$T/fakebin/rg"
PATH="$T/fakebin:$PATH" expect deadline_rg Grep '{"pattern": "needle", "path": "tree"}' "did not finish within its deadline"
rgpid=$(cat "$T/rg.pid")
check "deadline_rg: the hung engine was killed" bash -c "! kill -0 $rgpid 2>/dev/null"
unset LOOM_TOOL_TIMEOUT_MS

# One SIGTERM to loom while the search engine hangs ends the run, and the
# engine with it.
one_call sigterm_rg Grep '{"pattern": "needle", "path": "tree"}'
rm -f "$T/rg.pid"
set +e
PATH="$T/fakebin:$PATH" timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" --output-format json \
  > "$T/sig.json" 2>"$T/sig.err" &
lpid=$!
for _ in $(seq 1 500); do [ -s "$T/rg.pid" ] && break; sleep 0.05; done
kill -TERM "$(pgrep -P $lpid)" 2>/dev/null || kill -TERM $lpid
wait $lpid
RC=$?
set -e
check "sigterm: the engine had started" test -s "$T/rg.pid"
check "sigterm: loom exited on one SIGTERM, not by the hang guard ($RC)" test "$RC" -ne 124
rgpid=$(cat "$T/rg.pid" 2>/dev/null || echo 999999)
check "sigterm: the engine was killed" bash -c "! kill -0 $rgpid 2>/dev/null"
assert_eq "sigterm: the model was not asked again" "$(wc -l < "$MOCK_LOG" | tr -d ' ')" "1"

finish

#!/usr/bin/env bash
# repl_lib.sh — drives the interactive loom in tmux for the repl_*.sh
# scenarios, which source it. Run on its own it checks the REPL's life
# cycle: the header, Ctrl-C clearing a line, a backslash-continued line
# reaching the model as one message, Ctrl-D, and the private history file.
#
# Each scenario gets a private tmux server (tmux -L loom-PID) that is killed
# at exit; the screen is polled, never waited on with a fixed sleep.
source "$(dirname "${BASH_SOURCE[0]}")/_lib.sh"

if ! command -v tmux >/dev/null; then
  echo "$(basename "$0" .sh): SKIP: tmux is not installed (scripts/deps.sh installs it)"
  exit 0
fi

TMUX_SOCKET="loom-$$"
tm() { tmux -L "$TMUX_SOCKET" "$@"; }
repl_cleanup() {
  tm kill-server >/dev/null 2>&1 || true
  cleanup
}
trap repl_cleanup EXIT

# repl_launch DIR [LOOM ARGS...] — loom --cwd DIR in a 120x40 terminal
# (REPL_SIZE=WxH for another), not waiting for anything: what comes before
# the header (the trust question) is the caller's to wait for. Its exit
# status lands in $T/repl.status. REPL_DELAY=S holds loom back S seconds,
# so a pipe-pane the caller sets up sees its very first byte.
repl_launch() {
  local dir=$1; shift
  rm -f "$T/repl.status"
  local cmd size=${REPL_SIZE:-120x40}
  cmd=$(printf '%q ' env LANG=C.UTF-8 TERM=xterm-256color LOOM_HOME="$LOOM_HOME" HOME="$HOME" \
    ANTHROPIC_BASE_URL="${ANTHROPIC_BASE_URL:-}" ANTHROPIC_API_KEY="${ANTHROPIC_API_KEY:-}" \
    OPENAI_BASE_URL="${OPENAI_BASE_URL:-}" OPENAI_API_KEY="${OPENAI_API_KEY:-}" \
    LOOM_RETRY_BASE_MS="$LOOM_RETRY_BASE_MS" no_proxy='*' NO_PROXY='*' NO_COLOR="${NO_COLOR:-}" \
    ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
    "$LOOM_BIN" --cwd "$dir" "$@")
  [ -n "${REPL_DELAY:-}" ] && cmd="sleep $REPL_DELAY; $cmd"
  tm kill-server >/dev/null 2>&1 || true
  tm new-session -d -s repl -x "${size%x*}" -y "${size#*x}" \
    "$cmd; echo \$? > $(printf %q "$T/repl.status")"
}

# repl_start DIR [LOOM ARGS...] — repl_launch, then waits for the header.
repl_start() {
  repl_launch "$@"
  wait_screen "the header" "loom 0.1.0" 10
}

# screen_all — the whole pane, scrollback included, wrapped lines joined.
screen_all() { tm capture-pane -p -J -S -2000 -t repl 2>/dev/null || true; }
# screen — screen_all without the footer under the prompt (docs/repl.md:
# "  ◦ default · model · …", its badge first), so the prompt stays the last
# line the scenarios look at.
screen() {
  screen_all | awk '{ l[NR] = $0 } END {
    n = NR; while (n > 0 && l[n] ~ /^[[:space:]]*$/) n--
    if (n > 0 && l[n] ~ /^  (◦|⏵⏵|⏸|⚠) [A-Za-z]/) n--
    for (i = 1; i <= n; i++) print l[i] }'
}
# footer — the footer line under the prompt ("" when none).
footer() { screen_all | grep -v '^[[:space:]]*$' | tail -n 1 | grep -E '^  (◦|⏵⏵|⏸|⚠) ' || true; }

# type TEXT — types literally, then Enter.
type_line() {
  tm send-keys -t repl -l "$1"
  tm send-keys -t repl Enter
}
keys() { tm send-keys -t repl "$@"; }
# answer KEYS... — a person answering a question just shown: a key counts
# only after the keyboard has been quiet for a moment (docs/repl.md), so
# the answer comes after a pause, as a person's would.
answer() { sleep 0.8; tm send-keys -t repl "$@"; }

# wait_until DESCRIPTION TIMEOUT_S COMMAND... — polls COMMAND every 0.1 s.
wait_until() {
  local what=$1 limit=$2; shift 2
  local end=$((SECONDS + limit))
  while ! "$@"; do
    if [ "$SECONDS" -ge "$end" ]; then
      not_ok "timed out after ${limit}s waiting for $what"
      echo "--- screen ---" >&2; screen >&2; echo "--------------" >&2
      return 1
    fi
    sleep 0.1
  done
  return 0
}

screen_has() { screen | grep -qF -- "$1"; }
# lacks TEXT PART — TEXT does not contain PART.
lacks() { [[ "$1" != *"$2"* ]]; }
# wait_screen DESCRIPTION TEXT [TIMEOUT] — waits for TEXT on screen.
wait_screen() { wait_until "$1" "${3:-10}" screen_has "$2"; }

# prompt_ready — the last non-empty line is an empty prompt.
prompt_ready() { [ "$(screen | grep -v '^[[:space:]]*$' | tail -n 1 | sed 's/[[:space:]]*$//')" == "›" ]; }
wait_prompt() { wait_until "${1:-the prompt}" "${2:-10}" prompt_ready; }

# wait_exit [TIMEOUT] — waits for loom to end; prints its exit status.
wait_exit() {
  wait_until "loom to exit" "${1:-10}" test -s "$T/repl.status" || return 1
  cat "$T/repl.status"
}

# The session file of the id in the header.
header_session_id() { screen | grep -m1 '^loom 0.1.0' | awk -F ' · ' '{print $NF}' | tr -d '[:space:]'; }

# ---- run on its own: the life cycle -------------------------------------------
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  mkdir -p "$T/proj"
  cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Got both lines."}}]}
JSON
  start_mock "$T/scenario.json"
  use_provider anthropic
  repl_start "$T/proj" --model repl-test-model
  header=$(screen | grep -m1 '^loom 0.1.0')
  assert_contains "header names the model" "$header" "repl-test-model"
  assert_contains "header names the provider" "$header" "anthropic"
  assert_contains "header names the directory" "$header" "$T/proj"
  id=$(header_session_id)
  check "header ends with the session id" test -n "$(session_file "$id")"
  wait_prompt

  # Ctrl-C at the prompt drops what was typed.
  tm send-keys -t repl -l "half typed"
  wait_screen "typed text" "› half typed"
  keys C-c
  wait_prompt "a fresh prompt after Ctrl-C"
  check "nothing was sent" test ! -s "$MOCK_LOG"

  # A trailing backslash continues the message on the next line.
  type_line 'first line \'
  wait_screen "the continuation prompt" "… "
  type_line 'second line'
  wait_screen "the answer" "Got both lines."
  wait_prompt
  assert_eq "one request" "$(wc -l < "$MOCK_LOG")" "1"
  assert_eq "both lines in one message" \
    "$(jq -r '.body.messages[-1].content | if type=="string" then . else map(.text | select(startswith("<working-memory>") | not)) | join("") end' "$MOCK_LOG")" \
    "first line 
second line"

  # Ctrl-D on an empty line ends the REPL.
  keys C-d
  assert_eq "Ctrl-D exits with status 0" "$(wait_exit)" "0"
  check "history is saved (libedit encodes spaces)" grep -q "second.040line" "$LOOM_HOME/history"
  assert_eq "history is private" "$(stat -c %a "$LOOM_HOME/history")" "600"
  finish
fi

# _rules_lib.sh — helpers for the rules_*.sh scenarios (sourced after _lib.sh):
# a scripted model that asks for one Bash call per turn, and a fake `git`
# on PATH that records what it was asked to run.

# fake_git — puts $T/bin/git first on PATH; every run appends its arguments
# to $T/git.log, so "did the denied command run?" is a file check.
fake_git() {
  mkdir -p "$T/bin"
  cat > "$T/bin/git" <<SH
#!/bin/sh
echo "\$*" >> "$T/git.log"
SH
  chmod +x "$T/bin/git"
  export PATH="$T/bin:$PATH"
  : > "$T/git.log"
}

# bash_calls_scenario FILE CMD... — a scenario in sequence mode: one Bash
# tool call per turn (ids c0, c1, …), then a final text "done".
bash_calls_scenario() {
  local file=$1; shift
  printf '%s\n' "$@" | jq -R . | jq -s '
    {sequence: true,
     turns: ([to_entries[] | {reply: {tool_calls: [{id: ("c" + (.key|tostring)),
                                                     name: "Bash",
                                                     input: {command: .value}}]}}]
             + [{reply: {text: "done"}}])}' > "$file"
}

# run_calls MODE DIR — runs loom -p against the current mock in DIR with
# --permission-mode MODE; sets SESSION_FILE.
run_calls() {
  local mode=$1 dir=$2 json id
  json=$("$LOOM_BIN" -p "run the commands" --cwd "$dir" --permission-mode "$mode" \
         --output-format json) || true
  id=$(jq -r .session_id <<<"$json")
  SESSION_FILE=$(session_file "$id")
}

# call_result ID — the tool result text of call ID in SESSION_FILE.
call_result() {
  jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' \
    "$SESSION_FILE"
}

# fake_progs NAME… — like fake_git for several programs at once; each run
# appends "NAME ARGS" to $T/ran.log.
fake_progs() {
  mkdir -p "$T/bin"
  local name
  for name in "$@"; do
    cat > "$T/bin/$name" <<SH
#!/bin/sh
echo "$name \$*" >> "$T/ran.log"
SH
    chmod +x "$T/bin/$name"
  done
  case ":$PATH:" in *":$T/bin:"*) ;; *) export PATH="$T/bin:$PATH" ;; esac
  : > "$T/ran.log"
}

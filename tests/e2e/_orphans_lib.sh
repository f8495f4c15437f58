# _orphans_lib.sh — shared by the sandbox_orphans*.sh scenarios (sourced
# after _lib.sh). Every sleeper a scenario starts carries MARK in its argv
# (`sleep ${MARK}NN`), a number unique to this run, so other processes on
# the machine are never counted or touched; the exit trap kills what is
# left of them by pid, so a failing run leaves no sleeper behind.
#
# orphans_init DIGIT — sets MARK (DIGIT tells the scenarios apart).
orphans_init() {
  MARK="$1$(printf '%04d' $((RANDOM % 10000)))$$"
  trap 'kill_marked; cleanup' EXIT
}
leftover() { pgrep -f "sleep ${MARK}" || true; }
kill_marked() {
  local p
  for p in $(leftover); do kill -9 "$p" 2>/dev/null || true; done
}

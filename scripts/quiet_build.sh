#!/usr/bin/env bash
# quiet_build.sh BUILD_DIR JOBS TARGET... — the build `make demo` shows a
# newcomer: one line per stage (configure, build) instead of hundreds of
# make lines. On a terminal the build line counts its percentage in place;
# elsewhere (a pipe, a log) each stage prints one line when it ends. What a
# stage printed is kept in BUILD_DIR/quiet-build-<stage>.log; when a stage
# fails, everything it printed except the progress lines ("[ 42%] Building
# C object …", "Built target …") is shown, so an error is read in full,
# with the command that failed, and the exit status is the stage's.
set -uo pipefail
build=${1:?usage: quiet_build.sh BUILD_DIR JOBS TARGET...}
jobs=${2:?usage: quiet_build.sh BUILD_DIR JOBS TARGET...}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build"
tty=false
[ -t 1 ] && tty=true

# The progress lines of CMake's Makefile generator (and Ninja's [n/m]).
progress_re='^(\[ *[0-9]+%\] (Building|Linking|Built target|Generating)|\[[0-9]+/[0-9]+\] |Consolidate compiler generated dependencies|Scanning dependencies of target)'

# stage NAME LABEL COMMAND... — runs COMMAND quietly as described above.
stage() {
  local name=$1 label=$2; shift 2
  local log="$build/quiet-build-$name.log" start=$SECONDS status
  if $tty; then
    printf '%s …' "$label"
    "$@" 2>&1 | tee "$log" | while IFS= read -r line; do
      if [[ $line =~ ^\[\ *([0-9]+)%\] ]]; then
        printf '\r\033[K%s … %s%%' "$label" "${BASH_REMATCH[1]}"
      fi
    done
    status=${PIPESTATUS[0]}
    printf '\r\033[K'
  else
    "$@" >"$log" 2>&1
    status=$?
  fi
  if [ "$status" -ne 0 ]; then
    echo "$label … failed (exit status $status); its output without the progress lines:"
    grep -vE "$progress_re" "$log"
    echo "(the whole output: $log)"
    exit "$status"
  fi
  echo "$label … done ($((SECONDS - start)) s)"
}

# A new build folder is configured with the default type, as `make all`
# gives it; an existing one keeps its type (a Debug one stays Debug), and
# cmake --build configures it again by itself when a CMakeLists.txt changed.
if [ ! -f "$build/CMakeCache.txt" ]; then
  stage configure "configure ($(basename "$build")/, cmake)" \
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
stage build "build $* (-j $jobs)" cmake --build "$build" -j "$jobs" --target "$@"

#!/usr/bin/env bash
# make install into a staging root (DESTDIR) with PREFIX=/usr, as a packager
# would: the installed loom runs (--version, a -p run against mockllm); the
# manual page renders with man (also as `man loom` through MANPATH) without a
# warning, describes every long option and subcommand `loom --help` lists,
# and carries loom's version; pkg-config finds loom.pc, which names /usr and
# not the staging root; a small C program written against loom.h compiles
# and links with pkg-config's flags and runs an agent against mockllm
# through the installed libloom.so; the library has its SONAME and exports
# exactly the functions the headers declare; make uninstall removes every
# file. The build folder is LOOM_BIN's (the ASan build under test-asan); a
# real install's install_manifest.txt there is kept as it was.
source "$(dirname "$0")/_lib.sh"

build=$(cd "$(dirname "$LOOM_BIN")" && pwd)
root="$T/root"
# Called from make test through ctest: not the outer make's job server.
unset MAKEFLAGS MAKELEVEL MFLAGS
manifest="$build/install_manifest.txt"
[ -f "$manifest" ] && cp "$manifest" "$T/manifest.saved"
restore_manifest() {
  if [ -f "$T/manifest.saved" ]; then cp "$T/manifest.saved" "$manifest"; else rm -f "$manifest"; fi
}
trap 'restore_manifest; cleanup' EXIT

sanitized=false
grep -q '^LOOM_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && sanitized=true

if make -C "$LOOM_SRC" --no-print-directory install BUILD="$build" JOBS=2 \
     DESTDIR="$root" PREFIX=/usr >"$T/install.out" 2>&1; then
  ok "make install DESTDIR=… PREFIX=/usr succeeds"
else
  not_ok "make install failed: $(tail -n 30 "$T/install.out")"
  finish
  exit 1
fi
usr="$root/usr"
check "bin/loom is installed, executable" test -x "$usr/bin/loom"
check "bin/loom-serve (what loom serve runs) is installed beside it" test -x "$usr/bin/loom-serve"
check "bin/loom-mcp-server (what loom mcp serve runs) is installed beside it" test -x "$usr/bin/loom-mcp-server"
check "bin/loom-acp (what loom acp runs) is installed beside it" test -x "$usr/bin/loom-acp"
check "lib/libloom.so.0.1.0 is installed" test -f "$usr/lib/libloom.so.0.1.0"
assert_eq "libloom.so.0 (the SONAME) links to it" "$(readlink "$usr/lib/libloom.so.0")" "libloom.so.0.1.0"
assert_eq "libloom.so (the name -lloom finds) links to the SONAME" "$(readlink "$usr/lib/libloom.so")" "libloom.so.0"
check "include/loom.h is installed" test -f "$usr/include/loom.h"
check "include/loom_protocol.h is installed (loom.h includes it)" test -f "$usr/include/loom_protocol.h"
check "lib/pkgconfig/loom.pc is installed" test -f "$usr/lib/pkgconfig/loom.pc"
check "share/man/man1/loom.1 is installed" test -f "$usr/share/man/man1/loom.1"
assert_eq "nothing lands outside DESTDIR/PREFIX" "$(ls "$root")" "usr"

# ---- the installed program ----------------------------------------------------
version=$("$LOOM_BIN" --version)
assert_eq "the installed loom --version is the build's" "$("$usr/bin/loom" --version)" "$version"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"last_user_contains": "FROM-CLI"}, "reply": {"text": "The installed loom answers."}},
  {"match": {"last_user_contains": "FROM-LIBRARY"}, "reply": {"text": "The library answers."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
mkdir -p "$T/proj"
out=$("$usr/bin/loom" -p "FROM-CLI say something" --cwd "$T/proj" 2>"$T/cli.err") || true
assert_eq "the installed loom runs a -p prompt against the model" "$out" "The installed loom answers."

# ---- the manual page ------------------------------------------------------------
page="$usr/share/man/man1/loom.1"
if command -v man >/dev/null; then
  MANWIDTH=100 man --warnings -l "$page" >"$T/man.txt" 2>"$T/man.err" || true
  MANPATH="$usr/share/man" MANWIDTH=100 man loom >"$T/man2.txt" 2>/dev/null || true
  assert_contains "man loom finds the installed page through MANPATH" "$(cat "$T/man2.txt")" "SYNOPSIS"
else
  groff -man -Tutf8 -ww "$page" >"$T/man.txt" 2>"$T/man.err" || true
fi
rendered=$(cat "$T/man.txt")
assert_contains "the page renders its NAME section" "$rendered" "NAME"
assert_contains "the page renders the options" "$rendered" "OPTIONS"
assert_contains "the page renders the environment" "$rendered" "LOOM_HOME"
assert_eq "the page renders without a warning" "$(cat "$T/man.err")" ""
# The roff source with its escapes undone: \- is a hyphen, \fB… a font.
source_text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page")
help=$("$usr/bin/loom" --help)
missing=
for flag in $(grep -oE -- '--[a-zA-Z][a-zA-Z-]*' <<<"$help" | sort -u); do
  grep -qF -- "$flag" <<<"$source_text" || missing+=" $flag"
done
assert_eq "every long option of loom --help is in the manual page" "$missing" ""
missing=
for sub in $(grep -oE '^ *(usage: +)?loom [a-z]+' <<<"$help" | awk '{print $NF}' | sort -u); do
  grep -qE "^\.B(R)? \"?loom $sub" "$page" || missing+=" $sub"
done
assert_eq "every subcommand of loom --help has an entry in the manual page" "$missing" ""
assert_contains "the page carries loom's version" "$(grep '^\.TH' "$page")" "\"$version\""

# ---- pkg-config and the library ----------------------------------------------------
export PKG_CONFIG_PATH="$usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
assert_eq "pkg-config finds loom at the installed version" "$(pkg-config --modversion loom)" "${version#loom }"
assert_eq "loom.pc names the prefix, not the staging root" \
  "$(PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=prefix loom)" "/usr"
assert_contains "pkg-config's flags point into the staged tree" "$(pkg-config --cflags loom)" "-I$usr/include"
lib="$usr/lib/libloom.so.0.1.0"
assert_eq "the library's SONAME is libloom.so.0" \
  "$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" "libloom.so.0"
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u)
declared=$(grep -ohE '\bloom_[a-z0-9_]+\(' "$usr/include/loom.h" "$usr/include/loom_protocol.h" \
  | tr -d '(' | sort -u)
assert_eq "libloom.so exports exactly the functions loom.h and loom_protocol.h declare" \
  "$(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')" ""

cat > "$T/app.c" <<'C'
/* app.c — a program of a libloom user: one run against the model. */
#include <loom.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    loom_status st;
    printf("version %s\n", loom_version());
    loom_config *cfg = loom_config_new();
    if (loom_config_set(cfg, "provider", "anthropic", &st) != 0) {
        fprintf(stderr, "config: %s\n", st.message);
        return 1;
    }
    loom_agent *agent = loom_agent_new(cfg, &st);
    loom_session *session = agent ? loom_session_new(agent, &st) : NULL;
    loom_run *run = session ? loom_run_start(session, "FROM-LIBRARY hello", NULL, &st) : NULL;
    if (!run) {
        fprintf(stderr, "start: %s\n", st.message);
        return 1;
    }
    loom_run_state state = loom_run_wait(run);
    printf("state %s\n", loom_run_state_name(state));
    printf("result %s\n", loom_run_result_json(run));
    loom_run_free(run);
    loom_session_free(session);
    loom_agent_free(agent);
    loom_config_free(cfg);
    return state == LOOM_RUN_COMPLETED ? 0 : 1;
}
C
san=()
$sanitized && san=(-fsanitize=address,undefined)
# shellcheck disable=SC2046
if cc -std=c17 -Wall -Wextra -Werror -pedantic "${san[@]}" "$T/app.c" -o "$T/app" \
     $(pkg-config --cflags --libs loom) 2>"$T/cc.err"; then
  ok "a program using loom.h compiles and links with pkg-config --cflags --libs loom"
else
  not_ok "the program did not build: $(cat "$T/cc.err")"
fi
assert_contains "the program finds the installed libloom.so.0" \
  "$(LD_LIBRARY_PATH="$usr/lib" ldd "$T/app" 2>&1 | grep libloom)" "$usr/lib/libloom.so.0"
app_out=$(cd "$T/proj" && LD_LIBRARY_PATH="$usr/lib" "$T/app" 2>"$T/app.err") || true
assert_contains "the program reports the library's version" "$app_out" "version ${version#loom }"
assert_contains "the program's run completes" "$app_out" "state completed"
assert_contains "the program's run gets the model's answer" "$app_out" "The library answers."
check "the program ran without stderr output" test ! -s "$T/app.err"

# ---- make uninstall -------------------------------------------------------------------
if make -C "$LOOM_SRC" --no-print-directory uninstall BUILD="$build" DESTDIR="$root" >"$T/uninstall.out" 2>&1; then
  ok "make uninstall succeeds"
else
  not_ok "make uninstall failed: $(cat "$T/uninstall.out")"
fi
assert_eq "make uninstall leaves no file behind" "$(find "$root" ! -type d | head -n 5)" ""
finish

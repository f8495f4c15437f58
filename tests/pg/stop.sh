#!/usr/bin/env bash
# stop.sh DIR — stops the server tests/pg/start.sh DIR started (immediate
# mode: a test server's data is thrown away) and leaves DIR for the caller
# to remove. Nothing to do when none runs there; never fails.
set -uo pipefail
dir=${1:?usage: stop.sh DIR}
pgbin=${LOOM_PG_BIN:-/usr/lib/postgresql/15/bin}
[ -f "$dir/data/postmaster.pid" ] || exit 0
as=()
[ "$(id -u)" -eq 0 ] && as=(runuser -u postgres --)
"${as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop > /dev/null 2>&1 || true
exit 0

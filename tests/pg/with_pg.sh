#!/usr/bin/env bash
# with_pg.sh CMD [ARGS…] — runs CMD with a PostgreSQL server of its own
# (tests/pg/start.sh in a fresh folder under /tmp) and LOOM_TEST_PG_URL set
# to its URL; stops the server and removes the folder afterwards, whatever
# CMD did (and on a signal), and exits with CMD's status. How ctest runs
# unit.test_server_store_pg.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/loom-pg.XXXXXX)
done_pg() { bash "$here/stop.sh" "$dir"; rm -rf "$dir"; }
trap done_pg EXIT
trap 'exit 130' INT TERM
url=$(bash "$here/start.sh" "$dir") || exit 1
LOOM_TEST_PG_URL=$url "$@"

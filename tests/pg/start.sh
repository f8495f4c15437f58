#!/usr/bin/env bash
# start.sh DIR — a throwaway PostgreSQL 15 server (Debian's packages) for the
# tests of the PostgreSQL store: initdb into DIR/data with trust
# authentication and a superuser named loom, a server that listens on no
# TCP address at all, only on a Unix socket in DIR (nothing else on the
# machine can reach it, and two instances never fight over a port), and a
# database named loomtest. Prints the connection URL on stdout:
#   postgresql://loom@/loomtest?host=DIR
# Stop it with tests/pg/stop.sh DIR (tests/pg/with_pg.sh does both).
#
# Why a second user: PostgreSQL refuses to run as root, so as root the
# server runs as the postgres user the Debian package made (DIR is given to
# it); as anyone else it runs as that user. DIR must be reachable by that
# user (a folder of its own under /tmp, not inside a 0700 one) and short
# enough for a socket path (under ~90 bytes).
#
# Speed over durability: fsync is off (a test server's data dies with the
# test; a killed loom-serve is still a killed client, its commits are in
# the server's memory, which is what the crash tests need).
set -euo pipefail
dir=${1:?usage: start.sh DIR}
pgbin=${LOOM_PG_BIN:-/usr/lib/postgresql/15/bin}
if ! [ -x "$pgbin/initdb" ] || ! [ -x "$pgbin/pg_ctl" ]; then
  echo "start.sh: no PostgreSQL server in $pgbin (install the Debian package postgresql: scripts/deps.sh)" >&2
  exit 1
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
if [ ${#dir} -gt 90 ]; then
  echo "start.sh: $dir is too long for a Unix socket path; use a shorter folder" >&2
  exit 1
fi
as=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "start.sh: running as root and there is no postgres user to run the server as" >&2; exit 1; }
  chown postgres: "$dir"
  as=(runuser -u postgres --)
fi
if ! "${as[@]}" "$pgbin/initdb" -D "$dir/data" -U loom -A trust -E UTF8 --locale=C.UTF-8 \
       --no-sync > "$dir/initdb.log" 2>&1; then
  echo "start.sh: initdb into $dir/data failed:" >&2
  tail -n 20 "$dir/initdb.log" >&2
  exit 1
fi
cat >> "$dir/data/postgresql.conf" <<CONF
# tests/pg/start.sh
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = off
full_page_writes = off
shared_buffers = 16MB
max_connections = 100
CONF
if ! "${as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start > /dev/null; then
  echo "start.sh: the server did not start:" >&2
  tail -n 20 "$dir/server.log" >&2
  exit 1
fi
if ! "$pgbin/createdb" -h "$dir" -U loom loomtest 2> "$dir/createdb.log"; then
  echo "start.sh: createdb loomtest failed: $(cat "$dir/createdb.log")" >&2
  "${as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate stop > /dev/null 2>&1 || true
  exit 1
fi
echo "postgresql://loom@/loomtest?host=$dir"

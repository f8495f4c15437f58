# _store_lib.sh — which store the server scenarios run loom-serve on
# (sourced after _lib.sh, by _serve_lib.sh and the scenarios that start
# loom-serve themselves).
#
# By default SQLite, a file in the scenario's folder. With
# LOOM_TEST_STORE=postgres (how ctest runs e2e.pg.serve_*: the same
# scenarios, unchanged, on the PostgreSQL store) a PostgreSQL server of
# the scenario's own, started on first use (tests/pg/start.sh, in a folder
# of its own under /tmp: the server runs as another user, who cannot enter
# the scenario's 0700 folder) and kept across restarts of loom-serve, so a
# restart finds the same store. The scenario's EXIT trap calls
# test_store_stop after stopping loom-serve.
#
# test_store_use PATH — sets TEST_STORE_SPEC, the --store value: sqlite:PATH,
# or the PostgreSQL URL. Threading: none (bash).

TEST_STORE_SPEC=
TEST_STORE_PG_DIR=
TEST_STORE_PG_URL=

test_store_use() {
  case "${LOOM_TEST_STORE:-sqlite}" in
    sqlite) TEST_STORE_SPEC="sqlite:$1" ;;
    postgres)
      if [ -z "$TEST_STORE_PG_URL" ]; then
        TEST_STORE_PG_DIR=$(mktemp -d /tmp/loom-pg.XXXXXX)
        TEST_STORE_PG_URL=$(bash "$LOOM_SRC/tests/pg/start.sh" "$TEST_STORE_PG_DIR") || {
          echo "the PostgreSQL server for the store did not start" >&2
          exit 1
        }
      fi
      TEST_STORE_SPEC=$TEST_STORE_PG_URL ;;
    *) echo "LOOM_TEST_STORE=$LOOM_TEST_STORE: not a store (sqlite or postgres)" >&2; exit 1 ;;
  esac
}

test_store_stop() {
  [ -n "$TEST_STORE_PG_DIR" ] || return 0
  bash "$LOOM_SRC/tests/pg/stop.sh" "$TEST_STORE_PG_DIR"
  rm -rf "$TEST_STORE_PG_DIR"
  TEST_STORE_PG_DIR=
  TEST_STORE_PG_URL=
}

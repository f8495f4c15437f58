/* store.c — store_open: reads a --store value and opens the store it names:
 * "sqlite:PATH" or a bare path (SQLite), "postgresql://…" or
 * "postgres://…" (PostgreSQL, the URL as libpq reads it). A "postgres:"
 * value of another form is refused rather than taken as a file called
 * "postgres:…", and without echoing the value: a connection string may
 * hold a password. No state; any thread. */
#include "surfaces/server/store/store.h"

#include <string.h>

store *store_open(const char *spec, srv_error *err)
{
    if (!spec || !*spec) {
        srv_fail(err, LOOM_ERR_CONFIG, "store: no --store value given");
        return NULL;
    }
    if (strncmp(spec, "sqlite:", 7) == 0) {
        if (!spec[7]) {
            srv_fail(err, LOOM_ERR_CONFIG, "store %s: no path after sqlite:", spec);
            return NULL;
        }
        return store_sqlite_open(spec + 7, err);
    }
    if (strncmp(spec, "postgres://", 11) == 0 || strncmp(spec, "postgresql://", 13) == 0)
        return store_pg_open(spec, err);
    if (strncmp(spec, "postgres:", 9) == 0 || strncmp(spec, "postgresql:", 11) == 0) {
        srv_fail(err, LOOM_ERR_CONFIG,
                 "store: a PostgreSQL store is a URL, postgresql://USER@HOST/DATABASE "
                 "(or postgresql:///DATABASE?host=SOCKET_DIR)");
        return NULL;
    }
    return store_sqlite_open(spec, err);
}

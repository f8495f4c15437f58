/* store.c — store_open: reads a --store value and opens the store it names.
 * Only SQLite today ("sqlite:PATH" or a bare path); "postgres:" is named so
 * the refusal says it is not built yet rather than making a file called
 * "postgres:…" (and without echoing the value: a connection string may
 * hold a password). No state; any thread. */
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
    if (strncmp(spec, "postgres:", 9) == 0 || strncmp(spec, "postgresql:", 11) == 0) {
        srv_fail(err, LOOM_ERR_CONFIG,
                 "store: PostgreSQL is not supported yet; use sqlite:PATH");
        return NULL;
    }
    return store_sqlite_open(spec, err);
}

/* fuzz_server_pg_notice.c — the PostgreSQL store's reading of a
 * notification (store_pg_notice_parse, store_pg_listen.c) on arbitrary
 * bytes: any session of the database may NOTIFY on the channels a worker
 * LISTENs to, with any payload. The first byte picks the channel
 * (loom_events, loom_controls, loom_runs, or another), the rest is the
 * payload (up to its first NUL, as PostgreSQL's payloads are text).
 * Accepted or not is fine; when accepted, the run id is non-empty, has no
 * space and fits its buffer, an event's seq is positive and the state
 * points into the payload. A crash or a read past the payload is not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/store/store_pg_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const channels[] = {"loom_events", "loom_controls", "loom_runs", "other"};
    if (size < 1)
        return 0;
    const char *channel = channels[data[0] % 4];
    char *payload = malloc(size);
    if (!payload)
        return 0;
    memcpy(payload, data + 1, size - 1);
    payload[size - 1] = '\0';
    char run[64];
    store_notice what;
    const char *state = NULL;
    int64_t seq = -1;
    if (store_pg_notice_parse(channel, payload, &what, run, sizeof run, &state, &seq) == 0) {
        size_t n = strlen(run);
        if (n == 0 || n >= sizeof run || strchr(run, ' '))
            abort();
        if (what == STORE_NOTICE_EVENT && seq <= 0)
            abort();
        if (!state || (*state && (state < payload || state > payload + strlen(payload))))
            abort();
    }
    free(payload);
    return 0;
}

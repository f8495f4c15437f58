/* fuzz_journal.c — reading the runtime journal (heartbeat/journal.h). The
 * journal is a file in the session directory that a crash may tear and
 * other processes append to, so it is outside input. Any bytes are written
 * to a file (one per process) and read back with journal_read, each line
 * seeding a ΔH gate as the heartbeat does at start. The gate lives as long
 * as the process (a fresh one per input costs more than the read), so over
 * a run it fills up and its forgetting of the oldest fingerprints runs too.
 * A leading space makes the callback stop after two lines, so the stop
 * path runs too. Must never crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heartbeat/gate.h"
#include "heartbeat/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[96];
static hb_gate *gate;

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
    gate_free(gate);
}

typedef struct reader {
    size_t lines, stop_after;
} reader;

static int on_line(void *ctx, const json_t *line)
{
    reader *r = ctx;
    if (!json_is_object(line))
        abort();   /* journal_read promises objects only */
    gate_seed(gate, json_string_value(json_object_get(line, "fingerprint")));
    (void)json_string_value(json_object_get(line, "event_id"));
    (void)json_string_value(json_object_get(line, "state"));
    return ++r->lines >= r->stop_after;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        strcpy(dir, "/tmp/loom-fuzz-journal.XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
        snprintf(path, sizeof path, "%s/journal.jsonl", dir);
        gate = gate_new(0.1, 60);
        atexit(cleanup);
        /* A missing journal is no error and has no lines. */
        loom_error err;
        loom_error_clear(&err);
        size_t skipped = 1;
        if (journal_read(path, on_line, NULL, &skipped, &err) != 0 || skipped != 0)
            abort();
    }
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size))
        abort();
    fclose(f);

    reader r = {0, (size && data[0] == ' ') ? 2 : SIZE_MAX};
    loom_error err;
    loom_error_clear(&err);
    size_t skipped = 0;
    if (journal_read(path, on_line, &r, &skipped, &err) != 0)
        abort();   /* a readable file always reads */
    if (r.lines > r.stop_after)
        abort();
    return 0;
}

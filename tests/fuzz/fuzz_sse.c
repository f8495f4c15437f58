/* fuzz_sse.c — libFuzzer target for the SSE parser: the event sequence must
 * not depend on where the input is cut, and nothing may crash or leak.
 *
 * The first input byte picks a cut position; the rest is the stream. The
 * stream is parsed whole, cut in two, and (when small) byte by byte; all
 * three must produce byte-identical event logs, feed/finish results and
 * retry values, or the target aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "net/sse.h"


/* Byte-by-byte costs one call per byte; beyond this the two-way cut alone
 * keeps each run fast enough for the fuzzer to explore. */
#define BYTEWISE_MAX 4096

typedef struct outcome {
    loom_str log;
    int rc;     /* first nonzero feed/finish result, else 0 */
    long retry;
    size_t events;
} outcome;

static int on_event(void *ctx, const sse_event *ev)
{
    loom_str *log = ctx;
    if (ev->data[ev->data_len] != '\0')
        abort();
    str_printf(log, "%zu|%s|%s|%zu|", ev->line, ev->type, ev->last_id, ev->data_len);
    str_append(log, ev->data, ev->data_len);
    str_putc(log, '\n');
    /* Stopping from the callback must also be cut-independent; a stream
     * whose data is exactly "stop" exercises it. */
    return ev->data_len == 4 && memcmp(ev->data, "stop", 4) == 0 ? 42 : 0;
}

static void run(outcome *o, const char *in, size_t len, size_t step, size_t cut)
{
    memset(o, 0, sizeof *o);
    sse_parser *p = sse_parser_new(on_event, &o->log);
    size_t at = 0;
    while (at < len && !o->rc) {
        size_t n = step ? step : (at < cut ? cut - at : len - at);
        if (n > len - at)
            n = len - at;
        o->rc = sse_parser_feed(p, in + at, n);
        at += n;
    }
    int frc = sse_parser_finish(p);
    if (o->rc && frc != o->rc)
        abort(); /* a stopped parser must stay stopped with the same value */
    if (!o->rc)
        o->rc = frc;
    o->retry = sse_parser_retry_ms(p);
    o->events = sse_parser_events(p);
    sse_parser_free(p);
}

static void same(const outcome *a, const outcome *b)
{
    if (a->rc != b->rc || a->retry != b->retry || a->events != b->events ||
        a->log.len != b->log.len || (a->log.len && memcmp(a->log.ptr, b->log.ptr, a->log.len))) {
        fprintf(stderr, "fuzz_sse: chunking changed the result (rc %d/%d, events %zu/%zu)\n",
                a->rc, b->rc, a->events, b->events);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    size_t cut = len ? (size_t)data[0] * (len + 1) / 256 : 0;

    outcome whole, split;
    run(&whole, in, len, 0, len);
    run(&split, in, len, 0, cut);
    same(&whole, &split);
    if (len <= BYTEWISE_MAX) {
        outcome bytes;
        run(&bytes, in, len, 1, 0);
        same(&whole, &bytes);
        str_free(&bytes.log);
    }
    str_free(&whole.log);
    str_free(&split.log);
    return 0;
}

/* sse.c — the incremental Server-Sent Events parser declared in sse.h.
 *
 * Owns the per-stream state of the WHATWG event-stream algorithm: the
 * carried-over partial line, the data / event-type / last-id buffers, the
 * BOM and CR-at-chunk-end bookkeeping that make the result independent of
 * how the input was cut, and the 16 MiB line cap.
 *
 * Return values of sse_parser_feed / sse_parser_finish:
 *   0                    all input consumed;
 *   SSE_LINE_TOO_LONG    (-1) a line grew past SSE_MAX_LINE bytes;
 *   anything else        the callback's nonzero return value.
 * Either failure leaves the parser stopped: every later feed/finish returns
 * the same value without looking at its input. A callback that needs to be
 * told apart from the line cap should return a value other than -1 (or
 * record its own error in ctx, which is what the providers do).
 */
#include "net/sse.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/str.h"

/* No real stream puts 16 MiB on one line; beyond that we are buffering for
 * a broken or hostile server, so stop instead of growing without limit. */
#define SSE_MAX_LINE ((size_t)16 << 20)
#define SSE_LINE_TOO_LONG (-1)

static const unsigned char utf8_bom[3] = {0xEF, 0xBB, 0xBF};

struct sse_parser {
    sse_event_fn fn;
    void *ctx;
    loom_str line;      /* a line cut by the end of a chunk, awaiting its end */
    loom_str data;
    loom_str type;
    loom_str last_id;
    size_t lineno;      /* lines completed so far */
    size_t events;
    long retry_ms;
    int stopped;        /* nonzero: the value every later call returns */
    unsigned bom_seen;  /* BOM bytes matched so far at the stream start */
    bool bom_done;      /* past the point where a BOM may appear */
    bool after_cr;      /* the previous chunk ended in CR: a leading LF pairs with it */
};

sse_parser *sse_parser_new(sse_event_fn fn, void *ctx)
{
    sse_parser *p = xcalloc(1, sizeof *p);
    p->fn = fn;
    p->ctx = ctx;
    p->retry_ms = -1;
    return p;
}

void sse_parser_free(sse_parser *p)
{
    if (!p)
        return;
    str_free(&p->line);
    str_free(&p->data);
    str_free(&p->type);
    str_free(&p->last_id);
    free(p);
}

long sse_parser_retry_ms(const sse_parser *p)
{
    return p->retry_ms;
}

const char *sse_parser_last_id(const sse_parser *p)
{
    return str_cstr(&p->last_id);
}

size_t sse_parser_buffered(const sse_parser *p)
{
    return p->line.len + p->data.len + p->type.len;
}

size_t sse_parser_events(const sse_parser *p)
{
    return p->events;
}

static int stop(sse_parser *p, int rc)
{
    p->stopped = rc;
    return rc;
}

static bool field_is(const char *name, size_t len, const char *want)
{
    return strlen(want) == len && memcmp(name, want, len) == 0;
}

static int dispatch(sse_parser *p)
{
    if (p->data.len == 0) {
        str_clear(&p->type);
        return 0;
    }
    /* Every data line appended a '\n'; the event carries only the separators. */
    p->data.len--;
    p->data.ptr[p->data.len] = '\0';
    sse_event ev = {
        .type = p->type.len ? p->type.ptr : "message",
        .data = p->data.ptr,
        .data_len = p->data.len,
        .last_id = str_cstr(&p->last_id),
        .line = p->lineno,
    };
    p->events++;
    int rc = p->fn ? p->fn(p->ctx, &ev) : 0;
    str_clear(&p->data);
    str_clear(&p->type);
    return rc;
}

static void set_retry(sse_parser *p, const char *v, size_t n)
{
    if (n == 0)
        return;
    long ms = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return;
        int d = v[i] - '0';
        /* The spec has no upper bound; saturate rather than wrap. */
        ms = ms > (LONG_MAX - d) / 10 ? LONG_MAX : ms * 10 + d;
    }
    p->retry_ms = ms;
}

static int process_line(sse_parser *p, const char *line, size_t len)
{
    p->lineno++;
    if (len == 0)
        return dispatch(p);
    if (line[0] == ':')
        return 0;

    const char *colon = memchr(line, ':', len);
    size_t name_len = colon ? (size_t)(colon - line) : len;
    const char *val = colon ? colon + 1 : line + len;
    size_t val_len = colon ? len - name_len - 1 : 0;
    if (val_len && *val == ' ') {
        val++;
        val_len--;
    }

    if (field_is(line, name_len, "data")) {
        str_append(&p->data, val, val_len);
        str_putc(&p->data, '\n');
    } else if (field_is(line, name_len, "event")) {
        str_clear(&p->type);
        str_append(&p->type, val, val_len);
    } else if (field_is(line, name_len, "id")) {
        /* A NUL would make the id unusable as a Last-Event-ID header. */
        if (!memchr(val, '\0', val_len)) {
            str_clear(&p->last_id);
            str_append(&p->last_id, val, val_len);
        }
    } else if (field_is(line, name_len, "retry")) {
        set_retry(p, val, val_len);
    }
    return 0;
}

int sse_parser_feed(sse_parser *p, const char *buf, size_t len)
{
    if (p->stopped)
        return p->stopped;
    const char *s = buf, *end = buf + len;
    if (s == end)
        return 0;

    if (!p->bom_done) {
        while (s < end && p->bom_seen < sizeof utf8_bom &&
               (unsigned char)*s == utf8_bom[p->bom_seen]) {
            p->bom_seen++;
            s++;
        }
        if (p->bom_seen == sizeof utf8_bom) {
            p->bom_done = true;
        } else if (s < end) {
            /* Not a BOM after all: the bytes held back are line content. */
            p->bom_done = true;
            str_append(&p->line, utf8_bom, p->bom_seen);
        } else {
            return 0; /* the chunk was all BOM prefix; the next one decides */
        }
    }

    if (p->after_cr && s < end) {
        p->after_cr = false;
        if (*s == '\n')
            s++;
    }

    /* Both terminators are located with memchr and only searched again once
     * passed, so a chunk is scanned a bounded number of times whatever mix
     * of CR and LF it uses. */
    const char *cr = memchr(s, '\r', (size_t)(end - s));
    const char *lf = memchr(s, '\n', (size_t)(end - s));
    while (s < end) {
        if (cr && cr < s)
            cr = memchr(s, '\r', (size_t)(end - s));
        if (lf && lf < s)
            lf = memchr(s, '\n', (size_t)(end - s));
        const char *eol = !cr ? lf : !lf ? cr : cr < lf ? cr : lf;
        size_t n = (size_t)((eol ? eol : end) - s);

        if (p->line.len + n > SSE_MAX_LINE)
            return stop(p, SSE_LINE_TOO_LONG);
        if (!eol) {
            str_append(&p->line, s, n);
            break;
        }

        int rc;
        if (p->line.len) {
            str_append(&p->line, s, n);
            rc = process_line(p, p->line.ptr, p->line.len);
            str_clear(&p->line);
        } else {
            rc = process_line(p, s, n); /* the common case: no copy */
        }

        s = eol + 1;
        if (*eol == '\r') {
            if (s == end)
                p->after_cr = true;
            else if (*s == '\n')
                s++;
        }
        if (rc)
            return stop(p, rc);
    }
    return 0;
}

/* The pending event's data is a complete JSON object or array, or
 * "[DONE]": nothing of it can be missing. */
static bool data_is_whole(const sse_parser *p)
{
    if (!p->data.len)
        return false;
    /* Every data line appended a '\n' (see dispatch). */
    if (p->data.len == 7 && !memcmp(p->data.ptr, "[DONE]\n", 7))
        return true;
    json_t *j = json_loadb(p->data.ptr, p->data.len, 0, NULL);
    bool whole = j != NULL;
    json_decref(j);
    return whole;
}

int sse_parser_finish(sse_parser *p)
{
    if (p->stopped)
        return p->stopped;
    if (!p->bom_done) {
        /* The stream ended inside what looked like a BOM: it was content. */
        str_append(&p->line, utf8_bom, p->bom_seen);
        p->bom_done = true;
    }
    int rc = 0;
    /* A final line with no line end may have been cut: what followed is
     * unknowable. */
    bool cut = p->line.len > 0;
    if (cut) {
        rc = process_line(p, p->line.ptr, p->line.len);
        str_clear(&p->line);
        /* ...unless what the event holds is whole: complete JSON (or the
         * chat API's [DONE]) cannot be half a line. The SDKs' own recorded
         * fixtures end so (anthropic-sdk-typescript keeps message_stop with
         * no newline); re-requesting them would pay for the reply twice. */
        if (rc == 0 && data_is_whole(p))
            cut = false;
    }
    p->after_cr = false;
    /* Deliberately not WHATWG (which discards any event not closed by a
     * blank line): when the stream ended at a line end, the pending event
     * is dispatched, and so is one whose last line has no line end when its
     * data is complete JSON. finish is called only when the HTTP body ended cleanly,
     * so such an event is what the server meant to send, merely missing its
     * blank line — dropping it (the final message_stop, [DONE] or
     * response.completed) made the decoder call the reply incomplete and
     * Loom request, and pay for, the whole reply again. An event whose last
     * line was cut mid-line stays discarded: it is truncated, and the
     * decoder reports the truncation (retryable) instead of quoting half a
     * JSON line as malformed data. See docs/http.md, "SSE at end of stream". */
    if (rc == 0 && !cut)
        rc = dispatch(p);
    str_clear(&p->data);
    str_clear(&p->type);
    return rc ? stop(p, rc) : 0;
}

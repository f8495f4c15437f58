/* sse.c — GET /runs/{id}/stream: a run's events as Server-Sent Events.
 *
 * Framing (the wire contract): `retry: 1000` first, then per event
 * `id: <seq>\nevent: <type>\ndata: <Event JSON>\n\n`; a comment
 * `: keep-alive\n\n` after keepalive_ms without one; when the run has ended
 * and every event was given, `event: end\ndata: {"state": …}\n\n` and the
 * body ends. Resumption: Last-Event-ID (a browser's reconnect) or ?after=,
 * the header winning when both are there; the feed gives every event with
 * a larger seq once, in order.
 *
 * The body is MHD_create_response_from_callback: MHD calls sse_read on the
 * connection's own thread (thread per connection) and sends what it
 * returns at once, so each event is flushed as it comes. sse_read blocks in
 * service_feed_next in slices of at most STOP_SLICE_MS so a server stop is
 * noticed quickly (the stop flag), and counts the slices to know when a
 * keep-alive is due. A client that disconnects makes MHD's next write fail;
 * MHD then calls sse_free, which closes the feed.
 *
 * A stream may instead take its events from an sse_source (a2a/'s
 * JSON-RPC streams): then each is a bare `data: <line>\n\n` frame, with
 * the same keep-alives and stop handling, and the body just ends.
 *
 * A stream is owned by its connection's thread. */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/server/http/http_internal.h"

#define STOP_SLICE_MS 250

struct sse_stream {
    const http_ctx *ctx;
    service_feed *feed;
    sse_source src;           /* set (src.next): a source's data events instead of a feed */
    loom_str pending;         /* framed bytes not yet handed to MHD */
    size_t off;
    int idle_ms;              /* waited since the last bytes went out */
    bool ended;               /* `event: end` is in pending */
};

void sse_stream_free(sse_stream *s)
{
    if (!s)
        return;
    if (s->feed)
        s->ctx->be->feed_close(s->feed);
    if (s->src.free)
        s->src.free(s->src.cls);
    str_free(&s->pending);
    free(s);
}

static void sse_free(void *cls)
{
    sse_stream_free(cls);
}

/* One event's frame. The event's JSON goes on one data line: a JSON text
 * has newlines only as whitespace, so a dump without them is the same
 * value. */
static void frame_event(sse_stream *s, const char *json, int64_t seq)
{
    json_t *ev = json_loads(json, 0, NULL);
    const char *type = json_string_value(json_object_get(ev, "type"));
    char *flat = NULL;
    if (ev && strpbrk(json, "\r\n"))
        flat = json_dump_compact(ev);
    str_printf(&s->pending, "id: %lld\nevent: %s\ndata: %s\n\n", (long long)seq,
               type && !strpbrk(type, "\r\n") ? type : "message", flat ? flat : json);
    free(flat);
    json_decref(ev);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    sse_stream *s = cls;
    for (;;) {
        if (s->off < s->pending.len) {
            size_t n = s->pending.len - s->off;
            if (n > max)
                n = max;
            memcpy(buf, s->pending.ptr + s->off, n);
            s->off += n;
            return (ssize_t)n;
        }
        str_clear(&s->pending);
        s->off = 0;
        if (s->ended)
            return MHD_CONTENT_READER_END_OF_STREAM;
        /* Stopping: cut the body off unfinished, so the client knows to
         * reconnect (with Last-Event-ID) rather than think the run ended. */
        if (atomic_load(&s->ctx->stopping))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        int keepalive = s->ctx->opts.keepalive_ms;
        int slice = keepalive - s->idle_ms;
        if (slice > STOP_SLICE_MS)
            slice = STOP_SLICE_MS;
        if (slice < 1)
            slice = 1;
        char *json = NULL;
        int64_t seq = 0;
        int rc = s->src.next ? s->src.next(s->src.cls, &json, slice)
                             : s->ctx->be->feed_next(s->feed, &json, &seq, slice);
        if (rc > 0 && s->src.next) {
            str_printf(&s->pending, "data: %s\n\n", json ? json : "{}");
            s->idle_ms = 0;
        } else if (rc < 0 && s->src.next) {
            s->ended = true;
        } else if (rc > 0) {
            frame_event(s, json ? json : "{}", seq);
            s->idle_ms = 0;
        } else if (rc < 0) {
            str_printf(&s->pending, "event: end\ndata: %s\n\n", json ? json : "{}");
            s->ended = true;
        } else {
            s->idle_ms += slice;
            if (s->idle_ms >= keepalive) {
                str_puts(&s->pending, ": keep-alive\n\n");
                s->idle_ms = 0;
            }
        }
        free(json);
    }
}

struct MHD_Response *sse_response(sse_stream *s)
{
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 8192, sse_read, s, sse_free);
    if (!resp) {
        sse_stream_free(s);
        return NULL;
    }
    MHD_add_response_header(resp, "Content-Type", "text/event-stream");
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no"); /* no proxy buffering */
    return resp;
}

/* A Last-Event-ID value: the seq a client saw last, a whole number ≥ 0. */
static bool parse_seq(const char *v, int64_t *out)
{
    if (!v || !*v || strlen(v) > 18)
        return false;
    int64_t n = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        n = n * 10 + (*p - '0');
    }
    *out = n;
    return true;
}

void route_stream(http_req *r)
{
    static const char *const q[] = {"after", "visibility", NULL};
    int64_t after;
    unsigned mask;
    if (!query_only(r, q) || !query_int(r, "after", 0, INT64_MAX / 2, 0, &after) ||
        !query_visibility(r, &mask))
        return;
    if (r->last_event_id && !parse_seq(r->last_event_id, &after)) {
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                   "Last-Event-ID must be an event's seq (a whole number), not \"%.32s\"",
                   r->last_event_id);
        return;
    }
    srv_error err = {0};
    service_feed *f = r->ctx->be->feed_open(r->ctx->svc, &r->who, r->params[0], after, mask, &err);
    if (!f) {
        reply_error(r, &err);
        return;
    }
    srv_error_clear(&err);
    sse_stream *s = xcalloc(1, sizeof *s);
    s->ctx = r->ctx;
    s->feed = f;
    str_puts(&s->pending, "retry: 1000\n\n");
    reply_free(&r->reply);
    r->reply.status = 200;
    r->reply.sse = s;
}

void sse_reply_source(http_req *r, sse_source src)
{
    sse_stream *s = xcalloc(1, sizeof *s);
    s->ctx = r->ctx;
    s->src = src;
    reply_free(&r->reply);
    r->reply.status = 200;
    r->reply.sse = s;
}

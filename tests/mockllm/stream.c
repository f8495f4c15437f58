/* stream.c — turns a pre-rendered event list into a chunked HTTP body that
 * MHD pulls one event per read, so each SSE event reaches the client as it
 * would from a real provider. Pacing (drip_ms) and the mid-stream faults
 * (drop the connection, inject a malformed line, stall, keep-alive pings
 * for ever, end without the last blank line) are applied here,
 * identically for every wire format. */
#include "mockllm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    mock_events ev;
    size_t idx;          /* next event to start */
    size_t off;          /* bytes of the current unit already sent */
    bool in_unit;        /* a unit is partly sent */
    long drip_ms;
    bool has_fault;
    mock_fault fault;
    bool fault_done;     /* malformed injected / stall taken */
    char *inject;        /* malformed line being sent, or NULL */
    size_t inject_len;
    uint64_t sent;       /* body bytes handed to MHD so far */
} stream_state;

/* Copies from unit into buf, honouring max and any drop limit. */
static ssize_t emit(stream_state *s, const char *unit, size_t unit_len, char *buf,
                    size_t max, bool *finished)
{
    size_t n = unit_len - s->off;
    if (n > max)
        n = max;
    if (s->has_fault && s->fault.kind == FAULT_DROP) {
        uint64_t left = (uint64_t)s->fault.drop_after_bytes - s->sent;
        if (n > left)
            n = (size_t)left;
    }
    memcpy(buf, unit + s->off, n);
    s->off += n;
    s->sent += n;
    *finished = s->off == unit_len;
    return (ssize_t)n;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream_state *s = cls;
    (void)pos;
    if (atomic_load(&mock_stopping) || max == 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    /* The bytes before the limit have been handed over and, since MHD only
     * asks for more once its buffer is drained, sent: now cut the line. */
    if (s->has_fault && s->fault.kind == FAULT_DROP &&
        s->sent >= (uint64_t)s->fault.drop_after_bytes)
        return MHD_CONTENT_READER_END_WITH_ERROR;

    bool finished;
    ssize_t n;
    if (s->inject) {
        n = emit(s, s->inject, s->inject_len, buf, max, &finished);
        if (finished) {
            free(s->inject);
            s->inject = NULL;
            s->off = 0;
        }
        return n;
    }
    if (!s->in_unit) {
        /* At an event boundary: idx events have gone out so far. */
        size_t at = s->has_fault ? (size_t)s->fault.after_events : 0;
        if (at > s->ev.n)
            at = s->ev.n; /* past the end means "just before the end" */
        if (s->has_fault && !s->fault_done && s->idx >= at) {
            if (s->fault.kind == FAULT_MALFORMED) {
                s->fault_done = true;
                s->inject = xprintf("%s\n\n", s->fault.malformed);
                s->inject_len = strlen(s->inject);
                s->off = 0;
                return stream_read(cls, pos, buf, max);
            }
            if (s->fault.kind == FAULT_PING) {
                /* Never done: a ping, then another, until the client gives
                 * up or the server stops; the reply never comes. */
                mock_sleep_ms(s->fault.ping_every_ms);
                if (atomic_load(&mock_stopping))
                    return MHD_CONTENT_READER_END_WITH_ERROR;
                s->inject = xprintf("%s", s->fault.ping_text);
                s->inject_len = strlen(s->inject);
                s->off = 0;
                return stream_read(cls, pos, buf, max);
            }
            if (s->fault.kind == FAULT_STALL) {
                s->fault_done = true;
                mock_sleep_ms(s->fault.stall_ms);
            }
        }
        if (s->idx >= s->ev.n) {
            /* A drop limit beyond the stream's length still drops: the client
             * gets every byte but never the end of the chunked body. */
            if (s->has_fault && s->fault.kind == FAULT_DROP)
                return MHD_CONTENT_READER_END_WITH_ERROR;
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        mock_sleep_ms(s->drip_ms);
        if (atomic_load(&mock_stopping))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        s->in_unit = true;
        s->off = 0;
    }
    n = emit(s, s->ev.ev[s->idx], s->ev.len[s->idx], buf, max, &finished);
    if (finished) {
        s->in_unit = false;
        s->off = 0;
        s->idx++;
    }
    if (n == 0) /* drop limit of 0 bytes: nothing to send, cut now */
        return MHD_CONTENT_READER_END_WITH_ERROR;
    return n;
}

static void stream_free(void *cls)
{
    stream_state *s = cls;
    events_free(&s->ev);
    free(s->inject);
    free(s);
}

struct MHD_Response *stream_response(mock_events *events, long drip_ms,
                                     const mock_fault *fault)
{
    stream_state *s = xcalloc(1, sizeof *s);
    s->ev = *events;
    memset(events, 0, sizeof *events);
    s->drip_ms = drip_ms;
    /* unterminated_end: the last event keeps its own line end but loses the
     * blank line after it, and the chunked body then ends cleanly — the
     * shape of a server that forgets the final separator. A non-streaming
     * body has no separator to lose and is sent whole. */
    if (fault && fault->kind == FAULT_UNTERMINATED) {
        size_t last = s->ev.n ? s->ev.n - 1 : 0;
        if (s->ev.n && s->ev.len[last] >= 2 && s->ev.ev[last][s->ev.len[last] - 1] == '\n' &&
            s->ev.ev[last][s->ev.len[last] - 2] == '\n')
            s->ev.len[last]--;
        fault = NULL;
    }
    if (fault && fault->kind != FAULT_STATUS) {
        s->has_fault = true;
        s->fault = *fault;
    }
    /* Unknown size makes MHD use chunked transfer encoding, and a small
     * block size keeps each event in its own write. */
    struct MHD_Response *r = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, s, stream_free);
    if (!r)
        stream_free(s);
    return r;
}

/* sse.h — a Server-Sent Events parser following the WHATWG event-stream rules.
 *
 * Byte-oriented and incremental: input may be cut anywhere (inside a line,
 * between CR and LF, inside a UTF-8 sequence). Lines end in CR, LF or CRLF;
 * a leading UTF-8 BOM is skipped; lines starting with ':' are comments;
 * `data` lines are joined with '\n'; `id` sets the last event id (ignored if
 * it contains NUL); `retry` is taken only when all ASCII digits; unknown
 * fields are ignored. An event is dispatched at a blank line when its data
 * buffer is non-empty. One deliberate departure: when the stream ends at a
 * line end, an event not yet closed by a blank line is dispatched (WHATWG
 * discards it); see sse_parser_finish and docs/http.md.
 */
#ifndef LOOM_NET_SSE_H
#define LOOM_NET_SSE_H

#include <stddef.h>

typedef struct sse_event {
    const char *type;      /* "message" when no event: field was given */
    const char *data;      /* NUL-terminated; may contain '\n' */
    size_t data_len;
    const char *last_id;   /* the last event id in force ("" if none) */
    size_t line;           /* 1-based line number of the dispatching blank line */
} sse_event;

/* Return 0 to continue; any other value stops parsing and is returned by
 * sse_parser_feed. Pointers in ev are valid only during the call. */
typedef int (*sse_event_fn)(void *ctx, const sse_event *ev);

typedef struct sse_parser sse_parser;

sse_parser *sse_parser_new(sse_event_fn fn, void *ctx);
/* 0, or the callback's nonzero value (the parser then stays stopped). */
int sse_parser_feed(sse_parser *p, const char *buf, size_t len);
/* Clean end of stream (call it only when the transport delivered the whole
 * body). A final line without a terminator is processed as a line and the
 * event it belongs to is discarded (it was cut); otherwise an event not yet
 * closed by a blank line is dispatched (not WHATWG: the server's last event,
 * missing only its blank line). */
int sse_parser_finish(sse_parser *p);
/* The reconnection time set by `retry:`, or -1 when none was given. */
long sse_parser_retry_ms(const sse_parser *p);
/* The last event id in force ("" if none), also after an `id:` whose event
 * carried no data and so was never dispatched: a reconnecting client sends
 * it as Last-Event-ID. */
const char *sse_parser_last_id(const sse_parser *p);
/* Bytes held for the event (and line) not yet complete: a reader caps it
 * so a server cannot grow one event without end. */
size_t sse_parser_buffered(const sse_parser *p);
/* Number of complete events dispatched so far. */
size_t sse_parser_events(const sse_parser *p);
void sse_parser_free(sse_parser *p);

#endif

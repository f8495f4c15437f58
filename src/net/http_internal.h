/* http_internal.h — what the dispatcher (http.c) shares with its two
 * transports, http_plain.c (own HTTP/1.1 over a socket) and http_curl.c
 * (libcurl, loaded on first use).
 *
 * Everything http.h promises about a response — which headers are kept,
 * where a non-2xx body goes, how the body callback stops a transfer, and the
 * error code, retryable flag and message of each kind of failure — lives
 * behind these functions, so the two transports cannot drift apart: they
 * only move bytes and say what went wrong in their own terms.
 */
#ifndef LOOM_NET_HTTP_INTERNAL_H
#define LOOM_NET_HTTP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "net/http.h"

#define HTTP_ERROR_BODY_CAP (64 * 1024)
#define HTTP_USER_AGENT "loom/" LOOM_VERSION_STRING

/* One transfer as both transports see it. http.c fills everything but the
 * flags, which the transport sets as the transfer ends. */
typedef struct http_rx {
    const http_request *req;
    http_body_fn on_body;
    void *ctx;
    http_response *resp;
    loom_error *err;
    const char *where;        /* the URL without userinfo or query, for messages */
    long connect_ms;          /* defaults applied */
    long idle_ms;
    long total_ms;            /* the overall deadline's length, 0 = none */
    int64_t deadline_ms;      /* clock_mono_ms() at which it passes, 0 = none */
    bool retry_after_ms_seen; /* retry-after-ms outranks Retry-After */
    bool body_stopped;        /* on_body returned nonzero */
    bool cancelled;
    bool idle_expired;
    bool deadline_expired;    /* total_ms passed */
} http_rx;

/* True (and rx->deadline_expired set) once the overall deadline passed. */
bool http_rx_past_deadline(http_rx *rx, int64_t now_ms);

/* A status line arrived: a new response starts (1xx, proxy CONNECT, then the
 * real one), and only the last one's headers describe what we got. */
void http_rx_status(http_rx *rx, long status);
/* One header of the current response; name and value without surrounding
 * blanks. Keeps the ones http_response reports. */
void http_rx_header(http_rx *rx, const char *name, size_t name_len, const char *value,
                    size_t value_len);
/* Body bytes of the final response: a 2xx goes to on_body, anything else to
 * error_body (capped; the rest is dropped so the response still completes).
 * Returns nonzero when on_body asked to stop (rx->body_stopped is then set). */
int http_rx_body(http_rx *rx, const char *data, size_t len);

/* How the transport says a transfer failed, before the shared rules below
 * turn it into a loom_error. */
typedef enum {
    HTTP_FAIL_NONE,     /* only the rx flags explain it */
    HTTP_FAIL_TIMEOUT,  /* connect (or transport-level) timeout: retryable */
    HTTP_FAIL_BROKEN,   /* unreachable, refused, reset, cut short: retryable */
    HTTP_FAIL_TLS,      /* certificate trouble: not retried */
    HTTP_FAIL_URL,      /* the URL itself is unusable */
    HTTP_FAIL_PROTOCOL, /* the server does not speak HTTP as we read it */
    HTTP_FAIL_OTHER,
} http_fail_kind;

/* The report for a transfer that did not complete, in this order:
 * cancellation, the body callback's stop (its own error kept), the idle
 * timeout, then kind with the transport's explanation why. Sets
 * err->http_status and err->retry_after_s from what arrived; returns
 * -err->code. */
int http_fail(http_rx *rx, http_fail_kind kind, const char *why);

/* An HTTP-date in any of the three forms RFC 9110 §5.6.7 says a recipient
 * must accept; (time_t)-1 when it is none of them. */
time_t http_parse_date(const char *s);

#endif

/* http.h — one HTTP request, with the body streamed to a callback.
 *
 * Two transports, one contract (docs/http.md): http:// URLs that no proxy
 * applies to go through Loom's own HTTP/1.1 client; https, proxies and
 * anything else go through libcurl, loaded on first use. Setting
 * LOOM_HTTP_CLIENT=curl sends every request through libcurl.
 *
 * TLS is verified (never turned off), proxy variables (http_proxy,
 * https_proxy, all_proxy, no_proxy) are honoured by libcurl's rules, the
 * abort flag is checked while the transfer waits, an idle timeout ends a
 * stream that stops sending, and an overall deadline ends one that never
 * finishes. A non-2xx body is collected (capped at 64 KiB)
 * into the response instead of being passed to on_body, so providers can
 * read the error message. Redirects are not followed.
 */
#ifndef LOOM_NET_HTTP_H
#define LOOM_NET_HTTP_H

#include <stddef.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/str.h"

/* Return 0 to continue, nonzero to stop the transfer (http_perform then
 * returns that failure as LOOM_ERR_MODEL_PROTOCOL unless err was set). */
typedef int (*http_body_fn)(void *ctx, const char *data, size_t len);

typedef struct http_request {
    const char *method;               /* "POST" / "GET" */
    const char *url;
    const char *const *headers;       /* NULL-terminated "Name: value" list */
    const char *body;
    size_t body_len;
    long connect_timeout_ms;          /* <= 0 → 10 000 */
    long idle_timeout_ms;             /* no byte for this long ends it; <= 0 → 300 000 */
    /* The whole request, connect to last byte, however steadily bytes come
     * (a server that sends keep-alive pings for ever); <= 0 → none. */
    long total_timeout_ms;
    const loom_cancel *cancel;
    /* Further response headers to keep (NULL-terminated names, matched
     * without regard to case, at most HTTP_CAPTURE_MAX; may be NULL): their
     * values land in http_response.captured, in the same order. They are
     * set before the first on_body call, so a body callback can read them. */
    const char *const *capture_headers;
} http_request;

#define HTTP_CAPTURE_MAX 8

typedef struct http_response {
    long status;                      /* 0 when no response arrived */
    double retry_after_s;             /* Retry-After (seconds or HTTP date), -1 absent */
    char *request_id;                 /* request-id / x-request-id header, caller frees */
    char *content_type;               /* caller frees */
    char *location;                   /* Location header of a 3xx, caller frees */
    /* captured[i]: the value of req->capture_headers[i] (the last one when
     * repeated), NULL when absent; caller frees (http_response_free). */
    char *captured[HTTP_CAPTURE_MAX];
    loom_str error_body;              /* non-2xx body, capped */
    size_t body_bytes;                /* bytes delivered to on_body */
} http_response;

/* Methods: GET, HEAD and DELETE without a body (DELETE with one when body is
 * set), POST (an empty body when none), any other name as given. Content-Type,
 * status and captured headers are in resp before on_body first runs.
 *
 * Performs the request. Returns 0 when a complete response arrived (any
 * status: check resp->status). Otherwise -code with err set:
 * LOOM_ERR_RUN_CANCELLED (aborted), LOOM_ERR_MODEL_TIMEOUT (connect or idle,
 * retryable; past total_timeout_ms, not retryable: the same server would
 * keep the next attempt just as long), LOOM_ERR_MODEL_UNAVAILABLE (connection refused/reset/dropped
 * mid-body, retryable), LOOM_ERR_MODEL_PROTOCOL (a reply that is not HTTP
 * or frames its body wrongly), LOOM_ERR_CONFIG (a URL that cannot be used,
 * or an https/proxy request when libcurl.so.4 cannot be loaded), or the
 * error the body callback set. */
int http_perform(const http_request *req, http_body_fn on_body, void *ctx,
                 http_response *resp, loom_error *err);
void http_response_free(http_response *resp);
/* Process-wide set-up; cheap and safe to call repeatedly. (libcurl is
 * loaded and initialised by the first request that needs it.) */
void http_global_init(void);

#endif

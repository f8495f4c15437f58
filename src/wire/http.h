/* http.h — one HTTP request over libcurl, with the body streamed to a callback.
 *
 * TLS is verified (never turned off), proxy variables (http_proxy,
 * https_proxy, no_proxy) are honoured by libcurl itself, the abort flag is
 * checked by the transfer's progress callback, and an idle timeout ends a
 * stream that stops sending. A non-2xx body is collected (capped at 64 KiB)
 * into the response instead of being passed to on_body, so providers can
 * read the error message.
 */
#ifndef LOOM_WIRE_HTTP_H
#define LOOM_WIRE_HTTP_H

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
    const loom_cancel *cancel;
} http_request;

typedef struct http_response {
    long status;                      /* 0 when no response arrived */
    double retry_after_s;             /* Retry-After (seconds or HTTP date), -1 absent */
    char *request_id;                 /* request-id / x-request-id header, caller frees */
    char *content_type;               /* caller frees */
    loom_str error_body;              /* non-2xx body, capped */
    size_t body_bytes;                /* bytes delivered to on_body */
} http_response;

/* Performs the request. Returns 0 when a complete response arrived (any
 * status: check resp->status). Otherwise -code with err set:
 * LOOM_ERR_RUN_CANCELLED (aborted), LOOM_ERR_MODEL_TIMEOUT (connect or idle,
 * retryable), LOOM_ERR_MODEL_UNAVAILABLE (connection refused/reset/dropped
 * mid-body, retryable), or the error the body callback set. */
int http_perform(const http_request *req, http_body_fn on_body, void *ctx,
                 http_response *resp, loom_error *err);
void http_response_free(http_response *resp);
/* curl_global_init once per process; safe to call repeatedly. */
void http_global_init(void);

#endif

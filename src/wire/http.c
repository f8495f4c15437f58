/* http.c — http_perform over one libcurl easy handle per request.
 *
 * Owns the mapping from libcurl's view of a transfer (CURLcode, callbacks,
 * headers) to Loom's: which failures are retryable, what Retry-After means,
 * where a non-2xx body goes, and how cancellation and idle streams end.
 *
 * Contract details beyond http.h:
 * - resp is initialised here (any previous contents are overwritten, not
 *   freed); call http_response_free on it after every http_perform, whatever
 *   it returned. err is cleared on entry and may be NULL.
 * - A body callback that wants its own error reported sets it in the same
 *   loom_error that was passed to http_perform (reached through ctx) and
 *   returns nonzero. http_perform then returns -err->code and leaves the
 *   message alone (adding only http_status when the callback left it 0). If
 *   the callback returns nonzero without setting err, the result is
 *   LOOM_ERR_MODEL_PROTOCOL.
 * - Retry-After accepts delta-seconds or an HTTP-date (relative to now,
 *   never negative). OpenAI's retry-after-ms, when present, takes precedence
 *   because it is the more precise of the two.
 * - Messages name the URL without its query string or userinfo: keys
 *   sometimes travel there, and messages end up in logs and transcripts.
 */
#include "wire/http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"

#define ERROR_BODY_CAP (64 * 1024)
#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_IDLE_TIMEOUT_MS 300000L

typedef struct xfer {
    const http_request *req;
    http_body_fn on_body;
    void *ctx;
    http_response *resp;
    long idle_ms;
    int64_t last_activity_ms;
    curl_off_t seen_dl, seen_ul;
    bool retry_after_ms_seen; /* retry-after-ms outranks Retry-After */
    bool body_stopped;
    bool cancelled;
    bool idle_expired;
} xfer;

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void http_global_init(void)
{
    pthread_once(&global_once, global_init_once);
}

void http_response_free(http_response *resp)
{
    if (!resp)
        return;
    free(resp->request_id);
    free(resp->content_type);
    str_free(&resp->error_body);
    resp->request_id = NULL;
    resp->content_type = NULL;
}

static void url_for_message(const char *url, char *out, size_t cap)
{
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t auth_len = strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', auth_len);
    if (at) {
        auth_len -= (size_t)(at + 1 - auth);
        auth = at + 1;
    }
    const char *path = auth + auth_len;
    size_t path_len = strcspn(path, "?#");
    snprintf(out, cap, "%.*s%.*s%.*s", (int)(sep ? sep + 3 - url : 0), url, (int)auth_len, auth,
             (int)path_len, path);
}

/* Copies a header value into buf as a C string; false if it does not fit. */
static bool value_cstr(const char *v, size_t n, char *buf, size_t cap)
{
    if (n >= cap)
        return false;
    memcpy(buf, v, n);
    buf[n] = '\0';
    return true;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static double parse_retry_after(const char *v, size_t n)
{
    char buf[128];
    if (!value_cstr(v, n, buf, sizeof buf) || !*buf)
        return -1;
    if (all_digits(buf))
        return strtod(buf, NULL);
    time_t when = curl_getdate(buf, NULL);
    if (when == (time_t)-1)
        return -1;
    double d = difftime(when, time(NULL));
    return d < 0 ? 0 : d;
}

static double parse_retry_after_ms(const char *v, size_t n)
{
    char buf[64], *end;
    if (!value_cstr(v, n, buf, sizeof buf) || !*buf || *buf < '0' || *buf > '9')
        return -1;
    double ms = strtod(buf, &end);
    return *end ? -1 : ms / 1000.0;
}

static bool name_is(const char *name, size_t len, const char *want)
{
    return strlen(want) == len && strncasecmp(name, want, len) == 0;
}

static void start_response(xfer *x, const char *line, size_t len)
{
    http_response *r = x->resp;
    /* Each status line starts a new response (1xx, proxy CONNECT, then the
     * real one); only the last one's headers describe what we got. */
    free(r->request_id);
    free(r->content_type);
    r->request_id = NULL;
    r->content_type = NULL;
    r->retry_after_s = -1;
    x->retry_after_ms_seen = false;

    long status = 0;
    const char *sp = memchr(line, ' ', len);
    if (sp) {
        for (const char *c = sp + 1; c < line + len && *c >= '0' && *c <= '9'; c++)
            status = status * 10 + (*c - '0');
    }
    r->status = status < 1000 ? status : 0;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *userdata)
{
    xfer *x = userdata;
    size_t n = size * nitems, len = n;
    x->last_activity_ms = clock_mono_ms();
    while (len && (buf[len - 1] == '\r' || buf[len - 1] == '\n' || buf[len - 1] == ' ' ||
                   buf[len - 1] == '\t'))
        len--;
    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        start_response(x, buf, len);
        return n;
    }
    const char *colon = memchr(buf, ':', len);
    if (!colon)
        return n;
    size_t name_len = (size_t)(colon - buf);
    const char *v = colon + 1;
    while (v < buf + len && (*v == ' ' || *v == '\t'))
        v++;
    size_t vlen = (size_t)(buf + len - v);

    http_response *r = x->resp;
    if (name_is(buf, name_len, "retry-after-ms")) {
        double s = parse_retry_after_ms(v, vlen);
        if (s >= 0) {
            r->retry_after_s = s;
            x->retry_after_ms_seen = true;
        }
    } else if (name_is(buf, name_len, "retry-after")) {
        double s = parse_retry_after(v, vlen);
        if (s >= 0 && !x->retry_after_ms_seen)
            r->retry_after_s = s;
    } else if (name_is(buf, name_len, "request-id") || name_is(buf, name_len, "x-request-id")) {
        if (!r->request_id)
            r->request_id = xstrndup(v, vlen);
    } else if (name_is(buf, name_len, "content-type")) {
        free(r->content_type);
        r->content_type = xstrndup(v, vlen);
    }
    return n;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    xfer *x = userdata;
    http_response *r = x->resp;
    size_t n = size * nmemb;
    x->last_activity_ms = clock_mono_ms();
    if (n == 0)
        return 0;
    if (r->status >= 200 && r->status < 300) {
        r->body_bytes += n;
        if (x->on_body && x->on_body(x->ctx, data, n) != 0) {
            x->body_stopped = true;
            return 0; /* any count other than n makes curl fail with WRITE_ERROR */
        }
        return n;
    }
    /* Past the cap the rest is read and dropped, so the response still
     * completes and the caller sees the status rather than a failure. */
    size_t have = r->error_body.len;
    if (have < ERROR_BODY_CAP)
        str_append(&r->error_body, data, n < ERROR_BODY_CAP - have ? n : ERROR_BODY_CAP - have);
    return n;
}

/* Cancellation and the precise idle timeout both live here. LOW_SPEED_TIME
 * is kept as a backstop, but curl averages speed over a window of about five
 * seconds, so alone it lets a stream that stalls right after a burst run
 * several seconds past the limit. */
static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    xfer *x = userdata;
    if (cancel_requested(x->req->cancel)) {
        x->cancelled = true;
        return 1;
    }
    int64_t now = clock_mono_ms();
    if (dlnow != x->seen_dl || ulnow != x->seen_ul) {
        x->seen_dl = dlnow;
        x->seen_ul = ulnow;
        x->last_activity_ms = now;
    } else if (now - x->last_activity_ms >= x->idle_ms) {
        x->idle_expired = true;
        return 1;
    }
    return 0;
}

static int classify(CURLcode rc, const xfer *x, const char *where, const char *why,
                    loom_error *err)
{
    const http_request *req = x->req;
    long status = x->resp->status;
    int ret;

    if (x->cancelled || cancel_requested(req->cancel))
        return loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "request to %s cancelled", where);

    if (x->body_stopped) {
        if (err->code != LOOM_OK) {
            if (!err->http_status)
                err->http_status = (int)status;
            return -(int)err->code;
        }
        ret = loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                             "reading the response from %s: the body handler stopped the transfer",
                             where);
    } else if (x->idle_expired) {
        ret = loom_error_set(err, LOOM_ERR_MODEL_TIMEOUT, "no data from %s for %ld ms", where,
                             x->idle_ms);
        err->retryable = true;
    } else {
        switch (rc) {
        case CURLE_OPERATION_TIMEDOUT:
            ret = loom_error_set(err, LOOM_ERR_MODEL_TIMEOUT, "timed out talking to %s: %s", where,
                                 why);
            err->retryable = true;
            break;
        /* The connection failed or broke: a new attempt may well succeed.
         * DNS failures are included because laptops lose the network
         * briefly far more often than base URLs are mistyped. */
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_PARTIAL_FILE:
        case CURLE_GOT_NOTHING:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
            if (status)
                ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                                     "connection to %s dropped during the HTTP %ld response: %s",
                                     where, status, why);
            else
                ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE, "cannot reach %s: %s", where,
                                     why);
            err->retryable = true;
            break;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                                 "TLS verification failed for %s (not retried): %s", where, why);
            break;
        case CURLE_URL_MALFORMAT:
        case CURLE_UNSUPPORTED_PROTOCOL:
            ret = loom_error_set(err, LOOM_ERR_CONFIG, "bad model URL %s: %s", where, why);
            break;
        case CURLE_WEIRD_SERVER_REPLY:
            ret = loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL, "malformed HTTP reply from %s: %s",
                                 where, why);
            break;
        default:
            ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE, "request to %s failed: %s", where,
                                 why);
            break;
        }
    }
    err->http_status = (int)status;
    if (x->resp->retry_after_s >= 0)
        err->retry_after_s = x->resp->retry_after_s;
    return ret;
}

int http_perform(const http_request *req, http_body_fn on_body, void *ctx,
                 http_response *resp, loom_error *err)
{
    loom_error scratch;
    if (!err)
        err = &scratch;
    loom_error_clear(err);
    memset(resp, 0, sizeof *resp);
    resp->retry_after_s = -1;

    if (!req || !req->url || !*req->url)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "http request without a URL");
    char where[512];
    url_for_message(req->url, where, sizeof where);
    if (cancel_requested(req->cancel))
        return loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "request to %s cancelled", where);

    http_global_init();
    CURL *h = curl_easy_init();
    if (!h)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "curl_easy_init failed");

    xfer x = {
        .req = req,
        .on_body = on_body,
        .ctx = ctx,
        .resp = resp,
        .idle_ms = req->idle_timeout_ms > 0 ? req->idle_timeout_ms : DEFAULT_IDLE_TIMEOUT_MS,
        .last_activity_ms = clock_mono_ms(),
    };
    long connect_ms =
        req->connect_timeout_ms > 0 ? req->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;

    struct curl_slist *hdrs = NULL;
    const char *bad = NULL;
    for (const char *const *hp = req->headers; hp && *hp && !bad; hp++) {
        struct curl_slist *next = curl_slist_append(hdrs, *hp);
        if (!next)
            bad = "a request header";
        hdrs = next ? next : hdrs;
    }
    /* An empty Expect: stops curl from waiting for 100-continue on big
     * bodies, which many API gateways never send. */
    struct curl_slist *next = bad ? NULL : curl_slist_append(hdrs, "Expect:");
    if (!next && !bad)
        bad = "the Expect header";
    hdrs = next ? next : hdrs;

    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';

#define SETOPT(opt, val)                                         \
    do {                                                         \
        if (!bad && curl_easy_setopt(h, opt, val) != CURLE_OK) \
            bad = #opt;                                          \
    } while (0)

    SETOPT(CURLOPT_URL, req->url);
    SETOPT(CURLOPT_ERRORBUFFER, errbuf);
    /* Signals would hit whichever thread runs the loop; timeouts without
     * them are what a multi-threaded harness needs. */
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SETOPT(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    /* The defaults already verify; stating it keeps it from being "tuned". */
    SETOPT(CURLOPT_SSL_VERIFYPEER, 1L);
    SETOPT(CURLOPT_SSL_VERIFYHOST, 2L);
    SETOPT(CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    SETOPT(CURLOPT_LOW_SPEED_LIMIT, 1L);
    SETOPT(CURLOPT_LOW_SPEED_TIME, (x.idle_ms + 999) / 1000);
    SETOPT(CURLOPT_USERAGENT, "loom/" LOOM_VERSION_STRING);
    SETOPT(CURLOPT_HTTPHEADER, hdrs);
    SETOPT(CURLOPT_HEADERFUNCTION, on_header);
    SETOPT(CURLOPT_HEADERDATA, &x);
    SETOPT(CURLOPT_WRITEFUNCTION, on_write);
    SETOPT(CURLOPT_WRITEDATA, &x);
    SETOPT(CURLOPT_XFERINFOFUNCTION, on_progress);
    SETOPT(CURLOPT_XFERINFODATA, &x);
    SETOPT(CURLOPT_NOPROGRESS, 0L);

    const char *method = req->method ? req->method : req->body ? "POST" : "GET";
    if (strcmp(method, "GET") == 0) {
        SETOPT(CURLOPT_HTTPGET, 1L);
    } else if (strcmp(method, "HEAD") == 0) {
        SETOPT(CURLOPT_NOBODY, 1L);
    } else {
        if (strcmp(method, "POST") == 0)
            SETOPT(CURLOPT_POST, 1L);
        else
            SETOPT(CURLOPT_CUSTOMREQUEST, method);
        if (req->body || strcmp(method, "POST") == 0) {
            SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req->body ? req->body_len : 0));
            SETOPT(CURLOPT_POSTFIELDS, req->body ? req->body : "");
        }
    }
#undef SETOPT

    int ret = 0;
    if (bad) {
        ret = loom_error_set(err, LOOM_ERR_INTERNAL, "setting up the request to %s: %s failed",
                             where, bad);
    } else {
        CURLcode rc = curl_easy_perform(h);
        long code = 0;
        if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code)
            resp->status = code;
        if (rc != CURLE_OK || x.cancelled || x.idle_expired || x.body_stopped)
            ret = classify(rc, &x, where, errbuf[0] ? errbuf : curl_easy_strerror(rc), err);
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return ret;
}

/* http_curl.c — the libcurl transport: one easy handle per request, with
 * libcurl itself loaded by dlopen on first use.
 *
 * Owns the mapping from libcurl's view of a transfer (CURLcode, callbacks,
 * headers) to the shared one in http_internal.h, and how cancellation and
 * idle streams end inside libcurl. What a response means (headers kept,
 * error bodies, failure reports) is http.c's, shared with http_plain.c.
 *
 * Why dlopen: libcurl drags in some thirty libraries (OpenSSL, GnuTLS,
 * Kerberos, LDAP, SSH, ...) whose relocation at exec dominated the start-up
 * of a run against a local server; loaded here instead, only runs that need
 * https or a proxy pay for it. <curl/curl.h> still supplies the types and
 * constants, so the build needs the -dev package and the run needs
 * libcurl.so.4 only when it goes this way.
 */
#include "net/http_curl.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"

/* The part of libcurl's API this file calls, resolved once. */
static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *h);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *h);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
} lc;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_error[256];

static void load_once_fn(void)
{
    /* RTLD_LOCAL keeps libcurl's dependencies (OpenSSL above all) out of the
     * global namespace, where they could satisfy some other library's
     * symbols by accident. */
    void *so = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "%s", why ? why : "dlopen failed");
        return;
    }
    const char *missing = NULL;
#define SYM(field, name)                                           \
    do {                                                           \
        void *p = dlsym(so, name);                                 \
        if (!p && !missing)                                        \
            missing = name;                                        \
        lc.field = (__typeof__(lc.field))p;                        \
    } while (0)
    SYM(global_init, "curl_global_init");
    SYM(easy_init, "curl_easy_init");
    SYM(easy_setopt, "curl_easy_setopt");
    SYM(easy_perform, "curl_easy_perform");
    SYM(easy_getinfo, "curl_easy_getinfo");
    SYM(easy_cleanup, "curl_easy_cleanup");
    SYM(easy_strerror, "curl_easy_strerror");
    SYM(slist_append, "curl_slist_append");
    SYM(slist_free_all, "curl_slist_free_all");
#undef SYM
    if (missing) {
        snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s", missing);
        return;
    }
    /* Never undone: the library stays loaded until exit, and a cleanup at
     * exit could pull OpenSSL from under a transfer still running on
     * another thread. Leak checkers see its state as reachable. */
    if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed");
        return;
    }
    loaded = true;
}

typedef struct xfer {
    http_rx *rx;
    int64_t last_activity_ms;
    curl_off_t seen_dl, seen_ul;
} xfer;

static size_t on_header(char *buf, size_t size, size_t nitems, void *userdata)
{
    xfer *x = userdata;
    size_t n = size * nitems, len = n;
    x->last_activity_ms = clock_mono_ms();
    while (len && (buf[len - 1] == '\r' || buf[len - 1] == '\n' || buf[len - 1] == ' ' ||
                   buf[len - 1] == '\t'))
        len--;
    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        long status = 0;
        const char *sp = memchr(buf, ' ', len);
        if (sp) {
            for (const char *c = sp + 1; c < buf + len && *c >= '0' && *c <= '9'; c++)
                status = status * 10 + (*c - '0');
        }
        http_rx_status(x->rx, status < 1000 ? status : 0);
        return n;
    }
    const char *colon = memchr(buf, ':', len);
    if (!colon)
        return n;
    size_t name_len = (size_t)(colon - buf);
    const char *v = colon + 1;
    while (v < buf + len && (*v == ' ' || *v == '\t'))
        v++;
    http_rx_header(x->rx, buf, name_len, v, (size_t)(buf + len - v));
    return n;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    xfer *x = userdata;
    size_t n = size * nmemb;
    x->last_activity_ms = clock_mono_ms();
    if (n == 0)
        return 0;
    /* Any count other than n makes curl fail with WRITE_ERROR. */
    return http_rx_body(x->rx, data, n) ? 0 : n;
}

/* Cancellation and the precise idle timeout both live here. LOW_SPEED_TIME
 * is kept as a backstop, but curl averages speed over a window of about five
 * seconds, so alone it lets a stream that stalls right after a burst run
 * several seconds past the limit. */
static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    xfer *x = userdata;
    if (cancel_requested(x->rx->req->cancel)) {
        x->rx->cancelled = true;
        return 1;
    }
    int64_t now = clock_mono_ms();
    if (http_rx_past_deadline(x->rx, now))
        return 1;
    if (dlnow != x->seen_dl || ulnow != x->seen_ul) {
        x->seen_dl = dlnow;
        x->seen_ul = ulnow;
        x->last_activity_ms = now;
    } else if (now - x->last_activity_ms >= x->rx->idle_ms) {
        x->rx->idle_expired = true;
        return 1;
    }
    return 0;
}

static http_fail_kind kind_of(CURLcode rc)
{
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
        return HTTP_FAIL_TIMEOUT;
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
        return HTTP_FAIL_BROKEN;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        return HTTP_FAIL_TLS;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return HTTP_FAIL_URL;
    case CURLE_WEIRD_SERVER_REPLY:
        return HTTP_FAIL_PROTOCOL;
    default:
        return HTTP_FAIL_OTHER;
    }
}

int http_curl_perform(http_rx *rx)
{
    const http_request *req = rx->req;
    loom_error *err = rx->err;
    pthread_once(&load_once, load_once_fn);
    if (!loaded)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "https and proxies need libcurl (libcurl.so.4): %s", load_error);

    CURL *h = lc.easy_init();
    if (!h)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "curl_easy_init failed");

    xfer x = {.rx = rx, .last_activity_ms = clock_mono_ms()};

    struct curl_slist *hdrs = NULL;
    const char *bad = NULL;
    for (const char *const *hp = req->headers; hp && *hp && !bad; hp++) {
        struct curl_slist *next = lc.slist_append(hdrs, *hp);
        if (!next)
            bad = "a request header";
        hdrs = next ? next : hdrs;
    }
    /* An empty Expect: stops curl from waiting for 100-continue on big
     * bodies, which many API gateways never send. */
    struct curl_slist *next = bad ? NULL : lc.slist_append(hdrs, "Expect:");
    if (!next && !bad)
        bad = "the Expect header";
    hdrs = next ? next : hdrs;

    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';

#define SETOPT(opt, val)                                            \
    do {                                                            \
        if (!bad && lc.easy_setopt(h, opt, val) != CURLE_OK)        \
            bad = #opt;                                             \
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
    SETOPT(CURLOPT_CONNECTTIMEOUT_MS, rx->connect_ms);
    SETOPT(CURLOPT_LOW_SPEED_LIMIT, 1L);
    SETOPT(CURLOPT_LOW_SPEED_TIME, (rx->idle_ms + 999) / 1000);
    /* The progress callback ends the transfer at the deadline with our
     * message; curl's own timer, a little later, is the backstop. */
    if (rx->total_ms)
        SETOPT(CURLOPT_TIMEOUT_MS, rx->total_ms + 2000);
    SETOPT(CURLOPT_USERAGENT, HTTP_USER_AGENT);
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
                             rx->where, bad);
    } else {
        CURLcode rc = lc.easy_perform(h);
        long code = 0;
        if (lc.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code)
            rx->resp->status = code;
        if (rc != CURLE_OK || rx->cancelled || rx->idle_expired || rx->deadline_expired ||
            rx->body_stopped)
            ret = http_fail(rx, kind_of(rc), errbuf[0] ? errbuf : lc.easy_strerror(rc));
    }
    lc.slist_free_all(hdrs);
    lc.easy_cleanup(h);
    return ret;
}

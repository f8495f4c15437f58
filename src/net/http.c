/* http.c — http_perform: picks the transport for a request, and owns what a
 * response means whichever transport carried it.
 *
 * Two transports sit behind http.h. http_plain.c speaks HTTP/1.1 itself and
 * carries every http:// request no proxy applies to: local model servers and
 * every test. http_curl.c carries the rest (https, proxies, URLs only libcurl
 * understands) through libcurl, which it loads on first use. The split is
 * about start-up cost: merely linking libcurl makes the dynamic linker
 * relocate some thirty libraries before main, several times what loom -p
 * spends on its own work against a local server (docs/http.md has the
 * figures). LOOM_HTTP_CLIENT=curl sends everything to libcurl, as an escape
 * hatch and so the tests can hold both transports to the same contract.
 *
 * Contract details beyond http.h, the same on both transports:
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
#include "net/http.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "net/http_curl.h"
#include "net/http_internal.h"
#include "net/http_plain.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_IDLE_TIMEOUT_MS 300000L

void http_global_init(void)
{
    /* Nothing to do up front any more: libcurl is loaded and initialised by
     * the first request that needs it (http_curl.c), and the plain transport
     * has no process-wide state. Kept so callers need not know which. */
}

void http_response_free(http_response *resp)
{
    if (!resp)
        return;
    free(resp->request_id);
    free(resp->content_type);
    free(resp->location);
    for (int i = 0; i < HTTP_CAPTURE_MAX; i++) {
        free(resp->captured[i]);
        resp->captured[i] = NULL;
    }
    str_free(&resp->error_body);
    resp->request_id = NULL;
    resp->content_type = NULL;
    resp->location = NULL;
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

/* ---- HTTP-date (RFC 9110 §5.6.7) ---- */

static void skip_blanks(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

static bool take_number(const char **p, int min_digits, int max_digits, int *out, int *digits)
{
    int n = 0, v = 0;
    while (n < max_digits && isdigit((unsigned char)(*p)[n])) {
        v = v * 10 + ((*p)[n] - '0');
        n++;
    }
    if (n < min_digits || isdigit((unsigned char)(*p)[n]))
        return false;
    *p += n;
    *out = v;
    if (digits)
        *digits = n;
    return true;
}

static bool take_month(const char **p, int *mon)
{
    static const char names[] = "janfebmaraprmayjunjulaugsepoctnovdec";
    if (!isalpha((unsigned char)(*p)[0]) || !isalpha((unsigned char)(*p)[1]) ||
        !isalpha((unsigned char)(*p)[2]) || isalpha((unsigned char)(*p)[3]))
        return false;
    char want[3] = {(char)tolower((unsigned char)(*p)[0]), (char)tolower((unsigned char)(*p)[1]),
                    (char)tolower((unsigned char)(*p)[2])};
    for (int i = 0; i < 12; i++) {
        if (memcmp(names + 3 * i, want, 3) == 0) {
            *mon = i;
            *p += 3;
            return true;
        }
    }
    return false;
}

/* Never steps over the terminating NUL, so a cut-off date stops here. */
static bool take_char(const char **p, char c)
{
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

static bool take_clock(const char **p, struct tm *tm)
{
    return take_number(p, 2, 2, &tm->tm_hour, NULL) && take_char(p, ':') &&
           take_number(p, 2, 2, &tm->tm_min, NULL) && take_char(p, ':') &&
           take_number(p, 2, 2, &tm->tm_sec, NULL);
}

time_t http_parse_date(const char *s)
{
    struct tm tm = {0};
    const char *p = s;
    int year_digits = 4;
    skip_blanks(&p);
    while (isalpha((unsigned char)*p)) /* the weekday, which timegm ignores */
        p++;
    if (*p == ',')
        p++;
    skip_blanks(&p);
    if (isdigit((unsigned char)*p)) {
        /* IMF-fixdate "06 Nov 1994 08:49:37 GMT" or RFC 850 "06-Nov-94 ..." */
        if (!take_number(&p, 1, 2, &tm.tm_mday, NULL))
            return (time_t)-1;
        char sep = *p;
        if ((sep != ' ' && sep != '-') || !take_char(&p, sep))
            return (time_t)-1;
        if (!take_month(&p, &tm.tm_mon) || !take_char(&p, sep) ||
            !take_number(&p, 2, 4, &tm.tm_year, &year_digits) || year_digits == 3)
            return (time_t)-1;
        skip_blanks(&p);
        if (!take_clock(&p, &tm))
            return (time_t)-1;
        skip_blanks(&p);
        /* The grammar says GMT; UTC is what a sloppy server writes instead. */
        if (strncasecmp(p, "GMT", 3) == 0 || strncasecmp(p, "UTC", 3) == 0)
            p += 3;
    } else {
        /* asctime "Nov  6 08:49:37 1994" */
        if (!take_month(&p, &tm.tm_mon))
            return (time_t)-1;
        skip_blanks(&p);
        if (!take_number(&p, 1, 2, &tm.tm_mday, NULL))
            return (time_t)-1;
        skip_blanks(&p);
        if (!take_clock(&p, &tm))
            return (time_t)-1;
        skip_blanks(&p);
        if (!take_number(&p, 4, 4, &tm.tm_year, NULL))
            return (time_t)-1;
    }
    skip_blanks(&p);
    if (*p || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60)
        return (time_t)-1;
    if (year_digits == 2) {
        /* RFC 9110: a two-digit year more than 50 years ahead is in the past. */
        time_t now = time(NULL);
        struct tm today;
        gmtime_r(&now, &today);
        int year = 2000 + tm.tm_year;
        if (year > today.tm_year + 1900 + 50)
            year -= 100;
        tm.tm_year = year;
    }
    tm.tm_year -= 1900;
    return timegm(&tm);
}

/* ---- response bookkeeping ---- */

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
    time_t when = http_parse_date(buf);
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

void http_rx_status(http_rx *rx, long status)
{
    http_response *r = rx->resp;
    free(r->request_id);
    free(r->content_type);
    free(r->location);
    r->request_id = NULL;
    r->content_type = NULL;
    r->location = NULL;
    for (int i = 0; i < HTTP_CAPTURE_MAX; i++) {
        free(r->captured[i]);
        r->captured[i] = NULL;
    }
    r->retry_after_s = -1;
    rx->retry_after_ms_seen = false;
    r->status = status > 0 && status < 1000 ? status : 0;
}

void http_rx_header(http_rx *rx, const char *name, size_t name_len, const char *v, size_t vlen)
{
    http_response *r = rx->resp;
    const char *const *want = rx->req->capture_headers;
    for (int i = 0; want && want[i] && i < HTTP_CAPTURE_MAX; i++) {
        if (name_is(name, name_len, want[i])) {
            free(r->captured[i]);
            r->captured[i] = xstrndup(v, vlen);
        }
    }
    if (name_is(name, name_len, "retry-after-ms")) {
        double s = parse_retry_after_ms(v, vlen);
        if (s >= 0) {
            r->retry_after_s = s;
            rx->retry_after_ms_seen = true;
        }
    } else if (name_is(name, name_len, "retry-after")) {
        double s = parse_retry_after(v, vlen);
        if (s >= 0 && !rx->retry_after_ms_seen)
            r->retry_after_s = s;
    } else if (name_is(name, name_len, "request-id") || name_is(name, name_len, "x-request-id")) {
        if (!r->request_id)
            r->request_id = xstrndup(v, vlen);
    } else if (name_is(name, name_len, "content-type")) {
        free(r->content_type);
        r->content_type = xstrndup(v, vlen);
    } else if (name_is(name, name_len, "location")) {
        free(r->location);
        r->location = xstrndup(v, vlen);
    }
}

int http_rx_body(http_rx *rx, const char *data, size_t n)
{
    http_response *r = rx->resp;
    if (n == 0)
        return 0;
    if (r->status >= 200 && r->status < 300) {
        r->body_bytes += n;
        if (rx->on_body && rx->on_body(rx->ctx, data, n) != 0) {
            rx->body_stopped = true;
            return 1;
        }
        return 0;
    }
    size_t have = r->error_body.len;
    if (have < HTTP_ERROR_BODY_CAP)
        str_append(&r->error_body, data,
                   n < HTTP_ERROR_BODY_CAP - have ? n : HTTP_ERROR_BODY_CAP - have);
    return 0;
}

bool http_rx_past_deadline(http_rx *rx, int64_t now_ms)
{
    if (rx->deadline_ms && now_ms >= rx->deadline_ms)
        rx->deadline_expired = true;
    return rx->deadline_expired;
}

int http_fail(http_rx *rx, http_fail_kind kind, const char *why)
{
    loom_error *err = rx->err;
    const char *where = rx->where;
    long status = rx->resp->status;
    int ret;

    if (rx->cancelled || cancel_requested(rx->req->cancel))
        return loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "request to %s cancelled", where);

    if (rx->deadline_expired) {
        /* Not retried: a server that streams without end (pings, keep-alive
         * comments) would hold the next attempt just as long. */
        ret = loom_error_set(err, LOOM_ERR_MODEL_TIMEOUT,
                             "the request to %s did not finish within its overall deadline of "
                             "%ld ms (bytes kept coming, but not the end of the response)",
                             where, rx->total_ms);
        err->retryable = false;
    } else if (rx->body_stopped) {
        if (err->code != LOOM_OK) {
            if (!err->http_status)
                err->http_status = (int)status;
            return -(int)err->code;
        }
        ret = loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                             "reading the response from %s: the body handler stopped the transfer",
                             where);
    } else if (rx->idle_expired) {
        ret = loom_error_set(err, LOOM_ERR_MODEL_TIMEOUT, "no data from %s for %ld ms", where,
                             rx->idle_ms);
        err->retryable = true;
    } else {
        if (!why)
            why = "unknown failure";
        switch (kind) {
        case HTTP_FAIL_TIMEOUT:
            ret = loom_error_set(err, LOOM_ERR_MODEL_TIMEOUT, "timed out talking to %s: %s", where,
                                 why);
            err->retryable = true;
            break;
        /* The connection failed or broke: a new attempt may well succeed.
         * DNS failures are included because laptops lose the network
         * briefly far more often than base URLs are mistyped. */
        case HTTP_FAIL_BROKEN:
            if (status)
                ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                                     "connection to %s dropped during the HTTP %ld response: %s",
                                     where, status, why);
            else
                ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE, "cannot reach %s: %s", where,
                                     why);
            err->retryable = true;
            break;
        case HTTP_FAIL_TLS:
            ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                                 "TLS verification failed for %s (not retried): %s", where, why);
            break;
        case HTTP_FAIL_URL:
            ret = loom_error_set(err, LOOM_ERR_CONFIG, "bad model URL %s: %s", where, why);
            break;
        case HTTP_FAIL_PROTOCOL:
            ret = loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL, "malformed HTTP reply from %s: %s",
                                 where, why);
            break;
        case HTTP_FAIL_NONE:
        case HTTP_FAIL_OTHER:
        default:
            ret = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE, "request to %s failed: %s", where,
                                 why);
            break;
        }
    }
    err->http_status = (int)status;
    if (rx->resp->retry_after_s >= 0)
        err->retry_after_s = rx->resp->retry_after_s;
    return ret;
}

/* ---- dispatch ---- */

static bool curl_forced(void)
{
    const char *v = getenv("LOOM_HTTP_CLIENT");
    return v && strcasecmp(v, "curl") == 0;
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

    http_rx rx = {
        .req = req,
        .on_body = on_body,
        .ctx = ctx,
        .resp = resp,
        .err = err,
        .where = where,
        .connect_ms =
            req->connect_timeout_ms > 0 ? req->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS,
        .idle_ms = req->idle_timeout_ms > 0 ? req->idle_timeout_ms : DEFAULT_IDLE_TIMEOUT_MS,
        .total_ms = req->total_timeout_ms > 0 ? req->total_timeout_ms : 0,
    };
    if (rx.total_ms)
        rx.deadline_ms = clock_mono_ms() + rx.total_ms;
    if (!curl_forced() && http_plain_accepts(req->url))
        return http_plain_perform(&rx);
    return http_curl_perform(&rx);
}

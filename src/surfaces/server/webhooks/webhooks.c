/* webhooks.c — the webhook sender of loom serve (webhooks.h): the queue of
 * deliveries, the one sender thread that works it, the retry schedule and
 * the delivery log in the store; the HTTP attempt (libcurl), the URL check
 * and the Standard Webhooks signature.
 *
 * Owns: every queued delivery (a job: its own copies of the url, secret and
 * body, so a tenant's config may go away after emit), the thread, and the
 * libcurl global init reference it took.
 *
 * Threading: webhooks_emit and webhooks_flush may be called from any thread;
 * they only touch the queue under wh->mu. The sender thread is the only one
 * that sends and the only one that writes delivery documents, so the log of
 * one delivery is written in attempt order. webhooks_free must not race with
 * another call on the same webhooks. */
#include "surfaces/server/webhooks/webhooks.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "base/str.h"
#include "base/uuid.h"
#include "base/sha256.h"

/* ---- one HTTP attempt, the URL check, the signature ---- */

typedef struct wh_result {
    long http_status;       /* 0: no answer */
    char error[256];        /* "" when the receiver answered */
} wh_result;

static bool host_is_loopback(const char *host)
{
    if (strcasecmp(host, "localhost") == 0)
        return true;
    char buf[64];
    size_t n = strlen(host);
    /* curl gives an IPv6 host with its brackets. */
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']' && n - 2 < sizeof buf) {
        memcpy(buf, host + 1, n - 2);
        buf[n - 2] = 0;
        char *zone = strchr(buf, '%');
        if (zone)
            *zone = 0;
        struct in6_addr a6;
        if (inet_pton(AF_INET6, buf, &a6) != 1)
            return false;
        if (IN6_IS_ADDR_LOOPBACK(&a6))
            return true;
        return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
    }
    struct in_addr a4;
    if (inet_pton(AF_INET, host, &a4) != 1)
        return false;
    return (ntohl(a4.s_addr) >> 24) == 127;
}

/* 0 when url may be sent to. The host is taken by curl's own URL parser,
 * the one the transfer uses, so no URL can mean one host here and another
 * there. */
static int wh_url_check(const char *url, bool allow_remote, char *why, size_t cap)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
        snprintf(why, cap, "refused: %s is not a URL", url);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0)) {
        snprintf(why, cap, "refused: %s is not an http:// or https:// URL", url);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0]) {
        snprintf(why, cap, "refused: %s names no host", url);
        goto out;
    }
    if (!allow_remote && !host_is_loopback(host)) {
        snprintf(why, cap,
                 "refused: %s is not a loopback host (127.0.0.0/8, ::1, localhost) and "
                 "remote webhooks are not allowed", host);
        goto out;
    }
    rc = 0;
out:
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

char *webhooks_sign(const char *secret, const char *msg_id, long timestamp, const char *body)
{
    if (!secret || !msg_id || !body)
        return NULL;
    if (strncmp(secret, "whsec_", 6) == 0)
        secret += 6;
    size_t slen = strlen(secret);
    if (slen == 0 || slen % 4 != 0)
        return NULL;
    unsigned char *key = xmalloc(3 * (slen / 4) + 1);
    long klen = base64_decode(secret, slen, key);
    if (klen <= 0) {
        free(key);
        return NULL;
    }
    loom_str msg = LOOM_STR_INIT;
    str_printf(&msg, "%s.%ld.", msg_id, timestamp);
    str_puts(&msg, body);
    unsigned char mac[SHA256_LEN];
    hmac_sha256(key, (size_t)klen, str_cstr(&msg), msg.len, mac);
    str_free(&msg);
    free(key);
    loom_str out = LOOM_STR_INIT;
    str_puts(&out, "v1,");
    str_put_base64(&out, mac, sizeof mac);
    return str_steal(&out);
}

static size_t discard_body(char *data, size_t size, size_t n, void *arg)
{
    (void)data, (void)arg;
    return size * n;
}

/* Aborts the transfer when webhooks_free is stopping the sender. */
static int stop_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    return atomic_load((atomic_bool *)arg) ? 1 : 0;
}

static wh_result wh_post(const char *url, const char *secret, const char *msg_id,
                         const char *body, int timeout_ms, atomic_bool *stop)
{
    wh_result r = {0};
    long ts = (long)(clock_wall_ms() / 1000);
    char *sig = webhooks_sign(secret, msg_id, ts, body);
    if (!sig) {
        snprintf(r.error, sizeof r.error, "the webhook's secret is not base64 (whsec_…)");
        return r;
    }
    CURL *c = curl_easy_init();
    if (!c) {
        free(sig);
        snprintf(r.error, sizeof r.error, "libcurl could not make a handle");
        return r;
    }
    loom_str h = LOOM_STR_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "content-type: application/json");
    str_printf(&h, "webhook-id: %s", msg_id);
    hdrs = curl_slist_append(hdrs, str_cstr(&h));
    str_clear(&h);
    str_printf(&h, "webhook-timestamp: %ld", ts);
    hdrs = curl_slist_append(hdrs, str_cstr(&h));
    str_clear(&h);
    str_printf(&h, "webhook-signature: %s", sig);
    hdrs = curl_slist_append(hdrs, str_cstr(&h));
    hdrs = curl_slist_append(hdrs, "expect:"); /* no 100-continue round trip */
    str_free(&h);
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "loom-serve webhooks");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, stop_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, stop);
    CURLcode cc = curl_easy_perform(c);
    if (cc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.http_status);
    else
        snprintf(r.error, sizeof r.error, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    free(sig);
    return r;
}

#define WH_BACKOFF_CAP_MS 60000

typedef struct wh_job {
    struct wh_job *next;
    char *delivery_id, *webhook_id, *tenant_id, *event_type, *event_id;
    char *url, *secret, *body;
    char created_at[32];
    char *refused;          /* why the URL is not sent to (logged, never sent) */
    int attempt;            /* attempts made so far */
    int64_t due_ms;         /* monotonic time of the next attempt */
    json_t *history;        /* [{attempt, at, http_status, error}] for the log */
} wh_job;

struct webhooks {
    store *st;
    webhooks_options opts;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* CLOCK_MONOTONIC: the queue changed or stop */
    wh_job *queue;          /* unordered; the thread picks the earliest due */
    bool busy;              /* the thread holds a job outside the queue */
    atomic_bool stop;       /* read by the curl progress callback too */
    pthread_t thread;
    bool thread_started;
};

static void job_free(wh_job *j)
{
    if (!j)
        return;
    free(j->delivery_id), free(j->webhook_id), free(j->tenant_id), free(j->event_type);
    free(j->event_id), free(j->url), free(j->secret), free(j->body), free(j->refused);
    json_decref(j->history);
    free(j);
}

/* "whd_" + 26 base32 digits of a UUIDv7: unique and sorted by time. */
static char *delivery_id_new(void)
{
    static const char digits[] = "0123456789abcdefghjkmnpqrstvwxyz";
    char u[UUID_STR_LEN];
    uuid_v7(u);
    unsigned char b[16];
    size_t nb = 0;
    for (const char *p = u; *p && nb < 16; p++) {
        if (*p == '-')
            continue;
        b[nb++] = (unsigned char)((str_hex_digit(p[0]) << 4) | str_hex_digit(p[1]));
        p++;
    }
    char out[4 + 26 + 1] = "whd_";
    /* 128 bits as 26 five-bit digits, most significant first (two pad bits
     * at the end keep the order of the ids the order of the UUIDs). */
    for (int i = 0; i < 26; i++) {
        int bit = i * 5, v = 0;
        for (int k = 0; k < 5; k++, bit++) {
            int set = bit < 128 ? (b[bit / 8] >> (7 - bit % 8)) & 1 : 0;
            v = (v << 1) | set;
        }
        out[4 + i] = digits[v];
    }
    out[30] = 0;
    return xstrdup(out);
}

/* True when s has a byte a header line may not carry (CR, LF, …). */
static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

static bool subscribed(const tenant_webhook *w, const char *event_type)
{
    if (w->events.n == 0) {
        static const char *const all[] = {"run.completed", "approval.requested",
                                          "artifact.created", "policy.denied"};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            if (strcmp(all[i], event_type) == 0)
                return true;
        return false;
    }
    for (size_t i = 0; i < w->events.n; i++)
        if (w->events.items[i] && strcmp(w->events.items[i], event_type) == 0)
            return true;
    return false;
}

/* {"type", "timestamp", "data"}: the same body for every attempt, so a
 * receiver that deduplicates by webhook-id sees the same message. A payload
 * that is not JSON is sent as data null rather than as broken JSON. */
static char *body_new(const char *event_type, const char *created_at, const char *payload)
{
    json_t *data = payload ? json_loads(payload, JSON_DECODE_ANY, NULL) : NULL;
    json_t *o = json_pack("{s:s, s:s, s:o}", "type", event_type, "timestamp", created_at,
                          "data", data ? data : json_null());
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

/* The delivery document after an attempt (or the refusal). */
static void log_delivery(webhooks *wh, wh_job *j, const char *status, long http_status,
                         const char *error)
{
    char now[32];
    clock_iso8601(clock_wall_ms(), now);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:o, s:o, s:s, s:s, s:O}",
                            "delivery_id", j->delivery_id, "webhook_id", j->webhook_id,
                            "tenant_id", j->tenant_id, "event_type", j->event_type,
                            "event_id", j->event_id, "url", j->url, "attempt", j->attempt,
                            "status", status, "http_status",
                            http_status > 0 ? json_integer(http_status) : json_null(),
                            "error", error ? json_string(error) : json_null(),
                            "created_at", j->created_at, "updated_at", now, "attempts",
                            j->history);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text || !wh->st)
        goto out;
    store_doc_keys keys = {j->tenant_id, j->webhook_id, status, j->created_at};
    srv_error err = {0};
    /* A store failure loses a log line, never the delivery itself. */
    (void)wh->st->ops->put(wh->st, STORE_DELIVERY, j->delivery_id, &keys, text, &err);
    srv_error_clear(&err);
out:
    free(text);
}

static int64_t backoff_ms(const webhooks *wh, int attempts_made)
{
    int64_t ms = wh->opts.first_backoff_ms;
    for (int i = 1; i < attempts_made && ms < WH_BACKOFF_CAP_MS; i++)
        ms *= 2;
    return ms < WH_BACKOFF_CAP_MS ? ms : WH_BACKOFF_CAP_MS;
}

/* One attempt of j (the lock not held). True when j is finished (delivered,
 * failed for good, or refused); false when it goes back to the queue. */
static bool attempt_job(webhooks *wh, wh_job *j)
{
    if (j->refused) {
        log_delivery(wh, j, "failed", 0, j->refused);
        return true;
    }
    j->attempt++;
    char at[32];
    clock_iso8601(clock_wall_ms(), at);
    wh_result r = wh_post(j->url, j->secret, j->event_id, j->body, wh->opts.timeout_ms,
                          &wh->stop);
    json_array_append_new(j->history,
                          json_pack("{s:i, s:s, s:o, s:o}", "attempt", j->attempt, "at", at,
                                    "http_status",
                                    r.http_status > 0 ? json_integer(r.http_status)
                                                      : json_null(),
                                    "error", r.error[0] ? json_string(r.error) : json_null()));
    bool ok = r.http_status >= 200 && r.http_status < 300;
    if (ok) {
        log_delivery(wh, j, "delivered", r.http_status, NULL);
        return true;
    }
    char why[300];
    if (r.error[0])
        snprintf(why, sizeof why, "%s", r.error);
    else
        snprintf(why, sizeof why, "the receiver answered %ld", r.http_status);
    if (r.http_status == 410) {
        /* Standard Webhooks: 410 Gone means the endpoint is gone for good. */
        log_delivery(wh, j, "failed", r.http_status, "410 Gone: the receiver asked to stop");
        return true;
    }
    if (atomic_load(&wh->stop)) {
        /* Not the receiver's fault: the log keeps it pending. */
        log_delivery(wh, j, "pending", r.http_status,
                     "not sent: the server stopped during the attempt");
        return true;
    }
    if (j->attempt >= wh->opts.max_attempts) {
        char last[400];
        snprintf(last, sizeof last, "%s (gave up after %d attempts)", why, j->attempt);
        log_delivery(wh, j, "failed", r.http_status, last);
        return true;
    }
    log_delivery(wh, j, "pending", r.http_status, why);
    j->due_ms = clock_mono_ms() + backoff_ms(wh, j->attempt);
    return false;
}

/* The earliest due job, unlinked, or NULL with *wait_ms how long until one
 * is due (-1: the queue is empty). Called with the lock held. */
static wh_job *take_due(webhooks *wh, int64_t *wait_ms)
{
    wh_job **best = NULL;
    for (wh_job **p = &wh->queue; *p; p = &(*p)->next)
        if (!best || (*p)->due_ms < (*best)->due_ms)
            best = p;
    if (!best) {
        *wait_ms = -1;
        return NULL;
    }
    int64_t now = clock_mono_ms();
    if ((*best)->due_ms > now) {
        *wait_ms = (*best)->due_ms - now;
        return NULL;
    }
    wh_job *j = *best;
    *best = j->next;
    j->next = NULL;
    return j;
}

static void *sender_main(void *arg)
{
    webhooks *wh = arg;
    pthread_mutex_lock(&wh->mu);
    while (!atomic_load(&wh->stop)) {
        int64_t wait_ms = 0;
        wh_job *j = take_due(wh, &wait_ms);
        if (!j) {
            if (wait_ms < 0) {
                pthread_cond_wait(&wh->cv, &wh->mu);
            } else {
                struct timespec ts;
                clock_deadline(&ts, CLOCK_MONOTONIC, (long)wait_ms);
                pthread_cond_timedwait(&wh->cv, &wh->mu, &ts);
            }
            continue;
        }
        wh->busy = true;
        pthread_mutex_unlock(&wh->mu);
        bool done = attempt_job(wh, j);
        pthread_mutex_lock(&wh->mu);
        wh->busy = false;
        if (done) {
            job_free(j);
        } else {
            j->next = wh->queue;
            wh->queue = j;
        }
        pthread_cond_broadcast(&wh->cv); /* flush waits on the same condvar */
    }
    pthread_mutex_unlock(&wh->mu);
    return NULL;
}

webhooks *webhooks_new(store *st, const webhooks_options *opts, srv_error *err)
{
    webhooks *wh = xcalloc(1, sizeof *wh);
    wh->st = st;
    wh->opts = (webhooks_options){5, 500, 10000, false};
    if (opts) {
        wh->opts.allow_remote = opts->allow_remote;
        if (opts->max_attempts > 0)
            wh->opts.max_attempts = opts->max_attempts;
        if (opts->first_backoff_ms > 0)
            wh->opts.first_backoff_ms = opts->first_backoff_ms;
        if (opts->timeout_ms > 0)
            wh->opts.timeout_ms = opts->timeout_ms;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        free(wh);
        srv_fail(err, LOOM_ERR_INTERNAL, "webhooks: libcurl could not be initialized");
        return NULL;
    }
    pthread_mutex_init(&wh->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wh->cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&wh->stop, false);
    if (pthread_create(&wh->thread, NULL, sender_main, wh) != 0) {
        webhooks_free(wh);
        srv_fail(err, LOOM_ERR_INTERNAL, "webhooks: the sender thread could not start");
        return NULL;
    }
    wh->thread_started = true;
    return wh;
}

void webhooks_emit(webhooks *wh, const tenant_config *tenant, const char *event_type,
                   const char *event_id, const char *payload_json)
{
    if (!wh || !tenant || !event_type || !event_id)
        return;
    char created[32];
    clock_iso8601(clock_wall_ms(), created);
    char *body = NULL;
    for (size_t i = 0; i < tenant->n_webhooks; i++) {
        const tenant_webhook *w = &tenant->webhooks[i];
        if (!w->url || !subscribed(w, event_type))
            continue;
        if (!body)
            body = body_new(event_type, created, payload_json);
        wh_job *j = xcalloc(1, sizeof *j);
        j->delivery_id = delivery_id_new();
        j->webhook_id = xstrdup(w->id ? w->id : "wh");
        j->tenant_id = xstrdup(tenant->id ? tenant->id : "");
        j->event_type = xstrdup(event_type);
        j->event_id = xstrdup(event_id);
        j->url = xstrdup(w->url);
        j->secret = xstrdup(w->secret ? w->secret : "");
        j->body = xstrdup(body);
        j->history = json_array();
        memcpy(j->created_at, created, sizeof created);
        char why[256];
        char *probe = webhooks_sign(j->secret, "probe", 0, "");
        if (wh_url_check(w->url, wh->opts.allow_remote, why, sizeof why) != 0)
            j->refused = xstrdup(why);
        else if (has_control(event_id))
            /* it becomes a header line: no way to inject another header */
            j->refused = xstrdup("refused: the event id has control characters");
        else if (!probe) /* never sent unsigned, and retrying will not help */
            j->refused = xstrdup("refused: the webhook's secret is not base64 (whsec_...)");
        free(probe);
        j->due_ms = clock_mono_ms();
        pthread_mutex_lock(&wh->mu);
        j->next = wh->queue;
        wh->queue = j;
        pthread_cond_broadcast(&wh->cv);
        pthread_mutex_unlock(&wh->mu);
    }
    free(body);
}

bool webhooks_flush(webhooks *wh, int timeout_ms)
{
    if (!wh)
        return true;
    struct timespec ts;
    clock_deadline(&ts, CLOCK_MONOTONIC, timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&wh->mu);
    while ((wh->queue || wh->busy) && !atomic_load(&wh->stop))
        if (pthread_cond_timedwait(&wh->cv, &wh->mu, &ts) != 0)
            break;
    bool drained = !wh->queue && !wh->busy;
    pthread_mutex_unlock(&wh->mu);
    return drained;
}

/* Stops at once: an attempt in flight is aborted (the progress callback
 * sees stop), deliveries still waiting for a retry are dropped from memory
 * and stay "pending" in the log with their last attempt. */
void webhooks_free(webhooks *wh)
{
    if (!wh)
        return;
    pthread_mutex_lock(&wh->mu);
    atomic_store(&wh->stop, true);
    pthread_cond_broadcast(&wh->cv);
    pthread_mutex_unlock(&wh->mu);
    if (wh->thread_started)
        pthread_join(wh->thread, NULL);
    while (wh->queue) {
        wh_job *j = wh->queue;
        wh->queue = j->next;
        job_free(j);
    }
    pthread_cond_destroy(&wh->cv);
    pthread_mutex_destroy(&wh->mu);
    curl_global_cleanup();
    free(wh);
}

/* a2a_push.c — A2A push notification configs: Create/Get/List/Delete per
 * task, kept in one process-wide table (in memory: a config lives as long
 * as the server; docs/a2a.md says so), and the sender that POSTs a
 * StreamResponse to each of a task's URLs. Only loopback URLs are taken
 * (http://127.0.0.1…, localhost, [::1]): the server never reaches out
 * elsewhere. The request carries the config's token as
 * X-A2A-Notification-Token and, with authentication, an Authorization
 * header "<scheme> <credentials>"; a failed delivery is not retried.
 *
 * The webhooks of webhooks.h are the tenant's own subscriptions, signed
 * and retried from the store; these are per-task URLs a client gives, so
 * a small sender of their own fits better.
 *
 * Delivery: the first config of a task starts a watcher thread that
 * reads the task's updates as a stream does (a2a_stream.c: the Task, then
 * status and artifact updates, the terminal status last) and POSTs each
 * StreamResponse to every config the task has then. It ends when the run
 * has ended, when the task has no config left, or at a2a_shutdown (the
 * HTTP layer's stop calls it before the service goes away), which joins
 * every watcher.
 *
 * Threading: the table and the watcher list are behind one mutex; a
 * delivery copies the URLs out and sends without it (a libcurl easy
 * handle per call). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/server/a2a/a2a_internal.h"

#define MAX_CONFIGS 4096

typedef struct push_cfg {
    char *tenant, *task_id, *id, *url, *token, *scheme, *credentials;
} push_cfg;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static push_cfg *table;
static size_t n_table, cap_table;
static unsigned long next_id;

typedef struct watcher {
    pthread_t th;
    char *task_id;
    a2a_stream *s;
    atomic_bool done;
    struct watcher *next;
} watcher;
static watcher *watchers;     /* under mu */
static atomic_bool stopping;

static bool has_config(const char *task_id)
{
    bool any = false;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n_table && !any; i++)
        any = strcmp(table[i].task_id, task_id) == 0;
    pthread_mutex_unlock(&mu);
    return any;
}

static void *watch(void *arg)
{
    watcher *w = arg;
    while (!atomic_load(&stopping) && has_config(w->task_id)) {
        char *j = NULL;
        int rc = a2a_stream_next(w->s, &j, 250);
        if (rc < 0)
            break;
        if (rc > 0) {
            json_t *resp = json_loads(j, 0, NULL);
            json_t *sr = json_object_get(resp, "result");
            if (sr)
                a2a_push_notify(w->task_id, sr);
            json_decref(resp);
        }
        free(j);
    }
    atomic_store(&w->done, true);
    return NULL;
}

/* Joins the watchers that have ended (mu held; an ended one takes it no more). */
static void reap(void)
{
    watcher **pp = &watchers;
    while (*pp) {
        watcher *w = *pp;
        if (atomic_load(&w->done)) {
            *pp = w->next;
            pthread_join(w->th, NULL);
            a2a_stream_free(w->s);
            free(w->task_id);
            free(w);
        } else {
            pp = &w->next;
        }
    }
}

/* Starts the task's watcher unless one runs (mu not held). */
static void ensure_watcher(const a2a_env *env, const principal *who, const char *task_id)
{
    if (atomic_load(&stopping))
        return;
    pthread_mutex_lock(&mu);
    reap();
    for (watcher *w = watchers; w; w = w->next)
        if (strcmp(w->task_id, task_id) == 0) {
            pthread_mutex_unlock(&mu);
            return;
        }
    pthread_mutex_unlock(&mu);
    a2a_fail f;
    int64_t after = a2a_run_tail(env, who, task_id);
    json_t *first = a2a_task_get(env, who, task_id, &f);
    if (!first)
        return;
    char *ctx = xstrdup(json_string_value(json_object_get(first, "contextId")));
    a2a_stream *s = a2a_stream_open(env, who, NULL, task_id, ctx ? ctx : "", after, first, &f);
    free(ctx);
    if (!s)
        return;
    watcher *w = xcalloc(1, sizeof *w);
    w->task_id = xstrdup(task_id);
    w->s = s;
    atomic_init(&w->done, false);
    pthread_mutex_lock(&mu);
    if (pthread_create(&w->th, NULL, watch, w) != 0) {
        pthread_mutex_unlock(&mu);
        a2a_stream_free(s);
        free(w->task_id);
        free(w);
        return;
    }
    w->next = watchers;
    watchers = w;
    pthread_mutex_unlock(&mu);
}

void a2a_shutdown(void)
{
    atomic_store(&stopping, true);
    pthread_mutex_lock(&mu);
    watcher *all = watchers;
    watchers = NULL;
    pthread_mutex_unlock(&mu);
    /* Joined without mu: a watcher takes it to read the table. */
    while (all) {
        watcher *w = all;
        all = w->next;
        pthread_join(w->th, NULL);
        a2a_stream_free(w->s);
        free(w->task_id);
        free(w);
    }
    atomic_store(&stopping, false);
}

static bool loopback_url(const char *u)
{
    static const char *const OK[] = {"http://127.0.0.1:", "http://127.0.0.1/", "http://localhost:",
                                     "http://localhost/", "http://[::1]:", "http://[::1]/", NULL};
    for (size_t i = 0; OK[i]; i++)
        if (strncmp(u, OK[i], strlen(OK[i])) == 0)
            return !strpbrk(u, " \r\n@");
    return false;
}

static json_t *cfg_json(const push_cfg *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(c->id));
    json_object_set_new(o, "taskId", json_string(c->task_id));
    json_object_set_new(o, "url", json_string(c->url));
    if (c->token)
        json_object_set_new(o, "token", json_string(c->token));
    if (c->scheme) {
        json_t *a = json_object();
        json_object_set_new(a, "scheme", json_string(c->scheme));
        json_object_set_new(a, "credentials", json_string(c->credentials ? c->credentials : ""));
        json_object_set_new(o, "authentication", a);
    }
    return o;
}

static void cfg_free(push_cfg *c)
{
    free(c->tenant), free(c->task_id), free(c->id), free(c->url), free(c->token);
    free(c->scheme), free(c->credentials);
}

/* The task must be a run who may see. */
static int check_task(const a2a_env *env, const principal *who, const char *task_id, a2a_fail *f)
{
    if (!task_id || strncmp(task_id, "run_", 4) != 0)
        return a2a_failf(f, A2A_TASK_NOT_FOUND, "no task %.200s", task_id ? task_id : "(none)");
    srv_error err = {0};
    char *rj = env->be->run_get(env->svc, who, task_id, &err);
    if (!rj)
        return a2a_fail_from(f, &err, false);
    free(rj);
    return 0;
}

static const char *str_param(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

int a2a_push_attach(const a2a_env *env, const principal *who, const char *task_id,
                    const json_t *cfg, a2a_fail *f)
{
    const char *url = str_param(cfg, "url");
    json_t *auth = json_object_get(cfg, "authentication");
    if (!url || !*url)
        return a2a_failf(f, RPC_INVALID_PARAMS, "a push notification config needs a url");
    if (!loopback_url(url))
        return a2a_failf(f, RPC_INVALID_PARAMS,
                         "push notification urls must be loopback http (127.0.0.1, localhost, "
                         "[::1]); not %.200s", url);
    if (auth && !json_is_null(auth) && !json_is_object(auth))
        return a2a_failf(f, RPC_INVALID_PARAMS, "authentication must be an object");
    /* They become header lines: no line breaks. */
    const char *vals[] = {str_param(cfg, "token"), str_param(auth, "scheme"),
                          str_param(auth, "credentials")};
    for (size_t i = 0; i < 3; i++)
        if (vals[i] && (strpbrk(vals[i], "\r\n") || strlen(vals[i]) > 1000))
            return a2a_failf(f, RPC_INVALID_PARAMS,
                             "a push token or credential must be one line of at most 1000 bytes");
    if (check_task(env, who, task_id, f) != 0)
        return -1;
    pthread_mutex_lock(&mu);
    if (n_table == MAX_CONFIGS) {
        pthread_mutex_unlock(&mu);
        return a2a_failf(f, A2A_UNSUPPORTED_OPERATION, "too many push notification configs");
    }
    if (n_table == cap_table) {
        cap_table = cap_table ? cap_table * 2 : 16;
        table = xrealloc(table, cap_table * sizeof *table);
    }
    push_cfg *c = &table[n_table];
    memset(c, 0, sizeof *c);
    const char *id = str_param(cfg, "id");
    char gen[32];
    if (!id || !*id) {
        snprintf(gen, sizeof gen, "pnc_%lu", ++next_id);
        id = gen;
    }
    /* The same id on the same task replaces the old config. */
    for (size_t i = 0; i < n_table; i++)
        if (strcmp(table[i].task_id, task_id) == 0 && strcmp(table[i].id, id) == 0) {
            cfg_free(&table[i]);
            table[i] = table[--n_table];
            c = &table[n_table];
            break;
        }
    c->tenant = xstrdup(who->tenant_id ? who->tenant_id : "");
    c->task_id = xstrdup(task_id);
    c->id = xstrdup(id);
    c->url = xstrdup(url);
    c->token = xstrdup(str_param(cfg, "token"));
    if (c->token && !*c->token) {
        free(c->token);
        c->token = NULL;
    }
    c->scheme = xstrdup(str_param(auth, "scheme"));
    c->credentials = xstrdup(str_param(auth, "credentials"));
    n_table++;
    pthread_mutex_unlock(&mu);
    ensure_watcher(env, who, task_id);
    return 0;
}

json_t *a2a_push_create(const a2a_env *env, const principal *who, const json_t *params,
                        a2a_fail *f)
{
    const char *task_id = str_param(params, "taskId");
    if (!task_id || !*task_id) {
        a2a_failf(f, RPC_INVALID_PARAMS, "params.taskId is required");
        return NULL;
    }
    /* v1.0 sends the config itself; an older shape nests it. */
    const json_t *cfg = json_object_get(params, "pushNotificationConfig");
    if (!json_is_object(cfg))
        cfg = params;
    char *id = NULL;
    const char *want = str_param(cfg, "id");
    pthread_mutex_lock(&mu);
    unsigned long before = next_id;
    pthread_mutex_unlock(&mu);
    if (a2a_push_attach(env, who, task_id, cfg, f) != 0)
        return NULL;
    if (want && *want) {
        id = xstrdup(want);
    } else {
        char gen[32];
        snprintf(gen, sizeof gen, "pnc_%lu", before + 1);
        id = xstrdup(gen);
    }
    json_t *out = NULL;
    pthread_mutex_lock(&mu);
    for (size_t i = n_table; i-- > 0 && !out;)
        if (strcmp(table[i].task_id, task_id) == 0 &&
            (strcmp(table[i].id, id) == 0 || !(want && *want)))
            out = cfg_json(&table[i]);
    pthread_mutex_unlock(&mu);
    free(id);
    return out;
}

json_t *a2a_push_get(const a2a_env *env, const principal *who, const json_t *params,
                     a2a_fail *f)
{
    const char *task_id = str_param(params, "taskId"), *id = str_param(params, "id");
    if (check_task(env, who, task_id, f) != 0)
        return NULL;
    json_t *out = NULL;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n_table && !out; i++)
        if (strcmp(table[i].task_id, task_id) == 0 && (!id || !*id || strcmp(table[i].id, id) == 0))
            out = cfg_json(&table[i]);
    pthread_mutex_unlock(&mu);
    if (!out)
        a2a_failf(f, A2A_TASK_NOT_FOUND, "task %s has no push notification config %.100s",
                  task_id, id ? id : "");
    return out;
}

json_t *a2a_push_list(const a2a_env *env, const principal *who, const json_t *params,
                      a2a_fail *f)
{
    const char *task_id = str_param(params, "taskId");
    if (check_task(env, who, task_id, f) != 0)
        return NULL;
    json_t *arr = json_array();
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n_table; i++)
        if (strcmp(table[i].task_id, task_id) == 0)
            json_array_append_new(arr, cfg_json(&table[i]));
    pthread_mutex_unlock(&mu);
    json_t *out = json_object();
    json_object_set_new(out, "configs", arr);
    json_object_set_new(out, "nextPageToken", json_string(""));
    return out;
}

json_t *a2a_push_delete(const a2a_env *env, const principal *who, const json_t *params,
                        a2a_fail *f)
{
    const char *task_id = str_param(params, "taskId"), *id = str_param(params, "id");
    if (check_task(env, who, task_id, f) != 0)
        return NULL;
    if (!id || !*id) {
        a2a_failf(f, RPC_INVALID_PARAMS, "params.id is required");
        return NULL;
    }
    bool found = false;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n_table && !found; i++)
        if (strcmp(table[i].task_id, task_id) == 0 && strcmp(table[i].id, id) == 0) {
            cfg_free(&table[i]);
            table[i] = table[--n_table];
            found = true;
        }
    pthread_mutex_unlock(&mu);
    if (!found) {
        a2a_failf(f, A2A_TASK_NOT_FOUND, "task %s has no push notification config %.100s",
                  task_id, id);
        return NULL;
    }
    return json_object();
}

static size_t discard(char *p, size_t sz, size_t n, void *u)
{
    (void)p, (void)u;
    return sz * n;
}

static void curl_post(const char *url, const char *const *headers, const char *body)
{
    CURL *h = curl_easy_init();
    if (!h)
        return;
    struct curl_slist *hd = NULL;
    for (size_t i = 0; headers[i]; i++)
        hd = curl_slist_append(hd, headers[i]);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_perform(h);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
}

static _Atomic(a2a_push_sender) sender = curl_post;

void a2a_push_set_sender(a2a_push_sender send)
{
    atomic_store(&sender, send ? send : curl_post);
}

static void post_one(const push_cfg *c, const char *body)
{
    char token[1100], auth[1200];
    const char *headers[4];
    size_t n = 0;
    headers[n++] = "Content-Type: application/json";
    if (c->token) {
        snprintf(token, sizeof token, "X-A2A-Notification-Token: %.1000s", c->token);
        headers[n++] = token;
    }
    if (c->scheme) {
        snprintf(auth, sizeof auth, "Authorization: %.100s %.1000s", c->scheme,
                 c->credentials ? c->credentials : "");
        headers[n++] = auth;
    }
    headers[n] = NULL;
    atomic_load(&sender)(c->url, headers, body);
}

void a2a_push_notify(const char *task_id, const json_t *stream_response)
{
    push_cfg *copy = NULL;
    size_t n = 0;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n_table; i++)
        if (strcmp(table[i].task_id, task_id) == 0) {
            copy = xrealloc(copy, (n + 1) * sizeof *copy);
            push_cfg *c = &copy[n++];
            c->tenant = NULL;
            c->task_id = xstrdup(table[i].task_id);
            c->id = xstrdup(table[i].id);
            c->url = xstrdup(table[i].url);
            c->token = xstrdup(table[i].token);
            c->scheme = xstrdup(table[i].scheme);
            c->credentials = xstrdup(table[i].credentials);
        }
    pthread_mutex_unlock(&mu);
    if (!n)
        return;
    char *body = json_dump_compact(stream_response);
    for (size_t i = 0; i < n; i++) {
        if (body)
            post_one(&copy[i], body);
        cfg_free(&copy[i]);
    }
    free(body);
    free(copy);
}

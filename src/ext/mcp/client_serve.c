/* client_serve.c — the half of the MCP client that handles what a server
 * sends: answers to our requests (matched to their slots by id), progress
 * (queued on the request's slot for its caller's thread), and the
 * server's own requests and notifications, run on the client's worker
 * threads through mcp_client_host.
 *
 * Owns the two work queues and their threads: notify_pool (one thread:
 * notifications, ping and method-not-found answers, in arrival order) and
 * host_pool (up to CLIENT_POOL_MAX threads: roots, elicitation, sampling,
 * which may block on a person). The transport's reader thread only parses
 * and queues; it never calls a host callback or waits.
 *
 * Threading: everything under the client's mu; host callbacks and sends
 * run without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/str.h"
#include "ext/mcp/client_internal.h"
#include "ext/mcp/jsonrpc.h"

/* ---- the pools ---------------------------------------------------------------- */

static void job_free(client_job *j)
{
    if (!j)
        return;
    free(j->method);
    json_decref(j->id);
    json_decref(j->params);
    free(j->text);
    free(j);
}

static void run_job(mcp_client *c, client_job *j);

static void *pool_main(void *arg)
{
    client_pool *pl = arg;
    mcp_client *c = pl->c;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!pl->head && !c->stopping) {
            pl->idle++;
            pthread_cond_wait(&pl->cv, &c->mu);
            pl->idle--;
        }
        if (c->stopping)
            break;
        client_job *j = pl->head;
        pl->head = j->next;
        if (!pl->head)
            pl->tail = NULL;
        pl->queued--;
        pthread_mutex_unlock(&c->mu);
        run_job(c, j);
        job_free(j);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static client_job *job_new(client_job_kind kind, const char *method, const char *text);

static void pool_append_locked(client_pool *pl, client_job *j);

/* Queues j (mu held), starting a thread when every one is busy. A full
 * queue drops j (but never the connection's end), saying so once. */
static void pool_push_locked(client_pool *pl, client_job *j)
{
    if (pl->c->stopping) {
        job_free(j);
        return;
    }
    if (j->kind != JOB_CLOSED && pl->queued >= CLIENT_QUEUE_MAX) {
        job_free(j);
        if (pl->dropped++ == 0) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "MCP server \"%.100s\": sends messages faster than Loom handles them "
                     "(%d waiting); dropping what comes until they are handled",
                     pl->c->server, CLIENT_QUEUE_MAX);
            LOG_W("mcp", "%s", msg);
            pool_append_locked(pl, job_new(JOB_WARN, NULL, msg));
        }
        return;
    }
    if (pl->dropped && pl->queued < CLIENT_QUEUE_MAX / 2)
        pl->dropped = 0;
    pool_append_locked(pl, j);
}

static void pool_append_locked(client_pool *pl, client_job *j)
{
    if (pl->tail)
        pl->tail->next = j;
    else
        pl->head = j;
    pl->tail = j;
    pl->queued++;
    if (pl->queued > pl->idle && pl->nthreads < pl->max &&
        pthread_create(&pl->threads[pl->nthreads], NULL, pool_main, pl) == 0)
        pl->nthreads++;
    pthread_cond_signal(&pl->cv);
}

static void pool_init(mcp_client *c, client_pool *pl, size_t max)
{
    memset(pl, 0, sizeof *pl);
    pl->c = c;
    pl->max = max;
    pthread_cond_init(&pl->cv, NULL);
}

void client_serve_init(mcp_client *c)
{
    pool_init(c, &c->notify_pool, 1);
    pool_init(c, &c->host_pool, CLIENT_POOL_MAX);
}

void client_serve_stop(mcp_client *c)
{
    client_pool *pools[] = {&c->notify_pool, &c->host_pool};
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    for (size_t i = 0; i < 2; i++)
        pthread_cond_broadcast(&pools[i]->cv);
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < 2; i++) {
        for (size_t k = 0; k < pools[i]->nthreads; k++)
            pthread_join(pools[i]->threads[k], NULL);
        pools[i]->nthreads = 0;
    }
}

void client_serve_free(mcp_client *c)
{
    client_pool *pools[] = {&c->notify_pool, &c->host_pool};
    for (size_t i = 0; i < 2; i++) {
        client_job *j = pools[i]->head;
        while (j) {
            client_job *n = j->next;
            job_free(j);
            j = n;
        }
        pools[i]->head = pools[i]->tail = NULL;
        pthread_cond_destroy(&pools[i]->cv);
    }
}

static client_job *job_new(client_job_kind kind, const char *method, const char *text)
{
    client_job *j = xcalloc(1, sizeof *j);
    j->kind = kind;
    j->method = xstrdup(method);
    j->text = xstrdup(text);
    return j;
}

/* A problem with what the server sent: logged, and told to the host's log. */
static void warn(mcp_client *c, const char *msg)
{
    LOG_W("mcp", "%s", msg);
    pthread_mutex_lock(&c->mu);
    pool_push_locked(&c->notify_pool, job_new(JOB_WARN, NULL, msg));
    pthread_mutex_unlock(&c->mu);
}

/* ---- running the jobs ----------------------------------------------------------- */

static void answer(mcp_client *c, const json_t *id, const json_t *result, long long code,
                   const char *message)
{
    char *text = result ? jsonrpc_result(id, result) : jsonrpc_error(id, code, message, NULL);
    if (!text)
        text = jsonrpc_error(id, JSONRPC_INTERNAL_ERROR, "the answer could not be encoded", NULL);
    loom_error err;
    loom_error_clear(&err);
    if (text && c->t->ops->send(c->t, text, strlen(text), &err) < 0)
        LOG_D("mcp", "%s", err.message);
    free(text);
}

static void run_request(mcp_client *c, client_job *j)
{
    const mcp_client_host *h = &c->host;
    const char *m = j->method;
    json_t *params = j->params ? j->params : json_object();
    if (!j->params)
        j->params = params;
    json_t *result = NULL;
    if (strcmp(m, "ping") == 0) {
        result = json_object();
    } else if (strcmp(m, "roots/list") == 0 && h->roots) {
        json_t *roots = h->roots(h->ctx, c->server);
        result = json_pack("{s:o}", "roots", json_is_array(roots) ? roots : json_array());
        if (roots && !json_is_array(roots))
            json_decref(roots);
    } else if (strcmp(m, "elicitation/create") == 0 && h->elicit) {
        result = h->elicit(h->ctx, c->server, params);
        if (!result)
            result = json_pack("{s:s}", "action", "decline");
    } else if (strcmp(m, "sampling/createMessage") == 0 && h->sample) {
        char *why = NULL;
        result = h->sample(h->ctx, c->server, params, &why);
        if (!result) {
            /* The spec's own example of a refused sampling request uses -1. */
            answer(c, j->id, NULL, -1, why ? why : "sampling was refused");
            free(why);
            return;
        }
        free(why);
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "method not found: %.100s", m);
        answer(c, j->id, NULL, JSONRPC_METHOD_NOT_FOUND, msg);
        return;
    }
    if (!json_is_object(result))
        answer(c, j->id, NULL, JSONRPC_INTERNAL_ERROR, "the client produced no answer");
    else
        answer(c, j->id, result, 0, NULL);
    json_decref(result);
}

/* notifications/message: data rendered as text. */
static void run_log(mcp_client *c, const json_t *params)
{
    if (!c->host.log)
        return;
    const char *level = json_string_value(json_object_get(params, "level"));
    const char *logger = json_string_value(json_object_get(params, "logger"));
    json_t *data = json_object_get(params, "data");
    char *text = json_is_string(data) ? xstrdup(json_string_value(data))
                 : data             ? json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY)
                                    : xstrdup("");
    c->host.log(c->host.ctx, c->server, level ? level : "info", logger, text ? text : "");
    free(text);
}

static bool is_list_changed(const char *m)
{
    return strcmp(m, "notifications/tools/list_changed") == 0 ||
           strcmp(m, "notifications/resources/list_changed") == 0 ||
           strcmp(m, "notifications/prompts/list_changed") == 0;
}

static void list_changed(mcp_client *c, const char *m)
{
    const mcp_client_host *h = &c->host;
    if (!h->list_changed)
        return;
    const char *what = m + strlen("notifications/");
    char kind[16];
    snprintf(kind, sizeof kind, "%.*s", (int)(strchr(what, '/') - what), what);
    h->list_changed(h->ctx, c->server, kind);
}

static void run_notification(mcp_client *c, client_job *j)
{
    const mcp_client_host *h = &c->host;
    const char *m = j->method;
    if (strcmp(m, "notifications/message") == 0) {
        run_log(c, j->params);
    } else if (is_list_changed(m)) {
        list_changed(c, m);
    } else if (strcmp(m, "notifications/resources/updated") == 0) {
        const char *uri = json_string_value(json_object_get(j->params, "uri"));
        if (uri && h->resource_updated)
            h->resource_updated(h->ctx, c->server, uri);
    }
    /* Anything else (notifications/cancelled for a request of the server's,
     * which we answer anyway; methods we do not know) is ignored. */
}

static void run_job(mcp_client *c, client_job *j)
{
    switch (j->kind) {
    case JOB_REQUEST:
        run_request(c, j);
        break;
    case JOB_NOTIFY:
        run_notification(c, j);
        break;
    case JOB_CLOSED:
        if (c->host.closed)
            c->host.closed(c->host.ctx, c->server, j->text);
        break;
    case JOB_WARN:
        if (c->host.log)
            c->host.log(c->host.ctx, c->server, "warning", "loom", j->text);
        break;
    }
}

/* ---- what arrives ---------------------------------------------------------------- */

/* Moves root[key] out of the parsed document: the value then has one owner,
 * the thread it is handed to, and no reference count is shared between
 * threads (the document is freed on this one). */
static json_t *take(json_t *root, const char *key)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return NULL;
    json_incref(v);
    json_object_del(root, key);
    return v;
}

static client_pending *find_pending_locked(mcp_client *c, long long id)
{
    for (client_pending *p = c->pending; p; p = p->next)
        if (p->id == id)
            return p;
    return NULL;
}

static void on_response(mcp_client *c, const jsonrpc_msg *m)
{
    long long id;
    if (!jsonrpc_id_int(m->id, &id)) {
        if (m->kind == JSONRPC_ERROR) {
            char msg[600];
            snprintf(msg, sizeof msg, "MCP server \"%s\": reported an error: %lld %.400s",
                     c->server, m->error_code, m->error_message);
            warn(c, msg);
        }
        return; /* not an id of ours */
    }
    pthread_mutex_lock(&c->mu);
    client_pending *p = find_pending_locked(c, id);
    if (p && !p->done) {
        p->done = true;
        const char *key = m->kind == JSONRPC_RESULT ? "result" : "error";
        p->result = m->kind == JSONRPC_RESULT ? take(m->root, key) : NULL;
        p->error = m->kind == JSONRPC_ERROR ? take(m->root, key) : NULL;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&c->mu);
    if (!p)
        LOG_D("mcp", "MCP server \"%s\": an answer to request %lld, which no one waits for",
              c->server, id);
}

/* notifications/progress: queued on its request's slot, by token. */
static void on_progress(mcp_client *c, const json_t *params)
{
    json_t *tok = json_object_get(params, "progressToken");
    json_t *prog = json_object_get(params, "progress");
    if (!json_is_integer(tok) || !json_is_number(prog))
        return;
    long long token = (long long)json_integer_value(tok);
    json_t *total = json_object_get(params, "total");
    const char *message = json_string_value(json_object_get(params, "message"));
    pthread_mutex_lock(&c->mu);
    for (client_pending *p = c->pending; p; p = p->next) {
        if (p->token != token || !token || p->done)
            continue;
        client_progress *q = xcalloc(1, sizeof *q);
        q->progress = json_number_value(prog);
        q->total = json_is_number(total) ? json_number_value(total) : -1;
        q->message = xstrdup(message);
        if (p->prog_tail)
            p->prog_tail->next = q;
        else
            p->prog_head = q;
        p->prog_tail = q;
        pthread_cond_signal(&p->cv);
        break;
    }
    pthread_mutex_unlock(&c->mu);
}

static void on_call(mcp_client *c, const jsonrpc_msg *m)
{
    if (m->kind == JSONRPC_NOTIFICATION) {
        if (strcmp(m->method, "notifications/progress") == 0) {
            on_progress(c, m->params);
            return;
        }
        if (strcmp(m->method, "notifications/cancelled") == 0)
            return;
        /* In wire order with the responses, on this thread: a server that
         * says its tools changed and then answers the call that changed
         * them has the change seen before the caller goes on (the next
         * tool set lists them again). The host only marks it. */
        if (is_list_changed(m->method)) {
            list_changed(c, m->method);
            return;
        }
        /* Likewise a resource's change: the read that subscribed to it
         * returns after the note is kept. */
        if (strcmp(m->method, "notifications/resources/updated") == 0) {
            const char *uri = json_string_value(json_object_get(m->params, "uri"));
            if (uri && c->host.resource_updated)
                c->host.resource_updated(c->host.ctx, c->server, uri);
            return;
        }
    }
    client_job *j = job_new(m->kind == JSONRPC_REQUEST ? JOB_REQUEST : JOB_NOTIFY, m->method,
                            NULL);
    j->id = m->id ? json_deep_copy(m->id) : NULL;
    j->params = take(m->root, "params");
    const mcp_client_host *h = &c->host;
    /* What may block on a person goes to the pool of its own. */
    bool slow = m->kind == JSONRPC_REQUEST &&
                ((strcmp(m->method, "roots/list") == 0 && h->roots) ||
                 (strcmp(m->method, "elicitation/create") == 0 && h->elicit) ||
                 (strcmp(m->method, "sampling/createMessage") == 0 && h->sample));
    pthread_mutex_lock(&c->mu);
    pool_push_locked(slow ? &c->host_pool : &c->notify_pool, j);
    pthread_mutex_unlock(&c->mu);
}

void client_on_message(void *ctx, const char *text, size_t len)
{
    mcp_client *c = ctx;
    jsonrpc_batch b;
    loom_error err;
    loom_error_clear(&err);
    if (jsonrpc_parse(c->server, text, len, &b, &err) < 0) {
        warn(c, err.message);
        return;
    }
    for (size_t i = 0; i < b.n; i++) {
        const jsonrpc_msg *m = &b.msgs[i];
        if (m->kind == JSONRPC_RESULT || m->kind == JSONRPC_ERROR)
            on_response(c, m);
        else
            on_call(c, m);
    }
    jsonrpc_batch_free(&b);
}

void client_fail_all_locked(mcp_client *c, const char *why)
{
    if (!c->closed) {
        c->closed = true;
        c->closed_why = xstrdup(why);
    }
    for (client_pending *p = c->pending; p; p = p->next) {
        if (p->done)
            continue;
        p->done = true;
        p->closed = true;
        p->closed_why = xstrdup(why);
        pthread_cond_signal(&p->cv);
    }
}

void client_on_closed(void *ctx, const char *why)
{
    mcp_client *c = ctx;
    LOG_I("mcp", "MCP server \"%s\": connection closed: %s", c->server, why);
    pthread_mutex_lock(&c->mu);
    client_fail_all_locked(c, why);
    pool_push_locked(&c->notify_pool, job_new(JOB_CLOSED, NULL, why));
    pthread_mutex_unlock(&c->mu);
}

/* The opener's own stderr callback, with its own context. */
void client_on_stderr(void *ctx, const char *line)
{
    mcp_client *c = ctx;
    if (c->opener_ev.on_stderr)
        c->opener_ev.on_stderr(c->opener_ev.ctx, line);
}

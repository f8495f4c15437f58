/* client.c — one MCP client connection (client.h): requests and their
 * answers, the handshake, paging, progress, cancellation.
 *
 * Owns the transport, the table of requests in flight (each a slot with a
 * condition variable its caller waits on), and the server's answers to the
 * handshake. What the server asks of us (requests, notifications) is not
 * handled on the transport's thread: client_serve.c queues it for the
 * client's own workers, so a host callback that blocks never stalls the
 * answers to our requests.
 *
 * Threading: c->mu guards the pending table, the state and the work
 * queues; hs_mu serialises handshakes (a re-handshake after a session
 * expired). Callers may issue requests from many threads at once; each
 * waits on its own slot. A request's progress callback runs on the
 * caller's own thread, from its wait loop, so it never outlives the call.
 */
#include "ext/mcp/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/str.h"
#include "ext/mcp/client_internal.h"
#include "ext/mcp/jsonrpc.h"

/* How long server/discover may take before we try initialize instead (a
 * 2025 server may never answer a method it does not know). */
#define MCP_DISCOVER_TIMEOUT_MS 5000L
/* A cancel or a deadline is noticed at least this often. */
#define MCP_POLL_MS 50
/* The most pages mcp_client_list_all walks (empty pages with fresh cursors
 * would go on for ever). */
#define MCP_LIST_MAX_PAGES 1000

/* The stateful revisions an initialize answer may name. */
static const char *const STATEFUL_VERSIONS[] = {MCP_VERSION_LATEST_STATEFUL, "2025-06-18",
                                                "2025-03-26", "2024-11-05"};

/* ---- life ---------------------------------------------------------------- */

static json_t *client_capabilities(const mcp_client_host *h)
{
    json_t *caps = json_object();
    if (h->roots)
        json_object_set_new(caps, "roots", json_pack("{s:b}", "listChanged", 1));
    if (h->elicit)
        json_object_set_new(caps, "elicitation", json_pack("{s:{},s:{}}", "form", "url"));
    if (h->sample)
        json_object_set_new(caps, "sampling", json_object());
    return caps;
}

mcp_client *mcp_client_new(const char *server, mcp_transport *t, const mcp_client_host *host)
{
    mcp_client *c = xcalloc(1, sizeof *c);
    c->server = xstrdup(server);
    c->t = t;
    if (host)
        c->host = *host;
    c->client_name = xstrdup("loom");
    c->client_version = xstrdup(LOOM_VERSION_STRING);
    c->client_caps = client_capabilities(&c->host);
    c->retired = json_array();
    c->next_id = 1;
    c->next_token = 1;
    c->connect_timeout_ms = 30000;
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->hs_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->idle_cv, &ca);
    pthread_condattr_destroy(&ca);
    client_serve_init(c);
    /* From here on the transport's callbacks reach us (transport.h: none
     * runs before the first send, so this is not a race). */
    c->opener_ev = t->ev;
    t->ev.ctx = c;
    t->ev.on_stderr = client_on_stderr;
    t->ev.on_message = client_on_message;
    t->ev.on_closed = client_on_closed;
    return c;
}

void mcp_client_set_info(mcp_client *c, const char *name, const char *version)
{
    pthread_mutex_lock(&c->mu);
    if (name && *name) {
        free(c->client_name);
        c->client_name = xstrdup(name);
    }
    if (version && *version) {
        free(c->client_version);
        c->client_version = xstrdup(version);
    }
    pthread_mutex_unlock(&c->mu);
}

void mcp_client_free(mcp_client *c)
{
    if (!c)
        return;
    /* Pending requests fail first, and their callers leave, before anything
     * they could touch goes. */
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    client_fail_all_locked(c, "the connection was closed by Loom");
    while (c->inflight > 0)
        pthread_cond_wait(&c->idle_cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    /* The workers may still be answering the server: they finish before
     * the transport goes, and a send of theirs to a server that no longer
     * reads fails now rather than after the transport's stall timeout. */
    if (c->t && c->t->ops->abort_sends)
        c->t->ops->abort_sends(c->t);
    client_serve_stop(c);
    if (c->t)
        c->t->ops->close(c->t);
    client_serve_free(c);
    pthread_cond_destroy(&c->idle_cv);
    pthread_mutex_destroy(&c->hs_mu);
    pthread_mutex_destroy(&c->mu);
    json_decref(c->client_caps);
    json_decref(c->server_info);
    json_decref(c->server_caps);
    json_decref(c->retired);
    for (size_t i = 0; i < c->nkept; i++)
        free(c->kept[i]);
    free(c->kept);
    free(c->instructions);
    free(c->version);
    free(c->closed_why);
    free(c->client_name);
    free(c->client_version);
    free(c->server);
    free(c);
}

void mcp_client_abort(mcp_client *c, const char *why)
{
    pthread_mutex_lock(&c->mu);
    client_fail_all_locked(c, why ? why : "aborted by Loom");
    pthread_mutex_unlock(&c->mu);
}

/* ---- accessors -------------------------------------------------------------- */

const char *mcp_client_server_name(const mcp_client *c) { return c->server; }
const char *mcp_client_protocol_version(const mcp_client *c) { return c->version; }
bool mcp_client_stateless(const mcp_client *c) { return c->stateless; }
const json_t *mcp_client_server_info(const mcp_client *c) { return c->server_info; }
const json_t *mcp_client_capabilities(const mcp_client *c) { return c->server_caps; }
const char *mcp_client_instructions(const mcp_client *c) { return c->instructions; }

bool mcp_client_alive(const mcp_client *c)
{
    mcp_client *m = (mcp_client *)c;
    pthread_mutex_lock(&m->mu);
    bool alive = m->connected && !m->closed;
    pthread_mutex_unlock(&m->mu);
    return alive;
}

/* ---- requests ---------------------------------------------------------------- */

/* The three _meta keys of the stateless era; new reference. */
static json_t *stateless_meta(mcp_client *c, const char *version)
{
    pthread_mutex_lock(&c->mu);
    json_t *meta = json_pack("{s:s,s:O,s:{s:s,s:s}}", "io.modelcontextprotocol/protocolVersion",
                             version, "io.modelcontextprotocol/clientCapabilities",
                             c->client_caps, "io.modelcontextprotocol/clientInfo", "name",
                             c->client_name, "version", c->client_version);
    pthread_mutex_unlock(&c->mu);
    return meta;
}

/* params with what this request adds to its _meta (a progress token, the
 * stateless keys). The caller's own _meta is copied, never changed in
 * place. Returns params (possibly new when it was NULL). */
static json_t *with_meta(mcp_client *c, json_t *params, long long token, bool stateless)
{
    if (!token && !stateless)
        return params;
    if (!params)
        params = json_object();
    if (!json_is_object(params))
        return params; /* positional params have nowhere to put _meta */
    json_t *old = json_object_get(params, "_meta");
    json_t *meta = json_is_object(old) ? json_deep_copy(old) : json_object();
    if (token)
        json_object_set_new(meta, "progressToken", json_integer(token));
    if (stateless) {
        json_t *sm = stateless_meta(c, MCP_VERSION_STATELESS);
        json_object_update(meta, sm);
        json_decref(sm);
    }
    json_object_set_new(params, "_meta", meta);
    return params;
}

static void unlink_pending_locked(mcp_client *c, client_pending *p)
{
    for (client_pending **pp = &c->pending; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
}

static void pending_free(client_pending *p)
{
    client_progress *q = p->prog_head;
    while (q) {
        client_progress *n = q->next;
        free(q->message);
        free(q);
        q = n;
    }
    json_decref(p->result);
    json_decref(p->error);
    free(p->closed_why);
    pthread_cond_destroy(&p->cv);
    free(p);
}

/* Runs the progress callbacks queued on p; mu held on entry and exit,
 * released around the callbacks. */
static void run_progress_locked(mcp_client *c, client_pending *p, const mcp_call_opts *o)
{
    while (p->prog_head) {
        client_progress *q = p->prog_head;
        p->prog_head = p->prog_tail = NULL;
        pthread_mutex_unlock(&c->mu);
        while (q) {
            client_progress *n = q->next;
            if (o && o->on_progress)
                o->on_progress(o->progress_ctx, q->progress, q->total, q->message);
            free(q->message);
            free(q);
            q = n;
        }
        pthread_mutex_lock(&c->mu);
    }
}

static void cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, long ms)
{
    struct timespec ts;
    clock_deadline(&ts, CLOCK_MONOTONIC, ms);
    pthread_cond_timedwait(cv, mu, &ts);
}

typedef enum { WAIT_DONE, WAIT_CANCELLED, WAIT_TIMEOUT } wait_outcome;

/* Waits for p's answer, the cancel flag or the deadline; mu held. */
static wait_outcome wait_answer_locked(mcp_client *c, client_pending *p, const mcp_call_opts *o)
{
    long timeout = o ? o->timeout_ms : 0;
    int64_t deadline = timeout > 0 ? clock_mono_ms() + timeout : INT64_MAX;
    for (;;) {
        run_progress_locked(c, p, o);
        if (p->done)
            return WAIT_DONE;
        if (o && cancel_requested(o->cancel))
            return WAIT_CANCELLED;
        int64_t now = clock_mono_ms();
        if (now >= deadline)
            return WAIT_TIMEOUT;
        long step = MCP_POLL_MS;
        if (deadline - now < step)
            step = (long)(deadline - now);
        cond_wait_ms(&p->cv, &c->mu, step);
    }
}

/* The server's JSON-RPC error as a Loom error. */
static int server_error(mcp_client *c, const char *method, const json_t *e, loom_error *err)
{
    long long code = (long long)json_integer_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    json_t *data = json_object_get(e, "data");
    char *dtext = data ? json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    int rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": %s: %lld %s%s%.300s",
                            c->server, method, code, msg ? msg : "",
                            dtext ? " — " : "", dtext ? dtext : "");
    free(dtext);
    return rc;
}

/* One request, one answer: params borrowed (its _meta is set here).
 * quiet: a handshake request (never answered with notifications/cancelled:
 * the server may not know us yet, and initialize must not be cancelled). */
json_t *client_request_raw(mcp_client *c, const char *method, json_t **params,
                           const mcp_call_opts *o, bool quiet, loom_error *err)
{
    pthread_mutex_lock(&c->mu);
    if (c->closed) {
        char why[512];
        snprintf(why, sizeof why, "%s", c->closed_why ? c->closed_why : "closed");
        pthread_mutex_unlock(&c->mu);
        loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                       "MCP server \"%s\": %s: the connection is closed: %s", c->server, method,
                       why);
        return NULL;
    }
    client_pending *p = xcalloc(1, sizeof *p);
    p->id = c->next_id++;
    if (o && o->on_progress)
        p->token = c->next_token++;
    bool stateless = c->stateless && !quiet;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->next = c->pending;
    c->pending = p;
    pthread_mutex_unlock(&c->mu);

    *params = with_meta(c, *params, p->token, stateless);
    char *text = jsonrpc_request(p->id, method, *params);
    int rc = text ? c->t->ops->send(c->t, text, strlen(text), err)
                  : loom_error_set(err, LOOM_ERR_INTERNAL,
                                   "MCP server \"%s\": %s: the request could not be encoded",
                                   c->server, method);
    free(text);

    pthread_mutex_lock(&c->mu);
    wait_outcome w = rc < 0 ? WAIT_DONE : wait_answer_locked(c, p, o);
    unlink_pending_locked(c, p);
    pthread_mutex_unlock(&c->mu);

    json_t *result = NULL;
    if (rc < 0) {
        /* err already says why the send failed */
    } else if (w == WAIT_CANCELLED || w == WAIT_TIMEOUT) {
        const char *reason = w == WAIT_CANCELLED ? "the user cancelled the call"
                                                 : "the call timed out";
        if (!quiet) {
            json_t *cp = json_pack("{s:I,s:s}", "requestId", (json_int_t)p->id, "reason", reason);
            char *note = jsonrpc_notification("notifications/cancelled", cp);
            json_decref(cp);
            if (note)
                (void)c->t->ops->send(c->t, note, strlen(note), NULL);
            free(note);
        }
        if (w == WAIT_CANCELLED)
            loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "MCP server \"%s\": %s: cancelled",
                           c->server, method);
        else
            loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                           "MCP server \"%s\": %s: timed out after %ld ms", c->server, method,
                           o->timeout_ms);
    } else if (p->closed) {
        loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                       "MCP server \"%s\": %s: the connection closed: %s", c->server, method,
                       p->closed_why ? p->closed_why : "closed");
    } else if (p->error) {
        server_error(c, method, p->error, err);
    } else {
        result = json_incref(p->result);
    }
    pending_free(p);
    return result;
}

/* inflight counts the callers inside the client, so free waits for them. */
static bool enter(mcp_client *c)
{
    pthread_mutex_lock(&c->mu);
    bool ok = !c->stopping;
    if (ok)
        c->inflight++;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

static void leave(mcp_client *c)
{
    pthread_mutex_lock(&c->mu);
    if (--c->inflight == 0)
        pthread_cond_broadcast(&c->idle_cv);
    pthread_mutex_unlock(&c->mu);
}

static unsigned hs_generation(mcp_client *c)
{
    pthread_mutex_lock(&c->mu);
    unsigned g = c->hs_gen;
    pthread_mutex_unlock(&c->mu);
    return g;
}

json_t *mcp_client_request(mcp_client *c, const char *method, json_t *params,
                           const mcp_call_opts *opts, loom_error *err)
{
    if (!enter(c)) {
        json_decref(params);
        loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": %s: closing",
                       c->server, method);
        return NULL;
    }
    unsigned gen0 = hs_generation(c);
    loom_error e;
    loom_error_clear(&e);
    json_t *r = client_request_raw(c, method, &params, opts, false, &e);
    /* Streamable HTTP: the server forgot our session (a 404). Handshake
     * again, once, and retry once; so does a call that failed while
     * another thread was doing just that. */
    if (!r && c->t->ops->session_expired && e.code == LOOM_ERR_TOOL_EXECUTION_FAILED) {
        bool expired = c->t->ops->session_expired(c->t);
        pthread_mutex_lock(&c->hs_mu);
        bool retry = hs_generation(c) != gen0;
        if (expired && !retry) {
            LOG_I("mcp", "MCP server \"%s\": session expired; connecting again", c->server);
            retry = client_handshake(c, c->connect_timeout_ms, opts ? opts->cancel : NULL,
                                     &e) == 0;
        }
        pthread_mutex_unlock(&c->hs_mu);
        if (retry)
            r = client_request_raw(c, method, &params, opts, false, &e);
    }
    if (!r && err)
        *err = e;
    json_decref(params);
    leave(c);
    return r;
}

int mcp_client_notify(mcp_client *c, const char *method, json_t *params, loom_error *err)
{
    char *text = jsonrpc_notification(method, params);
    json_decref(params);
    if (!text)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "MCP server \"%s\": %s: cannot encode",
                              c->server, method);
    int rc = c->t->ops->send(c->t, text, strlen(text), err);
    free(text);
    return rc;
}

json_t *mcp_client_list_all(mcp_client *c, const char *method, const char *key,
                            size_t max_items, long timeout_ms, loom_error *err)
{
    if (max_items == 0)
        max_items = 10000;
    json_t *all = json_array();
    json_t *seen = json_object(); /* cursors already asked for */
    char *cursor = NULL;
    for (int page = 0; page < MCP_LIST_MAX_PAGES; page++) {
        json_t *params = cursor ? json_pack("{s:s}", "cursor", cursor) : NULL;
        mcp_call_opts o = {.timeout_ms = timeout_ms};
        json_t *r = mcp_client_request(c, method, params, &o, err);
        free(cursor);
        cursor = NULL;
        if (!r)
            goto fail;
        json_t *items = json_object_get(r, key);
        if (!json_is_array(items)) {
            loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                           "MCP server \"%s\": %s: the result has no \"%s\" array", c->server,
                           method, key);
            json_decref(r);
            goto fail;
        }
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            if (json_array_size(all) >= max_items)
                break;
            json_array_append(all, it);
        }
        const char *next = json_string_value(json_object_get(r, "nextCursor"));
        if (next && *next && json_array_size(all) < max_items && !json_object_get(seen, next)) {
            json_object_set_new(seen, next, json_true());
            cursor = xstrdup(next);
        }
        json_decref(r);
        if (!cursor)
            break;
    }
    free(cursor);
    json_decref(seen);
    return all;
fail:
    json_decref(seen);
    json_decref(all);
    return NULL;
}

/* ---- the handshake ---------------------------------------------------------- */

static void retire(mcp_client *c, json_t *old)
{
    if (old)
        json_array_append_new(c->retired, old);
}

static void keep_string(mcp_client *c, char *s)
{
    if (!s)
        return;
    if (c->nkept == c->kept_cap) {
        c->kept_cap = c->kept_cap ? 2 * c->kept_cap : 4;
        c->kept = xrealloc(c->kept, c->kept_cap * sizeof *c->kept);
    }
    c->kept[c->nkept++] = s;
}

/* Takes what the handshake learned (mu held). Old values stay alive until
 * free: callers may hold the borrowed pointers the accessors gave. */
static void adopt_locked(mcp_client *c, const char *version, bool stateless, const json_t *info,
                         const json_t *caps, const char *instructions)
{
    retire(c, c->server_info);
    retire(c, c->server_caps);
    keep_string(c, c->version);
    keep_string(c, c->instructions);
    c->version = xstrdup(version);
    c->stateless = stateless;
    c->server_info = json_is_object(info) ? json_deep_copy(info) : json_object();
    c->server_caps = json_is_object(caps) ? json_deep_copy(caps) : json_object();
    c->instructions = instructions && *instructions ? xstrdup(instructions) : NULL;
    c->connected = true;
    c->hs_gen++;
}

static bool has_version(const json_t *arr, const char *v)
{
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it)
    {
        if (json_is_string(it) && strcmp(json_string_value(it), v) == 0)
            return true;
    }
    return false;
}

/* server/discover: 1 when the server speaks the stateless revision (and
 * the client adopted it), 0 to fall back, -code for a failure that falling
 * back cannot mend (cancelled, the connection gone). */
static int try_discover(mcp_client *c, long timeout_ms, const loom_cancel *cancel,
                        loom_error *err)
{
    json_t *params = json_pack("{s:o}", "_meta", stateless_meta(c, MCP_VERSION_STATELESS));
    mcp_call_opts o = {.timeout_ms = timeout_ms < MCP_DISCOVER_TIMEOUT_MS ? timeout_ms
                                                                          : MCP_DISCOVER_TIMEOUT_MS,
                       .cancel = cancel};
    loom_error derr;
    loom_error_clear(&derr);
    json_t *r = client_request_raw(c, "server/discover", &params, &o, true, &derr);
    json_decref(params);
    if (!r) {
        pthread_mutex_lock(&c->mu);
        bool closed = c->closed;
        pthread_mutex_unlock(&c->mu);
        if (derr.code == LOOM_ERR_RUN_CANCELLED || closed) {
            if (err)
                *err = derr;
            return -(int)derr.code;
        }
        LOG_D("mcp", "MCP server \"%s\": no server/discover (%s); trying initialize", c->server,
              derr.message);
        return 0;
    }
    int got = 0;
    if (json_is_object(r) && has_version(json_object_get(r, "supportedVersions"),
                                         MCP_VERSION_STATELESS)) {
        json_t *info = json_object_get(r, "serverInfo");
        if (!json_is_object(info))
            info = json_object_get(json_object_get(r, "_meta"),
                                   "io.modelcontextprotocol/serverInfo");
        pthread_mutex_lock(&c->mu);
        adopt_locked(c, MCP_VERSION_STATELESS, true, info, json_object_get(r, "capabilities"),
                     json_string_value(json_object_get(r, "instructions")));
        pthread_mutex_unlock(&c->mu);
        got = 1;
    }
    json_decref(r);
    return got;
}

static bool known_stateful(const char *v)
{
    for (size_t i = 0; i < sizeof STATEFUL_VERSIONS / sizeof *STATEFUL_VERSIONS; i++)
        if (strcmp(v, STATEFUL_VERSIONS[i]) == 0)
            return true;
    return false;
}

static int do_initialize(mcp_client *c, long timeout_ms, const loom_cancel *cancel,
                         loom_error *err)
{
    pthread_mutex_lock(&c->mu);
    json_t *params = json_pack("{s:s,s:O,s:{s:s,s:s}}", "protocolVersion",
                               MCP_VERSION_LATEST_STATEFUL, "capabilities", c->client_caps,
                               "clientInfo", "name", c->client_name, "version",
                               c->client_version);
    pthread_mutex_unlock(&c->mu);
    mcp_call_opts o = {.timeout_ms = timeout_ms, .cancel = cancel};
    json_t *r = client_request_raw(c, "initialize", &params, &o, true, err);
    json_decref(params);
    if (!r)
        return err ? -(int)err->code : -LOOM_ERR_TOOL_EXECUTION_FAILED;
    const char *v = json_string_value(json_object_get(r, "protocolVersion"));
    int rc = 0;
    if (!json_is_object(r) || !v) {
        rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                            "MCP server \"%s\": initialize: the answer names no protocolVersion",
                            c->server);
    } else if (!known_stateful(v)) {
        rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                            "MCP server \"%s\": speaks protocol version \"%.40s\", which Loom "
                            "does not (it speaks %s, %s, 2025-06-18, 2025-03-26, 2024-11-05)",
                            c->server, v, MCP_VERSION_STATELESS, MCP_VERSION_LATEST_STATEFUL);
    } else {
        pthread_mutex_lock(&c->mu);
        adopt_locked(c, v, false, json_object_get(r, "serverInfo"),
                     json_object_get(r, "capabilities"),
                     json_string_value(json_object_get(r, "instructions")));
        pthread_mutex_unlock(&c->mu);
    }
    json_decref(r);
    return rc;
}

int client_handshake(mcp_client *c, long timeout_ms, const loom_cancel *cancel, loom_error *err)
{
    if (timeout_ms <= 0)
        timeout_ms = 30000;
    int64_t start = clock_mono_ms();
    int rc = try_discover(c, timeout_ms, cancel, err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        long left = timeout_ms - (long)(clock_mono_ms() - start);
        if (left <= 0)
            return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                                  "MCP server \"%s\": no answer to the handshake in %ld ms",
                                  c->server, timeout_ms);
        rc = do_initialize(c, left, cancel, err);
        if (rc < 0)
            return rc;
    }
    if (c->t->ops->set_protocol_version)
        c->t->ops->set_protocol_version(c->t, c->version);
    if (!c->stateless)
        return mcp_client_notify(c, "notifications/initialized", NULL, err);
    return 0;
}

int mcp_client_connect(mcp_client *c, long timeout_ms, const loom_cancel *cancel,
                       loom_error *err)
{
    if (!enter(c))
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": closing",
                              c->server);
    if (timeout_ms > 0)
        c->connect_timeout_ms = timeout_ms;
    pthread_mutex_lock(&c->hs_mu);
    int rc = client_handshake(c, timeout_ms, cancel, err);
    pthread_mutex_unlock(&c->hs_mu);
    leave(c);
    return rc;
}

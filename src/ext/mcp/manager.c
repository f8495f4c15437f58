/* manager.c — a session's MCP servers (see manager.h).
 *
 * One slot per configured server. A slot's connection is a counted holder
 * (conn) so that a reconnect can replace it while calls on the old one
 * finish: a caller takes a reference under the manager's lock and drops it
 * when its request is done; the last reference frees the client, which
 * closes its transport and ends the server process.
 *
 * State changes happen under the manager's lock and are announced by the
 * condition variable (mcp_manager_wait) and the generation counter (the
 * loop's next tool-set refresh). Nothing blocking runs under the lock:
 * connects run on a thread per slot, requests on the caller's thread.
 * A list_changed only marks the slot; the tools are listed again by the
 * next mcp_manager_toolset, on the run's thread at a turn boundary (the
 * client's notification thread must never wait on its own connection);
 * the tool set itself is built in manager_toolset.c.
 */
#include "ext/mcp/manager.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "ext/mcp/manager_internal.h"
#include "ext/mcp/mcp_tool.h"

#define MCP_BACKOFF_MAX_MS 30000L

const char *mcp_state_name(mcp_state s)
{
    switch (s) {
    case MCP_STATE_NEEDS_APPROVAL: return "needs-approval";
    case MCP_STATE_DISABLED: return "disabled";
    case MCP_STATE_CONNECTING: return "connecting";
    case MCP_STATE_CONNECTED: return "connected";
    case MCP_STATE_FAILED: return "failed";
    }
    return "failed";
}

void manager_bump(mcp_manager *m)
{
    atomic_fetch_add(&m->generation, 1);
    if (m->host.changed)
        m->host.changed(m->host.ctx);
}

static slot *find_slot(mcp_manager *m, const char *server)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->slots[i].cfg.name, server))
            return &m->slots[i];
    return NULL;
}

bool manager_name_in(const json_t *arr, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        if (!strcmp(json_string_value(v), name))
            return true;
    return false;
}

/* --- connections ------------------------------------------------------------ */

void manager_conn_put(mcp_manager *m, conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&m->mu);
    bool last = --c->refs == 0;
    pthread_mutex_unlock(&m->mu);
    if (last) {
        mcp_client_free(c->client);
        free(c);
    }
}

/* The client's host: the manager's, with list changes and closes kept here. */
static json_t *h_elicit(void *ctx, const char *server, const json_t *params)
{
    slot *s = ctx;
    return s->m->host.elicit ? s->m->host.elicit(s->m->host.ctx, server, params) : NULL;
}

static json_t *h_sample(void *ctx, const char *server, const json_t *params, char **why)
{
    slot *s = ctx;
    if (!s->m->host.sample) {
        *why = xstrdup("sampling is not enabled in this client");
        return NULL;
    }
    return s->m->host.sample(s->m->host.ctx, server, params, why);
}

static json_t *h_roots(void *ctx, const char *server)
{
    slot *s = ctx;
    return s->m->host.roots ? s->m->host.roots(s->m->host.ctx, server) : json_array();
}

static void h_log(void *ctx, const char *server, const char *level, const char *logger,
                  const char *text)
{
    slot *s = ctx;
    LOG_I("mcp", "server %s [%s%s%s]: %s", server, level, logger ? " " : "", logger ? logger : "",
          text);
    if (s->m->host.log)
        s->m->host.log(s->m->host.ctx, server, level, text);
}

static void h_list_changed(void *ctx, const char *server, const char *what)
{
    slot *s = ctx;
    mcp_manager *m = s->m;
    (void)server;
    pthread_mutex_lock(&m->mu);
    if (!strcmp(what, "tools"))
        s->tools_dirty = true;
    pthread_mutex_unlock(&m->mu);
    manager_bump(m);
}

static void h_resource_updated(void *ctx, const char *server, const char *uri)
{
    slot *s = ctx;
    mcp_manager *m = s->m;
    pthread_mutex_lock(&m->mu);
    size_t i;
    json_t *u;
    bool seen = false;
    json_array_foreach(m->updated, i, u)
        seen |= !strcmp(json_string_value(json_object_get(u, "server")), server) &&
                !strcmp(json_string_value(json_object_get(u, "uri")), uri);
    /* Bounded: a server that floods updates fills one short list. */
    if (!seen && json_array_size(m->updated) < 64)
        json_array_append_new(m->updated, json_pack("{s:s,s:s}", "server", server, "uri", uri));
    pthread_mutex_unlock(&m->mu);
}

static void h_closed(void *ctx, const char *server, const char *why)
{
    slot *s = ctx;
    mcp_manager *m = s->m;
    LOG_W("mcp", "server %s closed: %s", server, why);
    pthread_mutex_lock(&m->mu);
    if (s->state == MCP_STATE_CONNECTED) {
        /* Its tools stay declared (the cached prefix, and the model may
         * still call them): the next use restarts it. */
        s->state = MCP_STATE_FAILED;
        free(s->error);
        s->error = xstrdup(why);
    }
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    manager_bump(m);
}

static mcp_transport *open_transport(slot *s, mcp_kind kind, const mcp_transport_events *ev,
                                     loom_error *err)
{
    const mcp_server_config *c = &s->cfg;
    if (kind == MCP_KIND_STDIO) {
        char *log_path = NULL;
        if (s->m->log_dir) {
            loom_str p = LOOM_STR_INIT;
            str_printf(&p, "%s/mcp-%s.log", s->m->log_dir, c->name);
            log_path = str_steal(&p);
        }
        mcp_stdio_spec spec = {.command = c->command, .args = (const char *const *)c->args,
                               .env = c->env, .cwd = c->cwd, .log_path = log_path};
        mcp_transport *t = mcp_stdio_open(c->name, &spec, ev, err);
        free(log_path);
        return t;
    }
    mcp_http_spec spec = {.url = c->url, .headers = c->headers, .timeout_ms = c->timeout_ms};
    return kind == MCP_KIND_HTTP ? mcp_http_open(c->name, &spec, ev, err)
                                 : mcp_sse_open(c->name, &spec, ev, err);
}

/* The client a connect is using, so mcp_manager_free can abort it. */
static void connecting_set(slot *s, mcp_client *cl)
{
    pthread_mutex_lock(&s->m->mu);
    s->connecting = cl;
    if (cl && cancel_requested(&s->m->closing))
        mcp_client_abort(cl, "Loom is closing the connection");
    pthread_mutex_unlock(&s->m->mu);
}

/* Frees a client a connect made and did not keep. */
static void connecting_drop(slot *s, mcp_client *cl)
{
    connecting_set(s, NULL);
    mcp_client_free(cl);
}

/* One connect attempt over one transport kind: a connected client, or NULL
 * with err set. No lock held. */
static mcp_client *try_connect(slot *s, mcp_kind kind, loom_error *err)
{
    mcp_client_host host = {.ctx = s, .log = h_log, .list_changed = h_list_changed,
                            .resource_updated = h_resource_updated,
                            .elicit = h_elicit, .roots = h_roots, .closed = h_closed,
                            .sample = s->m->host.sample ? h_sample : NULL};
    /* The client sets the transport's events when it takes it. */
    mcp_transport_events ev = {0};
    mcp_transport *t = open_transport(s, kind, &ev, err);
    if (!t)
        return NULL;
    mcp_client *cl = mcp_client_new(s->cfg.name, t, &host);
    connecting_set(s, cl);
    if (mcp_client_connect(cl, s->cfg.connect_timeout_ms, &s->m->closing, err) != 0) {
        connecting_drop(s, cl);
        return NULL;
    }
    return cl;
}

static int count_list(mcp_client *cl, const char *cap, const char *method, const char *key,
                      long timeout_ms)
{
    if (!json_object_get(mcp_client_capabilities(cl), cap))
        return 0;
    loom_error err;
    json_t *all = mcp_client_list_all(cl, method, key, 0, timeout_ms, &err);
    int n = all ? (int)json_array_size(all) : 0;
    json_decref(all);
    return n;
}

/* Connects a slot (its state already CONNECTING). Runs on the slot's thread
 * or, for a restart, on the caller's. */
static void connect_slot(slot *s)
{
    mcp_manager *m = s->m;
    loom_error err;
    loom_error_clear(&err);
    mcp_client *cl = try_connect(s, s->cfg.kind, &err);
    if (!cl && s->cfg.kind == MCP_KIND_HTTP && err.code != LOOM_ERR_RUN_CANCELLED &&
        !cancel_requested(&m->closing)) {
        /* The spec's backwards-compatibility rule: a server that refuses
         * the Streamable HTTP POST may be a 2024-11-05 HTTP+SSE one. */
        loom_error sse_err;
        cl = try_connect(s, MCP_KIND_SSE, &sse_err);
    }
    json_t *tools = NULL;
    int n_res = 0, n_prompts = 0;
    if (cl) {
        long t = s->cfg.connect_timeout_ms;
        if (json_object_get(mcp_client_capabilities(cl), "tools")) {
            tools = mcp_client_list_all(cl, "tools/list", "tools", 0, t, &err);
            if (!tools) {
                connecting_drop(s, cl);
                cl = NULL;
            }
        } else {
            tools = json_array();
        }
        if (cl) {
            n_res = count_list(cl, "resources", "resources/list", "resources", t);
            n_prompts = count_list(cl, "prompts", "prompts/list", "prompts", t);
        }
    }
    pthread_mutex_lock(&m->mu);
    s->connecting = NULL;
    if (cl) {
        conn *c = xcalloc(1, sizeof *c);
        c->client = cl;
        c->refs = 1;
        conn *old = s->c;
        s->c = c;
        s->state = MCP_STATE_CONNECTED;
        free(s->error);
        s->error = NULL;
        json_decref(s->tools_json);
        s->tools_json = tools;
        s->tools_dirty = false;
        s->n_resources = n_res;
        s->n_prompts = n_prompts;
        s->ever_connected = true;
        s->failures = 0;
        pthread_cond_broadcast(&m->cv);
        pthread_mutex_unlock(&m->mu);
        if (old)
            manager_conn_put(m, old);
        LOG_I("mcp", "server %s connected (%s, %zu tools)", s->cfg.name,
              mcp_client_protocol_version(cl), json_array_size(tools));
    } else {
        s->state = MCP_STATE_FAILED;
        free(s->error);
        s->error = xstrdup(err.message[0] ? err.message : "could not connect");
        s->failures++;
        long delay = 500L << (s->failures > 6 ? 6 : s->failures - 1);
        if (delay > MCP_BACKOFF_MAX_MS)
            delay = MCP_BACKOFF_MAX_MS;
        s->retry_at_ms = clock_mono_ms() + delay;
        pthread_cond_broadcast(&m->cv);
        pthread_mutex_unlock(&m->mu);
        LOG_W("mcp", "server %s failed: %s", s->cfg.name, err.message);
    }
    manager_bump(m);
}

static void *connect_thread(void *arg)
{
    connect_slot(arg);
    return NULL;
}

/* Under the lock: starts a background connect of s. */
static void start_slot_locked(slot *s)
{
    if (s->thread_live) {
        pthread_mutex_unlock(&s->m->mu);
        pthread_join(s->thread, NULL);
        pthread_mutex_lock(&s->m->mu);
        s->thread_live = false;
    }
    s->state = MCP_STATE_CONNECTING;
    s->thread_live = pthread_create(&s->thread, NULL, connect_thread, s) == 0;
    if (!s->thread_live) {
        s->state = MCP_STATE_FAILED;
        free(s->error);
        s->error = xstrdup("no thread could be started to connect it");
    }
}

/* --- life ------------------------------------------------------------------- */

static mcp_state initial_state(const mcp_server_config *c)
{
    if (c->error)
        return MCP_STATE_FAILED;
    if (c->disabled)
        return MCP_STATE_DISABLED;
    if (c->needs_approval)
        return MCP_STATE_NEEDS_APPROVAL;
    return MCP_STATE_CONNECTING;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

mcp_manager *mcp_manager_new(mcp_config_set *cfg, const mcp_manager_host *host,
                             const mcp_manager_opts *opts)
{
    mcp_manager *m = xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    m->cfg = cfg;
    if (host)
        m->host = *host;
    mcp_manager_opts o = opts ? *opts : (mcp_manager_opts){0};
    m->log_dir = dup_or_null(o.log_dir);
    m->spill_dir = dup_or_null(o.spill_dir);
    m->opts = o;
    m->opts.max_output_tokens = o.max_output_tokens > 0 ? o.max_output_tokens : 25000;
    const char *env = getenv("MAX_MCP_OUTPUT_TOKENS");
    if (env && atol(env) > 0)
        m->opts.max_output_tokens = atol(env);
    m->n = cfg ? cfg->n : 0;
    m->slots = xcalloc(m->n ? m->n : 1, sizeof *m->slots);
    m->names = xcalloc(m->n + 1, sizeof *m->names);
    for (size_t i = 0; i < m->n; i++) {
        slot *s = &m->slots[i];
        /* The slot's own copy: a sub-agent's clone and this manager never
         * share a config entry. */
        mcp_server_config_copy(&s->cfg, &cfg->servers[i]);
        s->m = m;
        s->state = initial_state(&s->cfg);
        s->error = dup_or_null(s->cfg.error);
        m->names[i] = s->cfg.name;
    }
    m->order = json_array();
    m->found = json_array();
    m->subscribed = json_array();
    m->updated = json_array();
    return m;
}

void mcp_manager_start(mcp_manager *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    if (!m->started) {
        m->started = true;
        for (size_t i = 0; i < m->n; i++)
            if (m->slots[i].state == MCP_STATE_CONNECTING)
                start_slot_locked(&m->slots[i]);
    }
    pthread_mutex_unlock(&m->mu);
}

static bool any_connecting_locked(mcp_manager *m, const char *server)
{
    for (size_t i = 0; i < m->n; i++)
        if ((!server || !strcmp(m->slots[i].cfg.name, server)) &&
            m->slots[i].state == MCP_STATE_CONNECTING)
            return true;
    return false;
}

bool mcp_manager_wait(mcp_manager *m, const char *server, long timeout_ms)
{
    if (!m)
        return true;
    struct timespec until;
    clock_deadline(&until, CLOCK_REALTIME, timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&m->mu);
    while (any_connecting_locked(m, server))
        if (pthread_cond_timedwait(&m->cv, &m->mu, &until) == ETIMEDOUT)
            break;
    bool done = !any_connecting_locked(m, server);
    pthread_mutex_unlock(&m->mu);
    return done;
}

int mcp_manager_approve(mcp_manager *m, const char *server, loom_error *err)
{
    pthread_mutex_lock(&m->mu);
    slot *s = find_slot(m, server);
    if (!s || s->state != MCP_STATE_NEEDS_APPROVAL) {
        pthread_mutex_unlock(&m->mu);
        return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                              "MCP server \"%s\" %s", server,
                              s ? "does not need approval" : "is not configured");
    }
    s->cfg.needs_approval = false;
    start_slot_locked(s);
    pthread_mutex_unlock(&m->mu);
    manager_bump(m);
    return 0;
}

int mcp_manager_reconnect(mcp_manager *m, const char *server, loom_error *err)
{
    pthread_mutex_lock(&m->mu);
    slot *s = find_slot(m, server);
    if (!s || s->state == MCP_STATE_NEEDS_APPROVAL || s->state == MCP_STATE_DISABLED ||
        s->cfg.error) {
        const char *why = !s ? "is not configured"
                          : s->cfg.error ? s->cfg.error
                          : s->state == MCP_STATE_DISABLED ? "is disabled"
                                                           : "needs approval first";
        pthread_mutex_unlock(&m->mu);
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "MCP server \"%s\" %s", server, why);
    }
    if (s->state != MCP_STATE_CONNECTING)
        start_slot_locked(s);
    pthread_mutex_unlock(&m->mu);
    mcp_manager_wait(m, server, s->cfg.connect_timeout_ms + 1000);
    pthread_mutex_lock(&m->mu);
    int rc = s->state == MCP_STATE_CONNECTED
                 ? 0
                 : loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": %s",
                                  server, s->error ? s->error : "still connecting");
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* --- requests --------------------------------------------------------------- */

/* A reference to s's connection, connecting or restarting it as needed.
 * NULL with err set. */
static conn *acquire(mcp_manager *m, slot *s, const loom_cancel *cancel, loom_error *err)
{
    pthread_mutex_lock(&m->mu);
    for (int attempt = 0;; attempt++) {
        if (s->state == MCP_STATE_CONNECTING) {
            struct timespec until;
            clock_deadline(&until, CLOCK_REALTIME, s->cfg.connect_timeout_ms + 1000);
            while (s->state == MCP_STATE_CONNECTING && !cancel_requested(cancel))
                if (pthread_cond_timedwait(&m->cv, &m->mu, &until) == ETIMEDOUT)
                    break;
        }
        if (s->state == MCP_STATE_CONNECTED && s->c && mcp_client_alive(s->c->client)) {
            conn *c = s->c;
            c->refs++;
            pthread_mutex_unlock(&m->mu);
            return c;
        }
        const char *why = s->error ? s->error : "not connected";
        if (s->state == MCP_STATE_NEEDS_APPROVAL || s->state == MCP_STATE_DISABLED ||
            s->cfg.error || attempt > 0 || s->state == MCP_STATE_CONNECTING) {
            loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\" %s: %s",
                           s->cfg.name,
                           s->state == MCP_STATE_NEEDS_APPROVAL ? "needs approval"
                           : s->state == MCP_STATE_DISABLED    ? "is disabled"
                           : s->state == MCP_STATE_CONNECTING  ? "is still connecting"
                                                               : "is not available",
                           why);
            pthread_mutex_unlock(&m->mu);
            return NULL;
        }
        /* Failed (or its connection died): restart it, after the backoff. */
        int64_t wait = s->retry_at_ms - clock_mono_ms();
        if (wait > 0) {
            pthread_mutex_unlock(&m->mu);
            clock_sleep_ms(wait, cancel);
            pthread_mutex_lock(&m->mu);
            if (cancel_requested(cancel)) {
                pthread_mutex_unlock(&m->mu);
                loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "cancelled");
                return NULL;
            }
        }
        if (s->state != MCP_STATE_CONNECTING) {
            LOG_I("mcp", "restarting server %s", s->cfg.name);
            start_slot_locked(s);
        }
    }
}

json_t *mcp_manager_request(mcp_manager *m, const char *server, const char *method,
                            json_t *params, const mcp_call_opts *opts, loom_error *err)
{
    slot *s = find_slot(m, server);
    if (!s) {
        json_decref(params);
        loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no MCP server named \"%s\"", server);
        return NULL;
    }
    conn *c = acquire(m, s, opts ? opts->cancel : NULL, err);
    if (!c) {
        json_decref(params);
        return NULL;
    }
    mcp_call_opts o = opts ? *opts : (mcp_call_opts){0};
    if (o.timeout_ms <= 0)
        o.timeout_ms = s->cfg.timeout_ms;
    json_t *r = mcp_client_request(c->client, method, params, &o, err);
    manager_conn_put(m, c);
    return r;
}

const char *const *mcp_manager_servers(mcp_manager *m, size_t *n)
{
    *n = m ? m->n : 0;
    return m ? m->names : NULL;
}

bool mcp_manager_offers(mcp_manager *m, const char *server, const char *cap)
{
    pthread_mutex_lock(&m->mu);
    slot *s = find_slot(m, server);
    bool yes = false;
    if (s && s->c && s->state == MCP_STATE_CONNECTED) {
        const json_t *caps = mcp_client_capabilities(s->c->client);
        const char *dot = strchr(cap, '.');
        if (dot) {
            char head[64];
            snprintf(head, sizeof head, "%.*s", (int)(dot - cap), cap);
            yes = json_is_true(json_object_get(json_object_get(caps, head), dot + 1));
        } else {
            yes = json_object_get(caps, cap) != NULL;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return yes;
}

/* --- status ----------------------------------------------------------------- */

json_t *mcp_manager_status(mcp_manager *m)
{
    json_t *arr = json_array();
    if (!m)
        return arr;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        slot *s = &m->slots[i];
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s}", "name", s->cfg.name, "scope",
                              mcp_scope_name(s->cfg.scope), "transport",
                              mcp_kind_name(s->cfg.kind), "state", mcp_state_name(s->state),
                              "tools", s->tools_json ? (int)json_array_size(s->tools_json) : 0,
                              "resources", s->n_resources, "prompts", s->n_prompts, "source",
                              s->cfg.source ? s->cfg.source : "");
        if (s->error && s->state == MCP_STATE_FAILED)
            json_object_set_new(o, "error", json_string(s->error));
        /* What it runs or reaches, for the person who approves it. */
        loom_str target = LOOM_STR_INIT;
        if (s->cfg.kind == MCP_KIND_STDIO) {
            str_puts(&target, s->cfg.command ? s->cfg.command : "");
            for (char **a = s->cfg.args; a && *a; a++)
                str_printf(&target, " %s", *a);
        } else {
            str_puts(&target, s->cfg.url ? s->cfg.url : "");
        }
        json_object_set_new(o, "target", json_stringn(str_cstr(&target), target.len));
        str_free(&target);
        if (s->c && s->state == MCP_STATE_CONNECTED) {
            const char *v = mcp_client_protocol_version(s->c->client);
            if (v)
                json_object_set_new(o, "protocolVersion", json_string(v));
            const json_t *info = mcp_client_server_info(s->c->client);
            if (info)
                json_object_set_new(o, "serverInfo", json_deep_copy(info));
            const char *ins = mcp_client_instructions(s->c->client);
            json_object_set_new(o, "instructions", json_boolean(ins && *ins));
        }
        json_array_append_new(arr, o);
    }
    pthread_mutex_unlock(&m->mu);
    return arr;
}

uint64_t mcp_manager_generation(mcp_manager *m)
{
    return m ? atomic_load(&m->generation) : 0;
}


void mcp_manager_subscribe(mcp_manager *m, const char *server, const char *uri)
{
    if (!m || !mcp_manager_offers(m, server, "resources.subscribe"))
        return;
    loom_str key = LOOM_STR_INIT;
    str_printf(&key, "%s\n%s", server, uri);
    pthread_mutex_lock(&m->mu);
    bool have = manager_name_in(m->subscribed, str_cstr(&key));
    if (!have)
        json_array_append_new(m->subscribed, json_string(str_cstr(&key)));
    pthread_mutex_unlock(&m->mu);
    str_free(&key);
    if (have)
        return;
    loom_error err;
    mcp_call_opts o = {.timeout_ms = 10000};
    json_t *r = mcp_manager_request(m, server, "resources/subscribe",
                                    json_pack("{s:s}", "uri", uri), &o, &err);
    if (!r)
        LOG_W("mcp", "server %s: resources/subscribe %s: %s", server, uri, err.message);
    json_decref(r);
}

char *mcp_manager_take_updates(mcp_manager *m)
{
    if (!m)
        return NULL;
    pthread_mutex_lock(&m->mu);
    json_t *u = m->updated;
    m->updated = json_array();
    pthread_mutex_unlock(&m->mu);
    char *out = NULL;
    if (json_array_size(u)) {
        loom_str s = LOOM_STR_INIT;
        size_t i;
        json_t *e;
        json_array_foreach(u, i, e)
            str_printf(&s, "%sThe resource %s of MCP server %s changed since it was read "
                           "(resources/updated); read it again with ReadMcpResource if it matters.",
                       i ? "\n" : "", json_string_value(json_object_get(e, "uri")),
                       json_string_value(json_object_get(e, "server")));
        out = str_steal(&s);
    }
    json_decref(u);
    return out;
}

const char *mcp_manager_spill_dir(const mcp_manager *m)
{
    return m && m->spill_dir ? m->spill_dir : NULL;
}

int64_t mcp_manager_max_output_tokens(const mcp_manager *m)
{
    return m ? m->opts.max_output_tokens : 25000;
}

/* --- prompts ---------------------------------------------------------------- */

json_t *mcp_manager_prompts(mcp_manager *m)
{
    json_t *out = json_array();
    for (size_t i = 0; m && i < m->n; i++) {
        slot *s = &m->slots[i];
        pthread_mutex_lock(&m->mu);
        conn *c = s->c && s->state == MCP_STATE_CONNECTED && s->n_prompts > 0 ? s->c : NULL;
        if (c)
            c->refs++;
        pthread_mutex_unlock(&m->mu);
        if (!c)
            continue;
        loom_error err;
        json_t *ps = mcp_client_list_all(c->client, "prompts/list", "prompts", 0,
                                         s->cfg.connect_timeout_ms, &err);
        manager_conn_put(m, c);
        size_t k;
        json_t *p;
        json_array_foreach(ps, k, p) {
            const char *name = json_string_value(json_object_get(p, "name"));
            if (!name)
                continue;
            char *cmd = mcp_tool_loom_name(s->cfg.name, name);
            json_t *e = json_pack("{s:s,s:s,s:s,s:s}", "server", s->cfg.name, "name", name,
                                  "command", cmd, "description",
                                  json_get_str(p, "description", ""));
            free(cmd);
            json_t *args = json_object_get(p, "arguments");
            json_object_set_new(e, "arguments", json_is_array(args) ? json_deep_copy(args)
                                                                      : json_array());
            json_array_append_new(out, e);
        }
        json_decref(ps);
    }
    return out;
}

/* --- clone and free ------------------------------------------------------------ */

mcp_manager *mcp_manager_clone(mcp_manager *m)
{
    mcp_config_set *cfg = xcalloc(1, sizeof *cfg);
    cfg->n = m->n;
    cfg->servers = xcalloc(m->n ? m->n : 1, sizeof *cfg->servers);
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        mcp_server_config_copy(&cfg->servers[i], &m->slots[i].cfg);
        /* What the person approved for the session holds for its agents. */
        cfg->servers[i].needs_approval = m->slots[i].state == MCP_STATE_NEEDS_APPROVAL;
    }
    pthread_mutex_unlock(&m->mu);
    cfg->warnings = json_array();
    mcp_manager *c = mcp_manager_new(cfg, &m->host, &m->opts);
    mcp_manager_start(c);
    return c;
}

static void *close_thread(void *arg)
{
    slot *s = arg;
    manager_conn_put(s->m, s->c);
    return NULL;
}

void mcp_manager_free(mcp_manager *m)
{
    if (!m)
        return;
    atomic_store(&m->closing, CANCEL_RUN);
    /* Connections close in parallel: a server that ignores EOF on stdin
     * costs its grace period once, not once per server. */
    pthread_t *closers = xcalloc(m->n ? m->n : 1, sizeof *closers);
    bool *closing = xcalloc(m->n ? m->n : 1, sizeof *closing);
    /* A connect still under way (a server that never answers initialize or
     * tools/list) fails now instead of after its connect timeout. */
    pthread_mutex_lock(&m->mu);
    atomic_store(&m->closing, CANCEL_RUN);
    for (size_t i = 0; i < m->n; i++)
        if (m->slots[i].connecting)
            mcp_client_abort(m->slots[i].connecting, "Loom is closing the connection");
    pthread_mutex_unlock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        slot *s = &m->slots[i];
        if (s->thread_live)
            pthread_join(s->thread, NULL);
        if (s->c && !(closing[i] = pthread_create(&closers[i], NULL, close_thread, s) == 0))
            manager_conn_put(m, s->c);
    }
    for (size_t i = 0; i < m->n; i++)
        if (closing[i])
            pthread_join(closers[i], NULL);
    free(closers);
    free(closing);
    for (size_t i = 0; i < m->n; i++) {
        slot *s = &m->slots[i];
        json_decref(s->tools_json);
        json_decref(s->tools_from);
        free(s->tools);
        free(s->error);
        mcp_server_config_free(&s->cfg);
    }
    for (size_t i = 0; i < m->n_made; i++)
        mcp_tool_free(m->made[i]);
    for (size_t i = 0; i < m->n_defs; i++)
        m->defs[i].release(m->defs[i].def);
    free(m->made);
    free(m->defs);
    free(m->current);
    free(m->deferred_now);
    json_decref(m->order);
    json_decref(m->found);
    json_decref(m->subscribed);
    json_decref(m->updated);
    free(m->slots);
    free(m->names);
    mcp_config_set_free(m->cfg);
    free(m->cfg);
    free(m->log_dir);
    free(m->spill_dir);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* mcp.c — a session's MCP servers, wired into its runs: the manager
 * (ext/mcp/manager.h) made from the configuration, the tool-set port the
 * loop refreshes at turn boundaries (built-in tools, then the servers'
 * tools, their instructions in the same step), elicitation answered by a
 * hook, the person (through the run's elicit callback) or declined, roots,
 * and a goal's MCP parts: `/mcp__server__prompt args` and `@server:uri`.
 *
 * Threading: the port runs on the run's thread; the manager's callbacks
 * (elicitation, roots, log) on its clients' threads; the active run's
 * handler is swapped under mu.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/event.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "ext/knowledge/knowledge.h"
#include "ext/mcp/config.h"
#include "ext/mcp/manager.h"
#include "ext/mcp/resources.h"
#include "governance/governance.h"

/* How long the first request of a session waits for servers that are still
 * connecting (LOOM_MCP_STARTUP_WAIT_MS overrides): long enough for a local
 * stdio server, short enough that a slow one does not hold the run up — it
 * joins at the next turn boundary. */
#define MCP_STARTUP_WAIT_MS 2000L
/* seed 001 §9: defer past 10 % of the window. */
#define MCP_DEFER_SHARE 0.10
/* The most of a server's prompt (/mcp__server__prompt) that becomes a goal. */
#define MCP_PROMPT_MAX_BYTES (100u * 1024u)

struct api_mcp {
    loom_session *s;
    mcp_manager *m;
    pthread_mutex_t mu;
    loom_elicit_fn elicit;        /* the active run's (the REPL's form); NULL: none */
    void *elicit_ctx;
    void (*emit)(void *ctx, loom_event_type type, loom_visibility vis, const char *corr,
                 json_t *payload);
    void *emit_ctx;
    bool startup_waited;
    bool fresh_run;               /* the run has not had its tool set yet */
    uint64_t built_gen;
    tool_registry *current;
    tool_registry **old;          /* earlier sets: a run may still hold one */
    size_t n_old;
    loom_str ext;
    json_t *last_status;          /* what mcp.server_changed last reported */
};

/* --- configuration ------------------------------------------------------------ */

/* The configured servers; NULL with err set when a --mcp-config value or
 * a settings file the user named cannot be read. */
static mcp_config_set *load_config(loom_agent *a, loom_error *err)
{
    mcp_config_inputs in;
    loom_status st;
    if (api_mcp_config_inputs(a->values, a->files, a->trusted, a->cwd, NULL, &in, &st) != 0) {
        loom_error_set(err, st.code, "%s", st.message);
        return NULL;
    }
    json_t *plugin_servers = api_plugin_servers(&a->plugins);
    in.plugin_servers = plugin_servers;
    mcp_config_set *set = xcalloc(1, sizeof *set);
    int rc = mcp_config_load(&in, set, err);
    api_mcp_config_inputs_free(&in);
    json_decref(plugin_servers);
    if (rc != 0) {
        mcp_config_set_free(set);
        free(set);
        return NULL;
    }
    return set;
}

/* --- the manager's host ------------------------------------------------------------ */

/* SEP-1034: a field the answer leaves out takes the schema's default. */
static void apply_defaults(json_t *result, const json_t *params)
{
    if (strcmp(json_get_str(result, "action", ""), "accept") != 0)
        return;
    const json_t *props = json_object_get(json_object_get(params, "requestedSchema"),
                                          "properties");
    json_t *content = json_object_get(result, "content");
    if (!content) {
        content = json_object();
        json_object_set_new(result, "content", content);
    }
    const char *k;
    json_t *p;
    json_object_foreach((json_t *)props, k, p) {
        json_t *d = json_object_get(p, "default");
        if (d && !json_object_get(content, k))
            json_object_set(content, k, d);
    }
}

static json_t *fire_elicitation_hook(loom_session *s, const char *server, const json_t *params)
{
    governance *g = s->gov;
    if (!g || hook_registry_count(g->hooks, HOOK_ELICITATION) == 0)
        return NULL;
    json_t *extra = json_pack("{s:s,s:s,s:s}", "mcp_server_name", server, "message",
                              json_get_str(params, "message", ""), "mode",
                              json_get_str(params, "mode", "form"));
    const json_t *schema = json_object_get(params, "requestedSchema");
    if (schema)
        json_object_set_new(extra, "requested_schema", json_deep_copy(schema));
    const char *url = json_get_str(params, "url", NULL);
    if (url)
        json_object_set_new(extra, "url", json_string(url));
    hook_outcome o = governance_fire(g, HOOK_ELICITATION, extra, NULL);
    json_t *answer = o.elicitation ? json_incref(o.elicitation) : NULL;
    if (!answer && o.blocked)
        answer = json_pack("{s:s}", "action", "decline");
    hook_outcome_free(&o);
    return answer;
}

static json_t *host_elicit(void *ctx, const char *server, const json_t *params)
{
    struct api_mcp *x = ctx;
    json_t *answer = fire_elicitation_hook(x->s, server, params);
    if (!answer) {
        pthread_mutex_lock(&x->mu);
        loom_elicit_fn fn = x->elicit;
        void *fctx = x->elicit_ctx;
        pthread_mutex_unlock(&x->mu);
        if (fn) {
            char *req = json_dump_compact(params);
            char *text = fn(fctx, server, req ? req : "{}");
            free(req);
            loom_error err;
            answer = text ? json_parse(text, strlen(text), "elicitation answer", &err) : NULL;
            free(text);
            if (answer && !json_is_object(answer)) {
                json_decref(answer);
                answer = NULL;
            }
        }
    }
    /* Headless, or nobody answered: a structured decline the server can act on. */
    if (!answer)
        answer = json_pack("{s:s}", "action", "decline");
    apply_defaults(answer, params);
    governance *g = x->s->gov;
    if (g && hook_registry_count(g->hooks, HOOK_ELICITATION_RESULT) > 0) {
        json_t *extra = json_pack("{s:s,s:s}", "mcp_server_name", server, "action",
                                  json_get_str(answer, "action", "decline"));
        json_t *content = json_object_get(answer, "content");
        if (content)
            json_object_set_new(extra, "content", json_deep_copy(content));
        hook_outcome o = governance_fire(g, HOOK_ELICITATION_RESULT, extra, NULL);
        hook_outcome_free(&o);
    }
    return answer;
}

static void add_root(json_t *roots, const char *dir)
{
    if (!dir || !*dir)
        return;
    loom_str uri = LOOM_STR_INIT;
    str_printf(&uri, "file://%s", dir);
    const char *base = strrchr(dir, '/');
    json_array_append_new(roots, json_pack("{s:s,s:s}", "uri", str_cstr(&uri), "name",
                                           base && base[1] ? base + 1 : dir));
    str_free(&uri);
}

/* roots/list: the workspace and the directories added to it. */
static json_t *host_roots(void *ctx, const char *server)
{
    struct api_mcp *x = ctx;
    (void)server;
    json_t *roots = json_array();
    add_root(roots, x->s->agent->cwd);
    const char *dirs = api_value(x->s->agent->values, "add_dirs");
    for (const char *p = dirs; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *d = xstrndup(p, n);
        add_root(roots, d);
        free(d);
        p += n + (nl ? 1 : 0);
    }
    return roots;
}

static json_t *host_sample(void *ctx, const char *server, const json_t *params, char **why)
{
    struct api_mcp *x = ctx;
    return api_mcp_sample(x->s, server, params, why);
}

/* --- life ------------------------------------------------------------------------ */

int api_mcp_open(loom_session *s, loom_error *err)
{
    mcp_config_set *cfg = load_config(s->agent, err);
    if (!cfg)
        return -1;
    if (cfg->n == 0) {
        mcp_config_set_free(cfg);
        free(cfg);
        return 0; /* no servers: the run's tools are the built-ins, as always */
    }
    struct api_mcp *x = xcalloc(1, sizeof *x);
    x->s = s;
    pthread_mutex_init(&x->mu, NULL);
    mcp_manager_host host = {.ctx = x, .elicit = host_elicit, .roots = host_roots,
                             .sample = api_mcp_sampling_enabled(s->agent) ? host_sample : NULL};
    /* The servers' stderr logs go in the session's directory, which renew
     * would otherwise create only later: without it they were dropped. */
    loom_error ignore;
    if (s->mf_dir && file_mkdirs(s->mf_dir, 0700, &ignore) != 0)
        LOG_W("mcp", "the servers' logs are dropped: %s", ignore.message);
    /* Results cut at the cap are spilled there whole, for the model to
     * Read: the session's own directory reads like the workspace. */
    if (s->mf_dir && s->gov)
        governance_add_read_dir(s->gov, s->mf_dir);
    mcp_manager_opts opts = {.log_dir = s->mf_dir, .spill_dir = s->mf_dir};
    x->m = mcp_manager_new(cfg, &host, &opts);
    mcp_manager_start(x->m);
    x->built_gen = (uint64_t)-1;
    s->mcp = x;
    return 0;
}

void api_mcp_close(loom_session *s)
{
    struct api_mcp *x = s->mcp;
    if (!x)
        return;
    mcp_manager_free(x->m);
    tool_registry_free(x->current);
    for (size_t i = 0; i < x->n_old; i++)
        tool_registry_free(x->old[i]);
    free(x->old);
    str_free(&x->ext);
    json_decref(x->last_status);
    pthread_mutex_destroy(&x->mu);
    free(x);
    s->mcp = NULL;
}

/* --- the tool set ---------------------------------------------------------------- */

static double defer_share(void)
{
    /* Claude Code's switch: ENABLE_TOOL_SEARCH=true|false|auto|auto:N (N %). */
    const char *e = getenv("ENABLE_TOOL_SEARCH");
    if (!e || !*e || !strcmp(e, "auto"))
        return MCP_DEFER_SHARE;
    if (!strcmp(e, "false") || !strcmp(e, "0"))
        return 0;
    if (!strcmp(e, "true") || !strcmp(e, "1"))
        return 1e-9; /* any MCP tool at all is deferred */
    if (!strncmp(e, "auto:", 5)) {
        double pct = atof(e + 5);
        return pct > 0 ? pct / 100.0 : 0;
    }
    return MCP_DEFER_SHARE;
}

/* mcp.server_changed for every server whose state or counts moved. */
static void report_changes(struct api_mcp *x)
{
    if (!x->emit)
        return;
    json_t *now = mcp_manager_status(x->m);
    size_t i;
    json_t *srv;
    json_array_foreach(now, i, srv) {
        json_t *was = json_array_get(x->last_status, i);
        if (was && json_equal(json_object_get(was, "state"), json_object_get(srv, "state")) &&
            json_equal(json_object_get(was, "tools"), json_object_get(srv, "tools")))
            continue;
        x->emit(x->emit_ctx, LOOM_EV_MCP_SERVER_CHANGED, LOOM_VIS_USER, NULL,
                event_mcp_server_changed(json_get_str(srv, "name", ""),
                                         json_get_str(srv, "state", ""),
                                         json_get_str(srv, "error", NULL),
                                         (int)json_get_int(srv, "tools", 0),
                                         (int)json_get_int(srv, "resources", 0),
                                         (int)json_get_int(srv, "prompts", 0)));
    }
    json_decref(x->last_status);
    x->last_status = now;
}

/* The first run of a session waits (once) for the servers still
 * connecting, so that its start event and its first request see them. */
static void startup_wait(struct api_mcp *x)
{
    if (x->startup_waited)
        return;
    const char *w = getenv("LOOM_MCP_STARTUP_WAIT_MS");
    mcp_manager_wait(x->m, NULL, w && *w ? atol(w) : MCP_STARTUP_WAIT_MS);
    x->startup_waited = true;
}

void api_mcp_startup_wait(loom_session *s)
{
    if (s->mcp)
        startup_wait(s->mcp);
}

static bool refresh(void *ctx, const tool_registry **tools, const char **ext)
{
    struct api_mcp *x = ctx;
    startup_wait(x);
    uint64_t gen = mcp_manager_generation(x->m);
    bool changed = gen != x->built_gen || !x->current;
    if (changed) {
        loom_agent *a = x->s->agent;
        tool_registry *reg = tool_registry_new();
        loom_error err;
        loom_error_clear(&err);
        tool_registry_add_builtins(reg, &err);
        /* WebSearch (when the user configured it), then Agent and
         * SendMessage, between the built-ins and the servers' tools, as in
         * the agent's own registry. */
        if (a->web_search && tool_registry_add(reg, a->web_search, &err) != 0)
            LOG_W("mcp", "tool set: %s", err.message);
        if (a->agents.enabled && agents_add_tools(reg, a->agents_catalog, &err) != 0)
            LOG_W("agents", "tool set: %s", err.message);
        str_clear(&x->ext);
        mcp_toolset_opts o = {.window_tokens = a->provider.context_window,
                              .defer_share = defer_share(),
                              .builtin_tokens = tool_registry_tokens(reg)};
        if (mcp_manager_toolset(x->m, reg, &x->ext, &o, &err) != 0)
            LOG_W("mcp", "tool set: %s", err.message);
        if (x->current) {
            x->old = xrealloc(x->old, (x->n_old + 1) * sizeof *x->old);
            x->old[x->n_old++] = x->current;
        }
        x->current = reg;
        x->built_gen = gen;
        report_changes(x);
    }
    if (!changed && !x->fresh_run)
        return false;
    x->fresh_run = false;
    *tools = x->current;
    *ext = x->ext.len ? str_cstr(&x->ext) : NULL;
    return true;
}

static char *take_notes(void *ctx)
{
    struct api_mcp *x = ctx;
    return mcp_manager_take_updates(x->m);
}

void api_mcp_run_begin(loom_session *s, loop_io *io, const loom_run_options *opts)
{
    struct api_mcp *x = s->mcp;
    if (!x)
        return;
    pthread_mutex_lock(&x->mu);
    x->elicit = opts ? opts->elicit : NULL;
    x->elicit_ctx = opts ? opts->elicit_ctx : NULL;
    pthread_mutex_unlock(&x->mu);
    x->emit = io->emit;
    x->emit_ctx = io->emit_ctx;
    x->fresh_run = true;
    io->toolset = (loop_toolset_port){.ctx = x, .refresh = refresh, .take_notes = take_notes};
}

void api_mcp_run_end(loom_session *s)
{
    struct api_mcp *x = s->mcp;
    if (!x)
        return;
    pthread_mutex_lock(&x->mu);
    x->elicit = NULL;
    x->elicit_ctx = NULL;
    pthread_mutex_unlock(&x->mu);
    x->emit = NULL;
    x->emit_ctx = NULL;
}

json_t *api_mcp_tool_call(void *ctx, const char *server, const char *tool, json_t *args,
                          const loom_cancel *cancel, loom_str *why)
{
    mcp_manager *m = api_mcp_manager(ctx);
    if (!m) {
        json_decref(args);
        str_puts(why, "this session has no MCP servers");
        return NULL;
    }
    json_t *params = json_pack("{s:s, s:o}", "name", tool, "arguments", args);
    mcp_call_opts o = {.cancel = cancel};
    loom_error err;
    loom_error_clear(&err);
    json_t *res = mcp_manager_request(m, server, "tools/call", params, &o, &err);
    if (!res)
        str_puts(why, err.message);
    return res;
}

mcp_manager *api_mcp_manager(loom_session *s)
{
    return s && s->mcp ? s->mcp->m : NULL;
}

json_t *api_mcp_status(loom_session *s)
{
    return s->mcp ? mcp_manager_status(s->mcp->m) : json_array();
}

/* --- the goal: prompts and mentions ------------------------------------------------ */

/* The text of a prompts/get result: its messages' text, one block each. */
static char *prompt_text(const json_t *result)
{
    loom_str out = LOOM_STR_INIT;
    size_t i;
    json_t *msg;
    json_array_foreach(json_object_get(result, "messages"), i, msg) {
        const json_t *c = json_object_get(msg, "content");
        const char *type = json_get_str(c, "type", "");
        const char *text = NULL;
        if (!strcmp(type, "text"))
            text = json_get_str(c, "text", NULL);
        else if (!strcmp(type, "resource"))
            text = json_get_str(json_object_get(c, "resource"), "text", NULL);
        if (text)
            str_printf(&out, "%s%s", out.len ? "\n\n" : "", text);
        if (out.len > MCP_PROMPT_MAX_BYTES)
            break;
    }
    if (out.len > MCP_PROMPT_MAX_BYTES) {
        /* A server's prompt becomes the user's message: bounded, cut on a
         * character boundary. */
        size_t n = MCP_PROMPT_MAX_BYTES;
        while (n > 0 && ((unsigned char)out.ptr[n] & 0xC0) == 0x80)
            n--;
        out.ptr[n] = '\0';
        out.len = n;
        str_puts(&out, "\n[the prompt was cut at 100 KB]");
    }
    return str_steal(&out);
}

/* `/mcp__server__prompt a b c`: the prompt's messages become the goal. The
 * words fill the prompt's arguments in order; the last takes the rest.
 * NULL (err clear) when the goal is no MCP prompt command. */
static char *run_prompt(struct api_mcp *x, const char *goal, loom_error *err)
{
    loom_error_clear(err);
    if (strncmp(goal, "/mcp__", 6) != 0)
        return NULL;
    size_t cmd_len = strcspn(goal + 1, " \t\n");
    char *cmd = xstrndup(goal + 1, cmd_len);
    const char *rest = goal + 1 + cmd_len;
    mcp_manager_wait(x->m, NULL, MCP_DEFAULT_CONNECT_TIMEOUT_MS);
    json_t *prompts = mcp_manager_prompts(x->m);
    const json_t *hit = NULL;
    size_t i;
    json_t *p;
    json_array_foreach(prompts, i, p)
        if (!strcmp(json_get_str(p, "command", ""), cmd))
            hit = p;
    char *text = NULL;
    if (!hit) {
        loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                       "/%s: no MCP server offers that prompt (see /mcp)", cmd);
    } else {
        json_t *args = json_object();
        const json_t *decl = json_object_get(hit, "arguments");
        size_t n = json_array_size(decl);
        for (size_t k = 0; k < n; k++) {
            rest += strspn(rest, " \t\n");
            if (!*rest)
                break;
            size_t len = k + 1 == n ? strlen(rest) : strcspn(rest, " \t\n");
            char *v = xstrndup(rest, len);
            json_object_set_new(args, json_get_str(json_array_get(decl, k), "name", "arg"),
                                json_string(v));
            free(v);
            rest += len;
        }
        json_t *params = json_pack("{s:s,s:o}", "name", json_get_str(hit, "name", ""),
                                   "arguments", args);
        json_t *r = mcp_manager_request(x->m, json_get_str(hit, "server", ""), "prompts/get",
                                        params, NULL, err);
        if (r)
            text = prompt_text(r);
        json_decref(r);
    }
    json_decref(prompts);
    free(cmd);
    return text;
}

char *api_mcp_prepare_goal(loom_session *s, const char *goal, loom_error *err)
{
    struct api_mcp *x = s->mcp;
    loom_error_clear(err);
    if (!x)
        return xstrdup(goal);
    char *g = run_prompt(x, goal, err);
    if (!g && err->code)
        return NULL;
    if (!g)
        g = xstrdup(goal);
    if (!strchr(g, '@'))
        return g;
    char *expanded = mcp_expand_mentions(x->m, g, err);
    if (expanded) {
        free(g);
        return expanded;
    }
    return g;
}

/* --- loom.h ----------------------------------------------------------------------- */

char *loom_session_mcp_status_json(loom_session *s)
{
    if (!s)
        return NULL;
    json_t *st = api_mcp_status(s);
    char *text = json_dump_compact(st);
    json_decref(st);
    return text;
}

int loom_session_mcp_wait(loom_session *s, long timeout_ms)
{
    if (!s || !s->mcp)
        return 1;
    return mcp_manager_wait(s->mcp->m, NULL, timeout_ms) ? 1 : 0;
}

static void add_names(json_t *names, const tool_registry *reg)
{
    for (size_t i = 0; reg && i < tool_registry_count(reg); i++) {
        const char *name = tool_registry_at(reg, i)->name;
        size_t j;
        json_t *v;
        bool seen = false;
        json_array_foreach(names, j, v) seen = seen || !strcmp(json_string_value(v), name);
        if (!seen)
            json_array_append_new(names, json_string(name));
    }
}

char *loom_session_tools_json(loom_session *s)
{
    if (!s)
        return NULL;
    json_t *names = json_array();
    add_names(names, s->agent->tools);
    /* The knowledge tools, offered when a source is configured (api/extensions.c). */
    const tool_def *kt[2] = {knowledge_question_tool(api_ext_knowledge(s)),
                             knowledge_search_tool(api_ext_knowledge(s))};
    for (int i = 0; i < 2; i++)
        if (kt[i])
            json_array_append_new(names, json_string(kt[i]->name));
    if (s->mcp) {
        /* The servers' tools as the first request will have them: after
         * the start-up wait that request makes anyway. */
        struct api_mcp *x = s->mcp;
        startup_wait(x);
        tool_registry *reg = tool_registry_new();
        loom_str ext = LOOM_STR_INIT;
        loom_error err;
        loom_error_clear(&err);
        mcp_toolset_opts o = {.window_tokens = s->agent->provider.context_window,
                              .defer_share = defer_share(),
                              .builtin_tokens = tool_registry_tokens(s->agent->tools)};
        if (mcp_manager_toolset(x->m, reg, &ext, &o, &err) != 0)
            LOG_W("mcp", "tool names: %s", err.message);
        add_names(names, reg);
        str_free(&ext);
        tool_registry_free(reg);
    }
    char *text = json_dump_compact(names);
    json_decref(names);
    return text;
}

int loom_session_mcp_reconnect(loom_session *s, const char *server, loom_status *st)
{
    API_CHECK_ARG(st, s, -1);
    API_CHECK_ARG(st, server, -1);
    if (!s->mcp)
        return api_status_set(st, LOOM_ERR_RESOURCE_NOT_FOUND, "no MCP servers are configured");
    loom_error err;
    if (mcp_manager_reconnect(s->mcp->m, server, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    api_status_ok(st);
    return 0;
}

int loom_session_mcp_approve(loom_session *s, const char *server, loom_status *st)
{
    API_CHECK_ARG(st, s, -1);
    API_CHECK_ARG(st, server, -1);
    if (!s->mcp)
        return api_status_set(st, LOOM_ERR_RESOURCE_NOT_FOUND, "no MCP servers are configured");
    loom_error err;
    loom_agent *a = s->agent;
    mcp_config_inputs in = {.project_dir = a->cwd, .trusted = a->trusted};
    for (int i = 0; i < 3; i++)
        in.settings[i] = a->files[i];
    if (mcp_manager_approve(s->mcp->m, server, &err) != 0 ||
        mcp_config_approve(&in, server, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    api_status_ok(st);
    return 0;
}

char *loom_session_mcp_prompts_json(loom_session *s)
{
    if (!s)
        return NULL;
    json_t *p = s->mcp ? mcp_manager_prompts(s->mcp->m) : json_array();
    char *text = json_dump_compact(p);
    json_decref(p);
    return text;
}

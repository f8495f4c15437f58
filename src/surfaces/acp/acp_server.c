/* acp_server.c — the ACP methods of `loom acp` (acp.h, docs/acp.md):
 * initialize, authenticate, session/new, session/load (the conversation
 * replayed as session/update), session/list, session/set_mode (Loom's
 * permission modes), session/set_config_option (the model); session/prompt
 * and session/cancel are acp_prompt.c's. Every request gets a result or a
 * JSON-RPC error, whatever the line held. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/acp/acp_server_int.h"

static const struct {
    const char *id, *name, *description;
} MODES[] = {
    {"default", "Default", "Ask before edits and commands the rules do not allow"},
    {"acceptEdits", "Accept edits", "File edits in the workspace go ahead; commands still ask"},
    {"plan", "Plan", "Read-only: the agent plans and changes nothing"},
    {"auto", "Auto", "A classifier model decides what would otherwise ask"},
    {"dontAsk", "Don't ask", "What the rules do not allow is denied, never asked"},
    {"bypassPermissions", "Bypass permissions", "Everything but the deny rules goes ahead"},
    {"fullAccess", "Full access", "Everything goes ahead"},
    {"delegate", "Delegate", "Only the agent tools (for a team lead)"},
};

/* ---- helpers ---------------------------------------------------------------------- */

acp_sess *acp_find_session(acp_server *srv, const json_t *params, const json_t *id)
{
    const char *sid = json_get_str(params, "sessionId", NULL);
    if (!sid) {
        if (id)
            acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                           "Invalid params: \"sessionId\" (a string) is required");
        return NULL;
    }
    pthread_mutex_lock(&srv->mu);
    acp_sess *ss = srv->sessions;
    while (ss && strcmp(ss->id, sid) != 0)
        ss = ss->next;
    pthread_mutex_unlock(&srv->mu);
    if (!ss && id)
        acp_send_error(&srv->w, id, ACP_NOT_FOUND,
                       "Resource not found: no session \"%.200s\" (session/new or session/load "
                       "first)",
                       sid);
    return ss;
}

void acp_send_update(acp_server *srv, const char *session_id, json_t *update)
{
    acp_send_notification(&srv->w, "session/update",
                          json_pack("{s:s, s:o}", "sessionId", session_id, "update", update));
}

void acp_send_mode(acp_server *srv, acp_sess *ss)
{
    acp_send_update(srv, ss->id,
                    json_pack("{s:s, s:s}", "sessionUpdate", "current_mode_update",
                              "currentModeId", loom_session_permission_mode(ss->session)));
}

static bool busy(acp_server *srv, acp_sess *ss)
{
    pthread_mutex_lock(&srv->mu);
    bool b = ss->busy;
    pthread_mutex_unlock(&srv->mu);
    return b;
}

static json_t *modes_json(acp_sess *ss)
{
    json_t *avail = json_array();
    for (size_t i = 0; i < sizeof MODES / sizeof MODES[0]; i++)
        json_array_append_new(avail, json_pack("{s:s, s:s, s:s}", "id", MODES[i].id, "name",
                                               MODES[i].name, "description",
                                               MODES[i].description));
    return json_pack("{s:s, s:o}", "currentModeId", loom_session_permission_mode(ss->session),
                     "availableModes", avail);
}

static bool known_mode(const char *m)
{
    for (size_t i = 0; i < sizeof MODES / sizeof MODES[0]; i++)
        if (strcmp(MODES[i].id, m) == 0)
            return true;
    return false;
}

/* configOptions: the model, chosen among the table's aliases (or the id in use). */
static json_t *config_options(acp_sess *ss)
{
    const char *now = loom_agent_model(ss->agent);
    json_t *opts = json_array();
    const char *current = NULL;
    char *text = loom_models_json();
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    size_t i;
    json_t *m;
    json_array_foreach(json_get_arr(doc, "models"), i, m) {
        const char *alias = json_get_str(m, "alias", NULL), *id = json_get_str(m, "id", "");
        if (!alias)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%s (%s)", alias, id);
        json_array_append_new(opts, json_pack("{s:s, s:s}", "value", alias, "name", name));
        if (now && (strcmp(now, id) == 0 || strcmp(now, alias) == 0) && !current)
            current = json_string_value(json_object_get(json_array_get(opts, json_array_size(opts) - 1), "value"));
    }
    if (!current && now) {
        json_array_append_new(opts, json_pack("{s:s, s:s}", "value", now, "name", now));
        current = now;
    }
    json_t *opt = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "id", "model", "name", "Model",
                            "category", "model", "type", "select", "currentValue",
                            current ? current : "", "options", opts);
    json_decref(doc);
    return json_pack("[o]", opt);
}

/* The client's mcpServers as loom's mcp_config value: a JSON array holding
 * one {"mcpServers": {…}} text. NULL (and why) when an entry is malformed. */
static char *mcp_config_value(const json_t *servers, char *why, size_t wl)
{
    if (!servers || json_is_null(servers) || (json_is_array(servers) && !json_array_size(servers)))
        return xstrdup("");
    if (!json_is_array(servers)) {
        snprintf(why, wl, "\"mcpServers\" must be an array");
        return NULL;
    }
    json_t *map = json_object();
    size_t i, j;
    json_t *sv, *kv;
    json_array_foreach(servers, i, sv) {
        const char *name = json_get_str(sv, "name", NULL), *type = json_get_str(sv, "type", NULL);
        json_t *e = NULL;
        if (name && (!type || strcmp(type, "stdio") == 0) && json_get_str(sv, "command", NULL)) {
            json_t *env = json_object();
            json_array_foreach(json_get_arr(sv, "env"), j, kv)
                if (json_get_str(kv, "name", NULL))
                    json_object_set_new(env, json_get_str(kv, "name", ""),
                                        json_string(json_get_str(kv, "value", "")));
            json_t *args = json_get_arr(sv, "args");
            e = json_pack("{s:s, s:o, s:o}", "command", json_get_str(sv, "command", ""), "args",
                          args ? json_incref(args) : json_array(), "env", env);
        } else if (name && type && (strcmp(type, "http") == 0 || strcmp(type, "sse") == 0) &&
                   json_get_str(sv, "url", NULL)) {
            json_t *headers = json_object();
            json_array_foreach(json_get_arr(sv, "headers"), j, kv)
                if (json_get_str(kv, "name", NULL))
                    json_object_set_new(headers, json_get_str(kv, "name", ""),
                                        json_string(json_get_str(kv, "value", "")));
            e = json_pack("{s:s, s:s, s:o}", "type", type, "url", json_get_str(sv, "url", ""),
                          "headers", headers);
        }
        if (!e) {
            snprintf(why, wl,
                     "mcpServers[%zu] is neither a stdio server {name, command, args, env} nor an "
                     "http/sse one {type, name, url, headers}",
                     i);
            json_decref(map);
            return NULL;
        }
        json_object_set_new(map, name, e);
    }
    json_t *doc = json_pack("{s:o}", "mcpServers", map);
    char *inner = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    json_t *arr = json_pack("[s]", inner);
    free(inner);
    char *out = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return out;
}

static int set(loom_config *cfg, const char *key, const char *value, loom_status *st)
{
    return value && *value ? loom_config_set(cfg, key, value, st) : 0;
}

/* A new agent for the session's cwd, model and MCP servers. */
static loom_agent *make_agent(acp_server *srv, const char *cwd, const char *model,
                              const char *mcp, loom_status *st)
{
    loom_config *cfg = loom_config_new();
    loom_agent *a = NULL;
    if (set(cfg, "cwd", cwd, st) == 0 && set(cfg, "model", model, st) == 0 &&
        set(cfg, "permission_mode", srv->permission_mode, st) == 0 &&
        set(cfg, "mcp_config", mcp, st) == 0 && set(cfg, "add_dirs", srv->image_dir, st) == 0 &&
        loom_config_set(cfg, "interactive", "true", st) == 0 &&
        loom_config_load_settings(cfg, st) == 0)
        a = loom_agent_new(cfg, st);
    loom_config_free(cfg);
    return a;
}

static const char *checked_cwd(acp_server *srv, const json_t *id, const json_t *params)
{
    const char *cwd = json_get_str(params, "cwd", NULL);
    struct stat sb;
    if (!cwd || cwd[0] != '/') {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                       "Invalid params: \"cwd\" must be an absolute path");
        return NULL;
    }
    if (stat(cwd, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                       "Invalid params: cwd \"%.300s\" is not a directory", cwd);
        return NULL;
    }
    return cwd;
}

/* available_commands_update: the skills and commands, then the MCP servers'
 * prompts; sent when the list differs from the one sent last. */
void acp_send_commands(acp_server *srv, acp_sess *ss)
{
    char *text = loom_agent_extensions_json(ss->agent);
    json_t *ext = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    json_t *cmds = acp_commands_from_extensions(ext);
    json_decref(ext);
    text = loom_session_mcp_prompts_json(ss->session);
    json_t *prompts = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    acp_commands_add_mcp_prompts(cmds, prompts);
    json_decref(prompts);
    char *now = json_dumps(cmds, JSON_COMPACT);
    if (now && ss->last_commands && strcmp(now, ss->last_commands) == 0) {
        free(now);
        json_decref(cmds);
        return;
    }
    free(ss->last_commands);
    ss->last_commands = now;
    acp_send_update(srv, ss->id,
                    json_pack("{s:s, s:o}", "sessionUpdate", "available_commands_update",
                              "availableCommands", cmds));
}

static void add_session(acp_server *srv, acp_sess *ss)
{
    pthread_cond_init(&ss->idle, NULL);
    ss->srv = srv;
    acp_map_init(&ss->map, ss->cwd, 0);
    pthread_mutex_lock(&srv->mu);
    ss->next = srv->sessions;
    srv->sessions = ss;
    pthread_mutex_unlock(&srv->mu);
}

static void free_session(acp_sess *ss)
{
    acp_prompt_join(ss);
    loom_session_free(ss->session);
    loom_agent_free(ss->agent);
    acp_map_clear(&ss->map);
    acp_client_io_free(ss);
    pthread_cond_destroy(&ss->idle);
    json_decref(ss->prompt_id);
    free(ss->goal);
    free(ss->pending_mode);
    free(ss->last_commands);
    free(ss->id);
    free(ss->cwd);
    free(ss->model);
    free(ss->mcp_json);
    free(ss);
}

/* session/new and session/load: the session opened (resume_id NULL: a new one). */
static acp_sess *open_session(acp_server *srv, const json_t *id, const json_t *params,
                              const char *resume_id)
{
    if (!srv->opt.sessions) {
        acp_send_error(&srv->w, id, ACP_INTERNAL_ERROR, "Internal error: sessions are off");
        return NULL;
    }
    const char *cwd = checked_cwd(srv, id, params);
    if (!cwd)
        return NULL;
    char why[300];
    char *mcp = mcp_config_value(json_object_get(params, "mcpServers"), why, sizeof why);
    if (!mcp) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS, "Invalid params: %s", why);
        return NULL;
    }
    loom_status st = {0};
    loom_agent *a = make_agent(srv, cwd, srv->model, mcp, &st);
    loom_session *ls = !a ? NULL
                       : resume_id ? loom_session_resume(a, resume_id, &st)
                                   : loom_session_new(a, &st);
    if (!ls) {
        loom_agent_free(a);
        free(mcp);
        acp_send_error(&srv->w, id,
                       st.code == LOOM_ERR_RESOURCE_NOT_FOUND ? ACP_NOT_FOUND : ACP_INTERNAL_ERROR,
                       "%s: %s", st.code_name ? st.code_name : "error", st.message);
        return NULL;
    }
    acp_sess *ss = xcalloc(1, sizeof *ss);
    ss->id = xstrdup(loom_session_id(ls));
    ss->cwd = xstrdup(cwd);
    ss->model = xstrdup(srv->model);
    ss->mcp_json = mcp;
    ss->agent = a;
    ss->session = ls;
    for (size_t i = 0; i < loom_session_warning_count(ls); i++)
        fprintf(stderr, "loom-acp: %s\n", loom_session_warning(ls, i));
    add_session(srv, ss);
    return ss;
}

static void m_session_new(acp_server *srv, const json_t *id, const json_t *params)
{
    acp_sess *ss = open_session(srv, id, params, NULL);
    if (!ss)
        return;
    acp_send_result(&srv->w, id,
                    json_pack("{s:s, s:o, s:o}", "sessionId", ss->id, "modes", modes_json(ss),
                              "configOptions", config_options(ss)));
    acp_send_commands(srv, ss);
}

static void m_session_load(acp_server *srv, const json_t *id, const json_t *params)
{
    const char *sid = json_get_str(params, "sessionId", NULL);
    if (!sid) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                       "Invalid params: \"sessionId\" (a string) is required");
        return;
    }
    acp_sess *ss = acp_find_session(srv, params, NULL);
    if (ss && busy(srv, ss)) {
        acp_send_error(&srv->w, id, ACP_SERVER_ERROR, "session %s has a prompt running", ss->id);
        return;
    }
    if (!ss && !(ss = open_session(srv, id, params, sid)))
        return;
    char *text = loom_session_conversation_json(ss->session);
    json_t *conv = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    json_t *updates = acp_replay_updates(conv);
    json_decref(conv);
    size_t i;
    json_t *u;
    json_array_foreach(updates, i, u)
        acp_send_update(srv, ss->id, json_incref(u));
    json_decref(updates);
    acp_send_result(&srv->w, id,
                    json_pack("{s:o, s:o}", "modes", modes_json(ss), "configOptions",
                              config_options(ss)));
    acp_send_commands(srv, ss);
}

static void m_session_list(acp_server *srv, const json_t *id, const json_t *params)
{
    const char *cwd = json_get_str(params, "cwd", NULL);
    char here[4096];
    if (json_object_get(params, "cwd") && !json_is_null(json_object_get(params, "cwd")) && !cwd) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS, "Invalid params: \"cwd\" must be a string");
        return;
    }
    if (!cwd)
        cwd = getcwd(here, sizeof here) ? here : "/";
    json_t *out = json_array();
    if (srv->opt.sessions) {
        loom_status st = {0};
        loom_agent *a = make_agent(srv, cwd, srv->model, NULL, &st);
        char *text = a ? loom_sessions_json(a, NULL) : NULL;
        json_t *list = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        loom_agent_free(a);
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e) {
            json_t *info = json_pack("{s:s, s:s}", "sessionId", json_get_str(e, "id", ""), "cwd",
                                     cwd);
            json_set_str(info, "title", json_get_str(e, "title", json_get_str(e, "first_prompt", NULL)));
            json_set_str(info, "updatedAt", json_get_str(e, "modified", NULL));
            json_array_append_new(out, info);
        }
        json_decref(list);
    }
    acp_send_result(&srv->w, id, json_pack("{s:o}", "sessions", out));
}

static void m_set_mode(acp_server *srv, const json_t *id, const json_t *params)
{
    acp_sess *ss = acp_find_session(srv, params, id);
    if (!ss)
        return;
    const char *mode = json_get_str(params, "modeId", NULL);
    if (!mode || !known_mode(mode)) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                       "Invalid params: \"modeId\" must be one of default, acceptEdits, plan, "
                       "auto, dontAsk, bypassPermissions, fullAccess, delegate");
        return;
    }
    pthread_mutex_lock(&srv->mu);
    bool later = ss->busy;
    if (later) { /* a run reads the mode at each tool call: it counts from the next prompt */
        free(ss->pending_mode);
        ss->pending_mode = xstrdup(mode);
    }
    pthread_mutex_unlock(&srv->mu);
    loom_status st = {0};
    if (!later && loom_session_set_permission_mode(ss->session, mode, &st) != 0) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS, "Invalid params: %s", st.message);
        return;
    }
    if (later)
        acp_send_update(srv, ss->id,
                        json_pack("{s:s, s:s}", "sessionUpdate", "current_mode_update",
                                  "currentModeId", mode));
    else
        acp_send_mode(srv, ss);
    acp_send_result(&srv->w, id, json_object());
}

/* The model changes by reopening the session on a new agent (loom.h binds a
 * session to its agent), as the REPL's /model does. */
static void m_set_config(acp_server *srv, const json_t *id, const json_t *params)
{
    acp_sess *ss = acp_find_session(srv, params, id);
    if (!ss)
        return;
    const char *cfg_id = json_get_str(params, "configId", NULL);
    const char *value = json_get_str(params, "value", NULL);
    if (!cfg_id || strcmp(cfg_id, "model") != 0) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                       "Invalid params: \"configId\" must be \"model\" (the one option)");
        return;
    }
    if (!value || !*value) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                       "Invalid params: \"value\" must be a model name (a string)");
        return;
    }
    if (busy(srv, ss)) {
        acp_send_error(&srv->w, id, ACP_SERVER_ERROR,
                       "the model cannot change while a prompt is running");
        return;
    }
    loom_status st = {0};
    loom_agent *a = make_agent(srv, ss->cwd, value, ss->mcp_json, &st);
    loom_session *ls = a ? loom_session_resume(a, loom_session_path(ss->session), &st) : NULL;
    if (!ls) {
        loom_agent_free(a);
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS, "Invalid params: %s", st.message);
        return;
    }
    const char *mode = loom_session_permission_mode(ss->session);
    loom_session_set_permission_mode(ls, mode, NULL);
    loom_session_free(ss->session);
    loom_agent_free(ss->agent);
    ss->session = ls;
    ss->agent = a;
    free(ss->model);
    ss->model = xstrdup(value);
    acp_send_result(&srv->w, id, json_pack("{s:o}", "configOptions", config_options(ss)));
}

static void m_initialize(acp_server *srv, const json_t *id, const json_t *params)
{
    json_t *pv = json_object_get(params, "protocolVersion");
    if (!json_is_integer(pv) && !json_is_string(pv)) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS,
                       "Invalid params: \"protocolVersion\" (an integer) is required");
        return;
    }
    pthread_mutex_lock(&srv->mu);
    json_decref(srv->client_caps);
    srv->client_caps = json_incref(json_get_obj(params, "clientCapabilities"));
    pthread_mutex_unlock(&srv->mu);
    json_t *caps = json_pack(
        "{s:b, s:{s:b, s:b, s:b}, s:{s:b, s:b}, s:{s:{}}}", "loadSession", 1,
        "promptCapabilities", "image", srv->image_dir != NULL, "audio", 0, "embeddedContext", 1,
        "mcpCapabilities", "http", 1, "sse", 1, "sessionCapabilities", "list");
    acp_send_result(&srv->w, id,
                    json_pack("{s:i, s:o, s:[], s:{s:s, s:s, s:s}}", "protocolVersion",
                              ACP_PROTOCOL_VERSION, "agentCapabilities", caps, "authMethods",
                              "agentInfo", "name", "loom", "title", "Loom", "version",
                              loom_version()));
}

/* ---- dispatch ---------------------------------------------------------------------- */

typedef void (*method_fn)(acp_server *, const json_t *, const json_t *);

static const struct {
    const char *name;
    method_fn fn;
} METHODS[] = {
    {"initialize", m_initialize},           {"session/new", m_session_new},
    {"session/load", m_session_load},       {"session/list", m_session_list},
    {"session/prompt", acp_prompt_start},   {"session/set_mode", m_set_mode},
    {"session/set_config_option", m_set_config},
};

static void request(acp_server *srv, const acp_msg *m)
{
    if (m->params && !json_is_object(m->params)) {
        acp_send_error(&srv->w, m->id, ACP_INVALID_PARAMS,
                       "Invalid params: \"params\" must be an object");
        return;
    }
    if (strcmp(m->method, "authenticate") == 0) {
        acp_send_result(&srv->w, m->id, json_object());
        return;
    }
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++)
        if (strcmp(METHODS[i].name, m->method) == 0) {
            json_t *empty = m->params ? NULL : json_object();
            METHODS[i].fn(srv, m->id, m->params ? m->params : empty);
            json_decref(empty);
            return;
        }
    acp_send_error(&srv->w, m->id, ACP_METHOD_NOT_FOUND, "Method not found: %.200s", m->method);
}

void acp_server_handle_line(acp_server *srv, const char *line, size_t n)
{
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    size_t k = 0;
    while (k < n && (line[k] == ' ' || line[k] == '\t'))
        k++;
    if (k == n)
        return; /* blank lines are no messages */
    acp_msg m;
    acp_msg_parse(line, n, &m);
    switch (m.kind) {
    case ACP_MSG_INVALID:
        acp_send_error(&srv->w, m.id, m.error_code, "%s", m.error_text);
        break;
    case ACP_MSG_REQUEST:
        request(srv, &m);
        break;
    case ACP_MSG_NOTIFICATION:
        if (strcmp(m.method, "session/cancel") == 0 && json_is_object(m.params))
            acp_prompt_cancel(srv, m.params);
        break; /* any other notification: nothing to answer */
    case ACP_MSG_RESPONSE:
        acp_on_response(srv, &m);
        break;
    }
    acp_msg_clear(&m);
}

/* ---- life ---------------------------------------------------------------------------- */

acp_server *acp_server_new(const acp_server_options *opt)
{
    acp_server *srv = xcalloc(1, sizeof *srv);
    srv->opt = *opt;
    srv->model = xstrdup(opt->model);
    srv->permission_mode = xstrdup(opt->permission_mode);
    srv->opt.model = srv->opt.permission_mode = NULL;
    acp_writer_init(&srv->w, opt->write, opt->write_ctx);
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->answered, NULL);
    srv->next_id = 1;
    if (opt->sessions) {
        const char *tmp = getenv("TMPDIR");
        loom_str dir = LOOM_STR_INIT;
        str_printf(&dir, "%s/loom-acp-%ld", tmp && *tmp ? tmp : "/tmp", (long)getpid());
        srv->image_dir = str_steal(&dir); /* made when the first image comes */
    }
    return srv;
}

void acp_server_shutdown(acp_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    srv->closing = true;
    acp_wake_waiters(srv, NULL);
    pthread_mutex_unlock(&srv->mu);
    /* Only the reader thread adds sessions, and it is here: the list holds. */
    for (acp_sess *ss = srv->sessions; ss; ss = ss->next)
        acp_cancel_session(srv, ss);
    for (acp_sess *ss = srv->sessions; ss; ss = ss->next)
        acp_prompt_join(ss);
}

/* The image folder holds only the files prompts wrote into it. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "image-", 6) != 0)
            continue;
        loom_str p = LOOM_STR_INIT;
        str_printf(&p, "%s/%s", dir, e->d_name);
        unlink(str_cstr(&p));
        str_free(&p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

void acp_server_free(acp_server *srv)
{
    if (!srv)
        return;
    acp_server_shutdown(srv);
    acp_sess *ss = srv->sessions;
    while (ss) {
        acp_sess *next = ss->next;
        free_session(ss);
        ss = next;
    }
    for (size_t i = 0; i < srv->n_pend; i++)
        free(srv->pend[i].approval_id);
    free(srv->pend);
    if (srv->image_dir)
        remove_dir(srv->image_dir);
    free(srv->image_dir);
    free(srv->model);
    free(srv->permission_mode);
    json_decref(srv->client_caps);
    pthread_cond_destroy(&srv->answered);
    pthread_mutex_destroy(&srv->mu);
    acp_writer_destroy(&srv->w);
    free(srv);
}

/* tools.c — the tools `loom mcp serve` offers: Loom's built-ins, each call
 * run through the governed pipeline (loom_session_call_tool) under the
 * server's permission mode, and `agent`, a whole Loom run
 * (loom_run_start) reported as progress and cancelled with the request.
 * Annotations come from what Loom knows of each tool (docs/mcp-server.md). */
#include "surfaces/mcp_server/mcps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"

#define AGENT_TOOL "agent"

/* Built-ins that need a run around them (a person to ask, a sub-agent
 * tree, the run's plan mode, the run's directory): not offered. */
static const char *const NOT_OFFERED[] = {"AskUserQuestion", "Agent", "SendMessage", "Renew",
                                          "AcknowledgeEvent", "TodoWrite",
                                          "ExitPlanMode", "EnterPlanMode", "StructuredOutput",
                                          "EnterWorktree", "ExitWorktree", NULL};

static bool offered(const char *name)
{
    for (size_t i = 0; NOT_OFFERED[i]; i++)
        if (!strcmp(name, NOT_OFFERED[i]))
            return false;
    return true;
}

/* offline: the built-in tools' agent, which never asks a model; without a
 * provider configured it gets the replay provider, so the tools work. */
static loom_agent *make_agent(mcps_server *srv, const char *cwd, const char *model,
                              bool offline, loom_str *why)
{
    loom_config *cfg = loom_config_new();
    loom_status st;
    const char *mdl = model ? model : srv->model;
    if ((offline && (loom_config_set(cfg, "provider", "replay", &st) != 0 ||
                     loom_config_set(cfg, "cassette", "/dev/null", &st) != 0)) ||
        loom_config_set(cfg, "cwd", cwd ? cwd : srv->cwd, &st) != 0 ||
        loom_config_set(cfg, "permission_mode", srv->permission_mode, &st) != 0 ||
        loom_config_set(cfg, "interactive", "false", &st) != 0 ||
        (mdl && loom_config_set(cfg, "model", mdl, &st) != 0) ||
        loom_config_load_settings(cfg, &st) != 0) {
        str_puts(why, st.message);
        loom_config_free(cfg);
        return NULL;
    }
    loom_agent *a = loom_agent_new(cfg, &st);
    if (!a)
        str_puts(why, st.message);
    loom_config_free(cfg);
    return a;
}

mcps_server *mcps_server_new(const mcps_options *opts, bool tools)
{
    mcps_server *srv = xcalloc(1, sizeof *srv);
    srv->opts = *opts;
    char here[4096];
    srv->cwd = xstrdup(opts->cwd ? opts->cwd : getcwd(here, sizeof here) ? here : ".");
    srv->permission_mode = xstrdup(opts->permission_mode ? opts->permission_mode : "default");
    srv->model = xstrdup(opts->model);
    srv->tools = tools;
    pthread_mutex_init(&srv->lock, NULL);
    if (!tools)
        return srv;
    loom_str why = LOOM_STR_INIT;
    srv->agent = make_agent(srv, NULL, NULL, false, &why);
    if (!srv->agent) {
        str_clear(&why);
        srv->agent = make_agent(srv, NULL, NULL, true, &why);
    }
    loom_status st;
    if (srv->agent)
        srv->tool_session = loom_session_new(srv->agent, &st);
    if (srv->agent && !srv->tool_session)
        str_puts(&why, st.message);
    if (!srv->tool_session) {
        mcps_log("cannot set up Loom's tools: %s", str_cstr(&why));
        str_free(&why);
        mcps_server_free(srv);
        return NULL;
    }
    str_free(&why);
    char *specs = loom_session_tool_specs_json(srv->tool_session);
    srv->specs = specs ? json_loads(specs, 0, NULL) : json_array();
    free(specs);
    return srv;
}

void mcps_server_free(mcps_server *srv)
{
    if (!srv)
        return;
    loom_session_free(srv->tool_session);
    loom_agent_free(srv->agent);
    json_decref(srv->specs);
    free(srv->cwd);
    free(srv->permission_mode);
    free(srv->model);
    free(srv->setup_error);
    pthread_mutex_destroy(&srv->lock);
    free(srv);
}

static json_t *agent_tool(void)
{
    return json_pack(
        "{s:s,s:s,s:s,s:{s:s,s:{s:{s:s,s:s},s:{s:s,s:s},s:{s:s,s:s}},s:[s],s:b},"
        "s:{s:s,s:{s:{s:s},s:{s:s},s:{s:s}},s:[s]},s:{s:b,s:b,s:b,s:b}}",
        "name", AGENT_TOOL, "title", "Loom agent", "description",
        "Runs a whole task with Loom, a coding agent: it reads, edits and runs commands in "
        "the working directory (its own tools, governed by the server's permission mode) "
        "until the task is done, and returns its final answer. Progress is reported per "
        "tool call and model reply when the request has a progressToken; cancelling the "
        "request stops the run.",
        "inputSchema", "type", "object", "properties", "prompt", "type", "string",
        "description", "The task, as you would ask a person", "cwd", "type", "string",
        "description", "The directory to work in (default: the server's)", "model", "type",
        "string", "description", "The model to use (an alias such as sonnet, or an id)",
        "required", "prompt", "additionalProperties", 0, "outputSchema", "type", "object",
        "properties", "result", "type", "string", "stop_reason", "type", "string", "usage",
        "type", "object", "required", "result", "annotations", "readOnlyHint", 0,
        "destructiveHint", 1, "idempotentHint", 0, "openWorldHint", 1);
}

json_t *mcps_tools_list(mcps_server *srv)
{
    json_t *out = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(srv->specs, i, s) {
        const char *name = json_string_value(json_object_get(s, "name"));
        if (!name || !offered(name))
            continue;
        bool ro = json_is_true(json_object_get(s, "read_only"));
        bool local = json_is_true(json_object_get(s, "local_state_only"));
        bool out_ = json_is_true(json_object_get(s, "sends_out"));
        json_t *ann = json_pack("{s:b}", "readOnlyHint", ro);
        if (!ro) /* destructiveHint means something only when not read-only */
            json_object_set_new(ann, "destructiveHint", json_boolean(!local));
        json_object_set_new(ann, "idempotentHint", json_boolean(ro));
        json_object_set_new(ann, "openWorldHint", json_boolean(out_));
        json_array_append_new(out, json_pack("{s:s,s:O,s:O,s:o}", "name", name, "description",
                                             json_object_get(s, "description"), "inputSchema",
                                             json_object_get(s, "input_schema"), "annotations",
                                             ann));
    }
    if (srv->tools && !srv->opts.no_agent_tool)
        json_array_append_new(out, agent_tool());
    return out;
}

bool mcps_tool_known(mcps_server *srv, const char *name)
{
    if (!srv->tools)
        return false;
    if (!strcmp(name, AGENT_TOOL))
        return !srv->opts.no_agent_tool;
    if (!offered(name))
        return false;
    size_t i;
    json_t *s;
    json_array_foreach(srv->specs, i, s)
        if (!strcmp(json_string_value(json_object_get(s, "name")), name))
            return true;
    return false;
}

static json_t *text_result(const char *text, bool is_error)
{
    return json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text", text, "isError",
                     is_error);
}

static json_t *run_builtin(mcps_server *srv, mcps_call *k)
{
    char *input = json_dump_compact(k->args);
    loom_status st;
    pthread_mutex_lock(&srv->lock);
    char *res = loom_session_call_tool(srv->tool_session, k->name, input, &st);
    pthread_mutex_unlock(&srv->lock);
    free(input);
    if (!res)
        return text_result(st.message, true);
    json_t *r = json_loads(res, 0, NULL);
    free(res);
    json_t *out = text_result(json_get_str(r, "text", ""), json_get_bool(r, "is_error", true));
    json_t *img = json_get_obj(r, "image");
    if (img)
        json_array_append_new(json_object_get(out, "content"),
                              json_pack("{s:s,s:O,s:O}", "type", "image", "data",
                                        json_object_get(img, "data"), "mimeType",
                                        json_object_get(img, "media_type")));
    json_decref(r);
    return out;
}

typedef struct agent_ctx {
    mcps_call *k;
    int steps;
} agent_ctx;

static void on_event(void *ctx, const loom_event *ev)
{
    agent_ctx *a = ctx;
    if (ev->kind != LOOM_EV_TOOL_STARTED && ev->kind != LOOM_EV_MODEL_COMPLETED)
        return;
    json_t *e = json_loads(ev->json, 0, NULL);
    json_t *p = json_object_get(e, "payload");
    loom_str m = LOOM_STR_INIT;
    if (ev->kind == LOOM_EV_TOOL_STARTED)
        str_printf(&m, "tool %s", json_get_str(p, "tool", "?"));
    else
        str_printf(&m, "model reply %lld", (long long)json_get_int(p, "turn", 0));
    mcps_call_progress(a->k, ++a->steps, str_cstr(&m));
    str_free(&m);
    json_decref(e);
}

static json_t *run_agent(mcps_server *srv, mcps_call *k)
{
    const json_t *prompt = json_object_get(k->args, "prompt");
    const json_t *cwd = json_object_get(k->args, "cwd");
    const json_t *model = json_object_get(k->args, "model");
    if (!json_is_string(prompt) || !*json_string_value(prompt) ||
        (cwd && !json_is_string(cwd)) || (model && !json_is_string(model)))
        return text_result("agent: the input needs \"prompt\" (a non-empty string); \"cwd\" "
                           "and \"model\" are strings when given",
                           true);
    const char *extra;
    size_t i = 0;
    json_object_foreach(k->args, extra, prompt) {
        (void)i;
        if (strcmp(extra, "prompt") && strcmp(extra, "cwd") && strcmp(extra, "model")) {
            loom_str m = LOOM_STR_INIT;
            str_printf(&m, "agent: unknown input \"%s\" (it takes prompt, cwd, model)", extra);
            json_t *r = text_result(str_cstr(&m), true);
            str_free(&m);
            return r;
        }
    }
    prompt = json_object_get(k->args, "prompt");
    loom_str why = LOOM_STR_INIT;
    loom_agent *ag = make_agent(srv, json_string_value(cwd), json_string_value(model), false,
                                &why);
    if (!ag) {
        json_t *r = text_result(str_cstr(&why), true);
        str_free(&why);
        return r;
    }
    str_free(&why);
    loom_status st;
    loom_session *s = loom_session_new(ag, &st);
    if (!s) {
        loom_agent_free(ag);
        return text_result(st.message, true);
    }
    agent_ctx actx = {k, 0};
    loom_run_options ro = {.on_event = on_event, .event_ctx = &actx};
    loom_run *run = loom_run_start(s, json_string_value(prompt), &ro, &st);
    if (!run) {
        loom_session_free(s);
        loom_agent_free(ag);
        return text_result(st.message, true);
    }
    pthread_mutex_lock(&k->conn->lock);
    atomic_store(&k->run, run);
    bool cancel_now = k->cancelled;
    pthread_mutex_unlock(&k->conn->lock);
    if (cancel_now)
        loom_run_cancel(run);
    loom_run_state end = loom_run_wait(run);
    pthread_mutex_lock(&k->conn->lock);
    atomic_store(&k->run, NULL);
    pthread_mutex_unlock(&k->conn->lock);
    json_t *res = json_loads(loom_run_result_json(run), 0, NULL);
    mcps_log("agent run of session %s ended %s", loom_session_id(s), loom_run_state_name(end));
    const char *text = json_get_str(res, "result", "");
    const json_t *err = json_get_obj(res, "error");
    loom_str body = LOOM_STR_INIT;
    if (end != LOOM_RUN_COMPLETED && err)
        str_printf(&body, "%s%s%s (%s)", text, *text ? "\n\n" : "",
                   json_get_str(err, "message", ""), loom_run_state_name(end));
    else
        str_puts(&body, text);
    json_t *out = text_result(str_cstr(&body), end != LOOM_RUN_COMPLETED);
    json_t *sc = json_pack("{s:s,s:s,s:s,s:s}", "result", text, "stop_reason",
                           json_get_str(res, "stop_reason", ""), "state",
                           loom_run_state_name(end), "session_id", loom_session_id(s));
    json_t *usage = json_get_obj(res, "usage");
    json_object_set_new(sc, "usage", usage ? json_incref(usage) : json_object());
    json_object_set_new(out, "structuredContent", sc);
    str_free(&body);
    json_decref(res);
    loom_run_free(run);
    loom_session_free(s);
    loom_agent_free(ag);
    return out;
}

json_t *mcps_tool_run(mcps_server *srv, mcps_call *k)
{
    if (!strcmp(k->name, AGENT_TOOL))
        return run_agent(srv, k);
    return run_builtin(srv, k);
}

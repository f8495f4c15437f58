/* context.c — the session's context between runs: /compact, /context and
 * the REPL's `#` (loom.h, docs/context.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/str.h"
#include "context/system_prompt.h"
#include "context/tokens.h"
#include "context/working.h"
#include "context/control.h"
#include "context/working_render.h"
#include "runtime/loop_context.h"

static char *dump_new(json_t *v)
{
    char *s = json_dump_compact(v);
    json_decref(v);
    return s;
}

/* The session's context between runs: its state brought up to date (the
 * edits read again, the model's window) and the port a run would use, over
 * the session's io, adding what context work spends to *usage. */
static void begin_context(loom_session *s, loop_io *io, loop_context *lc, msg_usage *usage)
{
    api_session_io(s, io);
    context_state_begin(&s->context, s->t, s->agent->provider.context_window);
    loop_context_init(lc, &s->agent->params, io, usage);
}

/* The conversation as the model sees it (C_history), in estimated tokens:
 * what a compaction shrinks. */
static int64_t history_tokens(loom_session *s)
{
    json_t **chain = NULL, **view = NULL, *keep = NULL;
    size_t n = 0, nv = 0;
    if (transcript_active(s->t, &chain, &n) != 0)
        return 0;
    ladder_view(&s->context.edits, chain, n, &view, &nv, &keep);
    int64_t t = 0;
    for (size_t i = 0; i < nv; i++)
        t += ladder_record_tokens(view[i]);
    free(chain);
    free(view);
    json_decref(keep);
    return t;
}

/* Keeps the last warning's message: why a compaction was skipped. */
static void keep_warning(void *ctx, loom_event_type type, loom_visibility vis, const char *corr,
                         json_t *payload)
{
    (void)vis, (void)corr;
    char **msg = ctx;
    if (type == LOOM_EV_WARNING_EMITTED) {
        free(*msg);
        *msg = xstrdup(json_get_str(payload, "message", ""));
    }
    json_decref(payload);
}

int loom_session_compact(loom_session *s, const char *instructions, char **report,
                         loom_status *st)
{
    if (report)
        *report = NULL;
    API_CHECK_ARG(st, s, -1);
    loop_io io;
    loop_context lc;
    msg_usage usage = {0};
    begin_context(s, &io, &lc, &usage);
    char *warning = NULL;
    io.emit = keep_warning;
    io.emit_ctx = &warning;
    provider_config cfg = s->agent->provider;
    loom_error err;
    loom_error_clear(&err);
    int64_t before_est = history_tokens(s);
    int rc = context_compact(&s->context, &lc.env, &cfg, "manual", instructions, &err);
    int64_t after_est = rc == 1 ? history_tokens(s) : before_est;
    api_session_add_usage(s, &usage);
    api_session_settle_helpers(s, NULL); /* the summary call's record (counted above) */
    if (rc < 0) {
        api_status_from(st, &err);
        free(warning);
        return -1;
    }
    if (report)
        *report = dump_new(json_pack(
            "{s:b,s:s,s:I,s:I}", "compacted", rc == 1, "message",
            rc == 1 ? "compacted: the history is now a summary" : warning ? warning : "skipped",
            "tokens_before", (json_int_t)before_est, "tokens_after", (json_int_t)after_est));
    free(warning);
    api_status_ok(st);
    return rc;
}

char *loom_session_context_json(loom_session *s)
{
    if (!s)
        return NULL;
    loop_io io;
    loop_context lc;
    begin_context(s, &io, &lc, NULL);
    provider_config cfg = s->agent->provider;
    const loop_params *p = &s->agent->params;
    msg_request req;
    int64_t est = 0;
    loom_error err;
    json_t *o = json_object();
    json_t *ext_parts = api_ext_context_parts(s);
    lc.env.system_extensions = api_ext_text(s);
    int64_t ext_tok = 0;
    for (size_t i = 0; i < json_array_size(ext_parts); i++)
        ext_tok += json_integer_value(json_object_get(json_array_get(ext_parts, i), "tokens"));
    if (context_build_request(&s->context, &lc.env, &cfg, NULL, &req, &est, &err) == 0) {
        int64_t sys = tokens_estimate_cstr(req.system);
        int64_t mem = tokens_estimate_cstr(req.system_dynamic) - ext_tok;
        if (mem < 0)
            mem = 0;
        int64_t working_tok = 0;
        if (s->working) {
            char *w = working_render(s->working);
            working_tok = tokens_estimate_cstr(w) + TOKENS_PER_BLOCK;
            free(w);
        }
        int64_t history = est - sys - mem - ext_tok - lc.env.tools_est - working_tok;
        pressure_source src;
        int64_t tokens = pressure_tokens(&s->context.pr, est, &src);
        double rho = pressure_rho(&s->context.pr, tokens);
        json_object_set_new(o, "window", json_integer(cfg.context_window));
        json_object_set_new(o, "tokens", json_integer(tokens));
        json_object_set_new(o, "rho", json_real(rho));
        json_object_set_new(o, "source", json_string(pressure_source_name(src)));
        json_object_set_new(o, "partitions",
                            json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "system", (json_int_t)sys,
                                      "memory", (json_int_t)mem, "extensions",
                                      (json_int_t)ext_tok, "tools",
                                      (json_int_t)lc.env.tools_est, "history",
                                      (json_int_t)(history > 0 ? history : 0), "working",
                                      (json_int_t)working_tok));
        const ladder_config *ladder = &p->context.ladder;
        const struct {
            const char *name;
            double at;
        } steps[] = {{"snip", ladder->snip},         {"micro", ladder->micro},
                     {"collapse", ladder->collapse}, {"compact", ladder->compact},
                     {"renew", 1.0}};
        json_t *next = json_null();
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
            if (rho < steps[i].at) {
                json_decref(next);
                next = json_pack("{s:s,s:f,s:I}", "name", steps[i].name, "threshold", steps[i].at,
                                 "at_tokens",
                                 (json_int_t)(steps[i].at * (double)cfg.context_window));
                break;
            }
        json_object_set_new(o, "next_step", next);
        msg_request_free(&req);
    } else {
        json_object_set_new(o, "error", json_string(err.message));
    }
    json_t *files = json_array();
    for (size_t i = 0; i < s->agent->memory.count; i++)
        json_array_append_new(files, json_pack("{s:s,s:s}", "path", s->agent->memory.files[i].path,
                                               "kind",
                                               memory_kind_name(s->agent->memory.files[i].kind)));
    json_object_set_new(o, "memory_files", files);
    json_object_set_new(o, "extensions", ext_parts);
    return dump_new(o);
}

int loom_session_remember(loom_session *s, const char *line, loom_status *st)
{
    API_CHECK_ARG(st, s, -1);
    while (line && (*line == ' ' || *line == '#'))
        line++;
    if (!line || !*line)
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST, "nothing to remember: the line is empty");
    if (strchr(line, '\n'))
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "a memory line must be a single line");
    loom_agent *a = s->agent;
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/AGENTS.md", a->cwd);
    FILE *f = fopen(path.ptr, "a+");
    if (!f) {
        int e = errno;
        api_status_set(st, LOOM_ERR_IO, "%s: %s", path.ptr, strerror(e));
        str_free(&path);
        return -1;
    }
    /* Start on a fresh line when the file does not end with one. */
    bool need_nl = false;
    if (fseek(f, -1, SEEK_END) == 0)
        need_nl = fgetc(f) != '\n';
    fseek(f, 0, SEEK_END);
    fprintf(f, "%s- %s\n", need_nl ? "\n" : "", line);
    int rc = fclose(f);
    if (rc != 0) {
        int e = errno;
        api_status_set(st, LOOM_ERR_IO, "%s: %s", path.ptr, strerror(e));
        str_free(&path);
        return -1;
    }
    str_free(&path);
    /* The next request carries the new line: rebuild the dynamic prompt. */
    memory_report_free(&a->memory);
    free(a->system_dynamic);
    secrets_deny deny;
    a->system_dynamic =
        system_prompt_dynamic_report(a->cwd, a->trusted, api_compat_claude(a->values, a->files),
                                     api_agent_deny(a, &deny), &a->memory);
    a->params.system_dynamic = a->system_dynamic;
    api_status_ok(st);
    return 0;
}

char *loom_session_events_json(loom_session *s)
{
    if (!s)
        return NULL;
    json_t *arr = json_array();
    size_t n = 0;
    surface_event *evs = s->working ? working_events(s->working, &n) : NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "event_id", evs[i].id, "source",
                              evs[i].source, "summary", evs[i].summary, "urgency",
                              event_urgency_name(evs[i].urgency), "state",
                              event_state_name(evs[i].state), "detected_ms",
                              (json_int_t)evs[i].detected_ms);
        if (evs[i].disposition)
            json_object_set_new(o, "disposition", json_string(evs[i].disposition));
        if (evs[i].note)
            json_object_set_new(o, "note", json_string(evs[i].note));
        json_array_append_new(arr, o);
    }
    working_events_free(evs, n);
    return dump_new(arr);
}

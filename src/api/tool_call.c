/* tool_call.c — one built-in tool call through the governed pipeline
 * outside a run (loom_session_call_tool), and the built-ins' declarations
 * (loom_session_tool_specs_json): what `loom mcp serve` offers and runs.
 *
 * The call borrows the session's run slot, so it never races a run on the
 * session's file state, history or governance. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/str.h"
#include "base/uuid.h"
#include "governance/governance.h"
#include "governance/pipeline.h"

char *loom_session_tool_specs_json(loom_session *s)
{
    if (!s)
        return NULL;
    const tool_registry *reg = s->agent->tools;
    json_t *arr = json_array();
    for (size_t i = 0; i < tool_registry_count(reg); i++) {
        const tool_def *d = tool_registry_at(reg, i);
        const json_t *schema = tool_registry_schema(reg, d->name);
        json_t *sc = schema ? json_incref((json_t *)schema) : json_pack("{s:s}", "type", "object");
        json_array_append_new(
            arr, json_pack("{s:s,s:s,s:o,s:b,s:b,s:b,s:b}", "name", d->name, "description",
                           d->description, "input_schema", sc, "read_only",
                           d->read_only, "local_state_only", d->local_state_only, "sends_out",
                           d->sends_out, "concurrency_safe", d->concurrency_safe));
    }
    char *text = json_dump_compact(arr);
    json_decref(arr);
    return text;
}

static void record_side(void *ctx, json_t *rec)
{
    loom_session *s = ctx;
    loom_error ignore;
    transcript_append_new(s->t, rec, &ignore);
}

char *loom_session_call_tool(loom_session *s, const char *name, const char *input_json,
                             loom_status *st)
{
    API_CHECK_ARG(st, s, NULL);
    API_CHECK_ARG(st, name, NULL);
    API_CHECK_ARG(st, input_json, NULL);
    loom_error perr;
    json_t *input = json_parse(input_json, strlen(input_json), "tool input", &perr);
    if (!input || !json_is_object(input)) {
        api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                       "loom_session_call_tool: the input of %s must be a JSON object%s%s", name,
                       input ? "" : ": ", input ? "" : perr.message);
        json_decref(input);
        return NULL;
    }
    bool idle = false;
    if (!atomic_compare_exchange_strong(&s->run_active, &idle, true)) {
        api_status_set(st, LOOM_ERR_INVALID_STATE_TRANSITION,
                       "session %s has a run in progress: a tool call waits for it to end",
                       loom_session_id(s));
        json_decref(input);
        return NULL;
    }
    loom_agent *a = s->agent;
    loom_cancel cancel = 0;
    char run_id[UUID_STR_LEN], call_id[UUID_STR_LEN + 8];
    uuid_v7(run_id);
    char u[UUID_STR_LEN];
    uuid_v7(u);
    snprintf(call_id, sizeof call_id, "call_%s", u);
    tool_ctx tctx = {
        .cwd = a->cwd,
        .session_id = loom_session_id(s),
        .cancel = &cancel,
        .files = s->files,
        .history = s->history,
        .tasks = s->tasks,
        .todos = s->todos,
        .working = s->working,
        .record = record_side,
        .record_ctx = s,
        .run_id = run_id,
    };
    tctx.gov = s->gov;
    tctx.helpers = s->helpers;
    tctx.sandbox = s->gov ? s->gov->sandbox : NULL;
    tctx.sandbox_error = s->gov ? s->gov->sandbox_error : NULL;
    api_session_tool_ports(s, &tctx);
    tctx.mode = NULL; /* a direct call presents no plan to anyone */
    tool_call call = {call_id, name, input};
    tool_outcome out;
    tool_call_run(a->tools, &call, &tctx, &out);
    json_t *res = json_pack("{s:s,s:b}", "text", str_cstr(&out.result.text), "is_error",
                            out.result.is_error);
    if (out.failed_step)
        json_object_set_new(res, "failed_step", json_string(out.failed_step));
    if (out.result.image_data)
        json_object_set_new(res, "image",
                            json_pack("{s:s,s:s}", "media_type",
                                      out.result.image_media_type ? out.result.image_media_type
                                                                  : "application/octet-stream",
                                      "data", out.result.image_data));
    api_session_settle_helpers(s, run_id);
    tool_outcome_free(&out);
    json_decref(input);
    atomic_store(&s->run_active, false);
    char *text = json_dump_compact(res);
    json_decref(res);
    api_status_ok(st);
    return text;
}

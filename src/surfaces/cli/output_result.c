/* output_result.c — Claude Code's result object for `loom -p --output-format
 * json` and the last line of stream-json, and the bookkeeping it needs: the
 * run's tool calls (for permission_denials) and its time in model calls.
 *
 * The object has Claude Code's fields (type, subtype, is_error, result,
 * session_id, num_turns, duration_ms, duration_api_ms, total_cost_usd,
 * usage in snake_case, permission_denials) and then Loom's own (state,
 * stop_reason, cost_usd?, error?, interrupt?, heartbeat?, model, provider)
 * — docs/cli.md. Called on the run's threads (serialized by loom) and, for
 * the result, on the main thread after the run ended. */
#include "surfaces/cli/output.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"

/* The tool's error text for a denied call (governance/pipeline.c). */
#define DENIED_PREFIX "Permission to use "
#define DENIED_MIDDLE " was denied: "

void output_note_call(cli_output *o, const json_t *payload)
{
    const char *id = json_get_str(payload, "call_id", NULL);
    if (!id)
        return;
    if (!o->calls)
        o->calls = json_object();
    json_t *input = json_object_get(payload, "input");
    json_object_set_new(o->calls, id,
                        json_pack("{s:s,s:O}", "tool", json_get_str(payload, "tool", "?"),
                                  "input", input ? input : json_null()));
}

/* The governance steps that end in a denial (governance/pipeline.c): the
 * decision (a rule, the mode, a hook's block, a person's no), its re-check
 * of a hook's rewritten input, and a sub-agent's own limits. */
static bool denied_step(const char *step)
{
    static const char *const steps[] = {"decide", "updated_input", "role", "agent_tools"};
    for (size_t i = 0; step && i < sizeof steps / sizeof *steps; i++)
        if (!strcmp(step, steps[i]))
            return true;
    return false;
}

const char *output_note_denial(cli_output *o, const json_t *payload)
{
    if (!denied_step(json_get_str(payload, "failed_step", NULL)))
        return NULL;
    const char *out = json_get_str(payload, "output", "");
    const char *tool = json_get_str(payload, "tool", "?");
    const char *id = json_get_str(payload, "call_id", "");
    const json_t *call = o->calls ? json_object_get(o->calls, id) : NULL;
    json_t *input = call ? json_object_get(call, "input") : NULL;
    if (!o->denials)
        o->denials = json_array();
    json_array_append_new(o->denials,
                          json_pack("{s:s,s:s,s:O}", "tool_name", tool, "tool_use_id", id,
                                    "tool_input", input ? input : json_object()));
    /* "Permission to use Bash was denied: <why>", or a hook's own reason. */
    size_t np = strlen(DENIED_PREFIX), nt = strlen(tool);
    if (!strncmp(out, DENIED_PREFIX, np) && !strncmp(out + np, tool, nt) &&
        !strncmp(out + np + nt, DENIED_MIDDLE, strlen(DENIED_MIDDLE)))
        return out + np + nt + strlen(DENIED_MIDDLE);
    return *out ? out : "denied";
}

json_t *output_usage_snake(const json_t *usage)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I}", "input_tokens",
                     (json_int_t)json_get_int(usage, "inputTokens", 0), "output_tokens",
                     (json_int_t)json_get_int(usage, "outputTokens", 0),
                     "cache_creation_input_tokens",
                     (json_int_t)json_get_int(usage, "cacheCreationTokens", 0),
                     "cache_read_input_tokens",
                     (json_int_t)json_get_int(usage, "cacheReadTokens", 0), "reasoning_tokens",
                     (json_int_t)json_get_int(usage, "reasoningTokens", 0));
}

/* The input field a rule about this tool matches on, when it has one. */
char *output_call_label(const char *tool, const json_t *input)
{
    static const char *const keys[] = {"command", "file_path", "notebook_path", "path",
                                       "url", "pattern", "query"};
    loom_str s = LOOM_STR_INIT;
    str_append(&s, tool, strlen(tool));
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = json_get_str(input, keys[i], NULL);
        if (v && *v) {
            /* A long command is cut: the line names the call, the
             * permission_denials entry keeps its whole input. */
            size_t n = strlen(v);
            str_printf(&s, "(%.*s%s)", (int)(n > 80 ? 80 : n), v, n > 80 ? "…" : "");
            break;
        }
    }
    return str_steal(&s);
}

static const char *subtype_of(loom_run_state state, loom_stop_reason stop)
{
    if (state == LOOM_RUN_COMPLETED)
        return "success";
    if (stop == LOOM_STOP_MAX_TURNS)
        return "error_max_turns";
    if (stop == LOOM_STOP_TOKEN_BUDGET || stop == LOOM_STOP_USD_BUDGET)
        return "error_max_budget";
    if (state == LOOM_RUN_CANCELLED)
        return "error_cancelled";
    return "error_during_execution";
}

json_t *output_result_object(cli_output *o, const loom_run *run, const json_t *res)
{
    loom_run_state state = run ? loom_run_state_now(run) : LOOM_RUN_FAILED;
    loom_stop_reason stop = run ? loom_run_stop_reason(run) : LOOM_STOP_NONE;
    const json_t *cost = json_object_get(res, "cost_usd");
    json_t *denials = o->denials ? json_incref(o->denials) : json_array();
    json_t *out = json_pack(
        "{s:s,s:s,s:b,s:I,s:I,s:I,s:s,s:s?,s:O,s:o,s:o}", "type", "result", "subtype",
        subtype_of(state, stop), "is_error", state != LOOM_RUN_COMPLETED, "duration_ms",
        (json_int_t)(clock_mono_ms() - o->started_ms), "duration_api_ms", (json_int_t)o->api_ms,
        "num_turns", (json_int_t)json_get_int(res, "num_turns", 0), "result",
        json_get_str(res, "result", ""), "session_id",
        json_get_str(res, "session_id", o->session_id), "total_cost_usd",
        json_is_number(cost) ? cost : json_null(), "usage",
        output_usage_snake(json_get_obj(res, "usage")), "permission_denials",
        denials);
    /* Loom's own: every field of its result whose name is not Claude Code's. */
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)res, key, v) {
        if (!json_object_get(out, key))
            json_object_set(out, key, v);
    }
    if (o->model)
        json_object_set_new(out, "model", json_string(o->model));
    if (o->provider)
        json_object_set_new(out, "provider", json_string(o->provider));
    return out;
}

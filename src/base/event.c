/* event.c — building events in the one schema all surfaces share, and
 * each type's payload (see event.h for why this sits in base/). */
#include "base/event.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/str.h"
#include "base/utf8.h"
#include "base/uuid.h"

json_t *event_make(const char *run_id, loom_event_type type, loom_visibility vis,
                   const char *correlation_id, json_t *payload)
{
    char id[UUID_STR_LEN], ts[32];
    uuid_v7(id);
    clock_iso8601(clock_wall_ms(), ts);
    const char *name = loom_event_type_name(type);
    assert(name); /* an emitter passed a number that is not a type */
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s?,s:o}", "event_id", id, "run_id",
                     run_id ? run_id : "", "type", name ? name : "", "ts", ts, "visibility",
                     loom_visibility_name(vis), "correlation_id", correlation_id, "payload",
                     payload ? payload : json_object());
}

json_t *event_token_delta(const char *channel, const char *text, size_t n)
{
    return json_pack("{s:s,s:s%}", "channel", channel, "text", text, n);
}

json_t *event_stream_restarted(const char *reason, int attempt, const char *message)
{
    return json_pack("{s:s,s:i,s:s}", "reason", reason, "attempt", attempt, "message",
                     message ? message : "");
}

/* --- warning.emitted ------------------------------------------------------ */

json_t *event_warning(const char *kind, const char *message)
{
    return json_pack("{s:s,s:s}", "kind", kind, "message", message);
}

json_t *event_warningf(const char *kind, const char *fmt, ...)
{
    loom_str msg = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&msg, fmt, ap);
    va_end(ap);
    json_t *p = event_warning(kind, str_cstr(&msg));
    str_free(&msg);
    return p;
}

json_t *event_warning_model_retry(const char *message, loom_error_code code, int attempt,
                                  double delay_s)
{
    return json_pack("{s:s,s:s,s:s,s:i,s:f}", "kind", "model_retry", "message", message, "code",
                     loom_error_code_name(code), "attempt", attempt, "delay_s", delay_s);
}

json_t *event_warning_tool_loop(const char *message, const char *tool, int repeats)
{
    return json_pack("{s:s,s:s,s:s,s:i}", "kind", "tool_loop", "message", message, "tool", tool,
                     "repeats", repeats);
}

json_t *event_warning_fallback_model(const char *message, const char *model)
{
    return json_pack("{s:s,s:s,s:s}", "kind", "fallback_model", "message", message, "model",
                     model);
}

json_t *event_warning_prompt_too_long(const char *message, int64_t context_window)
{
    return json_pack("{s:s,s:s,s:I}", "kind", "prompt_too_long", "message", message,
                     "context_window", (json_int_t)context_window);
}

json_t *event_warning_compaction_skipped(const char *trigger, const char *fmt, ...)
{
    loom_str msg = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&msg, fmt, ap);
    va_end(ap);
    json_t *p = json_pack("{s:s,s:s,s:s}", "kind", "compaction_skipped", "trigger", trigger,
                          "message", str_cstr(&msg));
    str_free(&msg);
    return p;
}

json_t *event_warning_compaction_failed(const char *trigger, const char *message, int failures)
{
    return json_pack("{s:s,s:s,s:s,s:i}", "kind", "compaction_failed", "trigger", trigger,
                     "message", message, "failures", failures);
}

/* --- hooks, model calls, tools -------------------------------------------- */

json_t *event_hook_output(const char *event, const char *hook, const char *output)
{
    return json_pack("{s:s,s:s,s:s}", "event", event, "hook", hook ? hook : "", "output", output);
}

/* cost_usd is a payload's only when prices are known: an unknown cost
 * (< 0 inside the loop) is absent, never a -1 a consumer would add up. */
static json_t *with_cost(json_t *payload, double cost_usd)
{
    if (payload && cost_usd >= 0)
        json_object_set_new(payload, "cost_usd", json_real(cost_usd));
    return payload;
}

json_t *event_model_completed(int turn, loom_stop_reason stop, const char *request_id,
                              json_t *usage, double cost_usd, const char *response_model,
                              const char *response_id, int64_t started_us,
                              int64_t first_chunk_us)
{
    json_t *p = with_cost(json_pack("{s:i,s:s,s:s?,s:o}", "turn", turn, "stop_reason",
                                    loom_stop_reason_name(stop), "request_id", request_id,
                                    "usage", usage),
                          cost_usd);
    if (response_model && *response_model)
        json_object_set_new(p, "response_model", json_string(response_model));
    if (response_id && *response_id)
        json_object_set_new(p, "response_id", json_string(response_id));
    if (started_us > 0)
        json_object_set_new(p, "started_us", json_integer(started_us));
    if (first_chunk_us > 0)
        json_object_set_new(p, "first_chunk_us", json_integer(first_chunk_us));
    return p;
}

json_t *event_model_usage(const char *purpose, const char *tool, int calls, json_t *usage,
                          double cost_usd)
{
    return with_cost(json_pack("{s:s,s:s?,s:i,s:o}", "purpose", purpose, "tool", tool, "calls",
                               calls, "usage", usage),
                     cost_usd);
}

json_t *event_model_usage_helper(const char *purpose, const char *tool, const char *tier,
                                 const char *model, json_t *usage, double cost_usd)
{
    return with_cost(json_pack("{s:s,s:s?,s:i,s:s,s:s,s:o}", "purpose", purpose, "tool", tool,
                               "calls", 1, "tier", tier, "model", model, "usage", usage),
                     cost_usd);
}

json_t *event_model_usage_compaction(json_t *usage, double cost_usd)
{
    return with_cost(json_pack("{s:s,s:o}", "purpose", "compaction", "usage", usage), cost_usd);
}

json_t *event_tool_started(const char *call_id, const char *tool, const json_t *input)
{
    return json_pack("{s:s,s:s,s:O}", "call_id", call_id, "tool", tool, "input", input);
}

json_t *event_tool_progress(const char *call_id, const char *tool, double progress, double total,
                            const char *message)
{
    json_t *p = json_pack("{s:s,s:s,s:f}", "call_id", call_id ? call_id : "", "tool",
                          tool ? tool : "", "progress", progress);
    assert(p);
    if (total >= 0)
        json_object_set_new(p, "total", json_real(total));
    if (message)
        json_object_set_new(p, "message", json_string(message));
    return p;
}

json_t *event_tool_output(const char *call_id, const char *tool, size_t bytes_so_far,
                          const char *text, size_t n)
{
    size_t clean_len;
    char *clean = utf8_sanitize(text ? text : "", text ? n : 0, &clean_len);
    json_t *p = json_pack("{s:s,s:s,s:I,s:s%}", "call_id", call_id ? call_id : "", "tool",
                          tool ? tool : "", "progress", (json_int_t)bytes_so_far, "output",
                          clean, clean_len);
    free(clean);
    assert(p);
    return p;
}

json_t *event_mcp_server_changed(const char *server, const char *state, const char *error,
                                 int tools, int resources, int prompts)
{
    json_t *p = json_pack("{s:s,s:s,s:i,s:i,s:i}", "server", server, "state", state, "tools",
                          tools, "resources", resources, "prompts", prompts);
    assert(p);
    if (error)
        json_object_set_new(p, "error", json_string(error));
    return p;
}

static void set_str_if(json_t *o, const char *key, const char *v)
{
    if (v)
        json_object_set_new(o, key, json_string(v));
}

json_t *event_agent_spawned(const char *agent_id, const char *name, const char *agent_type,
                            const char *model, int depth, const char *parent_call_id,
                            bool background, const char *description,
                            const char *worktree_path, const char *worktree_branch)
{
    json_t *p = json_pack("{s:s,s:s,s:s,s:i,s:b}", "agent_id", agent_id, "agent_type",
                          agent_type, "model", model ? model : "", "depth", depth, "background",
                          background);
    assert(p);
    set_str_if(p, "name", name);
    set_str_if(p, "parent_call_id", parent_call_id);
    set_str_if(p, "description", description);
    if (worktree_path)
        json_object_set_new(p, "worktree", json_pack("{s:s,s:s}", "path", worktree_path, "branch",
                                                     worktree_branch ? worktree_branch : ""));
    return p;
}

json_t *event_agent_completed(const char *agent_id, const char *name, const char *agent_type,
                              loom_run_state state, loom_stop_reason stop, int turns,
                              int tool_uses, int64_t duration_ms, json_t *usage, double cost_usd,
                              const char *result, json_t *worktree)
{
    json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:I,s:o}", "agent_id", agent_id,
                          "agent_type", agent_type, "state", loom_run_state_name(state),
                          "stop_reason", loom_stop_reason_name(stop), "turns", turns, "tool_uses",
                          tool_uses, "duration_ms", (json_int_t)duration_ms, "usage",
                          usage ? usage : json_object());
    assert(p);
    set_str_if(p, "name", name);
    if (cost_usd >= 0)
        json_object_set_new(p, "cost_usd", json_real(cost_usd));
    if (result) {
        size_t n = strlen(result), keep = n < EVENT_TOOL_PREVIEW ? n : EVENT_TOOL_PREVIEW;
        while (keep < n && keep > 0 && ((unsigned char)result[keep] & 0xC0) == 0x80)
            keep--;
        json_object_set_new(p, "result", json_stringn(result, keep));
    }
    if (worktree)
        json_object_set_new(p, "worktree", worktree);
    return p;
}

json_t *event_agent_progress(const char *agent_id, const char *name, const char *tool,
                             int64_t tokens, int64_t elapsed_ms)
{
    json_t *p = json_pack("{s:s,s:I,s:I}", "agent_id", agent_id, "tokens", (json_int_t)tokens,
                          "elapsed_ms", (json_int_t)elapsed_ms);
    assert(p);
    set_str_if(p, "name", name);
    set_str_if(p, "tool", tool);
    return p;
}

json_t *event_tool_finished(const char *call_id, const char *tool, bool is_error,
                            int64_t started_us, int64_t finished_us, const char *text, size_t n,
                            const char *failed_step, const json_t *raw)
{
    /* The event carries a preview; the whole result is in the session. */
    size_t preview = n < EVENT_TOOL_PREVIEW ? n : EVENT_TOOL_PREVIEW;
    while (preview < n && preview > 0 && ((unsigned char)text[preview] & 0xC0) == 0x80)
        preview--;
    /* Tool output need not be UTF-8 (a binary file, a terminal escape cut in
     * half); json_pack would refuse it and the event would lose its payload,
     * so bad bytes become U+FFFD here as they do in the session record. */
    size_t clean_len;
    char *clean = utf8_sanitize(text ? text : "", preview, &clean_len);
    json_t *payload = json_pack(
        "{s:s,s:s,s:b,s:I,s:I,s:I,s:s%,s:I}", "call_id", call_id, "tool", tool, "is_error",
        is_error, "started_us", (json_int_t)started_us, "finished_us", (json_int_t)finished_us,
        "duration_ms", (json_int_t)((finished_us - started_us) / 1000), "output", clean,
        clean_len, "output_chars", (json_int_t)n);
    free(clean);
    assert(payload);
    if (failed_step)
        json_object_set_new(payload, "failed_step", json_string(failed_step));
    if (raw)
        json_object_set(payload, "raw", (json_t *)raw);
    return payload;
}

/* --- approvals ------------------------------------------------------------ */

json_t *event_approval_requested(const char *approval_id, const char *tool, const char *message,
                                 const json_t *input, const char *question, json_t *always)
{
    return json_pack("{s:s,s:s,s:s,s:O,s:s,s:o}", "approval_id", approval_id, "tool", tool,
                     "message", message, "input", input, "question", question, "always",
                     always);
}

json_t *event_approval_resolved(const char *approval_id, const char *tool, bool approved,
                                json_t *always)
{
    return json_pack("{s:s,s:s,s:b,s:o}", "approval_id", approval_id, "tool", tool, "approved",
                     approved, "always", always ? always : json_null());
}

/* --- context -------------------------------------------------------------- */

json_t *event_context_compaction_started(const char *trigger, int64_t tokens_before)
{
    return json_pack("{s:s,s:I}", "trigger", trigger, "tokens_before", (json_int_t)tokens_before);
}

json_t *event_context_compacted_summary(const char *trigger, bool background,
                                        int64_t tokens_before, int64_t tokens_after)
{
    return json_pack("{s:s,s:s,s:b,s:I,s:I,s:I}", "step", "compact", "trigger", trigger,
                     "background", background, "tokens_before", (json_int_t)tokens_before,
                     "tokens_after", (json_int_t)tokens_after, "saved_tokens",
                     (json_int_t)(tokens_before - tokens_after));
}

json_t *event_context_compacted_step(const char *step, int64_t saved_tokens, double rho)
{
    return json_pack("{s:s,s:s,s:I,s:f}", "step", step, "trigger", "auto", "saved_tokens",
                     (json_int_t)saved_tokens, "rho", rho);
}

json_t *event_context_renewed(const char *reason, int turn, int64_t tokens_before,
                              int64_t tokens_after, int items, int kept, int core,
                              const char *mf_dir)
{
    return json_pack("{s:s,s:i,s:I,s:I,s:i,s:i,s:i,s:s?}", "reason", reason, "turn", turn,
                     "tokens_before", (json_int_t)tokens_before, "tokens_after",
                     (json_int_t)tokens_after, "items", items, "kept", kept, "core", core,
                     "mf_dir", mf_dir);
}

/* --- heartbeat and the run ------------------------------------------------ */

json_t *event_heartbeat_event(const char *event_id, const char *fingerprint, const char *source,
                              const char *summary, const char *urgency, const char *action,
                              double delta_h)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:f}", "event_id", event_id, "fingerprint",
                     fingerprint, "source", source, "summary", summary, "urgency", urgency,
                     "action", action, "delta_h", delta_h);
}

json_t *event_run_started(const char *session_id, const char *model, const char *provider,
                          const char *cwd, const char *permission_mode)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "state",
                     loom_run_state_name(LOOM_RUN_RUNNING), "session_id", session_id, "model",
                     model, "provider", provider, "cwd", cwd, "permission_mode", permission_mode);
}

json_t *event_run_ended(loom_run_state state, const char *result, loom_stop_reason stop,
                        const char *session_id, int num_turns, json_t *usage, double cost_usd,
                        loom_error_code code, const char *error_message, json_t *interrupt)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:i,s:o}", "state", loom_run_state_name(state),
                          "result", result ? result : "", "stop_reason",
                          loom_stop_reason_name(stop), "session_id", session_id, "num_turns",
                          num_turns, "usage", usage);
    if (cost_usd >= 0)
        json_object_set_new(o, "cost_usd", json_real(cost_usd));
    if (code != LOOM_OK)
        json_object_set_new(o, "error", json_pack("{s:s,s:s}", "code", loom_error_code_name(code),
                                                  "message", error_message));
    if (interrupt)
        json_object_set(o, "interrupt", interrupt);
    return o;
}

json_t *event_run_heartbeat(uint64_t ticks, uint64_t events, uint64_t gated, double cpu_ms,
                            double wall_ms, double cpu_share)
{
    return json_pack("{s:I,s:I,s:I,s:f,s:f,s:f}", "ticks", (json_int_t)ticks, "events",
                     (json_int_t)events, "gated", (json_int_t)gated, "cpu_ms", cpu_ms, "wall_ms",
                     wall_ms, "cpu_share", cpu_share);
}

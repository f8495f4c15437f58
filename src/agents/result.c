/* result.c — what the parent's Agent call gets back from a child: the text
 * the model reads and the raw object in Claude Code's toolUseResult shape
 * (runner.h), and the depth-limit hand-off.
 *
 * Owns nothing. Threading: pure functions of the node and outcome; the
 * node's counters are atomics.
 */
#include <string.h>

#include "agents/runner.h"
#include "base/json.h"
#include "base/str.h"

static const char *status_of(const agent_outcome *o)
{
    if (o->state == LOOM_RUN_COMPLETED)
        return "completed";
    if (o->partial)
        return "partial";
    if (o->state == LOOM_RUN_CANCELLED || o->stop_reason == LOOM_STOP_CANCELLED)
        return "cancelled";
    return "failed";
}

json_t *agent_outcome_raw(const spawn_node *n, const char *prompt, const agent_outcome *o)
{
    json_t *raw = json_object();
    json_object_set_new(raw, "status", json_string(status_of(o)));
    json_object_set_new(raw, "agentId", json_string(n->id));
    json_set_str(raw, "agentType", n->type);
    if (n->name)
        json_object_set_new(raw, "name", json_string(n->name));
    json_set_str(raw, "model", n->model);
    json_object_set_new(raw, "content",
                        json_pack("[{s:s,s:s}]", "type", "text", "text",
                                  o->final_text ? o->final_text : ""));
    json_object_set_new(raw, "totalDurationMs", json_integer(o->duration_ms));
    json_object_set_new(raw, "totalTokens", json_integer(msg_usage_total(&o->usage)));
    json_object_set_new(raw, "totalToolUseCount", json_integer(o->tool_uses));
    json_object_set_new(raw, "turns", json_integer(o->turns));
    json_object_set_new(raw, "usage", msg_usage_to_json(&o->usage));
    json_set_str(raw, "prompt", prompt);
    if (o->cost_usd >= 0)
        json_object_set_new(raw, "costUsd", json_real(o->cost_usd));
    json_object_set_new(raw, "stopReason", json_string(loom_stop_reason_name(o->stop_reason)));
    json_set_str(raw, "transcriptPath", n->transcript_path);
    json_set_str(raw, "worktreePath", n->worktree_path);
    json_set_str(raw, "worktreeBranch", n->worktree_branch);
    if (o->structured)
        json_object_set(raw, "structured", o->structured);
    if (o->error)
        json_object_set_new(raw, "error", json_string(o->error));
    return raw;
}

void agent_outcome_result(const spawn_node *n, const char *prompt, const agent_outcome *o,
                          tool_result *out)
{
    out->raw = agent_outcome_raw(n, prompt, o);
    if (o->state == LOOM_RUN_COMPLETED) {
        str_puts(&out->text, o->final_text && *o->final_text
                                 ? o->final_text
                                 : "(the agent ended without a final message)");
        return;
    }
    /* Ended early or failed: a JSON the parent can act on (decompose the
     * rest, resume with SendMessage). */
    json_t *j = json_pack("{s:s,s:s,s:s,s:s?}", "status", status_of(o), "agent_id", n->id,
                          "stop_reason", loom_stop_reason_name(o->stop_reason), "last_message",
                          o->final_text);
    if (o->error)
        json_object_set_new(j, "error", json_string(o->error));
    json_object_set_new(j, "tokens", json_integer(msg_usage_total(&o->usage)));
    char *text = json_dump_compact(j);
    json_decref(j);
    str_puts(&out->text, text);
    free(text);
    out->is_error = !o->partial;
}

void agent_handoff_result(const spawn_node *parent, int d_max, const char *goal,
                          tool_result *out)
{
    char report[300];
    snprintf(report, sizeof report,
             "No sub-agent was started: this agent is at depth %d, the deepest allowed "
             "(runtime.max_depth %d). Do this task yourself, or hand it back in your answer.",
             parent->depth, d_max);
    json_t *j = json_pack("{s:s,s:s,s:i,s:i,s:s?,s:s}", "status", "handoff", "reason",
                          "depth_limit", "depth", parent->depth, "d_max", d_max, "goal", goal,
                          "report", report);
    char *text = json_dump_compact(j);
    str_puts(&out->text, text);
    free(text);
    out->raw = j;
}

/* protocol.c — the names of include/loom_protocol.h's values, the one
 * table of each (numbers to wire names and back).
 *
 * Owns nothing but static tables; every function is pure and safe on any
 * thread. A lookup by name is a linear scan: the tables are short and
 * names are looked up once per message, never per token. */
#include "loom_protocol.h"

#include <string.h>

static const char *const error_names[LOOM_ERROR_CODE_END] = {
    [LOOM_OK] = "ok",
    [LOOM_ERR_INVALID_REQUEST] = "invalid_request",
    [LOOM_ERR_INVALID_STATE_TRANSITION] = "invalid_state_transition",
    [LOOM_ERR_RESOURCE_NOT_FOUND] = "resource_not_found",
    [LOOM_ERR_RUN_BLOCKED_BY_POLICY] = "run_blocked_by_policy",
    [LOOM_ERR_RUN_WAITING_APPROVAL] = "run_waiting_approval",
    [LOOM_ERR_RUN_APPROVAL_EXPIRED] = "run_approval_expired",
    [LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY] = "run_blocked_by_capability",
    [LOOM_ERR_RUN_CANCELLED] = "run_cancelled",
    [LOOM_ERR_RUN_RESUMABLE] = "run_resumable",
    [LOOM_ERR_RUN_NOT_RESUMABLE] = "run_not_resumable",
    [LOOM_ERR_TOOL_EXECUTION_FAILED] = "tool_execution_failed",
    [LOOM_ERR_KNOWLEDGE_SOURCE_DENIED] = "knowledge_source_denied",
    [LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE] = "knowledge_insufficient_evidence",
    [LOOM_ERR_VERIFICATION_FAILED] = "verification_failed",
    [LOOM_ERR_MODEL_RATE_LIMITED] = "model_rate_limited",
    [LOOM_ERR_MODEL_OVERLOADED] = "model_overloaded",
    [LOOM_ERR_MODEL_UNAVAILABLE] = "model_unavailable",
    [LOOM_ERR_MODEL_PROMPT_TOO_LONG] = "model_prompt_too_long",
    [LOOM_ERR_MODEL_REQUEST_REJECTED] = "model_request_rejected",
    [LOOM_ERR_MODEL_AUTH] = "model_auth_failed",
    [LOOM_ERR_MODEL_PROTOCOL] = "model_protocol_error",
    [LOOM_ERR_MODEL_TIMEOUT] = "model_timeout",
    [LOOM_ERR_CONFIG] = "config_invalid",
    [LOOM_ERR_SESSION_CORRUPT] = "session_corrupt",
    [LOOM_ERR_IO] = "io_failed",
    [LOOM_ERR_INTERNAL] = "internal_error",
    [LOOM_ERR_TENANT_QUOTA_EXCEEDED] = "tenant_quota_exceeded",
    [LOOM_ERR_PROJECT_SCOPE_DENIED] = "project_scope_denied",
    [LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED] = "knowledge_source_scope_denied",
    [LOOM_ERR_ARTIFACT_SCOPE_DENIED] = "artifact_scope_denied",
    [LOOM_ERR_UNAUTHENTICATED] = "unauthenticated",
};

static const char *const event_names[LOOM_EVENT_TYPE_END] = {
    [LOOM_EV_TOKEN_DELTA] = "token.delta",
    [LOOM_EV_RUN_STATE_CHANGED] = "run.state_changed",
    [LOOM_EV_TOOL_STARTED] = "tool.started",
    [LOOM_EV_TOOL_FINISHED] = "tool.finished",
    [LOOM_EV_TOOL_FAILED] = "tool.failed",
    [LOOM_EV_APPROVAL_REQUESTED] = "approval.requested",
    [LOOM_EV_APPROVAL_RESOLVED] = "approval.resolved",
    [LOOM_EV_ARTIFACT_CREATED] = "artifact.created",
    [LOOM_EV_AGENT_SPAWNED] = "agent.spawned",
    [LOOM_EV_AGENT_COMPLETED] = "agent.completed",
    [LOOM_EV_WARNING_EMITTED] = "warning.emitted",
    [LOOM_EV_STREAM_RESTARTED] = "stream.restarted",
    [LOOM_EV_HOOK_OUTPUT] = "hook.output",
    [LOOM_EV_CONTEXT_COMPACTION_STARTED] = "context.compaction_started",
    [LOOM_EV_CONTEXT_COMPACTED] = "context.compacted",
    [LOOM_EV_CONTEXT_RENEWED] = "context.renewed",
    [LOOM_EV_MODEL_COMPLETED] = "model.completed",
    [LOOM_EV_MODEL_USAGE] = "model.usage",
    [LOOM_EV_HEARTBEAT_EVENT] = "heartbeat.event",
    [LOOM_EV_TOOL_PROGRESS] = "tool.progress",
    [LOOM_EV_MCP_SERVER_CHANGED] = "mcp.server_changed",
    [LOOM_EV_AGENT_PROGRESS] = "agent.progress",
    [LOOM_EV_SKILL_OFFERED] = "skill.offered",
    [LOOM_EV_SKILL_ACTIVATED] = "skill.activated",
    [LOOM_EV_POLICY_DENIED] = "policy.denied",
    [LOOM_EV_WORKING_UPDATED] = "working.updated",
    [LOOM_EV_GUARDRAIL_TRIPPED] = "guardrail.tripped",
};

static const char *const visibility_names[LOOM_VISIBILITY_END] = {
    [LOOM_VIS_USER] = "user",
    [LOOM_VIS_SYSTEM] = "system",
    [LOOM_VIS_AUDIT] = "audit",
};

static const char *const run_state_names[LOOM_RUN_STATE_END] = {
    [LOOM_RUN_QUEUED] = "queued",
    [LOOM_RUN_RUNNING] = "running",
    [LOOM_RUN_WAITING_APPROVAL] = "waiting_approval",
    [LOOM_RUN_WAITING_EXTERNAL] = "waiting_external",
    [LOOM_RUN_PAUSED] = "paused",
    [LOOM_RUN_COMPLETED] = "completed",
    [LOOM_RUN_FAILED] = "failed",
    [LOOM_RUN_CANCELLED] = "cancelled",
    [LOOM_RUN_BLOCKED_BY_POLICY] = "blocked_by_policy",
    [LOOM_RUN_BLOCKED_BY_CAPABILITY] = "blocked_by_capability",
};

static const char *const stop_names[LOOM_STOP_REASON_END] = {
    [LOOM_STOP_NONE] = "none",
    [LOOM_STOP_END_TURN] = "end_turn",
    [LOOM_STOP_TOOL_USE] = "tool_use",
    [LOOM_STOP_MAX_TOKENS] = "max_tokens",
    [LOOM_STOP_STOP_SEQUENCE] = "stop_sequence",
    [LOOM_STOP_REFUSAL] = "refusal",
    [LOOM_STOP_PAUSE_TURN] = "pause_turn",
    [LOOM_STOP_OTHER] = "other",
    [LOOM_STOP_MAX_TURNS] = "max_turns",
    [LOOM_STOP_TOKEN_BUDGET] = "token_budget",
    [LOOM_STOP_USD_BUDGET] = "usd_budget",
    [LOOM_STOP_CANCELLED] = "cancelled",
    [LOOM_STOP_EXTERNAL_SIGNAL] = "external_signal",
    [LOOM_STOP_MODEL_ERROR] = "model_error",
    [LOOM_STOP_SESSION_ERROR] = "session_error",
    [LOOM_STOP_HOOK_STOPPED] = "hook_stopped",
    [LOOM_STOP_PROMPT_BLOCKED] = "prompt_blocked",
    [LOOM_STOP_BUDGET_SHARE] = "budget_share",
    [LOOM_STOP_PAUSED] = "paused",
    [LOOM_STOP_GUARDRAIL] = "guardrail",
};

/* The *_END counts are written by hand in the header; a value added
 * without moving its END fails here instead of reading past a table. */
_Static_assert(LOOM_ERR_UNAUTHENTICATED + 1 == LOOM_ERROR_CODE_END, "LOOM_ERROR_CODE_END");
_Static_assert(LOOM_EV_GUARDRAIL_TRIPPED + 1 == LOOM_EVENT_TYPE_END, "LOOM_EVENT_TYPE_END");
_Static_assert(LOOM_VIS_AUDIT + 1 == LOOM_VISIBILITY_END, "LOOM_VISIBILITY_END");
_Static_assert(LOOM_RUN_BLOCKED_BY_CAPABILITY + 1 == LOOM_RUN_STATE_END, "LOOM_RUN_STATE_END");
_Static_assert(LOOM_STOP_GUARDRAIL + 1 == LOOM_STOP_REASON_END, "LOOM_STOP_REASON_END");

static const char *name_at(const char *const *names, int n, int v)
{
    return v >= 0 && v < n ? names[v] : NULL;
}

static int value_of(const char *const *names, int n, const char *name)
{
    for (int v = 0; name && v < n; v++)
        if (names[v] && !strcmp(names[v], name))
            return v;
    return -1;
}

const char *loom_error_code_name(loom_error_code code)
{
    const char *s = name_at(error_names, LOOM_ERROR_CODE_END, (int)code);
    return s ? s : "unknown_error";
}

int loom_error_code_from_name(const char *name)
{
    return value_of(error_names, LOOM_ERROR_CODE_END, name);
}

const char *loom_event_type_name(loom_event_type type)
{
    return name_at(event_names, LOOM_EVENT_TYPE_END, (int)type);
}

loom_event_type loom_event_type_from_name(const char *name)
{
    int v = value_of(event_names, LOOM_EVENT_TYPE_END, name);
    return v < 0 ? LOOM_EV_NONE : (loom_event_type)v;
}

const char *loom_visibility_name(loom_visibility vis)
{
    const char *s = name_at(visibility_names, LOOM_VISIBILITY_END, (int)vis);
    return s ? s : "user";
}

const char *loom_run_state_name(loom_run_state state)
{
    const char *s = name_at(run_state_names, LOOM_RUN_STATE_END, (int)state);
    return s ? s : "unknown";
}

int loom_run_state_from_name(const char *name)
{
    return value_of(run_state_names, LOOM_RUN_STATE_END, name);
}

const char *loom_stop_reason_name(loom_stop_reason reason)
{
    const char *s = name_at(stop_names, LOOM_STOP_REASON_END, (int)reason);
    return s ? s : "none";
}

int loom_stop_reason_from_name(const char *name)
{
    return value_of(stop_names, LOOM_STOP_REASON_END, name);
}

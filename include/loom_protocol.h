/* loom_protocol.h — the words every part of Loom and every caller share:
 * event types, error codes, run states, stop reasons, visibility values.
 *
 * Every value has a fixed number, written out here, and a fixed snake_case
 * (or dotted, for event types) name, the one that goes on the wire. A
 * number is never reused and a name never changed: values are only ever
 * added, at the end of their enum. A value that is retired keeps its slot
 * (marked "retired" here) so that no number ever means two things — the
 * way curl keeps its CURLE_* numbers. docs/events.md lists the same
 * values; unit.test_base_protocol checks that the two agree.
 *
 * This header is plain C with no dependencies: loom.h includes it, and any
 * layer of the library may include it on its own (DESIGN.md §1). The name
 * functions below are implemented once, in src/base/protocol.c; they take
 * and return static strings and are safe on any thread.
 */
#ifndef LOOM_PROTOCOL_H
#define LOOM_PROTOCOL_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- error codes ----------------------------------------------------------
 *
 * What a failure means to the system (seed 000 §11, L1996-2013), never the C
 * failure underneath. The seed's set, extended with model_* and local-state
 * codes. Internal functions return the negated code (-LOOM_ERR_IO); the API
 * reports it in loom_status.code, with its name in loom_status.code_name. */
typedef enum loom_error_code {
    LOOM_OK = 0,                                 /* ok */
    /* request (seed 000) */
    LOOM_ERR_INVALID_REQUEST = 1,                /* invalid_request */
    LOOM_ERR_INVALID_STATE_TRANSITION = 2,       /* invalid_state_transition */
    LOOM_ERR_RESOURCE_NOT_FOUND = 3,             /* resource_not_found */
    /* run (seed 000) */
    LOOM_ERR_RUN_BLOCKED_BY_POLICY = 4,          /* run_blocked_by_policy */
    LOOM_ERR_RUN_WAITING_APPROVAL = 5,           /* run_waiting_approval */
    LOOM_ERR_RUN_APPROVAL_EXPIRED = 6,           /* run_approval_expired */
    LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY = 7,      /* run_blocked_by_capability */
    LOOM_ERR_RUN_CANCELLED = 8,                  /* run_cancelled */
    LOOM_ERR_RUN_RESUMABLE = 9,                  /* run_resumable: stopped, resume to go on */
    LOOM_ERR_RUN_NOT_RESUMABLE = 10,             /* run_not_resumable */
    /* execution / knowledge (seed 000) */
    LOOM_ERR_TOOL_EXECUTION_FAILED = 11,         /* tool_execution_failed */
    LOOM_ERR_KNOWLEDGE_SOURCE_DENIED = 12,       /* knowledge_source_denied */
    LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE = 13, /* knowledge_insufficient_evidence */
    LOOM_ERR_VERIFICATION_FAILED = 14,           /* verification_failed */
    /* model provider (Loom) */
    LOOM_ERR_MODEL_RATE_LIMITED = 15,     /* model_rate_limited: 429 after the retries ran out */
    LOOM_ERR_MODEL_OVERLOADED = 16,       /* model_overloaded: 529 / overloaded_error, after retries */
    LOOM_ERR_MODEL_UNAVAILABLE = 17,      /* model_unavailable: 5xx, connection reset, after retries */
    LOOM_ERR_MODEL_PROMPT_TOO_LONG = 18,  /* model_prompt_too_long: 413 / prompt is too long */
    LOOM_ERR_MODEL_REQUEST_REJECTED = 19, /* model_request_rejected: other 4xx, the provider's message */
    LOOM_ERR_MODEL_AUTH = 20,             /* model_auth_failed: 401/403 */
    LOOM_ERR_MODEL_PROTOCOL = 21,         /* model_protocol_error: malformed stream or body */
    LOOM_ERR_MODEL_TIMEOUT = 22,          /* model_timeout: connect or idle timeout */
    /* local state (Loom) */
    LOOM_ERR_CONFIG = 23,                 /* config_invalid */
    LOOM_ERR_SESSION_CORRUPT = 24,        /* session_corrupt */
    LOOM_ERR_IO = 25,                     /* io_failed */
    LOOM_ERR_INTERNAL = 26,               /* internal_error */
    /* tenancy and access (seed 000 §11, multi-tenancy; loom serve) */
    LOOM_ERR_TENANT_QUOTA_EXCEEDED = 27,  /* tenant_quota_exceeded: a tenant's quota is spent */
    LOOM_ERR_PROJECT_SCOPE_DENIED = 28,   /* project_scope_denied: outside the token's project */
    LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED = 29, /* knowledge_source_scope_denied */
    LOOM_ERR_ARTIFACT_SCOPE_DENIED = 30,  /* artifact_scope_denied */
    LOOM_ERR_UNAUTHENTICATED = 31,        /* unauthenticated: no token, or one the server does not know */
} loom_error_code;
/* One past the highest number in use (not a code). */
#define LOOM_ERROR_CODE_END 32

/* The code's name ("tool_execution_failed"); "unknown_error" for a number
 * that is not a code. */
const char *loom_error_code_name(loom_error_code code);
/* The code with that name, or -1 when no code has it. */
int loom_error_code_from_name(const char *name);

/* ---- event types ------------------------------------------------------------
 *
 * Every event has one schema (seed 000 §11; docs/events.md gives each
 * type's payload): {event_id, run_id, type, ts, visibility, correlation_id,
 * payload}, type being the name below. */
typedef enum loom_event_type {
    LOOM_EV_NONE = 0,                        /* not an event type */
    LOOM_EV_TOKEN_DELTA = 1,                 /* token.delta */
    LOOM_EV_RUN_STATE_CHANGED = 2,           /* run.state_changed */
    LOOM_EV_TOOL_STARTED = 3,                /* tool.started */
    LOOM_EV_TOOL_FINISHED = 4,               /* tool.finished */
    LOOM_EV_TOOL_FAILED = 5,                 /* tool.failed */
    LOOM_EV_APPROVAL_REQUESTED = 6,          /* approval.requested */
    LOOM_EV_APPROVAL_RESOLVED = 7,           /* approval.resolved */
    LOOM_EV_ARTIFACT_CREATED = 8,            /* artifact.created (reserved, seed 000) */
    LOOM_EV_AGENT_SPAWNED = 9,               /* agent.spawned: a sub-agent started */
    LOOM_EV_AGENT_COMPLETED = 10,            /* agent.completed: it ended (usage, result) */
    LOOM_EV_WARNING_EMITTED = 11,            /* warning.emitted */
    /* A model call starts over (retry, fallback model, a re-sent request):
     * the token.delta text of the call so far is void. */
    LOOM_EV_STREAM_RESTARTED = 12,           /* stream.restarted */
    LOOM_EV_HOOK_OUTPUT = 13,                /* hook.output */
    LOOM_EV_CONTEXT_COMPACTION_STARTED = 14, /* context.compaction_started */
    LOOM_EV_CONTEXT_COMPACTED = 15,          /* context.compacted */
    LOOM_EV_CONTEXT_RENEWED = 16,            /* context.renewed */
    LOOM_EV_MODEL_COMPLETED = 17,            /* model.completed */
    LOOM_EV_MODEL_USAGE = 18,                /* model.usage */
    LOOM_EV_HEARTBEAT_EVENT = 19,            /* heartbeat.event */
    LOOM_EV_TOOL_PROGRESS = 20,              /* tool.progress (an MCP server's notifications/progress) */
    LOOM_EV_MCP_SERVER_CHANGED = 21,         /* mcp.server_changed (connected, failed, tools changed) */
    LOOM_EV_AGENT_PROGRESS = 22,             /* agent.progress: a running sub-agent's tool, tokens */
    LOOM_EV_SKILL_OFFERED = 23,              /* skill.offered: the skills the model was shown, their size */
    LOOM_EV_SKILL_ACTIVATED = 24,            /* skill.activated: a skill's body entered the context */
    /* A tool call a rule, the mode, a hook or an agent's limits denied (not
     * a person): seed 000 §11's policy.denied, for the security trail. */
    LOOM_EV_POLICY_DENIED = 25,              /* policy.denied */
    /* C_working (plan, dashboard, pending events) after a turn's observe
     * step, only when it changed: for consoles' side panels. */
    LOOM_EV_WORKING_UPDATED = 26,            /* working.updated */
    /* An input or output guardrail stopped the run (its stage, name and
     * reason): the run ends blocked_by_policy, stop reason guardrail. */
    LOOM_EV_GUARDRAIL_TRIPPED = 27,          /* guardrail.tripped */
} loom_event_type;
/* One past the highest number in use (not a type). */
#define LOOM_EVENT_TYPE_END 28

/* The type's wire name ("tool.started"); NULL for LOOM_EV_NONE or a number
 * that is not a type. */
const char *loom_event_type_name(loom_event_type type);
/* The type with that name, or LOOM_EV_NONE. */
loom_event_type loom_event_type_from_name(const char *name);

/* ---- visibility ---------------------------------------------------------- */

/* Who an event is for (seed 000 §11). */
typedef enum loom_visibility {
    LOOM_VIS_USER = 0,   /* user: shown to the person driving the run */
    LOOM_VIS_SYSTEM = 1, /* system: for the surface, not the person */
    LOOM_VIS_AUDIT = 2,  /* audit: for the record only */
} loom_visibility;
#define LOOM_VISIBILITY_END 3

/* "user", "system" or "audit"; "user" for a number that is not a value. */
const char *loom_visibility_name(loom_visibility vis);

/* ---- run states ---------------------------------------------------------- */

/* The states a run moves through (DESIGN.md §3; seed 000 §11). */
typedef enum loom_run_state {
    LOOM_RUN_QUEUED = 0,                 /* queued */
    LOOM_RUN_RUNNING = 1,                /* running */
    LOOM_RUN_WAITING_APPROVAL = 2,       /* waiting_approval */
    LOOM_RUN_WAITING_EXTERNAL = 3,       /* waiting_external */
    LOOM_RUN_PAUSED = 4,                 /* paused */
    LOOM_RUN_COMPLETED = 5,              /* completed */
    LOOM_RUN_FAILED = 6,                 /* failed */
    LOOM_RUN_CANCELLED = 7,              /* cancelled */
    LOOM_RUN_BLOCKED_BY_POLICY = 8,      /* blocked_by_policy */
    LOOM_RUN_BLOCKED_BY_CAPABILITY = 9,  /* blocked_by_capability */
} loom_run_state;
#define LOOM_RUN_STATE_END 10

/* The state's name ("completed", "waiting_approval", …); "unknown" for a
 * number that is not a state. */
const char *loom_run_state_name(loom_run_state state);
/* The state with that name, or -1. */
int loom_run_state_from_name(const char *name);

/* ---- stop reasons -------------------------------------------------------------
 *
 * Why a model reply ended (1–7: the provider's answer, normalized; a
 * model.completed event's stop_reason) and why a run ended (all of them;
 * the run result's stop_reason). A run that ends on a model's final reply
 * carries that reply's reason (end_turn, max_tokens, refusal, …). */
typedef enum loom_stop_reason {
    LOOM_STOP_NONE = 0,            /* none: no reason given */
    /* the model's */
    LOOM_STOP_END_TURN = 1,        /* end_turn */
    LOOM_STOP_TOOL_USE = 2,        /* tool_use */
    LOOM_STOP_MAX_TOKENS = 3,      /* max_tokens: the reply hit its output limit */
    LOOM_STOP_STOP_SEQUENCE = 4,   /* stop_sequence */
    LOOM_STOP_REFUSAL = 5,         /* refusal */
    LOOM_STOP_PAUSE_TURN = 6,      /* pause_turn */
    LOOM_STOP_OTHER = 7,           /* other: a reason Loom does not know */
    /* the run's */
    LOOM_STOP_MAX_TURNS = 8,       /* max_turns: the max_turns limit (resumable) */
    LOOM_STOP_TOKEN_BUDGET = 9,    /* token_budget: max_tokens_total reached (resumable) */
    LOOM_STOP_USD_BUDGET = 10,     /* usd_budget: max_usd reached (resumable) */
    LOOM_STOP_CANCELLED = 11,      /* cancelled: loom_run_cancel, or interrupted */
    LOOM_STOP_EXTERNAL_SIGNAL = 12, /* external_signal: SIGINT/SIGTERM via the heartbeat */
    LOOM_STOP_MODEL_ERROR = 13,    /* model_error: the model call failed for good */
    LOOM_STOP_SESSION_ERROR = 14,  /* session_error: the session could not be read or written */
    LOOM_STOP_HOOK_STOPPED = 15,   /* hook_stopped: a hook answered continue: false */
    LOOM_STOP_PROMPT_BLOCKED = 16, /* prompt_blocked: a UserPromptSubmit hook blocked it */
    LOOM_STOP_BUDGET_SHARE = 17,   /* budget_share: a sub-agent spent its share of the tree's budget */
    LOOM_STOP_PAUSED = 18,         /* paused: loom_run_pause, at a turn boundary (resumable) */
    LOOM_STOP_GUARDRAIL = 19,      /* guardrail: an input or output guardrail stopped the run */
} loom_stop_reason;
#define LOOM_STOP_REASON_END 20

/* The reason's name ("max_turns"); "none" for a number that is not one. */
const char *loom_stop_reason_name(loom_stop_reason reason);
/* The reason with that name, or -1. */
int loom_stop_reason_from_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif

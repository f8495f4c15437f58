/* events.h — the hook events Loom fires, their settings names, and which
 * payload field each event's matcher is tested against.
 *
 * The set is seed 001 §6.1 (28 events). Names are Claude Code's spelling, so
 * a settings file written for Claude Code keys its `hooks` object the same
 * way here. The enum is only ever appended to: its values may be stored.
 */
#ifndef LOOM_HOOKS_EVENTS_H
#define LOOM_HOOKS_EVENTS_H

typedef enum hook_event {
    HOOK_PRE_TOOL_USE = 0,
    HOOK_POST_TOOL_USE,
    HOOK_POST_TOOL_USE_FAILURE,
    HOOK_USER_PROMPT_SUBMIT,
    HOOK_STOP,
    HOOK_STOP_FAILURE,
    HOOK_SUBAGENT_START,
    HOOK_SUBAGENT_STOP,
    HOOK_PRE_COMPACT,
    HOOK_POST_COMPACT,
    HOOK_SESSION_START,
    HOOK_SESSION_END,
    HOOK_NOTIFICATION,
    HOOK_FINAL_STOP,
    HOOK_PERMISSION_REQUEST,
    HOOK_PERMISSION_DENIED,
    HOOK_WORKTREE_CREATE,
    HOOK_WORKTREE_REMOVE,
    HOOK_CONFIG_CHANGE,
    HOOK_INSTRUCTIONS_LOADED,
    HOOK_SETUP,
    HOOK_ELICITATION,
    HOOK_ELICITATION_RESULT,
    HOOK_FILE_CHANGED,
    HOOK_TASK_CREATED,
    HOOK_TASK_COMPLETED,
    HOOK_CWD_CHANGED,
    HOOK_TEAMMATE_IDLE,
    /* Loom's own, beyond seed 001's 28: guardrails configured in settings
     * (runtime/guardrail.h). Matcher-free; a block stops the run. */
    HOOK_INPUT_GUARDRAIL,
    HOOK_OUTPUT_GUARDRAIL,
    HOOK_EVENT__COUNT
} hook_event;

/* "PreToolUse", …; "?" for a value out of range. Static storage. */
const char *hook_event_name(hook_event ev);
/* Exact, case-sensitive name (as Claude Code settings spell it). Returns 0
 * and sets *out, or -1 when the name is not an event Loom knows. */
int hook_event_parse(const char *name, hook_event *out);
/* The top-level payload field the event's matcher is tested against
 * ("tool_name", "source", "reason", "trigger", "notification_type",
 * "agent_type"), or NULL
 * when the event has no matcher: then every hook group matches. */
const char *hook_event_match_field(hook_event ev);

#endif

/* events.c — the table behind events.h: one row per hook event with its
 * settings name and the payload field its matcher reads. */
#include "hooks/events.h"

#include <string.h>

typedef struct {
    const char *name;
    const char *match_field;
} event_row;

/* seed 001 §6.1: the 28 events; matcher fields from the same table (tool
 * events match tool_name, SessionStart source, SessionEnd reason, PreCompact
 * trigger, Notification notification_type; SubagentStart and SubagentStop
 * agent_type, as Claude Code matches them on the agent's type). */
static const event_row rows[HOOK_EVENT__COUNT] = {
    [HOOK_PRE_TOOL_USE] = {"PreToolUse", "tool_name"},
    [HOOK_POST_TOOL_USE] = {"PostToolUse", "tool_name"},
    [HOOK_POST_TOOL_USE_FAILURE] = {"PostToolUseFailure", "tool_name"},
    [HOOK_USER_PROMPT_SUBMIT] = {"UserPromptSubmit", NULL},
    [HOOK_STOP] = {"Stop", NULL},
    [HOOK_STOP_FAILURE] = {"StopFailure", NULL},
    [HOOK_SUBAGENT_START] = {"SubagentStart", "agent_type"},
    [HOOK_SUBAGENT_STOP] = {"SubagentStop", "agent_type"},
    [HOOK_PRE_COMPACT] = {"PreCompact", "trigger"},
    [HOOK_POST_COMPACT] = {"PostCompact", NULL},
    [HOOK_SESSION_START] = {"SessionStart", "source"},
    [HOOK_SESSION_END] = {"SessionEnd", "reason"},
    [HOOK_NOTIFICATION] = {"Notification", "notification_type"},
    [HOOK_FINAL_STOP] = {"FinalStop", NULL},
    [HOOK_PERMISSION_REQUEST] = {"PermissionRequest", "tool_name"},
    [HOOK_PERMISSION_DENIED] = {"PermissionDenied", "tool_name"},
    [HOOK_WORKTREE_CREATE] = {"WorktreeCreate", NULL},
    [HOOK_WORKTREE_REMOVE] = {"WorktreeRemove", NULL},
    [HOOK_CONFIG_CHANGE] = {"ConfigChange", NULL},
    [HOOK_INSTRUCTIONS_LOADED] = {"InstructionsLoaded", NULL},
    [HOOK_SETUP] = {"Setup", NULL},
    [HOOK_ELICITATION] = {"Elicitation", "mcp_server_name"},
    [HOOK_ELICITATION_RESULT] = {"ElicitationResult", "mcp_server_name"},
    [HOOK_FILE_CHANGED] = {"FileChanged", NULL},
    [HOOK_TASK_CREATED] = {"TaskCreated", NULL},
    [HOOK_TASK_COMPLETED] = {"TaskCompleted", NULL},
    [HOOK_CWD_CHANGED] = {"CwdChanged", NULL},
    [HOOK_TEAMMATE_IDLE] = {"TeammateIdle", NULL},
    [HOOK_INPUT_GUARDRAIL] = {"InputGuardrail", NULL},
    [HOOK_OUTPUT_GUARDRAIL] = {"OutputGuardrail", NULL},
};

const char *hook_event_name(hook_event ev)
{
    if ((unsigned)ev >= HOOK_EVENT__COUNT)
        return "?";
    return rows[ev].name;
}

int hook_event_parse(const char *name, hook_event *out)
{
    if (!name)
        return -1;
    for (int i = 0; i < HOOK_EVENT__COUNT; i++) {
        if (strcmp(rows[i].name, name) == 0) {
            *out = (hook_event)i;
            return 0;
        }
    }
    return -1;
}

const char *hook_event_match_field(hook_event ev)
{
    if ((unsigned)ev >= HOOK_EVENT__COUNT)
        return NULL;
    return rows[ev].match_field;
}

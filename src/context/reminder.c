/* reminder.c — roles, gates and the reminder block (see reminder.h). */
#include "context/reminder.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

/* The first case-insensitive occurrence of needle in p, or NULL: a model
 * reads <SYSTEM-REMINDER> as the tag too. */
static const char *find_ci(const char *p, const char *needle)
{
    size_t n = strlen(needle);
    for (; *p; p++)
        if (!strncasecmp(p, needle, n))
            return p;
    return NULL;
}

static const struct {
    const char *name;
    reminder_gate gate;
} ROLES[REMINDER_ROLE__COUNT] = {
    [REMINDER_HOOK] = {"hook", REMINDER_ONCE},
    /* Standing context a SessionStart hook gave the session: the summary
     * would lose it (seed 001 §10.2: rules survive compaction). */
    [REMINDER_SESSION_HOOK] = {"session-hook", REMINDER_AFTER_COMPACTION},
    [REMINDER_MEMORY] = {"memory", REMINDER_AFTER_COMPACTION},
    [REMINDER_HEARTBEAT] = {"heartbeat", REMINDER_ONCE},
    [REMINDER_MESSAGE_QUEUE] = {"message-queue", REMINDER_ONCE},
    [REMINDER_MCP] = {"mcp", REMINDER_ONCE},
    [REMINDER_BUDGET] = {"budget", REMINDER_ONCE},
    [REMINDER_ERROR_RECOVERY] = {"error-recovery", REMINDER_ONCE},
    [REMINDER_PLAN] = {"plan", REMINDER_AFTER_COMPACTION},
    [REMINDER_SKILL] = {"skill", REMINDER_AFTER_COMPACTION},
    /* Made anew by the recovery chain at each compaction, from disk. */
    [REMINDER_FILE] = {"file", REMINDER_ONCE},
    [REMINDER_INTERCEPTOR] = {"interceptor", REMINDER_ONCE},
    [REMINDER_NOTE] = {"reminder", REMINDER_ONCE},
};

const char *reminder_role_name(reminder_role role)
{
    return (unsigned)role < REMINDER_ROLE__COUNT ? ROLES[role].name : NULL;
}

reminder_gate reminder_role_gate(reminder_role role)
{
    return (unsigned)role < REMINDER_ROLE__COUNT ? ROLES[role].gate : REMINDER_ONCE;
}

int reminder_role_parse(const char *name, size_t len)
{
    for (int r = 0; r < REMINDER_ROLE__COUNT; r++)
        if (strlen(ROLES[r].name) == len && !strncmp(ROLES[r].name, name, len))
            return r;
    return -1;
}

void reminder_render(loom_str *out, reminder_role role, const char *text)
{
    const char *name = reminder_role_name(role);
    str_printf(out, "<system-reminder data-role=\"%s\">\n", name ? name : "reminder");
    const char *p = text ? text : "";
    for (;;) {
        const char *open = find_ci(p, "<system-reminder");
        const char *close = find_ci(p, "</system-reminder");
        const char *at = open && (!close || open < close) ? open : close;
        if (!at) {
            str_puts(out, p);
            break;
        }
        str_append(out, p, (size_t)(at - p));
        if (at == close) {
            str_puts(out, "&lt;/system-reminder");
            p = at + strlen("</system-reminder");
        } else {
            str_puts(out, "&lt;system-reminder");
            p = at + strlen("<system-reminder");
        }
    }
    str_puts(out, "\n</system-reminder>\n");
}

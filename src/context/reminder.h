/* reminder.h — the data-role taxonomy of injected content (seed 001 §10.1,
 * §10.2) and the re-injection gates.
 *
 * Everything Loom adds to a request that nobody wrote into the session —
 * hook output, notes from the spawn tree or the tool set, the files the
 * recovery chain re-reads, a budget nudge — goes to the dynamic tail as a
 * <system-reminder data-role="ROLE"> block, ROLE one of the enum below.
 * The role tells the model (and a reader of the request log) where the
 * text came from; the block's inner text is neutralized, so a closing tag
 * inside it (a file's, a hook's) cannot end the block early. The one
 * block that is not a reminder is C_working's <working-memory>, whose tag
 * is its role ("working").
 *
 * The gate of a role says whether a reminder is said once (the tail is
 * never recorded: it reaches exactly one request) or repeated after each
 * compaction, because it is standing context the summary would lose
 * (docs/context.md has the table, checked against reminder_gate_table by
 * unit.test_context_reminder). Pure functions; any thread. */
#ifndef LOOM_CONTEXT_REMINDER_H
#define LOOM_CONTEXT_REMINDER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"

/* Append only: the names are what the model and the logs see. */
typedef enum reminder_role {
    REMINDER_HOOK = 0,        /* "hook": a hook's additionalContext, a Stop hook's reason */
    REMINDER_SESSION_HOOK,    /* "session-hook": a SessionStart hook's additionalContext */
    REMINDER_MEMORY,          /* "memory": recalled memory */
    REMINDER_HEARTBEAT,       /* "heartbeat": a heartbeat note outside C_working */
    REMINDER_MESSAGE_QUEUE,   /* "message-queue": the spawn tree's notes (a message came) */
    REMINDER_MCP,             /* "mcp": an MCP server's note (a resource changed) */
    REMINDER_BUDGET,          /* "budget": the token budget nears its end */
    REMINDER_ERROR_RECOVERY,  /* "error-recovery": a repeated call, a retry hint */
    REMINDER_PLAN,            /* "plan": the plan, outside C_working */
    REMINDER_SKILL,           /* "skill": a skill's text */
    REMINDER_FILE,            /* "file": files re-read from disk after a compaction */
    REMINDER_INTERCEPTOR,     /* "interceptor": text a model-call interceptor added */
    REMINDER_NOTE,            /* "reminder": anything else */
    REMINDER_ROLE__COUNT
} reminder_role;

typedef enum reminder_gate {
    REMINDER_ONCE = 0,              /* the next request only */
    REMINDER_AFTER_COMPACTION = 1,  /* the next request, and again after each compaction */
} reminder_gate;

/* The role's wire name ("hook"); NULL past the end. */
const char *reminder_role_name(reminder_role role);
reminder_gate reminder_role_gate(reminder_role role);
/* The role named by name[0..len), or -1. */
int reminder_role_parse(const char *name, size_t len);

/* Appends <system-reminder data-role="ROLE">\ntext\n</system-reminder>\n,
 * with every "<system-reminder" and "</system-reminder" inside text (any
 * case) written "&lt;system-reminder" / "&lt;/system-reminder": no tag of
 * the text's can open or close a block. */
void reminder_render(loom_str *out, reminder_role role, const char *text);

#endif

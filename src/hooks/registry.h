/* registry.h — the hooks a session has: loaded from settings in Claude
 * Code's shape, plus built-ins registered by C function pointer.
 *
 * Settings shape (docs/hooks.md has the full contract):
 *   {"PreToolUse": [{"matcher": "Bash|Edit",
 *                    "hooks": [{"type": "command", "command": "…",
 *                               "timeout": 60}]}], …}
 * with Loom's additions on each hook (and "if" also on a group):
 *   "if"       a condition on the payload (match.h), "priority" (a number or
 *   a name below), "once": true (fires once per registry), "name" (the
 *   dedupe key and the label in notices and the audit log).
 *
 * Every loaded hook carries its source and a trusted flag. Untrusted hooks
 * are kept, so the user can be told exactly what did not run, and skipped at
 * run time with a notice (seed 001 §6.2: the frontmatter trust gate).
 *
 * Thread-safety: all functions may be called from any thread. Loading,
 * removing and running take the registry's mutex only to read or change the
 * list and the once-state, never while a hook runs. Hook definitions live
 * until hook_registry_free, so the registry must outlive every hooks_run.
 */
#ifndef LOOM_HOOKS_REGISTRY_H
#define LOOM_HOOKS_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "hooks/events.h"

typedef struct hook_registry hook_registry;

/* Where a hook came from; shown in notices and the audit log. */
typedef enum hook_source {
    HOOK_SRC_BUILTIN = 0,
    HOOK_SRC_USER,     /* ~/.loom/settings.json */
    HOOK_SRC_PROJECT,  /* .loom/settings.json */
    HOOK_SRC_LOCAL,    /* .loom/settings.local.json */
    HOOK_SRC_PLUGIN,
    HOOK_SRC_SKILL,    /* SKILL.md frontmatter */
    HOOK_SRC_AGENT,    /* agent definition frontmatter */
    HOOK_SRC__COUNT
} hook_source;

typedef enum hook_type {
    HOOK_TYPE_COMMAND = 0,
    HOOK_TYPE_HTTP,
    HOOK_TYPE_PROMPT,  /* run by the integrator's hook_llm_fn (run.h) */
    HOOK_TYPE_AGENT,   /* likewise */
    HOOK_TYPE_BUILTIN, /* a C function */
    HOOK_TYPE__COUNT
} hook_type;

/* seed 001 §6.2: the priority enum. Lower runs first; a tie keeps the
 * order hooks were registered in. Settings may give the number or the name
 * ("high", "StructuredOutput", … case-insensitive). */
enum {
    HOOK_PRIORITY_HIGHEST = 0,
    HOOK_PRIORITY_HIGH = 100,
    HOOK_PRIORITY_STRUCTURED_OUTPUT = 200,
    HOOK_PRIORITY_NORMAL = 500,
    HOOK_PRIORITY_LOW = 800,
    HOOK_PRIORITY_LOWEST = 1000,
};

/* A built-in hook. payload is the event's payload (borrowed). To answer,
 * set *reply to a new JSON object in the shape a command hook prints on
 * stdout (decision, hookSpecificOutput, …; ownership passes to the caller);
 * leaving it NULL means "no opinion". Return 0, or -code with err set for a
 * non-blocking error shown to the user. Called without any lock held, maybe
 * from several threads at once. */
typedef int (*hook_builtin_fn)(void *ctx, hook_event ev, const json_t *payload, json_t **reply,
                               loom_error *err);

/* An empty registry; free with hook_registry_free. */
hook_registry *hook_registry_new(void);
void hook_registry_free(hook_registry *reg);

/* Loads a settings `hooks` object (borrowed; NULL or {} loads nothing).
 * All-or-nothing: on a malformed entry nothing is added and err names the
 * entry, e.g. `hooks.PreToolUse[0].hooks[1]: "command" must be a non-empty
 * string` (LOOM_ERR_CONFIG). An event name Loom does not know is not an
 * error (settings written for a newer Claude Code must still load): it is
 * skipped and recorded as a warning (hook_registry_warning). Returns 0. */
int hook_registry_load(hook_registry *reg, const json_t *hooks, hook_source src, bool trusted,
                       loom_error *err);

/* Marks every hook loaded from src as removed (before reloading a changed
 * settings file, or when a sub-agent's scope ends). Their memory is kept
 * until hook_registry_free, so runs already under way are unaffected. */
void hook_registry_remove_source(hook_registry *reg, hook_source src);

/* Registers fn for ev. Built-ins run before every settings hook, among
 * themselves in priority order; they are never deduplicated, never once-only
 * and always trusted. matcher as in settings (NULL = all). Returns 0, or
 * -LOOM_ERR_CONFIG for a matcher that is not a valid regular expression or a
 * bad event, -LOOM_ERR_INVALID_REQUEST for a NULL fn. */
int hook_registry_add_builtin(hook_registry *reg, hook_event ev, const char *matcher, int priority,
                              hook_builtin_fn fn, void *ctx);

/* Hooks currently registered for ev (built-ins and settings, trusted or
 * not, not removed). */
size_t hook_registry_count(hook_registry *reg, hook_event ev);

/* Load warnings (unknown event names), oldest first; borrowed strings valid
 * until hook_registry_free. */
size_t hook_registry_warning_count(hook_registry *reg);
const char *hook_registry_warning(hook_registry *reg, size_t i);

const char *hook_source_name(hook_source src);   /* "user", "project", … */
const char *hook_type_name(hook_type type);      /* "command", "http", … */
/* "Highest"… by name, case-insensitive; -1 when unknown. */
int hook_priority_parse(const char *name);

#endif

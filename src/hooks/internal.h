/* internal.h — what registry.c and run.c share inside src/hooks: the shape
 * of one loaded hook and the "plan" (steps 4-7 of seed 001 §6.2) that turns
 * the registry plus one payload into the list of hooks to execute.
 * Not for use outside src/hooks. */
#ifndef LOOM_HOOKS_INTERNAL_H
#define LOOM_HOOKS_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "hooks/match.h"
#include "hooks/registry.h"

/* Immutable after registration except `removed` and `once_fired`, which are
 * only touched under the registry mutex. */
typedef struct hook_def {
    hook_event event;
    hook_type type;
    hook_source source;
    bool trusted;
    bool once;
    bool removed;
    bool once_fired;
    int priority;
    unsigned long seq;       /* registration order: the tie-break */
    char *name;              /* settings "name", NULL when absent */
    char *where;             /* "hooks.PreToolUse[0].hooks[1]" / "builtin PreToolUse#0" */
    hook_matcher *matcher;
    hook_cond *group_cond;   /* the group's "if", NULL when absent */
    hook_cond *cond;         /* the hook's "if" */
    char *command;           /* HOOK_TYPE_COMMAND */
    char *url;               /* HOOK_TYPE_HTTP */
    char *prompt;            /* HOOK_TYPE_PROMPT / HOOK_TYPE_AGENT */
    char *model;
    long timeout_ms;         /* 0: the run's default */
    json_t *config;          /* the hook's settings object, a private copy */
    hook_builtin_fn fn;      /* HOOK_TYPE_BUILTIN */
    void *ctx;
} hook_def;

typedef struct hook_plan {
    const hook_def **run;      /* execution order: built-ins, then by priority */
    size_t n_run;
    const hook_def **skipped;  /* matched but not run: untrusted, or no runner */
    size_t n_skipped;
} hook_plan;

/* Selects the hooks for one event (built-ins; matcher; `if`; dedupe;
 * trust; once), claiming once-only hooks so no other thread runs them too.
 * runnable[type] says whether that type can run at all in this call. */
void hook_registry_plan(hook_registry *reg, hook_event ev, const json_t *payload,
                        const char *project_dir, const bool runnable[HOOK_TYPE__COUNT],
                        hook_plan *plan);
void hook_plan_free(hook_plan *plan);

/* What a hook is, for notices and the audit log: its name when it has one,
 * else the command / url / prompt, shortened. Caller frees. */
char *hook_def_label(const hook_def *d);

#endif

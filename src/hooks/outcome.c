/* outcome.c — one hook_outcome from two firings of the same event (run.h,
 * hook_outcome_merge): a sub-agent fires the session's hooks and then its
 * agent file's own, and the caller must see one answer merged by the rules
 * hooks_run uses within one firing.
 *
 * Owns nothing beyond the call; both outcomes belong to the caller, who
 * must not use either from another thread meanwhile. */
#include "hooks/run.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"

/* *dst becomes "dst\nsrc"; src is taken. */
static void join_taken(char **dst, char **src)
{
    if (!*src)
        return;
    if (!*dst || !**dst) {
        free(*dst);
        *dst = *src;
    } else if (**src) {
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "%s\n%s", *dst, *src);
        free(*dst);
        free(*src);
        *dst = str_steal(&s);
    } else {
        free(*src);
    }
    *src = NULL;
}

static void add_notice(hook_outcome *o, hook_notice_kind kind, char *text)
{
    o->notices = xrealloc(o->notices, (o->n_notices + 1) * sizeof *o->notices);
    o->notices[o->n_notices].kind = kind;
    o->notices[o->n_notices].text = text;
    o->n_notices++;
}

void hook_outcome_merge(hook_outcome *into, hook_outcome *from)
{
    if (!into || !from || into == from)
        return;
    into->ran += from->ran;
    /* deny > ask > allow, as between two hooks of one firing. */
    if (from->permission > into->permission) {
        into->permission = from->permission;
        free(into->permission_reason);
        into->permission_reason = from->permission_reason;
        from->permission_reason = NULL;
    } else if (from->permission == into->permission) {
        join_taken(&into->permission_reason, &from->permission_reason);
    }
    into->blocked = into->blocked || from->blocked;
    join_taken(&into->block_reason, &from->block_reason);
    if (from->updated_input) {
        if (into->updated_input && !json_equal(into->updated_input, from->updated_input))
            add_notice(into, HOOK_NOTICE_WARNING,
                       xstrdup("the session's hooks and the agent's own both changed the input; "
                               "using the agent's (the later one)"));
        json_decref(into->updated_input);
        into->updated_input = from->updated_input;
        from->updated_input = NULL;
    }
    join_taken(&into->additional_context, &from->additional_context);
    into->stop = into->stop || from->stop;
    join_taken(&into->stop_reason, &from->stop_reason);
    into->suppress_output = into->suppress_output || from->suppress_output;
    into->cancelled = into->cancelled || from->cancelled;
    if (from->elicitation) {
        json_decref(into->elicitation);
        into->elicitation = from->elicitation;
        from->elicitation = NULL;
    }
    for (size_t i = 0; i < from->n_notices; i++)
        add_notice(into, from->notices[i].kind, from->notices[i].text);
    free(from->notices);
    if (from->n_results) {
        into->results = xrealloc(into->results,
                                 (into->n_results + from->n_results) * sizeof *into->results);
        memcpy(into->results + into->n_results, from->results,
               from->n_results * sizeof *from->results);
        into->n_results += from->n_results;
    }
    free(from->results);
    hook_event ev = from->event;
    memset(from, 0, sizeof *from);
    from->event = ev;
}

/* loop_hooks.c — the run's lifecycle hooks (docs/hooks.md): SessionStart,
 * InstructionsLoaded and UserPromptSubmit at L1, Stop / StopFailure when a
 * reply ends the run, the final Stop at run end, and loop_fire, through
 * which every lifecycle hook the run fires (the context port's PreCompact
 * and PostCompact too) reports its output as events. Run thread only. */
#include "runtime/loop_internal.h"

#include <stdlib.h>

#include "context/memory.h"
#include "governance/governance.h"

hook_outcome loop_fire(loop_io *io, hook_event ev, json_t *extra)
{
    hook_outcome o = governance_fire(io->gov, ev, extra, io->cancel);
    for (size_t i = 0; i < o.n_results; i++)
        if (o.results[i].output) /* NULL when the hook answered suppressOutput */
            loop_emit(io, LOOM_EV_HOOK_OUTPUT, LOOM_VIS_USER, NULL,
                      event_hook_output(hook_event_name(ev), o.results[i].label,
                                        o.results[i].output));
    for (size_t i = 0; i < o.n_notices; i++)
        if (o.notices[i].kind != HOOK_NOTICE_OUTPUT)
            loop_emit(io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
                      event_warning("hook", o.notices[i].text));
    return o;
}

bool loop_has_hooks(loop_io *io, hook_event ev)
{
    return io->gov && governance_hook_count(io->gov, ev) > 0;
}

/* InstructionsLoaded: one event per memory file the system prompt holds. */
static void fire_instructions_loaded(const loop_params *p, loop_io *io)
{
    if (!p->memory || !loop_has_hooks(io, HOOK_INSTRUCTIONS_LOADED))
        return;
    for (size_t i = 0; i < p->memory->count; i++) {
        const memory_file *f = &p->memory->files[i];
        hook_outcome o = loop_fire(io, HOOK_INSTRUCTIONS_LOADED,
                              json_pack("{s:s,s:s}", "file_path", f->path, "memory_type",
                                        memory_kind_name(f->kind)));
        hook_outcome_free(&o);
    }
}

/* docs/hooks.md: the run ends here, its stopReason for the user (the error
 * message), not the model. */
void loop_finish_hook_stopped(loop_result *out, const char *event, const char *why)
{
    out->state = LOOM_RUN_BLOCKED_BY_POLICY;
    out->stop_reason = LOOM_STOP_HOOK_STOPPED;
    loom_error_set(&out->err, LOOM_ERR_RUN_BLOCKED_BY_POLICY, "a %s hook stopped the run: %s",
                   event, why && *why ? why : "no reason given");
}

bool loop_start_hooks(loop_state *st, const char *goal, bool fresh)
{
    const loop_params *p = &st->p;
    loop_io *io = st->io;
    loop_result *out = st->out;
    if (!io->gov)
        return true;
    if (!io->gov->session_started) {
        io->gov->session_started = true;
        if (loop_has_hooks(io, HOOK_SESSION_START)) {
            hook_outcome o = loop_fire(io, HOOK_SESSION_START,
                                  json_pack("{s:s}", "source", fresh ? "startup" : "resume"));
            if (o.additional_context && *o.additional_context)
                loop_queue_reminder_role(st, REMINDER_SESSION_HOOK, o.additional_context);
            bool stop = o.stop;
            if (stop)
                loop_finish_hook_stopped(out, "SessionStart", o.stop_reason);
            hook_outcome_free(&o);
            if (stop)
                return false;
        }
        fire_instructions_loaded(p, io);
    }
    if (!loop_has_hooks(io, HOOK_USER_PROMPT_SUBMIT))
        return true;
    hook_outcome o = loop_fire(io, HOOK_USER_PROMPT_SUBMIT, json_pack("{s:s}", "prompt", goal));
    bool ok = !o.blocked && !o.stop;
    if (o.stop) {
        loop_finish_hook_stopped(out, "UserPromptSubmit", o.stop_reason);
    } else if (!ok) {
        out->state = LOOM_RUN_BLOCKED_BY_POLICY;
        out->stop_reason = LOOM_STOP_PROMPT_BLOCKED;
        loom_error_set(&out->err, LOOM_ERR_RUN_BLOCKED_BY_POLICY,
                       "a UserPromptSubmit hook blocked the prompt: %s",
                       o.block_reason ? o.block_reason : "no reason given");
    } else if (o.additional_context && *o.additional_context) {
        loop_queue_reminder_role(st, REMINDER_HOOK, o.additional_context);
    }
    hook_outcome_free(&o);
    return ok;
}

/* Stop hooks may send the agent back to work (Claude Code's "decision":
 * "block"); a cap keeps a stubborn hook from looping for ever. */
#define LOOP_STOP_HOOK_CONTINUATIONS 3

bool loop_stop_hook_continues(loop_state *st, char **hook_stop)
{
    loop_io *io = st->io;
    if (!loop_has_hooks(io, HOOK_STOP) || st->stop_continuations >= LOOP_STOP_HOOK_CONTINUATIONS)
        return false;
    hook_outcome o = loop_fire(io, HOOK_STOP, json_pack("{s:b}", "stop_hook_active",
                                                   st->stop_continuations > 0));
    /* "continue": false outranks "decision": "block": the agent stops. */
    bool again = o.blocked && !o.stop;
    if (o.stop)
        *hook_stop = xstrdup(o.stop_reason ? o.stop_reason : "");
    bool failed = false;
    for (size_t i = 0; i < o.n_results; i++)
        failed |= o.results[i].status == HOOK_STATUS_ERROR ||
                  o.results[i].status == HOOK_STATUS_TIMEOUT;
    if (failed && loop_has_hooks(io, HOOK_STOP_FAILURE)) {
        hook_outcome f = loop_fire(io, HOOK_STOP_FAILURE, NULL);
        hook_outcome_free(&f);
    }
    if (again) {
        st->stop_continuations++;
        loop_queue_reminder_role(st, REMINDER_HOOK,
                                 o.block_reason ? o.block_reason : "A Stop hook asked you to continue.");
    }
    hook_outcome_free(&o);
    return again;
}

void loop_fire_final_stop(loop_state *st)
{
    if (!loop_has_hooks(st->io, HOOK_FINAL_STOP))
        return;
    hook_outcome o = loop_fire(st->io, HOOK_FINAL_STOP,
                               json_pack("{s:s,s:s}", "state", loom_run_state_name(st->out->state),
                                         "stop_reason",
                                         loom_stop_reason_name(st->out->stop_reason)));
    hook_outcome_free(&o);
}

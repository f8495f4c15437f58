/* loop.c — the agent loop (DESIGN.md §3): L1 run start, L2 the turn loop,
 * L3 the fixed steps before each model call.
 *
 * Write order keeps the session valid at every instant: the user record
 * first, each model reply whole once it has arrived, each tool result after
 * its call, an interruption last. A crash leaves whole records, and the
 * history builder gives any call left without a result an error result. */
#include "runtime/loop.h"

#include "context/control.h"
#include "runtime/loop_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "base/utf8.h"
#include "context/budget.h"
#include "context/memory.h"
#include "context/working.h"
#include "heartbeat/heartbeat.h"
#include "governance/governance.h"
#include "session/history.h"
#include "session/record.h"
#include "governance/pipeline.h"


void loop_emit(loop_io *io, const char *type, event_visibility vis, const char *corr,
               json_t *payload)
{
    if (io->emit)
        io->emit(io->emit_ctx, type, vis, corr, payload);
    else
        json_decref(payload);
}

/* --- model call sink ------------------------------------------------------ */

static void on_text(void *ctx, const char *d, size_t n)
{
    loop_emit(ctx, EV_TOKEN_DELTA, EV_VIS_USER, NULL,
         json_pack("{s:s,s:s%}", "channel", "text", "text", d, n));
}

static void on_thinking(void *ctx, const char *d, size_t n)
{
    loop_emit(ctx, EV_TOKEN_DELTA, EV_VIS_USER, NULL,
         json_pack("{s:s,s:s%}", "channel", "reasoning", "text", d, n));
}

/* Every way a model call starts over tells the surfaces, so a consumer
 * that kept the call's token.delta text drops it (docs/events.md). */
static void stream_restarted(loop_io *io, const char *reason, int attempt, const char *why)
{
    loop_emit(io, EV_STREAM_RESTARTED, EV_VIS_USER, NULL,
              json_pack("{s:s,s:i,s:s}", "reason", reason, "attempt", attempt, "message",
                        why ? why : ""));
}

static void on_retry(void *ctx, int attempt, double delay_s, const loom_error *why)
{
    loop_emit(ctx, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
         json_pack("{s:s,s:s,s:s,s:i,s:f}", "kind", "model_retry", "message", why->message, "code",
                   loom_code_name(why->code), "attempt", attempt, "delay_s", delay_s));
    stream_restarted(ctx, "retry", attempt, why->message);
}

/* --- L3 -------------------------------------------------------------------- */

void loop_queue_reminder(loop_state *st, const char *text)
{
    str_printf(&st->reminders, "<system-reminder>\n%s\n</system-reminder>\n", text);
}

/* --- accounting ----------------------------------------------------------- */

void loop_add_usage(wire_usage *total, const wire_usage *u)
{
    total->input_tokens += u->input_tokens;
    total->output_tokens += u->output_tokens;
    total->cache_read_tokens += u->cache_read_tokens;
    total->cache_creation_tokens += u->cache_creation_tokens;
    total->reasoning_tokens += u->reasoning_tokens;
}

int64_t loop_usage_total(const wire_usage *u)
{
    return u->input_tokens + u->output_tokens + u->cache_read_tokens + u->cache_creation_tokens;
}

/* USD for one reply. Cache writes cost 1.25× and cache reads 0.1× the input
 * price (Anthropic's published multipliers; OpenAI reports no writes). */
static double usage_cost(const loop_params *p, const wire_usage *u)
{
    return ((double)u->input_tokens * p->price_input_per_mtok +
            (double)u->cache_creation_tokens * p->price_input_per_mtok * 1.25 +
            (double)u->cache_read_tokens * p->price_input_per_mtok * 0.1 +
            (double)u->output_tokens * p->price_output_per_mtok) / 1e6;
}

void loop_count_side_usage(const loop_params *p, loop_io *io, loop_state *st, loop_result *out,
                           const char *purpose, const char *corr, const char *tool,
                           const wire_usage *u, unsigned calls)
{
    if (calls == 0)
        return;
    loop_add_usage(&out->usage, u);
    st->tokens_used = loop_usage_total(&out->usage);
    if (out->cost_usd >= 0)
        out->cost_usd += usage_cost(p, u);
    loop_emit(io, "model.usage", EV_VIS_USER, corr,
              json_pack("{s:s,s:s?,s:i,s:o,s:f}", "purpose", purpose, "tool", tool, "calls",
                        (int)calls, "usage", wire_usage_to_json(u), "cost_usd", out->cost_usd));
}

/* Compaction adds its tokens to out->usage itself (context_control.c);
 * what it spent since `before` is priced and reported here, so cost_usd
 * and max_usd see it too. */
static void price_compaction(const loop_params *p, loop_io *io, loop_result *out,
                             const wire_usage *before)
{
    wire_usage d = {
        .input_tokens = out->usage.input_tokens - before->input_tokens,
        .output_tokens = out->usage.output_tokens - before->output_tokens,
        .cache_read_tokens = out->usage.cache_read_tokens - before->cache_read_tokens,
        .cache_creation_tokens = out->usage.cache_creation_tokens - before->cache_creation_tokens,
        .reasoning_tokens = out->usage.reasoning_tokens - before->reasoning_tokens,
    };
    if (loop_usage_total(&d) <= 0)
        return;
    if (out->cost_usd >= 0)
        out->cost_usd += usage_cost(p, &d);
    loop_emit(io, "model.usage", EV_VIS_USER, NULL,
              json_pack("{s:s,s:o,s:f}", "purpose", "compaction", "usage", wire_usage_to_json(&d),
                        "cost_usd", out->cost_usd));
}

/* --- tools ---------------------------------------------------------------- */

typedef struct observer_ctx {
    loop_io *io;
} observer_ctx;

static void obs_start(void *ctx, size_t index, const tool_call *call)
{
    (void)index;
    observer_ctx *o = ctx;
    loop_emit(o->io, EV_TOOL_STARTED, EV_VIS_USER, call->id,
         json_pack("{s:s,s:s,s:O}", "call_id", call->id, "tool", call->name, "input",
                   call->input));
}

static void obs_finish(void *ctx, size_t index, const tool_call *call, const tool_outcome *out)
{
    (void)index;
    observer_ctx *o = ctx;
    const tool_result *r = &out->result;
    /* The event carries a preview; the whole result is in the session. */
    size_t preview = r->text.len < 2000 ? r->text.len : 2000;
    while (preview < r->text.len && preview > 0 && ((unsigned char)r->text.ptr[preview] & 0xC0) == 0x80)
        preview--;
    /* Tool output need not be UTF-8 (a binary file, a terminal escape cut in
     * half); json_pack would refuse it and the event would lose its payload,
     * so bad bytes become U+FFFD here as they do in the session record. */
    size_t clean_len;
    char *clean = utf8_sanitize(str_cstr(&r->text), preview, &clean_len);
    json_t *payload = json_pack(
        "{s:s,s:s,s:b,s:I,s:I,s:I,s:s%,s:I}", "call_id", call->id, "tool", call->name,
        "is_error", r->is_error, "started_us", (json_int_t)out->started_us, "finished_us",
        (json_int_t)out->finished_us, "duration_ms",
        (json_int_t)((out->finished_us - out->started_us) / 1000), "output", clean, clean_len,
        "output_chars", (json_int_t)r->text.len);
    free(clean);
    assert(payload);
    if (out->failed_step)
        json_object_set_new(payload, "failed_step", json_string(out->failed_step));
    if (r->raw)
        json_object_set(payload, "raw", r->raw);
    loop_emit(o->io, r->is_error ? EV_TOOL_FAILED : EV_TOOL_FINISHED, EV_VIS_USER, call->id, payload);
}

/* Warns the model when it repeats the same call with the same input. */
static void detect_repeats(const loop_params *p, loop_io *io, loop_state *st,
                           const tool_call *calls, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *input = json_dumps(calls[i].input, JSON_COMPACT | JSON_SORT_KEYS);
        loom_str sig = LOOM_STR_INIT;
        str_printf(&sig, "%s %s", calls[i].name, input ? input : "");
        free(input);
        if (st->last_call_sig && strcmp(st->last_call_sig, sig.ptr) == 0) {
            st->repeat_count++;
        } else {
            st->repeat_count = 1;
            free(st->last_call_sig);
            st->last_call_sig = xstrdup(sig.ptr);
        }
        str_free(&sig);
        if (st->repeat_count == p->repeat_threshold) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "You have called %s with the same input %d times in a row. Repeating it "
                     "will give the same result: stop, look at what the results told you, and "
                     "try a different approach or explain what is blocking you.",
                     calls[i].name, st->repeat_count);
            loop_queue_reminder(st, msg);
            loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, calls[i].id,
                 json_pack("{s:s,s:s,s:s,s:i}", "kind", "tool_loop", "message", msg, "tool",
                           calls[i].name, "repeats", st->repeat_count));
        }
    }
}

/* Runs the reply's tool calls and records each result in call order. */
static int run_tools(const loop_params *p, loop_io *io, loop_state *st, const wire_message *reply,
                     const char *message_id, loop_result *out, char **hook_stop,
                     const char **stop_event, loom_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < reply->n_blocks; i++)
        n += reply->blocks[i].kind == WIRE_BLOCK_TOOL_USE;
    if (n == 0)
        return 0;
    tool_call *calls = xcalloc(n, sizeof *calls);
    tool_outcome *outs = xcalloc(n, sizeof *outs);
    size_t k = 0;
    for (size_t i = 0; i < reply->n_blocks; i++) {
        const wire_block *b = &reply->blocks[i];
        if (b->kind == WIRE_BLOCK_TOOL_USE)
            calls[k++] = (tool_call){b->id, b->name, b->input};
    }
    detect_repeats(p, io, st, calls, n);
    io->tools->message_id = message_id;
    observer_ctx octx = {io};
    pipeline_observer obs = {&octx, obs_start, obs_finish};
    /* The Act: the heartbeat watches faster meanwhile and may stop it. */
    if (io->act_running)
        atomic_store(io->act_running, true);
    heartbeat_set_act(io->heartbeat, true);
    tool_batch_run(p->tools, calls, n, io->tools, &obs, outs);
    heartbeat_set_act(io->heartbeat, false);
    if (io->act_running)
        atomic_store(io->act_running, false);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        /* The permission classifier's model calls are the run's tokens too. */
        loop_count_side_usage(p, io, st, out, "permission_classifier", calls[i].id,
                              calls[i].name, &outs[i].model_usage, outs[i].model_calls);
        tool_result *r = &outs[i].result;
        if (io->working)
            working_note_step(io->working, r->is_error);
        if (outs[i].context)
            loop_queue_reminder(st, outs[i].context);
        if (outs[i].stop && !*hook_stop) {
            *hook_stop = xstrdup(outs[i].stop_reason ? outs[i].stop_reason : "");
            *stop_event = outs[i].stop_event;
        }
        json_t *rec = record_tool_result(calls[i].id, str_cstr(&r->text), r->is_error);
        if (r->raw)
            json_object_set_new(record_provider_data(rec, true), "toolResult",
                                json_pack("{s:O}", "rawResponse", r->raw));
        if (rc == 0 && transcript_append_new(io->t, rec, err) != 0)
            rc = -1;
        else if (rc != 0)
            json_decref(rec);
        if (rc == 0 && r->image_data) {
            /* Images travel as a user message right after the results. */
            json_t *img = record_user_text("Image from the tool result above:");
            record_add_image(img, r->image_media_type, r->image_data);
            record_set_skip_run(img, true);
            if (transcript_append_new(io->t, img, err) != 0)
                rc = -1;
        }
        tool_outcome_free(&outs[i]);
    }
    free(calls);
    free(outs);
    return rc;
}

/* --- lifecycle hooks ------------------------------------------------------ */

/* Fires ev with the common payload plus extra (stolen; may be NULL); hook
 * notices become warnings. The caller frees the outcome. */
hook_outcome loop_fire(loop_io *io, hook_event ev, json_t *extra)
{
    hook_outcome o = governance_fire(io->gov, ev, extra, io->cancel);
    for (size_t i = 0; i < o.n_results; i++)
        if (o.results[i].output) /* NULL when the hook answered suppressOutput */
            loop_emit(io, "hook.output", EV_VIS_USER, NULL,
                      json_pack("{s:s,s:s,s:s}", "event", hook_event_name(ev), "hook",
                                o.results[i].label ? o.results[i].label : "", "output",
                                o.results[i].output));
    for (size_t i = 0; i < o.n_notices; i++)
        if (o.notices[i].kind != HOOK_NOTICE_OUTPUT)
            loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                 json_pack("{s:s,s:s}", "kind", "hook", "message", o.notices[i].text));
    return o;
}

bool loop_has_hooks(loop_io *io, hook_event ev)
{
    return io->gov && hook_registry_count(io->gov->hooks, ev) > 0;
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

/* A hook answered "continue": false (docs/hooks.md): the run ends here,
 * its stopReason for the user (the error message), not the model. */
static void finish_hook_stopped(loop_result *out, const char *event, const char *why)
{
    out->state = RUN_BLOCKED_BY_POLICY;
    out->stop_reason = "hook_stopped";
    loom_error_set(&out->err, LOOM_ERR_RUN_BLOCKED_BY_POLICY, "a %s hook stopped the run: %s",
                   event, why && *why ? why : "no reason given");
}

/* L1: SessionStart (once per session) and UserPromptSubmit. Returns false
 * when a hook blocked the prompt; its reason is in out->err. */
static bool run_start_hooks(const loop_params *p, loop_io *io, loop_state *st, const char *goal,
                            bool fresh, loop_result *out)
{
    if (!io->gov)
        return true;
    if (!io->gov->session_started) {
        io->gov->session_started = true;
        if (loop_has_hooks(io, HOOK_SESSION_START)) {
            hook_outcome o = loop_fire(io, HOOK_SESSION_START,
                                  json_pack("{s:s}", "source", fresh ? "startup" : "resume"));
            if (o.additional_context && *o.additional_context)
                loop_queue_reminder(st, o.additional_context);
            bool stop = o.stop;
            if (stop)
                finish_hook_stopped(out, "SessionStart", o.stop_reason);
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
        finish_hook_stopped(out, "UserPromptSubmit", o.stop_reason);
    } else if (!ok) {
        out->state = RUN_BLOCKED_BY_POLICY;
        out->stop_reason = "prompt_blocked";
        loom_error_set(&out->err, LOOM_ERR_RUN_BLOCKED_BY_POLICY,
                       "a UserPromptSubmit hook blocked the prompt: %s",
                       o.block_reason ? o.block_reason : "no reason given");
    } else if (o.additional_context && *o.additional_context) {
        loop_queue_reminder(st, o.additional_context);
    }
    hook_outcome_free(&o);
    return ok;
}

/* Stop hooks may send the agent back to work (Claude Code's "decision":
 * "block"); a cap keeps a stubborn hook from looping for ever. */
#define LOOP_STOP_HOOK_CONTINUATIONS 3

static bool stop_hook_continues(loop_io *io, loop_state *st, char **hook_stop)
{
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
        loop_queue_reminder(st, o.block_reason ? o.block_reason : "A Stop hook asked you to continue.");
    }
    hook_outcome_free(&o);
    return again;
}

/* --- L2 ------------------------------------------------------------------- */

static bool transient(const loom_error *e)
{
    return e->code == LOOM_ERR_MODEL_OVERLOADED || e->code == LOOM_ERR_MODEL_RATE_LIMITED ||
           e->code == LOOM_ERR_MODEL_UNAVAILABLE || e->code == LOOM_ERR_MODEL_TIMEOUT;
}

static void finish_interrupted(loop_io *io, loop_result *out)
{
    json_t *ev = io->stop_event ? atomic_load(io->stop_event) : NULL;
    if (ev) {
        /* An external SIGINT/SIGTERM the heartbeat turned into an event: the
         * run stops where it is and can be resumed; the event says why. */
        char note[300];
        snprintf(note, sizeof note, "Interrupted by an external signal (%s)",
                 json_get_str(ev, "summary", "signal"));
        json_t *rec = record_user_text(note);
        record_set_skip_run(rec, true);
        loom_error ignore;
        transcript_append_new(io->t, rec, &ignore);
        out->state = RUN_FAILED;
        out->stop_reason = "external_signal";
        out->interrupt = json_incref(ev);
        loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                       "stopped by %s (event %s, %s urgency); resume the session to go on",
                       json_get_str(ev, "summary", "an external signal"),
                       json_get_str(ev, "event_id", "?"), json_get_str(ev, "urgency", "?"));
        return;
    }
    /* seed 001 §3.5: the interruption is recorded but never drives a run. */
    json_t *rec = record_user_text("Interrupted by user");
    record_set_skip_run(rec, true);
    loom_error ignore;
    transcript_append_new(io->t, rec, &ignore);
    out->state = RUN_CANCELLED;
    out->stop_reason = "cancelled";
    loom_error_set(&out->err, LOOM_ERR_RUN_CANCELLED, "interrupted by user");
}

/* The provider refused req as too long: learn the window from the refusal
 * (a server whose limit Loom was never told), compact — or renew when
 * compaction cannot run — and rebuild req. 0 when req is ready to be sent
 * again; -1 with err left as the refusal otherwise. */
static int reactive_compact(const loop_params *p, provider_config *cfg, loop_io *io,
                            loop_state *st, wire_request *req, int64_t *est, loop_result *out,
                            loom_error *err)
{
    int64_t sent = pressure_tokens(&st->pr, *est, NULL);
    int64_t learned = context_window_from_refusal(err->message);
    if (learned <= 0 || learned >= sent)
        learned = sent * 3 / 4; /* told nothing usable: assume a quarter less fits */
    if (cfg->context_window <= 0 || learned < cfg->context_window) {
        cfg->context_window = learned;
        st->pr.window = learned;
        if (cfg->max_output_tokens > learned / 4)
            cfg->max_output_tokens = (int)(learned / 4);
    }
    loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
              json_pack("{s:s,s:s,s:I}", "kind", "prompt_too_long", "message", err->message,
                        "context_window", (json_int_t)cfg->context_window));
    loom_error cerr;
    loom_error_clear(&cerr);
    int rc = context_compact(p, cfg, io, st, "reactive", NULL, out, &cerr);
    if (rc <= 0 && cerr.code != LOOM_ERR_RUN_CANCELLED)
        rc = context_renew(p, cfg, io, st, "reactive", &cerr) == 0 ? 1 : -1;
    if (rc <= 0)
        return -1;
    wire_request_free(req);
    loom_error rerr;
    if (context_build_request(p, cfg, io, st, req, est, &rerr) != 0) {
        *err = rerr;
        return -1;
    }
    return 0;
}

void loop_run(const loop_params *p, loop_io *io, const char *goal, loop_result *out)
{
    memset(out, 0, sizeof *out);
    loom_error_clear(&out->err);
    out->cost_usd = p->price_input_per_mtok > 0 || p->price_output_per_mtok > 0 ? 0 : -1;
    loop_state st = {0};
    provider_config cfg = *p->provider; /* shallow: only .model is swapped, never freed here */
    int max_turns = p->max_turns > 0 ? p->max_turns : LOOP_DEFAULT_MAX_TURNS;

    /* L1: the goal enters the session before anything can fail. */
    bool fresh = transcript_leaf(io->t) == NULL;
    /* A "+500k" in the prompt sets the token budget (seed 000); where the
     * configuration set one too, the smaller binds — a repository's
     * settings may add a cap but never raise the one the user typed. */
    int64_t budget = p->max_tokens_total > 0 ? p->max_tokens_total : 0;
    int64_t typed = budget_parse_prompt(goal);
    if (typed > 0 && (budget <= 0 || typed < budget))
        budget = typed;
    loop_params params = *p;
    params.max_tokens_total = budget;
    p = &params;
    ladder_edits_init(&st.edits);
    ladder_edits_load(&st.edits, io->t);
    if (io->pressure)
        st.pr = *io->pressure;
    st.pr.window = cfg.context_window;
    if (io->working)
        working_set_goal(io->working, goal);
    if (transcript_append_new(io->t, record_user_text(goal), &out->err) != 0 ||
        transcript_sync(io->t, &out->err) != 0) {
        out->state = RUN_FAILED;
        out->stop_reason = "session_error";
        return;
    }
    if (!run_start_hooks(p, io, &st, goal, fresh, out)) {
        str_free(&st.reminders);
        ladder_edits_free(&st.edits);
        out->final_text = xstrdup("");
        return;
    }

    for (;;) {
        /* L2: begin the turn. */
        if (cancel_run_requested(io->cancel)) {
            finish_interrupted(io, out);
            break;
        }
        /* Observe after the heartbeat stopped an Act: the event is in the
         * working memory the next request carries. */
        cancel_clear_act((loom_cancel *)io->cancel);
        if (st.turn >= max_turns) {
            out->state = RUN_FAILED;
            out->stop_reason = "max_turns";
            loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                           "stopped after %d turns (the --max-turns limit); resume the session "
                           "to go on", max_turns);
            break;
        }
        if (p->max_tokens_total > 0 && loop_usage_total(&out->usage) >= p->max_tokens_total) {
            out->state = RUN_FAILED;
            out->stop_reason = "token_budget";
            loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                           "stopped at the token budget: %lld of %lld tokens used",
                           (long long)loop_usage_total(&out->usage), (long long)p->max_tokens_total);
            break;
        }
        if (p->max_tokens_total > 0 && !st.budget_nudged &&
            loop_usage_total(&out->usage) * 5 >= p->max_tokens_total * 4) {
            /* seed 000: a nudge as the budget nears its end, then a clean stop. */
            st.budget_nudged = true;
            char msg[300];
            snprintf(msg, sizeof msg,
                     "Token budget: %lld of %lld tokens used. The run stops at the budget: finish "
                     "the step in hand, then give a short summary of what is done and what is "
                     "left.",
                     (long long)loop_usage_total(&out->usage), (long long)p->max_tokens_total);
            loop_queue_reminder(&st, msg);
            loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                      json_pack("{s:s,s:s}", "kind", "token_budget", "message", msg));
        }
        if (p->max_usd > 0 && out->cost_usd >= p->max_usd) {
            out->state = RUN_FAILED;
            out->stop_reason = "usd_budget";
            loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                           "stopped at the cost cap: $%.4f of $%.4f", out->cost_usd, p->max_usd);
            break;
        }
        st.turn++;

        /* L3: flush history, apply at most one ladder step, build the
         * request with queued items and C_working at the tail. */
        loom_error err;
        loom_error_clear(&err);
        wire_request req;
        int64_t est = 0;
        int rc = transcript_sync(io->t, &err);
        if (rc == 0)
            rc = context_build_request(p, &cfg, io, &st, &req, &est, &err);
        if (rc == 0) {
            wire_usage before = out->usage;
            int changed = context_govern(p, &cfg, io, &st, est, out, &err);
            price_compaction(p, io, out, &before);
            if (changed != 0)
                wire_request_free(&req);
            rc = changed < 0 ? -1 : changed ? context_build_request(p, &cfg, io, &st, &req, &est, &err) : 0;
        }
        if (rc != 0) {
            wire_request_free(&req);
            out->err = err;
            out->state = RUN_FAILED;
            out->stop_reason = err.code == LOOM_ERR_RUN_CANCELLED ? "cancelled" : "session_error";
            if (err.code == LOOM_ERR_RUN_CANCELLED)
                out->state = RUN_CANCELLED;
            break;
        }
        str_clear(&st.reminders);

        /* The model call. */
        wire_stream_sink sink = {.ctx = io, .on_text = on_text, .on_thinking = on_thinking,
                                 .on_retry = on_retry};
        wire_response resp;
        rc = provider_complete(&cfg, &req, &sink, io->cancel, &resp, &err);
        if (rc != 0 && err.code == LOOM_ERR_MODEL_PROMPT_TOO_LONG) {
            /* Reactive compaction, once per request: the refusal teaches the
             * window, the context is compacted, the request sent again. */
            wire_usage before = out->usage;
            int rc2 = reactive_compact(p, &cfg, io, &st, &req, &est, out, &err);
            price_compaction(p, io, out, &before);
            if (rc2 == 0)
                stream_restarted(io, "prompt_too_long", 1, err.message);
            if (rc2 == 0)
                rc = provider_complete(&cfg, &req, &sink, io->cancel, &resp, &err);
            if (rc != 0 && err.code == LOOM_ERR_MODEL_PROMPT_TOO_LONG)
                loom_error_set(&err, LOOM_ERR_MODEL_PROMPT_TOO_LONG,
                               "the model refused the prompt as too long again after the context "
                               "was compacted (about %lld tokens, window %lld): %s",
                               (long long)pressure_tokens(&st.pr, est, NULL),
                               (long long)cfg.context_window, err.message);
        }
        wire_request_free(&req);
        if (rc != 0) {
            if (cancel_level(io->cancel) >= CANCEL_ACT) {
                /* The heartbeat's veto cut the model stream: straight to
                 * Observe, the request made again with the event in view. */
                loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                          json_pack("{s:s,s:s}", "kind", "heartbeat_interrupt", "message",
                                    "the model call was stopped by a critical event; asking "
                                    "again with the event in view"));
                stream_restarted(io, "heartbeat_interrupt", 1, NULL);
                st.turn--;
                continue;
            }
            if (err.code == LOOM_ERR_RUN_CANCELLED || cancel_requested(io->cancel)) {
                finish_interrupted(io, out);
                break;
            }
            st.model_failures++;
            if (transient(&err) && p->fallback_model && !st.using_fallback &&
                st.model_failures < LOOP_BREAKER_THRESHOLD) {
                st.using_fallback = true;
                cfg.model = (char *)p->fallback_model;
                char msg[1400];
                snprintf(msg, sizeof msg, "switching to the fallback model %s: %s",
                         p->fallback_model, err.message);
                loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                     json_pack("{s:s,s:s,s:s}", "kind", "fallback_model", "message", msg,
                               "model", p->fallback_model));
                stream_restarted(io, "fallback_model", 1, msg);
                st.turn--; /* the failed call was not a turn */
                continue;
            }
            out->err = err;
            out->state = RUN_FAILED;
            out->stop_reason = "model_error";
            break;
        }
        pressure_report(&st.pr, &resp.usage, est);
        st.model_failures = 0;
        if (!cfg.stream) {
            /* A whole reply streams as one delta per block, so every surface
             * sees the same event sequence either way. */
            for (size_t b = 0; b < resp.message.n_blocks; b++) {
                const wire_block *blk = &resp.message.blocks[b];
                if (blk->kind == WIRE_BLOCK_THINKING && blk->text && *blk->text)
                    on_thinking(io, blk->text, strlen(blk->text));
                else if (blk->kind == WIRE_BLOCK_TEXT && blk->text && *blk->text)
                    on_text(io, blk->text, strlen(blk->text));
            }
        }
        loop_add_usage(&out->usage, &resp.usage);
        st.tokens_used = loop_usage_total(&out->usage);
        double cost = out->cost_usd >= 0 ? usage_cost(p, &resp.usage) : 0;
        if (out->cost_usd >= 0)
            out->cost_usd += cost;
        out->turns = st.turn;
        json_t *u = wire_usage_to_json(&resp.usage);
        loop_emit(io, "model.completed", EV_VIS_USER, resp.request_id,
             json_pack("{s:i,s:s,s:s?,s:o,s:f}", "turn", st.turn, "stop_reason",
                       wire_stop_reason_name(resp.stop_reason), "request_id", resp.request_id,
                       "usage", u, "cost_usd", out->cost_usd));

        /* Record the reply whole, then act on it. */
        json_t *records = record_from_response(&resp, resp.request_id);
        const char *message_id = record_id(json_array_get(records, 0));
        char *msg_id = xstrdup(message_id);
        size_t i;
        json_t *rec;
        rc = 0;
        json_array_foreach(records, i, rec) {
            if (transcript_append(io->t, rec, &err) != 0) {
                rc = -1;
                break;
            }
        }
        json_decref(records);
        char *hook_stop = NULL;
        const char *stop_event = "tool";
        if (rc == 0)
            rc = run_tools(p, io, &st, &resp.message, msg_id, out, &hook_stop, &stop_event, &err);
        free(msg_id);
        bool has_tools = false;
        for (size_t b = 0; b < resp.message.n_blocks; b++)
            has_tools |= resp.message.blocks[b].kind == WIRE_BLOCK_TOOL_USE;
        char *text = wire_message_text(&resp.message);
        if (*text || !has_tools) {
            free(out->final_text);
            out->final_text = text;
        } else {
            free(text);
        }
        wire_stop_reason stop = resp.stop_reason;
        wire_response_free(&resp);
        if (rc != 0) {
            free(hook_stop);
            out->err = err;
            out->state = RUN_FAILED;
            out->stop_reason = "session_error";
            break;
        }
        if (cancel_run_requested(io->cancel)) {
            free(hook_stop);
            finish_interrupted(io, out);
            break;
        }
        if (hook_stop) {
            finish_hook_stopped(out, stop_event, hook_stop);
            free(hook_stop);
            break;
        }
        /* Decide: a reply without tool calls is the final answer. */
        if (!has_tools && stop_hook_continues(io, &st, &hook_stop))
            continue;
        if (!has_tools) {
            out->state = RUN_COMPLETED;
            out->stop_reason = hook_stop ? "hook_stopped" : wire_stop_reason_name(stop);
            if (hook_stop)
                /* The answer stands; the reason is the user's to read. */
                loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                          json_pack("{s:s,s:s+}", "kind", "hook_stopped", "message",
                                    "a Stop hook ended the run: ",
                                    *hook_stop ? hook_stop : "no reason given"));
            free(hook_stop);
            break;
        }
    }
    loom_error ignore;
    transcript_sync(io->t, &ignore);
    if (loop_has_hooks(io, HOOK_FINAL_STOP)) {
        hook_outcome o = loop_fire(io, HOOK_FINAL_STOP,
                              json_pack("{s:s,s:s}", "state", run_state_name(out->state),
                                        "stop_reason", out->stop_reason ? out->stop_reason : ""));
        hook_outcome_free(&o);
    }
    context_background_stop(p, io, &st, out);
    free(st.last_call_sig);
    str_free(&st.reminders);
    ladder_edits_free(&st.edits);
    free(st.system_dynamic);
    if (io->pressure)
        *io->pressure = st.pr;
    if (!out->final_text)
        out->final_text = xstrdup("");
}

void loop_result_free(loop_result *r)
{
    json_decref(r->interrupt);
    free(r->final_text);
    wire_usage_free(&r->usage);
    memset(r, 0, sizeof *r);
}

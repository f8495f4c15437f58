/* loop.c — the agent loop (DESIGN.md §3): L1 run start, L2 the turn loop,
 * L3 the fixed steps before each model call. loop_run reads as the steps of
 * a turn, each a function below: begin turn · prepare request (L3) · call
 * the model (reactive compaction, fallback) · record the reply · run the
 * tools · observe · decide. The hooks (loop_hooks.c), the Act (loop_tools.c),
 * the accounting (loop_usage.c) and the context port (loop_context.c) live
 * beside it.
 *
 * Write order keeps the session valid at every instant: the user record
 * first, each model reply whole once it has arrived, each tool result after
 * its call, an interruption last. A crash leaves whole records, and the
 * history builder gives any call left without a result an error result.
 * Threading: the run's thread; see loop.h. */
#include "runtime/loop.h"

#include "runtime/loop_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "context/budget.h"
#include "context/working.h"
#include "context/working_json.h"
#include "session/record.h"

void loop_emit(loop_io *io, loom_event_type type, loom_visibility vis, const char *corr,
               json_t *payload)
{
    if (io->emit)
        io->emit(io->emit_ctx, type, vis, corr, payload);
    else
        json_decref(payload);
}

/* --- model call sink ------------------------------------------------------ */

/* The sink's context: the run's loop_state and the turn, whose first
 * chunk's time model.completed reports (telemetry's time to first chunk). */
typedef struct call_sink {
    loop_state *st;
    loop_turn *t;
} call_sink;

static void note_chunk(call_sink *cs)
{
    if (cs->t && cs->t->first_chunk_us == 0)
        cs->t->first_chunk_us = clock_wall_us();
}

static void on_text(void *ctx, const char *d, size_t n)
{
    call_sink *cs = ctx;
    note_chunk(cs);
    loop_emit(cs->st->io, LOOM_EV_TOKEN_DELTA, LOOM_VIS_USER, NULL, event_token_delta("text", d, n));
}

static void on_thinking(void *ctx, const char *d, size_t n)
{
    call_sink *cs = ctx;
    note_chunk(cs);
    loop_emit(cs->st->io, LOOM_EV_TOKEN_DELTA, LOOM_VIS_USER, NULL,
              event_token_delta("reasoning", d, n));
}

/* A reply that opens with a tool call: its block's start is the first
 * chunk (time to first chunk, for replies with no text before the call). */
static void on_tool_use(void *ctx, const char *id, const char *name)
{
    (void)id, (void)name;
    note_chunk(ctx);
}

static void on_tool_call(void *ctx, const char *id, const char *name, const json_t *input)
{
    note_chunk(ctx);
    loop_state *st = ((call_sink *)ctx)->st;
    loop_early_tool_call(&st->early, st->p.tools, st->io->tools, id, name, input);
}

/* Every way a model call starts over tells the surfaces, so a consumer
 * that kept the call's token.delta text drops it (docs/events.md). */
static void stream_restarted(loop_io *io, const char *reason, int attempt, const char *why)
{
    loop_emit(io, LOOM_EV_STREAM_RESTARTED, LOOM_VIS_USER, NULL,
              event_stream_restarted(reason, attempt, why));
}

static void on_retry(void *ctx, int attempt, double delay_s, const loom_error *why)
{
    call_sink *cs = ctx;
    loop_state *st = cs->st;
    if (cs->t)
        cs->t->first_chunk_us = 0; /* the call starts over */
    /* What this attempt streamed is void, its early tool calls too. */
    loop_early_discard(&st->early);
    loop_emit(st->io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
              event_warning_model_retry(why->message, why->code, attempt, delay_s));
    stream_restarted(st->io, "retry", attempt, why->message);
}

void loop_queue_reminder(loop_state *st, const char *text)
{
    /* A note that is a whole element already (memory's recall block, with
     * its data-role) goes as it is: wrapping it would nest the tags. */
    static const char opener[] = "<system-reminder data-role=\"";
    if (!strncmp(text, opener, sizeof opener - 1)) {
        str_puts(&st->reminders, text);
        return;
    }
    str_printf(&st->reminders, "<system-reminder>\n%s\n</system-reminder>\n", text);
}

context_env *loop_context_env(loop_state *st)
{
    st->ctx.env.turn = st->turn;
    return &st->ctx.env;
}

/* --- how a run ends ------------------------------------------------------- */

/* Failures a fallback model may get past. */
static bool transient(const loom_error *e)
{
    return e->code == LOOM_ERR_MODEL_OVERLOADED || e->code == LOOM_ERR_MODEL_RATE_LIMITED ||
           e->code == LOOM_ERR_MODEL_UNAVAILABLE || e->code == LOOM_ERR_MODEL_TIMEOUT;
}

static void finish(loop_result *out, loom_run_state state, loom_stop_reason reason)
{
    out->state = state;
    out->stop_reason = reason;
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
        out->state = LOOM_RUN_FAILED;
        out->stop_reason = LOOM_STOP_EXTERNAL_SIGNAL;
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
    out->state = LOOM_RUN_CANCELLED;
    out->stop_reason = LOOM_STOP_CANCELLED;
    loom_error_set(&out->err, LOOM_ERR_RUN_CANCELLED, "interrupted by user");
}

/* A session write failed: the run cannot go on. */
static void finish_session_error(loop_result *out, const loom_error *err)
{
    out->err = *err;
    finish(out, LOOM_RUN_FAILED, LOOM_STOP_SESSION_ERROR);
}

/* --- L1 -------------------------------------------------------------------- */

/* Sets the run up and appends the goal. 0 to start the turns; 1 when a
 * start hook ended the run, -1 when the session could not be written (the
 * outcome is in st->out either way). */
static int run_begin(loop_state *st, const loop_params *p, loop_io *io, const char *goal,
                     loop_result *out)
{
    memset(out, 0, sizeof *out);
    loom_error_clear(&out->err);
    out->cost_usd = loop_prices_known(p, p->provider->model) ? 0 : -1;
    memset(st, 0, sizeof *st);
    st->io = io;
    st->out = out;
    st->cfg = *p->provider; /* shallow: only .model is swapped, never freed here */
    st->max_turns = p->max_turns > 0 ? p->max_turns : LOOP_DEFAULT_MAX_TURNS;
    loop_early_init(&st->early);
    bool fresh = transcript_leaf(io->t) == NULL;
    /* A "+500k" in the prompt sets the token budget (seed 000); where the
     * configuration set one too, the smaller binds — a repository's
     * settings may add a cap but never raise the one the user typed. */
    int64_t budget = p->max_tokens_total > 0 ? p->max_tokens_total : 0;
    int64_t typed = budget_parse_prompt(goal);
    if (typed > 0 && (budget <= 0 || typed < budget))
        budget = typed;
    st->p = *p;
    st->p.max_tokens_total = budget;
    st->cs = io->context;
    if (!st->cs) {
        context_state_init(&st->own_context);
        st->cs = &st->own_context;
    }
    context_state_begin(st->cs, io->t, st->cfg.context_window);
    loop_context_init(&st->ctx, &st->p, io, &out->usage);
    if (io->working)
        working_set_goal(io->working, io->typed_goal ? io->typed_goal : goal);
    /* The goal enters the session before anything can fail. */
    json_t *user = record_user_text(goal);
    if (io->goal_is_resume_note)
        record_set_resume_note(user);
    size_t k;
    json_t *img;
    json_array_foreach(io->goal_images, k, img) /* images the prompt named (docs/repl.md) */
        record_add_image(user, json_get_str(img, "mediaType", "image/png"),
                         json_get_str(img, "data", ""));
    if (transcript_append_new(io->t, user, &out->err) != 0 ||
        transcript_sync(io->t, &out->err) != 0) {
        finish(out, LOOM_RUN_FAILED, LOOM_STOP_SESSION_ERROR);
        return -1;
    }
    if (!loop_start_hooks(st, goal, fresh))
        return 1;
    return 0;
}

/* --- L2: the steps of a turn ---------------------------------------------- */

/* Takes the tool set's changes in (loop_toolset_port): tools and the
 * instructions that go with them change together, at a turn boundary. */
static void refresh_toolset(loop_state *st)
{
    loop_toolset_port *ts = &st->io->toolset;
    const tool_registry *tools = NULL;
    const char *ext = NULL;
    char *note = ts->take_notes ? ts->take_notes(ts->ctx) : NULL;
    if (note) {
        loop_queue_reminder(st, note);
        free(note);
    }
    const loop_tree_port *tree = &st->io->tree;
    note = tree->take_notes ? tree->take_notes(tree->ctx) : NULL;
    if (note) {
        loop_queue_reminder(st, note);
        free(note);
    }
    if (!ts->refresh || !ts->refresh(ts->ctx, &tools, &ext))
        return;
    st->p.tools = tools;
    st->ctx.env.tools_est = tool_registry_tokens(tools);
    st->ctx.env.system_extensions = ext;
}

/* Stops for the run's limits (cancel, turns, tokens, cost), nudges as the
 * token budget nears its end, and counts the turn. */
static loop_step begin_turn(loop_state *st)
{
    loop_io *io = st->io;
    loop_result *out = st->out;
    const loop_params *p = &st->p;
    if (cancel_run_requested(io->cancel)) {
        finish_interrupted(io, out);
        return STEP_STOP;
    }
    /* Observe after the heartbeat stopped an Act: the event is in the
     * working memory the next request carries. */
    cancel_clear_act((loom_cancel *)io->cancel);
    if (io->tree.exhausted) {
        /* The spawn tree's pool, or this run's share of it (agents/tree.h). */
        loom_stop_reason why = LOOM_STOP_NONE;
        char msg[300] = "";
        if (io->tree.exhausted(io->tree.ctx, &why, msg, sizeof msg)) {
            assert(why != LOOM_STOP_NONE);
            finish(out, LOOM_RUN_FAILED, why);
            loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE, "%s",
                           *msg ? msg : "stopped at the spawn tree's budget");
            return STEP_STOP;
        }
    }
    if (io->pause && atomic_load(io->pause)) {
        finish(out, LOOM_RUN_PAUSED, LOOM_STOP_PAUSED);
        loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                       "paused after %d turns; resume the session to go on", st->turn);
        return STEP_STOP;
    }
    int64_t used = msg_usage_total(&out->usage);
    if (st->turn >= st->max_turns) {
        finish(out, LOOM_RUN_FAILED, LOOM_STOP_MAX_TURNS);
        loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                       "stopped after %d turns (the --max-turns limit)", st->max_turns);
        return STEP_STOP;
    }
    if (p->max_tokens_total > 0 && used >= p->max_tokens_total) {
        finish(out, LOOM_RUN_FAILED, LOOM_STOP_TOKEN_BUDGET);
        loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                       "stopped at the token budget: %lld of %lld tokens used", (long long)used,
                       (long long)p->max_tokens_total);
        return STEP_STOP;
    }
    if (p->max_tokens_total > 0 && !st->budget_nudged && used * 5 >= p->max_tokens_total * 4) {
        /* seed 000: a nudge as the budget nears its end, then a clean stop. */
        st->budget_nudged = true;
        char msg[300];
        snprintf(msg, sizeof msg,
                 "Token budget: %lld of %lld tokens used. The run stops at the budget: finish "
                 "the step in hand, then give a short summary of what is done and what is "
                 "left.",
                 (long long)used, (long long)p->max_tokens_total);
        loop_queue_reminder(st, msg);
        loop_emit(io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL, event_warning("token_budget", msg));
    }
    if (p->max_usd > 0 && out->cost_usd >= p->max_usd) {
        finish(out, LOOM_RUN_FAILED, LOOM_STOP_USD_BUDGET);
        loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE, "stopped at the cost cap: $%.4f of $%.4f",
                       out->cost_usd, p->max_usd);
        return STEP_STOP;
    }
    st->turn++;
    refresh_toolset(st);
    return STEP_NEXT;
}

static int build_request(loop_state *st, loop_turn *t, loom_error *err)
{
    return loop_context_request(&st->ctx, st->cs, &st->p, &st->cfg, &st->reminders, &t->req,
                                &t->est, err);
}

/* L3: flush history, apply at most one ladder step, build the request with
 * the queued items and C_working at the tail. */
static loop_step prepare_request(loop_state *st, loop_turn *t)
{
    loom_error err;
    loom_error_clear(&err);
    int rc = transcript_sync(st->io->t, &err);
    if (rc == 0)
        rc = build_request(st, t, &err);
    if (rc == 0) {
        msg_usage before = st->out->usage;
        int changed = context_govern(st->cs, loop_context_env(st), &st->cfg, t->est, &err);
        loop_price_compaction(st, &before);
        if (changed != 0) {
            msg_request_free(&t->req);
            /* What a compaction took away may come back in the extensions
             * part (an activated skill's text): ask for it anew. */
            if (changed > 0)
                refresh_toolset(st);
        }
        rc = changed < 0 ? -1 : changed ? build_request(st, t, &err) : 0;
    }
    if (rc != 0) {
        msg_request_free(&t->req);
        st->out->err = err;
        if (err.code == LOOM_ERR_RUN_CANCELLED)
            finish(st->out, LOOM_RUN_CANCELLED, LOOM_STOP_CANCELLED);
        else
            finish(st->out, LOOM_RUN_FAILED, LOOM_STOP_SESSION_ERROR);
        return STEP_STOP;
    }
    str_clear(&st->reminders);
    return STEP_NEXT;
}

/* Reactive compaction, once per request: the refusal teaches the window,
 * the context is compacted (or renewed), the request built and sent again.
 * err comes in as the refusal and leaves as the last call's outcome. */
static int resend_compacted(loop_state *st, loop_turn *t, const provider_stream_sink *sink,
                            loom_error *err)
{
    msg_usage before = st->out->usage;
    int rc = context_react_too_long(st->cs, loop_context_env(st), &st->cfg, t->est,
                                    err->message) == 1 ? 0 : -1;
    if (rc == 0) {
        msg_request_free(&t->req);
        refresh_toolset(st); /* as in prepare_request: the extensions part after a compaction */
        loom_error rerr;
        if (build_request(st, t, &rerr) != 0) {
            *err = rerr;
            rc = -1;
        }
    }
    loop_price_compaction(st, &before);
    if (rc == 0) {
        stream_restarted(st->io, "prompt_too_long", 1, err->message);
        /* The call the reply answers starts here, after the compaction. */
        t->started_us = clock_wall_us();
        t->first_chunk_us = 0;
        rc = provider_port_complete(&st->io->model, &st->cfg, &t->req, sink, st->io->cancel,
                                    &t->resp, err);
    }
    if (rc != 0 && err->code == LOOM_ERR_MODEL_PROMPT_TOO_LONG)
        loom_error_set(err, LOOM_ERR_MODEL_PROMPT_TOO_LONG,
                       "the model refused the prompt as too long again after the context "
                       "was compacted (about %lld tokens, window %lld): %s",
                       (long long)pressure_tokens(&st->cs->pr, t->est, NULL),
                       (long long)st->cfg.context_window, err->message);
    return rc;
}

/* A failed model call: the heartbeat's veto and the fallback model ask
 * again (the failed call was not a turn); a cancel or any other failure
 * ends the run. */
static loop_step model_failed(loop_state *st, const loom_error *err)
{
    loop_io *io = st->io;
    if (cancel_level(io->cancel) >= CANCEL_ACT) {
        /* The heartbeat's veto cut the model stream: straight to Observe,
         * the request made again with the event in view. */
        loop_emit(io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
                  event_warning("heartbeat_interrupt",
                                "the model call was stopped by a critical event; asking "
                                "again with the event in view"));
        stream_restarted(io, "heartbeat_interrupt", 1, NULL);
        st->turn--;
        return STEP_AGAIN;
    }
    if (err->code == LOOM_ERR_RUN_CANCELLED || cancel_requested(io->cancel)) {
        finish_interrupted(io, st->out);
        return STEP_STOP;
    }
    st->model_failures++;
    const char *fallback = st->p.fallback_model;
    if (transient(err) && fallback && !st->using_fallback &&
        st->model_failures < LOOP_BREAKER_THRESHOLD) {
        st->using_fallback = true;
        st->cfg.model = (char *)fallback;
        char msg[1400];
        snprintf(msg, sizeof msg, "switching to the fallback model %s: %s", fallback,
                 err->message);
        loop_emit(io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
                  event_warning_fallback_model(msg, fallback));
        stream_restarted(io, "fallback_model", 1, msg);
        st->turn--;
        return STEP_AGAIN;
    }
    st->out->err = *err;
    finish(st->out, LOOM_RUN_FAILED, LOOM_STOP_MODEL_ERROR);
    return STEP_STOP;
}

static loop_step call_model(loop_state *st, loop_turn *t)
{
    call_sink cs = {.st = st, .t = t};
    provider_stream_sink sink = {.ctx = &cs, .on_text = on_text, .on_thinking = on_thinking,
                                 .on_retry = on_retry, .on_tool_use = on_tool_use,
                                 .on_tool_call = on_tool_call};
    t->started_us = clock_wall_us();
    t->first_chunk_us = 0;
    loom_error err;
    loom_error_clear(&err);
    loop_early_discard(&st->early); /* none left over from a reply never acted on */
    int rc = provider_port_complete(&st->io->model, &st->cfg, &t->req, &sink, st->io->cancel,
                                    &t->resp, &err);
    if (rc != 0)
        loop_early_discard(&st->early); /* a failed message's calls are never shown */
    if (rc != 0 && err.code == LOOM_ERR_MODEL_PROMPT_TOO_LONG) {
        rc = resend_compacted(st, t, &sink, &err);
        if (rc != 0)
            loop_early_discard(&st->early);
    }
    msg_request_free(&t->req);
    return rc == 0 ? STEP_NEXT : model_failed(st, &err);
}

/* The reply arrived whole: the pressure learns the provider's count, the
 * usage is summed, and the reply is recorded. 0, or -1 with err set. */
static int record_reply(loop_state *st, loop_turn *t, char **message_id, loom_error *err)
{
    msg_response *resp = &t->resp;
    pressure_report(&st->cs->pr, &resp->usage, t->est);
    st->model_failures = 0;
    if (!st->cfg.stream) {
        /* A whole reply streams as one delta per block, so every surface
         * sees the same event sequence either way. */
        call_sink cs = {.st = st, .t = NULL};
        for (size_t b = 0; b < resp->message.n_blocks; b++) {
            const msg_block *blk = &resp->message.blocks[b];
            if (blk->kind == MSG_BLOCK_THINKING && blk->text && *blk->text)
                on_thinking(&cs, blk->text, strlen(blk->text));
            else if (blk->kind == MSG_BLOCK_TEXT && blk->text && *blk->text)
                on_text(&cs, blk->text, strlen(blk->text));
        }
    }
    loop_count_reply(st, resp, t->started_us, t->first_chunk_us);
    json_t *records = record_from_response(resp, resp->request_id);
    *message_id = xstrdup(record_id(json_array_get(records, 0)));
    size_t i;
    json_t *rec;
    int rc = 0;
    json_array_foreach(records, i, rec) {
        if (transcript_append(st->io->t, rec, err) != 0) {
            rc = -1;
            break;
        }
    }
    json_decref(records);
    return rc;
}

/* Observe what the turn left: the reply's text is the answer so far; a
 * session error, a cancel or a hook's "continue": false ends the run. */
static loop_step observe(loop_state *st, loop_turn *t, int rc, const loom_error *err)
{
    loop_result *out = st->out;
    for (size_t b = 0; b < t->resp.message.n_blocks; b++)
        t->has_tools |= t->resp.message.blocks[b].kind == MSG_BLOCK_TOOL_USE;
    char *text = msg_message_text(&t->resp.message);
    if (*text || !t->has_tools) {
        free(out->final_text);
        out->final_text = text;
    } else {
        free(text);
    }
    t->stop = t->resp.stop_reason;
    msg_response_free(&t->resp);
    if (rc != 0) {
        finish_session_error(out, err);
        return STEP_STOP;
    }
    if (cancel_run_requested(st->io->cancel)) {
        finish_interrupted(st->io, out);
        return STEP_STOP;
    }
    if (t->hook_stop) {
        loop_finish_hook_stopped(out, t->stop_event, t->hook_stop);
        return STEP_STOP;
    }
    return STEP_NEXT;
}

/* Decide: a reply without tool calls is the final answer, unless a Stop
 * hook sends the agent back to work; with tool calls, run again. */
static loop_step decide(loop_state *st, loop_turn *t)
{
    if (t->has_tools)
        return STEP_NEXT;
    if (loop_stop_hook_continues(st, &t->hook_stop))
        return STEP_AGAIN;
    loop_result *out = st->out;
    const loop_tree_port *tree = &st->io->tree;
    if (!t->hook_stop && tree->before_final) {
        /* The tree may owe more first (a StructuredOutput call, background
         * agents a headless run waits for): its reminder, and another turn. */
        char *more = tree->before_final(tree->ctx, out->final_text ? out->final_text : "");
        if (more) {
            loop_queue_reminder(st, more);
            free(more);
            return STEP_AGAIN;
        }
    }
    finish(out, LOOM_RUN_COMPLETED, t->hook_stop ? LOOM_STOP_HOOK_STOPPED : t->stop);
    if (t->hook_stop)
        /* The answer stands; the reason is the user's to read. */
        loop_emit(st->io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
                  event_warningf("hook_stopped", "a Stop hook ended the run: %s",
                                 *t->hook_stop ? t->hook_stop : "no reason given"));
    return STEP_STOP;
}

/* working.updated after a turn's observe step, only when C_working moved
 * since this run last sent it: a console's side panel follows the plan and
 * the dashboard without a copy of every turn's unchanged state. */
static void emit_working(loop_state *st)
{
    if (!st->io->working)
        return;
    json_t *w = working_json_if_changed(st->io->working, &st->last_working);
    if (w)
        loop_emit(st->io, LOOM_EV_WORKING_UPDATED, LOOM_VIS_USER, NULL, w);
}

/* The process's CPU time so far, in microseconds: the harness's own cost
 * (tools that run as children are not counted; waiting for the model
 * costs none). The clock is exact where getrusage's user/system split is
 * sampled at the tick, too coarse for one turn. */
static int64_t cpu_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One "turn" log line per turn with its CPU, for bench/turns.sh: how the
 * harness's per-turn cost grows with the history, and how much of the
 * history was kept rather than made again (docs/context.md). */
static void log_turn_cpu(const loop_state *st, int64_t start_us)
{
    log_event(LOG_INFO, "turn",
              json_pack("{s:i,s:I,s:I,s:I}", "turn", st->turn, "cpu_us",
                        (json_int_t)(cpu_now_us() - start_us), "kept_messages",
                        (json_int_t)st->cs->keep.n_msgs, "history_rebuilds",
                        (json_int_t)st->cs->keep.rebuilds),
              "turn done");
}

static loop_step run_turn_steps(loop_state *st);

/* One turn, begin to decision, with its CPU logged. */
static loop_step run_turn(loop_state *st)
{
    int64_t start = cpu_now_us();
    loop_step s = run_turn_steps(st);
    log_turn_cpu(st, start);
    return s;
}

static loop_step run_turn_steps(loop_state *st)
{
    loop_turn t = {.stop_event = "tool"};
    loop_step s = begin_turn(st);
    if (s == STEP_NEXT)
        s = prepare_request(st, &t);
    if (s == STEP_NEXT)
        s = call_model(st, &t);
    if (s != STEP_NEXT)
        return s;
    loom_error err;
    loom_error_clear(&err);
    char *message_id = NULL;
    int rc = record_reply(st, &t, &message_id, &err);
    if (rc == 0)
        rc = loop_run_tools(st, &t.resp.message, message_id, &t.hook_stop, &t.stop_event, &err);
    free(message_id);
    s = observe(st, &t, rc, &err);
    emit_working(st);
    if (s == STEP_NEXT)
        s = decide(st, &t);
    loop_settle_helpers(st); /* compaction's, the Stop hooks' (the batch settled its own) */
    free(t.hook_stop);
    return s;
}

/* --- run end ---------------------------------------------------------------- */

static void run_end(loop_state *st)
{
    loom_error ignore;
    transcript_sync(st->io->t, &ignore);
    loop_fire_final_stop(st);
    /* A background compaction still writing is stopped; what it spent is
     * the run's. */
    msg_usage spent;
    unsigned calls = context_background_stop(st->cs, &spent);
    loop_count_side_usage(st, "compaction", NULL, NULL, &spent, calls);
    loop_settle_helpers(st);
}

static void run_free(loop_state *st)
{
    loop_early_free(&st->early);
    free(st->last_call_sig);
    free(st->last_working);
    str_free(&st->reminders);
    if (st->cs == &st->own_context)
        context_state_free(&st->own_context);
}

void loop_run(const loop_params *p, loop_io *io, const char *goal, loop_result *out)
{
    loop_state st;
    int begun = run_begin(&st, p, io, goal, out);
    if (begun == 0) {
        while (run_turn(&st) != STEP_STOP)
            ;
        run_end(&st);
    }
    run_free(&st);
    /* A run that could not record its goal has no answer, not an empty one. */
    if (begun >= 0 && !out->final_text)
        out->final_text = xstrdup("");
}

void loop_result_free(loop_result *r)
{
    json_decref(r->interrupt);
    free(r->final_text);
    msg_usage_free(&r->usage);
    memset(r, 0, sizeof *r);
}

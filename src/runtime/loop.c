/* loop.c — the agent loop (DESIGN.md §3): L1 run start, L2 the turn loop,
 * L3 the fixed steps before each model call.
 *
 * Write order keeps the session valid at every instant: the user record
 * first, each model reply whole once it has arrived, each tool result after
 * its call, an interruption last. A crash leaves whole records, and the
 * history builder gives any call left without a result an error result. */
#include "runtime/loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "context/memory.h"
#include "policy/governance.h"
#include "session/history.h"
#include "session/record.h"
#include "tools/pipeline.h"

typedef struct loop_state {
    int turn;
    int model_failures;        /* consecutive; the circuit breaker counts these */
    bool using_fallback;
    char *last_call_sig;       /* loop detection: the previous call, canonical */
    int repeat_count;
    loom_str reminders;        /* queued for the tail of the next request (L3) */
    int stop_continuations;    /* times a Stop hook sent the agent back to work */
} loop_state;

static void emit(loop_io *io, const char *type, event_visibility vis, const char *corr,
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
    emit(ctx, EV_TOKEN_DELTA, EV_VIS_USER, NULL,
         json_pack("{s:s,s:s%}", "channel", "text", "text", d, n));
}

static void on_thinking(void *ctx, const char *d, size_t n)
{
    emit(ctx, EV_TOKEN_DELTA, EV_VIS_USER, NULL,
         json_pack("{s:s,s:s%}", "channel", "reasoning", "text", d, n));
}

static void on_retry(void *ctx, int attempt, double delay_s, const loom_error *why)
{
    emit(ctx, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
         json_pack("{s:s,s:s,s:s,s:i,s:f}", "kind", "model_retry", "message", why->message, "code",
                   loom_code_name(why->code), "attempt", attempt, "delay_s", delay_s));
}

/* --- L3 -------------------------------------------------------------------- */

static void queue_reminder(loop_state *st, const char *text)
{
    str_printf(&st->reminders, "<system-reminder>\n%s\n</system-reminder>\n", text);
}

/* Builds the request from the session: history, tools, system prompt, queued
 * reminders at the tail, a cache breakpoint on the conversation's last block. */
static int build_request(const loop_params *p, const provider_config *cfg, loop_io *io,
                         loop_state *st, wire_request *req, loom_error *err)
{
    memset(req, 0, sizeof *req);
    req->model = xstrdup(cfg->model);
    req->system = xstrdup(p->system_static);
    req->system_dynamic = xstrdup(p->system_dynamic);
    req->system_cache = true;
    req->max_tokens = cfg->max_output_tokens;
    req->temperature = -1;
    req->stream = cfg->stream;
    if (history_from_transcript(io->t, req, NULL) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be rebuilt");
    if (p->tools)
        tool_registry_to_request(p->tools, req);
    if (req->n_messages == 0 || req->messages[req->n_messages - 1].role != WIRE_ROLE_USER)
        wire_request_add_message(req, WIRE_ROLE_USER);
    wire_message *last = &req->messages[req->n_messages - 1];
    if (st->reminders.len) {
        wire_message_add_text(last, st->reminders.ptr);
        str_clear(&st->reminders);
    }
    if (last->n_blocks)
        last->blocks[last->n_blocks - 1].cache_control = true;
    return 0;
}

/* --- accounting ----------------------------------------------------------- */

static void add_usage(wire_usage *total, const wire_usage *u)
{
    total->input_tokens += u->input_tokens;
    total->output_tokens += u->output_tokens;
    total->cache_read_tokens += u->cache_read_tokens;
    total->cache_creation_tokens += u->cache_creation_tokens;
    total->reasoning_tokens += u->reasoning_tokens;
}

static int64_t usage_total(const wire_usage *u)
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

/* --- tools ---------------------------------------------------------------- */

typedef struct observer_ctx {
    loop_io *io;
} observer_ctx;

static void obs_start(void *ctx, size_t index, const tool_call *call)
{
    (void)index;
    observer_ctx *o = ctx;
    emit(o->io, EV_TOOL_STARTED, EV_VIS_USER, call->id,
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
    json_t *payload = json_pack(
        "{s:s,s:s,s:b,s:I,s:I,s:I,s:s%,s:I}", "call_id", call->id, "tool", call->name,
        "is_error", r->is_error, "started_us", (json_int_t)out->started_us, "finished_us",
        (json_int_t)out->finished_us, "duration_ms",
        (json_int_t)((out->finished_us - out->started_us) / 1000), "output", str_cstr(&r->text),
        preview, "output_chars", (json_int_t)r->text.len);
    if (out->failed_step)
        json_object_set_new(payload, "failed_step", json_string(out->failed_step));
    if (r->raw)
        json_object_set(payload, "raw", r->raw);
    emit(o->io, r->is_error ? EV_TOOL_FAILED : EV_TOOL_FINISHED, EV_VIS_USER, call->id, payload);
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
            queue_reminder(st, msg);
            emit(io, EV_WARNING_EMITTED, EV_VIS_USER, calls[i].id,
                 json_pack("{s:s,s:s,s:s,s:i}", "kind", "tool_loop", "message", msg, "tool",
                           calls[i].name, "repeats", st->repeat_count));
        }
    }
}

/* Runs the reply's tool calls and records each result in call order. */
static int run_tools(const loop_params *p, loop_io *io, loop_state *st, const wire_message *reply,
                     const char *message_id, loom_error *err)
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
    tool_batch_run(p->tools, calls, n, io->tools, &obs, outs);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        tool_result *r = &outs[i].result;
        if (outs[i].context)
            queue_reminder(st, outs[i].context);
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
static hook_outcome fire(loop_io *io, hook_event ev, json_t *extra)
{
    hook_outcome o = governance_fire(io->gov, ev, extra, io->cancel);
    for (size_t i = 0; i < o.n_notices; i++)
        if (o.notices[i].kind != HOOK_NOTICE_OUTPUT)
            emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                 json_pack("{s:s,s:s}", "kind", "hook", "message", o.notices[i].text));
    return o;
}

static bool has_hooks(loop_io *io, hook_event ev)
{
    return io->gov && hook_registry_count(io->gov->hooks, ev) > 0;
}

/* InstructionsLoaded: one event per memory file the system prompt holds. */
static void fire_instructions_loaded(const loop_params *p, loop_io *io)
{
    if (!p->memory || !has_hooks(io, HOOK_INSTRUCTIONS_LOADED))
        return;
    for (size_t i = 0; i < p->memory->count; i++) {
        const memory_file *f = &p->memory->files[i];
        hook_outcome o = fire(io, HOOK_INSTRUCTIONS_LOADED,
                              json_pack("{s:s,s:s}", "file_path", f->path, "memory_type",
                                        memory_kind_name(f->kind)));
        hook_outcome_free(&o);
    }
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
        if (has_hooks(io, HOOK_SESSION_START)) {
            hook_outcome o = fire(io, HOOK_SESSION_START,
                                  json_pack("{s:s}", "source", fresh ? "startup" : "resume"));
            if (o.additional_context && *o.additional_context)
                queue_reminder(st, o.additional_context);
            hook_outcome_free(&o);
        }
        fire_instructions_loaded(p, io);
    }
    if (!has_hooks(io, HOOK_USER_PROMPT_SUBMIT))
        return true;
    hook_outcome o = fire(io, HOOK_USER_PROMPT_SUBMIT, json_pack("{s:s}", "prompt", goal));
    bool ok = !o.blocked;
    if (!ok) {
        out->state = RUN_BLOCKED_BY_POLICY;
        out->stop_reason = "prompt_blocked";
        loom_error_set(&out->err, LOOM_ERR_RUN_BLOCKED_BY_POLICY,
                       "a UserPromptSubmit hook blocked the prompt: %s",
                       o.block_reason ? o.block_reason : "no reason given");
    } else if (o.additional_context && *o.additional_context) {
        queue_reminder(st, o.additional_context);
    }
    hook_outcome_free(&o);
    return ok;
}

/* Stop hooks may send the agent back to work (Claude Code's "decision":
 * "block"); a cap keeps a stubborn hook from looping for ever. */
#define LOOP_STOP_HOOK_CONTINUATIONS 3

static bool stop_hook_continues(loop_io *io, loop_state *st)
{
    if (!has_hooks(io, HOOK_STOP) || st->stop_continuations >= LOOP_STOP_HOOK_CONTINUATIONS)
        return false;
    hook_outcome o = fire(io, HOOK_STOP, json_pack("{s:b}", "stop_hook_active",
                                                   st->stop_continuations > 0));
    bool again = o.blocked;
    bool failed = false;
    for (size_t i = 0; i < o.n_results; i++)
        failed |= o.results[i].status == HOOK_STATUS_ERROR ||
                  o.results[i].status == HOOK_STATUS_TIMEOUT;
    if (failed && has_hooks(io, HOOK_STOP_FAILURE)) {
        hook_outcome f = fire(io, HOOK_STOP_FAILURE, NULL);
        hook_outcome_free(&f);
    }
    if (again) {
        st->stop_continuations++;
        queue_reminder(st, o.block_reason ? o.block_reason : "A Stop hook asked you to continue.");
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
    /* seed 001 §3.5: the interruption is recorded but never drives a run. */
    json_t *rec = record_user_text("Interrupted by user");
    record_set_skip_run(rec, true);
    loom_error ignore;
    transcript_append_new(io->t, rec, &ignore);
    out->state = RUN_CANCELLED;
    out->stop_reason = "cancelled";
    loom_error_set(&out->err, LOOM_ERR_RUN_CANCELLED, "interrupted by user");
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
    if (transcript_append_new(io->t, record_user_text(goal), &out->err) != 0 ||
        transcript_sync(io->t, &out->err) != 0) {
        out->state = RUN_FAILED;
        out->stop_reason = "session_error";
        return;
    }
    if (!run_start_hooks(p, io, &st, goal, fresh, out)) {
        str_free(&st.reminders);
        out->final_text = xstrdup("");
        return;
    }

    for (;;) {
        /* L2: begin the turn. */
        if (cancel_requested(io->cancel)) {
            finish_interrupted(io, out);
            break;
        }
        if (st.turn >= max_turns) {
            out->state = RUN_FAILED;
            out->stop_reason = "max_turns";
            loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                           "stopped after %d turns (the --max-turns limit); resume the session "
                           "to go on", max_turns);
            break;
        }
        if (p->max_tokens_total > 0 && usage_total(&out->usage) >= p->max_tokens_total) {
            out->state = RUN_FAILED;
            out->stop_reason = "token_budget";
            loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                           "stopped at the token budget: %lld of %lld tokens used",
                           (long long)usage_total(&out->usage), (long long)p->max_tokens_total);
            break;
        }
        if (p->max_usd > 0 && out->cost_usd >= p->max_usd) {
            out->state = RUN_FAILED;
            out->stop_reason = "usd_budget";
            loom_error_set(&out->err, LOOM_ERR_RUN_RESUMABLE,
                           "stopped at the cost cap: $%.4f of $%.4f", out->cost_usd, p->max_usd);
            break;
        }
        st.turn++;

        /* L3: flush history, build the request with queued items at the tail. */
        loom_error err;
        loom_error_clear(&err);
        wire_request req;
        if (transcript_sync(io->t, &err) != 0 || build_request(p, &cfg, io, &st, &req, &err) != 0) {
            wire_request_free(&req);
            out->err = err;
            out->state = RUN_FAILED;
            out->stop_reason = "session_error";
            break;
        }

        /* The model call. */
        wire_stream_sink sink = {.ctx = io, .on_text = on_text, .on_thinking = on_thinking,
                                 .on_retry = on_retry};
        wire_response resp;
        int rc = provider_complete(&cfg, &req, &sink, io->cancel, &resp, &err);
        wire_request_free(&req);
        if (rc != 0) {
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
                emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                     json_pack("{s:s,s:s,s:s}", "kind", "fallback_model", "message", msg,
                               "model", p->fallback_model));
                st.turn--; /* the failed call was not a turn */
                continue;
            }
            out->err = err;
            out->state = RUN_FAILED;
            out->stop_reason = "model_error";
            break;
        }
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
        add_usage(&out->usage, &resp.usage);
        double cost = out->cost_usd >= 0 ? usage_cost(p, &resp.usage) : 0;
        if (out->cost_usd >= 0)
            out->cost_usd += cost;
        out->turns = st.turn;
        json_t *u = wire_usage_to_json(&resp.usage);
        emit(io, "model.completed", EV_VIS_USER, resp.request_id,
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
        if (rc == 0)
            rc = run_tools(p, io, &st, &resp.message, msg_id, &err);
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
            out->err = err;
            out->state = RUN_FAILED;
            out->stop_reason = "session_error";
            break;
        }
        if (cancel_requested(io->cancel)) {
            finish_interrupted(io, out);
            break;
        }
        /* Decide: a reply without tool calls is the final answer. */
        if (!has_tools && stop_hook_continues(io, &st))
            continue;
        if (!has_tools) {
            out->state = RUN_COMPLETED;
            out->stop_reason = wire_stop_reason_name(stop);
            break;
        }
    }
    loom_error ignore;
    transcript_sync(io->t, &ignore);
    if (has_hooks(io, HOOK_FINAL_STOP)) {
        hook_outcome o = fire(io, HOOK_FINAL_STOP,
                              json_pack("{s:s,s:s}", "state", run_state_name(out->state),
                                        "stop_reason", out->stop_reason ? out->stop_reason : ""));
        hook_outcome_free(&o);
    }
    free(st.last_call_sig);
    str_free(&st.reminders);
    if (!out->final_text)
        out->final_text = xstrdup("");
}

void loop_result_free(loop_result *r)
{
    free(r->final_text);
    wire_usage_free(&r->usage);
    memset(r, 0, sizeof *r);
}

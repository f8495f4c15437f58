/* context_control.c — assembly, pressure, the ladder, compaction and renew
 * in the loop (see context_control.h). */
#include "context/control.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/log.h"
#include "context/compact.h"
#include "context/renew.h"
#include "context/tokens.h"
#include "context/working.h"
#include "governance/governance.h"
#include "session/history.h"
#include "session/record.h"

/* Auto-compaction gives up after this many failures in a row (seed 001 §8). */
#define COMPACT_MAX_FAILURES 3
/* The summary's own output cap: 1,000 words ≈ 2,600 tokens, with room. */
#define COMPACT_MAX_OUTPUT 4096
/* The smallest output cap a request is lowered to when the window is tight. */
#define CONTEXT_MIN_OUTPUT 1024
/* renew keeps this share of the window for the compressed history. */
#define RENEW_BUDGET_SHARE 0.25

static const ladder_config *ladder_of(const loop_params *p, ladder_config *buf)
{
    if (p->ladder.compact > 0)
        return &p->ladder;
    ladder_config_default(buf);
    return buf;
}

/* --- assembly ------------------------------------------------------------- */

/* The active chain through the ladder's edits. *keep owns edited copies. */
static int active_view(transcript *t, const ladder_edits *edits, json_t ***view, size_t *n,
                       json_t **keep)
{
    json_t **chain = NULL;
    size_t nc = 0;
    if (transcript_active(t, &chain, &nc) != 0)
        return -1;
    ladder_view(edits, chain, nc, view, n, keep);
    free(chain);
    return 0;
}

static void set_dashboard(const loop_params *p, const provider_config *cfg, loop_io *io,
                          loop_state *st, int64_t tokens)
{
    if (!io->working)
        return;
    dashboard d = working_get_dashboard(io->working);
    d.tokens = tokens;
    d.window = cfg->context_window;
    d.budget_total = p->max_tokens_total;
    d.budget_used = st->tokens_used;
    d.turn = st->turn;
    working_set_dashboard(io->working, &d);
}

/* C_skill's size, from the declarations' own text: the schemas are
 * written compact, so their text is what goes on the wire (re-encoding
 * them to count cost more than the rest of the estimate). */
static int64_t tools_tokens(const tool_registry *reg)
{
    int64_t t = 0;
    for (size_t i = 0; i < tool_registry_count(reg); i++) {
        const tool_def *d = tool_registry_at(reg, i);
        t += TOKENS_PER_BLOCK + tokens_estimate_cstr(d->name) +
             tokens_estimate_cstr(d->description) + tokens_estimate_cstr(d->input_schema);
    }
    return t;
}

int context_build_request(const loop_params *p, const provider_config *cfg, loop_io *io,
                          loop_state *st, wire_request *req, int64_t *est, loom_error *err)
{
    memset(req, 0, sizeof *req);
    req->model = xstrdup(cfg->model);
    req->system = xstrdup(p->system_static);
    req->system_dynamic = xstrdup(st->system_dynamic ? st->system_dynamic : p->system_dynamic);
    req->system_cache = true;
    req->max_tokens = cfg->max_output_tokens;
    req->temperature = -1;
    req->stream = cfg->stream;
    json_t **view = NULL, *keep = NULL;
    size_t n = 0;
    if (active_view(io->t, &st->edits, &view, &n, &keep) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be rebuilt");
    history_from_records(view, n, req, NULL);
    free(view);
    json_decref(keep);
    if (p->tools)
        tool_registry_to_request(p->tools, req);
    if (st->tools_est == 0)
        st->tools_est = tools_tokens(p->tools);
    if (req->n_messages == 0 || req->messages[req->n_messages - 1].role != WIRE_ROLE_USER)
        wire_request_add_message(req, WIRE_ROLE_USER);
    wire_message *last = &req->messages[req->n_messages - 1];
    /* The breakpoint closes the stable prefix: the history's last block. */
    if (last->n_blocks)
        last->blocks[last->n_blocks - 1].cache_control = true;

    int64_t body = tokens_estimate_cstr(req->system) + tokens_estimate_cstr(req->system_dynamic) +
                   st->tools_est;
    for (size_t i = 0; i < req->n_messages; i++)
        body += tokens_estimate_message(&req->messages[i]);
    int64_t tail = 0;
    if (st->reminders.len) {
        wire_message_add_text(last, st->reminders.ptr)->tail = true;
        tail += tokens_estimate_text(st->reminders.ptr, st->reminders.len) + TOKENS_PER_BLOCK;
    }
    if (io->working) {
        /* The dashboard shows the pressure of this very request; the block's
         * own size is estimated from its previous rendering's order of
         * magnitude (a few hundred tokens), close enough for a percentage. */
        set_dashboard(p, cfg, io, st, pressure_tokens(&st->pr, body + tail + 300, NULL));
        char *w = working_render(io->working);
        wire_message_add_text(last, w)->tail = true;
        tail += tokens_estimate_cstr(w) + TOKENS_PER_BLOCK;
        free(w);
    }
    *est = body + tail;
    /* The reply has to fit beside the prompt (providers refuse input +
     * max_tokens over the window): a cap larger than the room left is
     * lowered to it, never below a useful minimum — past that point the
     * ladder has to make room instead. */
    int64_t window = cfg->context_window;
    if (window > 0 && req->max_tokens > 0) {
        int64_t room = window - pressure_tokens(&st->pr, *est, NULL);
        if (room < CONTEXT_MIN_OUTPUT)
            room = CONTEXT_MIN_OUTPUT;
        if (req->max_tokens > room)
            req->max_tokens = (int)room;
    }
    return 0;
}

/* --- compaction (D) ----------------------------------------------------------- */

/* The user's message the model has not answered yet, when the chain ends
 * with one: a summary written now would swallow it, so it is carried over
 * after the summary (a copy; the original stays in the file). New
 * reference or NULL. */
static json_t *unanswered_prompt(transcript *t)
{
    json_t **chain = NULL;
    size_t n = 0;
    if (transcript_active(t, &chain, &n) != 0)
        return NULL;
    json_t *copy = NULL;
    for (size_t i = n; i-- > 0;) {
        const char *type = record_type(chain[i]);
        if (!type || !record_is_conversation(type))
            continue;
        json_t *pd = json_object_get(chain[i], "providerData");
        if (record_is_user_message(chain[i]) && !json_get_bool(pd, "skipRun", false)) {
            copy = record_new(RECORD_MESSAGE);
            json_object_set_new(copy, "role", json_string("user"));
            json_object_set(copy, "content", json_object_get(chain[i], "content"));
            json_object_set_new(record_provider_data(copy, true), "carriedOverFrom",
                                json_string(record_id(chain[i])));
        }
        break;
    }
    free(chain);
    return copy;
}

/* Appends rec (stolen), then the carried-over prompt (stolen; may be NULL). */
static int append_summary(loop_io *io, json_t *rec, json_t *carried, loom_error *err)
{
    if (transcript_append_new(io->t, rec, err) != 0) {
        json_decref(carried);
        return -1;
    }
    if (carried && transcript_append_new(io->t, carried, err) != 0)
        return -1;
    return transcript_sync(io->t, err);
}

static void null_text(void *ctx, const char *d, size_t n)
{
    (void)ctx, (void)d, (void)n;
}

/* One compaction: prepared on the loop thread, its model call made there
 * (blocking) or on a thread of its own (background), finished on the loop
 * thread. */
struct compact_job {
    char *trigger;
    wire_request req;
    provider_config cfg;       /* shallow copy; the model name is the job's */
    char *first_id, *last_id;  /* the stretch of the view it summarizes */
    int64_t before;            /* its estimated tokens */
    loom_cancel cancel;        /* background: the run's end stops it */
    const loom_cancel *run_cancel;
    pthread_t thread;
    atomic_bool done;
    int rc;
    loom_error err;
    wire_usage usage;
    char *summary;
};

static void job_free(compact_job *j)
{
    if (!j)
        return;
    free(j->trigger);
    wire_request_free(&j->req);
    free(j->cfg.model);
    free(j->first_id);
    free(j->last_id);
    wire_usage_free(&j->usage);
    free(j->summary);
    free(j);
}

/* The guard, the PreCompact hook and the request. NULL when skipped (a
 * warning says why) or on error (*failed set, err filled). */
static compact_job *job_prepare(const provider_config *cfg, loop_io *io, loop_state *st,
                                const char *trigger, const char *instructions, bool *failed,
                                loom_error *err)
{
    *failed = false;
    json_t **view = NULL, *keep = NULL, **chain = NULL;
    size_t n = 0, nc = 0;
    if (active_view(io->t, &st->edits, &view, &n, &keep) != 0) {
        *failed = true;
        loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be read");
        return NULL;
    }
    if (!compact_has_new_history(view, n)) {
        /* seed 001 §8.2: a summary of a summary degenerates; say so, once. */
        loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                  json_pack("{s:s,s:s,s:s}", "kind", "compaction_skipped", "trigger", trigger,
                            "message", "nothing new since the last compaction: not compacting "
                                       "again"));
        free(view);
        json_decref(keep);
        return NULL;
    }
    if (loop_has_hooks(io, HOOK_PRE_COMPACT)) {
        hook_outcome o = loop_fire(io, HOOK_PRE_COMPACT,
                                   json_pack("{s:s,s:s}", "trigger", trigger,
                                             "custom_instructions",
                                             instructions ? instructions : ""));
        bool blocked = o.blocked;
        if (blocked)
            loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                      json_pack("{s:s,s:s,s:s+}", "kind", "compaction_skipped", "trigger",
                                trigger, "message", "a PreCompact hook blocked compaction: ",
                                o.block_reason ? o.block_reason : "no reason given"));
        hook_outcome_free(&o);
        if (blocked) {
            free(view);
            json_decref(keep);
            return NULL;
        }
    }
    json_t *user_msgs = NULL;
    if (transcript_chain(io->t, NULL, false, &chain, &nc, err) == 0) {
        user_msgs = compact_user_messages(chain, nc);
        free(chain);
    }
    compact_job *j = xcalloc(1, sizeof *j);
    j->trigger = xstrdup(trigger);
    for (size_t i = 0; i < n; i++)
        j->before += ladder_record_tokens(view[i]);
    j->first_id = n ? xstrdup(record_id(view[0])) : NULL;
    j->last_id = n ? xstrdup(record_id(view[n - 1])) : NULL;
    int max_out = cfg->max_output_tokens > 0 && cfg->max_output_tokens < COMPACT_MAX_OUTPUT
                      ? cfg->max_output_tokens
                      : COMPACT_MAX_OUTPUT;
    int64_t budget = cfg->context_window > 0 ? cfg->context_window - max_out : 100000;
    budget = budget * 9 / 10; /* room for the estimator's error */
    compact_build_request(view, n, user_msgs, instructions, budget, &j->req);
    json_decref(user_msgs);
    free(view);
    json_decref(keep);
    j->cfg = *cfg;
    j->cfg.model = xstrdup(cfg->model);
    j->req.model = xstrdup(cfg->model);
    j->req.max_tokens = max_out;
    j->req.stream = cfg->stream;
    loom_error_clear(&j->err);
    atomic_init(&j->cancel, 0);
    atomic_init(&j->done, false);
    loop_emit(io, "context.compaction_started", EV_VIS_USER, NULL,
              json_pack("{s:s,s:I}", "trigger", trigger, "tokens_before", (json_int_t)j->before));
    return j;
}

/* The model call; fills rc, err, usage and summary. */
static void job_run(compact_job *j, const loom_cancel *cancel)
{
    wire_stream_sink sink = {.on_text = null_text, .on_thinking = null_text};
    wire_response resp;
    j->rc = provider_complete(&j->cfg, &j->req, &sink, cancel, &resp, &j->err);
    if (j->rc != 0)
        return;
    j->usage = resp.usage;
    resp.usage.raw = NULL;
    char *text = wire_message_text(&resp.message);
    j->summary = compact_extract_summary(text);
    free(text);
    wire_response_free(&resp);
    if (!j->summary) {
        j->rc = -1;
        loom_error_set(&j->err, LOOM_ERR_MODEL_PROTOCOL, "the compaction reply held no summary");
    }
}

static void *job_thread(void *arg)
{
    compact_job *j = arg;
    job_run(j, &j->cancel);
    atomic_store(&j->done, true);
    return NULL;
}

/* Records the outcome. as_edit: the summary becomes a compaction edit over
 * [first, last] (background: newer records stay after it); else a summary
 * record ending the chain. 1 compacted, -1 failed (err set). */
static int job_finish(compact_job *j, loop_io *io, loop_state *st, bool as_edit,
                      loop_result *out, loom_error *err)
{
    if (out) {
        loop_add_usage(&out->usage, &j->usage);
        st->tokens_used = loop_usage_total(&out->usage);
    }
    if (j->rc != 0) {
        st->compact_failures++;
        *err = j->err;
        loop_emit(io, EV_WARNING_EMITTED, EV_VIS_USER, NULL,
                  json_pack("{s:s,s:s,s:s,s:i}", "kind", "compaction_failed", "trigger",
                            j->trigger, "message", j->err.message, "failures",
                            st->compact_failures));
        return -1;
    }
    int64_t after = tokens_estimate_cstr(j->summary);
    if (as_edit) {
        loom_str text = LOOM_STR_INIT;
        str_puts(&text, HISTORY_SUMMARY_PREFIX);
        str_puts(&text, j->summary);
        json_t *rec = record_new(RECORD_CONTEXT_EDIT);
        json_object_set_new(rec, "parentId", json_null());
        json_set_str(rec, "kind", "compact");
        json_object_set_new(rec, "savedTokens", json_integer(j->before - after));
        json_object_set_new(rec, "collapse",
                            json_pack("{s:s,s:s,s:s,s:b}", "first", j->first_id, "last",
                                      j->last_id, "text", str_cstr(&text), "compacted", 1));
        json_object_set_new(record_provider_data(rec, true), "compactType",
                            json_string(j->trigger));
        str_free(&text);
        ladder_edits_add(&st->edits, rec);
        if (transcript_append_new(io->t, rec, err) != 0 || transcript_sync(io->t, err) != 0)
            return -1;
    } else {
        json_t *rec = record_summary(j->summary, NULL);
        json_t *pd = record_provider_data(rec, true);
        json_object_set_new(pd, "compactType", json_string(j->trigger));
        json_object_set_new(pd, "isCompacted", json_true());
        json_object_set_new(pd, "tokensBefore", json_integer(j->before));
        if (append_summary(io, rec, unanswered_prompt(io->t), err) != 0)
            return -1;
    }
    st->compact_failures = 0;
    pressure_reset_shape(&st->pr);
    if (loop_has_hooks(io, HOOK_POST_COMPACT)) {
        hook_outcome o = loop_fire(io, HOOK_POST_COMPACT,
                                   json_pack("{s:s,s:s}", "trigger", j->trigger,
                                             "compact_summary", j->summary));
        hook_outcome_free(&o);
    }
    loop_emit(io, "context.compacted", EV_VIS_USER, NULL,
              json_pack("{s:s,s:s,s:b,s:I,s:I,s:I}", "step", "compact", "trigger", j->trigger,
                        "background", as_edit, "tokens_before", (json_int_t)j->before,
                        "tokens_after", (json_int_t)after, "saved_tokens",
                        (json_int_t)(j->before - after)));
    return 1;
}

int context_compact(const loop_params *p, const provider_config *cfg, loop_io *io,
                    loop_state *st, const char *trigger, const char *instructions,
                    loop_result *out, loom_error *err)
{
    (void)p;
    bool failed;
    compact_job *j = job_prepare(cfg, io, st, trigger, instructions, &failed, err);
    if (!j)
        return failed ? -1 : 0;
    job_run(j, io->cancel);
    int rc = job_finish(j, io, st, false, out, err);
    job_free(j);
    return rc;
}

/* --- background compaction ----------------------------------------------------- */

static bool background_start(const provider_config *cfg, loop_io *io, loop_state *st)
{
    bool failed;
    loom_error err;
    compact_job *j = job_prepare(cfg, io, st, "auto", NULL, &failed, &err);
    if (!j || !j->first_id || !j->last_id) {
        job_free(j);
        return false;
    }
    if (pthread_create(&j->thread, NULL, job_thread, j) != 0) {
        job_free(j);
        return false;
    }
    st->background = j;
    return true;
}

/* Applies a finished background compaction (wait: block until it is).
 * 1 applied, 0 nothing to apply, -1 failed. */
static int background_collect(loop_io *io, loop_state *st, bool wait, loop_result *out,
                              loom_error *err)
{
    compact_job *j = st->background;
    if (!j || (!wait && !atomic_load(&j->done)))
        return 0;
    pthread_join(j->thread, NULL);
    st->background = NULL;
    int rc = job_finish(j, io, st, true, out, err);
    job_free(j);
    return rc;
}

void context_background_stop(const loop_params *p, loop_io *io, loop_state *st,
                             loop_result *out)
{
    compact_job *j = st->background;
    if (!j)
        return;
    atomic_store(&j->cancel, CANCEL_RUN);
    pthread_join(j->thread, NULL);
    st->background = NULL;
    if (out && loop_usage_total(&j->usage) > 0)
        loop_count_side_usage(p, io, st, out, "compaction", NULL, NULL, &j->usage, 1);
    job_free(j);
}

/* --- renew ------------------------------------------------------------------ */

int context_renew(const loop_params *p, const provider_config *cfg, loop_io *io,
                  loop_state *st, const char *reason, loom_error *err)
{
    /* Steps 1–4: C_working to M_f, then back: what the next request shows is
     * what the snapshot holds, so a renew can never silently drop it. */
    if (io->working && io->mf_dir) {
        if (working_save(io->working, io->mf_dir, err) != 0 ||
            working_load(io->working, io->mf_dir, err) != 0)
            return -1;
    }
    json_t **view = NULL, *keep = NULL;
    size_t n = 0;
    if (active_view(io->t, &st->edits, &view, &n, &keep) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be read");
    char *goal = io->working ? working_goal(io->working) : xstrdup("");
    int64_t window = cfg->context_window > 0 ? cfg->context_window : 100000;
    renew_stats rs;
    /* Step 5: compress C_history by score. */
    char *text = renew_compress(view, n, goal, (int64_t)((double)window * RENEW_BUDGET_SHARE),
                                p->renew_lambda > 0 ? p->renew_lambda : RENEW_DEFAULT_LAMBDA,
                                st->turn, &rs);
    free(view);
    json_decref(keep);
    free(goal);
    json_t *rec = record_summary(text, NULL);
    json_t *pd = record_provider_data(rec, true);
    json_object_set_new(pd, "renew", json_true());
    json_object_set_new(pd, "renewReason", json_string(reason));
    json_object_set_new(pd, "tokensBefore", json_integer(rs.tokens_before));
    free(text);
    if (append_summary(io, rec, unanswered_prompt(io->t), err) != 0)
        return -1;
    /* Step 6: reload C_memory; the rest of new_C is assembled as always. */
    if (p->reload_system_dynamic) {
        char *dyn = p->reload_system_dynamic(p->reload_ctx);
        if (dyn) {
            free(st->system_dynamic);
            st->system_dynamic = dyn;
        }
    }
    pressure_reset_shape(&st->pr);
    loop_emit(io, "context.renewed", EV_VIS_USER, NULL,
              json_pack("{s:s,s:i,s:I,s:I,s:i,s:i,s:i,s:s?}", "reason", reason, "turn", st->turn,
                        "tokens_before", (json_int_t)rs.tokens_before, "tokens_after",
                        (json_int_t)rs.tokens_after, "items", (int)rs.items, "kept",
                        (int)rs.kept, "core", (int)rs.core, "mf_dir", io->mf_dir));
    /* Step 7: the loop resumes; the goal rides in C_working. */
    return 0;
}

/* --- the ladder ---------------------------------------------------------------- */

static int apply_local(loop_io *io, loop_state *st, ladder_step step, json_t *rec,
                       int64_t saved, double rho, loom_error *err)
{
    ladder_edits_add(&st->edits, rec);
    json_object_set_new(rec, "rho", json_real((double)(int)(rho * 1000) / 1000.0));
    if (transcript_append_new(io->t, rec, err) != 0)
        return -1;
    pressure_reset_shape(&st->pr);
    loop_emit(io, "context.compacted", EV_VIS_USER, NULL,
              json_pack("{s:s,s:s,s:I,s:f}", "step", ladder_step_name(step), "trigger", "auto",
                        "saved_tokens", (json_int_t)saved, "rho", rho));
    return 1;
}

/* One local step (A–C), falling to the next lower one when it would free
 * nothing. 1 applied, 0 none could, -1 session error. */
static int local_step(const ladder_config *lc, loop_io *io, loop_state *st, ladder_step from,
                      int64_t window, double rho, loom_error *err)
{
    json_t **view = NULL, *keep = NULL;
    size_t n = 0;
    if (active_view(io->t, &st->edits, &view, &n, &keep) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be read");
    int rc = 0;
    for (ladder_step s = from; s >= LADDER_SNIP && rc == 0; s--) {
        int64_t saved = 0;
        json_t *rec = s == LADDER_COLLAPSE ? ladder_collapse(lc, view, n, &saved)
                      : s == LADDER_MICRO  ? ladder_micro(lc, view, n, &saved)
                                           : ladder_snip(lc, view, n, window, &saved);
        if (rec)
            rc = apply_local(io, st, s, rec, saved, rho, err);
    }
    free(view);
    json_decref(keep);
    return rc;
}

int context_govern(const loop_params *p, const provider_config *cfg, loop_io *io,
                   loop_state *st, int64_t est, loop_result *out, loom_error *err)
{
    ladder_config buf;
    const ladder_config *lc = ladder_of(p, &buf);
    st->pr.window = cfg->context_window;
    pressure_source src;
    int64_t tokens = pressure_tokens(&st->pr, est, &src);
    double rho = pressure_rho(&st->pr, tokens);
    set_dashboard(p, cfg, io, st, tokens);
    log_event(LOG_DEBUG, "context",
              json_pack("{s:I,s:I,s:f,s:s}", "tokens", (json_int_t)tokens, "window",
                        (json_int_t)cfg->context_window, "rho", rho, "source",
                        pressure_source_name(src)),
              "pressure");

    char *asked = io->working ? working_take_renew(io->working) : NULL;
    if (asked) {
        int rc = context_renew(p, cfg, io, st, "requested", err);
        free(asked);
        return rc < 0 ? -1 : 1;
    }
    if (cfg->context_window <= 0)
        return 0;
    ladder_step step = ladder_step_for(lc, rho);
    if (step == LADDER_NONE)
        return 0;
    if (step == LADDER_RENEW)
        return context_renew(p, cfg, io, st, "forced", err) < 0 ? -1 : 1;
    if (p->no_auto_compact)
        return 0;
    bool fits = tokens + cfg->max_output_tokens <= cfg->context_window;
    if (st->background) {
        /* A summary is being written: take it when it is ready, or wait for
         * it when the next request would not fit without it. */
        loom_error berr;
        loom_error_clear(&berr);
        int rc = background_collect(io, st, !fits, out, &berr);
        if (rc == 1)
            return 1;
        if (fits)
            return 0; /* no second step while one is under way */
    }
    if (step == LADDER_COMPACT && st->compact_failures < COMPACT_MAX_FAILURES) {
        /* seed 001 §8.2: in the background while the request still fits,
         * blocking only when it would not. */
        if (fits && background_start(cfg, io, st))
            return 0;
        loom_error cerr;
        loom_error_clear(&cerr);
        int rc = context_compact(p, cfg, io, st, "auto", NULL, out, &cerr);
        if (rc == 1)
            return 1;
        if (rc < 0 && cerr.code == LOOM_ERR_RUN_CANCELLED) {
            *err = cerr;
            return -1;
        }
        /* Skipped or failed: a cheaper step may still make room. */
    }
    return local_step(lc, io, st, step >= LADDER_COLLAPSE ? LADDER_COLLAPSE : step,
                      cfg->context_window, rho, err);
}

int64_t context_window_from_refusal(const char *m)
{
    if (!m)
        return 0;
    const char *gt = strstr(m, "tokens > ");
    if (gt) {
        long long v = strtoll(gt + strlen("tokens > "), NULL, 10);
        if (v > 0)
            return v;
    }
    const char *mx = strstr(m, "maximum context length is ");
    if (mx) {
        long long v = strtoll(mx + strlen("maximum context length is "), NULL, 10);
        if (v > 0)
            return v;
    }
    return 0;
}

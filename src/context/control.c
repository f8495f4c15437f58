/* control.c — assembly, pressure, the ladder, compaction and renew (see
 * control.h). Everything it reports goes through the caller's port; it
 * includes nothing above the harness layer. Threading: the caller's thread,
 * except a background compaction's model call (job_thread), which touches
 * only its own job until the caller joins it. */
#include "context/control.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/event.h"
#include "base/json.h"

#include "base/log.h"
#include "context/compact.h"
#include "context/history_keep.h"
#include "context/renew.h"
#include "context/tokens.h"
#include "context/mf_state.h"
#include "context/working.h"
#include "context/working_render.h"
#include "provider/helper.h"
#include "provider/models.h"
#include "session/history.h"
#include "session/record.h"

/* Auto-compaction gives up after this many failures in a row (seed 001 §8). */
#define COMPACT_MAX_FAILURES 3
/* The summary's own output cap: 1,000 words ≈ 2,600 tokens, with room. */
#define COMPACT_MAX_OUTPUT 4096
/* The smallest output cap a request is lowered to when the window is tight. */
#define CONTEXT_MIN_OUTPUT 1024
/* The answer's room beside a thinking budget when max_tokens has to be
 * raised over it: Loom's own default reply cap (provider/anthropic.c). */
#define CONTEXT_THINKING_ANSWER_ROOM 4096
/* renew keeps this share of the window for the compressed history. */
#define RENEW_BUDGET_SHARE 0.25

static const ladder_config *ladder_of(const context_config *conf, ladder_config *buf)
{
    if (conf && conf->ladder.compact > 0)
        return &conf->ladder;
    ladder_config_default(buf);
    return buf;
}

/* --- the port ------------------------------------------------------------- */

static void port_emit(const context_env *env, loom_event_type type, json_t *payload)
{
    if (env->port.emit)
        env->port.emit(env->port.ctx, type, payload);
    else
        json_decref(payload);
}

static void port_warn(const context_env *env, json_t *payload)
{
    if (env->port.warn)
        env->port.warn(env->port.ctx, payload);
    else
        json_decref(payload);
}

/* True when a hook blocked; *why (may be NULL) gets its reason. */
static bool port_fire(const context_env *env, context_hook ev, json_t *extra, char **why)
{
    char *reason = NULL;
    bool blocked = false;
    if (env->port.fire_hook)
        blocked = env->port.fire_hook(env->port.ctx, ev, extra, &reason);
    else
        json_decref(extra);
    if (why)
        *why = reason;
    else
        free(reason);
    return blocked;
}

static void port_add_usage(const context_env *env, const msg_usage *u)
{
    if (env->port.add_usage)
        env->port.add_usage(env->port.ctx, u);
}

/* --- the state ------------------------------------------------------------ */

void context_state_init(context_state *cs)
{
    memset(cs, 0, sizeof *cs);
    ladder_edits_init(&cs->edits);
    history_keep_init(&cs->keep);
}

void context_state_begin(context_state *cs, transcript *t, int64_t window)
{
    ladder_edits_free(&cs->edits);
    ladder_edits_init(&cs->edits);
    ladder_edits_load(&cs->edits, t);
    /* Edits read again are a new stamp anyway; the keep starts over once
     * per run, from the records as they are now. */
    history_keep_reset(&cs->keep);
    cs->pr.window = window;
    cs->compact_failures = 0;
    free(cs->system_dynamic);
    cs->system_dynamic = NULL;
}

void context_state_free(context_state *cs)
{
    msg_usage spent;
    context_background_stop(cs, &spent);
    msg_usage_free(&spent);
    ladder_edits_free(&cs->edits);
    history_keep_free(&cs->keep);
    free(cs->system_dynamic);
    memset(cs, 0, sizeof *cs);
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

static void set_dashboard(const context_env *env, const provider_config *cfg, int64_t tokens)
{
    if (!env->working)
        return;
    dashboard d = working_get_dashboard(env->working);
    d.tokens = tokens;
    d.window = cfg->context_window;
    d.budget_total = env->budget_total;
    d.budget_used = env->budget_used;
    d.turn = env->turn;
    working_set_dashboard(env->working, &d);
}

/* The history part of the request: the kept one (history_keep.h), or made
 * from the records (fresh). *borrowed_tokens: the estimate of the messages
 * req borrows. */
static int history_part(context_state *cs, const context_env *env, bool fresh, msg_request *req,
                        int64_t *borrowed_tokens, loom_error *err)
{
    *borrowed_tokens = 0;
    if (!fresh) {
        if (!history_keep_request(&cs->keep, env->t, &cs->edits, req, borrowed_tokens))
            return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT,
                                  "the session could not be rebuilt");
        return 0;
    }
    json_t **view = NULL, *keep = NULL;
    size_t n = 0;
    if (active_view(env->t, &cs->edits, &view, &n, &keep) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be rebuilt");
    history_from_records(view, n, req, NULL);
    free(view);
    json_decref(keep);
    return 0;
}

static int build_request(context_state *cs, const context_env *env, const provider_config *cfg,
                         const loom_str *tail_text, bool fresh, msg_request *req, int64_t *est,
                         loom_error *err)
{
    memset(req, 0, sizeof *req);
    req->model = xstrdup(cfg->model);
    req->system = xstrdup(env->system_static);
    const char *dyn = cs->system_dynamic ? cs->system_dynamic : env->system_dynamic;
    if (env->system_extensions && *env->system_extensions) {
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "%s\n\n%s", dyn ? dyn : "", env->system_extensions);
        req->system_dynamic = str_steal(&s);
    } else {
        req->system_dynamic = xstrdup(dyn);
    }
    req->system_cache = true;
    req->max_tokens = cfg->max_output_tokens;
    req->temperature = -1;
    req->stream = cfg->stream;
    req->thinking_budget = cfg->thinking_budget > 0 ? cfg->thinking_budget : 0;
    if (req->thinking_budget && req->max_tokens <= req->thinking_budget) {
        /* The API wants budget_tokens < max_tokens: a cap set below the
         * budget is raised to leave the answer room, up to the model's
         * published cap (past that the codec lowers the budget instead). */
        int64_t want = (int64_t)req->thinking_budget + CONTEXT_THINKING_ANSWER_ROOM;
        int64_t cap = models_lookup(req->model).max_output_tokens;
        if (want > cap)
            want = cap;
        if (want > req->max_tokens)
            req->max_tokens = (int)want;
    }
    /* One key per session, as Codex does, so its turns share a cache. */
    req->cache_key = xstrdup(transcript_session_id(env->t));
    int64_t borrowed_tokens;
    if (history_part(cs, env, fresh, req, &borrowed_tokens, err) != 0)
        return -1;
    if (req->n_messages == 0 || req->messages[req->n_messages - 1].role != MSG_ROLE_USER)
        msg_request_add_message(req, MSG_ROLE_USER);
    msg_message *last = &req->messages[req->n_messages - 1];
    /* The breakpoint closes the stable prefix: the history's last block. */
    if (last->n_blocks)
        last->blocks[last->n_blocks - 1].cache_control = true;

    int64_t body = tokens_estimate_cstr(req->system) + tokens_estimate_cstr(req->system_dynamic) +
                   env->tools_est + borrowed_tokens;
    for (size_t i = req->n_borrowed; i < req->n_messages; i++)
        body += tokens_estimate_message(&req->messages[i]);
    int64_t tail = 0;
    if (tail_text && tail_text->len) {
        msg_message_add_text(last, tail_text->ptr)->tail = true;
        tail += tokens_estimate_text(tail_text->ptr, tail_text->len) + TOKENS_PER_BLOCK;
    }
    if (env->working) {
        /* The dashboard shows the pressure of this very request; the block's
         * own size is estimated from its previous rendering's order of
         * magnitude (a few hundred tokens), close enough for a percentage. */
        set_dashboard(env, cfg, pressure_tokens(&cs->pr, body + tail + 300, NULL));
        char *w = working_render(env->working);
        msg_message_add_text(last, w)->tail = true;
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
        int64_t room = window - pressure_tokens(&cs->pr, *est, NULL);
        if (room < CONTEXT_MIN_OUTPUT)
            room = CONTEXT_MIN_OUTPUT;
        if (req->max_tokens > room)
            req->max_tokens = (int)room;
    }
    return 0;
}

int context_build_request(context_state *cs, const context_env *env, const provider_config *cfg,
                          const loom_str *tail, msg_request *req, int64_t *est, loom_error *err)
{
    return build_request(cs, env, cfg, tail, false, req, est, err);
}

int context_build_request_fresh(context_state *cs, const context_env *env,
                                const provider_config *cfg, const loom_str *tail,
                                msg_request *req, int64_t *est, loom_error *err)
{
    return build_request(cs, env, cfg, tail, true, req, est, err);
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
static int append_summary(transcript *t, json_t *rec, json_t *carried, loom_error *err)
{
    if (transcript_append_new(t, rec, err) != 0) {
        json_decref(carried);
        return -1;
    }
    if (carried && transcript_append_new(t, carried, err) != 0)
        return -1;
    return transcript_sync(t, err);
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
    msg_request req;
    provider_config cfg;       /* shallow copy; the model name is the job's */
    provider_port model;
    struct helper_router *helpers;  /* the env's, borrowed: the session outlives the job */
    const void *helper_owner;
    char *first_id, *last_id;  /* the stretch of the view it summarizes */
    int64_t before;            /* its estimated tokens */
    loom_cancel cancel;        /* background: the run's end stops it */
    const loom_cancel *run_cancel;
    pthread_t thread;
    atomic_bool done;
    int rc;
    loom_error err;
    msg_usage usage;
    char *summary;
};

static void job_free(compact_job *j)
{
    if (!j)
        return;
    free(j->trigger);
    msg_request_free(&j->req);
    free(j->cfg.model);
    free(j->first_id);
    free(j->last_id);
    msg_usage_free(&j->usage);
    free(j->summary);
    free(j);
}

/* The guard, the PreCompact hook and the request. NULL when skipped (a
 * warning says why) or on error (*failed set, err filled). */
static compact_job *job_prepare(const provider_config *cfg, context_state *cs,
                                const context_env *env, const char *trigger,
                                const char *instructions, bool *failed, loom_error *err)
{
    *failed = false;
    json_t **view = NULL, *keep = NULL, **chain = NULL;
    size_t n = 0, nc = 0;
    if (active_view(env->t, &cs->edits, &view, &n, &keep) != 0) {
        *failed = true;
        loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be read");
        return NULL;
    }
    if (!compact_has_new_history(view, n)) {
        /* seed 001 §8.2: a summary of a summary degenerates; say so, once. */
        port_warn(env, event_warning_compaction_skipped(trigger, "nothing new since the last "
                                                                "compaction: not compacting "
                                                                "again"));
        free(view);
        json_decref(keep);
        return NULL;
    }
    char *why = NULL;
    if (port_fire(env, CONTEXT_HOOK_PRE_COMPACT,
                  json_pack("{s:s,s:s}", "trigger", trigger, "custom_instructions",
                            instructions ? instructions : ""),
                  &why)) {
        port_warn(env, event_warning_compaction_skipped(
                           trigger, "a PreCompact hook blocked compaction: %s",
                           why ? why : "no reason given"));
        free(why);
        free(view);
        json_decref(keep);
        return NULL;
    }
    json_t *user_msgs = NULL;
    if (transcript_chain(env->t, NULL, false, &chain, &nc, err) == 0) {
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
    j->model = env->port.model;
    j->helpers = env->port.helpers;
    j->helper_owner = env->port.helper_owner;
    j->req.model = xstrdup(cfg->model);
    j->req.cache_key = xstrdup(transcript_session_id(env->t));
    j->req.max_tokens = max_out;
    j->req.stream = cfg->stream;
    loom_error_clear(&j->err);
    atomic_init(&j->cancel, 0);
    atomic_init(&j->done, false);
    port_emit(env, LOOM_EV_CONTEXT_COMPACTION_STARTED,
              event_context_compaction_started(trigger, j->before));
    return j;
}

/* The model call; fills rc, err, usage and summary. */
static void job_run(compact_job *j, const loom_cancel *cancel)
{
    provider_stream_sink sink = {.on_text = null_text, .on_thinking = null_text};
    msg_response resp;
    /* A helper call of the main tier (routable in settings); its tokens
     * reach the run through the context port below, hence `counted`. */
    helper_spec spec = {.purpose = HELPER_COMPACTION, .tier = HELPER_TIER_DEFAULT,
                        .base = &j->cfg, .port = &j->model, .sink = &sink, .counted = true,
                        .owner = j->helper_owner};
    j->rc = helper_call(j->helpers, &spec, &j->req, cancel, &resp, &j->err);
    if (j->rc != 0)
        return;
    j->usage = resp.usage;
    resp.usage.raw = NULL;
    char *text = msg_message_text(&resp.message);
    j->summary = compact_extract_summary(text);
    free(text);
    msg_response_free(&resp);
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
static int job_finish(compact_job *j, context_state *cs, const context_env *env, bool as_edit,
                      loom_error *err)
{
    port_add_usage(env, &j->usage);
    if (j->rc != 0) {
        cs->compact_failures++;
        *err = j->err;
        port_warn(env, event_warning_compaction_failed(j->trigger, j->err.message,
                                                       cs->compact_failures));
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
        ladder_edits_add(&cs->edits, rec);
        if (transcript_append_new(env->t, rec, err) != 0 || transcript_sync(env->t, err) != 0)
            return -1;
    } else {
        json_t *rec = record_summary(j->summary, NULL);
        json_t *pd = record_provider_data(rec, true);
        json_object_set_new(pd, "compactType", json_string(j->trigger));
        json_object_set_new(pd, "isCompacted", json_true());
        json_object_set_new(pd, "tokensBefore", json_integer(j->before));
        if (append_summary(env->t, rec, unanswered_prompt(env->t), err) != 0)
            return -1;
    }
    cs->compact_failures = 0;
    pressure_reset_shape(&cs->pr);
    history_keep_reset(&cs->keep); /* the history changed under it: start over */
    port_fire(env, CONTEXT_HOOK_POST_COMPACT,
              json_pack("{s:s,s:s}", "trigger", j->trigger, "compact_summary", j->summary), NULL);
    port_emit(env, LOOM_EV_CONTEXT_COMPACTED,
              event_context_compacted_summary(j->trigger, as_edit, j->before, after));
    return 1;
}

int context_compact(context_state *cs, const context_env *env, const provider_config *cfg,
                    const char *trigger, const char *instructions, loom_error *err)
{
    bool failed;
    compact_job *j = job_prepare(cfg, cs, env, trigger, instructions, &failed, err);
    if (!j)
        return failed ? -1 : 0;
    job_run(j, env->cancel);
    int rc = job_finish(j, cs, env, false, err);
    job_free(j);
    return rc;
}

/* --- background compaction ----------------------------------------------------- */

static bool background_start(const provider_config *cfg, context_state *cs,
                             const context_env *env)
{
    bool failed;
    loom_error err;
    compact_job *j = job_prepare(cfg, cs, env, "auto", NULL, &failed, &err);
    if (!j || !j->first_id || !j->last_id) {
        job_free(j);
        return false;
    }
    if (pthread_create(&j->thread, NULL, job_thread, j) != 0) {
        job_free(j);
        return false;
    }
    cs->background = j;
    return true;
}

/* Applies a finished background compaction (wait: block until it is).
 * 1 applied, 0 nothing to apply, -1 failed. */
static int background_collect(context_state *cs, const context_env *env, bool wait,
                              loom_error *err)
{
    compact_job *j = cs->background;
    if (!j || (!wait && !atomic_load(&j->done)))
        return 0;
    pthread_join(j->thread, NULL);
    cs->background = NULL;
    int rc = job_finish(j, cs, env, true, err);
    job_free(j);
    return rc;
}

unsigned context_background_stop(context_state *cs, msg_usage *spent)
{
    memset(spent, 0, sizeof *spent);
    compact_job *j = cs->background;
    if (!j)
        return 0;
    atomic_store(&j->cancel, CANCEL_RUN);
    pthread_join(j->thread, NULL);
    cs->background = NULL;
    unsigned calls = 0;
    if (msg_usage_total(&j->usage) > 0) {
        *spent = j->usage;
        spent->raw = NULL;
        calls = 1;
    }
    job_free(j);
    return calls;
}

/* --- renew ------------------------------------------------------------------ */

int context_renew(context_state *cs, const context_env *env, const provider_config *cfg,
                  const char *reason, loom_error *err)
{
    /* Steps 1–4: C_working to M_f, then back: what the next request shows is
     * what the snapshot holds, so a renew can never silently drop it. */
    if (env->working && env->mf_dir) {
        if (working_save(env->working, env->mf_dir, err) != 0 ||
            working_load(env->working, env->mf_dir, err) != 0)
            return -1;
    }
    json_t **view = NULL, *keep = NULL;
    size_t n = 0;
    if (active_view(env->t, &cs->edits, &view, &n, &keep) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be read");
    char *goal = env->working ? working_goal(env->working) : xstrdup("");
    int64_t window = cfg->context_window > 0 ? cfg->context_window : 100000;
    renew_stats rs;
    /* Step 5: compress C_history by score. */
    char *text = renew_compress(view, n, goal, (int64_t)((double)window * RENEW_BUDGET_SHARE),
                                env->conf && env->conf->renew_lambda > 0 ? env->conf->renew_lambda
                                                                  : RENEW_DEFAULT_LAMBDA,
                                env->turn, &rs);
    free(view);
    json_decref(keep);
    free(goal);
    json_t *rec = record_summary(text, NULL);
    json_t *pd = record_provider_data(rec, true);
    json_object_set_new(pd, "renew", json_true());
    json_object_set_new(pd, "renewReason", json_string(reason));
    json_object_set_new(pd, "tokensBefore", json_integer(rs.tokens_before));
    free(text);
    if (append_summary(env->t, rec, unanswered_prompt(env->t), err) != 0)
        return -1;
    /* Step 6: reload C_memory; the rest of new_C is assembled as always. */
    if (env->conf && env->conf->reload_system_dynamic) {
        char *dyn = env->conf->reload_system_dynamic(env->conf->reload_ctx);
        if (dyn) {
            free(cs->system_dynamic);
            cs->system_dynamic = dyn;
        }
    }
    pressure_reset_shape(&cs->pr);
    history_keep_reset(&cs->keep); /* the history changed under it: start over */
    port_emit(env, LOOM_EV_CONTEXT_RENEWED,
              event_context_renewed(reason, env->turn, rs.tokens_before, rs.tokens_after,
                                    (int)rs.items, (int)rs.kept, (int)rs.core, env->mf_dir));
    /* Step 7: the loop resumes; the goal rides in C_working. */
    return 0;
}

/* --- the ladder ---------------------------------------------------------------- */

static int apply_local(context_state *cs, const context_env *env, ladder_step step,
                       json_t *rec, int64_t saved, double rho, loom_error *err)
{
    ladder_edits_add(&cs->edits, rec);
    json_object_set_new(rec, "rho", json_real((double)(int)(rho * 1000) / 1000.0));
    if (transcript_append_new(env->t, rec, err) != 0)
        return -1;
    pressure_reset_shape(&cs->pr);
    history_keep_reset(&cs->keep); /* the history changed under it: start over */
    port_emit(env, LOOM_EV_CONTEXT_COMPACTED,
              event_context_compacted_step(ladder_step_name(step), saved, rho));
    return 1;
}

/* One local step (A–C), falling to the next lower one when it would free
 * nothing. 1 applied, 0 none could, -1 session error. */
static int local_step(const ladder_config *lc, context_state *cs, const context_env *env,
                      ladder_step from, int64_t window, double rho, loom_error *err)
{
    json_t **view = NULL, *keep = NULL;
    size_t n = 0;
    if (active_view(env->t, &cs->edits, &view, &n, &keep) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "the session could not be read");
    int rc = 0;
    for (ladder_step s = from; s >= LADDER_SNIP && rc == 0; s--) {
        int64_t saved = 0;
        json_t *rec = s == LADDER_COLLAPSE ? ladder_collapse(lc, view, n, &saved)
                      : s == LADDER_MICRO  ? ladder_micro(lc, view, n, &saved)
                                           : ladder_snip(lc, view, n, window, &saved);
        if (rec)
            rc = apply_local(cs, env, s, rec, saved, rho, err);
    }
    free(view);
    json_decref(keep);
    return rc;
}

int context_govern(context_state *cs, const context_env *env, const provider_config *cfg,
                   int64_t est, loom_error *err)
{
    ladder_config buf;
    const ladder_config *lc = ladder_of(env->conf, &buf);
    cs->pr.window = cfg->context_window;
    pressure_source src;
    int64_t tokens = pressure_tokens(&cs->pr, est, &src);
    double rho = pressure_rho(&cs->pr, tokens);
    set_dashboard(env, cfg, tokens);
    log_event(LOG_DEBUG, "context",
              json_pack("{s:I,s:I,s:f,s:s}", "tokens", (json_int_t)tokens, "window",
                        (json_int_t)cfg->context_window, "rho", rho, "source",
                        pressure_source_name(src)),
              "pressure");

    char *asked = env->working ? working_take_renew(env->working) : NULL;
    if (asked) {
        int rc = context_renew(cs, env, cfg, "requested", err);
        free(asked);
        return rc < 0 ? -1 : 1;
    }
    if (cfg->context_window <= 0)
        return 0;
    ladder_step step = ladder_step_for(lc, rho);
    if (step == LADDER_NONE)
        return 0;
    if (step == LADDER_RENEW)
        return context_renew(cs, env, cfg, "forced", err) < 0 ? -1 : 1;
    if (env->conf && env->conf->no_auto_compact)
        return 0;
    bool fits = tokens + cfg->max_output_tokens <= cfg->context_window;
    if (cs->background) {
        /* A summary is being written: take it when it is ready, or wait for
         * it when the next request would not fit without it. */
        loom_error berr;
        loom_error_clear(&berr);
        int rc = background_collect(cs, env, !fits, &berr);
        if (rc == 1)
            return 1;
        if (fits)
            return 0; /* no second step while one is under way */
    }
    if (step == LADDER_COMPACT && cs->compact_failures < COMPACT_MAX_FAILURES) {
        /* seed 001 §8.2: in the background while the request still fits,
         * blocking only when it would not. */
        if (fits && background_start(cfg, cs, env))
            return 0;
        loom_error cerr;
        loom_error_clear(&cerr);
        int rc = context_compact(cs, env, cfg, "auto", NULL, &cerr);
        if (rc == 1)
            return 1;
        if (rc < 0 && cerr.code == LOOM_ERR_RUN_CANCELLED) {
            *err = cerr;
            return -1;
        }
        /* Skipped or failed: a cheaper step may still make room. */
    }
    return local_step(lc, cs, env, step >= LADDER_COLLAPSE ? LADDER_COLLAPSE : step,
                      cfg->context_window, rho, err);
}

/* --- reactive compaction --------------------------------------------------- */

int context_react_too_long(context_state *cs, const context_env *env, provider_config *cfg,
                           int64_t est, const char *refusal)
{
    int64_t sent = pressure_tokens(&cs->pr, est, NULL);
    int64_t learned = provider_refusal_window(refusal);
    if (learned <= 0 || learned >= sent)
        learned = sent * 3 / 4; /* told nothing usable: assume a quarter less fits */
    if (cfg->context_window <= 0 || learned < cfg->context_window) {
        cfg->context_window = learned;
        cs->pr.window = learned;
        if (cfg->max_output_tokens > learned / 4)
            cfg->max_output_tokens = (int)(learned / 4);
    }
    port_warn(env, event_warning_prompt_too_long(refusal, cfg->context_window));
    loom_error cerr;
    loom_error_clear(&cerr);
    int rc = context_compact(cs, env, cfg, "reactive", NULL, &cerr);
    if (rc <= 0 && cerr.code != LOOM_ERR_RUN_CANCELLED)
        rc = context_renew(cs, env, cfg, "reactive", &cerr) == 0 ? 1 : -1;
    return rc > 0 ? 1 : -1;
}

/* run.c — loom_run: a goal carried out on its own thread, reported as
 * events.
 *
 * The run thread owns the loop; events go to the caller's callback on
 * whichever thread produced them (the run thread or a tool pool thread, so
 * emission is serialized by a mutex) and, when asked, into a queue that
 * loom_run_next_event drains. */
#include <sched.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/internal.h"
#include "api/guard.h"
#include "api/io_port.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "base/uuid.h"
#include "context/working.h"
#include "heartbeat/heartbeat.h"
#include "governance/governance.h"
#include "base/event.h"

/* Where a run may end (queued, running and waiting_approval are on the
 * way; paused ends a library run, which a next one continues). */
static inline bool state_is_final(loom_run_state st) /* inline: only asserts call it */
{
    return st == LOOM_RUN_COMPLETED || st == LOOM_RUN_FAILED || st == LOOM_RUN_CANCELLED ||
           st == LOOM_RUN_BLOCKED_BY_POLICY || st == LOOM_RUN_BLOCKED_BY_CAPABILITY ||
           st == LOOM_RUN_PAUSED;
}

typedef struct queued {
    loom_event ev;
    char *type;
    char *json;
    char *text;
    char *channel;
    struct queued *next;
} queued;

struct loom_run {
    loom_session *session;
    char *goal;
    char run_id[UUID_STR_LEN];
    loom_run_options opts;
    api_io io;                  /* opts.io as the tools' port */
    loom_cancel cancel;
    /* The heartbeat (NULL when off): loom_run_signal reaches it from a
     * signal handler, counted in hb_users so the run can stop it safely. */
    heartbeat *_Atomic hb;
    atomic_int hb_users;
    atomic_bool act_running;
    json_t *_Atomic stop_event;  /* the external signal that ended the run */
    _Atomic int state;
    atomic_int pending_approvals; /* approval.requested not yet resolved */
    atomic_bool pause;            /* loom_run_pause: stop at the next turn boundary */
    bool resume_note;             /* loom_run_continue: the goal is a note, not a prompt */
    pthread_t thread;
    bool joined;
    pthread_mutex_t lock;       /* guards the queue, done, and event emission order */
    pthread_cond_t cond;
    queued *head, *tail;
    bool done;
        char *result_json;
    loom_stop_reason stop_reason; /* set with result_json */
    otel_tracer *tracer;          /* NULL when telemetry is off (api/telemetry.c) */
};



static void deliver(loom_run *r, loom_event_type kind, json_t *ev)
{
    const char *type = loom_event_type_name(kind);
    char *json = json_dump_compact(ev);
    const json_t *payload = json_object_get(ev, "payload");
    char *text = NULL, *channel = NULL;
    if (kind == LOOM_EV_TOKEN_DELTA) {
        text = xstrdup(json_string_value(json_object_get(payload, "text")));
        channel = xstrdup(json_string_value(json_object_get(payload, "channel")));
    }
    json_decref(ev);
    if (!json) {
        free(text);
        free(channel);
        return;
    }
    pthread_mutex_lock(&r->lock);
    if (r->opts.on_event) {
        loom_event e = {type, json, text, channel, kind};
        r->opts.on_event(r->opts.event_ctx, &e);
    }
    if (r->opts.queue_events) {
        queued *q = xcalloc(1, sizeof *q);
        q->type = xstrdup(type);
        q->json = json;
        q->ev.type = q->type;
        q->ev.json = q->json;
        q->ev.text = q->text = text;
        q->ev.channel = q->channel = channel;
        q->ev.kind = kind;
        text = channel = NULL;
        if (r->tail)
            r->tail->next = q;
        else
            r->head = q;
        r->tail = q;
        json = NULL;
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->lock);
    free(json);
    free(text);
    free(channel);
}

/* seed 000 §11: a run waiting for a person's answer says so — the state
 * is waiting_approval from the first approval.requested until the last
 * pending one is resolved, each change announced as run.state_changed
 * after the approval event that caused it. */
static void track_approvals(loom_run *r, loom_event_type type, const json_t *payload)
{
    if (type == LOOM_EV_APPROVAL_REQUESTED) {
        if (atomic_fetch_add(&r->pending_approvals, 1) != 0)
            return;
        int running = LOOM_RUN_RUNNING;
        if (!atomic_compare_exchange_strong(&r->state, &running, LOOM_RUN_WAITING_APPROVAL))
            return;
        json_t *p = json_pack("{s:s,s:s,s:s?}", "state", "waiting_approval", "session_id",
                              loom_session_id(r->session), "approval_id",
                              json_string_value(json_object_get(payload, "approval_id")));
        deliver(r, LOOM_EV_RUN_STATE_CHANGED,
                event_make(r->run_id, LOOM_EV_RUN_STATE_CHANGED, LOOM_VIS_USER, NULL, p));
    } else if (type == LOOM_EV_APPROVAL_RESOLVED) {
        if (atomic_fetch_sub(&r->pending_approvals, 1) != 1)
            return;
        int waiting = LOOM_RUN_WAITING_APPROVAL;
        if (!atomic_compare_exchange_strong(&r->state, &waiting, LOOM_RUN_RUNNING))
            return;
        json_t *p = json_pack("{s:s,s:s}", "state", "running", "session_id",
                              loom_session_id(r->session));
        deliver(r, LOOM_EV_RUN_STATE_CHANGED,
                event_make(r->run_id, LOOM_EV_RUN_STATE_CHANGED, LOOM_VIS_USER, NULL, p));
    }
}

static void emit(void *ctx, loom_event_type type, loom_visibility vis, const char *corr,
                 json_t *payload)
{
    loom_run *r = ctx;
    if (type == LOOM_EV_TOOL_STARTED)
        api_ext_observe_call(r->session, payload);
    otel_tracer_observe(r->tracer, type, payload);
    bool about_approval = type == LOOM_EV_APPROVAL_REQUESTED || type == LOOM_EV_APPROVAL_RESOLVED;
    json_t *keep = about_approval ? json_incref(payload) : NULL;
    deliver(r, type, event_make(r->run_id, type, vis, corr, payload));
    if (about_approval) {
        track_approvals(r, type, keep);
        json_decref(keep);
    }
}

static void emit_simple(void *ctx, loom_event_type type, json_t *payload)
{
    /* docs/events.md: a tool.progress event's correlation_id is its call_id,
     * and so is an approval's (the call it asks about). */
    const char *corr = type == LOOM_EV_TOOL_PROGRESS || type == LOOM_EV_APPROVAL_REQUESTED ||
                               type == LOOM_EV_APPROVAL_RESOLVED
                           ? json_string_value(json_object_get(payload, "call_id"))
                           : NULL;
    /* docs/events.md: policy.denied is for the record (seed 000 §11 audit). */
    emit(ctx, type, type == LOOM_EV_POLICY_DENIED ? LOOM_VIS_AUDIT : LOOM_VIS_USER, corr,
         payload);
}

static char *ask_user(void *ctx, const json_t *questions)
{
    loom_run *r = ctx;
    char *q = json_dump_compact(questions);
    char *answer = r->opts.ask_user(r->opts.ask_ctx, q ? q : "[]");
    free(q);
    return answer;
}

static void record_side(void *ctx, json_t *rec)
{
    loom_run *r = ctx;
    loom_error ignore;
    transcript_append_new(r->session->t, rec, &ignore);
}

/* The heartbeat's report of an event (its thread): shown as
 * heartbeat.event, then the interrupt policy is applied. */
static void on_heartbeat_event(void *ctx, const surface_event *ev, interrupt_action action,
                               double delta_h)
{
    loom_run *r = ctx;
    static const char *const actions[] = {"queue", "request", "force"};
    json_t *payload = event_heartbeat_event(ev->id, ev->fingerprint, ev->source, ev->summary,
                                            event_urgency_name(ev->urgency), actions[action],
                                            delta_h);
    bool ends_run = !strcmp(ev->source, "external_signal") && ev->urgency == EVENT_CRITICAL;
    if (ends_run) {
        /* SIGINT / SIGTERM from outside: the run stops, resumable, and says
         * why; the pointer is published before the cancel flag. */
        json_t *expected = NULL;
        json_t *copy = json_deep_copy(payload);
        if (!atomic_compare_exchange_strong(&r->stop_event, &expected, copy))
            json_decref(copy);
        atomic_store(&r->cancel, CANCEL_RUN);
        if (r->session->agents)
            agents_cancel_run(r->session->agents, r->run_id);
    }
    emit(r, LOOM_EV_HEARTBEAT_EVENT, LOOM_VIS_USER, ev->id, payload);
    if (ends_run)
        return;
    if (action == INTERRUPT_FORCE)
        cancel_interrupt_act(&r->cancel, CANCEL_ACT_NOW);
    else if (action == INTERRUPT_REQUEST && atomic_load(&r->act_running))
        cancel_interrupt_act(&r->cancel, CANCEL_ACT);
}

/* The surface archived a resolved event: the journal's last word on it. */
static void on_archived(void *ctx, const surface_event *ev)
{
    loom_error ignore;
    journal_append(heartbeat_journal(ctx), ev, EVENT_ARCHIVED, &ignore);
}

static heartbeat *start_heartbeat(loom_run *r)
{
    loom_session *s = r->session;
    loom_agent *a = s->agent;
    if (!a->heartbeat.enabled || !s->mf_dir)
        return NULL;
    loom_error err;
    loom_str journal_path = LOOM_STR_INIT;
    str_printf(&journal_path, "%s/journal.jsonl", s->mf_dir);
    heartbeat *hb = NULL;
    if (file_mkdirs(s->mf_dir, 0700, &err) == 0) {
        /* mf_events sources without a dir watch the session's M_f bus,
         * where sub-agents publish (agents/bus.h). */
        loom_str bus = LOOM_STR_INIT;
        str_printf(&bus, "%s/bus", s->mf_dir);
        heartbeat_env env = {.w = s->working, .journal_path = journal_path.ptr, .cwd = a->cwd,
                             .on_event = on_heartbeat_event, .ctx = r, .mf_dir = bus.ptr};
        hb = heartbeat_start(&a->heartbeat, &env, &err);
        str_free(&bus);
    }
    if (!hb)
        emit(r, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
             event_warningf("heartbeat", "the heartbeat could not start: %s", err.message));
    str_free(&journal_path);
    if (hb && heartbeat_takes_signals(hb)) {
        /* `loom signal SESSION` finds this process here. */
        char pid[32];
        int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        loom_str path = LOOM_STR_INIT;
        str_printf(&path, "%s/run.pid", s->mf_dir);
        file_write_atomic(path.ptr, pid, (size_t)n, 0600, &err);
        str_free(&path);
    }
    if (hb)
        working_set_archive_hook(s->working, on_archived, hb);
    atomic_store(&r->hb, hb);
    return hb;
}

static json_t *stop_heartbeat(loom_run *r, heartbeat *hb)
{
    if (!hb)
        return NULL;
    working_set_archive_hook(r->session->working, NULL, NULL);
    atomic_store(&r->hb, NULL);
    while (atomic_load(&r->hb_users) > 0)
        sched_yield(); /* a signal handler is inside heartbeat_signal */
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/run.pid", r->session->mf_dir);
    unlink(path.ptr);
    str_free(&path);
    heartbeat_stats st;
    heartbeat_stop(hb, &st);
    double share = st.wall_ns > 0 ? (double)st.cpu_ns / (double)st.wall_ns : 0;
    return event_run_heartbeat(st.ticks, st.emitted, st.gated, (double)st.cpu_ns / 1e6,
                               (double)st.wall_ns / 1e6, share);
}

int loom_run_signal(loom_run *r, const char *name)
{
    if (!r || !name)
        return -1;
    atomic_fetch_add(&r->hb_users, 1);
    heartbeat *hb = atomic_load(&r->hb);
    int rc = hb && heartbeat_takes_signals(hb) ? heartbeat_signal(hb, name) : -1;
    atomic_fetch_sub(&r->hb_users, 1);
    return rc;
}



static bool traceparent_of(void *ctx, const char *call_id, char buf[56])
{
    return otel_tracer_traceparent(ctx, call_id, buf);
}

/* The run's tracer reaches its tools (trace context for Bash and MCP) and
 * the run thread's log lines; the OTEL_* warnings are shown once per run. */
static void attach_tracer(loom_run *r, tool_ctx *tctx)
{
    if (!r->tracer)
        return;
    const json_t *warnings = r->session->agent->otel_warnings;
    for (size_t i = 0; i < json_array_size(warnings); i++)
        emit(r, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
             event_warning("telemetry", json_string_value(json_array_get(warnings, i))));
    tctx->traceparent = traceparent_of;
    tctx->traceparent_ctx = r->tracer;
    /* Hooks too; detached at the run's end (the governance is the
     * session's and outlives the tracer). */
    if (r->session->gov) {
        r->session->gov->traceparent = traceparent_of;
        r->session->gov->traceparent_ctx = r->tracer;
    }
    /* "00-<32 trace>-<16 span>-01": the run's span. */
    char tp[56];
    if (otel_tracer_traceparent(r->tracer, NULL, tp)) {
        tp[35] = tp[52] = '\0';
        log_set_trace(tp + 3, tp + 36);
    }
}

/* The loop's I/O for the run: the session's, the run's controls. */
static void run_io(loom_run *r, tool_ctx *tctx, loop_io *io)
{
    api_session_io(r->session, io);
    io->tools = tctx;
    io->cancel = &r->cancel;
    io->emit = emit;
    io->emit_ctx = r;
    io->act_running = &r->act_running;
    io->stop_event = &r->stop_event;
    io->pause = &r->pause;
}

/* A stop that can go on says how: the session and the command. */
static void resume_hint(loop_result *res, loom_session *s)
{
    if (res->err.code == LOOM_ERR_RUN_RESUMABLE && res->stop_reason == LOOM_STOP_MAX_TURNS) {
        size_t n = strlen(res->err.message);
        snprintf(res->err.message + n, sizeof res->err.message - n,
                 "; session %s goes on with: loom --resume %s", loom_session_id(s),
                 loom_session_id(s));
    }
}

/* The hooks' traceparent source back off (attach_tracer set it). */
static void detach_tracer(loom_run *r)
{
    governance *g = r->session->gov;
    if (g && g->traceparent_ctx == r->tracer) {
        g->traceparent = NULL;
        g->traceparent_ctx = NULL;
    }
}

/* The tool context a run's calls share: the session's parts, the run's
 * controls and the driver's ports. */
static void run_tool_ctx(loom_run *r, tool_ctx *tctx)
{
    loom_session *s = r->session;
    loom_agent *a = s->agent;
    *tctx = (tool_ctx){
        .cwd = a->cwd,
        .session_id = loom_session_id(s),
        .cancel = &r->cancel,
        .files = s->files,
        .history = s->history,
        .tasks = s->tasks,
        .todos = s->todos,
        .working = s->working,
        .record = record_side,
        .record_ctx = r,
        .ask_user = r->opts.ask_user ? ask_user : NULL,
        .ask_ctx = r,
    };
    tctx->gov = s->gov;
    tctx->helpers = s->helpers;
    tctx->sandbox = s->gov ? s->gov->sandbox : NULL;
    tctx->sandbox_error = s->gov ? s->gov->sandbox_error : NULL;
    api_session_tool_ports(s, tctx);
    api_worktree_attach(s, tctx);
    tctx->run_id = r->run_id;
    tctx->emit = emit_simple;
    tctx->emit_ctx = r;
    tctx->io = api_io_init(&r->io, r->opts.io);
    tctx->gate = r->opts.tool_gate;
    tctx->gate_ctx = r->opts.gate_ctx;
}

static void *run_main(void *arg)
{
    loom_run *r = arg;
    loom_session *s = r->session;
    loom_agent *a = s->agent;
    /* queued → running → a final state, each once. */
    assert(atomic_load(&r->state) == LOOM_RUN_QUEUED);
    atomic_store(&r->state, LOOM_RUN_RUNNING);
    /* The mode in force (a resumed session's may be its own, not the
     * config's), and the transcript's note of it. */
    api_permission_mode_record(s);
    json_t *started = event_run_started(loom_session_id(s), a->provider.model,
                                        provider_kind_name(a->provider.kind), a->cwd,
                                        loom_session_permission_mode(s));
    if (s->mcp) {
        api_mcp_startup_wait(s);
        json_object_set_new(started, "mcp_servers", api_mcp_status(s));
    }
    r->tracer = api_telemetry_run_begin(a);
    emit(r, LOOM_EV_RUN_STATE_CHANGED, LOOM_VIS_USER, NULL, started);
    tool_ctx tctx;
    run_tool_ctx(r, &tctx);
    attach_tracer(r, &tctx);
    for (size_t i = 0; s->gov && i < s->gov->n_warnings; i++)
        emit(r, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
             event_warning("settings", s->gov->warnings[i]));
    loop_io io;
    run_io(r, &tctx, &io);
    api_guard guard;
    api_guard_begin(&guard, &r->opts, &io);
    heartbeat *hb = start_heartbeat(r);
    tctx.heartbeat = hb;
    io.heartbeat = hb;
    api_mcp_run_begin(s, &io, &r->opts);
    api_ext_run_begin(s, &io, &tctx);
    if (s->agents) {
        agents_run_env env = {.params = &a->params, .io = &io, .tctx = &tctx,
                              .mcp = api_mcp_manager(s), .run_id = r->run_id};
        tctx.spawn = agents_run_attach(s->agents, &env);
    }
    loop_result res;
    loom_error gerr;
    const char *model = NULL;
    /* The first prompt names the session (docs/session-format.md); a
     * resume note is nobody's prompt and expands to nothing. */
    json_t *images = NULL;
    char *goal;
    if (r->resume_note) {
        io.goal_is_resume_note = true;
        goal = xstrdup(r->goal);
    } else {
        api_session_title(s, r->goal);
        goal = api_ext_prepare_goal(s, r->goal, &tctx, &model, &images, &gerr);
    }
    io.goal_images = images;
    api_memory_run_begin(s, &io, r->resume_note ? NULL : r->goal, r->run_id);
    api_evolve *evolve = api_evolve_run_begin(s, r->run_id, r->resume_note ? NULL : r->goal);
    if (goal) {
        /* A command's or skill's model: this run only, the rest as the
         * agent's (a shallow copy: the run only reads it). */
        loop_params params = a->params;
        provider_config pc = *a->params.provider;
        if (model) {
            pc.model = (char *)model;
            params.provider = &pc;
        }
        if (strcmp(goal, r->goal) != 0)
            io.typed_goal = r->goal;
        loop_run(&params, &io, goal, &res);
        free(goal);
        json_decref(images);
    } else {
        /* An MCP prompt command that could not be served: nothing ran. */
        memset(&res, 0, sizeof res);
        res.state = LOOM_RUN_FAILED;
        res.err = gerr;
        res.cost_usd = -1;
    }
    json_t *by_agent = NULL;
    if (tctx.spawn)
        agents_run_detach(s->agents, tctx.spawn, &res, &by_agent);
    api_mcp_run_end(s);
    api_worktree_detach(s);
    api_permission_mode_record(s); /* a mode the run switched to (ExitPlanMode) */
    api_guard_end(&guard);
    json_t *skills = api_ext_run_end(s, res.final_text);
    json_t *memory = api_memory_run_end(s, &io, &res);
    api_session_settle_run_tail(s, r->run_id, &res);
    json_t *hb_stats = stop_heartbeat(r, hb);

    api_session_add_usage(s, &res.usage);
    resume_hint(&res, s);

    json_t *result = event_run_ended(res.state, res.final_text, res.stop_reason,
                                     loom_session_id(s), res.turns, msg_usage_to_json(&res.usage),
                                     res.cost_usd, res.err.code, res.err.message, res.interrupt);
    if (hb_stats)
        json_object_set_new(result, "heartbeat", hb_stats);
    if (by_agent)
        json_object_set_new(result, "usage_by_agent", by_agent);
    if (s->mcp)
        json_object_set_new(result, "mcp_servers", api_mcp_status(s));
    if (skills)
        json_object_set_new(result, "skills", skills);
    api_evolve_run_end(evolve, &res, result);
    if (memory)
        json_object_set_new(result, "memory", memory);
    detach_tracer(r);
    api_telemetry_run_end(a, r->tracer, result);
    log_set_trace(NULL, NULL);
    char *text = json_dump_compact(result);
    emit(r, LOOM_EV_RUN_STATE_CHANGED, LOOM_VIS_USER, NULL, result);
    pthread_mutex_lock(&r->lock);
    r->result_json = text;
    assert(state_is_final(res.state));
    r->stop_reason = res.stop_reason;
    atomic_store(&r->state, res.state);
    assert(atomic_load(&s->run_active));
    atomic_store(&s->run_active, false); /* the session may take its next run */
    r->done = true;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    loop_result_free(&res);
    return NULL;
}

static loom_run *start_run(loom_session *s, const char *goal, bool resume_note,
                           const loom_run_options *opts, loom_status *st);

loom_run *loom_run_start(loom_session *s, const char *goal, const loom_run_options *opts,
                         loom_status *st)
{
    API_CHECK_ARG(st, s, NULL);
    if (!goal || !*goal) {
        api_status_set(st, LOOM_ERR_INVALID_REQUEST, "a run needs a goal (the user's message)");
        return NULL;
    }
    return start_run(s, goal, false, opts, st);
}

loom_run *loom_run_continue(loom_session *s, const char *note, const loom_run_options *opts,
                            loom_status *st)
{
    API_CHECK_ARG(st, s, NULL);
    if (!api_session_has_goal(s)) {
        api_status_set(st, LOOM_ERR_RESOURCE_NOT_FOUND,
                       "session %s has no goal yet to continue: start a run with one",
                       loom_session_id(s));
        return NULL;
    }
    return start_run(s, note && *note ? note : "Continue from where you left off.", true, opts,
                     st);
}

static loom_run *start_run(loom_session *s, const char *goal, bool resume_note,
                           const loom_run_options *opts, loom_status *st)
{
    /* loom.h: one run at a time per session. Cleared by run_main when the
     * run is done (before loom_run_next_event or loom_run_wait can say so). */
    bool idle = false;
    if (!atomic_compare_exchange_strong(&s->run_active, &idle, true)) {
        api_status_set(st, LOOM_ERR_INVALID_STATE_TRANSITION,
                       "session %s already has a run in progress: one run at a time per "
                       "session (wait for it to end, or cancel it)",
                       loom_session_id(s));
        return NULL;
    }
    loom_run *r = xcalloc(1, sizeof *r);
    r->session = s;
    r->goal = xstrdup(goal);
    r->resume_note = resume_note;
    uuid_v7(r->run_id);
    if (opts)
        r->opts = *opts;
    atomic_init(&r->cancel, 0);
    atomic_init(&r->state, LOOM_RUN_QUEUED);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    if (pthread_create(&r->thread, NULL, run_main, r) != 0) {
        api_status_set(st, LOOM_ERR_INTERNAL, "could not start the run's thread");
        atomic_store(&s->run_active, false);
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->cond);
        free(r->goal);
        free(r);
        return NULL;
    }
    api_status_ok(st);
    return r;
}

int loom_run_next_event(loom_run *r, loom_event **ev, int timeout_ms)
{
    if (ev)
        *ev = NULL;
    if (!r || !ev)
        return -1;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    if (timeout_ms > 0) {
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&r->lock);
    while (!r->head && !r->done && timeout_ms != 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&r->cond, &r->lock);
        else if (pthread_cond_timedwait(&r->cond, &r->lock, &deadline) != 0)
            break;
    }
    int rc;
    if (r->head) {
        queued *q = r->head;
        r->head = q->next;
        if (!r->head)
            r->tail = NULL;
        *ev = &q->ev;
        rc = 1;
    } else {
        *ev = NULL;
        rc = r->done ? -1 : 0;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

void loom_event_free(loom_event *ev)
{
    if (!ev)
        return;
    queued *q = (queued *)((char *)ev - offsetof(queued, ev));
    free(q->type);
    free(q->json);
    free(q->text);
    free(q->channel);
    free(q);
}

void loom_run_cancel(loom_run *r)
{
    if (!r)
        return;
    atomic_store(&r->cancel, 1);
    /* Sub-agents poll their own flags (a child's command, its model call). */
    if (r->session->agents)
        agents_cancel_run(r->session->agents, r->run_id);
}

loom_run_state loom_run_state_now(const loom_run *r)
{
    if (!r)
        return LOOM_RUN_FAILED;
    return (loom_run_state)atomic_load(&((loom_run *)r)->state);
}

loom_run_state loom_run_wait(loom_run *r)
{
    if (!r)
        return LOOM_RUN_FAILED;
    if (!r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = true;
    }
    return (loom_run_state)atomic_load(&r->state);
}

const char *loom_run_result_json(const loom_run *r)
{
    return r ? r->result_json : NULL;
}

loom_stop_reason loom_run_stop_reason(const loom_run *r)
{
    return r->result_json ? r->stop_reason : LOOM_STOP_NONE;
}

int loom_run_answer(loom_run *r, const char *approval_id, const char *decision,
                    const char *reason, loom_status *st)
{
    API_CHECK_ARG(st, r, -1);
    bool allow = decision && (!strcmp(decision, "allow") || !strcmp(decision, "allow_always"));
    bool always = decision && !strcmp(decision, "allow_always");
    if (!decision || (!allow && strcmp(decision, "deny") != 0))
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "decision must be allow, allow_always or deny");
    if (!r->session->gov)
        return api_status_set(st, LOOM_ERR_RESOURCE_NOT_FOUND, "no pending approval with id %s",
                              approval_id ? approval_id : "(null)");
    loom_error err;
    if (approval_resolve(r->session->gov->approvals, approval_id ? approval_id : "", allow,
                         always, reason, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    api_status_ok(st);
    return 0;
}

int loom_run_pause(loom_run *r, loom_status *st)
{
    API_CHECK_ARG(st, r, -1);
    pthread_mutex_lock(&r->lock);
    bool done = r->done;
    pthread_mutex_unlock(&r->lock);
    if (done)
        return api_status_set(st, LOOM_ERR_INVALID_STATE_TRANSITION,
                              "the run has ended (%s): there is nothing to pause",
                              loom_run_state_name(loom_run_state_now(r)));
    atomic_store(&r->pause, true);
    api_status_ok(st);
    return 0;
}

char *loom_run_pending_approvals_json(loom_run *r)
{
    if (!r)
        return NULL;
    json_t *arr = r->session->gov ? approval_list_pending(r->session->gov->approvals, r->run_id)
                                  : json_array();
    char *text = json_dump_compact(arr);
    json_decref(arr);
    return text;
}

const char *api_run_id(const loom_run *r)
{
    return r->run_id;
}

loom_session *api_run_session(const loom_run *r)
{
    return r->session;
}

int loom_run_approve(loom_run *r, const char *approval_id, bool allow, const char *reason,
                     loom_status *st)
{
    return loom_run_answer(r, approval_id, allow ? "allow" : "deny", reason, st);
}

void loom_run_free(loom_run *r)
{
    if (!r)
        return;
    loom_run_wait(r);
    for (queued *q = r->head; q;) {
        queued *next = q->next;
        free(q->type);
        free(q->json);
        free(q->text);
        free(q->channel);
        free(q);
        q = next;
    }
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    json_decref(atomic_load(&r->stop_event));
    otel_tracer_free(r->tracer);
    free(r->result_json);
    free(r->goal);
    free(r);
}

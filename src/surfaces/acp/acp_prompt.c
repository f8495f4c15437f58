/* acp_prompt.c — session/prompt, session/cancel and the permission round
 * trip of `loom acp` (acp.h). A prompt is a loom run on its own thread: the
 * reader thread stays free for session/cancel and for the client's answers
 * to session/request_permission. The run's events become session/update
 * notifications on the run's thread (acp_map.c); an approval.requested
 * becomes a request to the client, whose answer (on the reader thread)
 * goes to loom_run_answer. The prompt's response is written only after
 * the run has ended, so every update of the turn comes before it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/acp/acp_server_int.h"

/* ---- requests to the client -------------------------------------------------------- */

static json_int_t add_pending(acp_server *srv, acp_sess *ss, const char *approval_id)
{
    pthread_mutex_lock(&srv->mu);
    if (srv->n_pend == srv->cap_pend) {
        srv->cap_pend = srv->cap_pend ? srv->cap_pend * 2 : 8;
        srv->pend = xrealloc(srv->pend, srv->cap_pend * sizeof *srv->pend);
    }
    json_int_t id = srv->next_id++;
    srv->pend[srv->n_pend++] = (acp_pending){id, ss, xstrdup(approval_id)};
    pthread_mutex_unlock(&srv->mu);
    return id;
}

/* Drops the session's requests still unanswered (mu held). */
static void drop_pending(acp_server *srv, acp_sess *ss)
{
    size_t k = 0;
    for (size_t i = 0; i < srv->n_pend; i++) {
        if (srv->pend[i].sess == ss)
            free(srv->pend[i].approval_id);
        else
            srv->pend[k++] = srv->pend[i];
    }
    srv->n_pend = k;
}

static void ask_permission(acp_server *srv, acp_sess *ss, const json_t *event)
{
    const json_t *p = json_get_obj(event, "payload");
    const char *approval = json_get_str(p, "approval_id", NULL);
    if (!approval)
        return;
    json_int_t id = add_pending(srv, ss, approval);
    json_t *params = json_pack("{s:s, s:o, s:o}", "sessionId", ss->id, "toolCall",
                               acp_map_permission_tool_call(&ss->map, event), "options",
                               acp_permission_options());
    acp_send(&srv->w, json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", id, "method",
                                "session/request_permission", "params", params));
}

/* The client's answer to one of our requests. */
void acp_on_response(acp_server *srv, const acp_msg *m)
{
    if (!json_is_integer(m->id) || acp_take_waited(srv, m))
        return;
    json_int_t id = json_integer_value(m->id);
    pthread_mutex_lock(&srv->mu);
    acp_pending got = {0};
    for (size_t i = 0; i < srv->n_pend; i++)
        if (srv->pend[i].id == id) {
            got = srv->pend[i];
            srv->pend[i] = srv->pend[--srv->n_pend];
            break;
        }
    acp_sess *ss = got.sess;
    loom_run *run = ss ? ss->run : NULL;
    if (run)
        ss->answering++;
    pthread_mutex_unlock(&srv->mu);
    if (!got.approval_id)
        return; /* an answer to nothing we asked, or one too late: ignored */
    const json_t *outcome = json_get_obj(m->result, "outcome");
    const char *kind = json_get_str(outcome, "outcome", NULL);
    const char *decision = NULL, *reason = NULL;
    if (kind && strcmp(kind, "selected") == 0)
        decision = acp_permission_decision(json_get_str(outcome, "optionId", NULL));
    if (!decision) {
        decision = "deny";
        reason = kind && strcmp(kind, "cancelled") == 0 ? "The user cancelled the prompt."
                                                        : "The client gave no answer.";
    }
    if (run) {
        loom_status st = {0};
        if (loom_run_answer(run, got.approval_id, decision, reason, &st) != 0)
            fprintf(stderr, "loom-acp: answering %s: %s\n", got.approval_id, st.message);
        pthread_mutex_lock(&srv->mu);
        ss->answering--;
        pthread_cond_broadcast(&ss->idle);
        pthread_mutex_unlock(&srv->mu);
    }
    free(got.approval_id);
}

/* ---- the run ------------------------------------------------------------------------- */

static void on_event(void *ctx, const loom_event *ev)
{
    acp_sess *ss = ctx;
    acp_server *srv = ss->srv;
    json_t *event = json_loads(ev->json, 0, NULL);
    if (!event)
        return;
    if (ev->kind == LOOM_EV_APPROVAL_REQUESTED) {
        ask_permission(srv, ss, event);
    } else {
        json_t *out = json_array();
        acp_map_event(&ss->map, event, out);
        size_t i;
        json_t *u;
        json_array_foreach(out, i, u)
            acp_send_update(srv, ss->id, json_incref(u));
        json_decref(out);
    }
    json_decref(event);
}

static long context_window(const char *model)
{
    char *text = loom_model_info_json(model);
    json_t *info = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    long w = (long)json_get_int(info, "context_window", 0);
    json_decref(info);
    return w;
}

/* The prompt's response from the ended run. */
static void respond(acp_server *srv, acp_sess *ss, const json_t *id, loom_run *run, bool cancelled)
{
    const char *why = acp_stop_reason(loom_run_stop_reason(run), loom_run_state_now(run),
                                      cancelled);
    if (why) {
        acp_send_result(&srv->w, id, json_pack("{s:s}", "stopReason", why));
        return;
    }
    json_t *res = json_loads(loom_run_result_json(run), 0, NULL);
    const json_t *err = json_get_obj(res, "error");
    acp_send_error(&srv->w, id, ACP_INTERNAL_ERROR, "%s: %s",
                   json_get_str(err, "code", json_get_str(res, "stop_reason", "run_failed")),
                   json_get_str(err, "message", "the run failed"));
    json_decref(res);
    (void)ss;
}

static void *prompt_thread(void *arg)
{
    acp_sess *ss = arg;
    acp_server *srv = ss->srv;
    const char *mode_before = loom_session_permission_mode(ss->session);
    acp_map_clear(&ss->map);
    acp_map_init(&ss->map, ss->cwd, context_window(loom_agent_model(ss->agent)));
    loom_run_options ro = {.on_event = on_event, .event_ctx = ss};
    /* The client's files and terminal, when it offers them (docs/acp.md). */
    ro.io = acp_client_io(ss);
    if (ro.io && ro.io->read_text)
        ss->map.client_text = acp_client_text;
    if (ro.io && ro.io->run_command)
        ss->map.client_terminal = acp_client_terminal;
    ss->map.hook_ctx = ss;
    if (acp_client_elicits(srv)) { /* questions go to the person through the client */
        ro.ask_user = acp_ask_user;
        ro.ask_ctx = ss;
    }
    ro.elicit = acp_elicit; /* it checks the client's form and url capabilities */
    ro.elicit_ctx = ss;
    loom_status st = {0};
    loom_run *run = loom_run_start(ss->session, ss->goal, &ro, &st);
    pthread_mutex_lock(&srv->mu);
    ss->run = run;
    bool cancel_now = run && ss->cancelled; /* cancelled before the run existed */
    pthread_mutex_unlock(&srv->mu);
    if (cancel_now)
        loom_run_cancel(run);
    if (run)
        loom_run_wait(run);
    pthread_mutex_lock(&srv->mu);
    ss->run = NULL;
    while (ss->answering > 0)
        pthread_cond_wait(&ss->idle, &srv->mu);
    drop_pending(srv, ss);
    bool cancelled = ss->cancelled;
    json_t *id = ss->prompt_id;
    ss->prompt_id = NULL;
    char *pending = ss->pending_mode;
    ss->pending_mode = NULL;
    pthread_mutex_unlock(&srv->mu);
    bool mode_changed = pending || strcmp(mode_before, loom_session_permission_mode(ss->session));
    if (pending && loom_session_set_permission_mode(ss->session, pending, &st) != 0)
        fprintf(stderr, "loom-acp: %s\n", st.message);
    free(pending);
    if (mode_changed)
        acp_send_mode(srv, ss);
    acp_send_commands(srv, ss); /* MCP servers connected since may bring prompts */
    /* Free to take the next prompt before this one's answer is out. */
    pthread_mutex_lock(&srv->mu);
    ss->busy = false;
    pthread_mutex_unlock(&srv->mu);
    if (run)
        respond(srv, ss, id, run, cancelled);
    else
        acp_send_error(&srv->w, id, ACP_INTERNAL_ERROR, "%s: %s",
                       st.code_name ? st.code_name : "error", st.message);
    loom_run_free(run);
    json_decref(id);
    return NULL;
}

void acp_prompt_join(acp_sess *ss)
{
    if (ss->thread_live) {
        pthread_join(ss->thread, NULL);
        ss->thread_live = false;
    }
}

void acp_prompt_start(acp_server *srv, const json_t *id, const json_t *params)
{
    acp_sess *ss = acp_find_session(srv, params, id);
    if (!ss)
        return;
    char why[300];
    char *goal = acp_prompt_goal(json_object_get(params, "prompt"), srv->image_dir, why,
                                 sizeof why);
    if (!goal) {
        acp_send_error(&srv->w, id, ACP_INVALID_PARAMS, "Invalid params: %s", why);
        return;
    }
    pthread_mutex_lock(&srv->mu);
    bool was_busy = ss->busy;
    if (!was_busy) {
        ss->busy = true;
        ss->cancelled = false;
    }
    pthread_mutex_unlock(&srv->mu);
    if (was_busy) {
        free(goal);
        acp_send_error(&srv->w, id, ACP_SERVER_ERROR,
                       "session %s already has a prompt running (one at a time)", ss->id);
        return;
    }
    acp_prompt_join(ss); /* the last prompt's thread, done but not joined */
    free(ss->goal);
    ss->goal = goal;
    json_decref(ss->prompt_id);
    ss->prompt_id = json_deep_copy(id);
    if (pthread_create(&ss->thread, NULL, prompt_thread, ss) != 0) {
        pthread_mutex_lock(&srv->mu);
        ss->busy = false;
        pthread_mutex_unlock(&srv->mu);
        acp_send_error(&srv->w, id, ACP_INTERNAL_ERROR, "Internal error: no thread for the run");
        return;
    }
    ss->thread_live = true;
}

/* Cancels the session's prompt. loom_run_cancel is called without mu held
 * (it takes the sub-agents' lock, under which their events may be on their
 * way to on_event); answering keeps the run alive meanwhile. */
void acp_cancel_session(acp_server *srv, acp_sess *ss)
{
    pthread_mutex_lock(&srv->mu);
    loom_run *run = NULL;
    if (ss->busy) {
        ss->cancelled = true;
        acp_wake_waiters(srv, ss); /* a question open: no answer now */
        run = ss->run;
        if (run)
            ss->answering++;
    }
    pthread_mutex_unlock(&srv->mu);
    if (!run)
        return;
    loom_run_cancel(run);
    pthread_mutex_lock(&srv->mu);
    ss->answering--;
    pthread_cond_broadcast(&ss->idle);
    pthread_mutex_unlock(&srv->mu);
}

void acp_prompt_cancel(acp_server *srv, const json_t *params)
{
    acp_sess *ss = acp_find_session(srv, params, NULL);
    if (ss)
        acp_cancel_session(srv, ss);
}

/* external.c — waiting_external: a run that needs an answer from outside
 * the server (the model's AskUserQuestion). loom asks on the run's thread
 * through loom_run_options.ask_user; here that becomes the state
 * waiting_external, an input.requested event {input_id, questions,
 * expires_at} that a client answers with POST /runs/{id}:input, and an
 * input.resolved event {input_id, status: answered|expired|cancelled}. An
 * answer that does not come within the policy's approval timeout, or a
 * cancel, pause or server stop, is no answer: the model is told the
 * questions were dismissed and goes on without them.
 *
 * Owns nothing beyond the srv_run's input fields. Threading: the asking
 * side is loom's run thread, the answering side an HTTP thread; both under
 * svc->mu, meeting on svc->cv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "surfaces/server/runs/service_int.h"

/* The policy's approval timeout (seed 000: 600 s by default). */
static int input_timeout_seconds(service *svc, const srv_run *r)
{
    const policy_set *p = r->policy_id ? objects_policy(svc->objs, r->policy_id, r->tenant_id) : NULL;
    return p && p->approval_timeout_seconds > 0 ? p->approval_timeout_seconds : 600;
}

static void resolved(service *svc, srv_run *r, const char *status)
{
    json_t *p = json_object();
    json_object_set_new(p, "input_id", json_string(r->input_id));
    json_object_set_new(p, "status", json_string(status));
    svc_emit(svc, r, "input.resolved", LOOM_VIS_USER, r->input_id, p);
}

char *svc_ask_external(void *ctx, const char *questions_json)
{
    srv_run *r = ctx;
    service *svc = r->svc;
    int timeout = input_timeout_seconds(svc, r);
    pthread_mutex_lock(&svc->mu);
    if (svc->stopping || r->cancel_pending || r->pause_pending ||
        svc_transition(svc, r, LOOM_RUN_WAITING_EXTERNAL, "the run asks a question", NULL) != 0) {
        pthread_mutex_unlock(&svc->mu);
        return NULL;
    }
    svc_new_id("inp_", r->input_id);
    r->input_given = false;
    free(r->input_answer);
    r->input_answer = NULL;
    snprintf(r->current_step, sizeof r->current_step, "waiting_external");
    struct timespec dl;
    clock_deadline(&dl, CLOCK_REALTIME, timeout * 1000);
    char expires[32];
    svc_time_after(expires, timeout);
    json_t *qs = json_loads(questions_json ? questions_json : "null", JSON_DECODE_ANY, NULL);
    json_t *p = json_object();
    json_object_set_new(p, "input_id", json_string(r->input_id));
    json_object_set_new(p, "questions", qs ? qs : json_null());
    json_object_set_new(p, "expires_at", json_string(expires));
    json_object_set_new(p, "timeout_seconds", json_integer(timeout));
    svc_emit(svc, r, "input.requested", LOOM_VIS_USER, r->input_id, p);
    bool expired = false;
    while (!r->input_given && !r->cancel_pending && !r->pause_pending && !svc->stopping)
        if (pthread_cond_timedwait(&svc->cv, &svc->mu, &dl) != 0) {
            expired = !r->input_given;
            break;
        }
    char *answer = r->input_given ? r->input_answer : NULL;
    r->input_answer = NULL;
    resolved(svc, r, answer ? "answered" : expired ? "expired" : "cancelled");
    r->input_id[0] = '\0';
    if (r->state == LOOM_RUN_WAITING_EXTERNAL)
        svc_transition(svc, r, LOOM_RUN_RUNNING, answer ? "answered" : "no answer", NULL);
    pthread_mutex_unlock(&svc->mu);
    return answer;
}

/* The answer text loom's AskUserQuestion takes: a JSON object {question:
 * answer} or free text. */
static char *answer_text(const json_t *b, srv_error *err)
{
    const json_t *answers = json_object_get(b, "answers");
    const json_t *text = json_object_get(b, "text");
    if ((answers != NULL) == (text != NULL))
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST,
                        "give the answer as answers (an object) or text (a string), one of them"),
               NULL;
    if (answers && !json_is_object(answers))
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST,
                        "answers must be an object of question text to answer"), NULL;
    if (text && !json_is_string(text))
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "text must be a string"), NULL;
    return answers ? json_dumps(answers, JSON_COMPACT) : strdup(json_string_value(text));
}

char *service_run_input(service *svc, const principal *who, const char *id,
                        const char *body_json, srv_error *err)
{
    srv_run *r = svc_run_for(svc, who, id, ROLE_MEMBER, err);
    if (!r)
        return NULL;
    pthread_mutex_lock(&svc->mu);
    bool remote = cluster_remote(svc, r) && r->state == LOOM_RUN_WAITING_EXTERNAL;
    pthread_mutex_unlock(&svc->mu);
    if (remote) /* the asking thread is on the worker holding the run */
        return cluster_forward(svc, who, r, "input", body_json, err);
    json_t *b = json_loads(body_json ? body_json : "{}", 0, NULL);
    if (!json_is_object(b)) {
        json_decref(b);
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "the body must be a JSON object"), NULL;
    }
    char *answer = answer_text(b, err);
    const char *want = json_string_value(json_object_get(b, "input_id"));
    char want_id[SVC_ID_LEN];
    snprintf(want_id, sizeof want_id, "%s", want ? want : "");
    json_decref(b);
    if (!answer)
        return NULL;
    pthread_mutex_lock(&svc->mu);
    if (r->state != LOOM_RUN_WAITING_EXTERNAL || !r->input_id[0] || r->input_given) {
        pthread_mutex_unlock(&svc->mu);
        free(answer);
        srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION, "run %s is %s: it waits for no answer",
                 r->id, loom_run_state_name(r->state));
        srv_error_set_run(err, r->id);
        return NULL;
    }
    if (want_id[0] && strcmp(want_id, r->input_id)) {
        pthread_mutex_unlock(&svc->mu);
        free(answer);
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "run %s asks %s, not %s", r->id,
                        r->input_id, want_id),
               NULL;
    }
    r->input_answer = answer;
    r->input_given = true;
    pthread_cond_broadcast(&svc->cv);
    /* The answer is the asking thread's to act on: wait until it has. */
    while (r->state == LOOM_RUN_WAITING_EXTERNAL && r->input_given && r->input_id[0])
        pthread_cond_wait(&svc->cv, &svc->mu);
    char *out = svc_dump(svc_run_json(r));
    pthread_mutex_unlock(&svc->mu);
    writer_flush(svc->w);
    return out;
}

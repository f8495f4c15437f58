/* hook_agent.c — `type: "agent"` hooks (seed 001 §6.2): a short read-only
 * sub-agent that may use tools to check a condition before it answers.
 *
 * The hook's prompt (its $ARGUMENTS filled with the event) goes to an
 * Explore agent — the read-only role: its requests carry only reading
 * tools and the pipeline's role gate denies any other — with at most
 * HOOK_AGENT_MAX_TURNS turns and the hook's timeout (the node is cancelled
 * when it runs out). It is a child of the run's root in the spawn tree, so
 * its tokens come out of the run's pool and count against the run's token
 * budget and cost cap like any sub-agent's, and SubagentStart/SubagentStop
 * fire for it. Its final message is read as a prompt hook's is
 * (hooks/judge.h): only {"ok", "reason"} survive, so whatever it read
 * cannot make it allow, rewrite or stop anything.
 *
 * The breaker and the record are the helper module's (purpose hook_agent,
 * provider/helper.h), its tokens marked as counted by the tree. The port
 * is set on the session's governance from agents_run_attach to
 * agents_run_detach (agents.c); inside a sub-agent agent hooks do not run,
 * so this agent never starts another.
 *
 * Threading: the thread that fires the hook (a tool-call thread) runs the
 * child in the foreground; a watchdog thread cancels it at the timeout. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/agents.h"
#include "agents/runner.h"
#include "agents/tree.h"
#include "base/clock.h"
#include "base/str.h"
#include "governance/governance.h"
#include "hooks/judge.h"
#include "provider/helper.h"

#define HOOK_AGENT_MAX_TURNS 8

static const char ANSWER[] =
    "\n\nYou are checking this for a hook of the agent's harness: you may read files and search "
    "to verify it, but change nothing. When you are done, answer with one JSON object and "
    "nothing else: {\"ok\": true} when the condition holds, or {\"ok\": false, \"reason\": "
    "\"what is wrong, in one sentence\"} when it does not.";

typedef struct watchdog {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    long timeout_ms;
    loom_cancel *target;
    bool fired;
} watchdog;

static void *watch(void *arg)
{
    watchdog *w = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += w->timeout_ms / 1000;
    until.tv_nsec += (w->timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    if (!w->done) {
        w->fired = true;
        atomic_store(w->target, CANCEL_RUN);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int agents_hook_agent(void *ctx, const hook_llm_request *req, json_t **reply, loom_error *err)
{
    agents_session *s = ctx;
    pthread_mutex_lock(&s->env_mu);
    tool_ctx pc = s->env_set && s->env.tctx ? *s->env.tctx : (tool_ctx){0};
    pthread_mutex_unlock(&s->env_mu);
    if (!pc.spawn || !pc.gov)
        return loom_error_set(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                              "an agent hook needs a running session");
    governance *g = pc.gov;
    const char *call_id = json_string_value(json_object_get(req->payload, "tool_use_id"));
    const char *tool = json_string_value(json_object_get(req->payload, "tool_name"));
    helper_spec spec = {.purpose = HELPER_HOOK_AGENT, .tier = HELPER_TIER_DEFAULT,
                        .model = req->model, .counted = true, .owner = g,
                        .correlation = call_id, .tool = tool};
    if (g->helpers && helper_admit(g->helpers, &spec, err) != 0)
        return -err->code;
    pc.call_id = call_id;
    loom_str prompt = LOOM_STR_INIT;
    str_printf(&prompt, "%s%s", req->prompt, ANSWER);
    /* The model: the hook's, else the chain's for hook_agent (lite). */
    const char *model = g->helpers ? helper_resolve(g->helpers, HELPER_HOOK_AGENT,
                                                    HELPER_TIER_DEFAULT, req->model, NULL)
                                   : req->model;
    agent_request ar = {.description = "agent hook", .prompt = prompt.ptr,
                        .subagent_type = "Explore", .model = model};
    spawn_node *child = NULL;
    tool_result refused;
    memset(&refused, 0, sizeof refused);
    int64_t t0 = clock_mono_ms();
    int prc = agent_prepare(pc.spawn, &pc, &ar, &child, &refused, err);
    if (prc != AGENT_PREP_OK) {
        if (prc > 0)
            loom_error_set(err, LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY, "the agent hook could not "
                           "start its sub-agent: %.300s", str_cstr(&refused.text));
        tool_result_free(&refused);
        str_free(&prompt);
        if (g->helpers)
            helper_done(g->helpers, &spec, model ? model : "", NULL, -1, err,
                        clock_mono_ms() - t0);
        return -err->code;
    }
    tool_result_free(&refused);
    if (child->res && (child->res->params.max_turns <= 0 ||
                       child->res->params.max_turns > HOOK_AGENT_MAX_TURNS))
        child->res->params.max_turns = HOOK_AGENT_MAX_TURNS;
    watchdog w = {.timeout_ms = req->timeout_ms > 0 ? req->timeout_ms : 60000,
                  .target = &child->cancel};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    pthread_t th;
    bool watching = pthread_create(&th, NULL, watch, &w) == 0;
    agent_outcome o;
    int rc = agent_execute(child, prompt.ptr, &o);
    if (watching) {
        pthread_mutex_lock(&w.mu);
        w.done = true;
        pthread_cond_signal(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(th, NULL);
    }
    char *used = xstrdup(child->model ? child->model : "");
    agent_release(child);
    str_free(&prompt);
    if (w.fired)
        rc = loom_error_set(err, LOOM_ERR_MODEL_TIMEOUT, "the agent hook's sub-agent ran past "
                            "its timeout of %ld ms", w.timeout_ms);
    else if (rc != 0 || o.state != LOOM_RUN_COMPLETED)
        rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                            "the agent hook's sub-agent did not finish: %.300s",
                            o.error ? o.error : loom_run_state_name(o.state));
    else if (!(*reply = hook_judge_parse(o.final_text)))
        rc = loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                            "the agent hook's answer held no {\"ok\": true|false} object: "
                            "\"%.120s\"", o.final_text ? o.final_text : "");
    if (g->helpers)
        helper_done(g->helpers, &spec, used, &o.usage, rc, err, clock_mono_ms() - t0);
    free(used);
    agent_outcome_free(&o);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    return rc;
}

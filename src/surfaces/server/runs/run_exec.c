/* run_exec.c — one server session's execution: the exec thread that takes
 * the session's runs one at a time (loom allows one run per session), makes
 * the loom agent and session at the first run from the profile, policy and
 * tenant quotas, starts each run (loom_run_start, or loom_run_continue for
 * a resume), turns loom's events into the server's (svc_emit), tracks the
 * run's state, step and usage from them, and ends it: artifacts, the final
 * run.state_changed, run.completed and its webhook.
 *
 * Owns the loom agent/session of each srv_session and the loom_run of each
 * srv_run (freed here). Threading: one exec thread per busy session; the
 * event callback runs on loom's thread and never blocks on I/O (it only
 * queues to the writer); svc->mu is released around every loom.h call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/runs/artifacts.h"
#include "surfaces/server/runs/service_int.h"

/* ---- events ------------------------------------------------------------- */

static void emit_full(service *svc, srv_run *r, const char *type, const char *ts,
                      const char *vis, json_t *corr, json_t *payload)
{
    int64_t seq = ++r->seq;
    char id[SVC_ID_LEN + 24], now[32];
    snprintf(id, sizeof id, "%s.%lld", r->id, (long long)seq);
    if (!ts) {
        svc_now(now);
        ts = now;
    }
    json_t *e = json_object();
    json_object_set_new(e, "event_id", json_string(id));
    json_object_set_new(e, "seq", json_integer(seq));
    json_object_set_new(e, "run_id", json_string(r->id));
    json_object_set_new(e, "type", json_string(type));
    json_object_set_new(e, "ts", json_string(ts));
    json_object_set_new(e, "visibility", json_string(vis));
    json_object_set_new(e, "correlation_id", corr ? corr : json_null());
    json_object_set_new(e, "payload", payload ? payload : json_object());
    writer_event(svc->w, r->id, seq, svc_fence(svc, r), svc_dump(e));
}

void svc_emit(service *svc, srv_run *r, const char *type, loom_visibility vis,
              const char *correlation_id, json_t *payload)
{
    emit_full(svc, r, type, NULL, loom_visibility_name(vis),
              correlation_id ? json_string(correlation_id) : NULL, payload);
}

void svc_webhook(service *svc, const char *tenant_id, const char *type, const char *event_id,
                 json_t *payload)
{
    const tenant_config *t = svc->wh ? svc_tenant(svc, tenant_id) : NULL;
    if (t && t->n_webhooks) {
        char *body = json_dumps(payload, JSON_COMPACT);
        webhooks_emit(svc->wh, t, type, event_id, body);
        free(body);
    }
    json_decref(payload);
}

int svc_transition(service *svc, srv_run *r, loom_run_state to, const char *reason,
                   srv_error *err)
{
    loom_run_state from = r->state;
    if (!run_state_can(from, to)) {
        srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION, "run %s is %s; it cannot become %s",
                 r->id, loom_run_state_name(from), loom_run_state_name(to));
        srv_error_set_run(err, r->id);
        return -1;
    }
    r->state = to;
    if (to == LOOM_RUN_RUNNING && !r->started_at[0])
        svc_now(r->started_at);
    if (run_state_terminal(to))
        svc_now(r->ended_at);
    else
        r->ended_at[0] = '\0';
    if (run_state_active(from) != run_state_active(to))
        *svc_count(svc, r->tenant_id, NULL) += run_state_active(to) ? 1 : -1;
    if (!run_state_active(to))
        snprintf(r->current_step, sizeof r->current_step, "ended");
    else if (to == LOOM_RUN_QUEUED)
        snprintf(r->current_step, sizeof r->current_step, "queued");
    else if (to == LOOM_RUN_WAITING_APPROVAL)
        snprintf(r->current_step, sizeof r->current_step, "waiting_approval");
    json_t *p = json_object();
    json_object_set_new(p, "from", json_string(loom_run_state_name(from)));
    json_object_set_new(p, "state", json_string(loom_run_state_name(to)));
    if (reason)
        json_object_set_new(p, "reason", json_string(reason));
    svc_emit(svc, r, "run.state_changed", LOOM_VIS_SYSTEM, NULL, p);
    svc_run_store(svc, r);
    pthread_cond_broadcast(&svc->cv);
    return 0;
}

static void set_error(srv_run *r, loom_error_code code, const char *message)
{
    r->err_code = code;
    free(r->err_message);
    r->err_message = code == LOOM_OK ? NULL : strdup(message ? message : "");
}

/* Stops r with a quota's error: the run ends failed with it. (mu held;
 * returns whether the caller must cancel the loom run after unlocking.) */
static bool force_stop(srv_run *r, const char *message)
{
    if (r->force_code != LOOM_OK)
        return false;
    r->force_code = LOOM_ERR_TENANT_QUOTA_EXCEEDED;
    r->force_message = strdup(message);
    r->cancel_pending = true;
    return true;
}

/* A usage object's tokens: loom writes inputTokens/outputTokens; the
 * snake_case names are taken too. */
static long tokens(json_t *usage, const char *camel, const char *snake)
{
    json_t *v = json_object_get(usage, camel);
    return (long)json_integer_value(v ? v : json_object_get(usage, snake));
}

static void add_usage(srv_run *r, json_t *usage)
{
    long in = tokens(usage, "inputTokens", "input_tokens");
    long out = tokens(usage, "outputTokens", "output_tokens");
    r->in_tok += in;
    r->out_tok += out;
    r->sess->tokens_used += in + out;
}

/* A model event's cost_usd is the run's total so far, present only while
 * every call was priced (docs/events.md); a sub-agent's own events (with
 * agent_id) carry its total, which the run's next event includes. */
static void note_cost(srv_run *r, const json_t *payload)
{
    if (json_object_get(payload, "agent_id"))
        return;
    const json_t *c = json_object_get(payload, "cost_usd");
    if (json_is_number(c))
        r->cost_usd = json_number_value(c);
    else
        r->cost_unknown = true;
}

/* On loom's thread: every loom event becomes a server event of the run. */
static void on_event(void *ctx, const loom_event *ev)
{
    srv_run *r = ctx;
    service *svc = r->svc;
    json_t *e = json_loads(ev->json, 0, NULL);
    if (!e)
        return;
    json_t *payload = json_incref(json_object_get(e, "payload"));
    if (!payload)
        payload = json_object();
    bool cancel = false;
    char why[160] = "";
    pthread_mutex_lock(&svc->mu);
    const tenant_config *t = svc_tenant(svc, r->tenant_id);
    emit_full(svc, r, ev->type, json_string_value(json_object_get(e, "ts")),
              json_string_value(json_object_get(e, "visibility")) ?: "user",
              json_incref(json_object_get(e, "correlation_id")), json_incref(payload));
    switch (ev->kind) {
    case LOOM_EV_TOKEN_DELTA:
        snprintf(r->current_step, sizeof r->current_step, "model_call");
        break;
    case LOOM_EV_MODEL_COMPLETED:
    case LOOM_EV_MODEL_USAGE:
        snprintf(r->current_step, sizeof r->current_step, "model_call");
        add_usage(r, json_object_get(payload, "usage"));
        note_cost(r, payload);
        if (t && t->quotas.tokens_per_session > 0 &&
            r->sess->tokens_used > t->quotas.tokens_per_session) {
            snprintf(why, sizeof why, "session %s spent %ld tokens, past the tenant's %ld",
                     r->session_id, r->sess->tokens_used, t->quotas.tokens_per_session);
            cancel = force_stop(r, why);
        }
        break;
    case LOOM_EV_TOOL_STARTED: {
        snprintf(r->current_step, sizeof r->current_step, "tool:%s",
                 json_string_value(json_object_get(payload, "tool")) ?: "?");
        long *n = svc_count(svc, r->tenant_id, r->project_id ? r->project_id : "");
        ++*n;
        if (t && t->quotas.tool_executions_per_project > 0 &&
            *n > t->quotas.tool_executions_per_project) {
            snprintf(why, sizeof why, "project %s ran %ld tools, past the tenant's %ld",
                     r->project_id ? r->project_id : "", *n - 1,
                     t->quotas.tool_executions_per_project);
            cancel = force_stop(r, why);
        }
        break;
    }
    case LOOM_EV_APPROVAL_REQUESTED:
        apv_requested(svc, r, payload);
        break;
    case LOOM_EV_APPROVAL_RESOLVED:
        apv_resolved(svc, r, payload);
        break;
    default:
        break;
    }
    /* With --cluster, a tool call starts only once its tool.started is
     * stored (and passed its lease's fence): a worker killed while the
     * call runs leaves the call on record, so the worker that reclaims
     * the run marks it interrupted instead of running it again. A refused
     * write abandons the run (cluster_fenced) before the wait ends: the
     * run is cancelled at once. The cost is one event batch per tool call,
     * on the run's own thread. */
    bool durable = ev->kind == LOOM_EV_TOOL_STARTED && svc->opts.cluster && r->held;
    char *event_id = NULL;
    if (ev->kind == LOOM_EV_POLICY_DENIED) {
        char buf[SVC_ID_LEN + 24];
        snprintf(buf, sizeof buf, "%s.%lld", r->id, (long long)r->seq);
        event_id = strdup(buf);
    }
    pthread_mutex_unlock(&svc->mu);
    if (durable) {
        writer_flush(svc->w);
        pthread_mutex_lock(&svc->mu);
        cancel = cancel || r->abandoned;
        pthread_mutex_unlock(&svc->mu);
    }
    if (event_id) {
        json_t *p = json_deep_copy(payload);
        json_object_set_new(p, "run_id", json_string(r->id));
        svc_webhook(svc, r->tenant_id, "policy.denied", event_id, p);
        free(event_id);
    }
    json_decref(payload);
    json_decref(e);
    /* Not through lr_mu: an HTTP thread may hold it inside loom_run_answer
     * while this event is delivered. The run is alive (this is its event);
     * before loom_run_start returned, lr is NULL and exec_one sees
     * cancel_pending instead. */
    loom_run *lr = cancel ? __atomic_load_n(&r->lr, __ATOMIC_ACQUIRE) : NULL;
    if (lr)
        loom_run_cancel(lr);
}

/* ---- the loom config ------------------------------------------------------- */

/* Appends a permission rule to a comma-separated list (loom_config_set's
 * allowed_tools / disallowed_tools / ask_tools). The config loader already
 * wrote a policy's bare command texts as Bash(<text>:*). */
static void add_rule(char **list, const char *rule)
{
    size_t old = *list ? strlen(*list) : 0;
    *list = realloc(*list, old + strlen(rule) + 2);
    if (!*list)
        abort();
    if (old)
        (*list)[old++] = ',';
    strcpy(*list + old, rule);
}

/* The seed's tool names and loom's. */
static const char *const tool_map[][2] = {
    {"bash", "Bash"}, {"file_read", "Read"}, {"file_edit", "Edit"},
    {"grep", "Grep"}, {"file_write", "Write"}, {"glob", "Glob"},
};
#define N_TOOLS (sizeof tool_map / sizeof tool_map[0])

static const char *loom_tool(const char *name)
{
    for (size_t i = 0; i < N_TOOLS; i++)
        if (!strcmp(name, tool_map[i][0]) || !strcmp(name, tool_map[i][1]))
            return tool_map[i][1];
    return NULL;
}

/* The profile's tools.allow: every known tool it leaves out is denied; an
 * unknown name is a capability the server lacks (its name in *bad). */
static int profile_tools(const agent_profile *prof, char **deny, const char **bad)
{
    if (!prof || !prof->tools_allow.n)
        return 0;
    for (size_t i = 0; i < prof->tools_allow.n; i++)
        if (!loom_tool(prof->tools_allow.items[i])) {
            *bad = prof->tools_allow.items[i];
            return -1;
        }
    for (size_t k = 0; k < N_TOOLS; k++) {
        bool listed = false;
        for (size_t i = 0; i < prof->tools_allow.n && !listed; i++)
            listed = !strcmp(loom_tool(prof->tools_allow.items[i]), tool_map[k][1]);
        if (!listed)
            add_rule(deny, tool_map[k][1]);
    }
    return 0;
}

/* Whether url's host is loopback: 127.x.y.z, localhost or [::1], ending at
 * the port, the path or the end (so 127.0.0.1.example.com is not). */
static bool loopback_url(const char *url)
{
    const char *h = url ? strstr(url, "://") : NULL;
    if (!h)
        return false;
    h += 3;
    size_t n = strcspn(h, ":/?#");
    if (h[0] == '[')
        return !strncmp(h, "[::1]", 5) && strchr(":/?#", h[5]);
    if (n == 9 && !strncmp(h, "localhost", 9))
        return true;
    int a, b, c, d, used = 0;
    return sscanf(h, "%3d.%3d.%3d.%3d%n", &a, &b, &c, &d, &used) == 4 && (size_t)used == n &&
           a == 127 && b >= 0 && b < 256 && c >= 0 && c < 256 && d >= 0 && d < 256;
}

/* Permission modes from the strictest: a profile may tighten its policy's
 * mode but never loosen it (the policy says what is forbidden). */
static int mode_rank(const char *mode)
{
    static const char *const order[] = {"plan",        "dontAsk",  "default",
                                        "acceptEdits", "auto",     "delegate",
                                        "bypassPermissions", "fullAccess"};
    for (size_t i = 0; mode && i < sizeof order / sizeof *order; i++)
        if (!strcmp(mode, order[i]))
            return (int)i;
    return 2; /* unknown: as default; loom_config_set refuses it anyway */
}

static const char *stricter_mode(const char *a, const char *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return mode_rank(a) <= mode_rank(b) ? a : b;
}

/* A tool the profile needs that the policy denies outright (a deny rule that
 * is the tool's bare name, or Name(*)): the run cannot do what it is for, so
 * it is blocked_by_policy before it starts, not left to route around. */
static const char *denied_by_policy(const agent_profile *prof, const policy_set *pol,
                                    const char **rule)
{
    for (size_t i = 0; prof && pol && i < prof->tools_allow.n; i++) {
        const char *tool = loom_tool(prof->tools_allow.items[i]);
        size_t n = tool ? strlen(tool) : 0;
        for (size_t k = 0; tool && k < pol->deny.n; k++) {
            const char *d = pol->deny.items[k];
            if (!strncmp(d, tool, n) && (d[n] == '\0' || !strcmp(d + n, "(*)"))) {
                *rule = d;
                return tool;
            }
        }
    }
    return NULL;
}

static int cfg_set(loom_config *cfg, const char *k, const char *v, loom_status *st)
{
    return v ? loom_config_set(cfg, k, v, st) : 0;
}

static int cfg_int(loom_config *cfg, const char *k, long v, loom_status *st)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    return loom_config_set(cfg, k, buf, st);
}

/* The loom config of a server session's agent, from the run's profile and
 * policy and the tenant's quotas. NULL with st set; *bad names a tool the
 * server does not have (then st is run_blocked_by_capability). */
static loom_config *make_config(service *svc, srv_session *s, srv_run *r, loom_status *st)
{
    const agent_profile *prof =
        r->agent_profile ? objects_profile(svc->objs, r->agent_profile, r->tenant_id) : NULL;
    const policy_set *pol =
        r->policy_id ? objects_policy(svc->objs, r->policy_id, r->tenant_id) : NULL;
    const tenant_config *t = svc_tenant(svc, r->tenant_id);
    char *allow = NULL, *deny = NULL, *ask = NULL;
    const char *bad = NULL;
    if (profile_tools(prof, &deny, &bad) != 0) {
        free(deny);
        memset(st, 0, sizeof *st);
        st->code = LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY;
        snprintf(st->message, sizeof st->message,
                 "profile %s names the tool %s, which this server does not have", prof->id, bad);
        return NULL;
    }
    const char *rule = NULL;
    const char *needed = denied_by_policy(prof, pol, &rule);
    if (needed) {
        free(deny);
        memset(st, 0, sizeof *st);
        st->code = LOOM_ERR_RUN_BLOCKED_BY_POLICY;
        snprintf(st->message, sizeof st->message,
                 "profile %s needs the tool %s, which policy %s denies (rule \"%s\")", prof->id,
                 needed, pol->id, rule);
        return NULL;
    }
    for (size_t i = 0; pol && i < pol->allow.n; i++)
        add_rule(&allow, pol->allow.items[i]);
    for (size_t i = 0; pol && i < pol->deny.n; i++)
        add_rule(&deny, pol->deny.items[i]);
    for (size_t i = 0; pol && i < pol->ask.n; i++)
        add_rule(&ask, pol->ask.items[i]);
    loom_config *cfg = loom_config_new();
    const char *key = prof && prof->api_key_env ? getenv(prof->api_key_env) : NULL;
    if (!key && prof && loopback_url(prof->base_url))
        key = "test";
    const char *mode = stricter_mode(prof ? prof->mode : NULL, pol ? pol->mode : NULL);
    int depth = prof ? prof->max_depth : 3;
    if (t && t->quotas.max_run_depth >= 0 && t->quotas.max_run_depth < depth)
        depth = t->quotas.max_run_depth;
    int rc = cfg_set(cfg, "provider", prof ? prof->provider : NULL, st) ||
             cfg_set(cfg, "model", prof ? prof->model : NULL, st) ||
             cfg_set(cfg, "base_url", prof ? prof->base_url : NULL, st) ||
             cfg_set(cfg, "api_key", key, st) || cfg_set(cfg, "cwd", s->workspace, st) ||
             cfg_set(cfg, "permission_mode", mode, st) ||
             cfg_set(cfg, "allowed_tools", allow, st) ||
             cfg_set(cfg, "disallowed_tools", deny, st) || cfg_set(cfg, "ask_tools", ask, st) ||
             cfg_set(cfg, "append_system_prompt", prof ? prof->system_prompt_append : NULL, st) ||
             cfg_set(cfg, "heartbeat", prof ? prof->heartbeat_json : NULL, st) ||
             /* Approvals are answered through the API: a person can answer. */
             loom_config_set(cfg, "interactive", "true", st) ||
             cfg_int(cfg, "max_agent_depth", depth < 0 ? 0 : depth, st) ||
             (pol && pol->approval_timeout_seconds > 0 &&
              cfg_int(cfg, "approval_timeout_seconds", pol->approval_timeout_seconds, st)) ||
             (t && t->quotas.max_tool_seconds > 0 &&
              cfg_int(cfg, "max_tool_seconds", t->quotas.max_tool_seconds, st)) ||
             (prof && prof->max_turns > 0 && cfg_int(cfg, "max_turns", prof->max_turns, st));
    free(allow);
    free(deny);
    free(ask);
    if (rc) {
        loom_config_free(cfg);
        return NULL;
    }
    return cfg;
}

/* The loom agent and session, made (or reopened from the JSONL file after a
 * restart) at the session's first run. Exec thread, use_mu held. */
static int ensure_session(service *svc, srv_session *s, srv_run *r, loom_status *st)
{
    /* A task names its own profile and policy: a run whose pair differs from
     * the one the agent was made for gets a new agent on the same
     * conversation (the session's JSONL file, reopened), never the last
     * task's permissions. */
    char key[512];
    snprintf(key, sizeof key, "%s\n%s", r->agent_profile ? r->agent_profile : "",
             r->policy_id ? r->policy_id : "");
    if (s->ls && s->agent_key && !strcmp(s->agent_key, key))
        return 0;
    if (s->ls) {
        loom_session_free(s->ls);
        loom_agent_free(s->agent);
        s->ls = NULL;
        s->agent = NULL;
    }
    free(s->agent_key);
    s->agent_key = strdup(key);
    loom_config *cfg = make_config(svc, s, r, st);
    if (!cfg)
        return -1;
    s->agent = loom_agent_new(cfg, st);
    loom_config_free(cfg);
    if (!s->agent)
        return -1;
    pthread_mutex_lock(&svc->mu);
    char *known = s->loom_session_id ? strdup(s->loom_session_id) : NULL;
    pthread_mutex_unlock(&svc->mu);
    /* On PostgreSQL the rows are the record: this node's file is a
     * working copy rewritten from them (a run moved here finds no file of
     * its own, or a stale one). */
    const loom_session_rows *rows = session_rows(svc, s);
    if (rows)
        s->ls = known ? loom_session_resume_rows(s->agent, known, rows, st)
                      : loom_session_new_rows(s->agent, rows, st);
    else
        s->ls = known ? loom_session_resume(s->agent, known, st) : loom_session_new(s->agent, st);
    free(known);
    if (!s->ls) {
        loom_agent_free(s->agent);
        s->agent = NULL;
        return -1;
    }
    pthread_mutex_lock(&svc->mu);
    free(s->loom_session_id);
    s->loom_session_id = strdup(loom_session_id(s->ls));
    svc_session_store(svc, s);
    pthread_mutex_unlock(&svc->mu);
    return 0;
}

/* ---- the end -------------------------------------------------------------- */

/* The final transition and what goes with it: run.completed (event and
 * webhook). (mu held; the webhook payload comes back for after unlocking.) */
static json_t *finish(service *svc, srv_run *r, loom_run_state to, const char *reason)
{
    apv_cancel_pending(svc, r);
    r->pending_approval_id[0] = '\0';
    srv_error err = {0};
    if (svc_transition(svc, r, to, reason, &err) != 0) {
        /* Not a move the table has (e.g. paused while waiting): fail it. */
        srv_error_clear(&err);
        r->state = LOOM_RUN_RUNNING;
        svc_transition(svc, r, LOOM_RUN_FAILED, reason, NULL);
    }
    json_t *p = json_object();
    json_object_set_new(p, "run_id", json_string(r->id));
    json_object_set_new(p, "session_id", json_string(r->session_id));
    json_object_set_new(p, "state", json_string(loom_run_state_name(r->state)));
    json_object_set_new(p, "stop_reason", r->stop_reason ? json_string(r->stop_reason)
                                                         : json_null());
    json_object_set_new(p, "summary", r->summary ? json_string(r->summary) : json_null());
    json_t *run = svc_run_json(r);
    json_object_set(p, "usage", json_object_get(run, "usage"));
    json_object_set(p, "error", json_object_get(run, "error"));
    json_decref(run);
    svc_emit(svc, r, "run.completed", LOOM_VIS_SYSTEM, NULL, json_incref(p));
    char id[SVC_ID_LEN + 24];
    snprintf(id, sizeof id, "%s.%lld", r->id, (long long)r->seq);
    json_object_set_new(p, "event_id", json_string(id));
    return p;
}

static void send_completed(service *svc, srv_run *r, json_t *p)
{
    pthread_mutex_lock(&svc->mu);
    bool abandoned = r->abandoned; /* its ending is another worker's to announce */
    pthread_mutex_unlock(&svc->mu);
    if (abandoned) {
        json_decref(p);
        return;
    }
    char *event_id = strdup(json_string_value(json_object_get(p, "event_id")));
    json_object_del(p, "event_id");
    svc_webhook(svc, r->tenant_id, "run.completed", event_id, p);
    free(event_id);
}

/* Ends a run that never reached loom (cancelled while queued, a missing
 * capability, a start that failed). (mu not held) */
void svc_end_without_loom(service *svc, srv_run *r, loom_run_state to, loom_error_code code,
                          const char *message)
{
    pthread_mutex_lock(&svc->mu);
    if (code != LOOM_OK)
        set_error(r, code, message);
    json_t *p = finish(svc, r, to, message);
    pthread_mutex_unlock(&svc->mu);
    send_completed(svc, r, p);
}

/* The artifacts of an ended run: each stored (content and document) and
 * announced (artifact.created event and webhook). */
enum { REPORT_EVENTS = 10000 };

static void make_artifacts(service *svc, srv_run *r, loom_run *lr, const char *run_json)
{
    char *patch = loom_run_patch(lr);
    const tenant_config *t = svc_tenant(svc, r->tenant_id);
    /* The report and the summary count the run's tools and approvals from
     * its stored events (the writer flushed first; at most the first
     * REPORT_EVENTS of a very long run). */
    writer_flush(svc->w);
    srv_error eerr = {0};
    int64_t last = 0;
    char *events = svc->st->ops->events_after(svc->st, r->id, 0, REPORT_EVENTS, &last, &eerr);
    srv_error_clear(&eerr);
    artifact_input in = {.run_id = r->id,
                         .run_json = run_json,
                         .result_json = loom_run_result_json(lr),
                         .events_json = events,
                         .patch = patch,
                         .max_artifacts = t ? t->quotas.max_artifacts_per_run : 20};
    artifact_list al;
    if (artifacts_build(&in, &al) != 0) {
        free(patch);
        free(events);
        return;
    }
    for (size_t i = 0; i < al.n; i++) {
        artifact_item *a = &al.items[i];
        srv_error err = {0};
        if (svc->st->ops->put_blob(svc->st, r->id, a->name, a->data, a->len, &err) != 0) {
            fprintf(stderr, "loom-serve: artifact %s of %s not stored: %s\n", a->name, r->id,
                    err.message);
            srv_error_clear(&err);
            continue;
        }
        char id[SVC_ID_LEN], now[32], uri[SVC_ID_LEN + 200];
        svc_new_id("art_", id);
        svc_now(now);
        snprintf(uri, sizeof uri, "artifact://%s/%s", r->id, a->name);
        json_t *o = json_object();
        json_object_set_new(o, "artifact_id", json_string(id));
        json_object_set_new(o, "run_id", json_string(r->id));
        json_object_set_new(o, "kind", json_string(a->kind));
        json_object_set_new(o, "name", json_string(a->name));
        json_object_set_new(o, "title", json_string(a->title ? a->title : a->name));
        json_object_set_new(o, "uri", json_string(uri));
        json_object_set_new(o, "size", json_integer((json_int_t)a->len));
        json_object_set_new(o, "created_at", json_string(now));
        json_t *meta = json_object();
        json_object_set_new(meta, "content_type", json_string(a->content_type));
        json_object_set_new(o, "metadata", meta);
        json_object_set_new(o, "scopes",
                            svc_scopes(r->tenant_id, r->project_id, r->session_id, r->id));
        store_doc_keys keys = {r->tenant_id, r->id, NULL, now};
        char *doc = json_dumps(o, JSON_COMPACT);
        if (svc->st->ops->put(svc->st, STORE_ARTIFACT, id, &keys, doc, &err) != 0)
            fprintf(stderr, "loom-serve: artifact %s not stored: %s\n", id, err.message);
        srv_error_clear(&err);
        free(doc);
        json_t *p = json_object();
        json_object_set_new(p, "artifact_id", json_string(id));
        json_object_set_new(p, "run_id", json_string(r->id));
        json_object_set_new(p, "name", json_string(a->name));
        json_object_set_new(p, "kind", json_string(a->kind));
        json_object_set_new(p, "uri", json_string(uri));
        json_object_set_new(p, "title", json_string(a->title ? a->title : a->name));
        pthread_mutex_lock(&svc->mu);
        svc_emit(svc, r, "artifact.created", LOOM_VIS_USER, NULL, json_incref(p));
        char eid[SVC_ID_LEN + 24];
        snprintf(eid, sizeof eid, "%s.%lld", r->id, (long long)r->seq);
        pthread_mutex_unlock(&svc->mu);
        svc_webhook(svc, r->tenant_id, "artifact.created", eid, o);
        json_decref(p);
    }
    if (al.dropped) {
        pthread_mutex_lock(&svc->mu);
        json_t *w = json_object();
        json_object_set_new(w, "kind", json_string("artifacts"));
        char msg[160];
        snprintf(msg, sizeof msg, "%zu artifacts left out: the tenant allows %d a run", al.dropped,
                 in.max_artifacts);
        json_object_set_new(w, "message", json_string(msg));
        svc_emit(svc, r, "warning.emitted", LOOM_VIS_SYSTEM, NULL, w);
        pthread_mutex_unlock(&svc->mu);
    }
    artifact_list_free(&al);
    /* The run's evidence packs (SearchKnowledge), for its citations. */
    char *packs = loom_run_evidence_packs_json(lr);
    svc_store_run_packs(svc, r, packs);
    free(packs);
    free(patch);
    free(events);
}

/* The server state for loom's result. */
static const char STOPPED[] =
    "the server stopped while the run was going; :resume goes on from where it was";

static loom_run_state end_state(const service *svc, srv_run *r, json_t *res, const char **reason)
{
    const char *code = json_string_value(json_object_get(json_object_get(res, "error"), "code"));
    int st = loom_run_state_from_name(json_string_value(json_object_get(res, "state")));
    *reason = NULL;
    if (r->force_code != LOOM_OK) {
        *reason = r->force_message;
        return LOOM_RUN_FAILED;
    }
    if ((code && !strcmp(code, "run_blocked_by_policy")) || st == LOOM_RUN_BLOCKED_BY_POLICY)
        return LOOM_RUN_BLOCKED_BY_POLICY;
    if ((code && !strcmp(code, "run_blocked_by_capability")) ||
        st == LOOM_RUN_BLOCKED_BY_CAPABILITY)
        return LOOM_RUN_BLOCKED_BY_CAPABILITY;
    if (st == LOOM_RUN_CANCELLED && svc->stopping) {
        /* Nobody cancelled it: a stop of the server (SIGTERM) ends the run
         * resumable, as a crash would, not cancelled. */
        *reason = STOPPED;
        return LOOM_RUN_FAILED;
    }
    if (st == LOOM_RUN_CANCELLED) {
        *reason = r->cancel_reason;
        return LOOM_RUN_CANCELLED;
    }
    if (st == LOOM_RUN_COMPLETED || st == LOOM_RUN_PAUSED || st == LOOM_RUN_FAILED)
        return (loom_run_state)st;
    return LOOM_RUN_FAILED;
}

/* A worker of a cluster that stops hands its runs back instead of failing
 * them: the run is queued again (through failed/run_resumable, the moves
 * the state table has) for another worker to claim and continue from its
 * last turn; nothing is announced as ended. (mu held) */
static void hand_back(service *svc, srv_run *r)
{
    apv_cancel_pending(svc, r);
    r->pending_approval_id[0] = '\0';
    char why[200];
    snprintf(why, sizeof why, "worker %s stopped; the run goes to another worker",
             svc->worker_id);
    set_error(r, LOOM_ERR_RUN_RESUMABLE, why);
    if (svc_transition(svc, r, LOOM_RUN_FAILED, why, NULL) == 0) {
        set_error(r, LOOM_OK, NULL);
        svc_transition(svc, r, LOOM_RUN_QUEUED, "handed back by a stopping worker", NULL);
    }
}

static void end_run(service *svc, srv_run *r, loom_run *lr)
{
    json_t *res = json_loads(loom_run_result_json(lr), 0, NULL);
    const char *reason;
    pthread_mutex_lock(&svc->mu);
    loom_run_state to = end_state(svc, r, res, &reason);
    if (svc->opts.cluster && reason == STOPPED) {
        hand_back(svc, r);
        pthread_mutex_unlock(&svc->mu);
        json_decref(res);
        return;
    }
    free(r->summary);
    free(r->stop_reason);
    const char *sum = json_string_value(json_object_get(res, "result"));
    r->summary = sum ? strdup(sum) : NULL;
    const char *sr = json_string_value(json_object_get(res, "stop_reason"));
    r->stop_reason = sr ? strdup(sr) : NULL;
    json_t *usage = json_object_get(res, "usage");
    if (json_is_object(usage)) { /* the run's own total wins over the events' sum */
        r->in_tok = r->base_in + tokens(usage, "inputTokens", "input_tokens");
        r->out_tok = r->base_out + tokens(usage, "outputTokens", "output_tokens");
    }
    json_t *e = json_object_get(res, "error");
    if (r->force_code != LOOM_OK)
        set_error(r, r->force_code, r->force_message);
    else if (reason == STOPPED)
        set_error(r, LOOM_ERR_RUN_RESUMABLE, STOPPED);
    else if (to == LOOM_RUN_CANCELLED)
        set_error(r, LOOM_ERR_RUN_CANCELLED, r->cancel_reason ? r->cancel_reason : "cancelled");
    else if (json_is_object(e)) {
        int c = loom_error_code_from_name(json_string_value(json_object_get(e, "code")));
        set_error(r, c > 0 ? (loom_error_code)c : LOOM_ERR_INTERNAL,
                  json_string_value(json_object_get(e, "message")));
    } else {
        set_error(r, LOOM_OK, NULL);
    }
    /* The artifacts describe the run as it ends (the final transition is
     * made after them, so that artifact.created comes before it). */
    json_t *ending = svc_run_json(r);
    char now[32];
    svc_now(now);
    json_object_set_new(ending, "state", json_string(loom_run_state_name(to)));
    json_object_set_new(ending, "current_step", json_string("ended"));
    json_object_set_new(ending, "ended_at", json_string(now));
    json_object_set_new(ending, "updated_at", json_string(now));
    char *run_json = svc_dump(ending);
    pthread_mutex_unlock(&svc->mu);
    if (to != LOOM_RUN_PAUSED)
        make_artifacts(svc, r, lr, run_json);
    free(run_json);
    pthread_mutex_lock(&svc->mu);
    json_t *p = finish(svc, r, to, reason);
    pthread_mutex_unlock(&svc->mu);
    send_completed(svc, r, p);
    json_decref(res);
}

/* ---- the exec thread -------------------------------------------------------- */

/* One run, start to end. use_mu held. */
static void exec_one(service *svc, srv_session *s, srv_run *r)
{
    loom_status st = {0};
    if (ensure_session(svc, s, r, &st) != 0) {
        loom_run_state to = st.code == LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY ? LOOM_RUN_BLOCKED_BY_CAPABILITY
                            : st.code == LOOM_ERR_RUN_BLOCKED_BY_POLICY  ? LOOM_RUN_BLOCKED_BY_POLICY
                                                                         : LOOM_RUN_FAILED;
        svc_end_without_loom(svc, r, to, st.code ? st.code : LOOM_ERR_INTERNAL, st.message);
        return;
    }
    cluster_open_calls(svc, r, s->ls); /* a moved run's calls left open */
    pthread_mutex_lock(&svc->mu);
    if (r->cancel_pending && svc->stopping && svc->opts.cluster) {
        pthread_mutex_unlock(&svc->mu);
        return; /* still queued: its lease goes, another worker runs it */
    }
    if (r->cancel_pending && svc->stopping) {
        pthread_mutex_unlock(&svc->mu);
        svc_end_without_loom(svc, r, LOOM_RUN_FAILED, LOOM_ERR_RUN_RESUMABLE, STOPPED);
        return;
    }
    if (r->cancel_pending) {
        pthread_mutex_unlock(&svc->mu);
        svc_end_without_loom(svc, r, LOOM_RUN_CANCELLED, LOOM_ERR_RUN_CANCELLED,
                         r->cancel_reason ? r->cancel_reason : "cancelled before it started");
        return;
    }
    svc_transition(svc, r, LOOM_RUN_RUNNING, NULL, NULL);
    bool cont = r->continue_next;
    char *note = r->note ? strdup(r->note) : NULL;
    char *goal = strdup(r->goal ? r->goal : "");
    r->base_in = r->in_tok;
    r->base_out = r->out_tok;
    r->force_code = LOOM_OK;
    pthread_mutex_unlock(&svc->mu);
    if (svc->opts.cluster) {
        /* Running on record before the session gets any of this run's
         * records: a worker that takes the run over then knows to look at
         * the session for calls left open (cluster_open_calls). */
        writer_flush(svc->w);
        pthread_mutex_lock(&svc->mu);
        bool lost = r->abandoned;
        pthread_mutex_unlock(&svc->mu);
        if (lost) {
            free(note);
            free(goal);
            return;
        }
    }

    /* AskUserQuestion waits for an answer from outside (external.c). */
    loom_run_options opts = {.on_event = on_event, .event_ctx = r, .ask_user = svc_ask_external,
                             .ask_ctx = r};
    if (svc->opts.cluster) { /* a lease lost meanwhile stops a call before it starts */
        opts.tool_gate = cluster_tool_gate;
        opts.gate_ctx = r;
    }
    if (cont && svc->opts.cluster && !cluster_goal_recorded(s->ls, goal))
        cont = false; /* a moved run whose worker died before its goal was recorded */
    loom_run *lr = cont ? loom_run_continue(s->ls, note, &opts, &st)
                        : loom_run_start(s->ls, goal, &opts, &st);
    free(note);
    free(goal);
    if (!lr) {
        svc_end_without_loom(svc, r, LOOM_RUN_FAILED, st.code ? st.code : LOOM_ERR_INTERNAL,
                         st.message);
        return;
    }
    pthread_mutex_lock(&r->lr_mu);
    __atomic_store_n(&r->lr, lr, __ATOMIC_RELEASE); /* on_event reads it without the lock */
    pthread_mutex_unlock(&r->lr_mu);
    pthread_mutex_lock(&svc->mu);
    bool cancel = r->cancel_pending, pause = r->pause_pending;
    r->pause_pending = false;
    pthread_mutex_unlock(&svc->mu);
    if (cancel)
        loom_run_cancel(lr);
    else if (pause)
        loom_run_pause(lr, NULL);
    loom_run_wait(lr);
    end_run(svc, r, lr);
    pthread_mutex_lock(&r->lr_mu);
    __atomic_store_n(&r->lr, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&r->lr_mu);
    loom_run_free(lr);
}

static void *exec_main(void *arg)
{
    srv_session *s = arg;
    service *svc = s->svc;
    pthread_mutex_lock(&s->use_mu);
    for (;;) {
        pthread_mutex_lock(&svc->mu);
        srv_run *r = s->active;
        if (!r && s->queue_head) {
            r = s->queue_head;
            s->queue_head = r->queue_next;
            if (!s->queue_head)
                s->queue_tail = NULL;
            r->queue_next = NULL;
            s->active = r;
            svc_session_store(svc, s);
        }
        if (!r) {
            s->exec_running = false;
            pthread_mutex_unlock(&svc->mu);
            break;
        }
        while (svc->executing >= svc->opts.max_active_runs && !svc->stopping)
            pthread_cond_wait(&svc->cv, &svc->mu);
        svc->executing++;
        /* A stopping worker of a cluster starts nothing: the run stays
         * queued in the store and its lease goes, for another worker. */
        bool go = r->state == LOOM_RUN_QUEUED && !(svc->opts.cluster && svc->stopping) &&
                  !r->abandoned;
        pthread_mutex_unlock(&svc->mu);
        if (go)
            exec_one(svc, s, r);
        pthread_mutex_lock(&svc->mu);
        svc->executing--;
        s->active = NULL;
        svc_session_store(svc, s);
        pthread_cond_broadcast(&svc->cv);
        bool held = r->held;
        if (r->abandoned) { /* its end was dropped; the run is shown as stored from now */
            r->abandoned = false;
            r->cancel_pending = false; /* abandon's, not a client's: a later claim runs it */
        }
        pthread_mutex_unlock(&svc->mu);
        if (svc->opts.cluster && s->ls) {
            /* The session's next run may go to another worker, which
             * appends to its JSONL: this copy would be stale. */
            loom_session_free(s->ls);
            loom_agent_free(s->agent);
            s->ls = NULL;
            s->agent = NULL;
            free(s->agent_key);
            s->agent_key = NULL;
        }
        if (held)
            cluster_release(svc, r);
    }
    pthread_mutex_unlock(&s->use_mu);
    /* Last: service_free waits for this count before freeing the session. */
    pthread_mutex_lock(&svc->mu);
    svc->exec_threads--;
    pthread_cond_broadcast(&svc->cv);
    pthread_mutex_unlock(&svc->mu);
    return NULL;
}

void svc_kick(service *svc, srv_session *s)
{
    if (s->exec_running)
        return;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    s->exec_running = true;
    svc->exec_threads++;
    if (pthread_create(&t, &a, exec_main, s) != 0) {
        s->exec_running = false;
        svc->exec_threads--;
        fprintf(stderr, "loom-serve: no thread for session %s\n", s->id);
    }
    pthread_attr_destroy(&a);
}

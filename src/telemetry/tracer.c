/* tracer.c — events to GenAI spans (tracer.h).
 *
 * Open spans live in one list under the tracer's lock, found by a key:
 * "agent:<agent_id>" (the root run is "agent:"), "tool:<agent_id>:<call_id>".
 * A span is finished into OTLP JSON and handed to the exporter the moment
 * its closing event arrives; chat spans are whole when model.completed
 * comes (it carries the call's start). */
#include "telemetry/tracer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"
#include "telemetry/metrics.h"

enum { KIND_INTERNAL = 1, KIND_CLIENT = 3 };
enum { STATUS_UNSET = 0, STATUS_OK = 1, STATUS_ERROR = 2 };

typedef struct span {
    char key[200];
    char id[17], parent[17];
    char *name;
    int kind;
    int64_t start_ns;
    json_t *attrs;   /* OTLP attribute array */
    json_t *events;  /* OTLP span events */
    char *model;     /* agent spans: the model its chat spans request */
    char *tool;      /* tool spans: the tool's name */
} span;

struct otel_tracer {
    pthread_mutex_t mu;
    otlp_exporter *x;
    bool capture;
    char trace_id[33];
    char *session_id, *provider;
    span *open;
    size_t n, cap;
    otel_metrics *metrics;
    int64_t start_ns;
    bool ended;
};

static void random_hex(char *out, size_t bytes)
{
    unsigned char b[16];
    if (getrandom(b, bytes, 0) != (ssize_t)bytes) {
        /* no entropy source: ids from the clock still tell spans apart */
        uint64_t v = (uint64_t)clock_mono_ns() ^ (uint64_t)clock_wall_us() << 20;
        for (size_t i = 0; i < bytes; i++)
            b[i] = (unsigned char)(v >> (8 * (i % 8))) ^ (unsigned char)(i * 37 + 1);
    }
    for (size_t i = 0; i < bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_t *nanos(int64_t ns)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)ns);
    return json_string(buf);
}

static int64_t now_ns(void)
{
    return clock_wall_us() * 1000;
}

otel_tracer *otel_tracer_new(otlp_exporter *x, bool capture_content)
{
    otel_tracer *t = calloc(1, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
    t->x = x;
    t->capture = capture_content;
    random_hex(t->trace_id, 16);
    t->metrics = otel_metrics_new();
    t->start_ns = now_ns();
    return t;
}

static span *find(otel_tracer *t, const char *key)
{
    for (size_t i = t->n; i-- > 0;)
        if (!strcmp(t->open[i].key, key))
            return &t->open[i];
    return NULL;
}

static void agent_key(char *buf, size_t n, const json_t *payload)
{
    const char *id = str(payload, "agent_id");
    snprintf(buf, n, "agent:%s", id ? id : "");
}

/* parent: the parent span or NULL; its id is copied before the list may
 * move (the pointer is not used after). */
static span *open_span(otel_tracer *t, const char *key, const char *name, int kind,
                       const span *parent, int64_t start_ns)
{
    char parent_id[17] = "";
    if (parent)
        memcpy(parent_id, parent->id, sizeof parent_id);
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->open = realloc(t->open, t->cap * sizeof *t->open);
    }
    span *s = &t->open[t->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    random_hex(s->id, 8);
    memcpy(s->parent, parent_id, sizeof s->parent);
    s->name = xstrdup(name);
    s->kind = kind;
    s->start_ns = start_ns;
    s->attrs = json_array();
    s->events = json_array();
    return s;
}

static void add(span *s, json_t *attr)
{
    json_array_append_new(s->attrs, attr);
}

/* Finishes s into OTLP JSON, queues it and takes it off the list. */
static void close_span(otel_tracer *t, span *s, int64_t end_ns, int status, const char *msg)
{
    json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:o,s:o,s:o,s:o}", "traceId", t->trace_id, "spanId",
                          s->id, "name", s->name, "kind", s->kind, "startTimeUnixNano",
                          nanos(s->start_ns), "endTimeUnixNano",
                          nanos(end_ns > s->start_ns ? end_ns : s->start_ns), "attributes",
                          s->attrs, "events", s->events);
    if (s->parent[0])
        json_object_set_new(j, "parentSpanId", json_string(s->parent));
    json_t *st = json_pack("{s:i}", "code", status);
    if (msg && *msg)
        json_object_set_new(st, "message", json_string(msg));
    json_object_set_new(j, "status", st);
    otlp_exporter_enqueue(t->x, OTEL_TRACES, j);
    free(s->name);
    free(s->model);
    free(s->tool);
    size_t i = (size_t)(s - t->open);
    memmove(&t->open[i], &t->open[i + 1], (t->n - i - 1) * sizeof *t->open);
    t->n--;
}

/* The scalar members of an event's payload, as span-event attributes. */
static json_t *scalar_attrs(const json_t *payload)
{
    json_t *a = json_array();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)payload, k, v) {
        char key[128];
        snprintf(key, sizeof key, "loom.%s", k);
        if (json_is_string(v))
            json_array_append_new(a, otel_attr_str(key, json_string_value(v)));
        else if (json_is_integer(v))
            json_array_append_new(a, otel_attr_int(key, json_integer_value(v)));
        else if (json_is_real(v))
            json_array_append_new(a, otel_attr_double(key, json_real_value(v)));
        else if (json_is_boolean(v))
            json_array_append_new(a, otel_attr_bool(key, json_is_true(v)));
    }
    return a;
}

static void span_event(span *s, loom_event_type type, const json_t *payload)
{
    json_array_append_new(s->events,
                          json_pack("{s:o,s:s,s:o}", "timeUnixNano", nanos(now_ns()), "name",
                                    loom_event_type_name(type), "attributes",
                                    scalar_attrs(payload)));
}

/* gen_ai.provider.name: the conventions' well-known values. */
static const char *genai_provider(const char *loom_provider)
{
    if (!loom_provider)
        return "unknown";
    if (!strncmp(loom_provider, "openai", 6))
        return "openai";
    return loom_provider;
}

static json_t *model_attrs(otel_tracer *t, const char *op, const char *model)
{
    return json_pack("[o,o,o]", otel_attr_str("gen_ai.operation.name", op),
                     otel_attr_str("gen_ai.provider.name", genai_provider(t->provider)),
                     otel_attr_str("gen_ai.request.model", model ? model : ""));
}

static void on_run_started(otel_tracer *t, const json_t *p)
{
    if (find(t, "agent:"))
        return; /* a later run.state_changed (waiting_approval, running) */
    free(t->session_id);
    free(t->provider);
    t->session_id = xstrdup(str(p, "session_id"));
    t->provider = xstrdup(str(p, "provider"));
    span *s = open_span(t, "agent:", "invoke_agent loom", KIND_INTERNAL, NULL, now_ns());
    s->model = xstrdup(str(p, "model"));
    add(s, otel_attr_str("gen_ai.operation.name", "invoke_agent"));
    add(s, otel_attr_str("gen_ai.agent.name", "loom"));
    add(s, otel_attr_str("gen_ai.provider.name", genai_provider(t->provider)));
    add(s, otel_attr_str("gen_ai.request.model", s->model));
    add(s, otel_attr_str("gen_ai.conversation.id", t->session_id));
}

static void usage_attrs(span *s, const json_t *u)
{
    static const struct { const char *from, *to; } map[] = {
        {"inputTokens", "gen_ai.usage.input_tokens"},
        {"outputTokens", "gen_ai.usage.output_tokens"},
        {"cacheReadTokens", "gen_ai.usage.cache_read.input_tokens"},
        {"cacheCreationTokens", "gen_ai.usage.cache_creation.input_tokens"},
        {"reasoningTokens", "gen_ai.usage.reasoning.output_tokens"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        add(s, otel_attr_int(map[i].to, json_integer_value(json_object_get(u, map[i].from))));
}

/* gen_ai.client.token.usage, one point per token type the call used
 * (cache types only when non-zero); purpose: a side call's, else NULL. */
static void record_tokens(otel_tracer *t, const char *model, const json_t *u, const char *purpose)
{
    static const struct { const char *field, *type; } tok[] = {
        {"inputTokens", "input"}, {"outputTokens", "output"},
        {"cacheReadTokens", "cache_read"}, {"cacheCreationTokens", "cache_creation"}};
    for (size_t i = 0; i < sizeof tok / sizeof *tok; i++) {
        json_int_t n = json_integer_value(json_object_get(u, tok[i].field));
        if (i >= 2 && n == 0)
            continue;
        json_t *a = model_attrs(t, "chat", model);
        json_array_append_new(a, otel_attr_str("gen_ai.token.type", tok[i].type));
        if (purpose)
            json_array_append_new(a, otel_attr_str("loom.purpose", purpose));
        otel_metrics_record(t->metrics, "gen_ai.client.token.usage", "{token}", METRIC_TOKENS, a,
                            (double)n);
    }
}

static void on_model_completed(otel_tracer *t, const json_t *p)
{
    char key[200];
    agent_key(key, sizeof key, p);
    span *agent = find(t, key);
    if (!agent)
        agent = find(t, "agent:");
    const char *model = agent && agent->model ? agent->model : "";
    int64_t end = now_ns();
    int64_t start_us = json_integer_value(json_object_get(p, "started_us"));
    int64_t start = start_us > 0 ? start_us * 1000 : end;
    char name[300];
    snprintf(name, sizeof name, "chat %s", model);
    span *s = open_span(t, "chat", name, KIND_CLIENT, agent, start);
    json_t *base = model_attrs(t, "chat", model);
    json_array_extend(s->attrs, base);
    json_decref(base);
    const char *rmodel = str(p, "response_model");
    add(s, otel_attr_str("gen_ai.response.model", rmodel ? rmodel : model));
    if (str(p, "response_id"))
        add(s, otel_attr_str("gen_ai.response.id", str(p, "response_id")));
    add(s, otel_attr_str_array("gen_ai.response.finish_reasons",
                               json_pack("[s]", str(p, "stop_reason") ? str(p, "stop_reason")
                                                                       : "")));
    const json_t *u = json_object_get(p, "usage");
    usage_attrs(s, u);
    add(s, otel_attr_str("gen_ai.conversation.id", t->session_id));
    if (str(p, "agent_id"))
        add(s, otel_attr_str("gen_ai.agent.id", str(p, "agent_id")));
    /* metrics: tokens by type, the call's duration, its first chunk */
    record_tokens(t, model, u, NULL);
    otel_metrics_record(t->metrics, "gen_ai.client.operation.duration", "s", METRIC_SECONDS,
                        model_attrs(t, "chat", model), (double)(end - start) / 1e9);
    int64_t first_us = json_integer_value(json_object_get(p, "first_chunk_us"));
    if (first_us > 0 && start_us > 0)
        otel_metrics_record(t->metrics, "gen_ai.client.operation.time_to_first_chunk", "s",
                            METRIC_SECONDS, model_attrs(t, "chat", model),
                            (double)(first_us - start_us) / 1e6);
    close_span(t, s, end, STATUS_UNSET, NULL);
}

/* model.usage: a model call the run made besides its turns (auto mode's
 * classifier, a compaction's summary). A chat span under the agent that
 * made it, named and attributed like a turn's, with loom.purpose; the event
 * comes when the usage is counted, so the span starts at started_us when
 * the payload has it and is a point in time otherwise. */
static void on_side_usage(otel_tracer *t, const json_t *p)
{
    char key[200];
    agent_key(key, sizeof key, p);
    span *agent = find(t, key);
    if (!agent)
        agent = find(t, "agent:");
    const char *model = str(p, "model");
    if (!model)
        model = agent && agent->model ? agent->model : "";
    const char *purpose = str(p, "purpose") ? str(p, "purpose") : "side";
    int64_t end = now_ns();
    int64_t start_us = json_integer_value(json_object_get(p, "started_us"));
    int64_t start = start_us > 0 ? start_us * 1000 : end;
    char name[300];
    snprintf(name, sizeof name, "chat %s", model);
    span *s = open_span(t, "chat", name, KIND_CLIENT, agent, start);
    json_t *base = model_attrs(t, "chat", model);
    json_array_extend(s->attrs, base);
    json_decref(base);
    add(s, otel_attr_str("loom.purpose", purpose));
    json_int_t calls = json_integer_value(json_object_get(p, "calls"));
    add(s, otel_attr_int("loom.calls", calls > 0 ? calls : 1));
    if (str(p, "tool"))
        add(s, otel_attr_str("gen_ai.tool.name", str(p, "tool")));
    const json_t *u = json_object_get(p, "usage");
    usage_attrs(s, u);
    add(s, otel_attr_str("gen_ai.conversation.id", t->session_id));
    if (str(p, "agent_id"))
        add(s, otel_attr_str("gen_ai.agent.id", str(p, "agent_id")));
    record_tokens(t, model, u, purpose);
    close_span(t, s, end, STATUS_UNSET, NULL);
}

/* mcp__<server>__<tool>: the MCP conventions' attributes. */
static void mcp_attrs(span *s, const char *tool)
{
    if (strncmp(tool, "mcp__", 5) != 0)
        return;
    const char *server = tool + 5;
    const char *sep = strstr(server, "__");
    if (!sep)
        return;
    char srv[128];
    snprintf(srv, sizeof srv, "%.*s", (int)(sep - server), server);
    add(s, otel_attr_str("mcp.method.name", "tools/call"));
    add(s, otel_attr_str("mcp.tool.name", sep + 2));
    add(s, otel_attr_str("loom.mcp.server", srv));
}

static void on_tool_started(otel_tracer *t, const json_t *p)
{
    const char *call = str(p, "call_id"), *tool = str(p, "tool");
    if (!call || !tool)
        return;
    char akey[200], key[200];
    agent_key(akey, sizeof akey, p);
    snprintf(key, sizeof key, "tool:%s:%s", akey + 6, call);
    span *agent = find(t, akey);
    if (!agent)
        agent = find(t, "agent:");
    char name[300];
    snprintf(name, sizeof name, "execute_tool %s", tool);
    span *s = open_span(t, key, name, strncmp(tool, "mcp__", 5) ? KIND_INTERNAL : KIND_CLIENT,
                        agent, now_ns());
    s->tool = xstrdup(tool);
    add(s, otel_attr_str("gen_ai.operation.name", "execute_tool"));
    add(s, otel_attr_str("gen_ai.tool.name", tool));
    add(s, otel_attr_str("gen_ai.tool.call.id", call));
    add(s, otel_attr_str("gen_ai.tool.type", "function"));
    mcp_attrs(s, tool);
    if (t->capture) {
        char *args = json_dump_compact(json_object_get(p, "input"));
        add(s, otel_attr_str("gen_ai.tool.call.arguments", args ? args : "null"));
        free(args);
    }
}

static void on_tool_finished(otel_tracer *t, loom_event_type type, const json_t *p)
{
    const char *call = str(p, "call_id");
    if (!call)
        return;
    char akey[200], key[200];
    agent_key(akey, sizeof akey, p);
    snprintf(key, sizeof key, "tool:%s:%s", akey + 6, call);
    span *s = find(t, key);
    if (!s)
        return;
    bool failed = type == LOOM_EV_TOOL_FAILED || json_is_true(json_object_get(p, "is_error"));
    int64_t start_us = json_integer_value(json_object_get(p, "started_us"));
    int64_t end_us = json_integer_value(json_object_get(p, "finished_us"));
    if (start_us > 0)
        s->start_ns = start_us * 1000;
    int64_t end = end_us > 0 ? end_us * 1000 : now_ns();
    if (t->capture && str(p, "output"))
        add(s, otel_attr_str("gen_ai.tool.call.result", str(p, "output")));
    const char *step = str(p, "failed_step");
    if (failed)
        add(s, otel_attr_str("error.type", step ? step : "tool_error"));
    json_t *a = json_pack("[o,o]", otel_attr_str("gen_ai.tool.name", s->tool),
                          otel_attr_str("loom.tool.outcome", failed ? "error" : "ok"));
    otel_metrics_record(t->metrics, "loom.tool.duration", "s", METRIC_SECONDS, a,
                        (double)(end - s->start_ns) / 1e9);
    close_span(t, s, end, failed ? STATUS_ERROR : STATUS_UNSET,
               failed ? (step ? step : "the tool reported an error") : NULL);
}

static void on_agent_spawned(otel_tracer *t, const json_t *p)
{
    const char *id = str(p, "agent_id"), *call = str(p, "parent_call_id");
    if (!id)
        return;
    /* The Agent call that started it: the newest open tool span of that id. */
    span *parent = NULL;
    if (call) {
        size_t cl = strlen(call);
        for (size_t i = t->n; i-- > 0 && !parent;) {
            size_t kl = strlen(t->open[i].key);
            if (!strncmp(t->open[i].key, "tool:", 5) && kl > cl &&
                !strcmp(t->open[i].key + kl - cl, call) && t->open[i].key[kl - cl - 1] == ':')
                parent = &t->open[i];
        }
    }
    if (!parent)
        parent = find(t, "agent:");
    const char *type = str(p, "agent_type") ? str(p, "agent_type") : "agent";
    char key[200], name[300];
    snprintf(key, sizeof key, "agent:%s", id);
    snprintf(name, sizeof name, "invoke_agent %s", type);
    span *s = open_span(t, key, name, KIND_INTERNAL, parent, now_ns());
    s->model = xstrdup(str(p, "model"));
    add(s, otel_attr_str("gen_ai.operation.name", "invoke_agent"));
    add(s, otel_attr_str("gen_ai.agent.name", type));
    add(s, otel_attr_str("gen_ai.agent.id", id));
    add(s, otel_attr_str("gen_ai.provider.name", genai_provider(t->provider)));
    add(s, otel_attr_str("gen_ai.request.model", s->model ? s->model : ""));
    add(s, otel_attr_str("gen_ai.conversation.id", t->session_id));
    if (str(p, "description"))
        add(s, otel_attr_str("gen_ai.agent.description", str(p, "description")));
}

static void on_agent_completed(otel_tracer *t, const json_t *p)
{
    char key[200];
    snprintf(key, sizeof key, "agent:%s", str(p, "agent_id") ? str(p, "agent_id") : "?");
    span *s = find(t, key);
    if (!s)
        return;
    usage_attrs(s, json_object_get(p, "usage"));
    const char *state = str(p, "state");
    bool ok = state && !strcmp(state, "completed");
    if (!ok)
        add(s, otel_attr_str("error.type", state ? state : "unknown"));
    close_span(t, s, now_ns(), ok ? STATUS_UNSET : STATUS_ERROR, ok ? NULL : state);
}

/* Approvals belong to the call they ask about; the rest to the agent. */
static void on_span_event(otel_tracer *t, loom_event_type type, const json_t *p)
{
    char akey[200];
    agent_key(akey, sizeof akey, p);
    span *s = NULL;
    const char *call = str(p, "call_id");
    if (call) {
        char key[200];
        snprintf(key, sizeof key, "tool:%s:%s", akey + 6, call);
        s = find(t, key);
    }
    if (!s)
        s = find(t, akey);
    if (!s)
        s = find(t, "agent:");
    if (s)
        span_event(s, type, p);
    if (type == LOOM_EV_APPROVAL_RESOLVED)
        otel_metrics_record(
            t->metrics, "loom.permission.decisions", "{decision}", METRIC_SUM,
            json_pack("[o]", otel_attr_str("loom.decision", json_is_true(json_object_get(
                                                                 p, "approved"))
                                                                 ? "approved"
                                                                 : "denied")),
            1);
    else if (type == LOOM_EV_POLICY_DENIED)
        otel_metrics_record(t->metrics, "loom.permission.decisions", "{decision}", METRIC_SUM,
                            json_pack("[o]", otel_attr_str("loom.decision", "policy_denied")),
                            1);
}

void otel_tracer_observe(otel_tracer *t, loom_event_type type, const json_t *p)
{
    if (!t || !json_is_object(p))
        return;
    pthread_mutex_lock(&t->mu);
    if (t->ended) {
        pthread_mutex_unlock(&t->mu);
        return; /* a background agent after the run: its trace is over */
    }
    switch (type) {
    case LOOM_EV_RUN_STATE_CHANGED:
        if (str(p, "state") && !strcmp(str(p, "state"), "running") && str(p, "provider"))
            on_run_started(t, p);
        break;
    case LOOM_EV_MODEL_COMPLETED: on_model_completed(t, p); break;
    case LOOM_EV_MODEL_USAGE: on_side_usage(t, p); break;
    case LOOM_EV_TOOL_STARTED: on_tool_started(t, p); break;
    case LOOM_EV_TOOL_FINISHED:
    case LOOM_EV_TOOL_FAILED: on_tool_finished(t, type, p); break;
    case LOOM_EV_AGENT_SPAWNED: on_agent_spawned(t, p); break;
    case LOOM_EV_AGENT_COMPLETED: on_agent_completed(t, p); break;
    case LOOM_EV_CONTEXT_COMPACTION_STARTED:
    case LOOM_EV_CONTEXT_COMPACTED:
    case LOOM_EV_CONTEXT_RENEWED:
    case LOOM_EV_HEARTBEAT_EVENT:
    case LOOM_EV_APPROVAL_REQUESTED:
    case LOOM_EV_APPROVAL_RESOLVED:
    case LOOM_EV_POLICY_DENIED:
    case LOOM_EV_STREAM_RESTARTED: on_span_event(t, type, p); break;
    default: break;
    }
    pthread_mutex_unlock(&t->mu);
}

/* Self-evolution's metric set (docs/evolve.md "Metrics"), when the run's
 * result carries it: the accepted totals as gauges, the items recalled
 * into the run and those it never used as sums (their ratio over many
 * runs is the mis-injection rate). Under t->mu. */
static void evolve_metrics(otel_tracer *t, const json_t *m)
{
    if (!json_is_object(m))
        return;
    static const struct {
        const char *key, *name, *unit;
        metric_kind kind;
    } rows[] = {
        {"constraints_accepted", "loom.evolve.constraints.accepted", "{constraint}", METRIC_GAUGE},
        {"skills_accepted", "loom.evolve.skills.accepted", "{skill}", METRIC_GAUGE},
        {"agents_accepted", "loom.evolve.agents.accepted", "{agent}", METRIC_GAUGE},
        {"recalled", "loom.evolve.recalled", "{item}", METRIC_SUM},
        {"recalled_unused", "loom.evolve.recalled.unused", "{item}", METRIC_SUM},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const json_t *v = json_object_get(m, rows[i].key);
        if (json_is_integer(v))
            otel_metrics_record(t->metrics, rows[i].name, rows[i].unit, rows[i].kind,
                                json_array(), (double)json_integer_value(v));
    }
}

void otel_tracer_end(otel_tracer *t, const json_t *result)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    if (t->ended) {
        pthread_mutex_unlock(&t->mu);
        return;
    }
    t->ended = true;
    int64_t end = now_ns();
    const char *state = str(result, "state");
    bool ok = state && !strcmp(state, "completed");
    span *root = find(t, "agent:");
    if (root) {
        usage_attrs(root, json_object_get(result, "usage"));
        json_t *cost = json_object_get(result, "cost_usd");
        if (json_is_number(cost)) {
            add(root, otel_attr_double("loom.cost_usd", json_number_value(cost)));
            otel_metrics_record(t->metrics, "loom.cost", "USD", METRIC_SUM,
                                model_attrs(t, "invoke_agent", root->model),
                                json_number_value(cost));
        }
        if (str(result, "stop_reason"))
            add(root, otel_attr_str("loom.stop_reason", str(result, "stop_reason")));
        evolve_metrics(t, json_object_get(json_object_get(result, "evolve"), "metrics"));
        if (!ok)
            add(root, otel_attr_str("error.type", state ? state : "unknown"));
    }
    /* Spans still open (a call cut off by the run's end) close with it,
     * innermost first so every child ends before its parent. */
    while (t->n > 0) {
        span *s = &t->open[t->n - 1];
        bool is_root = !strcmp(s->key, "agent:");
        close_span(t, s, end, is_root ? (ok ? STATUS_OK : STATUS_ERROR) : STATUS_ERROR,
                   is_root ? (ok ? NULL : state) : "the run ended first");
    }
    json_t *metrics = otel_metrics_export(t->metrics, t->start_ns, end);
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
        otlp_exporter_enqueue(t->x, OTEL_METRICS, json_incref(m));
    json_decref(metrics);
    pthread_mutex_unlock(&t->mu);
}

bool otel_tracer_traceparent(otel_tracer *t, const char *call_id, char buf[56])
{
    if (!t)
        return false;
    pthread_mutex_lock(&t->mu);
    span *s = NULL;
    size_t cl = call_id ? strlen(call_id) : 0;
    for (size_t i = t->n; cl && i-- > 0 && !s;) {
        size_t kl = strlen(t->open[i].key);
        if (!strncmp(t->open[i].key, "tool:", 5) && kl > cl &&
            !strcmp(t->open[i].key + kl - cl, call_id) && t->open[i].key[kl - cl - 1] == ':')
            s = &t->open[i];
    }
    if (!s)
        s = find(t, "agent:");
    if (s)
        snprintf(buf, 56, "00-%s-%s-01", t->trace_id, s->id);
    pthread_mutex_unlock(&t->mu);
    return s != NULL;
}

void otel_tracer_free(otel_tracer *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->open[i].name);
        free(t->open[i].model);
        free(t->open[i].tool);
        json_decref(t->open[i].attrs);
        json_decref(t->open[i].events);
    }
    free(t->open);
    free(t->session_id);
    free(t->provider);
    otel_metrics_free(t->metrics);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

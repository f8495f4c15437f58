/* helper.c — helper model calls: routes, breakers, the record queue (see
 * helper.h). */
#include "provider/helper.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"
#include "provider/models.h"

/* The purposes: name, default tier, timeout, output cap. Tiers follow seed
 * 001 §7.2.2: judgments (classifier, prompt hooks, memory selection,
 * titles) are lite; compaction and memory extraction inherit the main
 * model (a summary that replaces the history must not be downgraded).
 * Timeouts: §7.2.4 ④ gives the classifier 60 s; a summary of a long
 * conversation gets what a turn gets. Output caps: ② (a title: 300). */
static const struct {
    const char *name;
    helper_tier tier;
    long timeout_ms;
    int max_tokens;             /* 0: the caller's */
} purposes[HELPER_PURPOSE_COUNT] = {
    [HELPER_COMPACTION] = {"compaction", HELPER_TIER_MAIN, 600000, 0},
    [HELPER_PERMISSION_CLASSIFIER] = {"permission_classifier", HELPER_TIER_LITE, 60000, 300},
    [HELPER_WEBFETCH] = {"webfetch", HELPER_TIER_LITE, 120000, 2048},
    [HELPER_TITLE] = {"title", HELPER_TIER_LITE, 30000, 300},
    [HELPER_MEMORY_EXTRACT] = {"memory_extract", HELPER_TIER_MAIN, 120000, 4096},
    [HELPER_MEMORY_SELECT] = {"memory_select", HELPER_TIER_LITE, 30000, 512},
    [HELPER_HOOK_PROMPT] = {"hook_prompt", HELPER_TIER_LITE, 30000, 512},
    [HELPER_HOOK_AGENT] = {"hook_agent", HELPER_TIER_LITE, 60000, 0},
};

static const char *const tier_names[HELPER_TIER_COUNT] = {"lite", "main", "reasoning"};

/* The provider default table: by the main model's family, what lite and
 * reasoning stand for (ids of models.c's price table, as of its date). A
 * family with no row keeps the main model for every tier. */
static const struct {
    const char *prefix;
    const char *lite, *reasoning;
} defaults[] = {
    {"claude-", "claude-haiku-5-5", "claude-opus-5-5"},
    {"gpt-5", "gpt-5-mini", "gpt-5"},
    {"gpt-4.1", "gpt-4.1-mini", "o3"},
    {"o3", "o4-mini", "o3"},
    {"o4-mini", "o4-mini", "o3"},
};

const char *helper_purpose_name(helper_purpose p)
{
    return p >= 0 && p < HELPER_PURPOSE_COUNT ? purposes[p].name : "?";
}

int helper_purpose_parse(const char *name, helper_purpose *out)
{
    for (int i = 0; name && i < HELPER_PURPOSE_COUNT; i++)
        if (!strcmp(purposes[i].name, name)) {
            *out = (helper_purpose)i;
            return 0;
        }
    return -1;
}

const char *helper_tier_name(helper_tier t)
{
    return t >= 0 && t < HELPER_TIER_COUNT ? tier_names[t] : "default";
}

int helper_tier_parse(const char *name, helper_tier *out)
{
    for (int i = 0; name && i < HELPER_TIER_COUNT; i++)
        if (!strcmp(tier_names[i], name)) {
            *out = (helper_tier)i;
            return 0;
        }
    return -1;
}

helper_tier helper_purpose_tier(helper_purpose p)
{
    return p >= 0 && p < HELPER_PURPOSE_COUNT ? purposes[p].tier : HELPER_TIER_MAIN;
}

long helper_purpose_timeout_ms(helper_purpose p)
{
    return p >= 0 && p < HELPER_PURPOSE_COUNT ? purposes[p].timeout_ms : 60000;
}

const char *helper_default_model(const char *main_model, helper_tier tier)
{
    if (!main_model || tier == HELPER_TIER_MAIN)
        return NULL;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (!strncmp(main_model, defaults[i].prefix, strlen(defaults[i].prefix)))
            return tier == HELPER_TIER_LITE ? defaults[i].lite : defaults[i].reasoning;
    return NULL;
}

/* ---- records ------------------------------------------------------------ */

void helper_record_free(helper_record *r)
{
    if (!r)
        return;
    free(r->model);
    free(r->status);
    free(r->error);
    free(r->correlation);
    free(r->tool);
    msg_usage_free(&r->usage);
}

json_t *helper_record_json(const helper_record *r)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "purpose", helper_purpose_name(r->purpose),
                          "tier", helper_tier_name(r->tier), "model", r->model ? r->model : "",
                          "status", r->status ? r->status : "ok");
    if (r->error)
        json_set_str(o, "error", r->error);
    if (r->correlation)
        json_set_str(o, "correlationId", r->correlation);
    if (r->tool)
        json_set_str(o, "tool", r->tool);
    json_object_set_new(o, "usage", msg_usage_to_json(&r->usage));
    json_object_set_new(o, "durationMs", json_integer(r->duration_ms));
    return o;
}

/* ---- the router --------------------------------------------------------- */

typedef struct route {
    char *model;                /* a tier name or a model; NULL: the tier's */
    helper_effort effort;
    long timeout_ms;            /* 0: the purpose's */
    bool off;                   /* helperModels.<purpose>: false (§7.2.4 ⑥) */
} route;

typedef struct breaker {
    int failures;               /* in a row */
    int64_t open_until_ms;      /* monotonic; 0: closed */
} breaker;

struct helper_router {
    const provider_config *main;
    provider_port port;                   /* calls without their own */
    char *tiers[HELPER_TIER_COUNT];       /* modelTiers; NULL: the default table */
    route routes[HELPER_PURPOSE_COUNT];   /* helperModels */
    pthread_mutex_t lock;                 /* breakers and queue */
    breaker breakers[HELPER_PURPOSE_COUNT];
    helper_record *queue;
    size_t n_queue, cap_queue;
};

helper_router *helper_router_new(const provider_config *main)
{
    helper_router *r = xcalloc(1, sizeof *r);
    r->main = main;
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

void helper_router_free(helper_router *r)
{
    if (!r)
        return;
    for (int i = 0; i < HELPER_TIER_COUNT; i++)
        free(r->tiers[i]);
    for (int i = 0; i < HELPER_PURPOSE_COUNT; i++)
        free(r->routes[i].model);
    for (size_t i = 0; i < r->n_queue; i++)
        helper_record_free(&r->queue[i]);
    free(r->queue);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static int bad(loom_error *err, const char *file, const char *key, const char *why)
{
    return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "%s: %s: %s", file, key, why);
}

static int configure_route(route *rt, const char *file, const char *purpose, const json_t *v,
                           loom_error *err)
{
    char key[96];
    snprintf(key, sizeof key, "helperModels.%s", purpose);
    const json_t *model = v, *effort = NULL, *timeout = NULL;
    if (json_is_boolean(v)) { /* false turns the purpose off, true back on */
        rt->off = json_is_false(v);
        return 0;
    }
    if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m) {
            if (strcmp(k, "model") && strcmp(k, "effort") && strcmp(k, "timeout"))
                return bad(err, file, key, "unknown key (allowed: model, effort, timeout)");
        }
        model = json_object_get(v, "model");
        effort = json_object_get(v, "effort");
        timeout = json_object_get(v, "timeout");
    }
    if (model && (!json_is_string(model) || !*json_string_value(model)))
        return bad(err, file, key,
                   "expected a tier (lite, main, reasoning), a model name, or false");
    helper_effort e = HELPER_EFFORT_DEFAULT;
    if (effort && (!json_is_string(effort) || helper_effort_parse(json_string_value(effort), &e)))
        return bad(err, file, key, "effort: expected none, low, medium or high");
    if (timeout && (!json_is_number(timeout) || json_number_value(timeout) <= 0 ||
                    json_number_value(timeout) > 86400))
        return bad(err, file, key, "timeout: expected seconds > 0");
    if (model) {
        free(rt->model);
        rt->model = xstrdup(json_string_value(model));
    }
    if (effort)
        rt->effort = e;
    if (timeout)
        rt->timeout_ms = (long)(json_number_value(timeout) * 1000);
    return 0;
}

int helper_router_configure(helper_router *r, json_t *const *docs, const char *const *names,
                            size_t n, loom_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *file = names && names[i] ? names[i] : "settings";
        const json_t *tiers = docs[i] ? json_object_get(docs[i], "modelTiers") : NULL;
        const json_t *helpers = docs[i] ? json_object_get(docs[i], "helperModels") : NULL;
        if (tiers && !json_is_object(tiers))
            return bad(err, file, "modelTiers", "expected an object {\"lite\": MODEL, …}");
        if (helpers && !json_is_object(helpers))
            return bad(err, file, "helperModels", "expected an object {PURPOSE: MODEL, …}");
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)tiers, k, v) {
            helper_tier t;
            char key[80];
            snprintf(key, sizeof key, "modelTiers.%s", k);
            if (helper_tier_parse(k, &t))
                return bad(err, file, key, "unknown tier (lite, main, reasoning)");
            if (!json_is_string(v) || !*json_string_value(v))
                return bad(err, file, key, "expected a model name");
            free(r->tiers[t]);
            r->tiers[t] = xstrdup(models_resolve(json_string_value(v)));
        }
        json_object_foreach((json_t *)helpers, k, v) {
            helper_purpose p;
            char key[96];
            snprintf(key, sizeof key, "helperModels.%s", k);
            if (helper_purpose_parse(k, &p))
                return bad(err, file, key,
                           "unknown purpose (compaction, permission_classifier, webfetch, "
                           "title, memory_extract, memory_select, hook_prompt, hook_agent)");
            if (configure_route(&r->routes[p], file, k, v, err) != 0)
                return -LOOM_ERR_INVALID_REQUEST;
        }
    }
    return 0;
}

void helper_router_set_port(helper_router *r, const provider_port *port)
{
    if (port)
        r->port = *port;
    else
        memset(&r->port, 0, sizeof r->port);
}

/* A tier's model: modelTiers, then the default table, then main. */
static const char *tier_model(const helper_router *r, helper_tier t, const char *main_model)
{
    if (r->tiers[t])
        return r->tiers[t];
    const char *d = helper_default_model(main_model, t);
    return d ? d : main_model;
}

static const char *resolve_with(const helper_router *r, helper_purpose p, helper_tier tier,
                                const char *override, const char *main_model,
                                helper_tier *tier_out)
{
    helper_tier t = tier != HELPER_TIER_DEFAULT ? tier : helper_purpose_tier(p);
    const char *named = override && *override ? override : r->routes[p].model;
    const char *model;
    if (named && !strcmp(named, "inherit"))
        named = NULL, t = HELPER_TIER_MAIN;
    if (named && helper_tier_parse(named, &t) != 0) {
        model = models_resolve(named); /* a model, not a tier: its own tier is unknown */
    } else {
        model = tier_model(r, t, main_model);
    }
    if (tier_out)
        *tier_out = t;
    return model;
}

const char *helper_resolve(const helper_router *r, helper_purpose p, helper_tier tier_override,
                           const char *model_override, helper_tier *tier_out)
{
    return resolve_with(r, p, tier_override, model_override, r->main ? r->main->model : NULL,
                        tier_out);
}

/* ---- the call ----------------------------------------------------------- */

static void enqueue(helper_router *r, helper_record *rec)
{
    pthread_mutex_lock(&r->lock);
    if (r->n_queue == r->cap_queue) {
        r->cap_queue = r->cap_queue ? r->cap_queue * 2 : 8;
        r->queue = xrealloc(r->queue, r->cap_queue * sizeof *r->queue);
    }
    r->queue[r->n_queue++] = *rec;
    pthread_mutex_unlock(&r->lock);
}

/* True (and the message in err) when p is turned off or its breaker is
 * open now. */
static bool breaker_refuses(helper_router *r, helper_purpose p, loom_error *err)
{
    if (r->routes[p].off) {
        loom_error_set(err, LOOM_ERR_RUN_BLOCKED_BY_POLICY,
                       "helper model call \"%s\" not made: turned off in settings "
                       "(helperModels.%s: false)", helper_purpose_name(p), helper_purpose_name(p));
        return true;
    }
    pthread_mutex_lock(&r->lock);
    breaker *b = &r->breakers[p];
    int64_t now = clock_mono_ms();
    bool open = b->open_until_ms > now;
    long left = open ? (long)((b->open_until_ms - now + 999) / 1000) : 0;
    int failures = b->failures;
    pthread_mutex_unlock(&r->lock);
    if (open)
        loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                       "helper model call \"%s\" not made: its circuit breaker is open after %d "
                       "failures in a row (it closes in %ld s)",
                       helper_purpose_name(p), failures, left);
    return open;
}

/* After a call: a success closes the breaker, a failure counts (a
 * cancellation is nobody's failure). */
static void breaker_note(helper_router *r, helper_purpose p, int rc, const loom_error *err)
{
    pthread_mutex_lock(&r->lock);
    breaker *b = &r->breakers[p];
    if (rc == 0) {
        b->failures = 0;
        b->open_until_ms = 0;
    } else if (err->code != LOOM_ERR_RUN_CANCELLED) {
        if (++b->failures >= HELPER_BREAKER_FAILURES)
            b->open_until_ms = clock_mono_ms() + HELPER_BREAKER_COOLDOWN_MS;
    }
    pthread_mutex_unlock(&r->lock);
}

bool helper_routed(const helper_router *r, helper_purpose p)
{
    return r && p >= 0 && p < HELPER_PURPOSE_COUNT && r->routes[p].model != NULL &&
           !r->routes[p].off;
}

bool helper_breaker_open(helper_router *r, helper_purpose p)
{
    pthread_mutex_lock(&r->lock);
    bool open = r->breakers[p].open_until_ms > clock_mono_ms();
    pthread_mutex_unlock(&r->lock);
    return open;
}

static void fill_record(helper_record *rec, const helper_spec *spec, helper_tier tier,
                        const char *model, const char *status, const loom_error *err)
{
    memset(rec, 0, sizeof *rec);
    rec->purpose = spec->purpose;
    rec->tier = tier;
    rec->model = xstrdup(model ? model : "");
    rec->status = xstrdup(status);
    rec->error = err ? xstrdup(err->message) : NULL;
    rec->correlation = spec->correlation ? xstrdup(spec->correlation) : NULL;
    rec->tool = spec->tool ? xstrdup(spec->tool) : NULL;
    rec->counted = spec->counted;
    rec->owner = spec->owner;
}

int helper_admit(helper_router *r, const helper_spec *spec, loom_error *err)
{
    if (!breaker_refuses(r, spec->purpose, err))
        return 0;
    helper_tier tier;
    const char *model = resolve_with(r, spec->purpose, spec->tier, spec->model,
                                     r->main ? r->main->model : NULL, &tier);
    helper_record rec;
    fill_record(&rec, spec, tier, model, r->routes[spec->purpose].off ? "off" : "breaker_open",
                err);
    enqueue(r, &rec);
    return -err->code;
}

void helper_done(helper_router *r, const helper_spec *spec, const char *model,
                 const msg_usage *usage, int rc, const loom_error *err, int64_t duration_ms)
{
    breaker_note(r, spec->purpose, rc, err);
    helper_tier tier;
    resolve_with(r, spec->purpose, spec->tier, spec->model, r->main ? r->main->model : NULL,
                 &tier);
    helper_record rec;
    fill_record(&rec, spec, tier, model, rc == 0 ? "ok" : "error", rc == 0 ? NULL : err);
    rec.duration_ms = duration_ms;
    if (usage) {
        rec.usage = *usage;
        rec.usage.raw = NULL;
    }
    enqueue(r, &rec);
}

int helper_call(helper_router *r, const helper_spec *spec, msg_request *req,
                const loom_cancel *cancel, msg_response *out, loom_error *err)
{
    const provider_config *base = spec->base ? spec->base : r ? r->main : NULL;
    if (!base)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "helper call without a provider");
    if (!r)
        return provider_port_complete(spec->port, base, req, spec->sink, cancel, out, err);
    helper_purpose p = spec->purpose;
    assert(p >= 0 && p < HELPER_PURPOSE_COUNT);
    helper_tier tier;
    const char *model = resolve_with(r, p, spec->tier, spec->model, base->model, &tier);
    helper_record rec;
    if (breaker_refuses(r, p, err)) {
        fill_record(&rec, spec, tier, model, r->routes[p].off ? "off" : "breaker_open", err);
        enqueue(r, &rec);
        return -err->code;
    }
    provider_config cfg = *base;
    cfg.model = (char *)model;
    bool same_model = base->model && !strcmp(base->model, model);
    if (!same_model) {
        /* Another model's limits, and none of the main model's thinking. */
        model_info mi = models_lookup(model);
        cfg.context_window = mi.context_window;
        cfg.max_output_tokens = mi.max_output_tokens;
        cfg.thinking_budget = 0;
        cfg.reasoning_effort[0] = '\0';
    }
    helper_effort effort = spec->effort != HELPER_EFFORT_DEFAULT ? spec->effort
                                                                : r->routes[p].effort;
    if (effort == HELPER_EFFORT_DEFAULT && tier == HELPER_TIER_REASONING)
        effort = HELPER_EFFORT_HIGH; /* what the reasoning tier is for */
    helper_effort_apply(effort, &cfg);
    long timeout = spec->timeout_ms > 0           ? spec->timeout_ms
                   : r->routes[p].timeout_ms > 0 ? r->routes[p].timeout_ms
                                                 : purposes[p].timeout_ms;
    if (cfg.request_timeout_ms <= 0 || timeout < cfg.request_timeout_ms)
        cfg.request_timeout_ms = timeout;
    /* One retry at most: a helper is worth a second try, not a third. */
    if (cfg.max_retries > 1)
        cfg.max_retries = 1;
    free(req->model);
    req->model = xstrdup(model);
    if (req->max_tokens <= 0 && purposes[p].max_tokens > 0)
        req->max_tokens = purposes[p].max_tokens;
    /* Deterministic where the endpoint allows it: the Messages API's
     * current parameters (@anthropic-ai/sdk's MessageCreateParams) have no
     * temperature at all, and current Claude, gpt-5 and o-series refuse it. */
    if (spec->judgment)
        req->temperature =
            cfg.kind != PROVIDER_ANTHROPIC && model_accepts_temperature(model) ? 0 : -1;
    int64_t t0 = clock_mono_ms();
    const provider_port *port = spec->port && spec->port->complete ? spec->port : &r->port;
    int rc = provider_port_complete(port, &cfg, req, spec->sink, cancel, out, err);
    breaker_note(r, p, rc, err);
    fill_record(&rec, spec, tier, model, rc == 0 ? "ok" : "error", rc == 0 ? NULL : err);
    rec.duration_ms = clock_mono_ms() - t0;
    if (rc == 0) {
        rec.usage = out->usage;
        rec.usage.raw = NULL;
    }
    enqueue(r, &rec);
    return rc;
}

void helper_router_take(helper_router *r, const void *owner, bool include_unowned,
                        helper_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    size_t keep = 0;
    for (size_t i = 0; i < r->n_queue; i++) {
        helper_record *rec = &r->queue[i];
        if (rec->owner == owner || (include_unowned && !rec->owner)) {
            *out = xrealloc(*out, (*n + 1) * sizeof **out);
            (*out)[(*n)++] = *rec;
        } else {
            r->queue[keep++] = *rec;
        }
    }
    r->n_queue = keep;
    pthread_mutex_unlock(&r->lock);
}

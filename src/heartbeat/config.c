/* config.c — parsing and printing the heartbeat settings block (config.h):
 * the shared parts — the top-level keys, the interrupt policy, the list of
 * watch sources and the typed getters every parser uses. Each source's own
 * block is parsed by its watch_ops (heartbeat/watch/<source>.c).
 *
 * Strict on purpose: a misspelt key in a block that decides when the agent
 * is interrupted must not be silently ignored, so every object's keys are
 * checked against the ones its type knows and each error names its place.
 */
#include "heartbeat/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"
#include "base/str.h"
#include "heartbeat/watch/watch.h"

#define HB_MAX_SECONDS 3600.0

const char *watch_type_name(watch_type t)
{
    switch (t) {
    case WATCH_FILESYSTEM: return "filesystem";
    case WATCH_PROCESS: return "process";
    case WATCH_MF_EVENTS: return "mf_events";
    case WATCH_RESOURCE: return "resource";
    case WATCH_EXTERNAL_SIGNAL: return "external_signal";
    }
    return "?";
}

const char *interrupt_action_name(interrupt_action a)
{
    switch (a) {
    case INTERRUPT_QUEUE: return "queue";
    case INTERRUPT_REQUEST: return "request";
    case INTERRUPT_FORCE: return "force";
    }
    return "?";
}

int hb_urgency_parse(const char *s, event_urgency *out)
{
    if (!s)
        return -1;
    if (!strcmp(s, "low"))
        *out = EVENT_LOW;
    else if (!strcmp(s, "high"))
        *out = EVENT_HIGH;
    else if (!strcmp(s, "critical"))
        *out = EVENT_CRITICAL;
    else
        return -1;
    return 0;
}

void heartbeat_config_default(heartbeat_config *out)
{
    memset(out, 0, sizeof *out);
    out->enabled = false;
    out->T_hb = HB_DEFAULT_T_HB;
    out->T_hb_act = HB_DEFAULT_T_HB;
    out->delta_hb = HB_DEFAULT_DELTA;
    out->novelty_window = HB_DEFAULT_NOVELTY_WINDOW;
    out->policy[EVENT_LOW] = INTERRUPT_QUEUE;
    out->policy[EVENT_HIGH] = INTERRUPT_REQUEST;
    out->policy[EVENT_CRITICAL] = INTERRUPT_FORCE;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void watch_config_free(watch_config *w)
{
    free_strv(w->paths, w->n_paths);
    free_strv(w->ignore, w->n_ignore);
    free(w->pid_file);
    free(w->dir);
    free_strv(w->topics, w->n_topics);
    free(w->disk_path);
    free(w->meminfo_path);
    for (size_t i = 0; i < w->n_signals; i++)
        free(w->signals[i].name);
    free(w->signals);
    memset(w, 0, sizeof *w);
}

void heartbeat_config_free(heartbeat_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_sources; i++)
        watch_config_free(&cfg->sources[i]);
    free(cfg->sources);
    heartbeat_config_default(cfg);
}

/* ---- helpers for every block (config.h): each takes `where`, the key path ---- */

int hb_cfg_check_keys(const json_t *obj, const char *const *allowed, const char *where,
                      loom_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (size_t i = 0; allowed[i]; i++)
            if (!strcmp(key, allowed[i]))
                ok = true;
        if (!ok) {
            loom_str list = LOOM_STR_INIT;
            for (size_t i = 0; allowed[i]; i++)
                str_printf(&list, "%s%s", i ? ", " : "", allowed[i]);
            int rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                    "%s: unknown key \"%s\" (expected one of: %s)", where, key,
                                    str_cstr(&list));
            str_free(&list);
            return rc;
        }
    }
    return 0;
}

int hb_cfg_number(const json_t *obj, const char *key, const char *where, double lo, double hi,
                      bool lo_open, double *out, loom_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_number(v))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s.%s: must be a number", where, key);
    double d = json_number_value(v);
    if (d < lo || d > hi || (lo_open && d == lo))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s.%s: %g is out of range %s%g, %g]", where,
                              key, d, lo_open ? "(" : "[", lo, hi);
    *out = d;
    return 0;
}

int hb_cfg_bool(const json_t *obj, const char *key, const char *where, bool *out,
                    loom_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s.%s: must be true or false", where, key);
    *out = json_is_true(v);
    return 0;
}

int hb_cfg_string(const json_t *obj, const char *key, const char *where, const char **out,
                      loom_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_string(v) || !json_string_length(v))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s.%s: must be a non-empty string", where,
                              key);
    *out = json_string_value(v);
    return 0;
}

int hb_cfg_urgency(const json_t *v, const char *where, event_urgency *out, loom_error *err)
{
    if (!json_is_string(v) || hb_urgency_parse(json_string_value(v), out) < 0)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: must be \"low\", \"high\" or \"critical\"", where);
    return 0;
}

int hb_cfg_level(const json_t *src, const char *where, watch_config *w, loom_error *err)
{
    json_t *u = json_object_get(src, "urgency");
    if (!u)
        return 0;
    char sub[512];
    snprintf(sub, sizeof sub, "%s.urgency", where);
    int rc = hb_cfg_urgency(u, sub, &w->urgency, err);
    if (rc == 0)
        w->idle_urgency = w->urgency;
    return rc;
}

/* An array of non-empty strings (may be empty unless nonempty). */
int hb_cfg_strv(const json_t *obj, const char *key, const char *where, bool nonempty,
                    char ***out, size_t *n, loom_error *err)
{
    json_t *arr = json_object_get(obj, key);
    if (!arr)
        return 0;
    if (!json_is_array(arr) || (nonempty && !json_array_size(arr)))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s.%s: must be a%s array of strings", where,
                              key, nonempty ? " non-empty" : "n");
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (!json_is_string(v) || !json_string_length(v))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s.%s[%zu]: must be a non-empty string",
                                  where, key, i);
    }
    *n = json_array_size(arr);
    *out = xcalloc(*n ? *n : 1, sizeof **out);
    json_array_foreach(arr, i, v)
        (*out)[i] = xstrdup(json_string_value(v));
    return 0;
}

void hb_cfg_resolve_all(char **v, size_t n, const char *cwd)
{
    for (size_t i = 0; i < n; i++) {
        char *abs = path_make_absolute(v[i], cwd);
        free(v[i]);
        v[i] = abs;
    }
}

/* ---- one watch source ---- */

/* Its "type" picks the source, whose ops parse the rest (watch/<source>.c). */
static int parse_source(const json_t *src, const char *where, const char *cwd, watch_config *w,
                        loom_error *err)
{
    int rc;
    if (!json_is_object(src))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: a watch source must be an object", where);
    json_t *type = json_object_get(src, "type");
    if (!type)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: missing \"type\"", where);
    const char *t = json_string_value(type);
    if (!t)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s.type: must be a string", where);
    const watch_ops *ops = watch_ops_named(t);
    if (!ops)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s.type: unknown watch source \"%s\" (expected filesystem, process, "
                              "mf_events, resource or external_signal)", where, t);
    w->type = ops->type;
    if ((rc = hb_cfg_check_keys(src, ops->keys, where, err)) < 0)
        return rc;
    w->weight = ops->default_weight;
    if ((rc = hb_cfg_number(src, "weight", where, 0, 1, false, &w->weight, err)) < 0)
        return rc;
    return ops->parse(src, where, cwd, w, err);
}

/* Without "watch_sources": resource (memory 90 %, disk 95 % of the cwd's
 * filesystem; seed 000 L279) and external_signal, as if configured so. */
static int add_default_sources(heartbeat_config *cfg, const char *cwd, loom_error *err)
{
    json_t *res = json_pack("{s:s, s:i, s:i}", "type", "resource", "memory_pct", 90, "disk_pct", 95);
    json_t *sig = json_pack("{s:s}", "type", "external_signal");
    cfg->sources = xcalloc(2, sizeof *cfg->sources);
    cfg->n_sources = 2;
    int rc = parse_source(res, "heartbeat (default resource source)", cwd, &cfg->sources[0], err);
    if (rc == 0)
        rc = parse_source(sig, "heartbeat (default signal source)", cwd, &cfg->sources[1], err);
    json_decref(res);
    json_decref(sig);
    return rc;
}

int heartbeat_config_from_json(const json_t *block, const char *cwd, heartbeat_config *out,
                               loom_error *err)
{
    static const char *const top_keys[] = {"enabled", "T_hb", "T_hb_act", "delta_hb", "δ_hb",
                                           "novelty_window", "watch_sources", "interrupt_policy",
                                           NULL};
    static const char *const where = "heartbeat";
    heartbeat_config_default(out);
    if (!block || json_is_null(block))
        return 0;
    if (!cwd || cwd[0] != '/')
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "heartbeat: the cwd to resolve paths against must be absolute");
    if (!json_is_object(block))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: must be an object", where);
    heartbeat_config c;
    heartbeat_config_default(&c);
    c.enabled = true;
    int rc;
    if ((rc = hb_cfg_check_keys(block, top_keys, where, err)) < 0)
        return rc;
    if (json_object_get(block, "delta_hb") && json_object_get(block, "δ_hb"))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: \"delta_hb\" and \"δ_hb\" are the same setting; give one",
                              where);
    if ((rc = hb_cfg_bool(block, "enabled", where, &c.enabled, err)) < 0 ||
        (rc = hb_cfg_number(block, "T_hb", where, 0, HB_MAX_SECONDS, true, &c.T_hb, err)) < 0)
        return rc;
    c.T_hb_act = c.T_hb;
    if ((rc = hb_cfg_number(block, "T_hb_act", where, 0, HB_MAX_SECONDS, true, &c.T_hb_act,
                         err)) < 0 ||
        (rc = hb_cfg_number(block, "delta_hb", where, 0, 1, false, &c.delta_hb, err)) < 0 ||
        (rc = hb_cfg_number(block, "δ_hb", where, 0, 1, false, &c.delta_hb, err)) < 0 ||
        (rc = hb_cfg_number(block, "novelty_window", where, 0, 86400, false, &c.novelty_window,
                         err)) < 0)
        return rc;

    json_t *pol = json_object_get(block, "interrupt_policy");
    if (pol) {
        static const char *const pkeys[] = {"low", "high", "critical", NULL};
        if (!json_is_object(pol))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s.interrupt_policy: must be an object",
                                  where);
        if ((rc = hb_cfg_check_keys(pol, pkeys, "heartbeat.interrupt_policy", err)) < 0)
            return rc;
        for (int u = EVENT_LOW; u <= EVENT_CRITICAL; u++) {
            json_t *v = json_object_get(pol, pkeys[u]);
            if (!v)
                continue;
            const char *s = json_string_value(v);
            if (s && !strcmp(s, "queue"))
                c.policy[u] = INTERRUPT_QUEUE;
            else if (s && !strcmp(s, "request"))
                c.policy[u] = INTERRUPT_REQUEST;
            else if (s && !strcmp(s, "force"))
                c.policy[u] = INTERRUPT_FORCE;
            else
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "%s.interrupt_policy.%s: must be \"queue\", \"request\" or "
                                      "\"force\"", where, pkeys[u]);
        }
    }

    json_t *srcs = json_object_get(block, "watch_sources");
    if (!srcs) {
        if ((rc = add_default_sources(&c, cwd, err)) < 0) {
            heartbeat_config_free(&c);
            return rc;
        }
    } else {
        if (!json_is_array(srcs))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s.watch_sources: must be an array",
                                  where);
        c.n_sources = json_array_size(srcs);
        c.sources = xcalloc(c.n_sources ? c.n_sources : 1, sizeof *c.sources);
        bool have_signals = false;
        for (size_t i = 0; i < c.n_sources; i++) {
            char sub[64];
            snprintf(sub, sizeof sub, "heartbeat.watch_sources[%zu]", i);
            if ((rc = parse_source(json_array_get(srcs, i), sub, cwd, &c.sources[i], err)) < 0) {
                heartbeat_config_free(&c);
                return rc;
            }
            if (c.sources[i].type == WATCH_EXTERNAL_SIGNAL) {
                if (have_signals) {
                    heartbeat_config_free(&c);
                    return loom_error_set(err, LOOM_ERR_CONFIG,
                                          "%s: only one external_signal source may be configured "
                                          "(give all signal rules in its \"signals\")", sub);
                }
                have_signals = true;
            }
        }
    }
    *out = c;
    return 0;
}

json_t *hb_cfg_strv_json(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

json_t *heartbeat_config_to_json(const heartbeat_config *cfg)
{
    json_t *o = json_object();
    json_object_set_new(o, "enabled", json_boolean(cfg->enabled));
    json_object_set_new(o, "T_hb", json_real(cfg->T_hb));
    json_object_set_new(o, "T_hb_act", json_real(cfg->T_hb_act));
    json_object_set_new(o, "delta_hb", json_real(cfg->delta_hb));
    json_object_set_new(o, "novelty_window", json_real(cfg->novelty_window));
    json_t *srcs = json_array();
    for (size_t i = 0; i < cfg->n_sources; i++) {
        const watch_config *w = &cfg->sources[i];
        json_t *s = json_object();
        json_object_set_new(s, "type", json_string(watch_type_name(w->type)));
        json_object_set_new(s, "weight", json_real(w->weight));
        watch_ops_of(w->type)->to_json(w, s);
        json_array_append_new(srcs, s);
    }
    json_object_set_new(o, "watch_sources", srcs);
    json_object_set_new(o, "interrupt_policy",
                        json_pack("{s:s, s:s, s:s}", "low",
                                  interrupt_action_name(cfg->policy[EVENT_LOW]), "high",
                                  interrupt_action_name(cfg->policy[EVENT_HIGH]), "critical",
                                  interrupt_action_name(cfg->policy[EVENT_CRITICAL])));
    return o;
}

/* config.c — parsing and printing the heartbeat settings block (config.h).
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
#define HB_SIGNAL_NAME_MAX 31

static const char *const default_ignore[] = {
    ".git", ".hg", ".svn", ".loom", "node_modules", "__pycache__",
    "*.o", "*.a", "*.so", "*.pyc", "*.swp", "*.swx", "*~", ".#*", "4913",
    ".*.tmp.*", /* base/fileio's atomic-write temp files */
};

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

static const char *urgency_str(event_urgency u)
{
    switch (u) {
    case EVENT_LOW: return "low";
    case EVENT_HIGH: return "high";
    case EVENT_CRITICAL: return "critical";
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

/* ---- helpers: each takes `where` (the object's key path) for messages ---- */

static int check_keys(const json_t *obj, const char *const *allowed, const char *where,
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

static int get_number(const json_t *obj, const char *key, const char *where, double lo, double hi,
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

static int get_bool(const json_t *obj, const char *key, const char *where, bool *out,
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

static int get_string(const json_t *obj, const char *key, const char *where, const char **out,
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

static int get_urgency(const json_t *v, const char *where, event_urgency *out, loom_error *err)
{
    if (!json_is_string(v) || hb_urgency_parse(json_string_value(v), out) < 0)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: must be \"low\", \"high\" or \"critical\"", where);
    return 0;
}

/* "~/x" → $HOME/x; relative → cwd/x; then folded. */
static char *resolve_path(const char *p, const char *cwd)
{
    loom_str s = LOOM_STR_INIT;
    const char *home = getenv("HOME");
    if (p[0] == '/')
        str_puts(&s, p);
    else if (p[0] == '~' && (p[1] == '/' || !p[1]) && home && *home)
        str_printf(&s, "%s/%s", home, p[1] ? p + 2 : "");
    else
        str_printf(&s, "%s/%s", cwd, p);
    char *out = path_fold(str_cstr(&s));
    str_free(&s);
    return out;
}

/* An array of non-empty strings (may be empty unless nonempty). */
static int get_strv(const json_t *obj, const char *key, const char *where, bool nonempty,
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

static void resolve_all(char **v, size_t n, const char *cwd)
{
    for (size_t i = 0; i < n; i++) {
        char *abs = resolve_path(v[i], cwd);
        free(v[i]);
        v[i] = abs;
    }
}

static void add_signal_rule(watch_config *w, const char *name, event_urgency u)
{
    for (size_t i = 0; i < w->n_signals; i++)
        if (!strcmp(w->signals[i].name, name)) {
            w->signals[i].urgency = u;
            return;
        }
    w->signals = xrealloc(w->signals, (w->n_signals + 1) * sizeof *w->signals);
    w->signals[w->n_signals].name = xstrdup(name);
    w->signals[w->n_signals].urgency = u;
    w->n_signals++;
}

/* ---- one watch source ---- */

static int parse_source(const json_t *src, const char *where, const char *cwd, watch_config *w,
                        loom_error *err)
{
    static const char *const fs_keys[] = {"type", "weight", "urgency", "paths", "method",
                                          "ignore", "max_hash_bytes", "max_files", NULL};
    static const char *const proc_keys[] = {"type", "weight", "urgency", "pid_file", NULL};
    static const char *const mf_keys[] = {"type", "weight", "urgency", "dir", "topics",
                                          "backlog", NULL};
    static const char *const res_keys[] = {"type", "weight", "urgency", "memory_pct", "disk_pct",
                                           "thresholds", "path", "hysteresis", NULL};
    static const char *const sig_keys[] = {"type", "weight", "urgency", "signals", NULL};
    int rc;

    if (!json_is_object(src))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: a watch source must be an object", where);
    json_t *type = json_object_get(src, "type");
    if (!type)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: missing \"type\"", where);
    const char *t = json_string_value(type);
    if (!t)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s.type: must be a string", where);
    const char *const *keys;
    if (!strcmp(t, "filesystem")) {
        w->type = WATCH_FILESYSTEM;
        keys = fs_keys;
    } else if (!strcmp(t, "process")) {
        w->type = WATCH_PROCESS;
        keys = proc_keys;
    } else if (!strcmp(t, "mf_events")) {
        w->type = WATCH_MF_EVENTS;
        keys = mf_keys;
    } else if (!strcmp(t, "resource")) {
        w->type = WATCH_RESOURCE;
        keys = res_keys;
    } else if (!strcmp(t, "external_signal")) {
        w->type = WATCH_EXTERNAL_SIGNAL;
        keys = sig_keys;
    } else {
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s.type: unknown watch source \"%s\" (expected filesystem, process, "
                              "mf_events, resource or external_signal)", where, t);
    }
    if ((rc = check_keys(src, keys, where, err)) < 0)
        return rc;

    /* Per-type defaults (docs/heartbeat.md, "Urgency rules"). */
    w->weight = w->type == WATCH_MF_EVENTS ? 0.8 : 1.0;
    switch (w->type) {
    case WATCH_FILESYSTEM: w->urgency = EVENT_HIGH; w->idle_urgency = EVENT_LOW; break;
    case WATCH_PROCESS: w->urgency = w->idle_urgency = EVENT_HIGH; break;
    case WATCH_MF_EVENTS: w->urgency = w->idle_urgency = EVENT_LOW; break;
    case WATCH_RESOURCE: w->urgency = w->idle_urgency = EVENT_CRITICAL; break;
    case WATCH_EXTERNAL_SIGNAL: w->urgency = w->idle_urgency = EVENT_HIGH; break;
    }
    if ((rc = get_number(src, "weight", where, 0, 1, false, &w->weight, err)) < 0)
        return rc;

    char sub[512];
    json_t *u = json_object_get(src, "urgency");
    if (u) {
        snprintf(sub, sizeof sub, "%s.urgency", where);
        if (w->type == WATCH_FILESYSTEM && json_is_object(u)) {
            static const char *const ukeys[] = {"act", "idle", NULL};
            if ((rc = check_keys(u, ukeys, sub, err)) < 0)
                return rc;
            char sub2[600];
            json_t *a = json_object_get(u, "act"), *i = json_object_get(u, "idle");
            snprintf(sub2, sizeof sub2, "%s.act", sub);
            if (a && (rc = get_urgency(a, sub2, &w->urgency, err)) < 0)
                return rc;
            snprintf(sub2, sizeof sub2, "%s.idle", sub);
            if (i && (rc = get_urgency(i, sub2, &w->idle_urgency, err)) < 0)
                return rc;
        } else {
            if (w->type == WATCH_FILESYSTEM && !json_is_string(u))
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "%s: must be a level (\"low\", \"high\", \"critical\") or "
                                      "{\"act\": level, \"idle\": level}", sub);
            if ((rc = get_urgency(u, sub, &w->urgency, err)) < 0)
                return rc;
            w->idle_urgency = w->urgency;
        }
    }

    switch (w->type) {
    case WATCH_FILESYSTEM: {
        if (!json_object_get(src, "paths"))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s: missing \"paths\"", where);
        if ((rc = get_strv(src, "paths", where, true, &w->paths, &w->n_paths, err)) < 0)
            return rc;
        resolve_all(w->paths, w->n_paths, cwd);
        const char *method = "hash";
        if ((rc = get_string(src, "method", where, &method, err)) < 0)
            return rc;
        if (strcmp(method, "hash") && strcmp(method, "mtime"))
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "%s.method: \"%s\" is not a method (expected \"hash\" or "
                                  "\"mtime\")", where, method);
        w->method_hash = !strcmp(method, "hash");
        char **extra = NULL;
        size_t n_extra = 0;
        if ((rc = get_strv(src, "ignore", where, false, &extra, &n_extra, err)) < 0)
            return rc;
        size_t nd = sizeof default_ignore / sizeof *default_ignore;
        w->ignore = xcalloc(nd + n_extra, sizeof *w->ignore);
        for (size_t i = 0; i < nd; i++)
            w->ignore[w->n_ignore++] = xstrdup(default_ignore[i]);
        for (size_t i = 0; i < n_extra; i++)
            w->ignore[w->n_ignore++] = extra[i];
        free(extra);
        double d = (double)HB_DEFAULT_MAX_HASH_BYTES;
        if ((rc = get_number(src, "max_hash_bytes", where, 0, 1e15, false, &d, err)) < 0)
            return rc;
        w->max_hash_bytes = (long long)d;
        d = HB_DEFAULT_MAX_FILES;
        if ((rc = get_number(src, "max_files", where, 0, 1e9, true, &d, err)) < 0)
            return rc;
        w->max_files = (size_t)d;
        break;
    }
    case WATCH_PROCESS: {
        const char *pf = NULL;
        if ((rc = get_string(src, "pid_file", where, &pf, err)) < 0)
            return rc;
        if (!pf)
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s: missing \"pid_file\"", where);
        w->pid_file = resolve_path(pf, cwd);
        break;
    }
    case WATCH_MF_EVENTS: {
        const char *dir = NULL;
        if ((rc = get_string(src, "dir", where, &dir, err)) < 0)
            return rc;
        if (dir)
            w->dir = resolve_path(dir, cwd);
        if ((rc = get_strv(src, "topics", where, false, &w->topics, &w->n_topics, err)) < 0)
            return rc;
        for (size_t i = 0; i < w->n_topics; i++)
            if (strchr(w->topics[i], '/') || !strcmp(w->topics[i], ".") ||
                !strcmp(w->topics[i], ".."))
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "%s.topics[%zu]: \"%s\" is not a topic name (no '/', "
                                      "'.', '..')", where, i, w->topics[i]);
        if ((rc = get_bool(src, "backlog", where, &w->backlog, err)) < 0)
            return rc;
        break;
    }
    case WATCH_RESOURCE: {
        w->memory_pct = w->disk_pct = -1;
        w->hysteresis = HB_DEFAULT_HYSTERESIS;
        json_t *th = json_object_get(src, "thresholds");
        if (th) {
            /* The seed's form: {"thresholds": {"memory_pct": 90, "disk_pct": 95}}. */
            static const char *const tkeys[] = {"memory_pct", "disk_pct", NULL};
            snprintf(sub, sizeof sub, "%s.thresholds", where);
            if (!json_is_object(th))
                return loom_error_set(err, LOOM_ERR_CONFIG, "%s: must be an object", sub);
            if ((rc = check_keys(th, tkeys, sub, err)) < 0 ||
                (rc = get_number(th, "memory_pct", sub, 0, 100, false, &w->memory_pct, err)) < 0 ||
                (rc = get_number(th, "disk_pct", sub, 0, 100, false, &w->disk_pct, err)) < 0)
                return rc;
        }
        if ((rc = get_number(src, "memory_pct", where, 0, 100, false, &w->memory_pct, err)) < 0 ||
            (rc = get_number(src, "disk_pct", where, 0, 100, false, &w->disk_pct, err)) < 0 ||
            (rc = get_number(src, "hysteresis", where, 0, 100, false, &w->hysteresis, err)) < 0)
            return rc;
        if (w->memory_pct < 0 && w->disk_pct < 0)
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "%s: a resource source needs \"memory_pct\" or \"disk_pct\"",
                                  where);
        const char *p = NULL;
        if ((rc = get_string(src, "path", where, &p, err)) < 0)
            return rc;
        w->disk_path = p ? resolve_path(p, cwd) : xstrdup(cwd);
        break;
    }
    case WATCH_EXTERNAL_SIGNAL: {
        add_signal_rule(w, "SIGINT", EVENT_CRITICAL);
        add_signal_rule(w, "SIGTERM", EVENT_CRITICAL);
        add_signal_rule(w, "SIGUSR1", EVENT_HIGH);
        add_signal_rule(w, "SIGHUP", EVENT_HIGH);
        json_t *sigs = json_object_get(src, "signals");
        if (sigs) {
            snprintf(sub, sizeof sub, "%s.signals", where);
            if (!json_is_object(sigs))
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "%s: must be an object of signal name → level", sub);
            const char *name;
            json_t *lv;
            json_object_foreach(sigs, name, lv) {
                char norm[HB_SIGNAL_NAME_MAX + 1];
                char sub2[600];
                snprintf(sub2, sizeof sub2, "%s.%s", sub, name);
                if (!watch_signal_normalise(name, norm))
                    return loom_error_set(err, LOOM_ERR_CONFIG,
                                          "%s: a signal name is 1-%d letters, digits, '_', '-' "
                                          "or '.'", sub2, HB_SIGNAL_NAME_MAX);
                event_urgency eu;
                if ((rc = get_urgency(lv, sub2, &eu, err)) < 0)
                    return rc;
                add_signal_rule(w, norm, eu);
            }
        }
        break;
    }
    }
    return 0;
}

static void add_default_sources(heartbeat_config *cfg, const char *cwd)
{
    cfg->sources = xcalloc(2, sizeof *cfg->sources);
    watch_config *r = &cfg->sources[0];
    r->type = WATCH_RESOURCE;
    r->weight = 1;
    r->urgency = r->idle_urgency = EVENT_CRITICAL;
    r->memory_pct = 90;   /* seed 000 L279 */
    r->disk_pct = 95;
    r->disk_path = xstrdup(cwd);
    r->hysteresis = HB_DEFAULT_HYSTERESIS;
    watch_config *s = &cfg->sources[1];
    s->type = WATCH_EXTERNAL_SIGNAL;
    s->weight = 1;
    s->urgency = s->idle_urgency = EVENT_HIGH;
    add_signal_rule(s, "SIGINT", EVENT_CRITICAL);
    add_signal_rule(s, "SIGTERM", EVENT_CRITICAL);
    add_signal_rule(s, "SIGUSR1", EVENT_HIGH);
    add_signal_rule(s, "SIGHUP", EVENT_HIGH);
    cfg->n_sources = 2;
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
    if ((rc = check_keys(block, top_keys, where, err)) < 0)
        return rc;
    if (json_object_get(block, "delta_hb") && json_object_get(block, "δ_hb"))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: \"delta_hb\" and \"δ_hb\" are the same setting; give one",
                              where);
    if ((rc = get_bool(block, "enabled", where, &c.enabled, err)) < 0 ||
        (rc = get_number(block, "T_hb", where, 0, HB_MAX_SECONDS, true, &c.T_hb, err)) < 0)
        return rc;
    c.T_hb_act = c.T_hb;
    if ((rc = get_number(block, "T_hb_act", where, 0, HB_MAX_SECONDS, true, &c.T_hb_act,
                         err)) < 0 ||
        (rc = get_number(block, "delta_hb", where, 0, 1, false, &c.delta_hb, err)) < 0 ||
        (rc = get_number(block, "δ_hb", where, 0, 1, false, &c.delta_hb, err)) < 0 ||
        (rc = get_number(block, "novelty_window", where, 0, 86400, false, &c.novelty_window,
                         err)) < 0)
        return rc;

    json_t *pol = json_object_get(block, "interrupt_policy");
    if (pol) {
        static const char *const pkeys[] = {"low", "high", "critical", NULL};
        if (!json_is_object(pol))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s.interrupt_policy: must be an object",
                                  where);
        if ((rc = check_keys(pol, pkeys, "heartbeat.interrupt_policy", err)) < 0)
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
        add_default_sources(&c, cwd);
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

static json_t *strv_json(char **v, size_t n)
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
        switch (w->type) {
        case WATCH_FILESYSTEM:
            json_object_set_new(s, "urgency",
                                json_pack("{s:s, s:s}", "act", urgency_str(w->urgency), "idle",
                                          urgency_str(w->idle_urgency)));
            json_object_set_new(s, "paths", strv_json(w->paths, w->n_paths));
            json_object_set_new(s, "method", json_string(w->method_hash ? "hash" : "mtime"));
            json_object_set_new(s, "ignore", strv_json(w->ignore, w->n_ignore));
            json_object_set_new(s, "max_hash_bytes", json_integer(w->max_hash_bytes));
            json_object_set_new(s, "max_files", json_integer((json_int_t)w->max_files));
            break;
        case WATCH_PROCESS:
            json_object_set_new(s, "urgency", json_string(urgency_str(w->urgency)));
            json_object_set_new(s, "pid_file", json_string(w->pid_file));
            break;
        case WATCH_MF_EVENTS:
            json_object_set_new(s, "urgency", json_string(urgency_str(w->urgency)));
            json_object_set_new(s, "dir", w->dir ? json_string(w->dir) : json_null());
            json_object_set_new(s, "topics", strv_json(w->topics, w->n_topics));
            json_object_set_new(s, "backlog", json_boolean(w->backlog));
            break;
        case WATCH_RESOURCE:
            json_object_set_new(s, "urgency", json_string(urgency_str(w->urgency)));
            json_object_set_new(s, "memory_pct",
                                w->memory_pct < 0 ? json_null() : json_real(w->memory_pct));
            json_object_set_new(s, "disk_pct",
                                w->disk_pct < 0 ? json_null() : json_real(w->disk_pct));
            json_object_set_new(s, "path", json_string(w->disk_path));
            json_object_set_new(s, "hysteresis", json_real(w->hysteresis));
            break;
        case WATCH_EXTERNAL_SIGNAL: {
            json_object_set_new(s, "urgency", json_string(urgency_str(w->urgency)));
            json_t *sg = json_object();
            for (size_t k = 0; k < w->n_signals; k++)
                json_object_set_new(sg, w->signals[k].name,
                                    json_string(urgency_str(w->signals[k].urgency)));
            json_object_set_new(s, "signals", sg);
            break;
        }
        }
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

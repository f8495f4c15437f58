/* registry.c — owns every hook definition of a session: parses settings
 * `hooks` objects into hook_defs, holds built-ins, the once-state and the
 * trust flags, and plans which hooks one event runs (seed 001 §6.2 steps
 * 4-7). Execution and aggregation live in run.c. */
#include "hooks/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "hooks/internal.h"

struct hook_registry {
    pthread_mutex_t mu;
    hook_def **defs; /* never shrinks: plans hold pointers without the lock */
    size_t n, cap;
    unsigned long next_seq;
    char **warnings;
    size_t n_warnings;
    unsigned builtin_count[HOOK_EVENT__COUNT];
};

static const char *const source_names[HOOK_SRC__COUNT] = {
    "builtin", "user", "project", "local", "plugin", "skill", "agent",
};
static const char *const type_names[HOOK_TYPE__COUNT] = {
    "command", "http", "prompt", "agent", "builtin",
};

const char *hook_source_name(hook_source src)
{
    return (unsigned)src < HOOK_SRC__COUNT ? source_names[src] : "?";
}

const char *hook_type_name(hook_type type)
{
    return (unsigned)type < HOOK_TYPE__COUNT ? type_names[type] : "?";
}

int hook_priority_parse(const char *name)
{
    static const struct {
        const char *name;
        int value;
    } names[] = {
        {"highest", HOOK_PRIORITY_HIGHEST}, {"high", HOOK_PRIORITY_HIGH},
        {"structuredoutput", HOOK_PRIORITY_STRUCTURED_OUTPUT},
        {"structured_output", HOOK_PRIORITY_STRUCTURED_OUTPUT},
        {"normal", HOOK_PRIORITY_NORMAL}, {"low", HOOK_PRIORITY_LOW},
        {"lowest", HOOK_PRIORITY_LOWEST},
    };
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0)
            return names[i].value;
    return -1;
}

hook_registry *hook_registry_new(void)
{
    hook_registry *reg = xcalloc(1, sizeof *reg);
    pthread_mutex_init(&reg->mu, NULL);
    return reg;
}

static void def_free(hook_def *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->where);
    hook_matcher_free(d->matcher);
    hook_cond_free(d->group_cond);
    hook_cond_free(d->cond);
    free(d->command);
    free(d->url);
    free(d->prompt);
    free(d->model);
    json_decref(d->config);
    free(d);
}

void hook_registry_free(hook_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        def_free(reg->defs[i]);
    free(reg->defs);
    for (size_t i = 0; i < reg->n_warnings; i++)
        free(reg->warnings[i]);
    free(reg->warnings);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

/* Caller holds the lock. */
static void push_def(hook_registry *reg, hook_def *d)
{
    if (reg->n == reg->cap) {
        reg->cap = reg->cap ? reg->cap * 2 : 16;
        reg->defs = xrealloc(reg->defs, reg->cap * sizeof *reg->defs);
    }
    d->seq = reg->next_seq++;
    reg->defs[reg->n++] = d;
}

/* ---- loading settings --------------------------------------------------- */

typedef struct {
    hook_def **items;
    size_t n;
} def_list;

static void list_push(def_list *l, hook_def *d)
{
    l->items = xrealloc(l->items, (l->n + 1) * sizeof *l->items);
    l->items[l->n++] = d;
}

static void list_free(def_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        def_free(l->items[i]);
    free(l->items);
}

static int parse_priority(const json_t *v, int *out, const char *where, loom_error *err)
{
    if (!v) {
        *out = HOOK_PRIORITY_NORMAL;
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 1000000) {
        *out = (int)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v) && (*out = hook_priority_parse(json_string_value(v))) >= 0)
        return 0;
    return loom_error_set(err, LOOM_ERR_CONFIG,
                          "%s: \"priority\" must be a non-negative integer or one of Highest, "
                          "High, StructuredOutput, Normal, Low, Lowest",
                          where);
}

static int require_string(const json_t *hook, const char *key, char **out, const char *where,
                          loom_error *err)
{
    const json_t *v = json_object_get(hook, key);
    if (!json_is_string(v) || !json_string_length(v))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"%s\" must be a non-empty string", where,
                              key);
    *out = xstrdup(json_string_value(v));
    return 0;
}

static int parse_http_extras(const json_t *hook, const char *where, loom_error *err)
{
    const json_t *h = json_object_get(hook, "headers");
    if (h) {
        const char *k;
        const json_t *v;
        if (!json_is_object(h))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"headers\" must be an object", where);
        json_object_foreach((json_t *)h, k, v) {
            if (!json_is_string(v) || strpbrk(k, ":\r\n") || strpbrk(json_string_value(v), "\r\n"))
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "%s: header \"%s\" must be a one-line string", where, k);
        }
    }
    const json_t *a = json_object_get(hook, "allowedEnvVars");
    if (a) {
        size_t i;
        const json_t *v;
        if (!json_is_array(a))
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "%s: \"allowedEnvVars\" must be an array of strings", where);
        json_array_foreach(a, i, v) {
            if (!json_is_string(v))
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "%s: \"allowedEnvVars\"[%zu] must be a string", where, i);
        }
    }
    return 0;
}

static int parse_hook(hook_def *d, const json_t *hook, loom_error *err)
{
    const char *where = d->where;
    if (!json_is_object(hook))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: a hook must be an object", where);
    const char *type = json_get_str(hook, "type", NULL);
    if (!type)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: \"type\" is missing (command, http, prompt or agent)", where);
    int rc;
    if (strcmp(type, "command") == 0) {
        d->type = HOOK_TYPE_COMMAND;
        rc = require_string(hook, "command", &d->command, where, err);
    } else if (strcmp(type, "http") == 0) {
        d->type = HOOK_TYPE_HTTP;
        rc = require_string(hook, "url", &d->url, where, err);
        if (rc == 0 && strncmp(d->url, "http://", 7) != 0 && strncmp(d->url, "https://", 8) != 0)
            rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "%s: \"url\" must start with http:// or https://", where);
        if (rc == 0)
            rc = parse_http_extras(hook, where, err);
    } else if (strcmp(type, "prompt") == 0 || strcmp(type, "agent") == 0) {
        d->type = type[0] == 'p' ? HOOK_TYPE_PROMPT : HOOK_TYPE_AGENT;
        rc = require_string(hook, "prompt", &d->prompt, where, err);
        d->model = xstrdup(json_get_str(hook, "model", NULL));
    } else {
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: unknown hook type \"%s\" (expected command, http, prompt or "
                              "agent)",
                              where, type);
    }
    if (rc < 0)
        return rc;

    const json_t *t = json_object_get(hook, "timeout");
    if (t) {
        if (!json_is_number(t) || json_number_value(t) <= 0 || json_number_value(t) > 86400)
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "%s: \"timeout\" must be a number of seconds, > 0 and at most "
                                  "86400",
                                  where);
        d->timeout_ms = (long)(json_number_value(t) * 1000.0 + 0.5);
        if (d->timeout_ms < 1)
            d->timeout_ms = 1;
    }
    if ((rc = parse_priority(json_object_get(hook, "priority"), &d->priority, where, err)) < 0)
        return rc;
    const json_t *once = json_object_get(hook, "once");
    if (once && !json_is_boolean(once))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"once\" must be true or false", where);
    d->once = json_is_true(once);
    const json_t *name = json_object_get(hook, "name");
    if (name && (!json_is_string(name) || !json_string_length(name)))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"name\" must be a non-empty string",
                              where);
    d->name = xstrdup(json_string_value(name));
    const json_t *cond = json_object_get(hook, "if");
    if (cond && (rc = hook_cond_parse(cond, &d->cond, err)) < 0) {
        loom_error_prefix(err, "%s", where);
        return rc;
    }
    d->config = json_deep_copy(hook);
    return 0;
}

static int parse_group(def_list *out, hook_event ev, const char *evname, size_t gi,
                       const json_t *group, hook_source src, bool trusted, loom_error *err)
{
    char where[256];
    snprintf(where, sizeof where, "hooks.%s[%zu]", evname, gi);
    if (!json_is_object(group))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: must be an object like {\"matcher\": \"Bash\", \"hooks\": [...]}",
                              where);
    const json_t *m = json_object_get(group, "matcher");
    if (m && !json_is_string(m))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"matcher\" must be a string", where);
    const json_t *hooks = json_object_get(group, "hooks");
    if (!json_is_array(hooks))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"hooks\" must be an array of hooks",
                              where);
    const json_t *gcond = json_object_get(group, "if");
    /* Events without a match field ignore the matcher, as Claude Code does;
     * it is then not compiled either, so a pattern meant for another event
     * cannot make the file fail to load. */
    const char *matcher = hook_event_match_field(ev) ? json_string_value(m) : NULL;

    size_t hi;
    const json_t *hook;
    json_array_foreach(hooks, hi, hook) {
        hook_def *d = xcalloc(1, sizeof *d);
        d->event = ev;
        d->source = src;
        d->trusted = trusted;
        loom_str w = LOOM_STR_INIT;
        str_printf(&w, "%s.hooks[%zu]", where, hi);
        d->where = str_steal(&w);
        list_push(out, d); /* freed with the list on any error below */
        int rc = hook_matcher_compile(matcher, &d->matcher, err);
        if (rc < 0) {
            loom_error_prefix(err, "%s", where);
            return rc;
        }
        if (gcond && (rc = hook_cond_parse(gcond, &d->group_cond, err)) < 0) {
            loom_error_prefix(err, "%s", where);
            return rc;
        }
        if ((rc = parse_hook(d, hook, err)) < 0)
            return rc;
    }
    return 0;
}

int hook_registry_load(hook_registry *reg, const json_t *hooks, hook_source src, bool trusted,
                       loom_error *err)
{
    if (!hooks || json_is_null(hooks))
        return 0;
    if (!json_is_object(hooks))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "hooks: must be an object keyed by event name (PreToolUse, …)");
    if ((unsigned)src >= HOOK_SRC__COUNT || src == HOOK_SRC_BUILTIN)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "hooks: bad source %d", (int)src);

    def_list list = {0};
    char **warnings = NULL;
    size_t n_warnings = 0;
    const char *evname;
    const json_t *groups;
    json_object_foreach((json_t *)hooks, evname, groups) {
        hook_event ev;
        if (hook_event_parse(evname, &ev) < 0) {
            loom_str w = LOOM_STR_INIT;
            str_printf(&w, "hooks.%s: unknown hook event, ignored (%s settings)", evname,
                       hook_source_name(src));
            warnings = xrealloc(warnings, (n_warnings + 1) * sizeof *warnings);
            warnings[n_warnings++] = str_steal(&w);
            continue;
        }
        if (!json_is_array(groups)) {
            list_free(&list);
            for (size_t i = 0; i < n_warnings; i++)
                free(warnings[i]);
            free(warnings);
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "hooks.%s: must be an array of {\"matcher\", \"hooks\"} groups",
                                  evname);
        }
        size_t gi;
        const json_t *group;
        json_array_foreach(groups, gi, group) {
            int rc = parse_group(&list, ev, evname, gi, group, src, trusted, err);
            if (rc < 0) {
                list_free(&list);
                for (size_t i = 0; i < n_warnings; i++)
                    free(warnings[i]);
                free(warnings);
                return rc;
            }
        }
    }

    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < list.n; i++)
        push_def(reg, list.items[i]);
    reg->warnings = xrealloc(reg->warnings, (reg->n_warnings + n_warnings + 1) * sizeof *reg->warnings);
    for (size_t i = 0; i < n_warnings; i++)
        reg->warnings[reg->n_warnings++] = warnings[i];
    pthread_mutex_unlock(&reg->mu);
    for (size_t i = 0; i < n_warnings; i++)
        LOG_W("hooks", "%s", warnings[i]);
    free(list.items);
    free(warnings);
    return 0;
}

void hook_registry_remove_source(hook_registry *reg, hook_source src)
{
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->n; i++)
        if (reg->defs[i]->source == src)
            reg->defs[i]->removed = true;
    pthread_mutex_unlock(&reg->mu);
}

int hook_registry_add_builtin(hook_registry *reg, hook_event ev, const char *matcher, int priority,
                              hook_builtin_fn fn, void *ctx)
{
    if ((unsigned)ev >= HOOK_EVENT__COUNT)
        return -LOOM_ERR_CONFIG;
    if (!fn)
        return -LOOM_ERR_INVALID_REQUEST;
    hook_def *d = xcalloc(1, sizeof *d);
    loom_error err;
    loom_error_clear(&err);
    if (hook_matcher_compile(matcher, &d->matcher, &err) < 0) {
        LOG_E("hooks", "built-in %s hook: %s", hook_event_name(ev), err.message);
        free(d);
        return -LOOM_ERR_CONFIG;
    }
    d->event = ev;
    d->type = HOOK_TYPE_BUILTIN;
    d->source = HOOK_SRC_BUILTIN;
    d->trusted = true;
    d->priority = priority;
    d->fn = fn;
    d->ctx = ctx;
    pthread_mutex_lock(&reg->mu);
    loom_str w = LOOM_STR_INIT;
    str_printf(&w, "builtin %s#%u", hook_event_name(ev), reg->builtin_count[ev]++);
    d->where = str_steal(&w);
    push_def(reg, d);
    pthread_mutex_unlock(&reg->mu);
    return 0;
}

size_t hook_registry_count(hook_registry *reg, hook_event ev)
{
    size_t n = 0;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->n; i++)
        if (reg->defs[i]->event == ev && !reg->defs[i]->removed)
            n++;
    pthread_mutex_unlock(&reg->mu);
    return n;
}

size_t hook_registry_warning_count(hook_registry *reg)
{
    pthread_mutex_lock(&reg->mu);
    size_t n = reg->n_warnings;
    pthread_mutex_unlock(&reg->mu);
    return n;
}

const char *hook_registry_warning(hook_registry *reg, size_t i)
{
    pthread_mutex_lock(&reg->mu);
    const char *w = i < reg->n_warnings ? reg->warnings[i] : NULL;
    pthread_mutex_unlock(&reg->mu);
    return w;
}

/* ---- planning one event ------------------------------------------------- */

char *hook_def_label(const hook_def *d)
{
    if (d->name)
        return xstrdup(d->name);
    const char *what = d->command   ? d->command
                       : d->url     ? d->url
                       : d->prompt  ? d->prompt
                                    : d->where;
    /* Long inline scripts make unreadable notices; 80 bytes identify one. */
    size_t n = strlen(what);
    if (n <= 80)
        return xstrdup(what);
    loom_str s = LOOM_STR_INIT;
    size_t cut = 77;
    while (cut && ((unsigned char)what[cut] & 0xC0) == 0x80) /* keep UTF-8 whole */
        cut--;
    str_append(&s, what, cut);
    str_puts(&s, "...");
    return str_steal(&s);
}

static int plan_order(const void *a, const void *b)
{
    const hook_def *x = *(const hook_def *const *)a;
    const hook_def *y = *(const hook_def *const *)b;
    bool bx = x->type == HOOK_TYPE_BUILTIN, by = y->type == HOOK_TYPE_BUILTIN;
    if (bx != by)
        return bx ? -1 : 1;
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Two hooks are the same hook when they share a name, or, unnamed, the same
 * type and command / url / prompt: the same script listed under two
 * matchers (or in user and project settings) runs once. */
static bool same_hook(const hook_def *a, const hook_def *b)
{
    if (a->name || b->name)
        return a->name && b->name && strcmp(a->name, b->name) == 0;
    if (a->type != b->type)
        return false;
    const char *ka = a->command ? a->command : a->url ? a->url : a->prompt;
    const char *kb = b->command ? b->command : b->url ? b->url : b->prompt;
    return ka && kb && strcmp(ka, kb) == 0;
}

void hook_registry_plan(hook_registry *reg, hook_event ev, const json_t *payload,
                        const char *project_dir, const bool runnable[HOOK_TYPE__COUNT],
                        hook_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    const char *field = hook_event_match_field(ev);
    const char *value = field ? json_get_str(payload, field, "") : "";

    /* Matching reads only immutable parts of each def, so it runs on a
     * snapshot taken under the lock; the lock is taken again only for the
     * once-state. Regex work never holds the mutex. */
    pthread_mutex_lock(&reg->mu);
    size_t n = reg->n;
    const hook_def **all = xmalloc((n ? n : 1) * sizeof *all);
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        if (reg->defs[i]->event == ev && !reg->defs[i]->removed)
            all[na++] = reg->defs[i];
    pthread_mutex_unlock(&reg->mu);

    const hook_def **cand = xmalloc((na ? na : 1) * sizeof *cand);
    size_t nc = 0;
    for (size_t i = 0; i < na; i++) {
        const hook_def *d = all[i];
        if (!hook_matcher_test(d->matcher, value))
            continue;
        if (d->group_cond && !hook_cond_eval(d->group_cond, payload, project_dir))
            continue;
        if (d->cond && !hook_cond_eval(d->cond, payload, project_dir))
            continue;
        cand[nc++] = d;
    }
    free(all);
    qsort(cand, nc, sizeof *cand, plan_order);

    plan->run = xmalloc((nc ? nc : 1) * sizeof *plan->run);
    plan->skipped = xmalloc((nc ? nc : 1) * sizeof *plan->skipped);
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < nc; i++) {
        const hook_def *d = cand[i];
        /* Skipped hooks are deduplicated among themselves and do not take
         * the slot of a runnable one: a trusted copy of an untrusted hook
         * still runs. Nor do they spend their once. */
        bool skip = !d->trusted || !runnable[d->type];
        if (d->type != HOOK_TYPE_BUILTIN) {
            const hook_def **seen = skip ? plan->skipped : plan->run;
            size_t n_seen = skip ? plan->n_skipped : plan->n_run;
            bool dup = false;
            for (size_t j = 0; j < n_seen && !dup; j++)
                dup = seen[j]->type != HOOK_TYPE_BUILTIN && same_hook(seen[j], d);
            if (dup)
                continue;
        }
        if (skip) {
            plan->skipped[plan->n_skipped++] = d;
            continue;
        }
        if (d->once) {
            hook_def *md = (hook_def *)d; /* once_fired is the mutable part */
            if (md->once_fired)
                continue;
            md->once_fired = true;
        }
        plan->run[plan->n_run++] = d;
    }
    pthread_mutex_unlock(&reg->mu);
    free(cand);
}

void hook_plan_free(hook_plan *plan)
{
    free(plan->run);
    free(plan->skipped);
    memset(plan, 0, sizeof *plan);
}

/* schema.c — the table-driven checker of the config files: a mapping of
 * the YAML document checked key by key against a cfg_field table and
 * written into one of objects.h's structs (offsets into it), with the
 * messages "FILE:LINE: key.path: what is wrong" and, for an unknown key,
 * the nearest known one. Small helpers on str_list live here too.
 *
 * A null value (`model:` with nothing after it) counts as not written, so
 * the default stays. No state; runs on the loading thread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "surfaces/server/config/config_internal.h"

int cfg_fail(const cfg_at *at, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line = at->parent ? cfg_line_of(at->doc, at->parent, at->key, at->index)
                          : at->doc->root_line;
    if (at->path[0])
        return srv_fail(at->err, LOOM_ERR_CONFIG, "%s:%d: %s: %s", at->doc->file, line,
                        at->path, what);
    return srv_fail(at->err, LOOM_ERR_CONFIG, "%s:%d: %s", at->doc->file, line, what);
}

void cfg_at_child(cfg_at *out, const cfg_at *up, const json_t *parent, const char *key,
                  size_t index)
{
    cfg_at next = {.doc = up->doc, .parent = parent, .key = key, .index = index,
                   .err = up->err};
    /* A path too long for the buffer is cut; the line still says where. */
    loom_str p = LOOM_STR_INIT;
    if (key)
        str_printf(&p, "%s%s%.120s", up->path, up->path[0] ? "." : "", key);
    else
        str_printf(&p, "%s[%zu]", up->path, index);
    size_t n = p.len < sizeof next.path ? p.len : sizeof next.path - 1;
    memcpy(next.path, str_cstr(&p), n);
    next.path[n] = 0;
    str_free(&p);
    *out = next;
}

bool cfg_id_valid(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        if (!ok)
            return false;
    }
    return n >= 1 && n <= 64;
}

/* Edits between a and b, a swap of two neighbours counting as one
 * ("modle" is one from "model"): the usual typos of a key. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 64 || nb > 64)
        return 99;
    static _Thread_local size_t d[65][65];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

const char *cfg_nearest(const char *key, const char *const *known, size_t n)
{
    const char *best = NULL;
    size_t best_d = 0;
    size_t limit = strlen(key) / 3 + 1;
    if (limit < 2)
        limit = 2;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(key, known[i]);
        /* A key written as a prefix (retrieval → retrieval_policy) counts too. */
        if (strlen(key) >= 4 && strncmp(known[i], key, strlen(key)) == 0)
            d = 1;
        /* On a tie the key of the same length wins (a swap over a deletion). */
        bool better = !best || d < best_d ||
                      (d == best_d && strlen(known[i]) == strlen(key) &&
                       strlen(best) != strlen(key));
        if (d <= limit && better) {
            best = known[i];
            best_d = d;
        }
    }
    return best;
}

static void describe(const json_t *v, char *out, size_t cap)
{
    if (json_is_object(v)) {
        snprintf(out, cap, "a mapping");
    } else if (json_is_array(v)) {
        snprintf(out, cap, "a list");
    } else {
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(out, cap, "%.60s%s", t ? t : "?", t && strlen(t) > 60 ? "…" : "");
        free(t);
    }
}

int cfg_want_mapping(const cfg_at *at, const json_t *v)
{
    if (json_is_object(v))
        return 0;
    char got[96];
    describe(v, got, sizeof got);
    return cfg_fail(at, "must be a mapping of keys, not %s", got);
}

static bool in_choices(const char *s, const char *const *choices)
{
    for (size_t i = 0; choices[i]; i++)
        if (strcmp(choices[i], s) == 0)
            return true;
    return false;
}

static void join_choices(const char *const *choices, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; choices[i] && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", choices[i]);
}

/* One text (the item of a list, or a text field): non-empty, an id when
 * asked, one of the choices when given. */
static int check_text(const cfg_at *at, const json_t *v, bool id, const char *const *choices,
                      const char *what)
{
    char got[96];
    if (!json_is_string(v)) {
        describe(v, got, sizeof got);
        return cfg_fail(at, "must be %s, not %s", what, got);
    }
    const char *s = json_string_value(v);
    if (!*s)
        return cfg_fail(at, "must not be empty");
    if (id && !cfg_id_valid(s))
        return cfg_fail(at, "\"%.80s\" is not an id (1 to 64 of A-Z a-z 0-9 _ . -)", s);
    if (choices && !in_choices(s, choices)) {
        char list[256];
        join_choices(choices, list, sizeof list);
        return cfg_fail(at, "must be one of %s, not \"%.80s\"", list, s);
    }
    return 0;
}

static int check_list(const cfg_at *at, const json_t *v, const cfg_field *f, str_list *out)
{
    bool id = f->type == CFG_IDLIST;
    const char *what = id ? "a list of ids" : "a list of texts";
    if (!json_is_array(v)) {
        char got[96];
        describe(v, got, sizeof got);
        return cfg_fail(at, "must be %s, not %s", what, got);
    }
    cfg_list_free(out);
    size_t n = json_array_size(v);
    out->items = xcalloc(n ? n : 1, sizeof *out->items);
    for (size_t i = 0; i < n; i++) {
        cfg_at item;
        cfg_at_child(&item, at, v, NULL, i);
        if (check_text(&item, json_array_get(v, i), id, f->choices, id ? "an id" : "a text") != 0)
            return -1;
        out->items[out->n++] = xstrdup(json_string_value(json_array_get(v, i)));
    }
    return 0;
}

static int check_number(const cfg_at *at, const json_t *v, const cfg_field *f, long *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < f->min ||
        json_integer_value(v) > f->max) {
        char got[96];
        describe(v, got, sizeof got);
        return cfg_fail(at, "must be a whole number from %ld to %ld, not %s", f->min, f->max,
                        got);
    }
    *out = (long)json_integer_value(v);
    return 0;
}

int cfg_check_value(const cfg_at *at, const json_t *v, const cfg_field *f, void *base)
{
    char *dst = (char *)base + f->off;
    if (json_is_null(v) || f->type == CFG_CUSTOM)
        return 0;
    long n = 0;
    switch (f->type) {
    case CFG_TEXT:
    case CFG_ID:
        if (check_text(at, v, f->type == CFG_ID, f->choices,
                       f->type == CFG_ID ? "an id" : "a text") != 0)
            return -1;
        free(*(char **)dst);
        *(char **)dst = xstrdup(json_string_value(v));
        return 0;
    case CFG_LIST:
    case CFG_IDLIST:
        return check_list(at, v, f, (str_list *)dst);
    case CFG_BOOL:
        if (!json_is_boolean(v)) {
            char got[96];
            describe(v, got, sizeof got);
            return cfg_fail(at, "must be true or false, not %s", got);
        }
        *(bool *)dst = json_is_true(v);
        return 0;
    case CFG_INT:
        if (check_number(at, v, f, &n) != 0)
            return -1;
        *(int *)dst = (int)n;
        return 0;
    case CFG_LONG:
        if (check_number(at, v, f, &n) != 0)
            return -1;
        *(long *)dst = n;
        return 0;
    case CFG_GROUP:
        return cfg_check_fields(at, v, f->sub, base, NULL, NULL);
    case CFG_CUSTOM:
        return 0;
    }
    return 0;
}

static const cfg_field *find_field(const cfg_field *fields, const char *key)
{
    for (size_t i = 0; fields[i].key; i++)
        if (strcmp(fields[i].key, key) == 0)
            return &fields[i];
    return NULL;
}

static int unknown_key(const cfg_at *at, const char *key, const cfg_field *fields,
                       const char *const *foreign, const char *foreign_hint)
{
    if (foreign && in_choices(key, foreign))
        return cfg_fail(at, "not a key here: %s", foreign_hint);
    const char *known[64] = {0};
    size_t n = 0;
    for (size_t i = 0; fields[i].key && n < 64; i++)
        known[n++] = fields[i].key;
    const char *near = cfg_nearest(key, known, n);
    if (near)
        return cfg_fail(at, "unknown key (did you mean %s?)", near);
    char list[400];
    size_t w = 0;
    list[0] = 0;
    for (size_t i = 0; i < n && w < sizeof list; i++)
        w += (size_t)snprintf(list + w, sizeof list - w, "%s%s", i ? ", " : "", known[i]);
    return cfg_fail(at, "unknown key (the keys are %s)", list);
}

int cfg_check_fields(const cfg_at *at, const json_t *node, const cfg_field *fields,
                     void *base, const char *const *foreign, const char *foreign_hint)
{
    if (json_is_null(node)) /* "p:" with nothing under it: every default */
        return 0;
    if (cfg_want_mapping(at, node) != 0)
        return -1;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) {
        cfg_at child;
        cfg_at_child(&child, at, node, key, 0);
        const cfg_field *f = find_field(fields, key);
        if (!f)
            return unknown_key(&child, key, fields, foreign, foreign_hint);
        if (f->same_as && json_object_get(node, f->same_as) &&
            strcmp(key, f->same_as) > 0) /* report once, at the later spelling */
            return cfg_fail(&child, "give %s or %s, not both", f->same_as, key);
        if (cfg_check_value(&child, v, f, base) != 0)
            return -1;
    }
    return 0;
}

int cfg_check_top(const cfg_doc *doc, const char *const *allowed, srv_error *err)
{
    static const struct {
        const char *key, *file;
    } homes[] = {{"profiles", "profiles.yaml"},
                 {"policies", "policies.yaml"},
                 {"knowledge_sources", "knowledge_sources.yaml"},
                 {"tenants", "tenants.yaml"},
                 {"tokens", "tenants.yaml"}};
    cfg_at top = {.doc = doc, .err = err};
    if (!doc->root || json_is_null(doc->root))
        return 0;
    if (cfg_want_mapping(&top, doc->root) != 0)
        return -1;
    const char *key;
    json_t *v;
    json_object_foreach(doc->root, key, v) {
        cfg_at child;
        cfg_at_child(&child, &top, doc->root, key, 0);
        if (in_choices(key, allowed))
            continue;
        for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++)
            if (strcmp(homes[i].key, key) == 0)
                return cfg_fail(&child, "belongs in %s: the files are never merged",
                                homes[i].file);
        size_t n = 0;
        while (allowed[n])
            n++;
        const char *near = cfg_nearest(key, allowed, n);
        if (near)
            return cfg_fail(&child, "unknown key (did you mean %s?)", near);
        return cfg_fail(&child, "unknown key (this file holds %s)", allowed[0]);
    }
    return 0;
}

void cfg_list_free(str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

bool cfg_list_has(const str_list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], s) == 0)
            return true;
    return false;
}

json_t *cfg_list_json(const str_list *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->items[i]));
    return a;
}

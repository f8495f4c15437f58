/* registry.c — knowledge_sources.yaml into a knowledge_registry
 * (registry.h). The YAML is read by base/frontmatter's one YAML reader
 * (yaml_mapping_parse: aliases refused, depth and size capped); this file
 * checks the shape key by key, so a typo is an error naming the file and
 * the key's path, never a source silently left out.
 *
 * Owns the registry it fills. One thread while loading, read-only after. */
#include "ext/knowledge/registry.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"

static const char *const TYPES[] = {"filesystem", "web", "internal_wiki", "mcp", NULL};
static const char *const TIERS[] = {"high", "medium", "low", NULL};
static const char *const SCOPES[] = {"global", "tenant", "project", NULL};
static const char *const SOURCE_KEYS[] = {"type",      "path",     "paths",
                                          "globs",     "trust_tier", "scope",
                                          "tenant",    "project",  "retrieval_policy",
                                          "freshness", "url_prefixes", "endpoint",
                                          "server",    "description", NULL};

const char *ksrc_type_name(ksrc_type t)
{
    return TYPES[t];
}

static int index_of(const char *s, const char *const *names)
{
    for (int i = 0; s && names[i]; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

knowledge_registry *knowledge_registry_new(void)
{
    knowledge_registry *r = xcalloc(1, sizeof *r);
    r->warnings = json_array();
    return r;
}

static void src_clear(knowledge_src *s)
{
    free(s->id), free(s->trust_tier), free(s->scope), free(s->tenant_id), free(s->project_id);
    free(s->origin), free(s->endpoint);
    strv_free(s->paths), strv_free(s->globs);
    memset(s, 0, sizeof *s);
}

void knowledge_registry_free(knowledge_registry *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        src_clear(&r->v[i]);
    free(r->v);
    strv_free(r->require_citation_for), strv_free(r->allow_quote_from);
    json_decref(r->warnings);
    free(r);
}

int64_t knowledge_parse_age(const char *s)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end = NULL;
    long long n = strtoll(s, &end, 10);
    if (n < 0 || n > 100LL * 365 * 86400)
        return -1;
    int64_t unit = 1;
    if (*end == 'd')
        unit = 86400, end++;
    else if (*end == 'h')
        unit = 3600, end++;
    else if (*end == 'm')
        unit = 60, end++;
    else if (*end == 's')
        end++;
    return *end ? -1 : (int64_t)n * unit;
}

/* A string or a list of strings into a NULL-terminated vector; NULL with
 * a message when v is neither. */
static char **string_list(const json_t *v, const char *what, loom_str *why)
{
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    char **out = xcalloc(n + 1, sizeof *out);
    if (json_is_string(v)) {
        out[0] = xstrdup(json_string_value(v));
        return out;
    }
    for (size_t i = 0; json_is_array(v) && i < n; i++) {
        const char *t = json_string_value(json_array_get(v, i));
        if (!t || !*t) {
            str_printf(why, "%s[%zu] must be non-empty text", what, i);
            strv_free(out);
            return NULL;
        }
        out[i] = xstrdup(t);
    }
    if (!json_is_array(v)) {
        str_printf(why, "%s must be text or a list of text", what);
        strv_free(out);
        return NULL;
    }
    return out;
}

static bool list_has(char *const *v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (s && !strcmp(v[i], s))
            return true;
    return false;
}

static const char *text_at(const json_t *o, const char *key, const char *const *allowed,
                           const char *id, loom_str *why)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return NULL;
    const char *t = json_string_value(v);
    if (!t || !*t || (allowed && index_of(t, allowed) < 0)) {
        str_printf(why, "knowledge_sources.%s.%s: ", id, key);
        if (allowed) {
            str_puts(why, "must be one of");
            for (size_t i = 0; allowed[i]; i++)
                str_printf(why, "%s %s", i ? "," : "", allowed[i]);
        } else {
            str_puts(why, "must be non-empty text");
        }
        return "";
    }
    return t;
}

/* One source entry; 0, or -1 with why. */
static int one_source(knowledge_src *s, const char *id, const json_t *o, const char *base_dir,
                      loom_str *why)
{
    if (!json_is_object(o)) {
        str_printf(why, "knowledge_sources.%s: must be a mapping (type, path, trust_tier, …)", id);
        return -1;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        if (index_of(k, SOURCE_KEYS) < 0) {
            str_printf(why, "knowledge_sources.%s: unknown key \"%s\"", id, k);
            return -1;
        }
    }
    s->id = xstrdup(id);
    const char *type = text_at(o, "type", TYPES, id, why);
    if (!type) {
        str_printf(why, "knowledge_sources.%s.type: required (filesystem, web, internal_wiki or mcp)",
                   id);
        return -1;
    }
    if (!*type)
        return -1;
    s->type = (ksrc_type)index_of(type, TYPES);
    const char *tier = text_at(o, "trust_tier", TIERS, id, why);
    const char *scope = text_at(o, "scope", SCOPES, id, why);
    const char *tenant = text_at(o, "tenant", NULL, id, why);
    const char *project = text_at(o, "project", NULL, id, why);
    if ((tier && !*tier) || (scope && !*scope) || (tenant && !*tenant) || (project && !*project))
        return -1;
    s->trust_tier = xstrdup(tier ? tier : "medium");
    s->tenant_id = xstrdup(tenant);
    s->project_id = xstrdup(project);
    s->scope = xstrdup(scope ? scope : project ? "project" : tenant ? "tenant" : "global");
    if (!strcmp(s->scope, "tenant") && !tenant) {
        str_printf(why, "knowledge_sources.%s.scope: tenant needs tenant", id);
        return -1;
    }
    s->allow_search = s->allow_quote = true;
    const json_t *rp = json_object_get(o, "retrieval_policy");
    if (rp) {
        const json_t *as = json_object_get(rp, "allow_search"), *aq = json_object_get(rp, "allow_quote");
        if (!json_is_object(rp) || (as && !json_is_boolean(as)) || (aq && !json_is_boolean(aq)) ||
            json_object_size(rp) != (size_t)(!!as + !!aq)) {
            str_printf(why, "knowledge_sources.%s.retrieval_policy: a mapping of allow_search and "
                            "allow_quote (true or false)", id);
            return -1;
        }
        s->allow_search = !as || json_is_true(as);
        s->allow_quote = !aq || json_is_true(aq);
    }
    const json_t *fr = json_object_get(o, "freshness");
    if (fr) {
        const json_t *ma = json_object_get(fr, "max_age");
        const char *t = json_string_value(ma);
        char num[32];
        if (json_is_integer(ma))
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(ma)), t = num;
        if (!json_is_object(fr) || json_object_size(fr) != 1 || (s->max_age_s = knowledge_parse_age(t)) < 0) {
            str_printf(why, "knowledge_sources.%s.freshness: {max_age: N[s|m|h|d]}", id);
            return -1;
        }
    }
    if (s->type == KSRC_INTERNAL_WIKI) {
        const char *ep = text_at(o, "endpoint", NULL, id, why);
        if (!ep || !*ep || (strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8))) {
            if (!ep || *ep)
                str_printf(why, "knowledge_sources.%s.endpoint: an internal_wiki source needs "
                                "an http:// or https:// search endpoint", id);
            return -1;
        }
        s->endpoint = xstrdup(ep);
        return 0;
    }
    if (s->type != KSRC_FILESYSTEM)
        return 0;
    const json_t *p = json_object_get(o, "paths");
    if (!p)
        p = json_object_get(o, "path");
    if (!p) {
        str_printf(why, "knowledge_sources.%s: a filesystem source needs path (or paths)", id);
        return -1;
    }
    loom_str sub = LOOM_STR_INIT;
    char what[300];
    snprintf(what, sizeof what, "knowledge_sources.%s.path", id);
    char **paths = string_list(p, what, &sub);
    if (!paths || !paths[0]) {
        str_puts(why, sub.len ? sub.ptr : "knowledge_sources: a filesystem source needs a path");
        str_free(&sub);
        strv_free(paths);
        return -1;
    }
    for (size_t i = 0; paths[i]; i++) {
        char *abs = path_make_absolute(paths[i], base_dir);
        free(paths[i]);
        paths[i] = abs;
    }
    s->paths = paths;
    if (json_object_get(o, "globs")) {
        snprintf(what, sizeof what, "knowledge_sources.%s.globs", id);
        if (!(s->globs = string_list(json_object_get(o, "globs"), what, &sub))) {
            str_puts(why, sub.ptr);
            str_free(&sub);
            return -1;
        }
    }
    return 0;
}

static int policy_part(knowledge_registry *r, const json_t *cp, loom_str *why)
{
    if (!cp)
        return 0;
    const char *k;
    json_t *v;
    if (!json_is_object(cp)) {
        str_puts(why, "citation_policy: a mapping of require_citation_for and allow_quote_from");
        return -1;
    }
    json_object_foreach((json_t *)cp, k, v) {
        char what[80];
        snprintf(what, sizeof what, "citation_policy.%s", k);
        char ***slot = !strcmp(k, "require_citation_for") ? &r->require_citation_for
                     : !strcmp(k, "allow_quote_from")     ? &r->allow_quote_from
                                                          : NULL;
        if (!slot) {
            str_printf(why, "citation_policy: unknown key \"%s\" (require_citation_for, "
                            "allow_quote_from)", k);
            return -1;
        }
        char **l = string_list(v, what, why);
        if (!l)
            return -1;
        strv_free(*slot);
        *slot = l;
    }
    return 0;
}

int knowledge_registry_add_json(knowledge_registry *r, const json_t *doc, const char *file,
                                const char *base_dir, loom_error *err)
{
    loom_str why = LOOM_STR_INIT;
    const char *k;
    json_t *v;
    if (!json_is_object(doc)) {
        str_puts(&why, "the file must be a mapping (knowledge_sources: …)");
        goto fail;
    }
    json_object_foreach((json_t *)doc, k, v) {
        if (strcmp(k, "knowledge_sources") && strcmp(k, "citation_policy")) {
            str_printf(&why, "unknown top-level key \"%s\" (knowledge_sources, citation_policy)", k);
            goto fail;
        }
    }
    const json_t *srcs = json_object_get(doc, "knowledge_sources");
    if (srcs && !json_is_object(srcs) && !json_is_null(srcs)) {
        str_puts(&why, "knowledge_sources: must be a mapping of source ids");
        goto fail;
    }
    size_t n0 = r->n;
    json_object_foreach((json_t *)srcs, k, v) {
        if (knowledge_registry_find(r, k)) {
            char msg[600];
            snprintf(msg, sizeof msg, "%s: knowledge source %s is defined earlier; this one is ignored",
                     file, k);
            json_array_append_new(r->warnings, json_string(msg));
            continue;
        }
        r->v = xrealloc(r->v, (r->n + 1) * sizeof *r->v);
        knowledge_src *s = &r->v[r->n];
        memset(s, 0, sizeof *s);
        if (one_source(s, k, v, base_dir, &why) != 0) {
            src_clear(s);
            while (r->n > n0)
                src_clear(&r->v[--r->n]);
            goto fail;
        }
        s->origin = xstrdup(file);
        r->n++;
    }
    if (policy_part(r, json_object_get(doc, "citation_policy"), &why) != 0)
        goto fail;
    return 0;
fail:
    loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", file, str_cstr(&why));
    str_free(&why);
    return -1;
}

int knowledge_registry_load_file(knowledge_registry *r, const char *path, const char *base_dir,
                                 loom_error *err)
{
    if (!file_exists(path))
        return 0;
    char *text = NULL;
    size_t len = 0;
    if (file_read_all(path, &text, &len, err) != 0)
        return -1;
    loom_error perr = {0};
    json_t *doc = yaml_mapping_parse(text, len, &perr);
    free(text);
    if (!doc)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, perr.message);
    int rc = knowledge_registry_add_json(r, doc, path, base_dir, err);
    json_decref(doc);
    return rc;
}

knowledge_registry *knowledge_registry_load(const char *cwd, bool trusted)
{
    knowledge_registry *r = knowledge_registry_new();
    char *home = loom_home();
    char *project = cwd ? path_join(cwd, ".loom/knowledge_sources.yaml") : NULL;
    char *user = home ? path_join(home, "knowledge_sources.yaml") : NULL;
    const char *files[2] = {trusted ? project : NULL, user};
    const char *bases[2] = {cwd, home};
    for (int i = 0; i < 2; i++) {
        loom_error err = {0};
        if (files[i] && knowledge_registry_load_file(r, files[i], bases[i], &err) != 0)
            json_array_append_new(r->warnings, json_string(err.message));
    }
    free(project), free(user), free(home);
    return r;
}

const knowledge_src *knowledge_registry_find(const knowledge_registry *r, const char *id)
{
    for (size_t i = 0; r && id && i < r->n; i++)
        if (!strcmp(r->v[i].id, id))
            return &r->v[i];
    return NULL;
}

static bool names_source(char *const *list, const knowledge_src *s)
{
    return list_has(list, s->id) || list_has(list, ksrc_type_name(s->type)) ||
           list_has(list, s->trust_tier);
}

bool knowledge_src_quotable(const knowledge_registry *r, const knowledge_src *s)
{
    if (!s->allow_quote)
        return false;
    return !r->allow_quote_from || names_source(r->allow_quote_from, s);
}

bool knowledge_src_requires_citation(const knowledge_registry *r, const knowledge_src *s)
{
    return names_source(r->require_citation_for, s);
}

json_t *knowledge_src_json(const knowledge_src *s)
{
    json_t *paths = json_array();
    for (size_t i = 0; s->paths && s->paths[i]; i++)
        json_array_append_new(paths, json_string(s->paths[i]));
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:{s:b, s:b}, s:I}", "knowledge_source_id", s->id,
                     "type", ksrc_type_name(s->type), "trust_tier", s->trust_tier, "scope", s->scope,
                     "paths", paths, "retrieval_policy", "allow_search", s->allow_search,
                     "allow_quote", s->allow_quote, "max_age_s", (json_int_t)s->max_age_s);
}

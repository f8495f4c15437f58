/* evidence.c — the reranker and the evidence builder (evidence.h).
 *
 * Owns nothing past a call. Any thread. */
#include "ext/knowledge/evidence.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/str.h"
#include "base/uuid.h"

#define FACT_KEY_MAX 60
#define EXCERPT_MAX 240
#define FACTS_MAX 12

/* --- the reranker ------------------------------------------------------ */

static double tier_weight(const char *tier)
{
    return !strcmp(tier, "high") ? 1.0 : !strcmp(tier, "low") ? 0.6 : 0.8;
}

/* Case-insensitive substring (ASCII folding). */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; *p; p++)
        if (!strncasecmp(p, word, n))
            return true;
    return false;
}

static double coverage(const char *text, char *const *terms)
{
    size_t n = 0, hit = 0;
    for (; terms[n]; n++)
        hit += has_word(text, terms[n]);
    return n ? (double)hit / (double)n : 0;
}

static int hit_cmp(const void *a, const void *b)
{
    const evidence_hit *x = a, *y = b;
    if (x->hit.score != y->hit.score)
        return x->hit.score > y->hit.score ? -1 : 1;
    int c = strcmp(x->hit.path, y->hit.path);
    return c ? c : (x->hit.line_start > y->hit.line_start) - (x->hit.line_start < y->hit.line_start);
}

void evidence_rerank(evidence_input *in)
{
    char **terms = fs_query_terms(in->question);
    for (size_t i = 0; i < in->n_hits; i++) {
        evidence_hit *h = &in->hits[i];
        /* bm25() is negative, better when lower; squash it into (0, 1). */
        double lexical = 1.0 - 1.0 / (1.0 + fabs(h->hit.bm25));
        double s = (2.0 * coverage(h->hit.text, terms) + lexical) * tier_weight(h->src->trust_tier);
        int64_t age = in->now_ms / 1000 - h->hit.mtime_s;
        h->stale = h->src->max_age_s > 0 && age > h->src->max_age_s;
        h->hit.score = h->stale ? s / 2 : s;
    }
    if (in->n_hits > 1)
        qsort(in->hits, in->n_hits, sizeof *in->hits, hit_cmp);
    strv_free(terms);
}

/* --- facts ------------------------------------------------------------- */

typedef struct fact {
    char *key;       /* normalized */
    char *value;     /* normalized */
    char *text;      /* the line as a fact ("key: value"), quotable sources only */
    size_t hit;      /* index of its passage */
    const char *cid;
} fact;

static char *normalize(const char *s, size_t n)
{
    loom_str o = LOOM_STR_INIT;
    bool space = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '*' || c == '`' || c == '_' || c == '"')
            continue;
        if (isspace(c)) {
            space = o.len > 0;
            continue;
        }
        if (space)
            str_putc(&o, ' ');
        space = false;
        str_putc(&o, (char)tolower(c));
    }
    while (o.len && (o.ptr[o.len - 1] == '.' || o.ptr[o.len - 1] == ','))
        o.len--;
    str_putc(&o, 0);
    o.len--;
    return str_steal(&o);
}

/* "key: value" or "X is Y" in line[0..n); true with the parts set. */
static bool split_fact(const char *line, size_t n, const char **k, size_t *kn, const char **v,
                       size_t *vn)
{
    while (n && isspace((unsigned char)*line))
        line++, n--;
    if (n && (*line == '-' || *line == '*' || *line == '+') && n > 1 && line[1] == ' ')
        line += 2, n -= 2;
    if (!n || *line == '#' || *line == '|' || *line == '>')
        return false;
    const char *colon = memchr(line, ':', n);
    const char *is = NULL;
    for (size_t i = 0; i + 4 <= n && !is; i++)
        if (!strncmp(line + i, " is ", 4))
            is = line + i;
    const char *cut = colon && (!is || colon < is) ? colon : is;
    if (!cut)
        return false;
    size_t skip = cut == colon ? 1 : 4;
    *k = line, *kn = (size_t)(cut - line);
    *v = cut + skip, *vn = n - *kn - skip;
    if (*kn == 0 || *kn > FACT_KEY_MAX || (*vn > 0 && (*v)[0] == '/'))
        return false; /* no key, a sentence, or a URL's "scheme:" */
    while (*vn && isspace((unsigned char)**v))
        (*v)++, (*vn)--;
    return *vn > 0;
}

static void facts_of(const evidence_hit *h, size_t idx, const char *cid, char *const *terms,
                     fact **v, size_t *n)
{
    const char *p = h->hit.text;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *line = xstrndup(p, len);
        bool relevant = false;
        for (size_t t = 0; terms[t] && !relevant; t++)
            relevant = has_word(line, terms[t]);
        const char *k, *val;
        size_t kn, vn;
        if (relevant && split_fact(line, len, &k, &kn, &val, &vn)) {
            *v = xrealloc(*v, (*n + 1) * sizeof **v);
            fact *f = &(*v)[(*n)++];
            f->key = normalize(k, kn);
            f->value = normalize(val, vn);
            f->text = NULL;
            if (h->quotable) {
                char *raw_k = normalize(k, kn);
                loom_str t = LOOM_STR_INIT;
                str_printf(&t, "%s: %.*s", raw_k, (int)vn, val);
                free(raw_k);
                f->text = str_steal(&t);
            }
            f->hit = idx;
            f->cid = cid;
        }
        free(line);
        p = e ? e + 1 : p + len;
    }
}

/* --- the pack ---------------------------------------------------------- */

static char *uri_of(const char *cwd, const evidence_hit *e)
{
    const fs_hit *h = &e->hit;
    if (e->src->type != KSRC_FILESYSTEM)
        return xstrdup(h->path); /* a wiki's own uri: no lines */
    size_t n = cwd ? strlen(cwd) : 0;
    const char *rel = n && !strncmp(h->path, cwd, n) && h->path[n] == '/' ? h->path + n + 1 : h->path;
    loom_str u = LOOM_STR_INIT;
    str_printf(&u, "%s#L%ld-L%ld", rel, h->line_start, h->line_end);
    return str_steal(&u);
}

static void id_new(const char *prefix, size_t tail, char *out, size_t cap)
{
    char u[UUID_STR_LEN];
    uuid_v7(u);
    size_t len = strlen(u);
    /* The tail of a UUIDv7 is random: short ids a model can copy. */
    const char *t = tail && tail < len ? u + len - tail : u;
    size_t np = strlen(prefix), nt = strlen(t);
    if (np + nt + 1 > cap)
        nt = cap - np - 1;
    memcpy(out, prefix, np);
    memcpy(out + np, t, nt);
    out[np + nt] = 0;
}

static json_t *restricted_summary(const evidence_hit *h, char *const *terms, const char *uri)
{
    json_t *words = json_array();
    for (size_t t = 0; terms[t]; t++)
        if (has_word(h->hit.text, terms[t]))
            json_array_append_new(words, json_string(terms[t]));
    loom_str s = LOOM_STR_INIT;
    int name_len = (int)(strchr(uri, '#') ? strchr(uri, '#') - uri : (long)strlen(uri));
    if (h->hit.line_start > 0)
        str_printf(&s, "1 matching passage in %.*s lines %ld-%ld", name_len, uri,
                   h->hit.line_start, h->hit.line_end);
    else
        str_printf(&s, "1 matching passage at %s", uri);
    str_printf(&s, " (summary only: %s may not be quoted)", h->src->id);
    if (json_array_size(words)) {
        str_puts(&s, "; key terms:");
        for (size_t i = 0; i < json_array_size(words); i++)
            str_printf(&s, "%s %s", i ? "," : "", json_string_value(json_array_get(words, i)));
    }
    json_decref(words);
    json_t *o = json_string(s.ptr);
    str_free(&s);
    return o;
}

json_t *evidence_build(evidence_input *in, json_t *citations)
{
    char **terms = fs_query_terms(in->question);
    size_t n = in->n_hits < EVIDENCE_PASSAGES_MAX ? in->n_hits : EVIDENCE_PASSAGES_MAX;
    char now[32];
    clock_iso8601(in->now_ms, now);
    json_t *ids = json_array(), *facts = json_array(), *conflicts = json_array();
    json_t *sources = json_array();
    char (*cids)[20] = n ? xcalloc(n, sizeof *cids) : NULL;
    fact *fv = NULL;
    size_t nf = 0;
    int64_t newest = 0;
    double conf = 0;
    size_t restricted = 0;
    for (size_t i = 0; i < n; i++) {
        evidence_hit *h = &in->hits[i];
        id_new("cit_", 8, cids[i], sizeof cids[i]);
        char *uri = uri_of(in->cwd, h);
        json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:b}", "citation_id", cids[i],
                              "source", h->src->id, "uri", uri, "retrieved_at", now, "trust_tier",
                              h->src->trust_tier, "quotable", h->quotable, "stale", h->stale);
        if (!h->quotable) {
            json_object_set_new(c, "summary", restricted_summary(h, terms, uri));
            restricted++;
        }
        json_array_append_new(citations, c);
        json_array_append_new(ids, json_string(cids[i]));
        free(uri);
        bool seen = false;
        for (size_t s = 0; s < json_array_size(sources) && !seen; s++)
            seen = !strcmp(json_string_value(json_array_get(sources, s)), h->src->id);
        if (!seen)
            json_array_append_new(sources, json_string(h->src->id));
        if (h->hit.mtime_s > newest)
            newest = h->hit.mtime_s;
        double w = coverage(h->hit.text, terms) * tier_weight(h->src->trust_tier);
        conf += h->stale ? w / 2 : w;
        facts_of(h, i, cids[i], terms, &fv, &nf);
    }
    /* Facts: one per key and value; a second value of a key from another
     * file is a conflict. */
    for (size_t i = 0; i < nf; i++) {
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++)
            dup = !strcmp(fv[i].key, fv[j].key) && !strcmp(fv[i].value, fv[j].value);
        if (!dup && fv[i].text && json_array_size(facts) < FACTS_MAX) {
            loom_str t = LOOM_STR_INIT;
            str_printf(&t, "%s [%s]", fv[i].text, fv[i].cid);
            json_array_append_new(facts, json_string(t.ptr));
            str_free(&t);
        }
        for (size_t j = 0; j < i; j++) {
            const evidence_hit *a = &in->hits[fv[j].hit], *b = &in->hits[fv[i].hit];
            if (strcmp(fv[i].key, fv[j].key) || !strcmp(fv[i].value, fv[j].value) ||
                !strcmp(a->hit.path, b->hit.path))
                continue;
            json_t *side[2];
            const fact *fs[2] = {&fv[j], &fv[i]};
            const evidence_hit *hs[2] = {a, b};
            for (int k = 0; k < 2; k++)
                side[k] = json_pack("{s:s, s:s, s:s}", "source", hs[k]->src->id, "citation_id",
                                    fs[k]->cid, "value",
                                    hs[k]->quotable ? fs[k]->value : "(restricted source: differs)");
            /* A key only restricted sources hold is their text: not shown. */
            const char *key = a->quotable || b->quotable ? fv[i].key : "(restricted)";
            json_array_append_new(conflicts, json_pack("{s:s, s:[o,o]}", "key", key, "claims",
                                                       side[0], side[1]));
            break;
        }
    }
    conf = n ? conf / (double)n : 0;
    if (json_array_size(conflicts))
        conf *= 0.7; /* sources disagree: less sure, and the model is told why */
    conf = floor(conf * 100 + 0.5) / 100;
    char fresh[32] = "";
    if (newest)
        clock_iso8601(newest * 1000, fresh), fresh[10] = 0;
    loom_str sum = LOOM_STR_INIT;
    if (!n)
        str_printf(&sum, "No passage of the searched sources matches the question");
    else
        str_printf(&sum, "%zu passage%s from %zu source%s", n, n == 1 ? "" : "s",
                   json_array_size(sources), json_array_size(sources) == 1 ? "" : "s");
    if (restricted)
        str_printf(&sum, "; %zu summarized only (restricted sources)", restricted);
    if (json_array_size(conflicts))
        str_printf(&sum, "; %zu conflict%s between sources", json_array_size(conflicts),
                   json_array_size(conflicts) == 1 ? "" : "s");
    char pid[48];
    id_new("evp_", 0, pid, sizeof pid);
    json_t *searched = json_array(), *skipped = json_array();
    for (size_t i = 0; in->searched && in->searched[i]; i++)
        json_array_append_new(searched, json_string(in->searched[i]));
    for (size_t i = 0; in->not_searched && in->not_searched[i]; i++)
        json_array_append_new(skipped, json_string(in->not_searched[i]));
    json_t *pack = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:f, s:s, s:o, s:o, s:s}",
                             "evidence_pack_id", pid, "question_id", in->question_id, "question",
                             in->question, "summary", sum.ptr, "key_facts", facts, "conflicts",
                             conflicts, "citations", ids, "confidence", conf, "freshness", fresh,
                             "sources", searched, "not_searched", skipped, "created_at", now);
    str_free(&sum);
    for (size_t i = 0; i < nf; i++)
        free(fv[i].key), free(fv[i].value), free(fv[i].text);
    free(fv);
    free(cids);
    json_decref(sources);
    strv_free(terms);
    return pack;
}

static const json_t *cite_of(const json_t *cites, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(cites, i, c) {
        const char *x = json_string_value(json_object_get(c, "citation_id"));
        if (x && id && !strcmp(x, id))
            return c;
    }
    return NULL;
}

static const char *js(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

char *evidence_render(const json_t *pack, const json_t *cites, const evidence_hit *hits, size_t n)
{
    loom_str o = LOOM_STR_INIT;
    str_printf(&o, "Evidence pack %s for %s (confidence %.2f, freshness %s)\nSummary: %s\n",
               js(pack, "evidence_pack_id"), js(pack, "question_id"),
               json_real_value(json_object_get(pack, "confidence")),
               *js(pack, "freshness") ? js(pack, "freshness") : "unknown", js(pack, "summary"));
    size_t i;
    json_t *v;
    json_t *facts = json_object_get(pack, "key_facts");
    if (json_array_size(facts)) {
        str_puts(&o, "Key facts:\n");
        json_array_foreach(facts, i, v) str_printf(&o, "- %s\n", json_string_value(v));
    }
    json_t *conf = json_object_get(pack, "conflicts");
    if (json_array_size(conf)) {
        str_puts(&o, "Conflicts (sources disagree; do not pick one silently):\n");
        json_array_foreach(conf, i, v) {
            json_t *c = json_object_get(v, "claims");
            json_t *a = json_array_get(c, 0), *b = json_array_get(c, 1);
            str_printf(&o, "- %s: \"%s\" in %s [%s] vs \"%s\" in %s [%s]\n", js(v, "key"),
                       js(a, "value"), js(a, "source"), js(a, "citation_id"), js(b, "value"),
                       js(b, "source"), js(b, "citation_id"));
        }
    }
    json_t *ids = json_object_get(pack, "citations");
    if (json_array_size(ids)) {
        str_puts(&o, "Citations:\n");
        json_array_foreach(ids, i, v) {
            const json_t *c = cite_of(cites, json_string_value(v));
            str_printf(&o, "- [%s] %s %s (trust %s%s)\n", json_string_value(v), js(c, "source"),
                       js(c, "uri"), js(c, "trust_tier"),
                       json_is_true(json_object_get(c, "stale")) ? ", stale" : "");
            if (c && !json_is_true(json_object_get(c, "quotable")))
                str_printf(&o, "  %s\n", js(c, "summary"));
            else if (hits && i < n) {
                /* The passage itself, cut short: quotable sources only. */
                const char *t = hits[i].hit.text;
                size_t len = strlen(t) > EXCERPT_MAX ? EXCERPT_MAX : strlen(t);
                while (len && len < strlen(t) && ((unsigned char)t[len] & 0xC0) == 0x80)
                    len--; /* never half a UTF-8 character */
                str_printf(&o, "  > %.*s%s\n", (int)len, t, strlen(t) > len ? "…" : "");
            }
        }
        str_puts(&o, "Cite the ids you rely on in your answer, e.g. [");
        str_printf(&o, "%s].\n", json_string_value(json_array_get(ids, 0)));
    }
    json_t *skip = json_object_get(pack, "not_searched");
    if (json_array_size(skip)) {
        str_puts(&o, "Not searched:");
        json_array_foreach(skip, i, v) str_printf(&o, "%s %s", i ? "," : "", json_string_value(v));
        str_putc(&o, '\n');
    }
    return str_steal(&o);
}

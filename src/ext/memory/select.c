/* select.c — lexical scoring of memory entries (see select.h). Threading:
 * none. */
#include "ext/memory/select.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

#define TERMS_MAX 64  /* a long goal: its first 64 distinct terms count */
#define DAY_MS (24LL * 3600 * 1000)

static const char *const stopwords[] = {
    "the", "and", "for", "with", "that", "this", "from", "into", "are", "was", "were", "you",
    "your", "our", "have", "has", "had", "not", "but", "can", "will", "would", "should",
    "could", "what", "when", "where", "which", "who", "why", "how", "all", "any", "some",
    "there", "here", "then", "than", "them", "they", "its", "out", "use", "using", "please",
    "make", "let", "get", "just", "also", "about", "does", "did", "done", "one", "two", NULL,
};

static bool is_stop(const char *t)
{
    for (size_t i = 0; stopwords[i]; i++)
        if (!strcmp(stopwords[i], t))
            return true;
    return false;
}

static bool word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80;
}

/* The goal's distinct terms, lower case; files (with "/" or a dotted
 * extension) go to files instead, as their last path part. */
static size_t goal_terms(const char *goal, char **terms, size_t cap, char **files,
                         size_t *nfiles)
{
    size_t n = 0;
    *nfiles = 0;
    const char *p = goal ? goal : "";
    while (*p) {
        /* A blank-separated token first: it may be a path. */
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            p++;
        size_t tl = (size_t)(p - start);
        if (!tl)
            continue;
        char *tok = xstrndup(start, tl);
        /* Trim punctuation around it ("`src/a.c`," → src/a.c). */
        size_t a = 0, b = tl;
        while (a < b && !word_byte((unsigned char)tok[a]) && tok[a] != '/' && tok[a] != '.')
            a++;
        while (b > a && !word_byte((unsigned char)tok[b - 1]))
            b--;
        const char *slash = memchr(tok + a, '/', b - a);
        const char *dot = NULL;
        for (size_t i = a; i < b; i++)
            if (tok[i] == '.' && i + 1 < b && i > a)
                dot = tok + i;
        if ((slash || dot) && *nfiles < 8 && b - a < 256) {
            const char *base = tok + a;
            for (const char *q = tok + a; q < tok + b; q++)
                if (*q == '/')
                    base = q + 1;
            if (tok + b - base >= 3)
                files[(*nfiles)++] = xstrndup(base, (size_t)(tok + b - base));
        }
        /* Then its words. */
        size_t i = a;
        while (i < b) {
            while (i < b && !word_byte((unsigned char)tok[i]))
                i++;
            size_t ws = i;
            while (i < b && word_byte((unsigned char)tok[i]))
                i++;
            if (i - ws < 3 || i - ws > 64 || n >= cap)
                continue;
            char *w = xstrndup(tok + ws, i - ws);
            for (char *c = w; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                    *c = (char)(*c - 'A' + 'a');
            bool dup = is_stop(w);
            for (size_t k = 0; k < n && !dup; k++)
                dup = !strcmp(terms[k], w);
            if (dup)
                free(w);
            else
                terms[n++] = w;
        }
        free(tok);
    }
    return n;
}

/* term occurs in text as a whole word, case folded (ASCII). */
static bool has_word(const char *text, const char *term)
{
    size_t tl = strlen(term);
    if (!text || !tl)
        return false;
    for (const char *p = text; *p; p++) {
        if (p != text && word_byte((unsigned char)p[-1]))
            continue;
        size_t i = 0;
        while (i < tl && p[i]) {
            char c = p[i];
            if (c >= 'A' && c <= 'Z')
                c = (char)(c - 'A' + 'a');
            if (c != term[i])
                break;
            i++;
        }
        if (i == tl && !word_byte((unsigned char)p[tl]))
            return true;
    }
    return false;
}

void memory_score(const memory_entry *e, const char *goal, int64_t now_ms, memory_pick *pick)
{
    char *terms[TERMS_MAX], *files[8];
    size_t nfiles = 0;
    size_t n = goal_terms(goal, terms, TERMS_MAX, files, &nfiles);
    pick->terms = json_array();
    double rel = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 0;
        if (has_word(e->name, terms[i]) || has_word(e->description, terms[i]) ||
            has_word(e->slug, terms[i]))
            w = 2;
        else if (has_word(e->body, terms[i]))
            w = 1;
        if (w > 0)
            json_array_append_new(pick->terms, json_string(terms[i]));
        rel += w;
        free(terms[i]);
    }
    for (size_t i = 0; i < nfiles; i++) {
        if ((e->body && strstr(e->body, files[i])) ||
            (e->description && strstr(e->description, files[i]))) {
            rel += 3;
            json_array_append_new(pick->terms, json_string(files[i]));
        }
        free(files[i]);
    }
    int64_t age = now_ms > e->mtime_ms ? now_ms - e->mtime_ms : 0;
    pick->age_days = (int)(age / DAY_MS);
    pick->relevance = rel;
    pick->score = rel + 0.5 * 30.0 / (30.0 + (double)age / (double)DAY_MS);
}

static bool in_skip(const json_t *skip, const char *path)
{
    size_t i;
    json_t *v;
    json_array_foreach(skip, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), path))
            return true;
    return false;
}

size_t memory_select(const memory_entry *v, size_t n, const char *goal, int64_t now_ms,
                     const json_t *skip, size_t max, memory_pick *out)
{
    size_t got = 0;
    for (size_t i = 0; i < n && max > 0; i++) {
        if (skip && in_skip(skip, v[i].path))
            continue;
        memory_pick p = {.index = i};
        memory_score(&v[i], goal, now_ms, &p);
        if (p.relevance < MEMORY_SELECT_MIN) {
            json_decref(p.terms);
            continue;
        }
        /* Insert in order: score down, then newer first. */
        size_t at = got;
        while (at > 0 && (out[at - 1].score < p.score ||
                          (out[at - 1].score == p.score &&
                           v[out[at - 1].index].mtime_ms < v[i].mtime_ms)))
            at--;
        if (at >= max) {
            json_decref(p.terms);
            continue;
        }
        if (got == max) {
            json_decref(out[max - 1].terms);
            got--;
        }
        memmove(out + at + 1, out + at, (got - at) * sizeof *out);
        out[at] = p;
        got++;
    }
    return got;
}

void memory_picks_free(memory_pick *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(p[i].terms);
        p[i].terms = NULL;
    }
}

char *memory_pick_why(const memory_pick *p)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "matched: ");
    size_t i;
    json_t *t;
    json_array_foreach(p->terms, i, t)
        str_printf(&s, "%s%s", i ? ", " : "", json_string_value(t));
    if (!json_array_size(p->terms))
        str_puts(&s, "no term"); /* a model selector's pick */
    if (p->age_days == 0)
        str_puts(&s, "; today");
    else
        str_printf(&s, "; %d day%s old", p->age_days, p->age_days == 1 ? "" : "s");
    return str_steal(&s);
}

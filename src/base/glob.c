/* glob.c — the one glob (glob.h has the syntax): segments, whole paths with
 * "**", '*'-only patterns, brace expansion. It was three engines — the
 * permission rules', the Glob tool's walk and the hooks' conditions —
 * until issue #11 folded them here. Pure; any thread. */
#include "base/glob.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

/* ---- one segment ---------------------------------------------------------- */

/* A bracket expression at p[0..pn) (just after '[') against byte c. Returns
 * the number of pattern bytes it spans after '[' including ']', with *hit
 * set, or 0 when it is unterminated (the '[' is then a literal). */
static size_t match_class(const char *p, size_t pn, unsigned char c, bool *hit)
{
    size_t i = 0;
    bool negate = false;
    if (i < pn && (p[i] == '!' || p[i] == '^')) {
        negate = true;
        i++;
    }
    bool in = false, first = true;
    while (i < pn && (p[i] != ']' || first)) {
        first = false;
        unsigned char lo = (unsigned char)p[i];
        if (lo == '\\' && i + 1 < pn)
            lo = (unsigned char)p[++i];
        i++;
        unsigned char hi = lo;
        if (i + 1 < pn && p[i] == '-' && p[i + 1] != ']') {
            i++;
            hi = (unsigned char)p[i];
            if (hi == '\\' && i + 1 < pn)
                hi = (unsigned char)p[++i];
            i++;
        }
        if (c >= lo && c <= hi)
            in = true;
    }
    if (i >= pn)
        return 0;
    *hit = in != negate;
    return i + 1;
}

/* The classic single-backtrack loop: on a mismatch after a '*', retry with
 * the star swallowing one more byte. Never exponential. */
bool glob_segment_match(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        if (pi < pn) {
            char pc = p[pi];
            if (pc == '*') {
                while (pi < pn && p[pi] == '*')
                    pi++;
                star_p = pi;
                star_s = si;
                continue;
            }
            bool ok;
            size_t adv = 1;
            if (pc == '?') {
                ok = true;
            } else if (pc == '[') {
                bool hit = false;
                size_t span = match_class(p + pi + 1, pn - pi - 1, (unsigned char)s[si], &hit);
                if (span) {
                    ok = hit;
                    adv = 1 + span;
                } else {
                    ok = s[si] == '['; /* no closing ]: a plain '[' */
                }
            } else if (pc == '\\' && pi + 1 < pn) {
                ok = p[pi + 1] == s[si];
                adv = 2;
            } else {
                ok = pc == s[si];
            }
            if (ok) {
                pi += adv;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

/* ---- whole paths ---------------------------------------------------------- */

typedef struct {
    const char *ptr;
    size_t len;
} span;

/* Components kept on the stack up to this many; deeper paths allocate. */
#define GLOB_STACK_SPANS 64
#define GLOB_STACK_MEMO 2048

/* Splits at '/', dropping empty components; in a pattern (escapes) a '\'
 * takes the next byte with it. *out is spans (caller's, of cap) or a new
 * allocation the caller frees when it is not spans. */
static size_t split(const char *s, bool escapes, span *spans, size_t cap, span **out)
{
    size_t n = 0;
    *out = spans;
    while (*s) {
        while (*s == '/')
            s++;
        if (!*s)
            break;
        const char *start = s;
        while (*s && *s != '/') {
            if (escapes && *s == '\\' && s[1])
                s++;
            s++;
        }
        if (n == cap) {
            span *bigger = xmalloc(cap * 2 * sizeof *bigger);
            memcpy(bigger, *out, n * sizeof *bigger);
            if (*out != spans)
                free(*out);
            *out = bigger;
            cap *= 2;
        }
        (*out)[n++] = (span){start, (size_t)(s - start)};
    }
    return n;
}

static bool is_globstar(span c)
{
    return c.len == 2 && c.ptr[0] == '*' && c.ptr[1] == '*';
}

typedef struct {
    const span *pc, *sc;
    size_t np, ns;
    bool covers;          /* gitignore: a matched directory covers its inside */
    unsigned char *memo;  /* (np+1)*(ns+1): 0 unknown, 1 yes, 2 no; NULL
                             with at most one "**", which cannot repeat work */
} path_match;

/* Pattern components i.. against path components j..; memoized, so many
 * "**" never make it exponential. */
static bool match_from(const path_match *m, size_t i, size_t j)
{
    unsigned char dummy = 0;
    unsigned char *slot = m->memo ? &m->memo[i * (m->ns + 1) + j] : &dummy;
    if (*slot)
        return *slot == 1;
    bool r;
    if (i == m->np)
        r = m->covers || j == m->ns;
    else if (is_globstar(m->pc[i]))
        r = i + 1 == m->np && !m->covers
                ? j < m->ns /* a trailing ** is "everything inside": at least one */
                : match_from(m, i + 1, j) || (j < m->ns && match_from(m, i, j + 1));
    else
        r = j < m->ns &&
            glob_segment_match(m->pc[i].ptr, m->pc[i].len, m->sc[j].ptr, m->sc[j].len) &&
            match_from(m, i + 1, j + 1);
    *slot = r ? 1 : 2;
    return r;
}

static bool path_match_run(const char *pattern, const char *path, bool covers)
{
    span pbuf[GLOB_STACK_SPANS], sbuf[GLOB_STACK_SPANS];
    span *pc, *sc;
    size_t np = split(pattern, true, pbuf, GLOB_STACK_SPANS, &pc);
    size_t ns = split(path, false, sbuf, GLOB_STACK_SPANS, &sc);
    size_t stars = 0;
    for (size_t i = 0; i < np; i++)
        stars += is_globstar(pc[i]);
    unsigned char mbuf[GLOB_STACK_MEMO];
    size_t cells = (np + 1) * (ns + 1);
    unsigned char *memo = NULL;
    if (stars > 1) {
        memo = cells <= sizeof mbuf ? mbuf : xmalloc(cells);
        memset(memo, 0, cells);
    }
    path_match m = {pc, sc, np, ns, covers, memo};
    bool r = match_from(&m, 0, 0);
    if (memo && memo != mbuf)
        free(memo);
    if (pc != pbuf)
        free(pc);
    if (sc != sbuf)
        free(sc);
    return r;
}

bool glob_path_match(const char *pattern, const char *path)
{
    return path_match_run(pattern, path, false);
}

bool glob_path_covers(const char *pattern, const char *path)
{
    return path_match_run(pattern, path, true);
}

/* ---- '*'-only patterns ---------------------------------------------------- */

bool glob_star_match(const char *p, const char *s, bool cross_slash)
{
    if (cross_slash) {
        /* Linear: one backtrack point, like glob_segment_match. */
        const char *star = NULL, *ss = NULL;
        while (*s) {
            if (*p == '*') {
                star = ++p;
                ss = s;
            } else if (*p == *s) {
                p++;
                s++;
            } else if (star) {
                p = star;
                s = ++ss;
            } else {
                return false;
            }
        }
        while (*p == '*')
            p++;
        return !*p;
    }
    /* Two kinds of star: recursion, which the short patterns of the hook
     * conditions this mode was written for keep cheap. */
    while (*p) {
        if (*p == '*') {
            bool dbl = p[1] == '*';
            const char *rest = p + (dbl ? 2 : 1);
            /* "**" followed by '/' may also match no directory at all, so
             * "src/<globstar>/x.c" accepts "src/x.c". */
            if (dbl && *rest == '/' && glob_star_match(rest + 1, s, false))
                return true;
            for (const char *t = s;; t++) {
                if (glob_star_match(rest, t, false))
                    return true;
                if (!*t || (!dbl && *t == '/'))
                    return false;
            }
        }
        if (*p != *s)
            return false;
        p++;
        s++;
    }
    return *s == '\0';
}

bool glob_star_prefix(const char *p, const char *s)
{
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*p == '*') {
            star = ++p;
            ss = s;
        } else if (*p && *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star;
            s = ++ss;
        } else {
            return false;
        }
    }
    return true;
}

/* ---- brace expansion ------------------------------------------------------ */

#define GLOB_MAX_EXPANSIONS 1024

typedef struct {
    char **items;
    size_t n, cap;
} strlist;

static void strlist_push(strlist *l, char *s)
{
    if (l->n + 2 > l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->items = xrealloc(l->items, l->cap * sizeof *l->items);
    }
    l->items[l->n++] = s;
    l->items[l->n] = NULL;
}

static void expand_into(const char *pat, strlist *out)
{
    if (out->n >= GLOB_MAX_EXPANSIONS)
        return;
    size_t len = strlen(pat);
    for (size_t i = 0; i < len; i++) {
        if (pat[i] == '\\') {
            i++;
            continue;
        }
        if (pat[i] != '{')
            continue;
        /* Find the matching close and the commas at this brace's level. */
        size_t depth = 0, close = len;
        size_t commas[GLOB_MAX_EXPANSIONS];
        size_t ncomma = 0;
        for (size_t j = i; j < len; j++) {
            if (pat[j] == '\\') {
                j++;
            } else if (pat[j] == '{') {
                depth++;
            } else if (pat[j] == '}') {
                if (--depth == 0) {
                    close = j;
                    break;
                }
            } else if (pat[j] == ',' && depth == 1 && ncomma < GLOB_MAX_EXPANSIONS) {
                commas[ncomma++] = j;
            }
        }
        if (close == len)
            return (void)strlist_push(out, xstrdup(pat)); /* unbalanced: literal */
        if (ncomma == 0)
            continue; /* "{x}" is literal; inner groups are found later */
        size_t start = i + 1;
        for (size_t k = 0; k <= ncomma; k++) {
            size_t end = k < ncomma ? commas[k] : close;
            loom_str alt = LOOM_STR_INIT;
            str_append(&alt, pat, i);
            str_append(&alt, pat + start, end - start);
            str_puts(&alt, pat + close + 1);
            expand_into(str_cstr(&alt), out);
            str_free(&alt);
            start = end + 1;
        }
        return;
    }
    strlist_push(out, xstrdup(pat));
}

char **glob_expand_braces(const char *pattern)
{
    strlist out = {0};
    expand_into(pattern, &out);
    if (!out.items)
        strlist_push(&out, xstrdup(pattern));
    return out.items;
}

void glob_free_list(char **list)
{
    if (!list)
        return;
    for (char **p = list; *p; p++)
        free(*p);
    free(list);
}

bool glob_has_magic(const char *s)
{
    return strpbrk(s, "*?[{\\") != NULL;
}

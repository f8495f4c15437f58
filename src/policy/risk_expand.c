/* risk_expand.c — brace expansion of a parsed simple command's words, the
 * way the shell does it before anything else and without looking at the
 * disk (risk_expand.h). Shared by the risk rules (risk.c) and the
 * write-target rules (risk_writes.c).
 *
 * Bounded on hostile input: a word expands to at most RW_MAX_BRACE words,
 * and longer words than RW_MAX_EXPAND_LEN are not expanded; either way the
 * word is then kept as written, braces and all, so it reads as a glob —
 * vague, never allowed unseen. Stateless and reentrant.
 */
#include "policy/risk_expand.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

/* Brace expansion stops at this many words per word; beyond it the word is
 * reported unexpanded as well (it still holds '{', so it reads as a glob). */
#define RW_MAX_BRACE 64
/* Longer words are not brace-expanded (bounds the work on hostile input);
 * they keep their braces, so they read as globs: vague, never allowed
 * unseen. */
#define RW_MAX_EXPAND_LEN 1024

static void words_push(risk_words *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

void risk_words_free(risk_words *l)
{
    for (size_t k = 0; k < l->n; k++)
        free(l->v[k]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static char *concat3(const char *a, const char *b, const char *c)
{
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char *s = xmalloc(na + nb + nc + 1);
    memcpy(s, a, na);
    memcpy(s + na, b, nb);
    memcpy(s + na + nb, c, nc + 1);
    return s;
}

/* ---- brace expansion ------------------------------------------------- */

/* The '}' closing the '{' at w[i], or 0; *comma tells whether a top-level
 * ',' lies between (else it may be a sequence {a..b}). */
static size_t brace_close(const char *w, size_t i, bool *comma)
{
    int depth = 0;
    *comma = false;
    for (size_t k = i; w[k]; k++) {
        if (w[k] == '\\' && w[k + 1]) {
            k++;
            continue;
        }
        if (w[k] == '{')
            depth++;
        else if (w[k] == '}' && --depth == 0)
            return k;
        else if (w[k] == ',' && depth == 1)
            *comma = true;
    }
    return 0;
}

static void brace_expand(const char *w, risk_words *out, size_t *budget);

/* {a..e} and {1..10}: the alternatives of a sequence, or false. */
static bool brace_sequence(const char *in, size_t len, risk_words *alts)
{
    char buf[64];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, in, len);
    buf[len] = '\0';
    char *dots = strstr(buf, "..");
    if (!dots)
        return false;
    *dots = '\0';
    const char *a = buf, *b = dots + 2;   /* a step ({1..9..2}) is ignored: every value counts */
    char *bend;
    char *aend;
    long x = strtol(a, &aend, 10), y = strtol(b, &bend, 10);
    if (*a && !*aend && *b && (!*bend || *bend == '.')) {
        long step = x <= y ? 1 : -1;
        for (long k = x, n = 0; n < RW_MAX_BRACE; k += step, n++) {
            char num[32];
            snprintf(num, sizeof num, "%ld", k);
            words_push(alts, xstrdup(num));
            if (k == y)
                break;
        }
        return true;
    }
    if (strlen(a) == 1 && (strlen(b) == 1 || b[1] == '.')) {
        int step = a[0] <= b[0] ? 1 : -1;
        for (int k = a[0]; ; k += step) {
            char ch[2] = {(char)k, 0};
            words_push(alts, xstrdup(ch));
            if (k == b[0])
                break;
        }
        return true;
    }
    return false;
}

static void brace_expand(const char *w, risk_words *out, size_t *budget)
{
    for (size_t i = 0; w[i]; i++) {
        if (w[i] == '\\' && w[i + 1]) {
            i++;
            continue;
        }
        if (w[i] != '{' || (i > 0 && w[i - 1] == '$'))
            continue;
        bool comma;
        size_t j = brace_close(w, i, &comma);
        if (!j)
            continue;
        risk_words alts = {0};
        if (comma) {
            int depth = 0;
            size_t from = i + 1;
            for (size_t k = i + 1; k <= j; k++) {
                if (w[k] == '\\' && k + 1 < j) {
                    k++;
                    continue;
                }
                if (w[k] == '{')
                    depth++;
                else if (w[k] == '}' && depth > 0)
                    depth--;
                else if ((w[k] == ',' && depth == 0) || k == j) {
                    char *alt = xmalloc(k - from + 1);
                    memcpy(alt, w + from, k - from);
                    alt[k - from] = '\0';
                    words_push(&alts, alt);
                    from = k + 1;
                }
            }
        } else if (!brace_sequence(w + i + 1, j - i - 1, &alts)) {
            risk_words_free(&alts);
            continue;
        }
        char *pre = xmalloc(i + 1);
        memcpy(pre, w, i);
        pre[i] = '\0';
        for (size_t a = 0; a < alts.n; a++) {
            if (*budget == 0)
                break;
            char *word = concat3(pre, alts.v[a], w + j + 1);
            brace_expand(word, out, budget);
            free(word);
        }
        free(pre);
        risk_words_free(&alts);
        return;
    }
    if (*budget == 0)
        return;
    (*budget)--;
    if (*w)   /* an empty unquoted word disappears */
        words_push(out, xstrdup(w));
}

/* Expands one word: into out, or the word itself when nothing expands (or
 * the budget runs out, then also the original, which still reads vague). */
void risk_expand_word(const char *w, unsigned flags, risk_words *out)
{
    if (!(flags & BASH_WORD_GLOB) || !strchr(w, '{') || strlen(w) > RW_MAX_EXPAND_LEN) {
        words_push(out, xstrdup(w));
        return;
    }
    size_t budget = RW_MAX_BRACE;
    size_t before = out->n;
    brace_expand(w, out, &budget);
    if (budget == 0 || out->n == before)
        words_push(out, xstrdup(w));
}

void risk_expand_cmd(const bash_cmd *c, risk_expanded *x)
{
    memset(x, 0, sizeof *x);
    x->cmd = *c;
    bool any = false;
    for (size_t i = 0; i < c->argc && !any; i++)
        any = (c->argv_flags[i] & BASH_WORD_GLOB) && strchr(c->argv[i], '{');
    if (!any)
        return;
    risk_words words = {0};
    size_t *origin = NULL;
    for (size_t i = 0; i < c->argc; i++) {
        size_t before = words.n;
        risk_expand_word(c->argv[i], c->argv_flags[i], &words);
        origin = xrealloc(origin, (words.n + 1) * sizeof *origin);
        for (size_t k = before; k < words.n; k++)
            origin[k] = i;
    }
    x->argv = xcalloc(words.n + 1, sizeof *x->argv);
    x->flags = xcalloc(words.n + 1, sizeof *x->flags);
    for (size_t k = 0; k < words.n; k++) {
        x->argv[k] = words.v[k];
        x->flags[k] = c->argv_flags[origin[k]];
    }
    free(origin);
    x->words = words.v;
    x->nwords = words.n;
    x->cap = words.cap;
    x->cmd.argc = words.n;
    x->cmd.argv = x->argv;
    x->cmd.argv_flags = x->flags;
}

void risk_expanded_free(risk_expanded *x)
{
    risk_words l = {x->words, x->nwords, x->cap};
    risk_words_free(&l);
    free(x->argv);
    free(x->flags);
    memset(x, 0, sizeof *x);
}

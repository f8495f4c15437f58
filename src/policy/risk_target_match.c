/* risk_target_match.c — could a write target that holds a glob (a
 * pseudo-target such as DIR then "**", or a word the shell would expand) be a
 * given file, or meet a rule's path pattern? (risk_target_could_match in
 * risk.h.) Both sides may hold globs; the answer errs towards yes, so a
 * vague target never slips past a deny rule. Stateless and reentrant.
 */
#include "policy/risk.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/glob.h"
#include "base/str.h"

typedef struct segv {
    const char *s[128];
    size_t len[128];
    size_t n;
    bool overflow;
} segv;

static void split_path(const char *p, segv *v)
{
    v->n = 0;
    v->overflow = false;
    while (*p) {
        while (*p == '/')
            p++;
        size_t len = strcspn(p, "/");
        if (!len)
            break;
        if (v->n == 128) {
            v->overflow = true;
            return;
        }
        v->s[v->n] = p;
        v->len[v->n++] = len;
        p += len;
    }
}

static bool seg_has_glob(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
            return true;
    return false;
}

/* Matches the shell's way for one segment: * ? [set] \x, and a leading
 * '.' only by a literal '.' (no dotglob). */
static bool seg_glob(const char *p, size_t pn, const char *s, size_t sn, bool first)
{
    if (first && sn && s[0] == '.' && !(pn && p[0] == '.'))
        return false;
    return glob_segment_match(p, pn, s, sn);
}

/* Could one segment of the target (a) and one of the rule (b) name the
 * same file name? Exact when at most one holds a wildcard; when both do,
 * their literal heads and tails must agree (an over-estimate, which errs
 * towards the rule applying). */
static bool seg_meet(const char *a, size_t an, const char *b, size_t bn)
{
    bool ga = seg_has_glob(a, an), gb = seg_has_glob(b, bn);
    if (!ga && !gb)
        return an == bn && !memcmp(a, b, an);
    if (ga && !gb)
        return seg_glob(a, an, b, bn, true);
    if (!ga && gb)
        return seg_glob(b, bn, a, an, false);
    size_t ha = strcspn(a, "*?[\\"), hb = strcspn(b, "*?[\\");
    if (ha > an)
        ha = an;
    if (hb > bn)
        hb = bn;
    size_t h = ha < hb ? ha : hb;
    if (memcmp(a, b, h))
        return false;
    size_t ta = 0, tb = 0;
    while (ta < an && !strchr("*?]\\", a[an - 1 - ta]))
        ta++;
    while (tb < bn && !strchr("*?]\\", b[bn - 1 - tb]))
        tb++;
    size_t t = ta < tb ? ta : tb;
    return !memcmp(a + an - t, b + bn - t, t);
}

static bool segs_meet(const segv *a, size_t i, const segv *b, size_t j, unsigned char *memo)
{
    unsigned char *m = &memo[i * (b->n + 1) + j];
    if (*m)
        return *m == 1;
    bool r;
    if (j < b->n && b->len[j] == 2 && !memcmp(b->s[j], "**", 2))
        r = segs_meet(a, i, b, j + 1, memo) || (i < a->n && segs_meet(a, i + 1, b, j, memo));
    else if (i < a->n && a->len[i] == 2 && !memcmp(a->s[i], "**", 2))
        r = segs_meet(a, i + 1, b, j, memo) || (j < b->n && segs_meet(a, i, b, j + 1, memo));
    else if (i == a->n || j == b->n)
        r = i == a->n && j == b->n;
    else
        r = seg_meet(a->s[i], a->len[i], b->s[j], b->len[j]) &&
            segs_meet(a, i + 1, b, j + 1, memo);
    *m = r ? 1 : 2;
    return r;
}

bool risk_target_could_match(const char *target, const char *pattern)
{
    if (!target || !pattern)
        return false;
    segv *a = xmalloc(sizeof *a), *b = xmalloc(sizeof *b);
    split_path(target, a);
    split_path(pattern, b);
    bool r = true;   /* too deep to tell: it could */
    if (!a->overflow && !b->overflow) {
        unsigned char *memo = xcalloc((a->n + 1) * (b->n + 1), 1);
        r = segs_meet(a, 0, b, 0, memo);
        free(memo);
    }
    free(a);
    free(b);
    return r;
}

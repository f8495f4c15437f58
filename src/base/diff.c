/* diff.c — the line diff of diff.h: split both texts into lines (hashed, so
 * most comparisons are one integer), set the common head and tail aside,
 * run Myers' greedy forward search over what is left keeping each round's
 * furthest-reaching diagonals for the walk back, then group the script into
 * hunks. Owns nothing past the result it fills; any thread. */
#include "base/diff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/str.h"

typedef struct lines {
    const char **s;
    size_t *n;
    uint64_t *h;
    size_t count;
} lines;

static void split(const char *t, size_t len, lines *L)
{
    memset(L, 0, sizeof *L);
    size_t cap = 0;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(t + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - t) : len;
        if (L->count == cap) {
            cap = cap ? cap * 2 : 64;
            L->s = xrealloc(L->s, cap * sizeof *L->s);
            L->n = xrealloc(L->n, cap * sizeof *L->n);
            L->h = xrealloc(L->h, cap * sizeof *L->h);
        }
        L->s[L->count] = t + i;
        L->n[L->count] = end - i;
        L->h[L->count] = hash_fnv1a64(0, t + i, end - i);
        L->count++;
        i = end + 1;
    }
}

static void lines_free(lines *L)
{
    free(L->s);
    free(L->n);
    free(L->h);
}

static bool same(const lines *A, size_t i, const lines *B, size_t j)
{
    return A->h[i] == B->h[j] && A->n[i] == B->n[j] && !memcmp(A->s[i], B->s[j], A->n[i]);
}

typedef struct script {
    diff_line *v;
    size_t n, cap;
} script;

static void emit(script *sc, char op, const char *s, size_t n)
{
    if (sc->n == sc->cap) {
        sc->cap = sc->cap ? sc->cap * 2 : 64;
        sc->v = xrealloc(sc->v, sc->cap * sizeof *sc->v);
    }
    sc->v[sc->n++] = (diff_line){.op = op, .s = s, .n = n};
}

/* The middle A[a0..a1) against B[b0..b1), appended to sc in order. */
static void middle(const lines *A, size_t a0, size_t a1, const lines *B, size_t b0, size_t b1,
                   script *sc, bool *gave_up)
{
    long N = (long)(a1 - a0), M = (long)(b1 - b0);
    long max = N + M < DIFF_MAX_EDITS ? N + M : DIFF_MAX_EDITS;
    /* trace[d] holds x for diagonals k = -d..d (index k + d). */
    long **trace = xcalloc((size_t)max + 1, sizeof *trace);
    long D = -1;
    for (long d = 0; d <= max && D < 0; d++) {
        long *v = xcalloc((size_t)(2 * d + 1), sizeof *v);
        const long *prev = d ? trace[d - 1] : NULL;
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (d == 0)
                x = 0;
            else if (k == -d || (k != d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1]))
                x = prev[k + 1 + d - 1];
            else
                x = prev[k - 1 + d - 1] + 1;
            long y = x - k;
            while (x < N && y < M && same(A, a0 + (size_t)x, B, b0 + (size_t)y))
                x++, y++;
            v[k + d] = x;
            if (x >= N && y >= M) {
                D = d;
                break;
            }
        }
        trace[d] = v;
    }
    if (D < 0) {
        /* Too many differences: the rest is removed, then added. */
        *gave_up = true;
        for (size_t i = a0; i < a1; i++)
            emit(sc, '-', A->s[i], A->n[i]);
        for (size_t j = b0; j < b1; j++)
            emit(sc, '+', B->s[j], B->n[j]);
    } else {
        /* Walk back from (N, M), collecting the script in reverse. */
        script rev = {0};
        long x = N, y = M;
        for (long d = D; d > 0; d--) {
            const long *prev = trace[d - 1];
            long k = x - y;
            bool down = k == -d || (k != d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1]);
            long pk = down ? k + 1 : k - 1;
            long px = prev[pk + d - 1], py = px - pk;
            long sx = down ? px : px + 1; /* where the snake after the edit starts */
            while (x > sx) {
                x--, y--;
                emit(&rev, ' ', A->s[a0 + (size_t)x], A->n[a0 + (size_t)x]);
            }
            if (down)
                emit(&rev, '+', B->s[b0 + (size_t)py], B->n[b0 + (size_t)py]);
            else
                emit(&rev, '-', A->s[a0 + (size_t)px], A->n[a0 + (size_t)px]);
            x = px, y = py;
        }
        while (x > 0) {
            x--, y--;
            emit(&rev, ' ', A->s[a0 + (size_t)x], A->n[a0 + (size_t)x]);
        }
        for (size_t i = rev.n; i > 0; i--)
            emit(sc, rev.v[i - 1].op, rev.v[i - 1].s, rev.v[i - 1].n);
        free(rev.v);
    }
    for (long d = 0; d <= max; d++)
        free(trace[d]);
    free(trace);
}

static void add_hunk(diff_result *d, size_t from, size_t to)
{
    d->hunks = xrealloc(d->hunks, (d->n_hunks + 1) * sizeof *d->hunks);
    diff_hunk *h = &d->hunks[d->n_hunks++];
    memset(h, 0, sizeof *h);
    h->first = from;
    h->count = to - from;
    long old_before = 0, new_before = 0;
    /* Lines of each text before the hunk: the numbers of its first line. */
    for (size_t i = from; i-- > 0;) {
        if (!old_before && d->lines[i].old_no)
            old_before = d->lines[i].old_no;
        if (!new_before && d->lines[i].new_no)
            new_before = d->lines[i].new_no;
        if (old_before && new_before)
            break;
    }
    for (size_t i = from; i < to; i++) {
        h->old_lines += d->lines[i].op != '+';
        h->new_lines += d->lines[i].op != '-';
    }
    /* Unified-diff convention: an empty side names the line before it. */
    h->old_start = h->old_lines ? old_before + 1 : old_before;
    h->new_start = h->new_lines ? new_before + 1 : new_before;
}

void diff_texts(const char *a, size_t an, const char *b, size_t bn, int context,
                diff_result *out)
{
    memset(out, 0, sizeof *out);
    if (context < 0)
        context = 0;
    lines A, B;
    split(a ? a : "", a ? an : 0, &A);
    split(b ? b : "", b ? bn : 0, &B);
    size_t head = 0;
    while (head < A.count && head < B.count && same(&A, head, &B, head))
        head++;
    size_t tail = 0;
    while (tail < A.count - head && tail < B.count - head &&
           same(&A, A.count - 1 - tail, &B, B.count - 1 - tail))
        tail++;
    script sc = {0};
    for (size_t i = 0; i < head; i++)
        emit(&sc, ' ', A.s[i], A.n[i]);
    middle(&A, head, A.count - tail, &B, head, B.count - tail, &sc, &out->gave_up);
    for (size_t i = A.count - tail; i < A.count; i++)
        emit(&sc, ' ', A.s[i], A.n[i]);
    long on = 0, nn = 0;
    for (size_t i = 0; i < sc.n; i++) {
        diff_line *l = &sc.v[i];
        if (l->op != '+')
            l->old_no = ++on;
        if (l->op != '-')
            l->new_no = ++nn;
        out->added += l->op == '+';
        out->removed += l->op == '-';
    }
    out->lines = sc.v;
    out->n_lines = sc.n;
    /* Hunks: each change with `context` lines either side; changes closer
     * than twice that share one hunk. */
    size_t i = 0, ctx = (size_t)context;
    while (i < sc.n) {
        while (i < sc.n && sc.v[i].op == ' ')
            i++;
        if (i == sc.n)
            break;
        size_t from = i > ctx ? i - ctx : 0;
        size_t last = i; /* the last changed line of the hunk */
        for (size_t j = i; j < sc.n; j++) {
            if (sc.v[j].op == ' ')
                continue;
            if (j - last > 2 * ctx + 1 && j != i)
                break;
            last = j;
        }
        size_t to = last + 1 + ctx < sc.n ? last + 1 + ctx : sc.n;
        add_hunk(out, from, to);
        i = last + 1;
    }
    lines_free(&A);
    lines_free(&B);
}

void diff_result_free(diff_result *d)
{
    free(d->lines);
    free(d->hunks);
    memset(d, 0, sizeof *d);
}

json_t *diff_structured_patch(const diff_result *d, size_t max_lines)
{
    size_t total = 0;
    for (size_t h = 0; h < d->n_hunks; h++)
        total += d->hunks[h].count;
    if (max_lines > 0 && total > max_lines)
        return NULL;
    json_t *arr = json_array();
    loom_str line = LOOM_STR_INIT;
    for (size_t h = 0; h < d->n_hunks; h++) {
        const diff_hunk *k = &d->hunks[h];
        json_t *ls = json_array();
        for (size_t i = k->first; i < k->first + k->count; i++) {
            str_clear(&line);
            str_putc(&line, d->lines[i].op);
            str_append(&line, d->lines[i].s, d->lines[i].n);
            json_t *s = json_stringn(line.ptr, line.len);
            /* A line that is not UTF-8 cannot be a JSON string: its bytes
             * outside ASCII are shown as '?'. */
            if (!s) {
                for (size_t c = 1; c < line.len; c++)
                    if ((unsigned char)line.ptr[c] >= 0x80)
                        line.ptr[c] = '?';
                s = json_stringn(line.ptr, line.len);
            }
            json_array_append_new(ls, s ? s : json_string("?"));
        }
        json_array_append_new(arr, json_pack("{s:I,s:I,s:I,s:I,s:o}", "oldStart",
                                             (json_int_t)k->old_start, "oldLines",
                                             (json_int_t)k->old_lines, "newStart",
                                             (json_int_t)k->new_start, "newLines",
                                             (json_int_t)k->new_lines, "lines", ls));
    }
    str_free(&line);
    return arr;
}

long diff_count_lines(const char *s, size_t n)
{
    long count = 0;
    for (size_t i = 0; i < n; i++)
        count += s[i] == '\n';
    return count + (n > 0 && s[n - 1] != '\n');
}

static void unified_range(loom_str *out, long start, long count)
{
    /* An empty range already names the line before it (diff_hunk). */
    if (count == 1)
        str_printf(out, "%ld", start);
    else
        str_printf(out, "%ld,%ld", start, count);
}

void diff_unified_text(const diff_result *d, long a_lines, bool a_nl, long b_lines, bool b_nl,
                       loom_str *out)
{
    for (size_t h = 0; h < d->n_hunks; h++) {
        const diff_hunk *k = &d->hunks[h];
        str_puts(out, "@@ -");
        unified_range(out, k->old_start, k->old_lines);
        str_puts(out, " +");
        unified_range(out, k->new_start, k->new_lines);
        str_puts(out, " @@\n");
        for (size_t i = k->first; i < k->first + k->count; i++) {
            const diff_line *l = &d->lines[i];
            str_putc(out, l->op);
            str_append(out, l->s, l->n);
            str_putc(out, '\n');
            bool last_a = l->op != '+' && l->old_no == a_lines && !a_nl;
            bool last_b = l->op != '-' && l->new_no == b_lines && !b_nl;
            if (last_a || last_b)
                str_puts(out, "\\ No newline at end of file\n");
        }
    }
}

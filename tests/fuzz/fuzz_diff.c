/* fuzz_diff.c — libFuzzer target for the line diff (src/base/diff.c): the
 * input, split at its first NUL (or its middle), is the old and the new
 * text. Whatever they hold, the script's '-' and ' ' lines are the old
 * text's lines in order, its '+' and ' ' lines the new text's, the hunks
 * lie inside the script, and the structuredPatch is built. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/diff.h"
#include "base/str.h"

/* The text's lines joined back with '\n', to compare with a rebuilt one. */
static void rebuild(const diff_result *d, char skip, loom_str *out)
{
    for (size_t i = 0; i < d->n_lines; i++) {
        if (d->lines[i].op == skip)
            continue;
        str_append(out, d->lines[i].s, d->lines[i].n);
        str_putc(out, '\n');
    }
}

static void same_lines(const char *t, size_t n, const loom_str *got)
{
    loom_str want = LOOM_STR_INIT;
    str_append(&want, t, n);
    if (n && t[n - 1] != '\n')
        str_putc(&want, '\n');
    if (want.len != got->len || (want.len && memcmp(want.ptr, got->ptr, want.len)))
        abort();
    str_free(&want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nul = memchr(s, '\0', size);
    size_t an = nul ? (size_t)(nul - s) : size / 2;
    const char *b = nul ? nul + 1 : s + an;
    size_t bn = size - (size_t)(b - s);
    diff_result d;
    diff_texts(s, an, b, bn, (int)(size % 5), &d);
    loom_str old = LOOM_STR_INIT, neu = LOOM_STR_INIT;
    rebuild(&d, '+', &old);
    rebuild(&d, '-', &neu);
    same_lines(s, an, &old);
    same_lines(b, bn, &neu);
    for (size_t h = 0; h < d.n_hunks; h++)
        if (d.hunks[h].first + d.hunks[h].count > d.n_lines || !d.hunks[h].count)
            abort();
    json_t *p = diff_structured_patch(&d, 0);
    if (!p)
        abort();
    json_decref(p);
    str_free(&old);
    str_free(&neu);
    diff_result_free(&d);
    return 0;
}

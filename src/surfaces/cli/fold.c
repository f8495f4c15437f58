/* fold.c — the kept folded results of fold.h: a ring of FOLD_KEEP copies,
 * newest last, and the two ways to see one whole (Ctrl-O, /expand).
 * Main thread only; nothing here blocks. */
#include "surfaces/cli/fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/cli/repl.h"

typedef struct kept {
    char *title;
    char *body;
} kept;

static kept ring[FOLD_KEEP];
static size_t n_kept;     /* how many of ring are in use */
static size_t next_slot;  /* where the next one goes */
static size_t key_depth;  /* Ctrl-O presses in a row */
static size_t key_seen;   /* fold count when the presses began */

size_t fold_push(const char *title, const char *body, size_t n)
{
    kept *k = &ring[next_slot];
    free(k->title);
    free(k->body);
    size_t keep = n < FOLD_MAX_BYTES ? n : FOLD_MAX_BYTES;
    /* Cut at a line's end, so no escape or character is cut in half. */
    if (keep < n) {
        while (keep > 0 && body[keep - 1] != '\n')
            keep--;
    }
    k->title = xstrdup(title ? title : "");
    k->body = xstrndup(body, keep);
    next_slot = (next_slot + 1) % FOLD_KEEP;
    if (n_kept < FOLD_KEEP)
        n_kept++;
    return 1;
}

size_t fold_count(void)
{
    return n_kept;
}

const char *fold_get(size_t nth_last, const char **title)
{
    if (nth_last < 1 || nth_last > n_kept)
        return NULL;
    size_t at = (next_slot + FOLD_KEEP - nth_last) % FOLD_KEEP;
    if (title)
        *title = ring[at].title;
    return ring[at].body;
}

void fold_line(const term_out *t, loom_str *out, size_t hidden_lines, const char *more)
{
    loom_str line = LOOM_STR_INIT;
    str_printf(&line, "\xe2\x80\xa6 +%zu line%s%s%s (Ctrl-O to expand)", hidden_lines,
               hidden_lines == 1 ? "" : "s", more ? " " : "", more ? more : "");
    str_puts(out, "     ");
    term_put_tone(t, out, TONE_DIM, line.ptr, line.len);
    str_putc(out, '\n');
    str_free(&line);
}

bool fold_print(term_out *t, size_t nth_last)
{
    const char *title = NULL;
    const char *body = fold_get(nth_last, &title);
    if (!body) {
        if (!n_kept)
            term_printf(t, TONE_DIM, "No folded result to expand yet.\n");
        else
            term_printf(t, TONE_DIM, "There are %zu folded results: /expand 1 is the newest, "
                        "/expand %zu the oldest.\n", n_kept, n_kept);
        return false;
    }
    loom_str out = LOOM_STR_INIT;
    loom_str head = LOOM_STR_INIT;
    str_printf(&head, "\xe2\x96\xbe %s", title); /* ▾ */
    loom_str line = LOOM_STR_INIT;
    term_put_clipped(&line, head.ptr, head.len, term_columns() - 2);
    term_put_tone(t, &out, TONE_BOLD, line.ptr, line.len);
    str_putc(&out, '\n');
    str_puts(&out, body);
    if (out.len && out.ptr[out.len - 1] != '\n')
        str_putc(&out, '\n');
    term_write(t, out.ptr, out.len);
    str_free(&out);
    str_free(&head);
    str_free(&line);
    return true;
}

void fold_expand_cmd(slash_host *h, const char *args)
{
    term_out *t = &h->out;
    args += strspn(args ? args : "", " \t");
    size_t n = 1;
    if (args && *args) {
        char *end;
        long v = strtol(args, &end, 10);
        if (end == args || v < 1 || *(end + strspn(end, " \t"))) {
            term_printf(t, TONE_DIM, "/expand N prints the Nth-last folded result whole "
                        "(1, the default, is the newest).\n");
            return;
        }
        n = (size_t)v;
    }
    fold_print(t, n);
}

unsigned char fold_key(EditLine *el, int ch)
{
    (void)ch;
    repl *r = NULL;
    el_get(el, EL_CLIENTDATA, &r);
    if (!r)
        return CC_ERROR;
    if (!n_kept)
        return CC_REFRESH_BEEP;
    if (key_seen != n_kept)
        key_depth = 0, key_seen = n_kept;
    key_depth = key_depth % n_kept + 1;
    fputs("\n", stdout);
    fflush(stdout);
    fold_print(&r->host.out, key_depth);
    return CC_REDISPLAY;
}

void fold_clear(void)
{
    for (size_t i = 0; i < FOLD_KEEP; i++) {
        free(ring[i].title);
        free(ring[i].body);
        ring[i] = (kept){0};
    }
    n_kept = next_slot = key_depth = key_seen = 0;
}

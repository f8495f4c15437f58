/* thinking.c — see thinking.h. The text is the model's: each line passes
 * term_put_clipped before it is shown or kept. Main thread only. */
#include "surfaces/cli/thinking.h"

#include <string.h>

#include "surfaces/cli/fold.h"
#include "surfaces/cli/wrap.h"

void thinking_feed(thinking_view *tv, const char *s, size_t n)
{
    size_t room = tv->text.len < THINKING_KEEP ? THINKING_KEEP - tv->text.len : 0;
    size_t keep = n < room ? n : room;
    str_append(&tv->text, s, keep);
    tv->dropped += n - keep;
}

void thinking_flush(thinking_view *tv, const term_out *t, bool verbose, int width, loom_str *out)
{
    const char *s = tv->text.ptr;
    size_t len = tv->text.len;
    while (len && (*s == '\n' || *s == ' ' || *s == '\r'))
        s++, len--;
    while (len && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\r'))
        len--;
    if (!len) {
        str_clear(&tv->text);
        tv->dropped = 0;
        return;
    }
    /* Every line dimmed and safe; blank runs kept to one. */
    loom_str body = LOOM_STR_INIT, line = LOOM_STR_INIT;
    size_t lines = 0;
    const char *first = NULL;
    size_t first_len = 0;
    for (const char *p = s, *end = s + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!first) {
            first = p;
            first_len = k;
        }
        str_clear(&line);
        str_puts(&line, "  ");
        term_put_clipped(&line, p, k, 0);
        term_put_tone(t, &body, TONE_DIM, line.ptr, line.len);
        str_putc(&body, '\n');
        lines++;
        p = nl ? nl + 1 : end;
    }
    str_putc(out, '\n');
    if (verbose || lines == 1) {
        term_put_tone(t, out, TONE_DIM, "\xe2\x9c\xbb Thinking", 12); /* ✻ */
        str_putc(out, '\n');
        wrap_text(body.ptr, body.len, width, out);
    } else {
        str_clear(&line);
        str_puts(&line, "\xe2\x9c\xbb ");
        term_put_clipped(&line, first, first_len, width - 40 > 20 ? width - 40 : 20);
        str_printf(&line, " (thinking, %zu lines; Ctrl-O)", lines);
        term_put_tone(t, out, TONE_DIM, line.ptr, line.len);
        str_putc(out, '\n');
        fold_push("Thinking", body.ptr, body.len);
    }
    str_free(&body);
    str_free(&line);
    str_clear(&tv->text);
    tv->dropped = 0;
}

void thinking_free(thinking_view *tv)
{
    str_free(&tv->text);
}

/* fuzz_cli_view.c — libFuzzer target for the REPL's word wrap and code
 * highlighter (src/surfaces/cli/wrap.c, highlight.c), which read the
 * model's text: the first byte picks a width and a language. The wrapped
 * text holds the input's bytes in order (only spaces dropped at breaks,
 * newlines and indentation added), no line is wider than the width but
 * by its own indentation (checked without escapes), and the highlighter's
 * pieces cover each line exactly, in order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "surfaces/cli/highlight.h"
#include "surfaces/cli/render.h"
#include "surfaces/cli/wrap.h"

typedef struct cover {
    const char *line;
    size_t at;
} cover;

static void piece(void *ctx, hl_class cls, const char *s, size_t n)
{
    cover *c = ctx;
    (void)cls;
    if (s != c->line + c->at || !n)
        abort();
    c->at += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    int width = 1 + data[0] % 100;
    static const char *const langs[] = {"c", "sh", "py", "ts", "json", "go", "rust", "x"};
    const hl_lang *lang = highlight_lang(langs[data[0] % 8], strlen(langs[data[0] % 8]));
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    loom_str out = LOOM_STR_INIT;
    wrap_text(s, n, width, &out);
    /* Without escapes every line fits. */
    if (!memchr(s, 0x1b, n)) {
        for (const char *p = out.ptr, *end = out.ptr + out.len; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
            /* Only a line's own indentation may run past the width. */
            if (render_display_width(p, k) > (size_t)width && strspn(p, " ") < (size_t)width)
                abort();
            p = nl ? nl + 1 : end;
        }
        /* The non-space bytes, in order, are the input's. */
        size_t j = 0;
        for (size_t i = 0; i < n; i++) {
            if (s[i] == ' ' || s[i] == '\n')
                continue;
            while (j < out.len && (out.ptr[j] == ' ' || out.ptr[j] == '\n'))
                j++;
            if (j >= out.len || out.ptr[j] != s[i])
                abort();
            j++;
        }
    }
    str_free(&out);
    hl_state st = {0};
    for (const char *p = s, *end = s + n; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
        cover c = {p, 0};
        highlight_line(lang, &st, p, k, piece, &c);
        if (c.at != k)
            abort();
        p = nl ? nl + 1 : end;
    }
    return 0;
}

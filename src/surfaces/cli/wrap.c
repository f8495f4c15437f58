/* wrap.c — the word wrap of wrap.h, one input line at a time: the line is
 * read as escapes (no width), spaces (where it may break) and words (runs
 * of whole UTF-8 characters, one column each as render_display_width
 * counts them); a word that does not fit goes to the next line, a word
 * wider than a line is cut at the last character that fits. Any thread. */
#include "surfaces/cli/wrap.h"

#include <stdbool.h>
#include <string.h>

/* Length of the escape sequence at s (ESC [ … final byte, or ESC and one
 * byte); 0 if s is not an escape. */
static size_t escape_len(const char *s, size_t n)
{
    if (!n || s[0] != 0x1b)
        return 0;
    if (n >= 2 && s[1] == '[') {
        size_t i = 2;
        while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e))
            i++;
        return i < n ? i + 1 : n;
    }
    return n >= 2 ? 2 : 1;
}

/* Length of the UTF-8 character at s (a stray byte is one). */
static size_t char_len(const char *s, size_t n)
{
    size_t k = 1;
    while (k < n && k < 4 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k++;
    return k;
}

/* Columns of indentation a broken line gets: the line's leading spaces,
 * then a list marker or a quote bar after them, escapes skipped. */
static int hang_of(const char *s, size_t n)
{
    size_t i = 0;
    int cols = 0;
    for (;;) {
        size_t e = escape_len(s + i, n - i);
        if (e) {
            i += e;
            continue;
        }
        if (i < n && s[i] == ' ') {
            cols++;
            i++;
            continue;
        }
        break;
    }
    static const char *const marks[] = {"\xe2\x80\xa2 ", "\xe2\x97\xa6 ", "\xe2\x96\xaa ",
                                        "\xe2\x94\x82 "};
    for (size_t m = 0; m < sizeof marks / sizeof *marks; m++) {
        size_t ml = strlen(marks[m]);
        if (n - i >= ml && !memcmp(s + i, marks[m], ml))
            return cols + 2;
    }
    size_t d = i;
    while (d < n && s[d] >= '0' && s[d] <= '9')
        d++;
    if (d > i && d + 1 < n && s[d] == '.' && s[d + 1] == ' ')
        return cols + (int)(d - i) + 2;
    return cols;
}

typedef struct wline {
    loom_str *out;
    int width, hang, col;
    loom_str style; /* the SGR codes on since the last reset */
} wline;

static void track_style(wline *w, const char *e, size_t n)
{
    if (n >= 3 && e[1] == '[' && e[n - 1] == 'm') {
        if ((n == 3) || (n == 4 && e[2] == '0'))
            str_clear(&w->style);
        else
            str_append(&w->style, e, n);
    }
}

static void break_line(wline *w)
{
    if (w->style.len)
        str_puts(w->out, "\x1b[0m");
    str_putc(w->out, '\n');
    for (int i = 0; i < w->hang; i++)
        str_putc(w->out, ' ');
    if (w->style.len)
        str_append(w->out, w->style.ptr, w->style.len);
    w->col = w->hang;
}

static void wrap_line(const char *s, size_t n, int width, loom_str *out)
{
    wline w = {.out = out, .width = width, .hang = hang_of(s, n)};
    if (w.hang > width / 2)
        w.hang = width / 2;
    size_t i = 0;
    size_t spaces_at = 0, n_spaces = 0; /* spaces not yet written */
    bool content = false;               /* a word was written on this line */
    while (i < n) {
        size_t e = escape_len(s + i, n - i);
        if (e && !n_spaces) {
            str_append(out, s + i, e);
            track_style(&w, s + i, e);
            i += e;
            continue;
        }
        /* After spaces an escape belongs to the word it styles: it goes
         * where the word goes, after the spaces or after the break. */
        if (s[i] == ' ') {
            if (!n_spaces)
                spaces_at = i;
            n_spaces++;
            i++;
            continue;
        }
        /* A word: up to the next space or the end; escapes inside it. */
        size_t j = i;
        int wlen = 0;
        while (j < n && s[j] != ' ') {
            size_t ej = escape_len(s + j, n - j);
            if (ej) {
                j += ej;
                continue;
            }
            j += char_len(s + j, n - j);
            wlen++;
        }
        if (content && wlen && w.col + (int)n_spaces + wlen > width) {
            break_line(&w);
        } else {
            /* Leading spaces are indentation: kept; between words as typed. */
            str_append(out, s + spaces_at, n_spaces);
            w.col += (int)n_spaces;
        }
        n_spaces = 0;
        /* The word, cut where the line ends when it is wider than a line. */
        while (i < j) {
            size_t ei = escape_len(s + i, j - i);
            if (ei) {
                str_append(out, s + i, ei);
                track_style(&w, s + i, ei);
                i += ei;
                continue;
            }
            if (w.col >= width && w.col > w.hang)
                break_line(&w);
            size_t k = char_len(s + i, j - i);
            str_append(out, s + i, k);
            w.col++;
            i += k;
        }
        content = true;
    }
    /* Trailing spaces fit or are dropped; they never make a line of their own. */
    if (n_spaces && w.col + (int)n_spaces <= width)
        str_append(out, s + spaces_at, n_spaces);
    str_free(&w.style);
}

void wrap_text(const char *s, size_t n, int width, loom_str *out)
{
    str_puts(out, "");
    if (width <= 0) {
        str_append(out, s, n);
        return;
    }
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n;
        wrap_line(s + i, end - i, width, out);
        if (nl)
            str_putc(out, '\n');
        i = end + 1;
    }
}

/* term_out.c — Loom's writes to the terminal (see term_out.h): tones,
 * terminal-safe text, lines clipped to the window.
 *
 * Owns no state of its own: the lock, the colour choice and the spinner are
 * the caller's term_out. Every write holds the lock, so any thread may
 * write. */
#include "surfaces/cli/term_out.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/termsafe.h"

int term_columns(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *env = getenv("COLUMNS"); /* not a terminal: what the caller says */
    int cols = env ? atoi(env) : 0;
    return cols >= 20 && cols <= 1000 ? cols : 80;
}

void term_write(term_out *t, const char *s, size_t n)
{
    if (!n)
        return;
    pthread_mutex_lock(&t->lock);
    spinner_erase_locked(t->spin);
    fwrite(s, 1, n, stdout);
    fflush(stdout);
    /* Output always ends at a line start, so the frame goes below it. */
    if (s[n - 1] == '\n')
        spinner_draw_locked(t->spin);
    pthread_mutex_unlock(&t->lock);
}

static const char *tone_code(term_tone tone)
{
    switch (tone) {
    case TONE_DIM: return "\x1b[2m";
    case TONE_BOLD: return "\x1b[1m";
    case TONE_RED: return "\x1b[31m";
    case TONE_YELLOW: return "\x1b[33m";
    case TONE_GREEN: return "\x1b[32m";
    case TONE_ALERT: return "\x1b[1;31m";
    default: return NULL;
    }
}

void term_put_tone(const term_out *t, loom_str *s, term_tone tone, const char *text, size_t n)
{
    const char *code = t->color ? tone_code(tone) : NULL;
    if (code)
        str_puts(s, code);
    str_append(s, text, n);
    if (code)
        str_puts(s, "\x1b[0m");
}

void term_printf(term_out *t, term_tone tone, const char *fmt, ...)
{
    loom_str text = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&text, fmt, ap);
    va_end(ap);
    /* What is printed here may hold text from outside (a server's error, a
     * hook's message, a session title, a question's options): escapes in
     * it are shown, never sent. The tones below are the only escapes. */
    loom_str clean = LOOM_STR_INIT;
    termsafe_append(&clean, text.ptr, text.len);
    str_free(&text);
    text = clean;
    loom_str out = LOOM_STR_INIT;
    /* Tone each line on its own, so a newline never carries a color. */
    const char *p = str_cstr(&text);
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        term_put_tone(t, &out, tone, p, n);
        if (nl)
            str_putc(&out, '\n');
        p += n + (nl != NULL);
    }
    term_write(t, str_cstr(&out), out.len);
    str_free(&out);
    str_free(&text);
}

void term_write_control(term_out *t, const char *seq)
{
    pthread_mutex_lock(&t->lock);
    spinner_erase_locked(t->spin);
    fputs(seq, stdout);
    fflush(stdout);
    pthread_mutex_unlock(&t->lock);
}

/* Cuts s to at most `cols` characters on one line, with "…" when cut.
 * Control characters (escapes from a tool's output, a CR that would let
 * the rest of a command overwrite its start) are shown in their visible
 * form (base/termsafe.h), so a result cannot restyle or move around the
 * terminal, nor hide part of what a prompt asks about. */
void term_put_clipped(loom_str *out, const char *s, size_t n, int cols)
{
    const char *nl = memchr(s, '\n', n);
    loom_str safe = LOOM_STR_INIT;
    termsafe_append(&safe, s, nl ? (size_t)(nl - s) : n);
    const char *p = safe.ptr;
    size_t len = safe.len;
    int w = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c & 0xC0) != 0x80) {
            if (cols > 1 && w >= cols - 1) {
                /* room for the ellipsis only if more follows */
                size_t k = i;
                while (k < len && ((unsigned char)p[k] & 0xC0) == 0x80)
                    k++;
                if (k < len) {
                    str_puts(out, "\xe2\x80\xa6");
                    break;
                }
            }
            w++;
        }
        str_putc(out, c == '\t' ? ' ' : (char)c);
    }
    str_free(&safe);
}

/* spinner.c — the REPL's progress line: a thread, a label, a clock and a
 * token count, drawn over one terminal line and erased before anyone else
 * writes (see spinner.h for the locking rule). */
#include "surfaces/cli/spinner.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sig.h"
#include "base/str.h"
#include "base/termsafe.h"

#define TICK_MS 100

struct spinner {
    FILE *out;
    pthread_mutex_t *lock;  /* the terminal's: guards everything below too */
    bool color;
    pthread_t thread;
    pthread_cond_t wake;
    bool quit;
    bool active;
    bool drawn;             /* a frame is on screen now */
    char *label;
    long long tokens;
    int64_t started_ms;
    unsigned frame;
    char *below;            /* lines drawn under the frame ('\n'-joined, safe), or NULL */
    int below_drawn;        /* how many of them are on screen now */
};

static const char *const frames[] = {"\xe2\xa0\x8b", "\xe2\xa0\x99", "\xe2\xa0\xb9",
                                     "\xe2\xa0\xb8", "\xe2\xa0\xbc", "\xe2\xa0\xb4",
                                     "\xe2\xa0\xa6", "\xe2\xa0\xa7", "\xe2\xa0\x87",
                                     "\xe2\xa0\x8f"};

void spinner_format_count(long long n, char *buf, size_t size)
{
    if (n >= 1000000)
        snprintf(buf, size, "%.1fM", (double)n / 1e6);
    else if (n >= 1000)
        snprintf(buf, size, "%.1fk", (double)n / 1e3);
    else
        snprintf(buf, size, "%lld", n);
}

static int columns(FILE *out)
{
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

static void erase_below_locked(spinner *sp);

/* One frame, cut to the terminal's width: a wrapped line could not be
 * erased with a carriage return. Lock held. */
static void draw_locked(spinner *sp)
{
    char status[128];
    int64_t secs = (clock_mono_ms() - sp->started_ms) / 1000;
    int n = secs < 60 ? snprintf(status, sizeof status, "%llds", (long long)secs)
                      : snprintf(status, sizeof status, "%lldm %02llds", (long long)secs / 60,
                                 (long long)secs % 60);
    if (sp->tokens > 0) {
        char count[32];
        spinner_format_count(sp->tokens, count, sizeof count);
        snprintf(status + n, sizeof status - (size_t)n, " \xc2\xb7 %s tokens", count);
    }
    loom_str line = LOOM_STR_INIT;
    str_printf(&line, "%s %s \xc2\xb7 esc to interrupt", sp->label, status);
    /* Cut by characters to fit: frame + space + text. */
    size_t max = (size_t)columns(sp->out) - 3;
    size_t w = 0, cut = 0;
    while (cut < line.len) {
        if (((unsigned char)line.ptr[cut] & 0xC0) != 0x80) {
            if (w == max)
                break;
            w++;
        }
        cut++;
    }
    const char *frame = frames[sp->frame++ % (sizeof frames / sizeof frames[0])];
    /* A frame already on screen with lines under it: back to its line. */
    erase_below_locked(sp);
    if (sp->color)
        fprintf(sp->out, "\r\x1b[2K\x1b[35m%s\x1b[0m \x1b[2m%.*s\x1b[0m", frame, (int)cut, line.ptr);
    else
        fprintf(sp->out, "\r\x1b[2K%s %.*s", frame, (int)cut, line.ptr);
    /* The lines under it (the sub-agent tree), each already cut to fit:
     * the cursor ends on the last one, erase climbs back. */
    for (const char *s = sp->below; s && *s;) {
        size_t len = strcspn(s, "\n");
        fprintf(sp->out, sp->color ? "\n\x1b[2K\x1b[2m%.*s\x1b[0m" : "\n\x1b[2K%.*s", (int)len, s);
        sp->below_drawn++;
        s += len + (s[len] == '\n');
    }
    fflush(sp->out);
    str_free(&line);
    sp->drawn = true;
}

/* Erases the lines under the frame and puts the cursor back on the
 * frame's line. Lock held. */
static void erase_below_locked(spinner *sp)
{
    for (; sp->below_drawn > 0; sp->below_drawn--)
        fputs("\r\x1b[2K\x1b[1A", sp->out);
}

void spinner_erase_locked(spinner *sp)
{
    if (!sp || !sp->drawn)
        return;
    erase_below_locked(sp);
    fputs("\r\x1b[2K", sp->out);
    fflush(sp->out);
    sp->drawn = false;
}

void spinner_draw_locked(spinner *sp)
{
    if (sp && sp->active && !sp->drawn)
        draw_locked(sp);
}

static void *spin(void *arg)
{
    spinner *sp = arg;
    pthread_mutex_lock(sp->lock);
    while (!sp->quit) {
        if (sp->active)
            draw_locked(sp);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&sp->wake, sp->lock, &until);
    }
    pthread_mutex_unlock(sp->lock);
    return NULL;
}

spinner *spinner_new(FILE *out, pthread_mutex_t *lock, bool color)
{
    if (!isatty(fileno(out)))
        return NULL;
    spinner *sp = xcalloc(1, sizeof *sp);
    sp->out = out;
    sp->lock = lock;
    sp->color = color;
    sp->label = xstrdup("");
    pthread_cond_init(&sp->wake, NULL);
    /* The spinner never handles a signal: SIGINT must reach the thread that
     * acts on it. */
    int rc = sig_thread_create(&sp->thread, spin, sp);
    if (rc != 0) {
        pthread_cond_destroy(&sp->wake);
        free(sp->label);
        free(sp);
        return NULL;
    }
    return sp;
}

void spinner_free(spinner *sp)
{
    if (!sp)
        return;
    pthread_mutex_lock(sp->lock);
    sp->quit = true;
    spinner_erase_locked(sp);
    pthread_cond_signal(&sp->wake);
    pthread_mutex_unlock(sp->lock);
    pthread_join(sp->thread, NULL);
    pthread_cond_destroy(&sp->wake);
    free(sp->label);
    free(sp->below);
    free(sp);
}

void spinner_begin(spinner *sp, const char *label)
{
    if (!sp)
        return;
    pthread_mutex_lock(sp->lock);
    free(sp->label);
    sp->label = termsafe_dup(label); /* it may name a tool the model chose */
    sp->tokens = 0;
    sp->started_ms = clock_mono_ms();
    sp->active = true;
    pthread_cond_signal(&sp->wake);
    pthread_mutex_unlock(sp->lock);
}

void spinner_label(spinner *sp, const char *label)
{
    if (!sp)
        return;
    pthread_mutex_lock(sp->lock);
    free(sp->label);
    sp->label = termsafe_dup(label); /* it may name a tool the model chose */
    pthread_mutex_unlock(sp->lock);
}

void spinner_below(spinner *sp, const char *lines)
{
    if (!sp)
        return;
    pthread_mutex_lock(sp->lock);
    bool same = (!lines || !*lines) ? !sp->below : sp->below && !strcmp(sp->below, lines);
    if (!same) {
        free(sp->below);
        sp->below = lines && *lines ? xstrdup(lines) : NULL;
        /* Drawn now: a line that vanished must not linger for a tick. */
        if (sp->drawn)
            draw_locked(sp);
    }
    pthread_mutex_unlock(sp->lock);
}

void spinner_tokens(spinner *sp, long long tokens)
{
    if (!sp)
        return;
    pthread_mutex_lock(sp->lock);
    sp->tokens = tokens;
    pthread_mutex_unlock(sp->lock);
}

void spinner_end(spinner *sp)
{
    if (!sp)
        return;
    pthread_mutex_lock(sp->lock);
    sp->active = false;
    spinner_erase_locked(sp);
    pthread_mutex_unlock(sp->lock);
}

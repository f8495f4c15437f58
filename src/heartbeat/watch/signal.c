/* watch_signal.c — the external_signal watch source: SIGINT, SIGTERM,
 * SIGUSR1, … and named signals sent by `loom signal` or the API.
 *
 * The only way in is watch_signal_send (heartbeat_signal), which is
 * async-signal-safe: it normalises the name into a fixed 32-byte record and
 * write()s it to a non-blocking pipe — one record per write, well under
 * PIPE_BUF, so records never interleave. The heartbeat thread polls the
 * pipe's read end as soon as it is readable, not only at the next tick, so
 * a Ctrl-C becomes a critical event at once (seed 000 scenario C). Each
 * delivery is its own change: two SIGINTs are two events.
 */
#include "heartbeat/watch/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"

#define SIG_REC 32

typedef struct sig_watch {
    int rfd, wfd;
    watch_signal_rule *rules;
    size_t n_rules;
    event_urgency urgency;   /* for names without a rule */
    double weight;
    uint64_t seq;
} sig_watch;

/* Pure: no library calls, so it may run inside a signal handler. */
bool watch_signal_normalise(const char *in, char out[32])
{
    if (!in)
        return false;
    size_t n = 0;
    while (in[n])
        n++;
    if (n == 0)
        return false;
    char up[32];
    if (n >= sizeof up)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return false;
        up[i] = c;
    }
    up[n] = '\0';
    /* "INT" → "SIGINT" for the names the heartbeat knows by number. */
    static const char *const bare[] = {"INT", "TERM", "USR1", "USR2", "HUP", "QUIT", NULL};
    size_t o = 0;
    for (size_t k = 0; bare[k]; k++) {
        const char *b = bare[k];
        size_t i = 0;
        while (b[i] && up[i] == b[i])
            i++;
        if (!b[i] && !up[i]) {
            out[o++] = 'S';
            out[o++] = 'I';
            out[o++] = 'G';
            break;
        }
    }
    if (o + n >= 32)
        return false;
    for (size_t i = 0; i <= n; i++)
        out[o + i] = up[i];
    return true;
}

const char *watch_signal_name(int signo)
{
    switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return NULL;
    }
}

int watch_signal_send(int write_fd, const char *name)
{
    char rec[SIG_REC];
    for (size_t i = 0; i < SIG_REC; i++)
        rec[i] = '\0';
    if (write_fd < 0 || !watch_signal_normalise(name, rec))
        return -1;
    int saved = errno;   /* a handler must leave errno as it found it */
    ssize_t w = write(write_fd, rec, SIG_REC);
    errno = saved;
    return w == SIG_REC ? 0 : -1;
}

static int sig_poll(void *ctx, const watch_tick *t, watch_emit_fn emit, void *emit_ctx)
{
    sig_watch *sw = ctx;
    char rec[SIG_REC * 16];
    for (;;) {
        ssize_t n = read(sw->rfd, rec, sizeof rec);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t off = 0; off + SIG_REC <= n; off += SIG_REC) {
            char name[SIG_REC + 1];
            memcpy(name, rec + off, SIG_REC);
            name[SIG_REC] = '\0';
            event_urgency u = sw->urgency;
            for (size_t i = 0; i < sw->n_rules; i++)
                if (!strcmp(sw->rules[i].name, name))
                    u = sw->rules[i].urgency;
            loom_str fp = LOOM_STR_INIT, sum = LOOM_STR_INIT, subject = LOOM_STR_INIT;
            str_printf(&fp, "signal:%s:%" PRId64 ":%" PRIu64, name, t->now_ms, ++sw->seq);
            str_printf(&subject, "signal:%s", name);
            if (!strncmp(name, "SIG", 3))
                str_printf(&sum, "%s received", name);
            else
                str_printf(&sum, "external signal \"%s\" received", name);
            hb_candidate c = {
                .source = "external_signal",
                .subject = subject.ptr,
                .fingerprint = fp.ptr,
                .summary = sum.ptr,
                .urgency = u,
                .magnitude = 1.0,
                .weight = sw->weight,
            };
            emit(emit_ctx, &c);
            str_free(&fp);
            str_free(&sum);
            str_free(&subject);
        }
    }
    return 0;
}

static int sig_fd(void *ctx)
{
    return ((sig_watch *)ctx)->rfd;
}

static void sig_free(void *ctx)
{
    sig_watch *sw = ctx;
    if (!sw)
        return;
    close(sw->rfd);
    close(sw->wfd);
    for (size_t i = 0; i < sw->n_rules; i++)
        free(sw->rules[i].name);
    free(sw->rules);
    free(sw);
}

/* ---- its settings block (watch_ops.parse / to_json) ---- */

#define HB_SIGNAL_NAME_MAX 31

static const char *const sig_keys[] = {"type", "weight", "urgency", "signals", NULL};

static void add_signal_rule(watch_config *w, const char *name, event_urgency u)
{
    for (size_t i = 0; i < w->n_signals; i++)
        if (!strcmp(w->signals[i].name, name)) {
            w->signals[i].urgency = u;
            return;
        }
    w->signals = xrealloc(w->signals, (w->n_signals + 1) * sizeof *w->signals);
    w->signals[w->n_signals].name = xstrdup(name);
    w->signals[w->n_signals].urgency = u;
    w->n_signals++;
}

static int sig_parse(const json_t *src, const char *where, const char *cwd, watch_config *w,
                     loom_error *err)
{
    (void)cwd;
    int rc;
    w->urgency = w->idle_urgency = EVENT_HIGH;
    if ((rc = hb_cfg_level(src, where, w, err)) < 0)
        return rc;
    add_signal_rule(w, "SIGINT", EVENT_CRITICAL);
    add_signal_rule(w, "SIGTERM", EVENT_CRITICAL);
    add_signal_rule(w, "SIGUSR1", EVENT_HIGH);
    add_signal_rule(w, "SIGHUP", EVENT_HIGH);
    json_t *sigs = json_object_get(src, "signals");
    if (!sigs)
        return 0;
    char sub[512];
    snprintf(sub, sizeof sub, "%s.signals", where);
    if (!json_is_object(sigs))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: must be an object of signal name → level", sub);
    const char *name;
    json_t *lv;
    json_object_foreach((json_t *)sigs, name, lv) {
        char norm[HB_SIGNAL_NAME_MAX + 1];
        char sub2[600];
        snprintf(sub2, sizeof sub2, "%s.%s", sub, name);
        if (!watch_signal_normalise(name, norm))
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "%s: a signal name is 1-%d letters, digits, '_', '-' "
                                  "or '.'", sub2, HB_SIGNAL_NAME_MAX);
        event_urgency eu;
        if ((rc = hb_cfg_urgency(lv, sub2, &eu, err)) < 0)
            return rc;
        add_signal_rule(w, norm, eu);
    }
    return 0;
}

static void sig_to_json(const watch_config *w, json_t *s)
{
    json_object_set_new(s, "urgency", json_string(event_urgency_name(w->urgency)));
    json_t *sg = json_object();
    for (size_t k = 0; k < w->n_signals; k++)
        json_object_set_new(sg, w->signals[k].name,
                            json_string(event_urgency_name(w->signals[k].urgency)));
    json_object_set_new(s, "signals", sg);
}

const watch_ops watch_signal_ops = {
    .poll = sig_poll,
    .fd = sig_fd,
    .free = sig_free,
    .name = "external_signal",
    .type = WATCH_EXTERNAL_SIGNAL,
    .keys = sig_keys,
    .default_weight = 1.0,
    .parse = sig_parse,
    .to_json = sig_to_json,
};

int watch_signal_new(const watch_config *c, watch_source *out, int *write_fd, loom_error *err)
{
    if (c->type != WATCH_EXTERNAL_SIGNAL)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "heartbeat: not an external_signal source");
    int p[2];
    if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
        return loom_error_set(err, LOOM_ERR_IO, "heartbeat: signal pipe: %s", strerror(errno));
    sig_watch *sw = xcalloc(1, sizeof *sw);
    sw->rfd = p[0];
    sw->wfd = p[1];
    sw->rules = xcalloc(c->n_signals ? c->n_signals : 1, sizeof *sw->rules);
    for (size_t i = 0; i < c->n_signals; i++) {
        sw->rules[i].name = xstrdup(c->signals[i].name);
        sw->rules[i].urgency = c->signals[i].urgency;
    }
    sw->n_rules = c->n_signals;
    sw->urgency = c->urgency;
    sw->weight = c->weight;
    *write_fd = sw->wfd;
    out->ops = &watch_signal_ops;
    out->ctx = sw;
    out->type = WATCH_EXTERNAL_SIGNAL;
    return 0;
}

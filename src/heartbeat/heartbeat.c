/* heartbeat.c — the heartbeat thread (heartbeat.h): the tick loop, the
 * path from a source's candidate through the gate to the journal, the
 * surface and the interrupt policy, and the few calls other threads make.
 *
 * The thread sleeps in poll() on an eventfd (stop, Act changes, tick
 * requests) and on the signal source's pipe, with the time to the next tick
 * as timeout. A condition variable cannot be signalled from a signal
 * handler; a descriptor can, so one poll() serves both, and stop wakes the
 * thread at once. Shared state is atomics, plus a mutex over the own-write
 * queue and the tick-request counters — never held across I/O.
 */
#include "heartbeat/heartbeat.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/path.h"
#include "base/sig.h"
#include "base/str.h"
#include "base/utf8.h"
#include "base/uuid.h"
#include "heartbeat/gate.h"
#include "heartbeat/hash.h"
#include "heartbeat/watch/watch.h"

/* Summaries are one line for the model; longer ones are cut. */
#define HB_SUMMARY_MAX 400
#define HB_FINGERPRINT_MAX 1024

typedef struct own_write {
    char *path;
    bool has_hash;
    uint64_t hash;
    int64_t at_ms;
} own_write;

struct heartbeat {
    /* Immutable after start. */
    double T_hb, T_hb_act;
    interrupt_action policy[3];
    working *w;
    char *cwd;
    char *mf_dir;
    char *journal_path;
    void (*on_event)(void *, const surface_event *, interrupt_action, double);
    void *ctx;
    const heartbeat_config *start_cfg;   /* valid only until ready */
    int sig_wfd;                         /* -1: no external_signal source */
    int wake_fd;                         /* eventfd */

    /* Heartbeat thread only. */
    watch_source *sources;
    size_t n_sources;
    hb_gate *gate;
    journal *j;
    unsigned act_epoch_seen;
    bool *problem_logged;

    /* Shared. */
    pthread_t thread;
    atomic_bool stop;
    atomic_bool act_running;
    atomic_uint act_epoch;               /* bumped by every set_act(true) */
    _Atomic uint64_t ticks, candidates, gated, emitted, duplicates, errors;
    _Atomic int64_t cpu_ns, last_tick_ms;
    int64_t start_mono_ns;

    pthread_mutex_t mu;
    pthread_cond_t cond;
    own_write *own;                      /* queue, under mu */
    size_t n_own, cap_own;
    uint64_t tick_requests;              /* under mu */
    uint64_t ticks_served;               /* under mu: requests answered */
    bool ready;                          /* under mu */
    int start_rc;
    loom_error start_err;
};

static void wake(heartbeat *hb)
{
    uint64_t one = 1;
    ssize_t w;
    do
        w = write(hb->wake_fd, &one, sizeof one);
    while (w < 0 && errno == EINTR);
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- from candidate to event ---- */

/* One line, valid UTF-8, at most max bytes (cut on a character boundary). */
static char *clean_line(const char *s, size_t max)
{
    char *u = utf8_sanitize(s, strlen(s), NULL);
    size_t n = 0, keep = 0;
    size_t len = strlen(u);
    while (n < len) {
        size_t l = utf8_seq_len((const unsigned char *)u + n, len - n);
        if (!l)
            l = 1;
        if (n + l > max)
            break;
        for (size_t i = 0; i < l; i++)
            if (u[n + i] == '\n' || u[n + i] == '\r' || u[n + i] == '\t')
                u[n + i] = ' ';
        n += l;
        keep = n;
    }
    if (keep < len) {
        /* Cut: end with an ellipsis (3 bytes) inside the budget. */
        while (keep > 0 && keep + 3 > max) {
            keep--;
            while (keep > 0 && ((unsigned char)u[keep] & 0xC0) == 0x80)
                keep--;
        }
        u = xrealloc(u, keep + 4);
        memcpy(u + keep, "…", 3);
        keep += 3;
    }
    u[keep] = '\0';
    return u;
}

static void emit_candidate(void *ctx, const hb_candidate *c)
{
    heartbeat *hb = ctx;
    atomic_fetch_add(&hb->candidates, 1);
    int64_t now = clock_wall_ms();
    gate_verdict v = gate_judge(hb->gate, c, now);
    if (!v.pass) {
        atomic_fetch_add(&hb->gated, 1);
        return;
    }
    char uuid[UUID_STR_LEN];
    uuid_v7(uuid);
    char id[UUID_STR_LEN + 4];
    memcpy(id, "ev_", 3);
    memcpy(id + 3, uuid, UUID_STR_LEN);
    surface_event ev = {
        .id = id,
        .fingerprint = clean_line(c->fingerprint, HB_FINGERPRINT_MAX),
        .source = (char *)c->source,
        .summary = clean_line(c->summary, HB_SUMMARY_MAX),
        .urgency = c->urgency,
        .state = EVENT_DETECTED,
        .detected_ms = now,
    };
    interrupt_action action = hb->policy[c->urgency];
    loom_error err;
    loom_error_clear(&err);
    if (hb->j) {
        double rounded = (double)(int64_t)(v.delta_h * 1000 + 0.5) / 1000;
        json_t *extra = json_pack("{s:f, s:s}", "delta_h", rounded, "action",
                                  interrupt_action_name(action));
        if (journal_append_ex(hb->j, &ev, EVENT_DETECTED, extra, &err) < 0)
            LOG_W("heartbeat", "%s", err.message);
        json_decref(extra);
    }
    bool added = true;
    if (hb->w) {
        int rc = working_add_event(hb->w, &ev);
        if (rc < 0) {
            atomic_fetch_add(&hb->errors, 1);
            LOG_W("heartbeat", "the surface refused event %s", ev.id);
            free(ev.fingerprint);
            free(ev.summary);
            return;
        }
        added = rc == 1;
        if (hb->j) {
            json_t *extra = added ? NULL : json_pack("{s:s}", "reason", "duplicate");
            if (journal_append_ex(hb->j, &ev, added ? EVENT_PROJECTED : EVENT_ARCHIVED, extra,
                                  &err) < 0)
                LOG_W("heartbeat", "%s", err.message);
            json_decref(extra);
        }
        if (added && action != INTERRUPT_QUEUE)
            working_set_interrupt(hb->w, true);
        ev.state = EVENT_PROJECTED;
    }
    if (added) {
        atomic_fetch_add(&hb->emitted, 1);
        if (hb->on_event)
            hb->on_event(hb->ctx, &ev, action, v.delta_h);
    } else {
        atomic_fetch_add(&hb->duplicates, 1);
    }
    free(ev.fingerprint);
    free(ev.summary);
}

static void poll_source(heartbeat *hb, size_t i, const watch_tick *t)
{
    watch_source *s = &hb->sources[i];
    int problems = s->ops->poll(s->ctx, t, emit_candidate, hb);
    if (problems > 0) {
        atomic_fetch_add(&hb->errors, (uint64_t)problems);
        if (!hb->problem_logged[i]) {
            hb->problem_logged[i] = true;
            LOG_W("heartbeat", "%s source: %d problem(s) this tick (unreadable files or "
                  "values); further ones are only counted", watch_type_name(s->type), problems);
        }
    }
}

/* ---- the tick ---- */

static void tick(heartbeat *hb)
{
    pthread_mutex_lock(&hb->mu);
    /* The queue's count never passes its room, and no request is answered
     * before it was made. */
    assert(hb->n_own <= hb->cap_own && (hb->own || hb->n_own == 0));
    assert(hb->ticks_served <= hb->tick_requests);
    uint64_t serving = hb->tick_requests;
    own_write *own = hb->own;
    size_t n_own = hb->n_own;
    hb->own = NULL;
    hb->n_own = hb->cap_own = 0;
    pthread_mutex_unlock(&hb->mu);

    watch_tick t;
    t.now_ms = clock_wall_ms();
    unsigned epoch = atomic_load(&hb->act_epoch);
    t.act_active = atomic_load(&hb->act_running) || epoch != hb->act_epoch_seen;
    hb->act_epoch_seen = epoch;

    for (size_t k = 0; k < n_own; k++) {
        for (size_t i = 0; i < hb->n_sources; i++)
            if (hb->sources[i].ops->own_write)
                hb->sources[i].ops->own_write(hb->sources[i].ctx, own[k].path, own[k].has_hash,
                                              own[k].hash, own[k].at_ms);
        free(own[k].path);
    }
    free(own);

    for (size_t i = 0; i < hb->n_sources; i++)
        poll_source(hb, i, &t);
    if (hb->w)
        working_set_heartbeat(hb->w, t.now_ms);
    atomic_store(&hb->last_tick_ms, t.now_ms);
    atomic_fetch_add(&hb->ticks, 1);

    pthread_mutex_lock(&hb->mu);
    assert(serving >= hb->ticks_served && serving <= hb->tick_requests); /* counts only grow */
    hb->ticks_served = serving;
    pthread_cond_broadcast(&hb->cond);
    pthread_mutex_unlock(&hb->mu);
}

/* Sources whose descriptor is readable are polled at once (signals). */
static void poll_ready_sources(heartbeat *hb, const struct pollfd *pfd, const size_t *src_of,
                               size_t nfds)
{
    watch_tick t = {clock_wall_ms(), atomic_load(&hb->act_running)};
    for (size_t k = 1; k < nfds; k++)
        if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
            poll_source(hb, src_of[k], &t);
}

static int seed_gate(void *ctx, const json_t *line)
{
    gate_seed(ctx, json_string_value(json_object_get(line, "fingerprint")));
    return 0;
}

static int setup(heartbeat *hb, loom_error *err)
{
    const heartbeat_config *cfg = hb->start_cfg;
    hb->gate = gate_new(cfg->delta_hb, cfg->novelty_window);
    if (hb->journal_path) {
        size_t skipped = 0;
        loom_error e;
        loom_error_clear(&e);
        if (journal_read(hb->journal_path, seed_gate, hb->gate, &skipped, &e) < 0)
            LOG_W("heartbeat", "reading the journal: %s", e.message);
        if (!(hb->j = journal_open(hb->journal_path, err)))
            return -1;
    }
    hb->sources = xcalloc(cfg->n_sources ? cfg->n_sources : 1, sizeof *hb->sources);
    hb->problem_logged = xcalloc(cfg->n_sources ? cfg->n_sources : 1, sizeof(bool));
    for (size_t i = 0; i < cfg->n_sources; i++) {
        const watch_config *wc = &cfg->sources[i];
        watch_source *s = &hb->sources[hb->n_sources];
        int rc = 0;
        switch (wc->type) {
        case WATCH_FILESYSTEM: rc = watch_fs_new(wc, hb->cwd, hb->journal_path, s, err); break;
        case WATCH_PROCESS: rc = watch_process_new(wc, hb->cwd, s, err); break;
        case WATCH_MF_EVENTS: rc = watch_mf_new(wc, hb->mf_dir, s, err); break;
        case WATCH_RESOURCE: rc = watch_resource_new(wc, s, err); break;
        case WATCH_EXTERNAL_SIGNAL:
            if (hb->sig_wfd >= 0)
                continue;   /* the parser allows one; keep the first */
            rc = watch_signal_new(wc, s, &hb->sig_wfd, err);
            break;
        }
        if (rc < 0) {
            loom_error_prefix(err, "heartbeat.watch_sources[%zu]", i);
            return -1;
        }
        hb->n_sources++;
    }
    return 0;
}

static void *thread_main(void *arg)
{
    heartbeat *hb = arg;
    loom_error err;
    loom_error_clear(&err);
    int rc = setup(hb, &err);
    pthread_mutex_lock(&hb->mu);
    hb->start_rc = rc;
    hb->start_err = err;
    hb->ready = true;
    hb->start_cfg = NULL;
    pthread_cond_broadcast(&hb->cond);
    pthread_mutex_unlock(&hb->mu);
    if (rc < 0)
        return NULL;

    size_t nfds = 1;
    struct pollfd pfd[1 + 8];
    size_t src_of[1 + 8];
    pfd[0] = (struct pollfd){.fd = hb->wake_fd, .events = POLLIN};
    for (size_t i = 0; i < hb->n_sources && nfds < 9; i++) {
        int fd = hb->sources[i].ops->fd ? hb->sources[i].ops->fd(hb->sources[i].ctx) : -1;
        if (fd >= 0) {
            pfd[nfds] = (struct pollfd){.fd = fd, .events = POLLIN};
            src_of[nfds++] = i;
        }
    }
    atomic_store(&hb->cpu_ns, thread_cpu_ns());

    int64_t last_tick = clock_mono_ms();
    while (!atomic_load(&hb->stop)) {
        double interval_s = atomic_load(&hb->act_running) ? hb->T_hb_act : hb->T_hb;
        int64_t due = last_tick + (int64_t)(interval_s * 1000.0 + 0.5);
        int64_t now = clock_mono_ms();
        int timeout = due > now ? (int)(due - now < 3600000 ? due - now : 3600000) : 0;

        pthread_mutex_lock(&hb->mu);
        bool requested = hb->tick_requests != hb->ticks_served;
        pthread_mutex_unlock(&hb->mu);
        if (requested)
            timeout = 0;

        int n = poll(pfd, nfds, timeout);
        if (atomic_load(&hb->stop))
            break;
        if (n > 0) {
            if (pfd[0].revents & POLLIN) {
                uint64_t v;
                (void)!read(hb->wake_fd, &v, sizeof v);
            }
            poll_ready_sources(hb, pfd, src_of, nfds);
        }
        pthread_mutex_lock(&hb->mu);
        requested = hb->tick_requests != hb->ticks_served;
        pthread_mutex_unlock(&hb->mu);
        now = clock_mono_ms();
        interval_s = atomic_load(&hb->act_running) ? hb->T_hb_act : hb->T_hb;
        if (requested || now >= last_tick + (int64_t)(interval_s * 1000.0 + 0.5)) {
            tick(hb);
            last_tick = clock_mono_ms();
        }
        atomic_store(&hb->cpu_ns, thread_cpu_ns());
    }
    atomic_store(&hb->cpu_ns, thread_cpu_ns());
    /* Whoever waits in tick_now must not wait forever. */
    pthread_mutex_lock(&hb->mu);
    hb->ticks_served = hb->tick_requests;
    pthread_cond_broadcast(&hb->cond);
    pthread_mutex_unlock(&hb->mu);
    return NULL;
}

/* ---- the API ---- */

static void free_hb(heartbeat *hb)
{
    for (size_t i = 0; i < hb->n_sources; i++)
        watch_source_free(&hb->sources[i]);
    free(hb->sources);
    free(hb->problem_logged);
    gate_free(hb->gate);
    journal_close(hb->j);
    for (size_t k = 0; k < hb->n_own; k++)
        free(hb->own[k].path);
    free(hb->own);
    if (hb->wake_fd >= 0)
        close(hb->wake_fd);
    pthread_mutex_destroy(&hb->mu);
    pthread_cond_destroy(&hb->cond);
    free(hb->cwd);
    free(hb->mf_dir);
    free(hb->journal_path);
    free(hb);
}

heartbeat *heartbeat_start(const heartbeat_config *cfg, const heartbeat_env *env,
                           loom_error *err)
{
    if (!cfg || !env || !env->cwd || env->cwd[0] != '/') {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "heartbeat: a config and an absolute cwd are required");
        return NULL;
    }
    heartbeat *hb = xcalloc(1, sizeof *hb);
    hb->T_hb = cfg->T_hb > 0 ? cfg->T_hb : HB_DEFAULT_T_HB;
    hb->T_hb_act = cfg->T_hb_act > 0 ? cfg->T_hb_act : hb->T_hb;
    memcpy(hb->policy, cfg->policy, sizeof hb->policy);
    hb->w = env->w;
    hb->cwd = path_fold(env->cwd);
    if (env->mf_dir) {
        hb->mf_dir = xstrdup(env->mf_dir);
    } else {
        loom_str d = LOOM_STR_INIT;
        str_printf(&d, "%s/.loom/events", strcmp(hb->cwd, "/") ? hb->cwd : "");
        hb->mf_dir = str_steal(&d);
    }
    if (env->journal_path && env->journal_path[0] != '/') {
        char *jp = path_join(hb->cwd, env->journal_path);
        hb->journal_path = path_fold(jp);
        free(jp);
    } else if (env->journal_path) {
        hb->journal_path = path_fold(env->journal_path);
    }
    hb->on_event = env->on_event;
    hb->ctx = env->ctx;
    hb->start_cfg = cfg;
    hb->sig_wfd = -1;
    hb->start_mono_ns = clock_mono_ns();
    pthread_mutex_init(&hb->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&hb->cond, &ca);
    pthread_condattr_destroy(&ca);
    hb->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (hb->wake_fd < 0) {
        loom_error_set(err, LOOM_ERR_IO, "heartbeat: eventfd: %s", strerror(errno));
        free_hb(hb);
        return NULL;
    }

    /* The thread takes no asynchronous signals: the process's handlers run
     * on the threads that expect EINTR, and reach us through the pipe. */
    int prc = sig_thread_create(&hb->thread, thread_main, hb);
    if (prc != 0) {
        loom_error_set(err, LOOM_ERR_INTERNAL, "heartbeat: cannot start its thread: %s",
                       strerror(prc));
        free_hb(hb);
        return NULL;
    }
    pthread_mutex_lock(&hb->mu);
    while (!hb->ready)
        pthread_cond_wait(&hb->cond, &hb->mu);
    pthread_mutex_unlock(&hb->mu);
    if (hb->start_rc < 0) {
        pthread_join(hb->thread, NULL);
        if (err)
            *err = hb->start_err;
        free_hb(hb);
        return NULL;
    }
    return hb;
}

void heartbeat_get_stats(heartbeat *hb, heartbeat_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!hb)
        return;
    out->ticks = atomic_load(&hb->ticks);
    out->candidates = atomic_load(&hb->candidates);
    out->gated = atomic_load(&hb->gated);
    out->emitted = atomic_load(&hb->emitted);
    out->duplicates = atomic_load(&hb->duplicates);
    out->errors = atomic_load(&hb->errors);
    out->cpu_ns = atomic_load(&hb->cpu_ns);
    out->wall_ns = clock_mono_ns() - hb->start_mono_ns;
    out->last_tick_ms = atomic_load(&hb->last_tick_ms);
}

void heartbeat_stop(heartbeat *hb, heartbeat_stats *final)
{
    if (!hb) {
        if (final)
            memset(final, 0, sizeof *final);
        return;
    }
    atomic_store(&hb->stop, true);
    wake(hb);
    pthread_join(hb->thread, NULL);
    if (final)
        heartbeat_get_stats(hb, final);
    hb->sig_wfd = -1;
    free_hb(hb);
}

void heartbeat_set_act(heartbeat *hb, bool running)
{
    if (!hb)
        return;
    if (running)
        atomic_fetch_add(&hb->act_epoch, 1);
    bool was = atomic_exchange(&hb->act_running, running);
    if (was != running && hb->T_hb_act != hb->T_hb)
        wake(hb);   /* the tick interval changed */
}

void heartbeat_note_own_write(heartbeat *hb, const char *path, const void *data, size_t len)
{
    if (!hb || !path || !*path)
        return;
    char *abs;
    if (path[0] == '/') {
        abs = path_fold(path);
    } else {
        char *joined = path_join(hb->cwd, path);
        abs = path_fold(joined);
        free(joined);
    }
    own_write o = {abs, data != NULL, data ? hb_content_hash(data, len) : 0, clock_wall_ms()};
    pthread_mutex_lock(&hb->mu);
    if (hb->n_own == hb->cap_own) {
        hb->cap_own = hb->cap_own ? hb->cap_own * 2 : 8;
        hb->own = xrealloc(hb->own, hb->cap_own * sizeof *hb->own);
    }
    assert(hb->n_own < hb->cap_own);
    hb->own[hb->n_own++] = o;
    pthread_mutex_unlock(&hb->mu);
}

int heartbeat_signal(heartbeat *hb, const char *name)
{
    if (!hb || hb->sig_wfd < 0)
        return -1;
    return watch_signal_send(hb->sig_wfd, name);
}

const char *heartbeat_signal_name(int signo)
{
    return watch_signal_name(signo);
}

bool heartbeat_takes_signals(const heartbeat *hb)
{
    return hb && hb->sig_wfd >= 0;
}

void heartbeat_tick_now(heartbeat *hb)
{
    if (!hb)
        return;
    pthread_mutex_lock(&hb->mu);
    uint64_t mine = ++hb->tick_requests;
    pthread_mutex_unlock(&hb->mu);
    wake(hb);
    pthread_mutex_lock(&hb->mu);
    while (hb->ticks_served < mine && !atomic_load(&hb->stop))
        pthread_cond_wait(&hb->cond, &hb->mu);
    pthread_mutex_unlock(&hb->mu);
}

journal *heartbeat_journal(heartbeat *hb)
{
    return hb ? hb->j : NULL;
}

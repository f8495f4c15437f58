/* feed.c — reading a run's events: the events page and the SSE feed, both
 * over the store (events_after), so a client sees exactly what is stored,
 * each event once, in seq order. A feed waits on its run's feed_cv, which
 * the service broadcasts when the writer has stored more of that run's
 * events (or the run ends), and reads the store only then.
 *
 * Owns the service_feed and its buffered page. Threading: a feed is used by
 * one thread (its stream connection); the page call by any HTTP thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "surfaces/server/runs/service_int.h"

#define FEED_PAGE 64

struct service_feed {
    service *svc;
    srv_run *r;
    int64_t cursor;     /* the last seq read from the store */
    unsigned mask;
    json_t *page;       /* events read, not given yet */
    bool completed;     /* run.completed was read: another worker's run has ended */
    size_t at;
};

static unsigned vis_bit(const json_t *ev)
{
    const char *v = json_string_value(json_object_get(ev, "visibility"));
    for (unsigned i = 0; v && i < LOOM_VISIBILITY_END; i++)
        if (!strcmp(v, loom_visibility_name((loom_visibility)i)))
            return 1u << i;
    return 1u << LOOM_VIS_USER;
}

static int check_mask(const principal *who, unsigned *mask, srv_error *err)
{
    if (*mask == 0)
        *mask = 1u << LOOM_VIS_USER | 1u << LOOM_VIS_SYSTEM;
    if ((*mask & 1u << LOOM_VIS_AUDIT) && !(who && who->audit))
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "visibility audit needs an audit token");
    return 0;
}

char *service_events_page(service *svc, const principal *who, const char *run_id,
                          int64_t after, int limit, unsigned vis_mask, srv_error *err)
{
    if (limit <= 0)
        limit = 200;
    if (limit > 1000)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "limit must be from 1 to 1000"), NULL;
    if (!svc_run_for(svc, who, run_id, ROLE_VIEWER, err) || check_mask(who, &vis_mask, err))
        return NULL;
    int64_t last = after;
    char *arr = svc->st->ops->events_after(svc->st, run_id, after < 0 ? 0 : after, limit, &last,
                                           err);
    if (!arr)
        return NULL;
    json_t *evs = json_loads(arr, 0, NULL);
    free(arr);
    json_t *items = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) if (vis_bit(e) & vis_mask) json_array_append(items, e);
    json_decref(evs);
    srv_error me = {0};
    int64_t max = svc->st->ops->max_seq(svc->st, run_id, &me);
    srv_error_clear(&me);
    json_t *o = json_object();
    json_object_set_new(o, "items", items);
    json_object_set_new(o, "next_after", json_integer(last));
    json_object_set_new(o, "has_more", json_boolean(max > last));
    return svc_dump(o);
}

service_feed *service_feed_open(service *svc, const principal *who, const char *run_id,
                                int64_t after, unsigned vis_mask, srv_error *err)
{
    srv_run *r = svc_run_for(svc, who, run_id, ROLE_VIEWER, err);
    if (!r || check_mask(who, &vis_mask, err))
        return NULL;
    service_feed *f = calloc(1, sizeof *f);
    f->svc = svc;
    f->r = r;
    f->cursor = after < 0 ? 0 : after;
    f->mask = vis_mask;
    pthread_mutex_lock(&svc->mu);
    f->completed = !run_state_active(r->state); /* ended before: its events are all stored */
    pthread_mutex_unlock(&svc->mu);
    return f;
}

int service_feed_next(service_feed *f, char **json, int64_t *seq, int timeout_ms)
{
    service *svc = f->svc;
    int64_t deadline = clock_mono_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        while (f->page && f->at < json_array_size(f->page)) {
            json_t *e = json_array_get(f->page, f->at++);
            int64_t s = json_integer_value(json_object_get(e, "seq"));
            f->cursor = s;
            if (!strcmp(json_string_value(json_object_get(e, "type")) ?: "", "run.completed"))
                f->completed = true;
            if (vis_bit(e) & f->mask) {
                *json = json_dumps(e, JSON_COMPACT);
                *seq = s;
                return 1;
            }
        }
        json_decref(f->page);
        f->page = NULL;
        f->at = 0;
        /* Read the store only when it holds more of this run than the
         * cursor; otherwise wait on the run's own condition variable. */
        pthread_mutex_lock(&svc->mu);
        for (;;) {
            if (f->r->stored_seq > f->cursor)
                break;
            /* Another worker's run: its document may say ended before its
             * last events are stored; the end is its run.completed. */
            if (!run_state_active(f->r->state) && f->cursor >= f->r->seq &&
                (!cluster_remote(svc, f->r) || f->completed))
                break;
            int64_t left = deadline - clock_mono_ms();
            if (left <= 0 || svc->stopping) {
                pthread_mutex_unlock(&svc->mu);
                return 0;
            }
            bool remote = cluster_remote(svc, f->r);
            if (remote && left > cluster_poll_ms(svc))
                left = cluster_poll_ms(svc); /* another worker stores it: read the store each
                                              * tick (a notice wakes it sooner) */
            struct timespec dl;
            clock_deadline(&dl, CLOCK_REALTIME, (int)left);
            pthread_cond_timedwait(&f->r->feed_cv, &svc->mu, &dl);
            if (remote) {
                pthread_mutex_unlock(&svc->mu);
                cluster_refresh(svc, f->r);
                pthread_mutex_lock(&svc->mu);
            }
        }
        bool more = f->r->stored_seq > f->cursor;
        const char *state = loom_run_state_name(f->r->state);
        pthread_mutex_unlock(&svc->mu);
        if (!more) {
            json_t *o = json_object();
            json_object_set_new(o, "state", json_string(state));
            *json = svc_dump(o);
            *seq = f->cursor;
            return -1;
        }
        srv_error err = {0};
        int64_t last = f->cursor;
        char *arr = svc->st->ops->events_after(svc->st, f->r->id, f->cursor, FEED_PAGE, &last,
                                               &err);
        srv_error_clear(&err);
        json_t *page = arr ? json_loads(arr, 0, NULL) : NULL;
        free(arr);
        if (json_array_size(page) > 0) {
            f->page = page;
            continue;
        }
        /* stored_seq said more, the store gave none (a failed read): do not
         * spin on it; the next call tries again. */
        json_decref(page);
        return 0;
    }
}

void service_feed_close(service_feed *f)
{
    if (!f)
        return;
    json_decref(f->page);
    free(f);
}

/* approvals.c — the approval registry: a mutex-guarded list of approvals
 * and one condition variable every waiter sleeps on.
 *
 * A run has at most a handful of approvals open at once, so lookup is a
 * linear scan. Expiry is decided on the monotonic clock (a wall-clock jump
 * must neither expire every approval nor keep one alive for a day); the
 * wall-clock times are kept only to be shown. Expiry is applied lazily by
 * every operation that looks at an approval, and by waiters when their
 * timed wait runs out. Waiters also wake every CANCEL_POLL_MS: cancellation
 * is an atomic flag (base/cancel.h), which cannot signal a condvar.
 */
#include "policy/approvals.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/str.h"
#include "base/clock.h"

/* Same cadence as clock_sleep_ms: fast enough that Ctrl-C feels immediate. */
#define CANCEL_POLL_MS 50
/* Longer than any sensible wait, and far from overflowing ns arithmetic. */
#define APPROVAL_MAX_TIMEOUT_MS (365LL * 24 * 3600 * 1000)

typedef struct entry {
    approval a;
    int64_t expires_mono_ns;
} entry;

struct approval_registry {
    pthread_mutex_t lock;
    pthread_cond_t changed;    /* broadcast on resolve, expiry and removal */
    entry **items;             /* creation order */
    size_t n, cap;
};

const char *approval_status_name(approval_status s)
{
    switch (s) {
    case APPROVAL_PENDING: return "pending";
    case APPROVAL_APPROVED: return "approved";
    case APPROVAL_REJECTED: return "rejected";
    case APPROVAL_EXPIRED: return "expired";
    }
    return "pending";
}

approval_registry *approval_registry_new(void)
{
    approval_registry *reg = xcalloc(1, sizeof *reg);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_mutex_init(&reg->lock, NULL) || pthread_cond_init(&reg->changed, &ca)) {
        pthread_condattr_destroy(&ca);
        free(reg);
        return NULL;
    }
    pthread_condattr_destroy(&ca);
    return reg;
}

void approval_clear(approval *a)
{
    if (!a)
        return;
    free(a->run_id);
    free(a->kind);
    free(a->question);
    free(a->reason);
    json_decref(a->context);
    memset(a, 0, sizeof *a);
}

void approval_registry_free(approval_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++) {
        approval_clear(&reg->items[i]->a);
        free(reg->items[i]);
    }
    free(reg->items);
    pthread_cond_destroy(&reg->changed);
    pthread_mutex_destroy(&reg->lock);
    free(reg);
}

static char *dup_or_null(const char *s)
{
    return xstrdup(s);
}

/* Copies src into dst (which must be cleared). Context is deep-copied so
 * the snapshot shares no json_t with the registry across threads. 0 or -1
 * when out of memory. */
static int snapshot(const approval *src, approval *dst)
{
    memset(dst, 0, sizeof *dst);
    memcpy(dst->id, src->id, sizeof dst->id);
    dst->status = src->status;
    dst->created_at_ms = src->created_at_ms;
    dst->expires_at_ms = src->expires_at_ms;
    dst->resolved_at_ms = src->resolved_at_ms;
    dst->always = src->always;
    dst->run_id = dup_or_null(src->run_id);
    dst->kind = dup_or_null(src->kind);
    dst->question = dup_or_null(src->question);
    dst->reason = dup_or_null(src->reason);
    dst->context = src->context ? json_deep_copy(src->context) : NULL;
    if ((src->run_id && !dst->run_id) || (src->kind && !dst->kind) ||
        (src->question && !dst->question) || (src->reason && !dst->reason) ||
        (src->context && !dst->context)) {
        approval_clear(dst);
        return -1;
    }
    return 0;
}

/* Under the lock. Marks e expired when its time is up; true if it did. */
static bool expire_if_due(approval_registry *reg, entry *e, int64_t now_mono_ns)
{
    if (e->a.status != APPROVAL_PENDING || now_mono_ns < e->expires_mono_ns)
        return false;
    e->a.status = APPROVAL_EXPIRED;
    e->a.resolved_at_ms = e->a.expires_at_ms;
    pthread_cond_broadcast(&reg->changed);
    return true;
}

/* Under the lock. */
static entry *find(approval_registry *reg, const char *id, size_t *index)
{
    for (size_t i = 0; id && i < reg->n; i++)
        if (!strcmp(reg->items[i]->a.id, id)) {
            if (index)
                *index = i;
            return reg->items[i];
        }
    return NULL;
}

static int not_found(loom_error *err, const char *id)
{
    return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no approval with id %s",
                          id ? id : "(null)");
}

int approval_create(approval_registry *reg, const approval_request *req,
                    char id_out[UUID_STR_LEN], loom_error *err)
{
    if (!reg || !req)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "approval_create: no request");
    if (req->timeout_ms < 0 || req->timeout_ms > APPROVAL_MAX_TIMEOUT_MS)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "approval timeout must be between 1 ms and 365 days (got %lld ms)",
                              (long long)req->timeout_ms);
    entry *e = xcalloc(1, sizeof *e);
    int64_t timeout = req->timeout_ms ? req->timeout_ms : APPROVAL_DEFAULT_TIMEOUT_MS;
    uuid_v7(e->a.id);
    e->a.status = APPROVAL_PENDING;
    e->a.created_at_ms = clock_wall_ms();
    e->a.expires_at_ms = e->a.created_at_ms + timeout;
    e->expires_mono_ns = clock_mono_ns() + timeout * 1000000;
    e->a.run_id = xstrdup(req->run_id ? req->run_id : "");
    e->a.kind = xstrdup(req->kind ? req->kind : "tool_execution");
    e->a.question = xstrdup(req->question ? req->question : "");
    e->a.context = req->context ? json_deep_copy(req->context) : json_object();

    pthread_mutex_lock(&reg->lock);
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 8;
        reg->items = xrealloc(reg->items, cap * sizeof *reg->items);
        reg->cap = cap;
    }
    reg->items[reg->n++] = e;
    memcpy(id_out, e->a.id, UUID_STR_LEN);
    pthread_mutex_unlock(&reg->lock);
    return 0;
}

/* Under the lock: a snapshot of e into out (when given). */
static int copy_out(entry *e, approval *out, loom_error *err)
{
    if (out && snapshot(&e->a, out))
        return loom_error_set(err, LOOM_ERR_INTERNAL, "out of memory copying approval %s",
                              e->a.id);
    return 0;
}

int approval_wait(approval_registry *reg, const char *id, const loom_cancel *cancel,
                  approval *out, loom_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    pthread_mutex_lock(&reg->lock);
    int rc;
    for (;;) {
        entry *e = find(reg, id, NULL);
        if (!e) {
            rc = not_found(err, id);
            break;
        }
        int64_t now = clock_mono_ns();
        expire_if_due(reg, e, now);
        if (e->a.status != APPROVAL_PENDING) {
            rc = copy_out(e, out, err);
            break;
        }
        if (cancel_requested(cancel)) {
            rc = loom_error_set(err, LOOM_ERR_RUN_CANCELLED,
                                "cancelled while waiting for approval %s", id);
            break;
        }
        /* Sleep until the approval expires, or the next cancel poll when a
         * cancel flag is watched — whichever is first. */
        int64_t until = e->expires_mono_ns;
        if (cancel && until > now + CANCEL_POLL_MS * 1000000LL)
            until = now + CANCEL_POLL_MS * 1000000LL;
        struct timespec ts = {.tv_sec = (time_t)(until / 1000000000),
                              .tv_nsec = (long)(until % 1000000000)};
        int w = pthread_cond_timedwait(&reg->changed, &reg->lock, &ts);
        if (w && w != ETIMEDOUT && w != EINTR) {
            rc = loom_error_set(err, LOOM_ERR_INTERNAL, "waiting for approval %s: error %d", id,
                                w);
            break;
        }
    }
    pthread_mutex_unlock(&reg->lock);
    return rc;
}

int approval_resolve(approval_registry *reg, const char *id, bool allow, bool always,
                     const char *reason, loom_error *err)
{
    char *why = xstrdup(reason);
    pthread_mutex_lock(&reg->lock);
    int rc = 0;
    entry *e = find(reg, id, NULL);
    if (!e) {
        rc = not_found(err, id);
    } else if (expire_if_due(reg, e, clock_mono_ns()) || e->a.status == APPROVAL_EXPIRED) {
        char at[32];
        clock_iso8601(e->a.expires_at_ms, at);
        rc = loom_error_set(err, LOOM_ERR_RUN_APPROVAL_EXPIRED,
                            "approval %s expired at %s before it was answered", id, at);
    } else if (e->a.status != APPROVAL_PENDING) {
        rc = loom_error_set(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                            "approval %s is already %s", id, approval_status_name(e->a.status));
    } else {
        e->a.status = allow ? APPROVAL_APPROVED : APPROVAL_REJECTED;
        e->a.always = allow && always;
        e->a.resolved_at_ms = clock_wall_ms();
        e->a.reason = why;
        why = NULL;
        pthread_cond_broadcast(&reg->changed);
    }
    pthread_mutex_unlock(&reg->lock);
    free(why);
    return rc;
}

int approval_get(approval_registry *reg, const char *id, approval *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&reg->lock);
    entry *e = find(reg, id, NULL);
    int rc;
    if (!e) {
        rc = not_found(err, id);
    } else {
        expire_if_due(reg, e, clock_mono_ns());
        rc = copy_out(e, out, err);
    }
    pthread_mutex_unlock(&reg->lock);
    return rc;
}

int approval_remove(approval_registry *reg, const char *id, loom_error *err)
{
    pthread_mutex_lock(&reg->lock);
    size_t i;
    entry *e = find(reg, id, &i);
    if (!e) {
        pthread_mutex_unlock(&reg->lock);
        return not_found(err, id);
    }
    memmove(&reg->items[i], &reg->items[i + 1], (reg->n - i - 1) * sizeof *reg->items);
    reg->n--;
    pthread_cond_broadcast(&reg->changed);
    pthread_mutex_unlock(&reg->lock);
    approval_clear(&e->a);
    free(e);
    return 0;
}

static json_t *iso_or_null(int64_t ms)
{
    if (!ms)
        return json_null();
    char buf[32];
    clock_iso8601(ms, buf);
    return json_string(buf);
}

json_t *approval_to_json(const approval *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "approval_id", json_string(a->id));
    json_object_set_new(o, "run_id", json_string(a->run_id ? a->run_id : ""));
    json_object_set_new(o, "kind", json_string(a->kind ? a->kind : "tool_execution"));
    json_object_set_new(o, "status", json_string(approval_status_name(a->status)));
    json_object_set_new(o, "question", json_string(a->question ? a->question : ""));
    json_object_set_new(o, "context", a->context ? json_deep_copy(a->context) : json_object());
    json_object_set_new(o, "created_at", iso_or_null(a->created_at_ms));
    json_object_set_new(o, "expires_at", iso_or_null(a->expires_at_ms));
    json_object_set_new(o, "resolved_at", iso_or_null(a->resolved_at_ms));
    if (a->status == APPROVAL_APPROVED || a->status == APPROVAL_REJECTED) {
        json_t *d = json_object();
        json_object_set_new(d, "always", json_boolean(a->always));
        json_object_set_new(d, "reason", a->reason ? json_string(a->reason) : json_null());
        json_object_set_new(o, "decision", d);
    } else {
        json_object_set_new(o, "decision", json_null());
    }
    return o;
}

json_t *approval_list_pending(approval_registry *reg, const char *run_id)
{
    json_t *arr = json_array();
    pthread_mutex_lock(&reg->lock);
    int64_t now = clock_mono_ns();
    for (size_t i = 0; i < reg->n; i++) {
        entry *e = reg->items[i];
        expire_if_due(reg, e, now);
        if (e->a.status != APPROVAL_PENDING || (run_id && strcmp(run_id, e->a.run_id)))
            continue;
        json_array_append_new(arr, approval_to_json(&e->a));
    }
    pthread_mutex_unlock(&reg->lock);
    return arr;
}

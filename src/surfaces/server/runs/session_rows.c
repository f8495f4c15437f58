/* session_rows.c — a server session's loom transcript kept as the store's
 * rows (store.h records_append/records_load) when the store has them
 * (PostgreSQL): the loom_session_rows port the exec thread hands to
 * loom_session_new_rows / loom_session_resume_rows.
 *
 * Every batch is fenced by the lease of the run the session works on
 * (svc_fence): a worker that lost the run (it stalled past its lease and
 * another worker claimed it) has its append refused by the database,
 * nothing of it stored, and the run is abandoned here (cluster_fenced) —
 * the transcript, seeing the refusal, writes nothing to its file either.
 * A run this worker has given up already is not sent to the database at
 * all: its records stay in the worker's working copy, as its events are
 * dropped, so its loom run winds down as any cancelled one does.
 *
 * Owns nothing (the port lives in the srv_session). Threading: called on
 * the session's exec thread (the transcript's one user); svc->mu taken to
 * read the active run and its fence, never held over a store call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/runs/service_int.h"

static int rows_append(void *ctx, const char *session_id, size_t first_seq,
                       const char *const *lines, size_t n, char **err)
{
    srv_session *s = ctx;
    service *svc = s->owner;
    char run_id[SVC_ID_LEN] = "";
    pthread_mutex_lock(&svc->mu);
    srv_run *r = s->active;
    int64_t epoch = r ? svc_fence(svc, r) : 0;
    if (r)
        snprintf(run_id, sizeof run_id, "%s", r->id);
    pthread_mutex_unlock(&svc->mu);
    if (epoch == WRITER_DROP) {
        /* Given up here already: its loom run winds down as its events
         * do (dropped), with the records in this worker's copy only — a
         * copy that is rewritten from the rows before it is used again. */
        fprintf(stderr, "loom-serve: %s: record %zu of session %s (run %s) not stored: "
                "the run was given up here (its lease went to another worker)\n",
                svc->worker_id, first_seq, session_id, run_id);
        return 0;
    }
    store_fence fence = {svc->worker_id, epoch};
    srv_error e = {0};
    int rc = svc->st->ops->records_append(svc->st, session_id, (int64_t)first_seq, lines, n,
                                          run_id, &fence, &e);
    if (rc == STORE_FENCED)
        cluster_fenced(svc, run_id, epoch);
    if (rc != 0) {
        *err = strdup(e.message[0] ? e.message : "the store refused the records");
        fprintf(stderr, "loom-serve: %s: record %zu of session %s (run %s) not stored: %s\n",
                svc->worker_id, first_seq, session_id, run_id, *err);
    }
    srv_error_clear(&e);
    return rc == 0 ? 0 : -1;
}

static char *rows_load(void *ctx, const char *session_id, size_t *len, char **err)
{
    srv_session *s = ctx;
    srv_error e = {0};
    char *buf = s->owner->st->ops->records_load(s->owner->st, session_id, len, &e);
    if (!buf)
        *err = strdup(e.message[0] ? e.message : "the store failed");
    srv_error_clear(&e);
    return buf;
}

const loom_session_rows *session_rows(service *svc, srv_session *s)
{
    if (!svc->st->ops->records_append || !svc->st->ops->records_load)
        return NULL;
    s->owner = svc;
    s->rows = (loom_session_rows){.ctx = s, .append = rows_append, .load = rows_load};
    return &s->rows;
}

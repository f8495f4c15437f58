/* store_pg_listen.c — the PostgreSQL store's notices to the workers
 * sharing it (store.h listen): a dedicated connection that LISTENs on the
 * channels the schema's triggers NOTIFY (step 4, store_pg.c):
 *
 *   loom_events    "RUN_ID SEQ"    an event of the run was stored
 *   loom_controls  "RUN_ID"        a control for the run's holder was sent
 *   loom_runs      "RUN_ID STATE"  a run document was stored (queued: work
 *                                  for an idle worker)
 *
 * A notification is sent at the commit of the transaction that made it, so
 * what it names is readable by then; it carries only ids (the row itself is
 * read from its table), which keeps the payload far under NOTIFY's 8000
 * bytes and the table the one truth.
 *
 * Why a thread of its own and not the server's poll loop: the store sits
 * below the HTTP layer (DESIGN.md's layers) and must not know its loop;
 * the thread only sleeps in poll(2) on the connection's socket and a pipe
 * that close writes to, so it costs nothing while idle. A notification is
 * lost while the connection is down, so after every (re)connection the
 * callback gets STORE_NOTICE_RESYNC: the service then reads what it waits
 * for as it would by polling. The callers keep a slow poll anyway (a lease
 * that expires makes no notification).
 *
 * Threading: the listener thread calls fn; pg_listen and pg_listen_stop on
 * the thread that opens and closes the store. */
#include "surfaces/server/store/store_pg_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LISTEN_SQL "LISTEN loom_events; LISTEN loom_controls; LISTEN loom_runs"
#define RECONNECT_MS 1000

/* Connects and LISTENs; NULL when the database cannot be reached now. */
static PGconn *listen_connect(pg_store *q)
{
    srv_error err = {0};
    PGconn *c = pg_connect(q, "listen", &err);
    if (!c)
        return NULL;
    PGresult *r = PQexec(c, LISTEN_SQL);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok || PQsetnonblocking(c, 1) != 0) {
        PQfinish(c);
        return NULL;
    }
    return c;
}

int store_pg_notice_parse(const char *channel, const char *payload, store_notice *what,
                          char *run, size_t cap, const char **state, int64_t *seq)
{
    const char *p = payload ? payload : "";
    const char *sp = strchr(p, ' ');
    size_t len = sp ? (size_t)(sp - p) : strlen(p);
    if (!channel || len == 0 || len >= cap)
        return -1;
    memcpy(run, p, len);
    run[len] = '\0';
    const char *rest = sp ? sp + 1 : "";
    *state = "";
    *seq = 0;
    if (!strcmp(channel, "loom_events")) {
        char *end = NULL;
        long long n = strtoll(rest, &end, 10);
        if (end == rest || *end != '\0' || n <= 0)
            return -1;
        *what = STORE_NOTICE_EVENT;
        *seq = n;
    } else if (!strcmp(channel, "loom_controls")) {
        if (sp)
            return -1;
        *what = STORE_NOTICE_CONTROL;
    } else if (!strcmp(channel, "loom_runs")) {
        if (!sp)
            return -1;
        *what = STORE_NOTICE_RUN;
        *state = rest;
    } else {
        return -1;
    }
    return 0;
}

/* One notification to the callback; a payload not of our form is ignored
 * (another program may NOTIFY on a channel of the same name). */
static void dispatch(pg_store *q, const PGnotify *n)
{
    char run[256];
    store_notice what;
    const char *state;
    int64_t seq;
    if (store_pg_notice_parse(n->relname, n->extra, &what, run, sizeof run, &state, &seq) == 0)
        q->notice_fn(q->notice_ctx, what, run, state, seq);
}

static void *listen_main(void *arg)
{
    pg_store *q = arg;
    PGconn *c = NULL;
    for (;;) {
        if (!c && (c = listen_connect(q)))
            q->notice_fn(q->notice_ctx, STORE_NOTICE_RESYNC, "", "", 0);
        struct pollfd fds[2] = {{.fd = q->listen_pipe[0], .events = POLLIN},
                                {.fd = c ? PQsocket(c) : -1, .events = POLLIN}};
        int k = poll(fds, c ? 2 : 1, c ? -1 : RECONNECT_MS);
        if (k < 0 && errno != EINTR)
            break;
        if (fds[0].revents)
            break; /* pg_listen_stop */
        if (!c || !fds[1].revents)
            continue;
        if (!PQconsumeInput(c) || PQstatus(c) != CONNECTION_OK) {
            PQfinish(c); /* dropped: reconnect (after a pause) and resync */
            c = NULL;
            struct pollfd w = {.fd = q->listen_pipe[0], .events = POLLIN};
            if (poll(&w, 1, RECONNECT_MS) > 0)
                break;
            continue;
        }
        PGnotify *n;
        while ((n = PQnotifies(c))) {
            dispatch(q, n);
            PQfreemem(n);
        }
    }
    if (c)
        PQfinish(c);
    return NULL;
}

int pg_listen(store *s, store_notice_fn fn, void *ctx, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (q->listening)
        return srv_fail(err, LOOM_ERR_INTERNAL, "store %s: listen: already listening", q->shown);
    q->notice_fn = fn;
    q->notice_ctx = ctx;
    if (pipe(q->listen_pipe) != 0)
        return srv_fail(err, LOOM_ERR_IO, "store %s: listen: pipe: %s", q->shown, strerror(errno));
    if (pthread_create(&q->listen_thr, NULL, listen_main, q) != 0) {
        close(q->listen_pipe[0]);
        close(q->listen_pipe[1]);
        return srv_fail(err, LOOM_ERR_INTERNAL, "store %s: listen: no thread", q->shown);
    }
    q->listening = true;
    return 0;
}

void pg_listen_stop(pg_store *q)
{
    if (!q->listening)
        return;
    ssize_t w = write(q->listen_pipe[1], "x", 1);
    (void)w;
    pthread_join(q->listen_thr, NULL);
    close(q->listen_pipe[0]);
    close(q->listen_pipe[1]);
    q->listening = false;
}

void pg_unlisten(store *s)
{
    pg_listen_stop((pg_store *)s);
}

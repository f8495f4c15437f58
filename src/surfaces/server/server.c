/* server.c — the server object (server.h): owns the config objects, the
 * store, webhooks, the service and the HTTP daemon, and the order they are
 * made and freed in (the daemon stops first so no handler is inside the
 * service when it is freed; the store closes last because everything
 * writes to it).
 *
 * Called from main's thread only. */
#include "surfaces/server/server.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "surfaces/server/config/objects.h"
#include "surfaces/server/http/http.h"
#include "surfaces/server/runs/service.h"
#include "surfaces/server/store/store.h"
#include "surfaces/server/webhooks/webhooks.h"

struct loom_server {
    char *host;
    int port;
    char *store_spec;
    char *workspace;
    bool resume_on_restart;
    int keepalive_ms;
    server_options cl;        /* slots and the cluster fields (worker_id is borrowed) */
    server_objects *objs;
    store *st;
    webhooks *wh;
    service *svc;
    http_server *http;
};

bool server_host_is_loopback(const char *host)
{
    if (!host)
        return true;
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
        strcmp(host, "[::1]") == 0)
        return true;
    /* 127.0.0.0/8, written as a dotted quad */
    unsigned a, b, c, d;
    char tail;
    return sscanf(host, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 &&
           c < 256 && d < 256;
}

/* sqlite:$LOOM_HOME/loom.db, LOOM_HOME defaulting to ~/.loom. */
static char *default_store_spec(void)
{
    loom_str s = LOOM_STR_INIT;
    const char *home = getenv("LOOM_HOME");
    if (home && *home) {
        str_printf(&s, "sqlite:%s/loom.db", home);
    } else {
        const char *h = getenv("HOME");
        str_printf(&s, "sqlite:%s/.loom/loom.db", h && *h ? h : ".");
    }
    return str_steal(&s);
}

loom_server *server_new(const server_options *opts, srv_error *err)
{
    char cwd[PATH_MAX], real[PATH_MAX];
    const char *ws = opts->workspace;
    if (!ws) {
        if (!getcwd(cwd, sizeof cwd)) {
            srv_fail(err, LOOM_ERR_IO, "cannot read the current folder");
            return NULL;
        }
        ws = cwd;
    }
    if (!realpath(ws, real)) {
        srv_fail(err, LOOM_ERR_CONFIG, "--workspace %s: no such folder", ws);
        return NULL;
    }
    server_objects *objs = objects_load_all(opts->config_dir, real, err);
    if (!objs)
        return NULL;
    loom_server *s = xcalloc(1, sizeof *s);
    s->objs = objs;
    s->workspace = xstrdup(real);
    s->host = xstrdup(opts->host ? opts->host : "127.0.0.1");
    s->port = opts->port;
    s->store_spec = opts->store_spec ? xstrdup(opts->store_spec) : default_store_spec();
    s->resume_on_restart = opts->resume_on_restart;
    s->cl = *opts;
    s->cl.cluster = opts->cluster || opts->worker_only || opts->api_only;
    s->keepalive_ms = opts->keepalive_ms > 0 ? opts->keepalive_ms : 15000;
    return s;
}

size_t server_token_count(const loom_server *s)
{
    return s ? objects_token_count(s->objs) : 0;
}

int server_start(loom_server *s, srv_error *err)
{
    s->st = store_open(s->store_spec, err);
    if (!s->st)
        return -1;
    s->wh = webhooks_new(s->st, NULL, err);
    if (!s->wh)
        return -1;
    service_options so = {
        .workspace = s->workspace,
        .resume_on_restart = s->resume_on_restart,
        .max_active_runs = s->cl.slots,
        .cluster = s->cl.cluster,
        .api_only = s->cl.api_only,
        .worker_id = s->cl.worker_id,
        .lease_ms = s->cl.lease_ms,
    };
    s->svc = service_new(&so, s->st, s->objs, s->wh, err);
    if (!s->svc)
        return -1;
    /* A bracketed IPv6 literal is an address without its brackets. */
    char host[256];
    snprintf(host, sizeof host, "%s", s->host);
    size_t hl = strlen(host);
    if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    http_options ho = {
        .host = host,
        .port = s->port,
        .keepalive_ms = s->keepalive_ms,
        .health_only = s->cl.worker_only,
    };
    s->http = http_start(&ho, &http_backend_service, s->svc, s->objs, err);
    if (!s->http)
        return -1;
    s->port = http_port(s->http);
    return 0;
}

int server_port(const loom_server *s)
{
    return s ? s->port : 0;
}

const char *server_host(const loom_server *s)
{
    return s ? s->host : NULL;
}

void server_free(loom_server *s)
{
    if (!s)
        return;
    http_stop(s->http);
    if (s->svc)
        service_free(s->svc);
    if (s->wh) {
        webhooks_flush(s->wh, 2000); /* give queued deliveries a moment, not forever */
        webhooks_free(s->wh);
    }
    store_close(s->st);
    if (s->objs)
        objects_free(s->objs);
    free(s->host);
    free(s->store_spec);
    free(s->workspace);
    free(s);
}

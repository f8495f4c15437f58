/* main.c — the loom-serve program (`loom serve` execs it): flags, the
 * non-loopback guard, the port file, and the wait for SIGTERM/SIGINT that
 * stops the server cleanly (docs/server.md, "Running it").
 *
 * Exit status: 0 after a signal stopped it, 1 when it could not start (the
 * store, the listen address), 2 for a bad flag, a bad config, or a
 * non-loopback address without a token file.
 *
 * Threading: SIGTERM, SIGINT and SIGHUP are blocked before any thread
 * starts, so every thread inherits the mask and only sigwait here takes
 * them; nothing runs in a signal handler. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/str.h"
#include "loom.h"
#include "surfaces/server/server.h"

static void usage(FILE *to)
{
    fputs("usage: loom-serve [--listen HOST:PORT] [--store STORE] [--config DIR]\n"
          "                  [--workspace DIR] [--resume-on-restart] [--keepalive-ms N]\n"
          "                  [--port-file FILE] [--slots N] [--cluster] [--worker-only]\n"
          "                  [--api-only] [--worker-id NAME] [--lease-ms N] [--help] [--version]\n"
          "\n"
          "  --listen HOST:PORT   where to listen (default 127.0.0.1:8787; port 0: any free\n"
          "                       port). A non-loopback address needs --config with tokens.\n"
          "  --store STORE        the store: sqlite:PATH (default sqlite:$LOOM_HOME/loom.db)\n"
          "                       or a PostgreSQL URL, postgresql://USER@HOST/DATABASE\n"
          "                       (docs/server-store.md)\n"
          "  --config DIR         profiles.yaml, policies.yaml, knowledge_sources.yaml,\n"
          "                       tenants.yaml (docs/server-config.md)\n"
          "  --workspace DIR      the default project's folder (default: the current one)\n"
          "  --resume-on-restart  resume the runs a crash stopped, instead of failing them\n"
          "  --keepalive-ms N     SSE keep-alive comment period (default 15000)\n"
          "  --port-file FILE     write the port listened on to FILE once listening\n"
          "  --slots N            runs executing at once in this process (default 1024)\n"
          "  --cluster            one worker of several sharing a PostgreSQL store: runs\n"
          "                       are claimed into renewed leases (docs/deploy.md)\n"
          "  --worker-only        --cluster, and no HTTP API but /healthz\n"
          "  --api-only           --cluster, and claims no runs (an API node)\n"
          "  --worker-id NAME     this worker's name in leases (default host:pid)\n"
          "  --lease-ms N         lease length, renewed every third (default 15000)\n",
          to);
}

/* HOST:PORT, HOST possibly a bracketed IPv6 literal. */
static int parse_listen(const char *arg, char **host, int *port)
{
    const char *colon = strrchr(arg, ':');
    if (!colon || colon == arg || !colon[1])
        return -1;
    if (arg[0] == '[' && colon[-1] != ']')
        return -1;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || *end || p < 0 || p > 65535)
        return -1;
    *host = xstrndup(arg, (size_t)(colon - arg));
    *port = (int)p;
    return 0;
}

/* The port, written to a temp file and renamed over FILE, so a reader
 * polling for it never sees a half-written number. */
static int write_port_file(const char *path, int port)
{
    loom_str tmp = LOOM_STR_INIT;
    str_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp.ptr, "w");
    int rc = -1;
    if (f) {
        bool ok = fprintf(f, "%d\n", port) > 0;
        ok = fclose(f) == 0 && ok;
        rc = ok && rename(tmp.ptr, path) == 0 ? 0 : -1;
        if (rc != 0)
            unlink(tmp.ptr);
    }
    str_free(&tmp);
    return rc;
}

/* Each connection (a stream is one for the run's life) and each run's
 * model connection is a file descriptor; the usual soft limit of 1024 would
 * cap the server far below its connection limit, so take the hard one. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
        return;
    rlim_t want = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
    if (want <= rl.rlim_cur)
        return;
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
}

enum { OPT_RESUME = 256, OPT_KEEPALIVE, OPT_PORT_FILE, OPT_VERSION, OPT_SLOTS, OPT_CLUSTER,
       OPT_WORKER_ONLY, OPT_API_ONLY, OPT_WORKER_ID, OPT_LEASE };

/* The worker options (--slots, --cluster, --worker-only, --api-only,
 * --worker-id, --lease-ms) into o; -1 after a message for a bad value. */
static int cluster_opt(int c, const char *arg, server_options *o)
{
    switch (c) {
    case OPT_SLOTS:
    case OPT_LEASE: {
        char *end;
        errno = 0;
        long v = strtol(arg, &end, 10);
        long lo = c == OPT_SLOTS ? 1 : 300, hi = c == OPT_SLOTS ? 100000 : 3600000;
        if (errno || *end || v < lo || v > hi) {
            fprintf(stderr, "loom serve: --%s wants %ld to %ld, not \"%s\"\n",
                    c == OPT_SLOTS ? "slots" : "lease-ms", lo, hi, arg);
            return -1;
        }
        *(c == OPT_SLOTS ? &o->slots : &o->lease_ms) = (int)v;
        return 0;
    }
    case OPT_CLUSTER:
        o->cluster = true;
        return 0;
    case OPT_WORKER_ONLY:
        o->worker_only = true;
        return 0;
    case OPT_API_ONLY:
        o->api_only = true;
        return 0;
    default: /* OPT_WORKER_ID */
        o->worker_id = arg;
        return 0;
    }
}

static const struct option longopts[] = {
    {"listen", required_argument, NULL, 'l'},
    {"store", required_argument, NULL, 's'},
    {"config", required_argument, NULL, 'c'},
    {"workspace", required_argument, NULL, 'w'},
    {"resume-on-restart", no_argument, NULL, OPT_RESUME},
    {"keepalive-ms", required_argument, NULL, OPT_KEEPALIVE},
    {"port-file", required_argument, NULL, OPT_PORT_FILE},
    {"slots", required_argument, NULL, OPT_SLOTS},
    {"cluster", no_argument, NULL, OPT_CLUSTER},
    {"worker-only", no_argument, NULL, OPT_WORKER_ONLY},
    {"api-only", no_argument, NULL, OPT_API_ONLY},
    {"worker-id", required_argument, NULL, OPT_WORKER_ID},
    {"lease-ms", required_argument, NULL, OPT_LEASE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
    server_options o = {.host = NULL, .port = 8787};
    char *host = NULL;
    const char *port_file = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            free(host);
            host = NULL;
            if (parse_listen(optarg, &host, &o.port) != 0) {
                fprintf(stderr, "loom serve: --listen wants HOST:PORT, not \"%s\"\n", optarg);
                usage(stderr);
                return 2;
            }
            break;
        case 's':
            o.store_spec = optarg;
            break;
        case 'c':
            o.config_dir = optarg;
            break;
        case 'w':
            o.workspace = optarg;
            break;
        case OPT_RESUME:
            o.resume_on_restart = true;
            break;
        case OPT_KEEPALIVE: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || *end || v < 10 || v > 3600000) {
                fprintf(stderr, "loom serve: --keepalive-ms wants 10 to 3600000, not \"%s\"\n",
                        optarg);
                free(host);
                return 2;
            }
            o.keepalive_ms = (int)v;
            break;
        }
        case OPT_SLOTS:
        case OPT_LEASE:
        case OPT_CLUSTER:
        case OPT_WORKER_ONLY:
        case OPT_API_ONLY:
        case OPT_WORKER_ID:
            if (cluster_opt(c, optarg, &o) != 0) {
                free(host);
                return 2;
            }
            break;
        case OPT_PORT_FILE:
            port_file = optarg;
            break;
        case 'h':
            usage(stdout);
            free(host);
            return 0;
        case OPT_VERSION:
            printf("loom-serve %s\n", loom_version());
            free(host);
            return 0;
        default:
            fprintf(stderr, "loom serve: unknown or incomplete option \"%s\"\n",
                    argv[optind - 1]);
            usage(stderr);
            free(host);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "loom serve: unexpected argument \"%s\"\n", argv[optind]);
        usage(stderr);
        free(host);
        return 2;
    }
    if (o.worker_only && o.api_only) {
        fprintf(stderr, "loom serve: --worker-only and --api-only exclude each other\n");
        free(host);
        return 2;
    }
    o.host = host ? host : "127.0.0.1";

    /* Before any thread exists: see the opening comment. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();

    srv_error err = {0};
    loom_server *s = server_new(&o, &err);
    if (!s) {
        fprintf(stderr, "loom serve: %s\n", err.message);
        srv_error_clear(&err);
        free(host);
        return 2;
    }
    if (!server_host_is_loopback(o.host) && server_token_count(s) == 0) {
        fprintf(stderr,
                "loom serve: listening on %s (not a loopback address) needs a token file: "
                "--config DIR with at least one token in DIR/tenants.yaml\n",
                o.host);
        server_free(s);
        free(host);
        return 2;
    }
    if (server_start(s, &err) != 0) {
        fprintf(stderr, "loom serve: %s\n", err.message);
        int code = err.code == LOOM_ERR_CONFIG ? 2 : 1;
        srv_error_clear(&err);
        server_free(s);
        free(host);
        return code;
    }
    int port = server_port(s);
    if (port_file && write_port_file(port_file, port) != 0) {
        fprintf(stderr, "loom serve: cannot write the port file %s: %s\n", port_file,
                strerror(errno));
        server_free(s);
        free(host);
        return 1;
    }
    printf("loom serve: listening on http://%s:%d\n", o.host, port);
    fflush(stdout);

    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "loom serve: %s, stopping\n", strsignal(sig));
    server_free(s);
    free(host);
    return 0;
}

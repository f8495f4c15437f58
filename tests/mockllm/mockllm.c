/* mockllm.c — entry point of the scripted model server: parses the command
 * line, loads the scenario, listens on loopback with one thread per
 * connection (so slow and stalling streams are plain blocking code),
 * publishes the bound port, and shuts down cleanly on SIGTERM/SIGINT. */
#include "mockllm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: mockllm --scenario FILE [--port N] [--port-file FILE] [--log FILE]\n"
          "               [--host 127.0.0.1]\n"
          "  --port 0 (the default) picks an ephemeral port; the bound port is\n"
          "  written to --port-file and printed as 'mockllm listening on HOST:PORT'.\n"
          "  Scenario format: tests/mockllm/README.md\n",
          f);
}

static _Noreturn void die_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "mockllm: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    usage(stderr);
    exit(2);
}

/* Writes "PORT\n" via a temporary file and rename(), so a test polling for
 * the file never reads a half-written number. */
static int write_port_file(const char *path, unsigned port)
{
    char *tmp = xprintf("%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int rc = -1;
    if (f) {
        bool ok = fprintf(f, "%u\n", port) > 0;
        ok = (fclose(f) == 0) && ok;
        if (ok && rename(tmp, path) == 0)
            rc = 0;
    }
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

typedef struct {
    const char *scenario, *port_file, *log, *host;
    long port;
} options;

static options parse_args(int argc, char **argv)
{
    options o = {.host = "127.0.0.1"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        static const char *const names[] = {"--scenario", "--port", "--port-file",
                                            "--log", "--host"};
        const char *val = NULL;
        size_t which = 0;
        for (; which < 5; which++) {
            size_t n = strlen(names[which]);
            if (!strcmp(a, names[which])) {
                if (i + 1 >= argc)
                    die_usage("missing value for", a);
                val = argv[++i];
                break;
            }
            if (!strncmp(a, names[which], n) && a[n] == '=') {
                val = a + n + 1;
                break;
            }
        }
        if (!val)
            die_usage("unknown argument", a);
        switch (which) {
        case 0: o.scenario = val; break;
        case 1: {
            char *end;
            errno = 0;
            o.port = strtol(val, &end, 10);
            if (errno || *end || end == val || o.port < 0 || o.port > 65535)
                die_usage("--port must be 0..65535", val);
            break;
        }
        case 2: o.port_file = val; break;
        case 3: o.log = val; break;
        default: o.host = val; break;
        }
    }
    if (!o.scenario)
        die_usage("--scenario is required", NULL);
    return o;
}

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);

    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o.port)};
    const char *host = !strcmp(o.host, "localhost") ? "127.0.0.1" : o.host;
    /* Test traffic must never leave the machine. */
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
        (ntohl(sa.sin_addr.s_addr) >> 24) != 127)
        die_usage("--host must be an IPv4 loopback address (127.x.x.x)", o.host);

    static mock_scenario sc;
    char err[1024];
    if (scenario_load(o.scenario, &sc, err, sizeof err)) {
        fprintf(stderr, "mockllm: %s\n", err);
        return 2;
    }
    if (o.log && reqlog_open(o.log)) {
        fprintf(stderr, "mockllm: cannot open log %s: %s\n", o.log, strerror(errno));
        return 2;
    }
    if (reqlog_open_capture()) {
        fprintf(stderr, "mockllm: cannot open a capture file in MOCKLLM_CAPTURE_DIR %s: %s\n",
                getenv("MOCKLLM_CAPTURE_DIR"), strerror(errno));
        return 2;
    }

    /* Block the stop signals before MHD starts its threads so they inherit
     * the mask and only sigwait() below ever sees them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
            MHD_USE_ERROR_LOG,
        (uint16_t)o.port, NULL, NULL, server_handle, &sc, MHD_OPTION_SOCK_ADDR,
        (const struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, server_completed,
        NULL, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
        MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "mockllm: cannot listen on %s:%ld\n", host, o.port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : (unsigned)o.port;
    if (o.port_file && write_port_file(o.port_file, port)) {
        fprintf(stderr, "mockllm: cannot write port file %s: %s\n", o.port_file,
                strerror(errno));
        MHD_stop_daemon(d);
        return 1;
    }
    printf("mockllm listening on %s:%u\n", host, port);
    fflush(stdout);

    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    atomic_store(&mock_stopping, true);
    MHD_stop_daemon(d);
    reqlog_close();
    scenario_free(&sc);
    return 0;
}

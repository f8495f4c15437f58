/* main.c — the loom-acp program (`loom acp`, docs/acp.md): the Agent
 * Client Protocol over stdio. stdin carries the client's newline-delimited
 * JSON-RPC messages, read on this one thread; stdout carries ours, one per
 * line under the writer's mutex; stderr carries logs only. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/acp/acp.h"

static void write_stdout(void *ctx, const char *line, size_t n)
{
    (void)ctx;
    fwrite(line, 1, n, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static void usage(FILE *f)
{
    fputs("usage: loom acp [--model NAME] [--permission-mode MODE] [--client-timeout SECONDS]\n"
          "Speaks the Agent Client Protocol (v1) on stdin/stdout, for editors such as Zed.\n"
          "--client-timeout: how long a file or terminal request waits for the client\n"
          "(default 60). The provider and its key come from the environment and the\n"
          "settings files, as for\n"
          "loom itself (docs/acp.md).\n",
          f);
}

int main(int argc, char **argv)
{
    acp_server_options opt = {.write = write_stdout, .sessions = true};
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--model") == 0 || strcmp(argv[i], "-m") == 0) && i + 1 < argc)
            opt.model = argv[++i];
        else if (strcmp(argv[i], "--permission-mode") == 0 && i + 1 < argc)
            opt.permission_mode = argv[++i];
        else if (strcmp(argv[i], "--client-timeout") == 0 && i + 1 < argc) {
            char *end;
            double secs = strtod(argv[++i], &end);
            if (*end || !(secs > 0 && secs <= 86400)) {
                fprintf(stderr, "loom acp: --client-timeout takes seconds (0 < s <= 86400), "
                                "not \"%s\"\n", argv[i]);
                return 2;
            }
            opt.client_timeout_ms = (long)(secs * 1000);
            if (opt.client_timeout_ms < 1)
                opt.client_timeout_ms = 1;
        }
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("loom-acp %s\n", loom_version());
            return 0;
        } else {
            fprintf(stderr, "loom acp: unknown argument \"%s\"\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    acp_server *srv = acp_server_new(&opt);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) >= 0)
        acp_server_handle_line(srv, line, (size_t)n);
    free(line);
    acp_server_free(srv); /* the client closed stdin: cancel, wait, leave */
    return 0;
}

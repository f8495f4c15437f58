/* sandbox_cmd.c — the `loom sandbox` subcommand: builds the policy from the
 * settings files and the flags, confines this process and execs the command,
 * so the command and all its descendants run sandboxed and its exit status is
 * the subcommand's. Lets a person try the policy the agent's commands get. */
#include "surfaces/cli/sandbox_cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "loom.h"

/* Like env(1), timeout(1) and nohup(1): 125 is "the wrapper failed", so the
 * command's own statuses (126, 127, anything else) keep their meaning. */
#define SANDBOX_CMD_FAILED 125

static void usage(FILE *f)
{
    fputs("usage: loom sandbox [--allow-network] [--write PATH]... -- COMMAND [ARGS...]\n"
          "\n"
          "Runs COMMAND under Loom's sandbox: read everywhere except the denied paths,\n"
          "write only in the current directory, the temp dirs and the writable paths,\n"
          "no network except Unix sockets. The policy comes from the \"sandbox\" block of\n"
          "the settings files (see docs/sandbox.md) -- an untrusted folder's own files\n"
          "may only tighten it; the flags add to it.\n"
          "\n"
          "  --allow-network   let the command use the network\n"
          "  --write PATH      make PATH writable too (repeatable)\n"
          "  -h, --help        this help\n"
          "\n"
          "Exit status: COMMAND's; 125 when loom sandbox itself failed; 126/127 when\n"
          "COMMAND could not be executed.\n",
          f);
}

/* The --write paths as given, until the policy takes them. */
typedef struct write_paths {
    const char **v;
    size_t n;
} write_paths;

static int finish(write_paths *extra, int status)
{
    free(extra->v);
    extra->v = NULL;
    extra->n = 0;
    return status;
}

static void print_notice(void *ctx, const char *text)
{
    fprintf(stderr, "loom sandbox: %s\n", text);
}

int sandbox_cmd_main(int argc, char **argv)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "loom sandbox: cannot tell the current directory: %s\n", strerror(errno));
        return SANDBOX_CMD_FAILED;
    }

    bool allow_net = false;
    write_paths extra = {0};
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return finish(&extra, 0);
        }
        if (strcmp(a, "--allow-network") == 0) {
            allow_net = true;
        } else if (strcmp(a, "--write") == 0 || strncmp(a, "--write=", 8) == 0) {
            const char *path = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
            if (!path || !path[0]) {
                fprintf(stderr, "loom sandbox: --write needs a path\n");
                return finish(&extra, SANDBOX_CMD_FAILED);
            }
            extra.v = xrealloc(extra.v, (extra.n + 1) * sizeof *extra.v);
            extra.v[extra.n++] = path;
        } else if (a[0] == '-') {
            fprintf(stderr, "loom sandbox: unknown option %s\n", a);
            usage(stderr);
            return finish(&extra, SANDBOX_CMD_FAILED);
        } else {
            break; /* the command, without a "--" before it */
        }
    }
    if (i >= argc) {
        fprintf(stderr, "loom sandbox: no command given\n");
        usage(stderr);
        return finish(&extra, SANDBOX_CMD_FAILED);
    }
    char **cmd = argv + i;

    loom_status st;
    const char *why = NULL;
    int rc = loom_sandbox_confine_self(cwd, allow_net, extra.v, extra.n, print_notice, NULL,
                                       &why, &st);
    finish(&extra, 0);
    if (rc < 0 && why) {
        fprintf(stderr,
                "loom sandbox: the sandbox is not supported here (%s); not running %s.\n"
                "Set \"sandbox\": {\"onUnsupported\": \"warn\"} in the settings to run "
                "commands unsandboxed instead.\n",
                why, cmd[0]);
        return SANDBOX_CMD_FAILED;
    }
    if (rc < 0) {
        fprintf(stderr, "loom sandbox: %s\n", st.message);
        return SANDBOX_CMD_FAILED;
    }
    if (rc == 1)
        fprintf(stderr, "loom sandbox: warning: the sandbox is not supported here (%s); "
                        "running %s WITHOUT it.\n",
                why, cmd[0]);
    execvp(cmd[0], cmd);
    int e = errno;
    fprintf(stderr, "loom sandbox: %s: %s\n", cmd[0], strerror(e));
    return e == ENOENT ? 127 : 126;
}

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

#include "sandbox/sandbox.h"

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

/* Frees what main built and passes status through, for the return paths. */
static int finish(sandbox_paths *extra, sandbox_policy *p, int status)
{
    for (size_t k = 0; k < extra->n; k++)
        free(extra->v[k]);
    free(extra->v);
    extra->v = NULL;
    extra->n = 0;
    sandbox_policy_free(p);
    return status;
}

int sandbox_cmd_main(int argc, char **argv)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "loom sandbox: cannot tell the current directory: %s\n", strerror(errno));
        return SANDBOX_CMD_FAILED;
    }

    bool allow_net = false;
    sandbox_paths extra = {0};
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return finish(&extra, NULL, 0);
        }
        if (strcmp(a, "--allow-network") == 0) {
            allow_net = true;
        } else if (strcmp(a, "--write") == 0 || strncmp(a, "--write=", 8) == 0) {
            const char *path = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
            if (!path || !path[0]) {
                fprintf(stderr, "loom sandbox: --write needs a path\n");
                return finish(&extra, NULL, SANDBOX_CMD_FAILED);
            }
            sandbox_paths_add(&extra, path, cwd);
        } else if (a[0] == '-') {
            fprintf(stderr, "loom sandbox: unknown option %s\n", a);
            usage(stderr);
            return finish(&extra, NULL, SANDBOX_CMD_FAILED);
        } else {
            break; /* the command, without a "--" before it */
        }
    }
    if (i >= argc) {
        fprintf(stderr, "loom sandbox: no command given\n");
        usage(stderr);
        return finish(&extra, NULL, SANDBOX_CMD_FAILED);
    }
    char **cmd = argv + i;

    loom_error err;
    loom_error_clear(&err);
    /* An untrusted repository's settings may only tighten the policy, as
     * they may for the agent's own commands; say what was left out. */
    json_t *notices = json_array();
    json_t *block = sandbox_settings_load(cwd, notices, &err);
    size_t ni;
    json_t *n;
    json_array_foreach(notices, ni, n)
        fprintf(stderr, "loom sandbox: %s\n", json_string_value(n));
    json_decref(notices);
    sandbox_policy p;
    if (!block || sandbox_policy_from_settings(block, cwd, &p, &err) != 0) {
        fprintf(stderr, "loom sandbox: %s\n", err.message);
        json_decref(block);
        return finish(&extra, NULL, SANDBOX_CMD_FAILED);
    }
    json_decref(block);
    /* Asking for the sandbox by name turns it on, whatever "enabled" says. */
    p.enabled = true;
    if (allow_net)
        p.network = SANDBOX_NET_ALLOW;
    for (size_t k = 0; k < extra.n; k++)
        sandbox_paths_add(&p.writable, extra.v[k], cwd);

    if (sandbox_supported() < 1) {
        const char *why = sandbox_unsupported_reason();
        if (p.on_unsupported == SANDBOX_UNSUPPORTED_REFUSE) {
            fprintf(stderr,
                    "loom sandbox: the sandbox is not supported here (%s); not running %s.\n"
                    "Set \"sandbox\": {\"onUnsupported\": \"warn\"} in the settings to run "
                    "commands unsandboxed instead.\n",
                    why, cmd[0]);
            return finish(&extra, &p, SANDBOX_CMD_FAILED);
        }
        fprintf(stderr, "loom sandbox: warning: the sandbox is not supported here (%s); "
                        "running %s WITHOUT it.\n",
                why, cmd[0]);
    } else {
        char msg[512];
        if (sandbox_apply(&p, msg, sizeof msg) != 0) {
            fprintf(stderr, "loom sandbox: %s\n", msg);
            return finish(&extra, &p, SANDBOX_CMD_FAILED);
        }
    }
    /* In force now; the policy itself is no longer needed. */
    finish(&extra, &p, 0);
    execvp(cmd[0], cmd);
    int e = errno;
    fprintf(stderr, "loom sandbox: %s: %s\n", cmd[0], strerror(e));
    return e == ENOENT ? 127 : 126;
}

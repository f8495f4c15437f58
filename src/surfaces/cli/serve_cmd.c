/* serve_cmd.c — `loom serve`: execs loom-serve with the same arguments.
 * The server is its own program (it links libmicrohttpd and SQLite, which
 * the terminal agent has no use for and should not pay for at start-up).
 * It is looked for beside the running loom (/proc/self/exe: a build folder
 * or an install's bin/), then on PATH. One thread, before anything starts. */
#include "surfaces/cli/serve_cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int serve_cmd_main(int argc, char **argv)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char path[PATH_MAX + 16];
    argv[0] = "loom-serve";
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/loom-serve", self);
            if (access(path, X_OK) == 0)
                execv(path, argv);
        }
    }
    execvp("loom-serve", argv);
    fprintf(stderr, "loom serve: cannot run loom-serve (%s); it is built with loom "
                    "(make) and installed beside it\n", strerror(errno));
    (void)argc;
    return 127;
}

/* sibling_cmd.c — runs a sibling program (sibling_cmd.h). It is looked for
 * beside the running loom (/proc/self/exe: a build folder or an install's
 * bin/), then on PATH. One thread, before anything starts. */
#include "surfaces/cli/sibling_cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sibling_cmd_exec(const char *program, int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char path[PATH_MAX + 64];
    argv[0] = (char *)program;
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/%s", self, program);
            if (access(path, X_OK) == 0)
                execv(path, argv);
        }
    }
    execvp(program, argv);
    fprintf(stderr, "loom: cannot run %s (%s); it is built with loom (make) and installed "
                    "beside it\n", program, strerror(errno));
    return 127;
}

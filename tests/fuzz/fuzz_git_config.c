/* fuzz_git_config.c — libFuzzer target for the git configuration scan
 * (policy/git_config.c), which reads a repository's own .git/config: any
 * bytes must give an answer without crashing or leaking, and a key named
 * as running code must be a NUL-terminated dotted name. Also feeds the
 * bytes as a command line to git_command_runs_git. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/git_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char why[128];
    memset(why, 'x', sizeof why);
    if (git_config_text_runs_code(text, why, sizeof why)) {
        if (!memchr(why, '\0', sizeof why) || !strchr(why, '.'))
            abort();
    }
    (void)git_command_runs_git(text);
    free(text);
    return 0;
}

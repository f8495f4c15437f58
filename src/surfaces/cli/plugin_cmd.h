/* plugin_cmd.h — `loom plugin install SPEC | list | enable NAME | disable
 * NAME | remove NAME | marketplace add SOURCE | marketplace list |
 * marketplace remove NAME` (docs/plugins.md), and the same words for the
 * REPL's /plugin, which prints through its terminal instead of stdio. */
#ifndef LOOM_CLI_PLUGIN_CMD_H
#define LOOM_CLI_PLUGIN_CMD_H

#include <stdbool.h>

#include "loom.h"

/* Where the words print: tone 0 plain, 1 dim, 2 bold, 3 red, 4 yellow,
 * 5 green (term_out's first six); error lines are tone 3. */
typedef struct plugin_out {
    void (*line)(void *ctx, int tone, const char *text);
    void *ctx;
} plugin_out;

/* Runs words[0..n) ("install", "x@m") on cfg (settings loaded). *changed
 * (may be NULL) says whether anything installed or enabled changed.
 * Returns 0 done, 1 failed, 2 usage error. */
int plugin_cmd_run(const loom_config *cfg, int n, char *const *words, const plugin_out *out,
                   bool *changed);

/* argv[0] is "plugin". Returns the exit status: 0 done, 1 failed, 2 usage. */
int plugin_cmd_main(int argc, char **argv);

#endif

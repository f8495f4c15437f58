/* print_mode.h — `loom -p`: one prompt, one reply, headless. */
#ifndef LOOM_CLI_PRINT_MODE_H
#define LOOM_CLI_PRINT_MODE_H

#include "surfaces/cli/options.h"

/* Runs the headless mode; returns the process exit status
 * (0 ok, 1 failed, 2 usage/config, 130 interrupted). */
int print_mode_run(const cli_options *opt);

#endif

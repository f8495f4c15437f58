/* bash_driver.h — a foreground Bash command run through the driver's
 * terminal (tools/tool_io.h) rather than by Loom: bash.c decides when. */
#ifndef LOOM_TOOLS_BUILTIN_BASH_DRIVER_H
#define LOOM_TOOLS_BUILTIN_BASH_DRIVER_H

#include "tools/tool.h"

/* Runs command through ctx->io->run_command with timeout_ms and fills out
 * as the local run would (a status line, the output capped, raw with the
 * same keys plus "ranBy": "driver"). Always 0: a failure is an error
 * result. */
int bash_run_driver(const char *command, long timeout_ms, tool_ctx *ctx, tool_result *out);

#endif

/* slash.h — the REPL's /commands: /help, /clear, /resume, /model, /cost,
 * /status, /permissions, /plan, /compact, /context, /events, /memory,
 * /rewind, /fork, /mcp, /exit (the context ones in slash_context.c, /mcp in
 * slash_mcp.c). Each works on the
 * REPL's state (slash_host.h) through loom.h; docs/repl.md describes them for users. */
#ifndef LOOM_CLI_SLASH_H
#define LOOM_CLI_SLASH_H

#include <stddef.h>

#include "surfaces/cli/slash_host.h"

/* n with thousands separators: "1,234,567". */
void slash_thousands(long long n, char *buf, size_t size);

/* Runs one command line ("/name args…"); an unknown name gets a hint. */
void slash_run(slash_host *r, const char *line);

#endif

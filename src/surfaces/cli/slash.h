/* slash.h — the REPL's /commands: /help, /clear, /resume, /model, /cost,
 * /status, /permissions, /plan, /compact, /context, /events, /memory,
 * /rewind, /fork, /export, /mcp, /skills, /output-style, /exit (the context ones in
 * slash_context.c, /mcp in slash_mcp.c, /skills and the custom commands'
 * part of /help in slash_ext.c, /output-style in slash_style.c,
 * /export in slash_export.c). Each works on the
 * REPL's state (slash_host.h) through loom.h; docs/repl.md describes them for users. */
#ifndef LOOM_CLI_SLASH_H
#define LOOM_CLI_SLASH_H

#include <stdbool.h>
#include <stddef.h>

#include "surfaces/cli/slash_host.h"

/* n with thousands separators: "1,234,567". */
void slash_thousands(long long n, char *buf, size_t size);

/* After a session was resumed (/resume, --resume, --continue): its id and
 * title, then its last few exchanges (session_picker.h). */
void slash_show_resumed(slash_host *r);

/* Runs one command line ("/name args…"); an unknown name gets a hint. */
void slash_run(slash_host *r, const char *line);

/* Does line ("/name args…") name one of the built-in commands? They win
 * over a custom command or skill of the same name. */
bool slash_is_builtin(const char *line);
/* The built-in commands' names (no "/"), aliases included, for Tab
 * completion: i from 0 until NULL. */
const char *slash_builtin_name(size_t i);

#endif

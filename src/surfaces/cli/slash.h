/* slash.h — the REPL's /commands: /help, /clear, /resume, /model, /cost,
 * /status, /permissions, /plan, /rewind, /fork, /exit. Each works on the
 * REPL's state through loom.h; docs/repl.md describes them for users. */
#ifndef LOOM_CLI_SLASH_H
#define LOOM_CLI_SLASH_H

#include "surfaces/cli/repl.h"

/* Runs one command line ("/name args…"); an unknown name gets a hint. */
void slash_run(repl *r, const char *line);

#endif

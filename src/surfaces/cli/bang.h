/* bang.h — the REPL's `!cmd`: the command runs in the session's directory
 * (bash -c, stdin from /dev/null), its output is shown as it arrives, and
 * what it printed becomes a block the next prompt carries to the model in
 * Claude Code's shape (docs/repl.md):
 *
 *   <bash-input>cmd</bash-input>
 *   <bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>
 *
 * with &, < and > escaped. No model call is made for it by itself.
 * Main thread only: it waits for the command; Ctrl-C reaches the command
 * (same process group). */
#ifndef LOOM_CLI_BANG_H
#define LOOM_CLI_BANG_H

#include "surfaces/cli/term_out.h"

/* Bytes of each stream kept for the conversation; the rest is counted. */
#define BANG_OUTPUT_CAP 30000

/* Runs cmd and returns the block (caller frees); a failure to start is
 * reported in the block's stderr and on the terminal. */
char *bang_run(term_out *out, const char *cwd, const char *cmd);

#endif

/* repl.h — `loom` in a terminal: the interactive loop.
 *
 * A client of loom.h only (plus base/ helpers): one agent, one session at a
 * time, one run per submitted line, its events drawn as they arrive
 * (run_view.c). The /commands see only the slash_host inside the struct
 * (slash_host.h). docs/repl.md is the user's manual.
 *
 * Threads: the main thread owns the terminal's input, the line editor and
 * the signal state below; the functions declared after repl_main are for
 * run_view.c, which runs on the main thread too. */
#ifndef LOOM_CLI_REPL_H
#define LOOM_CLI_REPL_H

#include <histedit.h>
#include <stdbool.h>

#include "base/str.h"
#include "loom.h"
#include "surfaces/cli/footer.h"
#include "surfaces/cli/options.h"
#include "surfaces/cli/slash_host.h"

#define REPL_PROMPT "\xe2\x80\xba "        /* "› " */

typedef struct repl {
    slash_host host;          /* the terminal, agent, session, usage */
    cli_options opt;          /* the command line */
    char *model;              /* set by /model: replaces opt.model */
    EditLine *el;
    History *hist;
    char *history_path;
    const char *prompt;       /* what libedit shows now */
    footer footer;            /* the line under the prompt */
    bool footer_drawn;        /* it is on screen under the prompt now */
    long long ctrl_c_armed;   /* the first Ctrl-C of a quitting pair (keys.h), 0 none */
} repl;

/* Runs the REPL until /exit, Ctrl-D or a second Ctrl-C in a run; returns
 * the process exit status (0, or 1/2 when setup failed as in print mode). */
int repl_main(const cli_options *opt);

/* Reads one line for a question (AskUserQuestion, approvals) with the line
 * editor; NULL on Ctrl-C or Ctrl-D. Caller frees. */
char *repl_ask_line(repl *r, const char *prompt);

/* The run being drawn, for the signal handler: Ctrl-C cancels it,
 * SIGUSR1/2 go to its heartbeat. Attaching clears the Ctrl-C seen so far. */
void repl_run_attach(loom_run *run);
void repl_run_detach(void);
/* A Ctrl-C arrived since the last prompt or attach. */
bool repl_sigint_seen(void);
/* SIGTERM or SIGHUP arrived: the REPL is ending. */
bool repl_terminating(void);
/* While a run draws, keys typed ahead are not echoed into its output; they
 * wait in the terminal's buffer for the next prompt. */
void repl_tty_quiet(bool quiet);
/* Keys typed ahead while a question was up, handed to the line editor at
 * the next prompt. */
loom_str *repl_typeahead(void);
/* While a run works (the terminal is quiet and non-canonical): reads the
 * keys typed since the last call, and returns true when one
 * was Esc alone (not the start of an arrow key's sequence), which
 * interrupts the run as Ctrl-C does. Escape sequences are dropped; the
 * keys wait for repl_take_run_keys. */
bool repl_esc_pressed(void);
/* Moves the keys repl_esc_pressed read to the end of typeahead (before a
 * question drains the terminal, and at the next prompt). */
void repl_take_run_keys(void);
/* Only blanks (an Enter pressed after an answer key) from `from` on. */
bool repl_typeahead_blank(size_t from);
long long repl_mono_ms(void);

#endif

/* repl.h — `loom` in a terminal: the interactive loop.
 *
 * A client of loom.h only (plus base/ helpers): one agent, one session at a
 * time, one run per submitted line, its events drawn as they arrive. The
 * struct is shared with slash.c, which implements the /commands on it.
 * docs/repl.md is the user's manual. */
#ifndef LOOM_CLI_REPL_H
#define LOOM_CLI_REPL_H

#include <histedit.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/str.h"
#include "loom.h"
#include "surfaces/cli/options.h"
#include "surfaces/cli/spinner.h"

/* Token totals as loom_session_usage_json reports them. */
typedef struct repl_usage {
    long long input, output, cache_read, cache_write, reasoning;
} repl_usage;

typedef struct repl {
    cli_options opt;          /* the command line */
    char *model;              /* set by /model: replaces opt.model */
    loom_agent *agent;
    loom_session *session;
    char *cwd;                /* absolute working directory */
    bool color;               /* stdout is a terminal and NO_COLOR is unset */
    pthread_mutex_t term;     /* every write to the terminal holds it */
    spinner *spin;            /* NULL when stderr is not a terminal */
    EditLine *el;
    History *hist;
    char *history_path;
    const char *prompt;       /* what libedit shows now */
    bool quit;
    /* Usage of this conversation from session handles already replaced
     * (/model reopens the session; /fork copies it): loom counts per handle. */
    repl_usage carried;
    double cost_usd;          /* summed from run results; < 0: no prices known */
} repl;

/* Runs the REPL until /exit, Ctrl-D or a second Ctrl-C in a run; returns
 * the process exit status (0, or 1/2 when setup failed as in print mode). */
int repl_main(const cli_options *opt);

/* Output for the slash commands, serialized with the spinner. */
typedef enum {
    TONE_PLAIN, TONE_DIM, TONE_BOLD, TONE_RED, TONE_YELLOW, TONE_GREEN,
    TONE_ALERT, /* bold red: a critical heartbeat event */
} repl_tone;
/* The text is made terminal-safe (base/termsafe.h): escapes in it show as
 * "^[…"; only the tone's own codes reach the terminal. */
void repl_printf(repl *r, repl_tone tone, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Loom's own control sequence (the screen clear of /clear), written as is. */
void repl_write_control(repl *r, const char *seq);
/* Appends the first line of s[0..n) to out, cut to cols characters with
 * "…" (cols <= 0: not cut); control characters are shown in their visible
 * form (^[, ^M, <U+202E>), so text from outside (a tool's output, a file
 * name) cannot restyle the terminal or hide part of itself. */
void repl_put_clipped(loom_str *out, const char *s, size_t n, int cols);
/* Terminal columns of stdout (80 when unknown). */
int repl_columns(void);
/* The one-line header: version · model · provider · cwd · session id. */
void repl_header(repl *r);
/* Makes s the current session (the old handle is freed). keep_usage: s
 * continues the same conversation, so its usage so far carries over. */
void repl_switch_session(repl *r, loom_session *s, bool keep_usage);
/* Re-creates the agent (same flags and settings; model, when not NULL,
 * replaces the current one) and reopens the session in it: the conversation
 * goes on in the same file, and what the agent read at creation (memory
 * files, settings) is read again. 0, or -1 with st set (nothing changed). */
int repl_reopen(repl *r, const char *model, loom_status *st);
/* Runs `bash -c cmd` in the session's directory with the terminal handed
 * over (the `!` lines, /memory edit); a failure status is shown. */
void repl_run_shell(repl *r, const char *cmd);
/* Around a synchronous library call (/compact): the spinner shows label
 * and typed keys are not echoed; repl_busy_end puts both back. */
void repl_busy_begin(repl *r, const char *label);
void repl_busy_end(repl *r);
/* Reads one line for a question (AskUserQuestion, approvals) with the line
 * editor; NULL on Ctrl-C or Ctrl-D. Caller frees. */
char *repl_ask_line(repl *r, const char *prompt);

#endif

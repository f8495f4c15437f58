/* slash_host.h — what the /commands (slash.c, slash_context.c) may use of
 * the REPL that runs them: the terminal, the agent and session handles, the
 * usage carried over from replaced handles, and a few operations the REPL
 * provides (the header line, switching or reopening the session, a shell
 * command on the terminal, the busy spinner). The commands see nothing
 * else of the REPL: its line editor, signals and run view stay its own.
 *
 * The main thread only: commands run between runs, from the line loop. */
#ifndef LOOM_CLI_SLASH_HOST_H
#define LOOM_CLI_SLASH_HOST_H

#include <stdbool.h>

#include "loom.h"
#include "surfaces/cli/term_out.h"

/* Token totals as loom_session_usage_json reports them. */
typedef struct slash_usage {
    long long input, output, cache_read, cache_write, reasoning;
} slash_usage;

typedef struct slash_host slash_host;

typedef struct slash_host_ops {
    /* The one-line header: version · model · provider · cwd · session id. */
    void (*header)(slash_host *h);
    /* Makes s the current session (the old handle is freed). keep_usage: s
     * continues the same conversation, so its usage so far carries over. */
    void (*switch_session)(slash_host *h, loom_session *s, bool keep_usage);
    /* Re-creates the agent (same flags and settings; model, when not NULL,
     * replaces the current one) and reopens the session in it: the
     * conversation goes on in the same file, and what the agent read at
     * creation (memory files, settings) is read again. 0, or -1 with st set
     * (nothing changed). */
    int (*reopen)(slash_host *h, const char *model, loom_status *st);
    /* Runs `bash -c cmd` in the session's directory with the terminal
     * handed over (/memory edit); a failure status is shown. */
    void (*run_shell)(slash_host *h, const char *cmd);
    /* Around a synchronous library call (/compact): the spinner shows label
     * and typed keys are not echoed; busy_end puts both back. */
    void (*busy_begin)(slash_host *h, const char *label);
    void (*busy_end)(slash_host *h);
} slash_host_ops;

struct slash_host {
    term_out out;
    loom_agent *agent;
    loom_session *session;
    char *cwd;                /* absolute working directory */
    bool quit;                /* set by /exit */
    /* Usage of this conversation from session handles already replaced
     * (/model reopens the session; /fork copies it): loom counts per handle. */
    slash_usage carried;
    double cost_usd;          /* summed from run results; < 0: no prices known */
    /* The last run's usage_by_agent (JSON text) when sub-agents ran in it,
     * else NULL: /cost's breakdown. */
    char *last_by_agent;
    const slash_host_ops *ops;
};

#endif

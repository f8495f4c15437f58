/* footer.h — the line under the REPL's prompt (docs/repl.md): the
 * permission mode (plan and the modes that skip questions marked and
 * coloured), the model, the context use and the background work running;
 * or, when the statusLine setting is set, its command's line
 * (statusline.h), after the mode when the mode is not default.
 *
 * footer_text is a pure function of what it is given, so it is tested
 * without a terminal; the footer struct keeps what it shows beyond the
 * mode, gathered by footer_refresh once after each submission (the
 * context estimate is not free: kept until the next run ends). The drawing functions write control sequences to
 * stdout for a terminal the line editor owns: footer_show before the
 * prompt is drawn (the footer goes on the next line, the cursor comes back
 * to the start of the prompt's line), footer_redraw from inside the line
 * editor (a key changed the mode), footer_clear once the line is read.
 * Main thread only; nothing is drawn when the REPL's terminal is not a tty. */
#ifndef LOOM_CLI_FOOTER_H
#define LOOM_CLI_FOOTER_H

#include <stdbool.h>

#include "loom.h"

typedef struct footer_info {
    const char *mode;         /* the permission mode now */
    const char *model;        /* NULL: left out */
    long long ctx_tokens;     /* < 0: unknown (left out) */
    long long ctx_window;     /* <= 0: unknown (left out) */
    int agents_running;       /* background sub-agents still running */
    const char *custom;       /* the statusLine command's line (clean), or NULL */
} footer_info;

/* The mode's badge: "⏸ plan", "⏵⏵ acceptEdits", "⚠ bypassPermissions", … */
const char *footer_mode_badge(const char *mode);

/* The footer: "  BADGE · model · ctx 12% of 200k · 1 agent running", cut
 * to cols columns (the parts after the badge dropped from the end first);
 * color: the badge in its colour, the rest dim. Caller frees. */
char *footer_text(const footer_info *info, bool color, int cols);

/* "12% of 200k" into buf. */
void footer_format_context(long long tokens, long long window, char *buf, unsigned size);

typedef struct footer {
    bool on;                  /* stdin and stdout are a terminal */
    bool stale;               /* refresh before the next prompt */
    bool color;
    long long ctx_tokens, ctx_window;
    int agents_running;
    char *status_cmd;         /* the statusLine command, or NULL */
    int status_padding;
    char *status_text;        /* its last line, or NULL (the built-in footer) */
} footer;

/* The agent's statusLine setting (again after the agent is made again). */
void footer_setup(footer *f, loom_agent *agent);
/* Gathers the context use, the running background agents and runs the
 * statusLine command (statusline.h); cost_usd < 0: unknown. */
void footer_refresh(footer *f, loom_agent *agent, loom_session *session, const char *cwd,
                    double cost_usd);
/* The line for the mode now in force (caller frees). */
char *footer_line(const footer *f, loom_agent *agent, loom_session *session);
void footer_free(footer *f);

void footer_show(const char *line);
void footer_redraw(const char *line);
void footer_clear(void);

#endif

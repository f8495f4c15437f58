/* tool_view.h — a tool call as the REPL shows it: the "● Bash(npm test)"
 * line when it starts, a running command's last lines live under it, and
 * when it ends a few result lines (the rest folded, fold.h), an Edit's or
 * Write's diff (diff_view.h), the whole TodoWrite list; and what an
 * approval question shows of the call.
 *
 * The run view (run_view.c) owns one per run and hands it the tool events.
 * Main thread only. */
#ifndef LOOM_CLI_TOOL_VIEW_H
#define LOOM_CLI_TOOL_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/cli/term_out.h"

/* Result lines shown under a call before the rest is folded. */
#define TOOL_VIEW_RESULT_LINES 3
/* A running command's last lines shown live (a terminal only). */
#define TOOL_VIEW_LIVE_LINES 5
/* Diff lines shown in a result (more are folded) and in an approval. */
#define TOOL_VIEW_DIFF_LINES 20
#define TOOL_VIEW_APPROVAL_DIFF_LINES 40
/* Live output kept per call for the folded result. */
#define TOOL_VIEW_LIVE_KEEP ((size_t)1 << 20)

typedef struct tool_call_view {
    char *id;
    char *tool;
    char *header;    /* "Bash(npm test)" */
    json_t *input;   /* for the result's diff and the TodoWrite list */
    loom_str live;   /* a running command's output so far (tool.progress) */
} tool_call_view;

typedef struct tool_view {
    term_out *out;
    const char *cwd;           /* paths inside it are shown relative */
    tool_call_view *calls;
    size_t n_calls;
    /* Id of the call whose line was printed last: a result right after it
     * goes under it, any other repeats its call's line first. Whatever is
     * printed between a call and its result sets it to NULL. */
    const char *last_header;
    int tools_running;
    const char *live_id;       /* the call whose output is shown live */
} tool_view;

void tool_view_init(tool_view *tv, term_out *out, const char *cwd);
void tool_view_free(tool_view *tv);

/* tool.started: the call's line; the spinner says what runs. */
void tool_view_started(tool_view *tv, const json_t *payload);
/* tool.progress: a command's new output (kept, its tail shown live: true
 * when the lines under the spinner changed), or an MCP tool's progress
 * (the spinner's label). */
bool tool_view_progress(tool_view *tv, const json_t *payload);
/* tool.finished / tool.failed: the result. */
void tool_view_done(tool_view *tv, const json_t *payload);
/* Appends the live lines to show under the spinner (terminal-safe, cut to
 * cols), if a command is running and has printed something. */
void tool_view_live_lines(const tool_view *tv, int cols, loom_str *lines);

/* What an approval shows of the call: Bash's command line by line, an
 * edit's diff, otherwise the call's argument. */
void tool_view_approval_subject(tool_view *tv, loom_str *out, const char *tool,
                                const json_t *input);

/* The TodoWrite list (todos: [{content, status, activeForm}]): done items
 * struck through and ticked, the one in progress bold. Appended to out,
 * each line after indent. */
void tool_view_todos(const term_out *t, loom_str *out, const json_t *todos, const char *indent,
                     int cols);

/* The last n lines of text[0..len) (a last line without '\n' counts),
 * each terminal-safe and cut to cols, after indent, '\n'-joined. */
void tool_view_tail(const char *text, size_t len, size_t n, const char *indent, int cols,
                    loom_str *out);

#endif

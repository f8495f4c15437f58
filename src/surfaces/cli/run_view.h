/* run_view.h — one run of the REPL, drawn as its events arrive: the
 * model's text (rendered Markdown), each tool call and its result, warnings,
 * heartbeat events, approvals answered by one key, and AskUserQuestion.
 * Main thread only (it drains the run's event queue; the run's threads only
 * produce events). */
#ifndef LOOM_CLI_RUN_VIEW_H
#define LOOM_CLI_RUN_VIEW_H

#include "surfaces/cli/repl.h"

/* Starts a run of goal in the REPL's session and draws it until it ends. */
void run_view_run(repl *r, const char *goal);

#endif

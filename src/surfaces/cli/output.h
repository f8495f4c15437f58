/* output.h — how a headless run shows itself: text, json or stream-json.
 *
 * All three consume the run's event stream (loom.h):
 * text: stdout carries each model reply's text exactly once. Piped or
 *   redirected, a reply is held until its model call has succeeded and
 *   then written whole, so a call that is cut and retried (stream.restarted)
 *   never leaves its partial text behind; on a terminal it streams as it
 *   arrives and a restart is announced on stderr ("the reply starts over").
 *   Notices (retries and other warnings, heartbeat events, tool calls with
 *   --verbose) go to stderr.
 *   Control characters in any of it are shown, not sent (base/termsafe.h),
 *   whether or not the output is a terminal.
 * json: one result object on stdout at the end; warnings and heartbeat
 *   events on stderr as in text.
 * stream-json: every event, one JSON object per line, as the run emits it;
 *   the last line is run.state_changed with the final state. */
#ifndef LOOM_CLI_OUTPUT_H
#define LOOM_CLI_OUTPUT_H

#include <stdbool.h>

#include "base/str.h"
#include "base/termsafe.h"
#include "loom.h"
#include "surfaces/cli/options.h"

typedef struct cli_output {
    output_format format;
    bool verbose;
    const char *model;
    const char *provider;
    long long started_ms;
    bool at_line_start;   /* text mode: stdout ends with a newline */
    bool turn_has_text;   /* text mode: this model call produced text */
    bool live;            /* text mode: stdout is a terminal, stream as it comes */
    loom_str held;        /* text mode, not live: this model call's text so far */
    termsafe text_safe;   /* text mode: the model's text made terminal-safe */
} cli_output;

void output_begin(cli_output *o);
/* One event of the run (called on the run's threads; serialized by loom). */
void output_event(cli_output *o, const loom_event *ev);
/* A warning outside any run (e.g. a damaged session line). */
void output_warning(cli_output *o, const char *message);
/* The end of a run that has ended: prints its result. Frees what o holds. */
void output_end(cli_output *o, const loom_run *run);
/* A failure before any run started (bad config, unknown session). */
void output_setup_error(cli_output *o, const loom_status *st);

#endif

/* output.h — how a headless run shows itself: text, json, stream-json or
 * events (docs/cli.md).
 *
 * All four consume the run's event stream (loom.h):
 * text: stdout carries each model reply's text exactly once. Piped or
 *   redirected, a reply is held until its model call has succeeded and
 *   then written whole, so a call that is cut and retried (stream.restarted)
 *   never leaves its partial text behind; on a terminal it streams as it
 *   arrives and a restart is announced on stderr ("the reply starts over").
 *   Notices (retries and other warnings, heartbeat events, denied tool
 *   calls, tool calls with --verbose) go to stderr.
 *   Control characters in any of it are shown, not sent (base/termsafe.h),
 *   whether or not the output is a terminal.
 * json: Claude Code's result object on stdout at the end (output_result.c);
 *   warnings and heartbeat events on stderr as in text.
 * stream-json: Claude Code's message lines (output_stream_json.c): system
 *   init, assistant, user, and the result object last.
 * events: every event, one JSON object per line, as the run emits it;
 *   the last line is run.state_changed with the final state.
 *
 * One cli_output serves every run of a process (--input-format
 * stream-json runs several on one session): output_begin before each run,
 * output_end after it, output_free once at the end. */
#ifndef LOOM_CLI_OUTPUT_H
#define LOOM_CLI_OUTPUT_H

#include <stdbool.h>

#include "base/json.h"
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
    /* json and stream-json: what Claude Code's messages need. */
    json_t *calls;        /* this run's tool calls: call_id -> {tool, input} */
    json_t *denials;      /* this run's permission_denials */
    long long api_ms;     /* this run's time in model calls so far */
    long long api_since;  /* when the model call under way began */
    char *session_id;     /* from the run's start */
    char *cwd;
    char *permission_mode;
    char *message_id;     /* stream-json: the assistant message now under way */
    int message_seq;
    bool init_sent;       /* stream-json: the system init line is out */
    json_t *tools;        /* stream-json init: [names] (print_mode sets it; owned) */
    json_t *mcp_servers;  /* stream-json init: [{name, status}] (owned) */
} cli_output;

void output_begin(cli_output *o);
/* One event of the run (called on the run's threads; serialized by loom). */
void output_event(cli_output *o, const loom_event *ev);
/* A warning outside any run (e.g. a damaged session line). */
void output_warning(cli_output *o, const char *message);
/* The end of a run that has ended: prints its result. */
void output_end(cli_output *o, const loom_run *run);
/* A failure before any run started (bad config, unknown session). */
void output_setup_error(cli_output *o, const loom_status *st);
/* Frees what o holds across runs. */
void output_free(cli_output *o);

/* output_result.c: what json and stream-json share. */
/* Notes a tool call's start, and a denied call among the finished ones
 * (a tool.failed whose failed_step is a permission step). Returns the
 * denial's reason (in payload) when the call was denied, else NULL. */
void output_note_call(cli_output *o, const json_t *payload);
const char *output_note_denial(cli_output *o, const json_t *payload);
/* Loom's usage {inputTokens, …} as Claude Code's snake_case usage (new). */
json_t *output_usage_snake(const json_t *usage);
/* Claude Code's result object for the run (new), Loom's own fields added. */
json_t *output_result_object(cli_output *o, const loom_run *run, const json_t *res);
/* "Bash(rm -rf x)": a tool call as a permission rule would name it (new). */
char *output_call_label(const char *tool, const json_t *input);

/* output_stream_json.c: one event as Claude Code's message lines. */
void output_stream_json_event(cli_output *o, const loom_event *ev, const json_t *doc);
void output_stream_json_line(json_t *msg); /* prints and frees msg */

#endif

/* output.h — how a headless run shows itself: text, json or stream-json.
 *
 * text: the reply streams to stdout as it arrives; notices go to stderr.
 * json: one result object on stdout at the end.
 * stream-json: one event per line in the run event schema (runtime/event.h),
 * ending with run.state_changed to completed or failed. */
#ifndef LOOM_CLI_OUTPUT_H
#define LOOM_CLI_OUTPUT_H

#include "base/error.h"
#include "base/str.h"
#include "surfaces/cli/options.h"
#include "wire/message.h"

typedef struct cli_output {
    output_format format;
    const char *run_id;
    const char *session_id;
    const char *model;
    const char *provider;
    loom_str text;          /* the reply so far (this attempt) */
    bool text_ends_newline;
    long long started_ms;
} cli_output;

void output_begin(cli_output *o);
void output_text(cli_output *o, const char *delta, size_t len);
void output_thinking(cli_output *o, const char *delta, size_t len);
void output_retry(cli_output *o, int attempt, double delay_s, const loom_error *why);
void output_warning(cli_output *o, const char *message);
void output_success(cli_output *o, const wire_response *resp);
void output_failure(cli_output *o, const loom_error *err);
void output_free(cli_output *o);

#endif

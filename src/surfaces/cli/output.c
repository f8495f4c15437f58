/* output.c — rendering a headless run in the three output formats. */
#include "surfaces/cli/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "runtime/event.h"

static void emit(cli_output *o, const char *type, event_visibility vis, json_t *payload)
{
    json_t *ev = event_make(o->run_id, type, vis, NULL, payload);
    char *line = json_dump_compact(ev);
    json_decref(ev);
    if (line) {
        fputs(line, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(line);
    }
}

void output_begin(cli_output *o)
{
    o->started_ms = clock_mono_ms();
    o->text_ends_newline = true;
    if (o->format == OUTPUT_STREAM_JSON)
        emit(o, EV_RUN_STATE_CHANGED, EV_VIS_USER,
             json_pack("{s:s,s:s,s:s,s:s}", "state", "running", "session_id", o->session_id,
                       "model", o->model, "provider", o->provider));
}

void output_text(cli_output *o, const char *delta, size_t len)
{
    str_append(&o->text, delta, len);
    if (o->format == OUTPUT_TEXT) {
        fwrite(delta, 1, len, stdout);
        fflush(stdout);
        if (len)
            o->text_ends_newline = delta[len - 1] == '\n';
    } else if (o->format == OUTPUT_STREAM_JSON) {
        emit(o, EV_TOKEN_DELTA, EV_VIS_USER,
             json_pack("{s:s,s:s%}", "channel", "text", "text", delta, len));
    }
}

void output_thinking(cli_output *o, const char *delta, size_t len)
{
    /* Reasoning is not part of the answer in text/json; stream-json shows it
     * on its own channel so a client can render or hide it. */
    if (o->format == OUTPUT_STREAM_JSON)
        emit(o, EV_TOKEN_DELTA, EV_VIS_USER,
             json_pack("{s:s,s:s%}", "channel", "reasoning", "text", delta, len));
}

void output_warning(cli_output *o, const char *message)
{
    if (o->format == OUTPUT_STREAM_JSON)
        emit(o, EV_WARNING_EMITTED, EV_VIS_USER, json_pack("{s:s}", "message", message));
    else
        fprintf(stderr, "loom: warning: %s\n", message);
}

void output_retry(cli_output *o, int attempt, double delay_s, const loom_error *why)
{
    char msg[1400];
    snprintf(msg, sizeof msg, "%s: %s; retry %d in %.1fs%s", loom_code_name(why->code),
             why->message, attempt, delay_s,
             o->text.len ? " (the reply starts over)" : "");
    if (o->format == OUTPUT_TEXT && o->text.len && !o->text_ends_newline) {
        fputc('\n', stdout);
        fflush(stdout);
        o->text_ends_newline = true;
    }
    output_warning(o, msg);
    str_clear(&o->text);
}

static json_t *result_object(cli_output *o, const wire_response *resp, const loom_error *err)
{
    json_t *r = json_pack("{s:s,s:s,s:b,s:s,s:s,s:s,s:s,s:I,s:i}", "type", "result", "subtype",
                          err ? "error" : "success", "is_error", err != NULL, "session_id",
                          o->session_id, "run_id", o->run_id, "model", o->model, "provider",
                          o->provider, "duration_ms",
                          (json_int_t)(clock_mono_ms() - o->started_ms), "num_turns", 1);
    if (resp) {
        char *text = wire_message_text(&resp->message);
        json_object_set_new(r, "result", json_string(text));
        free(text);
        json_object_set_new(r, "stop_reason", json_string(wire_stop_reason_name(resp->stop_reason)));
        json_object_set_new(r, "usage", wire_usage_to_json(&resp->usage));
        if (resp->usage.raw)
            json_object_set(r, "raw_usage", resp->usage.raw);
        json_set_str(r, "request_id", resp->request_id);
    }
    if (err)
        json_object_set_new(r, "error", json_pack("{s:s,s:s}", "code", loom_code_name(err->code),
                                                  "message", err->message));
    return r;
}

void output_success(cli_output *o, const wire_response *resp)
{
    switch (o->format) {
    case OUTPUT_TEXT:
        if (o->text.len == 0) {
            /* Nothing streamed (--no-stream): print the whole reply now. */
            char *text = wire_message_text(&resp->message);
            fputs(text, stdout);
            o->text_ends_newline = !*text || text[strlen(text) - 1] == '\n';
            free(text);
        }
        if (!o->text_ends_newline)
            fputc('\n', stdout);
        fflush(stdout);
        break;
    case OUTPUT_JSON: {
        json_t *r = result_object(o, resp, NULL);
        char *s = json_dumps(r, JSON_INDENT(2));
        printf("%s\n", s);
        free(s);
        json_decref(r);
        break;
    }
    case OUTPUT_STREAM_JSON: {
        json_t *r = result_object(o, resp, NULL);
        json_object_set_new(r, "state", json_string("completed"));
        emit(o, EV_RUN_STATE_CHANGED, EV_VIS_USER, r);
        break;
    }
    }
}

void output_failure(cli_output *o, const loom_error *err)
{
    if (o->format == OUTPUT_TEXT && !o->text_ends_newline)
        fputc('\n', stdout);
    fflush(stdout);
    fprintf(stderr, "loom: error: %s [%s]\n", err->message, loom_code_name(err->code));
    if (o->format == OUTPUT_JSON) {
        json_t *r = result_object(o, NULL, err);
        char *s = json_dumps(r, JSON_INDENT(2));
        printf("%s\n", s);
        free(s);
        json_decref(r);
    } else if (o->format == OUTPUT_STREAM_JSON) {
        json_t *r = result_object(o, NULL, err);
        json_object_set_new(r, "state",
                            json_string(err->code == LOOM_ERR_RUN_CANCELLED ? "cancelled" : "failed"));
        emit(o, EV_RUN_STATE_CHANGED, EV_VIS_USER, r);
    }
    fflush(stdout);
}

void output_free(cli_output *o)
{
    str_free(&o->text);
}

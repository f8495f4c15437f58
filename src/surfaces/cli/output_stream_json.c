/* output_stream_json.c — `loom -p --output-format stream-json`: the run as
 * Claude Code's message lines, one JSON object per line (docs/cli.md):
 *
 *   {"type":"system","subtype":"init", session_id, cwd, model, tools,
 *    mcp_servers, permissionMode, …}     once, when the first run starts
 *   {"type":"assistant","message":{…}}   the model's text when its call
 *                                        succeeded, then one per tool call
 *   {"type":"user","message":{…}}        one per tool result
 *   {"type":"result", …}                 at the end of each run (output_end)
 *
 * The assistant lines of one model call share the message's id; a call
 * that is cut and retried (stream.restarted) sends none of its text. A
 * sub-agent's events are its own (their result reaches the parent as the
 * Agent call's tool result) and are not sent. Every line's uuid is the id
 * of the event it came from. Called on the run's threads, serialized by
 * loom. */
#include "surfaces/cli/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

void output_stream_json_line(json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(s);
    json_decref(msg);
}

static void send_init(cli_output *o, const json_t *doc)
{
    json_t *tools = o->tools ? json_incref(o->tools) : json_array();
    json_t *servers = o->mcp_servers ? json_incref(o->mcp_servers) : json_array();
    output_stream_json_line(json_pack(
        "{s:s,s:s,s:s?,s:s?,s:s?,s:o,s:o,s:s?,s:s?,s:s,s:s?}", "type", "system", "subtype",
        "init", "session_id", o->session_id, "cwd", o->cwd, "model", o->model, "tools", tools,
        "mcp_servers", servers, "permissionMode", o->permission_mode, "provider", o->provider,
        "apiKeySource", "none", "uuid", json_get_str(doc, "event_id", NULL)));
    o->init_sent = true;
}

/* An Anthropic message of the assistant holding one content block. */
static void send_assistant(cli_output *o, const json_t *doc, json_t *block,
                           const char *stop_reason, json_t *usage)
{
    json_t *message = json_pack("{s:s,s:s,s:s,s:s?,s:[o],s:s?,s:n,s:o}", "id", o->message_id,
                                "type", "message", "role", "assistant", "model", o->model,
                                "content", block, "stop_reason", stop_reason, "stop_sequence",
                                "usage", usage ? usage : json_object());
    output_stream_json_line(json_pack("{s:s,s:o,s:n,s:s?,s:s?}", "type", "assistant", "message",
                                      message, "parent_tool_use_id", "session_id",
                                      o->session_id, "uuid",
                                      json_get_str(doc, "event_id", NULL)));
}

static void new_message_id(cli_output *o, const char *request_id)
{
    free(o->message_id);
    loom_str s = LOOM_STR_INIT;
    if (request_id && *request_id)
        str_append(&s, request_id, strlen(request_id));
    else
        str_printf(&s, "msg_loom_%d", ++o->message_seq);
    o->message_id = str_steal(&s);
}

void output_stream_json_event(cli_output *o, const loom_event *ev, const json_t *doc)
{
    const json_t *p = json_get_obj(doc, "payload");
    switch (ev->kind) {
    case LOOM_EV_RUN_STATE_CHANGED:
        if (!o->init_sent && !strcmp(json_get_str(p, "state", ""), "running"))
            send_init(o, doc);
        break;
    case LOOM_EV_STREAM_RESTARTED:
        str_clear(&o->held);
        break;
    case LOOM_EV_MODEL_COMPLETED: {
        new_message_id(o, json_get_str(p, "request_id", NULL));
        if (o->held.len) {
            json_t *block = json_pack("{s:s,s:s%}", "type", "text", "text", o->held.ptr,
                                      o->held.len);
            send_assistant(o, doc, block, json_get_str(p, "stop_reason", NULL),
                           output_usage_snake(json_get_obj(p, "usage")));
        }
        str_clear(&o->held);
        break;
    }
    case LOOM_EV_TOOL_STARTED: {
        if (!o->message_id)
            new_message_id(o, NULL);
        json_t *input = json_object_get(p, "input");
        json_t *block = json_pack("{s:s,s:s,s:s,s:O}", "type", "tool_use", "id",
                                  json_get_str(p, "call_id", ""), "name",
                                  json_get_str(p, "tool", "?"), "input",
                                  input ? input : json_null());
        send_assistant(o, doc, block, "tool_use", NULL);
        break;
    }
    case LOOM_EV_TOOL_FINISHED:
    case LOOM_EV_TOOL_FAILED: {
        json_t *block = json_pack("{s:s,s:s,s:s,s:b}", "type", "tool_result", "tool_use_id",
                                  json_get_str(p, "call_id", ""), "content",
                                  json_get_str(p, "output", ""), "is_error",
                                  ev->kind == LOOM_EV_TOOL_FAILED ||
                                      json_get_bool(p, "is_error", false));
        json_t *message = json_pack("{s:s,s:[o]}", "role", "user", "content", block);
        output_stream_json_line(json_pack("{s:s,s:o,s:n,s:s?,s:s?}", "type", "user", "message",
                                          message, "parent_tool_use_id", "session_id",
                                          o->session_id, "uuid",
                                          json_get_str(doc, "event_id", NULL)));
        break;
    }
    default:
        break;
    }
}

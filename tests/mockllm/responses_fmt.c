/* responses_fmt.c — the OpenAI Responses wire format (POST /v1/responses):
 * conversation summary over the `input` items for turn matching, the
 * response object, and the typed event stream (response.created,
 * output_item.added/done around reasoning-summary, output-text and
 * function-call-argument deltas, each with a sequence_number, ending in
 * response.completed or response.incomplete). */
#include "mockllm.h"

#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static void resp_summarize(const json_t *req, mock_conv *out)
{
    const json_t *input = json_object_get(req, "input");
    const json_t *last_user = NULL;
    const char *instructions = json_string_value(json_object_get(req, "instructions"));
    conv_append(&out->system, instructions);
    if (json_is_string(input))
        out->last_user = xstrdup(json_string_value(input));
    bool in_run = false;
    size_t i;
    json_t *item;
    json_array_foreach(input, i, item) {
        const char *type = json_string_value(json_object_get(item, "type"));
        const char *role = json_string_value(json_object_get(item, "role"));
        /* The short form {"role", "content"} without a type is a message. */
        bool is_msg = type ? !strcmp(type, "message") : role != NULL;
        if (!role)
            role = "";
        /* Every *_call item (function_call, custom_tool_call, ...) and
         * reasoning is the model's own output, just like its messages. */
        bool assistant = (is_msg && !strcmp(role, "assistant")) ||
                         (type && (!strcmp(type, "reasoning") || ends_with(type, "_call")));
        if (assistant && !in_run)
            out->assistant_turns++;
        in_run = assistant;
        if (type && ends_with(type, "_call_output"))
            out->tool_results++;
        /* Loom's working-memory tail is a user message of its own here, and
         * conv_content_text drops it: the user's words are the last user
         * message with any text left. */
        if (is_msg && !strcmp(role, "user")) {
            char *t = conv_content_text(json_object_get(item, "content"));
            if (*t)
                last_user = item;
            free(t);
        }
        if (is_msg && (!strcmp(role, "system") || !strcmp(role, "developer"))) {
            char *t = conv_content_text(json_object_get(item, "content"));
            conv_append(&out->system, t);
            free(t);
        }
    }
    if (!out->last_user)
        out->last_user = conv_content_text(json_object_get(last_user, "content"));
    if (!out->system)
        out->system = xstrdup("");
}

static const char *model_or_default(const mock_render *r)
{
    return r->model ? r->model : "mock-model";
}

static bool incomplete(const mock_render *r)
{
    return !strcmp(r->reply->stop_reason, "max_tokens");
}

static bool wants_encrypted_reasoning(const json_t *req)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(req, "include"), i, v) {
        const char *s = json_string_value(v);
        if (s && !strcmp(s, "reasoning.encrypted_content"))
            return true;
    }
    return false;
}

/* The finished output items, in the order the stream emits them. */
static json_t *output_items(const mock_render *r)
{
    const mock_reply *rep = r->reply;
    json_t *items = json_array();
    size_t k = 0;
    if (rep->thinking) {
        char *id = xprintf("rs_mock_%lu_%zu", r->reqno, k++);
        json_t *it = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "id", id, "type",
                               "reasoning", "summary", "type", "summary_text", "text",
                               rep->thinking);
        /* The signature stands in for the opaque blob clients send back. */
        if (wants_encrypted_reasoning(r->req))
            json_object_set_new(it, "encrypted_content", json_string(rep->signature));
        json_array_append_new(items, it);
        free(id);
    }
    if (rep->text || (!rep->thinking && rep->n_calls == 0)) {
        char *id = xprintf("msg_mock_%lu_%zu", r->reqno, k++);
        json_array_append_new(
            items, json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:[], s:[], s:s}]}", "id",
                             id, "type", "message", "status",
                             incomplete(r) ? "incomplete" : "completed", "role",
                             "assistant", "content", "type", "output_text",
                             "annotations", "logprobs", "text",
                             rep->text ? rep->text : ""));
        free(id);
    }
    for (size_t i = 0; i < rep->n_calls; i++) {
        char *id = xprintf("fc_mock_%lu_%zu", r->reqno, k++);
        char *call = rep->calls[i].id ? xstrdup(rep->calls[i].id)
                                      : xprintf("call_mock_%lu_%zu", r->reqno, i);
        json_array_append_new(
            items, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", id, "type",
                             "function_call", "status", "completed", "arguments",
                             rep->calls[i].arguments, "call_id", call, "name",
                             rep->calls[i].name));
        free(id);
        free(call);
    }
    if (rep->text_after) {
        char *id = xprintf("msg_mock_%lu_%zu", r->reqno, k++);
        json_array_append_new(
            items, json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:[], s:[], s:s}]}", "id",
                             id, "type", "message", "status",
                             incomplete(r) ? "incomplete" : "completed", "role",
                             "assistant", "content", "type", "output_text",
                             "annotations", "logprobs", "text", rep->text_after));
        free(id);
    }
    return items;
}

/* OpenAI counts cached tokens inside input_tokens; the scenario counts them
 * apart, Anthropic-style, so add them back. */
static json_t *usage_json(const mock_usage *u)
{
    long input = u->input + u->cache_read + u->cache_creation;
    return json_pack("{s:I, s:{s:I}, s:I, s:{s:I}, s:I}", "input_tokens",
                     (json_int_t)input, "input_tokens_details", "cached_tokens",
                     (json_int_t)u->cache_read, "output_tokens", (json_int_t)u->output,
                     "output_tokens_details", "reasoning_tokens",
                     (json_int_t)u->reasoning, "total_tokens",
                     (json_int_t)(input + u->output));
}

static json_t *echo(const mock_render *r, const char *key, json_t *fallback)
{
    json_t *v = json_object_get(r->req, key);
    if (v) {
        json_decref(fallback);
        return json_deep_copy(v);
    }
    return fallback;
}

/* The response object; output and usage are taken (usage NULL -> null). */
static json_t *response_obj(const mock_render *r, const char *status, json_t *output,
                            json_t *usage)
{
    char *id = xprintf("resp_mock_%lu", r->reqno);
    json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:n}", "id", id, "object", "response",
                          "created_at", (json_int_t)r->created, "status", status,
                          "error");
    free(id);
    json_object_set_new(o, "incomplete_details",
                        !strcmp(status, "incomplete")
                            ? json_pack("{s:s}", "reason", "max_output_tokens")
                            : json_null());
    json_object_set_new(o, "instructions", echo(r, "instructions", json_null()));
    json_object_set_new(o, "max_output_tokens", echo(r, "max_output_tokens", json_null()));
    json_object_set_new(o, "model", json_string(model_or_default(r)));
    json_object_set_new(o, "output", output);
    json_object_set_new(o, "parallel_tool_calls", json_true());
    json_object_set_new(o, "previous_response_id",
                        echo(r, "previous_response_id", json_null()));
    json_object_set_new(o, "reasoning", echo(r, "reasoning",
                                             json_pack("{s:n, s:n}", "effort", "summary")));
    json_object_set_new(o, "store", echo(r, "store", json_false()));
    json_object_set_new(o, "temperature", echo(r, "temperature", json_real(1.0)));
    json_object_set_new(o, "text", json_pack("{s:{s:s}}", "format", "type", "text"));
    json_object_set_new(o, "tool_choice", echo(r, "tool_choice", json_string("auto")));
    json_object_set_new(o, "tools", echo(r, "tools", json_array()));
    json_object_set_new(o, "top_p", echo(r, "top_p", json_real(1.0)));
    json_object_set_new(o, "truncation", json_string("disabled"));
    json_object_set_new(o, "usage", usage ? usage : json_null());
    json_object_set_new(o, "user", json_null());
    json_object_set_new(o, "metadata", echo(r, "metadata", json_object()));
    return o;
}

static json_t *resp_message(const mock_render *r)
{
    return response_obj(r, incomplete(r) ? "incomplete" : "completed", output_items(r),
                        usage_json(&r->usage));
}

typedef struct {
    mock_events *ev;
    long seq;
    size_t chunk;
} emitter;

/* Takes data; "type" and "sequence_number" go first, as the API writes them. */
static void emit(emitter *e, const char *type, json_t *data)
{
    json_t *o = json_pack("{s:s, s:I}", "type", type, "sequence_number",
                          (json_int_t)e->seq++);
    json_object_update(o, data);
    json_decref(data);
    events_add_json(e->ev, type, o);
}

/* Emits one delta event per piece: base fields plus "delta". */
static void deltas(emitter *e, const char *type, const json_t *base, const char *text)
{
    size_t len = strlen(text);
    for (size_t off = 0; off < len;) {
        size_t n = utf8_piece_len(text + off, len - off, e->chunk);
        json_t *d = json_deep_copy(base);
        json_object_set_new(d, "delta", json_stringn(text + off, n));
        emit(e, type, d);
        off += n;
    }
}

static void stream_reasoning(emitter *e, const json_t *item, size_t idx)
{
    const char *id = json_string_value(json_object_get(item, "id"));
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(item, "summary"), 0), "text"));
    json_t *base = json_pack("{s:s, s:I, s:i}", "item_id", id, "output_index",
                             (json_int_t)idx, "summary_index", 0);
    json_t *d = json_deep_copy(base);
    json_object_set_new(d, "part", json_pack("{s:s, s:s}", "type", "summary_text",
                                             "text", ""));
    emit(e, "response.reasoning_summary_part.added", d);
    deltas(e, "response.reasoning_summary_text.delta", base, text);
    d = json_deep_copy(base);
    json_object_set_new(d, "text", json_string(text));
    emit(e, "response.reasoning_summary_text.done", d);
    d = json_deep_copy(base);
    json_object_set_new(d, "part", json_pack("{s:s, s:s}", "type", "summary_text",
                                             "text", text));
    emit(e, "response.reasoning_summary_part.done", d);
    json_decref(base);
}

static void stream_message(emitter *e, const json_t *item, size_t idx)
{
    const char *id = json_string_value(json_object_get(item, "id"));
    const json_t *part = json_array_get(json_object_get(item, "content"), 0);
    const char *text = json_string_value(json_object_get(part, "text"));
    json_t *base = json_pack("{s:s, s:I, s:i}", "item_id", id, "output_index",
                             (json_int_t)idx, "content_index", 0);
    json_t *d = json_deep_copy(base);
    json_object_set_new(d, "part", json_pack("{s:s, s:[], s:[], s:s}", "type",
                                             "output_text", "annotations", "logprobs",
                                             "text", ""));
    emit(e, "response.content_part.added", d);
    json_t *dbase = json_deep_copy(base);
    json_object_set_new(dbase, "logprobs", json_array());
    deltas(e, "response.output_text.delta", dbase, text);
    json_decref(dbase);
    d = json_deep_copy(base);
    json_object_set_new(d, "text", json_string(text));
    json_object_set_new(d, "logprobs", json_array());
    emit(e, "response.output_text.done", d);
    d = json_deep_copy(base);
    json_object_set_new(d, "part", json_deep_copy(part));
    emit(e, "response.content_part.done", d);
    json_decref(base);
}

static void stream_call(emitter *e, const json_t *item, size_t idx)
{
    const char *id = json_string_value(json_object_get(item, "id"));
    const char *args = json_string_value(json_object_get(item, "arguments"));
    json_t *base = json_pack("{s:s, s:I}", "item_id", id, "output_index", (json_int_t)idx);
    deltas(e, "response.function_call_arguments.delta", base, args);
    json_t *d = json_deep_copy(base);
    json_object_set_new(d, "arguments", json_string(args));
    emit(e, "response.function_call_arguments.done", d);
    json_decref(base);
}

/* The item as output_item.added shows it: nothing generated yet. */
static json_t *item_skeleton(const json_t *item)
{
    json_t *s = json_deep_copy(item);
    const char *type = json_string_value(json_object_get(item, "type"));
    if (!strcmp(type, "reasoning")) {
        json_object_set_new(s, "summary", json_array());
        json_object_del(s, "encrypted_content");
    } else if (!strcmp(type, "message")) {
        json_object_set_new(s, "status", json_string("in_progress"));
        json_object_set_new(s, "content", json_array());
    } else {
        json_object_set_new(s, "status", json_string("in_progress"));
        json_object_set_new(s, "arguments", json_string(""));
    }
    return s;
}

static void resp_stream(const mock_render *r, mock_events *ev)
{
    emitter e = {ev, 0, r->chunk_size};
    json_t *items = output_items(r);
    emit(&e, "response.created",
         json_pack("{s:o}", "response", response_obj(r, "in_progress", json_array(), NULL)));
    emit(&e, "response.in_progress",
         json_pack("{s:o}", "response", response_obj(r, "in_progress", json_array(), NULL)));
    size_t idx;
    json_t *item;
    json_array_foreach(items, idx, item) {
        emit(&e, "response.output_item.added",
             json_pack("{s:I, s:o}", "output_index", (json_int_t)idx, "item",
                       item_skeleton(item)));
        const char *type = json_string_value(json_object_get(item, "type"));
        if (!strcmp(type, "reasoning"))
            stream_reasoning(&e, item, idx);
        else if (!strcmp(type, "message")) {
            /* whole_items: the text comes only in output_item.done, as in
             * Codex's fixture (openai/codex codex-rs/core/tests/
             * cli_responses_fixture.sse). */
            if (!r->whole_items)
                stream_message(&e, item, idx);
        }
        else
            stream_call(&e, item, idx);
        emit(&e, "response.output_item.done",
             json_pack("{s:I, s:O}", "output_index", (json_int_t)idx, "item", item));
    }
    bool inc = incomplete(r);
    emit(&e, inc ? "response.incomplete" : "response.completed",
         json_pack("{s:o}", "response",
                   response_obj(r, inc ? "incomplete" : "completed", items,
                                usage_json(&r->usage))));
}

static json_t *resp_error(int status, const char *message)
{
    return openai_error_body(status, message, true);
}

const mock_format responses_format = {
    .name = "responses",
    .request_id_header = "x-request-id",
    .summarize = resp_summarize,
    .message = resp_message,
    .stream = resp_stream,
    .error = resp_error,
    .window_error = openai_window_error,
};

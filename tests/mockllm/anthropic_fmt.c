/* anthropic_fmt.c — the Anthropic Messages wire format (POST /v1/messages):
 * how a request's conversation is summarised for turn matching, and how a
 * scripted reply is rendered as a message object or as the SSE event
 * sequence the real API streams (message_start, content blocks with
 * thinking/signature/text/input_json deltas, ping, message_delta,
 * message_stop), plus Anthropic-shaped error bodies. */
#include "mockllm.h"

#include <stdlib.h>
#include <string.h>

static void anth_summarize(const json_t *req, mock_conv *out)
{
    const json_t *msgs = json_object_get(req, "messages");
    const json_t *last_user = NULL;
    bool in_run = false;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        bool assistant = role && !strcmp(role, "assistant");
        if (assistant && !in_run)
            out->assistant_turns++;
        in_run = assistant;
        if (role && !strcmp(role, "user"))
            last_user = m;
        size_t j;
        json_t *block;
        json_array_foreach(json_object_get(m, "content"), j, block) {
            const char *type = json_string_value(json_object_get(block, "type"));
            if (type && !strcmp(type, "tool_result"))
                out->tool_results++;
        }
    }
    out->last_user = conv_content_text(json_object_get(last_user, "content"));
    out->system = conv_content_text(json_object_get(req, "system"));
}

static char *tool_id(const mock_render *r, size_t i)
{
    const char *id = r->reply->calls[i].id;
    return id ? xstrdup(id) : xprintf("toolu_mock_%lu_%zu", r->reqno, i);
}

static json_t *tool_input(const mock_tool_call *c)
{
    /* Raw (non-object) arguments cannot be an object; hand back the string so
     * the client sees exactly what the scenario scripted. */
    return c->input ? json_deep_copy(c->input) : json_string(c->arguments);
}

/* Thinking tokens, where a reply thought: Usage.output_tokens_details
 * (@anthropic-ai/sdk 1.15.0, src/resources/messages/messages.ts,
 * OutputTokensDetails.thinking_tokens). */
static void add_thinking_tokens(json_t *usage, const mock_usage *u)
{
    if (u->reasoning > 0)
        json_object_set_new(usage, "output_tokens_details",
                            json_pack("{s:I}", "thinking_tokens", (json_int_t)u->reasoning));
}

/* The usage object of message_start and of a non-streaming message. */
static json_t *usage_json(const mock_usage *u, long output, bool final)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "input_tokens", (json_int_t)u->input,
                          "cache_creation_input_tokens", (json_int_t)u->cache_creation,
                          "cache_read_input_tokens", (json_int_t)u->cache_read,
                          "output_tokens", (json_int_t)output);
    if (u->cache_creation_1h > 0)
        json_object_set_new(o, "cache_creation",
                            json_pack("{s:I,s:I}", "ephemeral_5m_input_tokens",
                                      (json_int_t)(u->cache_creation - u->cache_creation_1h),
                                      "ephemeral_1h_input_tokens",
                                      (json_int_t)u->cache_creation_1h));
    if (final)
        add_thinking_tokens(o, u);
    return o;
}

/* message_delta's usage: the SDK types let every count but output_tokens be
 * null there (MessageDeltaUsage), and the mock sends them so, which a client
 * must not read as zero. */
static json_t *delta_usage_json(const mock_usage *u)
{
    json_t *o = json_pack("{s:n, s:n, s:n, s:I}", "input_tokens", "cache_creation_input_tokens",
                          "cache_read_input_tokens", "output_tokens", (json_int_t)u->output);
    add_thinking_tokens(o, u);
    return o;
}

static const char *model_or_default(const mock_render *r)
{
    return r->model ? r->model : "mock-model";
}

static bool wants_text_block(const mock_reply *rep)
{
    /* An empty reply still carries one (empty) text block, as the API does. */
    return rep->text || (!rep->thinking && rep->n_calls == 0);
}

static json_t *anth_message(const mock_render *r)
{
    const mock_reply *rep = r->reply;
    json_t *content = json_array();
    if (rep->thinking)
        json_array_append_new(content,
                              json_pack("{s:s, s:s, s:s}", "type", "thinking",
                                        "thinking", rep->thinking, "signature",
                                        rep->signature));
    if (wants_text_block(rep))
        json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text",
                                                 rep->text ? rep->text : ""));
    for (size_t i = 0; i < rep->n_calls; i++) {
        char *id = tool_id(r, i);
        json_array_append_new(content,
                              json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use",
                                        "id", id, "name", rep->calls[i].name, "input",
                                        tool_input(&rep->calls[i])));
        free(id);
    }
    if (rep->text_after)
        json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text",
                                                 rep->text_after));
    char *id = xprintf("msg_mock_%lu", r->reqno);
    json_t *msg = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:n, s:o}", "id", id,
                            "type", "message", "role", "assistant", "model",
                            model_or_default(r), "content", content, "stop_reason",
                            rep->stop_reason, "stop_sequence", "usage",
                            usage_json(&r->usage, r->usage.output, true));
    free(id);
    return msg;
}

/* Takes data; "type" goes first, as the API writes it. */
static void add_event(mock_events *ev, const char *type, json_t *data)
{
    json_t *o = json_pack("{s:s}", "type", type);
    json_object_update(o, data);
    json_decref(data);
    events_add_json(ev, type, o);
}

static void block_start(mock_events *ev, size_t index, json_t *block)
{
    add_event(ev, "content_block_start",
              json_pack("{s:I, s:o}", "index", (json_int_t)index, "content_block", block));
}

static void block_delta(mock_events *ev, size_t index, json_t *delta)
{
    add_event(ev, "content_block_delta",
              json_pack("{s:I, s:o}", "index", (json_int_t)index, "delta", delta));
}

static void block_stop(mock_events *ev, size_t index)
{
    add_event(ev, "content_block_stop", json_pack("{s:I}", "index", (json_int_t)index));
}

/* Emits text as deltas of chunk_size bytes: {"type": dtype, field: piece}. */
static void chunked_deltas(mock_events *ev, size_t index, const char *dtype,
                           const char *field, const char *text, size_t chunk)
{
    size_t len = strlen(text);
    for (size_t off = 0; off < len;) {
        size_t n = utf8_piece_len(text + off, len - off, chunk);
        block_delta(ev, index, json_pack("{s:s, s:s%}", "type", dtype, field,
                                         text + off, n));
        off += n;
    }
}

/* The API pings once, right after the first content block opens. */
static void ping_once(mock_events *ev, bool *pinged)
{
    if (!*pinged)
        add_event(ev, "ping", json_object());
    *pinged = true;
}

static void anth_stream(const mock_render *r, mock_events *ev)
{
    const mock_reply *rep = r->reply;
    char *id = xprintf("msg_mock_%lu", r->reqno);
    /* message_start reports a token or so of output, as the real API does;
     * the final count arrives in message_delta. */
    long early_out = r->usage.output < 1 ? r->usage.output : 1;
    add_event(ev, "message_start",
              json_pack("{s:{s:s, s:s, s:s, s:s, s:[], s:n, s:n, s:o}}", "message",
                        "id", id, "type", "message", "role", "assistant", "model",
                        model_or_default(r), "content", "stop_reason",
                        "stop_sequence", "usage", usage_json(&r->usage, early_out, false)));
    free(id);

    size_t index = 0;
    bool pinged = false;

    if (rep->thinking) {
        block_start(ev, index, json_pack("{s:s, s:s, s:s}", "type", "thinking",
                                         "thinking", "", "signature", ""));
        ping_once(ev, &pinged);
        chunked_deltas(ev, index, "thinking_delta", "thinking", rep->thinking,
                       r->chunk_size);
        block_delta(ev, index, json_pack("{s:s, s:s}", "type", "signature_delta",
                                         "signature", rep->signature));
        block_stop(ev, index++);
    }
    if (wants_text_block(rep)) {
        block_start(ev, index, json_pack("{s:s, s:s}", "type", "text", "text", ""));
        ping_once(ev, &pinged);
        chunked_deltas(ev, index, "text_delta", "text", rep->text ? rep->text : "",
                       r->chunk_size);
        block_stop(ev, index++);
    }
    for (size_t i = 0; i < rep->n_calls; i++) {
        char *tid = tool_id(r, i);
        block_start(ev, index, json_pack("{s:s, s:s, s:s, s:{}}", "type", "tool_use",
                                         "id", tid, "name", rep->calls[i].name,
                                         "input"));
        free(tid);
        ping_once(ev, &pinged);
        /* The API opens every tool input with an empty partial_json. */
        block_delta(ev, index, json_pack("{s:s, s:s}", "type", "input_json_delta",
                                         "partial_json", ""));
        chunked_deltas(ev, index, "input_json_delta", "partial_json",
                       rep->calls[i].arguments, r->chunk_size);
        block_stop(ev, index++);
    }
    if (rep->text_after) {
        block_start(ev, index, json_pack("{s:s, s:s}", "type", "text", "text", ""));
        chunked_deltas(ev, index, "text_delta", "text", rep->text_after, r->chunk_size);
        block_stop(ev, index++);
    }
    add_event(ev, "message_delta",
              json_pack("{s:{s:s, s:n}, s:o}", "delta", "stop_reason", rep->stop_reason,
                        "stop_sequence", "usage", delta_usage_json(&r->usage)));
    add_event(ev, "message_stop", json_object());
}

static json_t *anth_error(int status, const char *message)
{
    const char *type, *text;
    switch (status) {
    case 400: type = "invalid_request_error"; text = "Invalid request."; break;
    case 401: type = "authentication_error"; text = "invalid x-api-key"; break;
    case 402: type = "billing_error"; text = "Your credit balance is too low."; break;
    case 403:
        type = "permission_error";
        text = "Your API key does not have permission to use the specified resource.";
        break;
    case 404: type = "not_found_error"; text = "Not found."; break;
    case 413:
        type = "request_too_large";
        text = "Request exceeds the maximum allowed number of bytes.";
        break;
    case 429:
        type = "rate_limit_error";
        text = "This request would exceed the rate limit for your organization. "
               "Please try again later.";
        break;
    case 504: type = "timeout_error"; text = "Request timed out."; break;
    case 529: type = "overloaded_error"; text = "Overloaded"; break;
    default:
        type = status >= 500 ? "api_error" : "invalid_request_error";
        text = status >= 500 ? "Internal server error" : "Invalid request.";
        break;
    }
    return json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type", type,
                     "message", message ? message : text);
}

/* What the API answers (HTTP 400) when the prompt does not fit the model. */
static json_t *anth_window_error(long est, long max)
{
    char *msg = xprintf("prompt is too long: %ld tokens > %ld maximum", est, max);
    json_t *j = json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
                          "invalid_request_error", "message", msg);
    free(msg);
    return j;
}

static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (!strchr(" \t\n\r\v\f", *s))
            return false;
    return true;
}

/* The API's 400s a client can earn with a well-formed body. Messages: "text
 * content blocks must contain non-whitespace text" (issue 12's finding).
 * Thinking: budget_tokens ≥ 1024 and < max_tokens (@anthropic-ai/sdk 1.15.0,
 * src/resources/messages/messages.ts, ThinkingConfigEnabled), and no
 * temperature but 1 beside it. */
static char *anth_refuse(const json_t *req)
{
    size_t i, j;
    json_t *m, *block;
    json_array_foreach(json_object_get(req, "messages"), i, m) {
        json_array_foreach(json_object_get(m, "content"), j, block) {
            const char *type = json_string_value(json_object_get(block, "type"));
            if (type && !strcmp(type, "text") &&
                blank(json_string_value(json_object_get(block, "text"))))
                return xprintf("messages: text content blocks must contain non-whitespace "
                               "text (messages.%zu.content.%zu)", i, j);
        }
    }
    const json_t *th = json_object_get(req, "thinking");
    const char *th_type = json_string_value(json_object_get(th, "type"));
    if (th_type && !strcmp(th_type, "enabled")) {
        json_int_t budget = json_integer_value(json_object_get(th, "budget_tokens"));
        json_int_t max = json_integer_value(json_object_get(req, "max_tokens"));
        if (budget < 1024)
            return xstrdup("thinking.enabled.budget_tokens: Input should be greater than or "
                           "equal to 1024");
        if (budget >= max)
            return xstrdup("`max_tokens` must be greater than `thinking.budget_tokens`");
        const json_t *t = json_object_get(req, "temperature");
        if (t && json_number_value(t) != 1.0)
            return xstrdup("`temperature` may only be set to 1 when thinking is enabled");
    }
    return NULL;
}

const mock_format anthropic_format = {
    .name = "anthropic",
    .request_id_header = "request-id",
    .summarize = anth_summarize,
    .message = anth_message,
    .stream = anth_stream,
    .error = anth_error,
    .window_error = anth_window_error,
    .refuse = anth_refuse,
};

/* chat_fmt.c — the OpenAI Chat Completions wire format
 * (POST /v1/chat/completions): conversation summary for turn matching, the
 * chat.completion object, the chat.completion.chunk stream (role first,
 * reasoning_content as DeepSeek/vLLM gateways send it, content, tool_calls by
 * index, finish_reason, optional usage chunk, [DONE]), and OpenAI-shaped
 * error bodies, which the Responses format shares. */
#include "mockllm.h"

#include <stdlib.h>
#include <string.h>

static void chat_summarize(const json_t *req, mock_conv *out)
{
    const json_t *last_user = NULL;
    bool in_run = false;
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(req, "messages"), i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!role)
            role = "";
        bool assistant = !strcmp(role, "assistant");
        if (assistant && !in_run)
            out->assistant_turns++;
        in_run = assistant;
        /* "function" is the pre-tools name for a tool result. */
        if (!strcmp(role, "tool") || !strcmp(role, "function"))
            out->tool_results++;
        else if (!strcmp(role, "user"))
            last_user = m;
        else if (!strcmp(role, "system") || !strcmp(role, "developer")) {
            char *t = conv_content_text(json_object_get(m, "content"));
            conv_append(&out->system, t);
            free(t);
        }
    }
    out->last_user = conv_content_text(json_object_get(last_user, "content"));
    if (!out->system)
        out->system = xstrdup("");
}

const char *chat_finish_reason(const char *stop_reason)
{
    if (!strcmp(stop_reason, "tool_use"))
        return "tool_calls";
    if (!strcmp(stop_reason, "max_tokens"))
        return "length";
    if (!strcmp(stop_reason, "refusal"))
        return "content_filter";
    return "stop";
}

static char *call_id(const mock_render *r, size_t i)
{
    const char *id = r->reply->calls[i].id;
    return id ? xstrdup(id) : xprintf("call_mock_%lu_%zu", r->reqno, i);
}

/* OpenAI counts cached tokens inside prompt_tokens; the scenario counts them
 * apart, Anthropic-style, so add them back. */
static json_t *usage_json(const mock_usage *u)
{
    long prompt = u->input + u->cache_read + u->cache_creation;
    return json_pack("{s:I, s:I, s:I, s:{s:I}, s:{s:I}}", "prompt_tokens",
                     (json_int_t)prompt, "completion_tokens", (json_int_t)u->output,
                     "total_tokens", (json_int_t)(prompt + u->output),
                     "prompt_tokens_details", "cached_tokens",
                     (json_int_t)u->cache_read, "completion_tokens_details",
                     "reasoning_tokens", (json_int_t)u->reasoning);
}

static const char *model_or_default(const mock_render *r)
{
    return r->model ? r->model : "mock-model";
}

static json_t *chat_message(const mock_render *r)
{
    const mock_reply *rep = r->reply;
    json_t *msg = json_pack("{s:s}", "role", "assistant");
    /* content is null when the model only called tools. */
    if (rep->text || rep->n_calls == 0)
        json_object_set_new(msg, "content", json_string(rep->text ? rep->text : ""));
    else
        json_object_set_new(msg, "content", json_null());
    if (rep->thinking)
        json_object_set_new(msg, "reasoning_content", json_string(rep->thinking));
    json_object_set_new(msg, "refusal", json_null());
    if (rep->n_calls) {
        json_t *calls = json_array();
        for (size_t i = 0; i < rep->n_calls; i++) {
            char *id = call_id(r, i);
            json_array_append_new(
                calls, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", id, "type",
                                 "function", "function", "name", rep->calls[i].name,
                                 "arguments", rep->calls[i].arguments));
            free(id);
        }
        json_object_set_new(msg, "tool_calls", calls);
    }
    char *id = xprintf("chatcmpl-mock%lu", r->reqno);
    json_t *out = json_pack(
        "{s:s, s:s, s:I, s:s, s:[{s:i, s:o, s:n, s:s}], s:o, s:s}", "id", id,
        "object", "chat.completion", "created", (json_int_t)r->created, "model",
        model_or_default(r), "choices", "index", 0, "message", msg, "logprobs",
        "finish_reason", chat_finish_reason(rep->stop_reason), "usage",
        usage_json(&r->usage), "system_fingerprint", "fp_mock");
    free(id);
    return out;
}

typedef struct {
    const mock_render *r;
    mock_events *ev;
    char *id;
    bool include_usage;
} chunker;

static void add_chunk(chunker *c, json_t *choices)
{
    json_t *chunk = json_pack("{s:s, s:s, s:I, s:s, s:s, s:o}", "id", c->id, "object",
                              "chat.completion.chunk", "created",
                              (json_int_t)c->r->created, "model",
                              model_or_default(c->r), "system_fingerprint", "fp_mock",
                              "choices", choices);
    /* With include_usage every chunk carries "usage": null until the last. */
    if (c->include_usage)
        json_object_set_new(chunk, "usage", json_null());
    events_add_json(c->ev, NULL, chunk);
}

static void add_delta(chunker *c, json_t *delta, const char *finish)
{
    json_t *choice = json_pack("{s:i, s:o, s:n}", "index", 0, "delta", delta, "logprobs");
    json_object_set_new(choice, "finish_reason", finish ? json_string(finish) : json_null());
    add_chunk(c, json_pack("[o]", choice));
}

static void text_deltas(chunker *c, const char *field, const char *text)
{
    size_t len = strlen(text);
    for (size_t off = 0; off < len;) {
        size_t n = utf8_piece_len(text + off, len - off, c->r->chunk_size);
        add_delta(c, json_pack("{s:s%}", field, text + off, n), NULL);
        off += n;
    }
}

static void chat_stream(const mock_render *r, mock_events *ev)
{
    const mock_reply *rep = r->reply;
    chunker c = {r, ev, xprintf("chatcmpl-mock%lu", r->reqno), false};
    c.include_usage = json_is_true(
        json_object_get(json_object_get(r->req, "stream_options"), "include_usage"));

    add_delta(&c, json_pack("{s:s, s:s, s:n}", "role", "assistant", "content", "",
                            "refusal"),
              NULL);
    if (rep->thinking)
        text_deltas(&c, "reasoning_content", rep->thinking);
    if (rep->text)
        text_deltas(&c, "content", rep->text);
    for (size_t i = 0; i < rep->n_calls; i++) {
        /* The first chunk of a call names it; later ones carry only index and
         * argument pieces, which clients must stitch together by index. */
        char *id = call_id(r, i);
        add_delta(&c,
                  json_pack("{s:[{s:I, s:s, s:s, s:{s:s, s:s}}]}", "tool_calls",
                            "index", (json_int_t)i, "id", id, "type", "function",
                            "function", "name", rep->calls[i].name, "arguments", ""),
                  NULL);
        free(id);
        const char *args = rep->calls[i].arguments;
        size_t len = strlen(args);
        for (size_t off = 0; off < len;) {
            size_t n = utf8_piece_len(args + off, len - off, r->chunk_size);
            add_delta(&c,
                      json_pack("{s:[{s:I, s:{s:s%}}]}", "tool_calls", "index",
                                (json_int_t)i, "function", "arguments", args + off, n),
                      NULL);
            off += n;
        }
    }
    add_delta(&c, json_object(), chat_finish_reason(rep->stop_reason));
    if (c.include_usage) {
        json_t *chunk = json_pack("{s:s, s:s, s:I, s:s, s:s, s:[], s:o}", "id", c.id,
                                  "object", "chat.completion.chunk", "created",
                                  (json_int_t)r->created, "model", model_or_default(r),
                                  "system_fingerprint", "fp_mock", "choices", "usage",
                                  usage_json(&r->usage));
        events_add_json(ev, NULL, chunk);
    }
    static const char done[] = "data: [DONE]\n\n";
    events_add_raw(ev, done, sizeof done - 1);
    free(c.id);
}

json_t *openai_error_body(int status, const char *message, bool responses_api)
{
    const char *type = "invalid_request_error", *text, *code = NULL, *param = NULL;
    switch (status) {
    case 400: text = "Invalid request."; break;
    case 401:
        text = "Incorrect API key provided: sk-mock. You can find your API key at "
               "https://platform.openai.com/account/api-keys.";
        code = "invalid_api_key";
        break;
    case 403: text = "You are not allowed to sample from this model"; break;
    case 404:
        text = "The model does not exist or you do not have access to it.";
        code = "model_not_found";
        break;
    case 413:
        /* The context-overflow error clients must recognise to compact. */
        code = "context_length_exceeded";
        if (responses_api) {
            text = "Your input exceeds the context window of this model. Please "
                   "adjust your input and try again.";
            param = "input";
        } else {
            text = "This model's maximum context length is 128000 tokens. However, "
                   "your messages resulted in 200000 tokens. Please reduce the "
                   "length of the messages.";
            param = "messages";
        }
        break;
    case 429:
        type = "requests";
        code = "rate_limit_exceeded";
        text = "Rate limit reached for requests per min (RPM): Limit 3, Used 3, "
               "Requested 1. Please try again in 1s.";
        break;
    case 503:
    case 529:
        type = "server_error";
        text = "The engine is currently overloaded, please try again later.";
        break;
    default:
        if (status >= 500) {
            type = "server_error";
            text = "The server had an error while processing your request. Sorry "
                   "about that!";
        } else {
            text = "Invalid request.";
        }
        break;
    }
    json_t *err = json_pack("{s:s, s:s}", "message", message ? message : text, "type",
                            type);
    json_object_set_new(err, "param", param ? json_string(param) : json_null());
    json_object_set_new(err, "code", code ? json_string(code) : json_null());
    return json_pack("{s:o}", "error", err);
}

json_t *openai_window_error(long est, long max)
{
    char *msg = xprintf("This model's maximum context length is %ld tokens. However, "
                        "your messages resulted in %ld tokens. Please reduce the "
                        "length of the messages.", max, est);
    json_t *j = json_pack("{s:{s:s, s:s, s:s, s:s}}", "error", "message", msg, "type",
                          "invalid_request_error", "param", "messages", "code",
                          "context_length_exceeded");
    free(msg);
    return j;
}

static json_t *chat_error(int status, const char *message)
{
    return openai_error_body(status, message, false);
}

const mock_format chat_format = {
    .name = "chat",
    .request_id_header = "x-request-id",
    .summarize = chat_summarize,
    .message = chat_message,
    .stream = chat_stream,
    .error = chat_error,
    .window_error = openai_window_error,
};

/* anthropic.c — the Anthropic Messages codec (streaming and not).
 *
 * Encodes normalized requests with cache_control breakpoints, thinking
 * blocks sent back with their signatures, and tool results; decodes the
 * event stream (message_start, content_block_*, message_delta, message_stop,
 * ping, error) into one wire_response. Blocks are tracked by their stream
 * index so interleaved deltas land in the right block. */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "wire/provider.h"

#define ANTHROPIC_VERSION "2023-06-01"

/* --- encoding ---------------------------------------------------------- */

static void add_cache(json_t *block, bool on)
{
    if (on)
        json_object_set_new(block, "cache_control", json_pack("{s:s}", "type", "ephemeral"));
}

static json_t *encode_block(const wire_block *b)
{
    json_t *o = NULL;
    switch (b->kind) {
    case WIRE_BLOCK_TEXT:
        o = json_pack("{s:s,s:s}", "type", "text", "text", b->text ? b->text : "");
        break;
    case WIRE_BLOCK_IMAGE:
        o = json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "image", "source", "type", "base64",
                      "media_type", b->media_type ? b->media_type : "image/png", "data",
                      b->data ? b->data : "");
        break;
    case WIRE_BLOCK_TOOL_USE:
        o = json_pack("{s:s,s:s,s:s,s:O}", "type", "tool_use", "id", b->id ? b->id : "", "name",
                      b->name ? b->name : "", "input", b->input ? b->input : json_object());
        break;
    case WIRE_BLOCK_TOOL_RESULT:
        o = json_pack("{s:s,s:s,s:s}", "type", "tool_result", "tool_use_id", b->id ? b->id : "",
                      "content", b->text ? b->text : "");
        if (b->is_error)
            json_object_set_new(o, "is_error", json_true());
        break;
    case WIRE_BLOCK_THINKING:
        /* Without a signature the API rejects a thinking block; drop it. */
        if (!b->signature)
            return NULL;
        o = json_pack("{s:s,s:s,s:s}", "type", "thinking", "thinking", b->text ? b->text : "",
                      "signature", b->signature);
        break;
    case WIRE_BLOCK_REDACTED_THINKING:
        o = json_pack("{s:s,s:s}", "type", "redacted_thinking", "data", b->data ? b->data : "");
        break;
    }
    if (o)
        add_cache(o, b->cache_control);
    return o;
}

static int anthropic_encode(const wire_request *req, const provider_config *cfg,
                            wire_http_call *call, loom_error *err)
{
    const char *base = cfg->base_url ? cfg->base_url : "https://api.anthropic.com";
    size_t blen = strlen(base);
    while (blen && base[blen - 1] == '/')
        blen--;
    str_append(&call->url, base, blen);
    str_puts(&call->url, "/v1/messages");

    wire_http_call_header(call, "Content-Type: application/json");
    wire_http_call_header(call, "anthropic-version: %s", ANTHROPIC_VERSION);
    if (cfg->api_key && *cfg->api_key)
        wire_http_call_header(call, "x-api-key: %s", cfg->api_key);
    if (req->stream)
        wire_http_call_header(call, "Accept: text/event-stream");

    json_t *body = json_object();
    json_set_str(body, "model", req->model ? req->model : cfg->model);
    json_object_set_new(body, "max_tokens",
                        json_integer(req->max_tokens > 0 ? req->max_tokens : 4096));
    json_t *system = json_array();
    if (req->system && *req->system) {
        json_t *sys = json_pack("{s:s,s:s}", "type", "text", "text", req->system);
        add_cache(sys, req->system_cache);
        json_array_append_new(system, sys);
    }
    if (req->system_dynamic && *req->system_dynamic)
        json_array_append_new(system, json_pack("{s:s,s:s}", "type", "text", "text",
                                                req->system_dynamic));
    if (json_array_size(system))
        json_object_set_new(body, "system", system);
    else
        json_decref(system);
    json_t *msgs = json_array();
    for (size_t i = 0; i < req->n_messages; i++) {
        const wire_message *m = &req->messages[i];
        json_t *content = json_array();
        for (size_t j = 0; j < m->n_blocks; j++) {
            json_t *b = encode_block(&m->blocks[j]);
            if (b)
                json_array_append_new(content, b);
        }
        if (json_array_size(content) == 0) {
            /* The API refuses empty content; an empty turn carries no meaning. */
            json_decref(content);
            continue;
        }
        json_array_append_new(msgs, json_pack("{s:s,s:o}", "role", wire_role_name(m->role),
                                              "content", content));
    }
    json_object_set_new(body, "messages", msgs);
    if (req->n_tools) {
        json_t *tools = json_array();
        for (size_t i = 0; i < req->n_tools; i++)
            json_array_append_new(tools, json_pack("{s:s,s:s,s:O}", "name", req->tools[i].name,
                                                   "description", req->tools[i].description,
                                                   "input_schema", req->tools[i].input_schema));
        json_object_set_new(body, "tools", tools);
    }
    if (req->thinking_budget > 0)
        json_object_set_new(body, "thinking", json_pack("{s:s,s:i}", "type", "enabled",
                                                        "budget_tokens", req->thinking_budget));
    if (req->temperature >= 0)
        json_object_set_new(body, "temperature", json_real(req->temperature));
    if (req->stream)
        json_object_set_new(body, "stream", json_true());
    char *text = json_dump_compact(body);
    json_decref(body);
    if (!text)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "could not serialize the request");
    str_puts(&call->body, text);
    free(text);
    return 0;
}

/* --- decoding ---------------------------------------------------------- */

typedef struct block_state {
    wire_block_kind kind;
    bool known;          /* a kind we keep (unknown server blocks are skipped) */
    loom_str text;       /* text / thinking / tool input JSON */
    loom_str signature;
    char *id, *name, *data;
    json_t *input;       /* tool_use input given whole in content_block_start */
} block_state;

struct wire_decoder {
    wire_response *out;
    const wire_stream_sink *sink;
    block_state *blocks;
    size_t n_blocks;
    json_t *raw_usage;
    bool started, stopped;
};

static wire_decoder *anthropic_decoder_new(wire_response *out, const wire_stream_sink *sink)
{
    wire_decoder *d = xcalloc(1, sizeof *d);
    d->out = out;
    d->sink = sink;
    return d;
}

static void block_clear(block_state *b)
{
    str_free(&b->text);
    str_free(&b->signature);
    free(b->id);
    free(b->name);
    free(b->data);
    json_decref(b->input);
    memset(b, 0, sizeof *b);
}

static void decoder_reset_blocks(wire_decoder *d)
{
    for (size_t i = 0; i < d->n_blocks; i++)
        block_clear(&d->blocks[i]);
    free(d->blocks);
    d->blocks = NULL;
    d->n_blocks = 0;
}

static void anthropic_decoder_free(wire_decoder *d)
{
    if (!d)
        return;
    decoder_reset_blocks(d);
    json_decref(d->raw_usage);
    free(d);
}

/* Tool arguments the model got wrong stay visible to it instead of failing
 * the whole reply: the tool layer reports them as a validation error. */
static json_t *parse_tool_input(const loom_str *s)
{
    if (s->len == 0)
        return json_object();
    loom_error ignore;
    json_t *v = json_parse(s->ptr, s->len, "tool input", &ignore);
    if (json_is_object(v))
        return v;
    json_decref(v);
    return json_pack("{s:s%}", "_raw_arguments", s->ptr, s->len);
}

static void usage_merge(wire_decoder *d, const json_t *u)
{
    if (!json_is_object(u))
        return;
    if (!d->raw_usage)
        d->raw_usage = json_object();
    json_object_update(d->raw_usage, (json_t *)u);
    wire_usage *n = &d->out->usage;
    n->input_tokens = json_get_int(d->raw_usage, "input_tokens", 0);
    n->output_tokens = json_get_int(d->raw_usage, "output_tokens", 0);
    n->cache_read_tokens = json_get_int(d->raw_usage, "cache_read_input_tokens", 0);
    n->cache_creation_tokens = json_get_int(d->raw_usage, "cache_creation_input_tokens", 0);
}

static wire_stop_reason map_stop(const char *s)
{
    if (!s)
        return WIRE_STOP_NONE;
    if (!strcmp(s, "end_turn")) return WIRE_STOP_END_TURN;
    if (!strcmp(s, "tool_use")) return WIRE_STOP_TOOL_USE;
    if (!strcmp(s, "max_tokens")) return WIRE_STOP_MAX_TOKENS;
    if (!strcmp(s, "stop_sequence")) return WIRE_STOP_STOP_SEQUENCE;
    if (!strcmp(s, "refusal")) return WIRE_STOP_REFUSAL;
    if (!strcmp(s, "pause_turn")) return WIRE_STOP_PAUSE;
    return WIRE_STOP_OTHER;
}

static void set_stop(wire_response *out, const char *s)
{
    if (!s)
        return;
    free(out->stop_reason_raw);
    out->stop_reason_raw = xstrdup(s);
    out->stop_reason = map_stop(s);
}

static block_state *block_at(wire_decoder *d, json_int_t index, loom_error *err)
{
    /* Indexes come from the network: bound them before they size memory. */
    if (index < 0 || index > 4096) {
        loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL, "content block index %lld out of range",
                       (long long)index);
        return NULL;
    }
    if ((size_t)index >= d->n_blocks) {
        d->blocks = xrealloc(d->blocks, (size_t)(index + 1) * sizeof *d->blocks);
        memset(d->blocks + d->n_blocks, 0, ((size_t)index + 1 - d->n_blocks) * sizeof *d->blocks);
        d->n_blocks = (size_t)index + 1;
    }
    return &d->blocks[index];
}

static int on_block_start(wire_decoder *d, const json_t *ev, loom_error *err)
{
    block_state *b = block_at(d, json_get_int(ev, "index", -1), err);
    if (!b)
        return -1;
    const json_t *cb = json_get_obj(ev, "content_block");
    const char *type = json_get_str(cb, "type", "");
    block_clear(b); /* a repeated start for an index replaces the block */
    b->known = true;
    if (!strcmp(type, "text")) {
        b->kind = WIRE_BLOCK_TEXT;
        const char *t = json_get_str(cb, "text", "");
        str_puts(&b->text, t);
        if (*t && d->sink && d->sink->on_text)
            d->sink->on_text(d->sink->ctx, t, strlen(t));
    } else if (!strcmp(type, "thinking")) {
        b->kind = WIRE_BLOCK_THINKING;
        str_puts(&b->text, json_get_str(cb, "thinking", ""));
        str_puts(&b->signature, json_get_str(cb, "signature", ""));
    } else if (!strcmp(type, "redacted_thinking")) {
        b->kind = WIRE_BLOCK_REDACTED_THINKING;
        b->data = xstrdup(json_get_str(cb, "data", ""));
    } else if (!strcmp(type, "tool_use")) {
        b->kind = WIRE_BLOCK_TOOL_USE;
        b->id = xstrdup(json_get_str(cb, "id", ""));
        b->name = xstrdup(json_get_str(cb, "name", ""));
        json_t *input = json_get_obj(cb, "input");
        if (input && json_object_size(input) > 0)
            b->input = json_incref(input);
        if (d->sink && d->sink->on_tool_use)
            d->sink->on_tool_use(d->sink->ctx, b->id, b->name);
    } else {
        b->known = false; /* server tools, citations…: not part of Loom's model yet */
    }
    return 0;
}

static int on_block_delta(wire_decoder *d, const json_t *ev, loom_error *err)
{
    block_state *b = block_at(d, json_get_int(ev, "index", -1), err);
    if (!b)
        return -1;
    const json_t *delta = json_get_obj(ev, "delta");
    const char *type = json_get_str(delta, "type", "");
    if (!strcmp(type, "text_delta")) {
        const char *t = json_get_str(delta, "text", "");
        str_puts(&b->text, t);
        if (d->sink && d->sink->on_text)
            d->sink->on_text(d->sink->ctx, t, strlen(t));
    } else if (!strcmp(type, "thinking_delta")) {
        const char *t = json_get_str(delta, "thinking", "");
        str_puts(&b->text, t);
        if (d->sink && d->sink->on_thinking)
            d->sink->on_thinking(d->sink->ctx, t, strlen(t));
    } else if (!strcmp(type, "signature_delta")) {
        str_puts(&b->signature, json_get_str(delta, "signature", ""));
    } else if (!strcmp(type, "input_json_delta")) {
        str_puts(&b->text, json_get_str(delta, "partial_json", ""));
    }
    return 0;
}

static void build_message(wire_decoder *d)
{
    wire_message *m = &d->out->message;
    m->role = WIRE_ROLE_ASSISTANT;
    for (size_t i = 0; i < d->n_blocks; i++) {
        block_state *b = &d->blocks[i];
        if (!b->known)
            continue;
        switch (b->kind) {
        case WIRE_BLOCK_TEXT:
            wire_message_add_text(m, str_cstr(&b->text));
            break;
        case WIRE_BLOCK_THINKING:
            wire_message_add_thinking(m, str_cstr(&b->text),
                                      b->signature.len ? b->signature.ptr : NULL);
            break;
        case WIRE_BLOCK_REDACTED_THINKING:
            wire_message_add_redacted_thinking(m, b->data);
            break;
        case WIRE_BLOCK_TOOL_USE: {
            json_t *input = b->text.len ? parse_tool_input(&b->text)
                            : b->input  ? json_incref(b->input)
                                        : json_object();
            wire_message_add_tool_use(m, b->id, b->name, input);
            break;
        }
        default:
            break;
        }
    }
    d->out->usage.raw = d->raw_usage ? json_incref(d->raw_usage) : json_object();
}

static int anthropic_decoder_event(wire_decoder *d, const sse_event *ev, loom_error *err)
{
    loom_error perr;
    json_t *doc = json_parse(ev->data, ev->data_len, "SSE data", &perr);
    if (!doc) {
        loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                       "malformed stream event at line %zu: %s (data: \"%.80s\")", ev->line,
                       perr.message, ev->data);
        return -1;
    }
    /* The data's own type is authoritative; the event: line only mirrors it. */
    const char *type = json_get_str(doc, "type", ev->type);
    int rc = 0;
    if (!strcmp(type, "message_start")) {
        const json_t *msg = json_get_obj(doc, "message");
        d->started = true;
        free(d->out->response_id);
        d->out->response_id = xstrdup(json_get_str(msg, "id", NULL));
        free(d->out->model);
        d->out->model = xstrdup(json_get_str(msg, "model", NULL));
        usage_merge(d, json_get_obj(msg, "usage"));
    } else if (!strcmp(type, "content_block_start")) {
        rc = on_block_start(d, doc, err);
    } else if (!strcmp(type, "content_block_delta")) {
        rc = on_block_delta(d, doc, err);
    } else if (!strcmp(type, "message_delta")) {
        set_stop(d->out, json_get_str(json_get_obj(doc, "delta"), "stop_reason", NULL));
        usage_merge(d, json_get_obj(doc, "usage"));
    } else if (!strcmp(type, "message_stop")) {
        if (!d->stopped) {
            d->stopped = true;
            build_message(d);
        }
    } else if (!strcmp(type, "error")) {
        const json_t *e = json_get_obj(doc, "error");
        wire_classify_error(0, json_get_str(e, "type", NULL), NULL,
                            json_get_str(e, "message", NULL), err);
        rc = -1;
    }
    /* ping, content_block_stop and event types added later need no action. */
    json_decref(doc);
    return rc;
}

static int anthropic_decoder_finish(wire_decoder *d, loom_error *err)
{
    if (d->stopped)
        return 0;
    loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                   "the stream ended before message_stop (%s)",
                   d->started ? "reply cut off midway" : "no message_start");
    err->retryable = true;
    return -1;
}

static int anthropic_parse_body(const char *body, size_t len, wire_response *out,
                                loom_error *err)
{
    loom_error perr;
    json_t *doc = json_parse(body, len, "response body", &perr);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL, "malformed Messages response: %s",
                              doc ? "not an object" : perr.message);
    }
    wire_decoder *d = anthropic_decoder_new(out, NULL);
    d->started = true;
    out->response_id = xstrdup(json_get_str(doc, "id", NULL));
    out->model = xstrdup(json_get_str(doc, "model", NULL));
    usage_merge(d, json_get_obj(doc, "usage"));
    set_stop(out, json_get_str(doc, "stop_reason", NULL));
    json_t *content = json_get_arr(doc, "content");
    size_t i;
    json_t *cb;
    int rc = 0;
    json_array_foreach(content, i, cb) {
        json_t *start = json_pack("{s:I,s:O}", "index", (json_int_t)i, "content_block", cb);
        rc = on_block_start(d, start, err);
        json_decref(start);
        if (rc)
            break;
    }
    if (rc == 0)
        build_message(d);
    anthropic_decoder_free(d);
    json_decref(doc);
    return rc ? -(int)err->code : 0;
}

const wire_codec anthropic_codec = {
    .name = "anthropic",
    .encode = anthropic_encode,
    .decoder_new = anthropic_decoder_new,
    .decoder_event = anthropic_decoder_event,
    .decoder_finish = anthropic_decoder_finish,
    .decoder_free = anthropic_decoder_free,
    .parse_body = anthropic_parse_body,
};

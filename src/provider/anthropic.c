/* anthropic.c — the Anthropic Messages codec (streaming and not).
 *
 * Encodes normalized requests with cache_control breakpoints, thinking
 * blocks sent back with their signatures, and tool results; decodes the
 * event stream (message_start, content_block_*, message_delta, message_stop,
 * ping, error) into one msg_response. Blocks are tracked by their stream
 * index so interleaved deltas land in the right block. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/utf8.h"
#include "provider/models.h"
#include "provider/provider.h"

#define ANTHROPIC_VERSION "2023-06-01"

/* --- encoding ---------------------------------------------------------- */

/* The body is written straight from the msg_request as JSON text: building
 * a jansson tree of the whole conversation and dumping it cost more than
 * anything else in a turn. The bytes are the ones the tree encoder gave
 * (tests/unit/test_anthropic_direct.c keeps it as the reference): members in
 * its insertion order, strings escaped by json_put_string, numbers printed
 * by the same code, json_t values (tool inputs, schemas) by
 * json_dump_compact_into. And its refusals: json_pack takes no string that
 * is not valid UTF-8, so the block, system part or tool holding one was
 * left out, and so it still is. */

/* lit must be a string literal ("" lit refuses anything else). */
#define PUT(o, lit) str_append((o), "" lit, sizeof("" lit) - 1)

/* Valid UTF-8 as jansson judges it; ASCII is skipped eight bytes at a time. */
static bool utf8_ok(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t l = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

/* A string field's text and length; ok is false when json_pack would have
 * refused it. */
typedef struct field {
    const char *s;
    size_t n;
} field;

static bool field_set(field *f, const char *s)
{
    f->s = s;
    f->n = strlen(s);
    return utf8_ok(s, f->n);
}

static void put_field(loom_str *o, const field *f)
{
    json_put_string(o, f->s, f->n);
}

/* Drops everything written after mark. */
static void cut(loom_str *o, size_t mark)
{
    o->len = mark;
    if (o->ptr)
        o->ptr[mark] = '\0';
}

/* Depth of a block's `input` in the document, and of a tool's schema
 * (body → array → object → … ), for json_dump_compact_into's depth limit. */
#define INPUT_DEPTH 5
#define SCHEMA_DEPTH 3

/* Writes one content block; 1 when written, 0 when it is left out (nothing
 * written), -1 when a json_t in it cannot be serialized. */
static int put_block(loom_str *o, const msg_block *b)
{
    field f1, f2;
    switch (b->kind) {
    case MSG_BLOCK_TEXT:
        /* The API refuses a text block of only whitespace (400 "text content
         * blocks must contain non-whitespace text"); a model's blank reply
         * stays in the session as it came and is left out here. */
        if (msg_text_blank(b->text) || !field_set(&f1, b->text))
            return 0;
        PUT(o, "{\"type\":\"text\",\"text\":");
        put_field(o, &f1);
        break;
    case MSG_BLOCK_IMAGE:
        if (!field_set(&f1, b->media_type ? b->media_type : "image/png") ||
            !field_set(&f2, b->data ? b->data : ""))
            return 0;
        PUT(o, "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":");
        put_field(o, &f1);
        PUT(o, ",\"data\":");
        put_field(o, &f2);
        str_putc(o, '}');
        break;
    case MSG_BLOCK_TOOL_USE:
        if (!field_set(&f1, b->id ? b->id : "") || !field_set(&f2, b->name ? b->name : ""))
            return 0;
        PUT(o, "{\"type\":\"tool_use\",\"id\":");
        put_field(o, &f1);
        PUT(o, ",\"name\":");
        put_field(o, &f2);
        PUT(o, ",\"input\":");
        if (!b->input)
            PUT(o, "{}");
        else if (json_dump_compact_into(o, b->input, INPUT_DEPTH) != 0)
            return -1;
        break;
    case MSG_BLOCK_TOOL_RESULT:
        if (!field_set(&f1, b->id ? b->id : "") || !field_set(&f2, b->text ? b->text : ""))
            return 0;
        PUT(o, "{\"type\":\"tool_result\",\"tool_use_id\":");
        put_field(o, &f1);
        PUT(o, ",\"content\":");
        put_field(o, &f2);
        if (b->is_error)
            PUT(o, ",\"is_error\":true");
        break;
    case MSG_BLOCK_THINKING:
        /* Without a signature the API rejects a thinking block; drop it. */
        if (!b->signature || !field_set(&f1, b->text ? b->text : "") ||
            !field_set(&f2, b->signature))
            return 0;
        PUT(o, "{\"type\":\"thinking\",\"thinking\":");
        put_field(o, &f1);
        PUT(o, ",\"signature\":");
        put_field(o, &f2);
        break;
    case MSG_BLOCK_REDACTED_THINKING:
        if (!field_set(&f1, b->data ? b->data : ""))
            return 0;
        PUT(o, "{\"type\":\"redacted_thinking\",\"data\":");
        put_field(o, &f1);
        break;
    default:
        return 0;
    }
    if (b->cache_control)
        PUT(o, ",\"cache_control\":{\"type\":\"ephemeral\"}");
    str_putc(o, '}');
    return 1;
}

/* The request's max_tokens and the thinking budget that fits under it (0:
 * no thinking). The API's rule: budget_tokens ≥ 1024 and < max_tokens
 * (@anthropic-ai/sdk 1.15.0, src/resources/messages/messages.ts,
 * ThinkingConfigEnabled). context_build_request already raised max_tokens
 * as far as the model allows; what still does not fit lowers the budget,
 * and under the floor there is no thinking at all. A Claude family the
 * model table (provider/models.c) knows to have no thinking gets none; a
 * name it does not know (a gateway's, a new model's) is sent what the user
 * asked, and the API decides. */
#define THINKING_MIN_BUDGET 1024
static int max_tokens_of(const msg_request *req)
{
    return req->max_tokens > 0 ? req->max_tokens : 4096;
}

static int thinking_budget_of(const msg_request *req, const provider_config *cfg)
{
    int budget = req->thinking_budget, max = max_tokens_of(req);
    if (budget <= 0)
        return 0;
    const char *model = req->model ? req->model : cfg->model;
    model_info info = models_lookup(model);
    if (info.reasoning != MODEL_REASONING_BUDGET && model && !strncmp(model, "claude", 6))
        return 0;
    int floor = info.thinking_min_budget > 0 ? info.thinking_min_budget : THINKING_MIN_BUDGET;
    if (budget < floor)
        budget = floor;
    if (budget >= max)
        budget = max - 1;
    return budget >= floor ? budget : 0;
}

/* Writes one message; 1 when written, 0 when it has no block to send
 * (the API refuses empty content; what was written is for the caller to
 * cut), -1 when a json_t in it cannot be serialized. */
static int put_message(loom_str *o, const msg_message *m)
{
    PUT(o, "{\"role\":");
    const char *role = msg_role_name(m->role);
    json_put_string(o, role, strlen(role));
    PUT(o, ",\"content\":[");
    size_t n_blocks = 0;
    bool last_cc = false; /* the last block written carries a breakpoint */
    for (size_t j = 0; j < m->n_blocks; j++) {
        size_t bmark = o->len;
        if (n_blocks)
            str_putc(o, ',');
        int rc = put_block(o, &m->blocks[j]);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            cut(o, bmark);
            /* A breakpoint on a block left out moves to the block before. */
            if (m->blocks[j].cache_control && n_blocks && !last_cc) {
                cut(o, o->len - 1); /* the last block's closing brace */
                PUT(o, ",\"cache_control\":{\"type\":\"ephemeral\"}}");
                last_cc = true;
            }
        } else {
            n_blocks++;
            last_cc = m->blocks[j].cache_control;
        }
    }
    if (n_blocks == 0)
        return 0;
    PUT(o, "]}");
    return 1;
}

/* The request body; -1 when a json_t in it cannot be serialized. */
static int put_body(loom_str *o, const msg_request *req, const provider_config *cfg)
{
    str_putc(o, '{');
    const char *model = req->model ? req->model : cfg->model;
    if (model) {
        /* json_set_str's way: bad UTF-8 becomes U+FFFD rather than no model. */
        field f;
        PUT(o, "\"model\":");
        if (field_set(&f, model)) {
            put_field(o, &f);
        } else {
            size_t n;
            char *clean = utf8_sanitize(model, f.n, &n);
            json_put_string(o, clean, n);
            free(clean);
        }
        str_putc(o, ',');
    }
    str_printf(o, "\"max_tokens\":%d", max_tokens_of(req));

    field sys, dyn;
    bool has_sys = req->system && *req->system && field_set(&sys, req->system);
    bool has_dyn = req->system_dynamic && *req->system_dynamic &&
                   field_set(&dyn, req->system_dynamic);
    if (has_sys || has_dyn) {
        PUT(o, ",\"system\":[");
        if (has_sys) {
            PUT(o, "{\"type\":\"text\",\"text\":");
            put_field(o, &sys);
            if (req->system_cache)
                PUT(o, ",\"cache_control\":{\"type\":\"ephemeral\"}");
            str_putc(o, '}');
        }
        if (has_dyn) {
            if (has_sys)
                str_putc(o, ',');
            PUT(o, "{\"type\":\"text\",\"text\":");
            put_field(o, &dyn);
            str_putc(o, '}');
        }
        str_putc(o, ']');
    }

    PUT(o, ",\"messages\":[");
    size_t n_msgs = 0;
    for (size_t i = 0; i < req->n_messages; i++) {
        const msg_message *m = &req->messages[i];
        msg_wire *kept = m->wire;
        if (kept && kept->codec == &anthropic_codec) {
            /* A kept message (context/history_keep.h): its bytes as first
             * written, the comma before it being the list's. */
            if (kept->len) {
                if (n_msgs++)
                    str_putc(o, ',');
                str_append(o, kept->bytes, kept->len);
            }
            continue;
        }
        size_t mark = o->len;
        if (n_msgs)
            str_putc(o, ',');
        size_t start = o->len;
        int rc = put_message(o, m);
        if (rc < 0)
            return -1;
        if (rc == 0)
            cut(o, mark);
        else
            n_msgs++;
        if (kept) {
            free(kept->bytes);
            kept->len = rc ? o->len - start : 0;
            kept->bytes = xmalloc(kept->len + 1);
            memcpy(kept->bytes, o->ptr + start, kept->len);
            kept->codec = &anthropic_codec;
        }
    }
    str_putc(o, ']');

    if (req->n_tools) {
        PUT(o, ",\"tools\":[");
        size_t n_tools = 0;
        for (size_t i = 0; i < req->n_tools; i++) {
            const msg_tool *t = &req->tools[i];
            field name, desc;
            if (!t->name || !t->description || !t->input_schema ||
                !field_set(&name, t->name) || !field_set(&desc, t->description))
                continue;
            if (n_tools++)
                str_putc(o, ',');
            PUT(o, "{\"name\":");
            put_field(o, &name);
            PUT(o, ",\"description\":");
            put_field(o, &desc);
            PUT(o, ",\"input_schema\":");
            if (json_dump_compact_into(o, t->input_schema, SCHEMA_DEPTH) != 0)
                return -1;
            str_putc(o, '}');
        }
        str_putc(o, ']');
    }
    int budget = thinking_budget_of(req, cfg);
    if (budget > 0)
        str_printf(o, ",\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":%d}", budget);
    /* json_real refuses infinities (and NaN fails the test), so they were
     * never sent. With thinking on the API takes no temperature but 1 (400
     * "temperature may only be set to 1 when thinking is enabled", as
     * quoted in BuilderIO/agent-native's release @agent-native/core@0.164.25),
     * so none is sent and the default applies. */
    if (budget == 0 && req->temperature >= 0 && !isinf(req->temperature)) {
        PUT(o, ",\"temperature\":");
        if (json_put_real(o, req->temperature) != 0)
            return -1;
    }
    if (req->stream)
        PUT(o, ",\"stream\":true");
    str_putc(o, '}');
    return 0;
}

static int anthropic_encode(const msg_request *req, const provider_config *cfg,
                            provider_http_call *call, loom_error *err)
{
    const char *base = cfg->base_url ? cfg->base_url : "https://api.anthropic.com";
    size_t blen = strlen(base);
    while (blen && base[blen - 1] == '/')
        blen--;
    str_append(&call->url, base, blen);
    str_puts(&call->url, "/v1/messages");

    provider_http_call_header(call, "Content-Type: application/json");
    provider_http_call_header(call, "anthropic-version: %s", ANTHROPIC_VERSION);
    if (cfg->api_key && *cfg->api_key)
        provider_http_call_header(call, "x-api-key: %s", cfg->api_key);
    if (req->stream)
        provider_http_call_header(call, "Accept: text/event-stream");
    /* Thinking between tool calls, as Claude Code asks for it: the beta's
     * name is in @anthropic-ai/sdk 1.15.0, src/resources/beta/beta.ts
     * (AnthropicBeta, 'interleaved-thinking-2025-05-14'). */
    if (thinking_budget_of(req, cfg) > 0)
        provider_http_call_header(call, "anthropic-beta: interleaved-thinking-2025-05-14");

    size_t start = call->body.len;
    if (put_body(&call->body, req, cfg) != 0) {
        cut(&call->body, start);
        return loom_error_set(err, LOOM_ERR_INTERNAL, "could not serialize the request");
    }
    return 0;
}

/* --- decoding ---------------------------------------------------------- */

typedef struct block_state {
    msg_block_kind kind;
    bool known;          /* a kind we keep (unknown server blocks are skipped) */
    loom_str text;       /* text / thinking / tool input JSON */
    loom_str signature;
    char *id, *name, *data;
    json_t *input;       /* tool_use input given whole in content_block_start */
    bool completed;      /* content_block_stop seen: on_tool_call was called */
} block_state;

struct provider_decoder {
    msg_response *out;
    const provider_stream_sink *sink;
    block_state *blocks;
    size_t n_blocks;
    json_t *raw_usage;
    bool started, stopped;
};

static provider_decoder *anthropic_decoder_new(msg_response *out, const provider_stream_sink *sink)
{
    provider_decoder *d = xcalloc(1, sizeof *d);
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

static void decoder_reset_blocks(provider_decoder *d)
{
    for (size_t i = 0; i < d->n_blocks; i++)
        block_clear(&d->blocks[i]);
    free(d->blocks);
    d->blocks = NULL;
    d->n_blocks = 0;
}

static void anthropic_decoder_free(provider_decoder *d)
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

/* A later usage object (message_delta's) updates only the fields it gives
 * a value: the SDK types let input_tokens and the cache counts be null
 * there, and the SDK's own accumulator overwrites a count only when the new
 * one is not null (@anthropic-ai/sdk 1.15.0, src/lib/MessageStream.ts,
 * case 'message_delta'). Thinking tokens are output_tokens_details
 * .thinking_tokens, part of output_tokens (src/resources/messages/
 * messages.ts, interfaces Usage, MessageDeltaUsage, OutputTokensDetails). */
static void usage_merge(provider_decoder *d, const json_t *u)
{
    if (!json_is_object(u))
        return;
    if (!d->raw_usage)
        d->raw_usage = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)u, key, v) {
        const json_t *old = json_object_get(d->raw_usage, key);
        if (old && (json_is_null(v) || (json_is_integer(old) && !json_is_integer(v))))
            continue;
        json_object_set(d->raw_usage, key, v);
    }
    msg_usage *n = &d->out->usage;
    n->input_tokens = json_get_int(d->raw_usage, "input_tokens", 0);
    n->output_tokens = json_get_int(d->raw_usage, "output_tokens", 0);
    n->cache_read_tokens = json_get_int(d->raw_usage, "cache_read_input_tokens", 0);
    n->cache_creation_tokens = json_get_int(d->raw_usage, "cache_creation_input_tokens", 0);
    /* A 1-hour write is a part of the writes; a count the total cannot hold
     * (a provider's mistake) is capped to it. */
    int64_t one_hour = json_get_int(json_get_obj(d->raw_usage, "cache_creation"),
                                    "ephemeral_1h_input_tokens", 0);
    n->cache_creation_1h_tokens = one_hour < 0 ? 0
                                  : one_hour > n->cache_creation_tokens ? n->cache_creation_tokens
                                                                        : one_hour;
    n->reasoning_tokens =
        json_get_int(json_get_obj(d->raw_usage, "output_tokens_details"), "thinking_tokens", 0);
}

static loom_stop_reason map_stop(const char *s)
{
    if (!s)
        return LOOM_STOP_NONE;
    if (!strcmp(s, "end_turn")) return LOOM_STOP_END_TURN;
    if (!strcmp(s, "tool_use")) return LOOM_STOP_TOOL_USE;
    if (!strcmp(s, "max_tokens")) return LOOM_STOP_MAX_TOKENS;
    if (!strcmp(s, "stop_sequence")) return LOOM_STOP_STOP_SEQUENCE;
    if (!strcmp(s, "refusal")) return LOOM_STOP_REFUSAL;
    if (!strcmp(s, "pause_turn")) return LOOM_STOP_PAUSE_TURN;
    return LOOM_STOP_OTHER;
}

static void set_stop(msg_response *out, const char *s)
{
    if (!s)
        return;
    free(out->stop_reason_raw);
    out->stop_reason_raw = xstrdup(s);
    out->stop_reason = map_stop(s);
}

static block_state *block_at(provider_decoder *d, json_int_t index, loom_error *err)
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

static int on_block_start(provider_decoder *d, const json_t *ev, loom_error *err)
{
    block_state *b = block_at(d, json_get_int(ev, "index", -1), err);
    if (!b)
        return -1;
    const json_t *cb = json_get_obj(ev, "content_block");
    const char *type = json_get_str(cb, "type", "");
    block_clear(b); /* a repeated start for an index replaces the block */
    b->known = true;
    if (!strcmp(type, "text")) {
        b->kind = MSG_BLOCK_TEXT;
        const char *t = json_get_str(cb, "text", "");
        str_puts(&b->text, t);
        if (*t && d->sink && d->sink->on_text)
            d->sink->on_text(d->sink->ctx, t, strlen(t));
    } else if (!strcmp(type, "thinking")) {
        b->kind = MSG_BLOCK_THINKING;
        str_puts(&b->text, json_get_str(cb, "thinking", ""));
        str_puts(&b->signature, json_get_str(cb, "signature", ""));
    } else if (!strcmp(type, "redacted_thinking")) {
        b->kind = MSG_BLOCK_REDACTED_THINKING;
        b->data = xstrdup(json_get_str(cb, "data", ""));
    } else if (!strcmp(type, "tool_use")) {
        b->kind = MSG_BLOCK_TOOL_USE;
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

static int on_block_delta(provider_decoder *d, const json_t *ev, loom_error *err)
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

static void build_message(provider_decoder *d)
{
    msg_message *m = &d->out->message;
    m->role = MSG_ROLE_ASSISTANT;
    for (size_t i = 0; i < d->n_blocks; i++) {
        block_state *b = &d->blocks[i];
        if (!b->known)
            continue;
        switch (b->kind) {
        case MSG_BLOCK_TEXT:
            msg_message_add_text(m, str_cstr(&b->text));
            break;
        case MSG_BLOCK_THINKING:
            msg_message_add_thinking(m, str_cstr(&b->text),
                                      b->signature.len ? b->signature.ptr : NULL);
            break;
        case MSG_BLOCK_REDACTED_THINKING:
            msg_message_add_redacted_thinking(m, b->data);
            break;
        case MSG_BLOCK_TOOL_USE: {
            json_t *input = b->text.len ? parse_tool_input(&b->text)
                            : b->input  ? json_incref(b->input)
                                        : json_object();
            msg_message_add_tool_use(m, b->id, b->name, input);
            break;
        }
        default:
            break;
        }
    }
    d->out->usage.raw = d->raw_usage ? json_incref(d->raw_usage) : json_object();
}

/* content_block_stop: a tool_use block's input is whole, so the loop may
 * start the call while the rest of the message streams. */
static int on_block_stop(provider_decoder *d, const json_t *ev, loom_error *err)
{
    block_state *b = block_at(d, json_get_int(ev, "index", -1), err);
    if (!b)
        return -1;
    if (!b->known || b->kind != MSG_BLOCK_TOOL_USE || b->completed || !d->sink ||
        !d->sink->on_tool_call)
        return 0;
    b->completed = true;
    json_t *input = b->text.len ? parse_tool_input(&b->text)
                    : b->input  ? json_incref(b->input)
                                : json_object();
    d->sink->on_tool_call(d->sink->ctx, b->id, b->name, input);
    json_decref(input);
    return 0;
}

static int anthropic_decoder_event(provider_decoder *d, const sse_event *ev, loom_error *err)
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
    } else if (!strcmp(type, "content_block_stop")) {
        rc = on_block_stop(d, doc, err);
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
        provider_classify_error(0, json_get_str(e, "type", NULL), NULL,
                            json_get_str(e, "message", NULL), err);
        rc = -1;
    }
    /* ping and event types added later need no action. */
    json_decref(doc);
    return rc;
}

static int anthropic_decoder_finish(provider_decoder *d, loom_error *err)
{
    if (d->stopped)
        return 0;
    loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                   "the stream ended before message_stop (%s)",
                   d->started ? "reply cut off midway" : "no message_start");
    err->retryable = true;
    return -1;
}

static int anthropic_parse_body(const char *body, size_t len, msg_response *out,
                                loom_error *err)
{
    loom_error perr;
    json_t *doc = json_parse(body, len, "response body", &perr);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL, "malformed Messages response: %s",
                              doc ? "not an object" : perr.message);
    }
    provider_decoder *d = anthropic_decoder_new(out, NULL);
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

const provider_codec_ops anthropic_codec = {
    .name = "anthropic",
    .encode = anthropic_encode,
    .decoder_new = anthropic_decoder_new,
    .decoder_event = anthropic_decoder_event,
    .decoder_finish = anthropic_decoder_finish,
    .decoder_free = anthropic_decoder_free,
    .parse_body = anthropic_parse_body,
};

/* openai_common.c — helpers shared by the Chat Completions and Responses
 * codecs: request scaffolding, tolerant reading of stream events, argument
 * and usage normalization, error classification. Owns no state. */
#include "provider/openai_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/uuid.h"

#include "base/utf8.h"
#include "base/json.h"
#include "provider/models.h"

int oai_call_start(const msg_request *req, const provider_config *cfg, const char *path,
                   provider_http_call *call, const char **model, loom_error *err)
{
    if (!req || !cfg || !call)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "encode: missing request or config");
    const char *m = req->model && *req->model ? req->model : cfg->model;
    if (!m || !*m)
        return loom_error_set(err, LOOM_ERR_CONFIG, "no model configured for %s", path);
    const char *base = cfg->base_url;
    if (!base || !*base)
        return loom_error_set(err, LOOM_ERR_CONFIG, "no base URL configured for %s", path);
    size_t blen = strlen(base);
    /* Users write both ".../v1" and ".../v1/"; only one slash is forgiven so
     * a deliberately odd URL is not rewritten behind their back. */
    if (blen && base[blen - 1] == '/')
        blen--;
    str_clear(&call->url);
    str_append(&call->url, base, blen);
    str_puts(&call->url, path);

    provider_http_call_header(call, "Content-Type: application/json");
    /* Local servers (Ollama, llama.cpp) run without a key; an empty
     * "Bearer " header makes some gateways answer 401 instead of ignoring. */
    if (cfg->api_key && *cfg->api_key)
        provider_http_call_header(call, "Authorization: Bearer %s", cfg->api_key);
    if (req->stream)
        provider_http_call_header(call, "Accept: text/event-stream");
    *model = m;
    return 0;
}

int oai_call_finish(json_t *body, provider_http_call *call, loom_error *err)
{
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!s)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "encode: request body is not serializable");
    str_clear(&call->body);
    str_puts(&call->body, s);
    free(s);
    return 0;
}

void oai_splice_mark(char *out, size_t n)
{
    char id[UUID_STR_LEN];
    uuid_v7(id);
    snprintf(out, n, "loom-kept-%s", id);
}

int oai_call_finish_spliced(json_t *body, const char *mark, const loom_str *bytes,
                            provider_http_call *call, loom_error *err)
{
    if (!mark)
        return oai_call_finish(body, call, err);
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!s)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "encode: request body is not serializable");
    /* The mark is a fresh UUID: its quoted form is in the dump once, as
     * the element that stands for the kept items. */
    char quoted[UUID_STR_LEN + 32];
    snprintf(quoted, sizeof quoted, "\"%s\"", mark);
    char *at = strstr(s, quoted);
    if (!at) {
        free(s);
        return loom_error_set(err, LOOM_ERR_INTERNAL, "encode: the kept history's place was lost");
    }
    str_clear(&call->body);
    str_append(&call->body, s, (size_t)(at - s));
    str_append(&call->body, bytes->ptr, bytes->len);
    str_puts(&call->body, at + strlen(quoted));
    free(s);
    return 0;
}

json_t *oai_jstr(const char *s)
{
    json_t *v = json_string(s ? s : "");
    if (v)
        return v;
    /* json_set_str already knows how to repair bad UTF-8; borrow it rather
     * than keep a second copy of the repair loop. */
    json_t *tmp = json_object();
    json_set_str(tmp, "v", s);
    v = json_incref(json_object_get(tmp, "v"));
    json_decref(tmp);
    return v ? v : json_string("");
}

char *oai_image_url(const msg_block *b)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "data:%s;base64,%s", b->media_type && *b->media_type ? b->media_type : "image/png",
               b->data ? b->data : "");
    return str_steal(&s);
}

void oai_add_user(json_t *items, const msg_message *m,
                  json_t *(*result_item)(const msg_block *b),
                  json_t *(*content)(const msg_message *m, bool tail))
{
    for (size_t i = 0; i < m->n_blocks; i++)
        if (m->blocks[i].kind == MSG_BLOCK_TOOL_RESULT)
            json_array_append_new(items, result_item(&m->blocks[i]));
    for (int tail = 0; tail < 2; tail++) {
        json_t *c = content(m, tail);
        if (!c)
            continue;
        json_t *u = json_object();
        json_object_set_new(u, "role", json_string("user"));
        json_object_set_new(u, "content", c);
        json_array_append_new(items, u);
    }
}

json_t *oai_parts(const msg_message *m, bool tail, json_t *(*text_part)(const msg_block *b),
                  json_t *(*image_part)(const msg_block *b))
{
    json_t *parts = json_array();
    for (size_t i = 0; i < m->n_blocks; i++) {
        const msg_block *b = &m->blocks[i];
        if (b->tail != tail)
            continue;
        if (b->kind == MSG_BLOCK_TEXT)
            json_array_append_new(parts, text_part(b));
        else if (b->kind == MSG_BLOCK_IMAGE)
            json_array_append_new(parts, image_part(b));
    }
    if (json_array_size(parts) == 0) {
        json_decref(parts);
        return NULL;
    }
    return parts;
}

bool oai_model_reasons(const char *model)
{
    return model_reasoning(model) == MODEL_REASONING_EFFORT;
}

const char *oai_effort(const msg_request *req, const provider_config *cfg)
{
    if (!oai_model_reasons(req->model && *req->model ? req->model : cfg->model))
        return NULL;
    if (cfg->reasoning_effort[0])
        return cfg->reasoning_effort;
    int b = req->thinking_budget;
    if (b <= 0)
        return NULL;
    return b < 4096 ? "low" : b < 16384 ? "medium" : "high";
}

char *oai_arguments(const json_t *input)
{
    char *s = input ? json_dump_compact(input) : NULL;
    return s ? s : xstrdup("{}");
}

/* ---- reading events ---------------------------------------------------- */

static bool utf8_valid(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq_len(p + i, len - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

/* Servers stream text and arguments token by token, and a token can end in
 * the middle of a UTF-8 sequence; some servers then put the raw half
 * sequence into the JSON string. jansson refuses such strings, and repairing
 * them to U+FFFD would corrupt the reassembled text for good. So each stray
 * byte b is smuggled through the parse as the private-use code point
 * U+10FE00+b and turned back into b when the string is appended; joined with
 * the neighbouring delta the bytes form the original character again. Only
 * events that needed it are escaped, so a genuine U+10FE80..U+10FEFF in a
 * clean event is untouched. */
#define ESC_BASE 0x10FE00u

static char *escape_invalid(const char *data, size_t len, size_t *out_len)
{
    loom_str s = LOOM_STR_INIT;
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq_len(p + i, len - i);
        if (k) {
            str_append(&s, p + i, k);
            i += k;
            continue;
        }
        uint32_t cp = ESC_BASE + p[i];
        char enc[4] = {(char)0xF4, (char)(0x80 | ((cp >> 12) & 0x3F)),
                       (char)(0x80 | ((cp >> 6) & 0x3F)), (char)(0x80 | (cp & 0x3F))};
        str_append(&s, enc, 4);
        i++;
    }
    *out_len = s.len;
    return s.ptr ? str_steal(&s) : xstrdup("");
}

void oai_append(loom_str *dst, const json_t *v, bool escaped)
{
    if (!json_is_string(v))
        return;
    const unsigned char *s = (const unsigned char *)json_string_value(v);
    size_t n = json_string_length(v);
    if (!escaped) {
        str_append(dst, s, n);
        return;
    }
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        /* U+10FE80..U+10FEFF encode as F4 8F BA|BB 80..BF. */
        if (i + 3 < n && s[i] == 0xF4 && s[i + 1] == 0x8F && (s[i + 2] == 0xBA || s[i + 2] == 0xBB) &&
            (s[i + 3] & 0xC0) == 0x80) {
            str_append(dst, s + run, i - run);
            str_putc(dst, (char)(0x80 | ((s[i + 2] & 1) << 6) | (s[i + 3] & 0x3F)));
            i += 4;
            run = i;
        } else {
            i++;
        }
    }
    str_append(dst, s + run, n - run);
}

char *oai_dup(const json_t *v, bool escaped)
{
    if (!json_is_string(v))
        return NULL;
    loom_str s = LOOM_STR_INIT;
    oai_append(&s, v, escaped);
    return s.ptr ? str_steal(&s) : xstrdup("");
}

/* A printable quote of the first bytes of bad input for an error message:
 * enough to recognise it in a log, never the whole (possibly huge) payload. */
static void excerpt(char *buf, size_t cap, const char *data, size_t len)
{
    enum { MAX = 80 };
    size_t cut = len < MAX ? len : MAX;
    const unsigned char *p = (const unsigned char *)data;
    size_t o = 0;
    /* The message may end up in JSON logs and events, so it stays valid
     * UTF-8: stray bytes are written as \xNN, and the quote never ends
     * inside a character. */
    for (size_t i = 0; i < cut && o + 5 < cap;) {
        unsigned char c = p[i];
        size_t k = c >= 0x80 ? utf8_seq_len(p + i, len - i) : 1;
        if (k > 1) {
            if (i + k > cut || o + k + 1 >= cap)
                break;
            memcpy(buf + o, p + i, k);
            o += k;
            i += k;
            continue;
        }
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else if (c < 0x20 || c >= 0x7F) {
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
        i++;
    }
    if (cut < len && o + 4 < cap) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o < cap ? o : cap - 1] = '\0';
}

static bool all_blank(const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r' && data[i] != '\n')
            return false;
    return true;
}

/* Parses data into an object; on failure sets the protocol error with
 * `where` ("stream event at line 12", "response body") in front. */
static int parse_object(const char *data, size_t len, const char *where, const char *what,
                        oai_event *out, loom_error *err)
{
    out->root = NULL;
    out->escaped = false;
    loom_error perr;
    loom_error_clear(&perr);
    json_t *root;
    if (utf8_valid(data, len)) {
        root = json_parse(data, len, what, &perr);
    } else {
        size_t elen;
        char *esc = escape_invalid(data, len, &elen);
        root = json_parse(esc, elen, what, &perr);
        free(esc);
        out->escaped = true;
    }
    char quote[400];
    if (!root) {
        excerpt(quote, sizeof quote, data, len);
        return loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL, "malformed %s: %s (\"%s\")", where,
                              perr.message, quote);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        excerpt(quote, sizeof quote, data, len);
        return loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                              "malformed %s: expected a JSON object (\"%s\")", where, quote);
    }
    out->root = root;
    return 1;
}

int oai_event_parse(const sse_event *ev, oai_event *out, loom_error *err)
{
    out->root = NULL;
    out->escaped = false;
    if (!ev || !ev->data || all_blank(ev->data, ev->data_len))
        return 0;
    char where[64];
    snprintf(where, sizeof where, "stream event at line %zu", ev->line);
    return parse_object(ev->data, ev->data_len, where, "SSE data", out, err);
}

int oai_body_parse(const char *body, size_t len, oai_event *out, loom_error *err)
{
    if (!body || all_blank(body, len)) {
        out->root = NULL;
        out->escaped = false;
        return loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL, "malformed response body: empty");
    }
    return parse_object(body, len, "response body", "body", out, err);
}

void oai_event_free(oai_event *e)
{
    json_decref(e->root);
    e->root = NULL;
}

bool oai_is_done_marker(const char *data, size_t len)
{
    while (len && (data[0] == ' ' || data[0] == '\t' || data[0] == '\r' || data[0] == '\n')) {
        data++;
        len--;
    }
    while (len && (data[len - 1] == ' ' || data[len - 1] == '\t' || data[len - 1] == '\r' ||
                   data[len - 1] == '\n'))
        len--;
    return len == 6 && memcmp(data, "[DONE]", 6) == 0;
}

/* ---- results ----------------------------------------------------------- */

json_t *oai_tool_input(const char *args, size_t len)
{
    if (!args || all_blank(args, len))
        return json_object();  /* no arguments at all means "call with none" */
    json_t *v = json_parse(args, len, "tool arguments", NULL);
    if (json_is_string(v)) {
        /* Some models double-encode: the arguments are a JSON string that
         * itself holds the object. Unwrap one level when it does. */
        json_t *inner = json_parse(json_string_value(v), json_string_length(v), NULL, NULL);
        if (json_is_object(inner)) {
            json_decref(v);
            return inner;
        }
        json_decref(inner);
    }
    if (json_is_object(v))
        return v;
    json_decref(v);
    /* Broken (or non-object) arguments are a model mistake, not a transport
     * failure: failing the call would throw away the whole turn and retrying
     * rarely helps. The call is kept with the text under _raw_arguments so
     * schema validation rejects it with a tool error the model can read and
     * correct on its next turn. */
    json_t *o = json_object();
    loom_str s = LOOM_STR_INIT;
    str_append(&s, args, len);
    json_set_str(o, "_raw_arguments", str_cstr(&s));
    str_free(&s);
    return o;
}

static int64_t nonneg(int64_t v)
{
    return v < 0 ? 0 : v;
}

void oai_usage_fill(msg_usage *u, json_t *usage, const char *in_key, const char *out_key,
                    const char *in_details, const char *out_details)
{
    if (!json_is_object(usage))
        return;
    const json_t *ind = json_get_obj(usage, in_details);
    const json_t *outd = json_get_obj(usage, out_details);
    int64_t in = nonneg(json_get_int(usage, in_key, 0));
    int64_t cached = nonneg(json_get_int(ind, "cached_tokens", 0));
    /* DeepSeek reports cache hits beside the prompt count, not inside a
     * details object. */
    if (!ind)
        cached = nonneg(json_get_int(usage, "prompt_cache_hit_tokens", 0));
    int64_t written = nonneg(json_get_int(ind, "cache_write_tokens", 0));
    /* The provider's prompt count includes cache reads and writes; ours does
     * not (message.h), so cost attribution does not count them twice. */
    int64_t fresh = in - cached - written;
    u->input_tokens = fresh < 0 ? 0 : fresh;
    u->cache_read_tokens = cached;
    u->cache_creation_tokens = written;
    u->output_tokens = nonneg(json_get_int(usage, out_key, 0));
    u->reasoning_tokens = nonneg(json_get_int(outd, "reasoning_tokens", 0));
    json_decref(u->raw);
    u->raw = json_incref(usage);
}

int oai_fail_error(const json_t *error, const char *fallback, loom_error *err)
{
    loom_error local;
    loom_error *e = err ? err : &local;
    const char *type = json_get_str(error, "type", NULL);
    const char *message = json_is_string(error) ? json_string_value(error)
                                                : json_get_str(error, "message", NULL);
    char code[32];
    const char *code_s = json_get_str(error, "code", NULL);
    /* vLLM and some gateways put the HTTP status in `code` as a number. */
    json_t *jc = json_is_object(error) ? json_object_get(error, "code") : NULL;
    if (!code_s && json_is_integer(jc)) {
        snprintf(code, sizeof code, "%" JSON_INTEGER_FORMAT, json_integer_value(jc));
        code_s = code;
    }
    provider_classify_error(0, type, code_s, message && *message ? message : fallback, e);
    if (e->code == LOOM_OK)
        e->code = LOOM_ERR_MODEL_UNAVAILABLE;
    return -(int)e->code;
}

int oai_fail_truncated(loom_error *err)
{
    int rc = loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE,
                            "stream ended before the response was complete");
    if (err)
        err->retryable = true;
    return rc;
}

void oai_set(char **dst, const char *s)
{
    char *copy = xstrdup(s);
    free(*dst);
    *dst = copy;
}

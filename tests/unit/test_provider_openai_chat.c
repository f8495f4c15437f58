/* test_provider_openai_chat.c — the Chat Completions codec: request bodies as the
 * server must see them, streams decoded through the real SSE parser
 * (including arguments cut at every byte), errors, truncation, malformed
 * data and the non-streaming body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"
#include "base/str.h"
#include "provider/provider.h"
#include "net/sse.h"

/* ---- helpers ----------------------------------------------------------- */

typedef struct rec {
    loom_str text;
    loom_str thinking;
    loom_str tools;  /* "id/name;" per on_tool_use */
} rec;

static void rec_text(void *ctx, const char *d, size_t n) { str_append(&((rec *)ctx)->text, d, n); }
static void rec_think(void *ctx, const char *d, size_t n)
{
    str_append(&((rec *)ctx)->thinking, d, n);
}
static void rec_tool(void *ctx, const char *id, const char *name)
{
    str_printf(&((rec *)ctx)->tools, "%s/%s;", id, name);
}
static void rec_free(rec *r)
{
    str_free(&r->text);
    str_free(&r->thinking);
    str_free(&r->tools);
}

typedef struct run {
    provider_decoder *dec;
    loom_error *err;
} run;

static int on_event(void *ctx, const sse_event *ev)
{
    run *r = ctx;
    return openai_chat_codec.decoder_event(r->dec, ev, r->err) != 0;
}

/* Feeds sse to a fresh decoder in two pieces cut at `cut` (or byte by byte
 * when bytewise), then finishes. Returns 0 or the failure. */
static int decode_ex(const char *sse, size_t len, size_t cut, bool bytewise, msg_response *out,
                     rec *r, loom_error *err)
{
    provider_stream_sink sink = {.ctx = r, .on_text = rec_text, .on_thinking = rec_think,
                             .on_tool_use = rec_tool};
    memset(out, 0, sizeof *out);
    loom_error_clear(err);
    run ctx = {.dec = openai_chat_codec.decoder_new(out, r ? &sink : NULL), .err = err};
    sse_parser *p = sse_parser_new(on_event, &ctx);
    int rc = 0;
    if (bytewise) {
        for (size_t i = 0; i < len && rc == 0; i++)
            rc = sse_parser_feed(p, sse + i, 1);
    } else {
        if (cut > len)
            cut = len;
        rc = sse_parser_feed(p, sse, cut);
        if (rc == 0)
            rc = sse_parser_feed(p, sse + cut, len - cut);
    }
    if (rc == 0)
        rc = sse_parser_finish(p);
    if (rc == 0)
        rc = openai_chat_codec.decoder_finish(ctx.dec, err);
    else if (err->code == LOOM_OK)
        rc = loom_error_set(err, LOOM_ERR_INTERNAL, "sse parser stopped");
    else
        rc = -(int)err->code;  /* the decoder stopped the parser */
    sse_parser_free(p);
    openai_chat_codec.decoder_free(ctx.dec);
    return rc;
}

static int decode(const char *sse, msg_response *out, rec *r, loom_error *err)
{
    return decode_ex(sse, strlen(sse), 0, false, out, r, err);
}

static void assert_json_eq(const json_t *got, const char *want_text)
{
    json_t *want = json_loads(want_text, 0, NULL);
    assert_non_null(want);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
        fprintf(stderr, "got:  %s\nwant: %s\n", g ? g : "(null)", want_text);
        free(g);
        fail();
    }
    json_decref(want);
}

static bool has_header(const provider_http_call *c, const char *h)
{
    for (size_t i = 0; i < c->n_headers; i++)
        if (strcmp(c->headers[i], h) == 0)
            return true;
    return false;
}

static bool has_header_prefix(const provider_http_call *c, const char *prefix)
{
    for (size_t i = 0; i < c->n_headers; i++)
        if (strncmp(c->headers[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

/* The conversation every encode test uses: system, user text, an assistant
 * turn with text + two tool calls, a user turn with two results + text. */
static void build_request(msg_request *req)
{
    memset(req, 0, sizeof *req);
    req->model = xstrdup("gpt-4o");
    req->system = xstrdup("You are Loom.");
    req->max_tokens = 1000;
    req->temperature = -1;
    req->stream = true;
    msg_message *m = msg_request_add_message(req, MSG_ROLE_USER);
    msg_message_add_text(m, "List files");
    m = msg_request_add_message(req, MSG_ROLE_ASSISTANT);
    msg_message_add_thinking(m, "I should list.", "sig");
    msg_message_add_text(m, "Sure.");
    msg_message_add_tool_use(m, "call_1", "bash", json_pack("{s:s}", "command", "ls"));
    msg_message_add_tool_use(m, "call_2", "read", json_pack("{s:s}", "path", "a.txt"));
    m = msg_request_add_message(req, MSG_ROLE_USER);
    msg_message_add_tool_result(m, "call_1", "a.txt\nb.txt", false);
    msg_message_add_text(m, "Thanks, continue");
    msg_message_add_tool_result(m, "call_2", "hello", true);
    msg_request_add_tool(req, "bash", "Run a command",
                          json_pack("{s:s,s:{s:{s:s}},s:[s]}", "type", "object", "properties",
                                    "command", "type", "string", "required", "command"));
    msg_request_add_tool(req, "read", "Read a file", NULL);
}

static json_t *encode_body(const msg_request *req, const provider_config *cfg,
                           provider_http_call *call)
{
    loom_error err;
    loom_error_clear(&err);
    memset(call, 0, sizeof *call);
    assert_int_equal(openai_chat_codec.encode(req, cfg, call, &err), 0);
    json_t *body = json_loadb(call->body.ptr, call->body.len, 0, NULL);
    assert_non_null(body);
    return body;
}

/* ---- encoding ---------------------------------------------------------- */

static void test_encode_openai(void **state)
{
    (void)state;
    msg_request req;
    build_request(&req);
    provider_config cfg = {.base_url = "https://api.openai.com/v1/", .api_key = "sk-test",
                           .model = "cfg-model"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);

    assert_string_equal(str_cstr(&call.url), "https://api.openai.com/v1/chat/completions");
    assert_true(has_header(&call, "Content-Type: application/json"));
    assert_true(has_header(&call, "Authorization: Bearer sk-test"));
    assert_true(has_header(&call, "Accept: text/event-stream"));
    assert_json_eq(
        body,
        "{\"model\":\"gpt-4o\","
        "\"messages\":["
        "{\"role\":\"system\",\"content\":\"You are Loom.\"},"
        "{\"role\":\"user\",\"content\":\"List files\"},"
        "{\"role\":\"assistant\",\"content\":\"Sure.\",\"tool_calls\":["
        "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"bash\","
        "\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}},"
        "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"read\","
        "\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"a.txt\\nb.txt\"},"
        "{\"role\":\"tool\",\"tool_call_id\":\"call_2\",\"content\":\"hello\"},"
        "{\"role\":\"user\",\"content\":\"Thanks, continue\"}],"
        "\"max_completion_tokens\":1000,"
        "\"stream\":true,\"stream_options\":{\"include_usage\":true},"
        "\"tools\":["
        "{\"type\":\"function\",\"function\":{\"name\":\"bash\",\"description\":\"Run a command\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}},"
        "\"required\":[\"command\"]}}},"
        "{\"type\":\"function\",\"function\":{\"name\":\"read\",\"description\":\"Read a file\","
        "\"parameters\":{\"type\":\"object\"}}}]}");
    /* Arguments travel as a JSON *string* holding compact JSON. */
    json_t *args = json_object_get(
        json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(body,
                                                                                      "messages"),
                                                                      2),
                                                       "tool_calls"),
                                       0),
                        "function"),
        "arguments");
    assert_true(json_is_string(args));
    assert_string_equal(json_string_value(args), "{\"command\":\"ls\"}");
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

static void test_encode_local_server(void **state)
{
    (void)state;
    msg_request req;
    build_request(&req);
    req.stream = false;
    req.temperature = 0.5;
    free(req.model);
    req.model = NULL;
    free(req.system);
    req.system = NULL;
    provider_config cfg = {.base_url = "http://localhost:11434/v1", .api_key = "",
                           .model = "llama3"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_string_equal(str_cstr(&call.url), "http://localhost:11434/v1/chat/completions");
    assert_false(has_header_prefix(&call, "Authorization:"));
    assert_false(has_header_prefix(&call, "Accept:"));
    assert_true(has_header(&call, "Content-Type: application/json"));
    assert_string_equal(json_get_str(body, "model", ""), "llama3");
    assert_int_equal(json_get_int(body, "max_tokens", 0), 1000);
    assert_null(json_object_get(body, "max_completion_tokens"));
    assert_null(json_object_get(body, "stream"));
    assert_null(json_object_get(body, "stream_options"));
    assert_true(json_get_num(body, "temperature", -1) == 0.5);
    /* No system prompt: the first message is the user's. */
    json_t *first = json_array_get(json_object_get(body, "messages"), 0);
    assert_string_equal(json_get_str(first, "role", ""), "user");
    json_decref(body);
    provider_http_call_free(&call);

    /* A NULL key behaves like an empty one. */
    cfg.api_key = NULL;
    body = encode_body(&req, &cfg, &call);
    assert_false(has_header_prefix(&call, "Authorization:"));
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

static void test_encode_images_and_parts(void **state)
{
    (void)state;
    msg_request req = {.model = xstrdup("m"), .temperature = -1};
    msg_message *m = msg_request_add_message(&req, MSG_ROLE_USER);
    msg_message_add_text(m, "What is this?");
    msg_message_add_image(m, "image/png", "iVBORw0KGgo=");
    m = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
    msg_message_add_tool_use(m, "c1", "noargs", NULL);
    m = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
    msg_message_add_thinking(m, "only thoughts", NULL);
    provider_config cfg = {.base_url = "http://h/v1"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_json_eq(json_object_get(body, "messages"),
                   "[{\"role\":\"user\",\"content\":["
                   "{\"type\":\"text\",\"text\":\"What is this?\"},"
                   "{\"type\":\"image_url\",\"image_url\":"
                   "{\"url\":\"data:image/png;base64,iVBORw0KGgo=\"}}]},"
                   "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
                   "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"noargs\","
                   "\"arguments\":\"{}\"}}]}]");
    assert_null(json_object_get(body, "tools"));
    assert_null(json_object_get(body, "max_tokens"));
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

static void test_encode_requires_model(void **state)
{
    (void)state;
    msg_request req = {.temperature = -1};
    provider_config cfg = {.base_url = "http://h/v1"};
    provider_http_call call = {0};
    loom_error err;
    assert_int_not_equal(openai_chat_codec.encode(&req, &cfg, &call, &err), 0);
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    provider_http_call_free(&call);
}

/* ---- streaming --------------------------------------------------------- */

#define CHUNK(delta, finish)                                                                  \
    "data: {\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\",\"created\":1718000000," \
    "\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0," \
    "\"delta\":" delta ",\"logprobs\":null,\"finish_reason\":" finish "}],\"usage\":null}\n\n"

static const char STREAM[] =
    ": keep-alive comment\n\n"
    CHUNK("{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"Let me \"}", "null")
    CHUNK("{\"reasoning_content\":\"think.\"}", "null")
    CHUNK("{\"content\":\"Running \"}", "null")
    CHUNK("{\"content\":\"two tools.\"}", "null")
    CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\","
          "\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}", "null")
    CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\","
          "\"function\":{\"name\":\"read\",\"arguments\":\"\"}}]}", "null")
    CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"command\\\":\"}}]}",
          "null")
    CHUNK("{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":"
          "\"{\\\"path\\\":\\\"a.txt\\\"}\"}}]}", "null")
    CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]}", "null")
    CHUNK("{}", "\"tool_calls\"")
    "data: {\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,"
    "\"model\":\"gpt-4o-2024-08-06\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,"
    "\"completion_tokens\":20,\"total_tokens\":120,\"prompt_tokens_details\":"
    "{\"cached_tokens\":60,\"audio_tokens\":0},\"completion_tokens_details\":"
    "{\"reasoning_tokens\":5}}}\n\n"
    "data: [DONE]\n\n";

static void test_stream_full(void **state)
{
    (void)state;
    msg_response out;
    rec r = {0};
    loom_error err;
    assert_int_equal(decode(STREAM, &out, &r, &err), 0);

    assert_int_equal(out.message.role, MSG_ROLE_ASSISTANT);
    assert_int_equal(out.message.n_blocks, 4);
    msg_block *b = out.message.blocks;
    assert_int_equal(b[0].kind, MSG_BLOCK_THINKING);
    assert_string_equal(b[0].text, "Let me think.");
    assert_int_equal(b[1].kind, MSG_BLOCK_TEXT);
    assert_string_equal(b[1].text, "Running two tools.");
    assert_int_equal(b[2].kind, MSG_BLOCK_TOOL_USE);
    assert_string_equal(b[2].id, "call_a");
    assert_string_equal(b[2].name, "bash");
    assert_json_eq(b[2].input, "{\"command\":\"ls\"}");
    assert_int_equal(b[3].kind, MSG_BLOCK_TOOL_USE);
    assert_string_equal(b[3].id, "call_b");
    assert_string_equal(b[3].name, "read");
    assert_json_eq(b[3].input, "{\"path\":\"a.txt\"}");

    assert_int_equal(out.stop_reason, LOOM_STOP_TOOL_USE);
    assert_string_equal(out.stop_reason_raw, "tool_calls");
    assert_string_equal(out.response_id, "chatcmpl-9x");
    assert_string_equal(out.model, "gpt-4o-2024-08-06");
    assert_int_equal(out.usage.input_tokens, 40);
    assert_int_equal(out.usage.cache_read_tokens, 60);
    assert_int_equal(out.usage.output_tokens, 20);
    assert_int_equal(out.usage.reasoning_tokens, 5);
    assert_json_eq(out.usage.raw,
                   "{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120,"
                   "\"prompt_tokens_details\":{\"cached_tokens\":60,\"audio_tokens\":0},"
                   "\"completion_tokens_details\":{\"reasoning_tokens\":5}}");

    assert_string_equal(str_cstr(&r.text), "Running two tools.");
    assert_string_equal(str_cstr(&r.thinking), "Let me think.");
    assert_string_equal(str_cstr(&r.tools), "call_a/bash;call_b/read;");
    rec_free(&r);
    msg_response_free(&out);
}

static void test_stream_bytewise(void **state)
{
    (void)state;
    msg_response out;
    rec r = {0};
    loom_error err;
    assert_int_equal(decode_ex(STREAM, strlen(STREAM), 0, true, &out, &r, &err), 0);
    assert_int_equal(out.message.n_blocks, 4);
    assert_json_eq(out.message.blocks[2].input, "{\"command\":\"ls\"}");
    assert_string_equal(str_cstr(&r.text), "Running two tools.");
    rec_free(&r);
    msg_response_free(&out);
}

/* ---- the split test ---------------------------------------------------- */

/* The arguments the model "wrote": quotes, an escaped quote pair, a
 * two-byte UTF-8 character and an array. */
static const char ARGS[] = "{\"command\":\"echo \\\"h\xC3\xA9llo\\\" && ls\",\"n\":[1,2]}";

/* JSON string body for raw bytes. heavy: escape every ASCII punctuation as
 * \u00XX, so the SSE data is full of escape sequences as well. Bytes >= 0x80
 * go through raw, as a server that cut a token mid-character sends them. */
static void json_escape(loom_str *s, const char *p, size_t n, bool heavy)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\')
            heavy ? str_printf(s, "\\u%04x", c) : (str_putc(s, '\\'), str_putc(s, (char)c));
        else if (c < 0x20)
            str_printf(s, "\\u%04x", c);
        else if (heavy && c < 0x80 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                        (c >= '0' && c <= '9')))
            str_printf(s, "\\u%04x", c);
        else
            str_putc(s, (char)c);
    }
}

static void args_chunk(loom_str *s, int index, const char *id, const char *name, const char *p,
                       size_t n, bool heavy)
{
    str_puts(s, "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":"
                "{\"tool_calls\":[{\"index\":");
    str_printf(s, "%d", index);
    if (id)
        str_printf(s, ",\"id\":\"%s\",\"type\":\"function\"", id);
    str_puts(s, ",\"function\":{");
    if (name)
        str_printf(s, "\"name\":\"%s\",", name);
    str_puts(s, "\"arguments\":\"");
    json_escape(s, p, n, heavy);
    str_puts(s, "\"}}]},\"finish_reason\":null}]}\n\n");
}

static void split_stream(loom_str *s, size_t k, bool heavy)
{
    size_t n = strlen(ARGS);
    str_clear(s);
    args_chunk(s, 0, "call_s", "bash", "", 0, heavy);
    args_chunk(s, 0, NULL, NULL, ARGS, k, heavy);
    args_chunk(s, 0, NULL, NULL, ARGS + k, n - k, heavy);
    str_puts(s, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},"
                "\"finish_reason\":\"tool_calls\"}]}\n\n");
    str_puts(s, "data: [DONE]\n\n");
}

static void check_split_result(int rc, msg_response *out, json_t *want, const loom_error *err,
                               size_t k)
{
    if (rc != 0)
        fprintf(stderr, "k=%zu: %s\n", k, err->message);
    assert_int_equal(rc, 0);
    assert_int_equal(out->message.n_blocks, 1);
    assert_int_equal(out->message.blocks[0].kind, MSG_BLOCK_TOOL_USE);
    if (!json_equal(out->message.blocks[0].input, want)) {
        char *g = json_dumps(out->message.blocks[0].input, JSON_COMPACT);
        fprintf(stderr, "k=%zu: got %s\n", k, g);
        free(g);
        fail();
    }
}

static void test_split_arguments_every_byte(void **state)
{
    (void)state;
    json_t *want = json_loads(ARGS, 0, NULL);
    assert_non_null(want);
    loom_str s = LOOM_STR_INIT;
    size_t n = strlen(ARGS);
    for (int heavy = 0; heavy < 2; heavy++) {
        for (size_t k = 0; k <= n; k++) {
            split_stream(&s, k, heavy);
            msg_response out;
            loom_error err;
            int rc = decode_ex(s.ptr, s.len, s.len, false, &out, NULL, &err);
            check_split_result(rc, &out, want, &err, k);
            msg_response_free(&out);
        }
    }

    /* One k inside the two-byte é, and the SSE bytes cut at every position. */
    size_t k = (size_t)(strchr(ARGS, '\xC3') - ARGS) + 1;
    split_stream(&s, k, false);
    for (size_t cut = 0; cut <= s.len; cut++) {
        msg_response out;
        loom_error err;
        int rc = decode_ex(s.ptr, s.len, cut, false, &out, NULL, &err);
        check_split_result(rc, &out, want, &err, cut);
        msg_response_free(&out);
    }
    msg_response out;
    loom_error err;
    check_split_result(decode_ex(s.ptr, s.len, 0, true, &out, NULL, &err), &out, want, &err, k);
    msg_response_free(&out);
    str_free(&s);
    json_decref(want);
}

static void test_text_split_inside_utf8(void **state)
{
    (void)state;
    /* "héllo" with the é cut in two across deltas reassembles exactly. */
    const char sse[] = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\xC3\"}}]}\n\n"
                       "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xA9llo\"}}]}\n\n"
                       "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"
                       "\n\n";
    msg_response out;
    rec r = {0};
    loom_error err;
    assert_int_equal(decode(sse, &out, &r, &err), 0);
    assert_string_equal(out.message.blocks[0].text, "h\xC3\xA9llo");
    assert_string_equal(str_cstr(&r.text), "h\xC3\xA9llo");
    assert_int_equal(out.stop_reason, LOOM_STOP_END_TURN);
    rec_free(&r);
    msg_response_free(&out);
}

/* ---- failures ---------------------------------------------------------- */

static void test_in_stream_error(void **state)
{
    (void)state;
    const char sse[] =
        CHUNK("{\"content\":\"Hel\"}", "null")
        "data: {\"error\":{\"message\":\"Rate limit reached for gpt-4o\",\"type\":\"requests\","
        "\"param\":null,\"code\":\"rate_limit_exceeded\"}}\n\n";
    msg_response out;
    loom_error err;
    int rc = decode(sse, &out, NULL, &err);
    assert_int_not_equal(rc, 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_RATE_LIMITED);
    assert_true(err.retryable);
    assert_non_null(strstr(err.message, "Rate limit reached for gpt-4o"));
    msg_response_free(&out);

    /* vLLM: the error fields at top level, the status as a number. */
    const char vllm[] = "data: {\"object\":\"error\",\"message\":\"This model's maximum context "
                        "length is 4096 tokens\",\"type\":\"BadRequestError\",\"param\":null,"
                        "\"code\":400}\n\n";
    rc = decode(vllm, &out, NULL, &err);
    assert_int_not_equal(rc, 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROMPT_TOO_LONG);
    msg_response_free(&out);

    const char server[] = "data: {\"error\":{\"message\":\"The server had an error\","
                          "\"type\":\"server_error\",\"code\":null}}\n\n";
    rc = decode(server, &out, NULL, &err);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_int_equal(rc, -(int)LOOM_ERR_MODEL_UNAVAILABLE);
    msg_response_free(&out);
}

static void test_truncated_stream(void **state)
{
    (void)state;
    const char sse[] = CHUNK("{\"content\":\"Hello\"}", "null")
        CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"x\","
              "\"arguments\":\"{\\\"a\\\"\"}}]}", "null");
    msg_response out;
    loom_error err;
    int rc = decode(sse, &out, NULL, &err);
    assert_int_equal(rc, -(int)LOOM_ERR_MODEL_UNAVAILABLE);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_string_equal(err.message, "stream ended before the response was complete");
    assert_int_equal(out.message.n_blocks, 0);
    msg_response_free(&out);

    /* Nothing at all is truncated too. */
    rc = decode("", &out, NULL, &err);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    msg_response_free(&out);
}

static void test_finish_without_done(void **state)
{
    (void)state;
    /* Servers that close after the finish_reason chunk without [DONE]. */
    const char sse[] = CHUNK("{\"content\":\"Hi\"}", "null") CHUNK("{}", "\"length\"");
    msg_response out;
    loom_error err;
    assert_int_equal(decode(sse, &out, NULL, &err), 0);
    assert_int_equal(out.stop_reason, LOOM_STOP_MAX_TOKENS);
    assert_string_equal(out.stop_reason_raw, "length");
    assert_string_equal(out.message.blocks[0].text, "Hi");
    msg_response_free(&out);

    const char filt[] = CHUNK("{}", "\"content_filter\"") "data: [DONE]\n\n";
    assert_int_equal(decode(filt, &out, NULL, &err), 0);
    assert_int_equal(out.stop_reason, LOOM_STOP_REFUSAL);
    assert_int_equal(out.message.n_blocks, 0);
    msg_response_free(&out);

    /* "stop" with tool calls (older Ollama) still means: run the tools. */
    const char ollama[] =
        CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"x\","
              "\"arguments\":\"{}\"}}]}", "\"stop\"") "data: [DONE]\n\n";
    assert_int_equal(decode(ollama, &out, NULL, &err), 0);
    assert_int_equal(out.stop_reason, LOOM_STOP_TOOL_USE);
    assert_string_equal(out.stop_reason_raw, "stop");
    msg_response_free(&out);
}

static void test_malformed_data(void **state)
{
    (void)state;
    /* Lines: 1 data, 2 blank, 3 data, 4 blank → the bad event ends at 4. */
    const char sse[] = "data: {\"choices\":[]}\n\n"
                       "data: {not json\n\n";
    msg_response out;
    loom_error err;
    int rc = decode(sse, &out, NULL, &err);
    assert_int_equal(rc, -(int)LOOM_ERR_MODEL_PROTOCOL);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    assert_false(err.retryable);
    assert_non_null(strstr(err.message, "malformed stream event at line 4: invalid JSON in "
                                        "SSE data at line 1, column 4"));
    assert_non_null(strstr(err.message, "(\"{not json\")"));
    msg_response_free(&out);

    /* Valid JSON that is not an object is no chunk either. */
    rc = decode("data: [1,2]\n\n", &out, NULL, &err);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    assert_non_null(strstr(err.message, "line 2"));
    msg_response_free(&out);

    /* A long bad payload is quoted only in part. */
    loom_str big = LOOM_STR_INIT;
    str_puts(&big, "data: {\"x\":");
    for (int i = 0; i < 500; i++)
        str_putc(&big, 'y');
    str_puts(&big, "\n\n");
    rc = decode(big.ptr, &out, NULL, &err);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    assert_true(strlen(err.message) < 400);
    assert_non_null(strstr(err.message, "...\")"));
    str_free(&big);
    msg_response_free(&out);

    /* Stray bytes are quoted as \xNN so the message stays valid UTF-8. */
    rc = decode("data: {\xff\xc3\xa9\n\n", &out, NULL, &err);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    assert_non_null(strstr(err.message, "(\"{\\xff\xc3\xa9\")"));
    msg_response_free(&out);
}

static void test_wrong_types_tolerated(void **state)
{
    (void)state;
    /* Every field with the wrong type: nothing crashes, nothing is taken. */
    const char sse[] =
        "data: {\"id\":5,\"model\":[],\"choices\":{\"a\":1},\"usage\":\"x\"}\n\n"
        "data: {\"choices\":[7,{\"index\":\"0\"},{\"index\":0,\"delta\":[]}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":3,\"reasoning\":{},"
        "\"tool_calls\":[1,{\"index\":0,\"function\":7},{\"index\":1,\"id\":9,"
        "\"function\":{\"name\":5,\"arguments\":[1]}}]},\"finish_reason\":1}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"prompt_tokens\":\"9\",\"completion_tokens\":2.5,"
        "\"prompt_tokens_details\":[]}}\n\n";
    msg_response out;
    loom_error err;
    assert_int_equal(decode(sse, &out, NULL, &err), 0);
    assert_int_equal(out.usage.input_tokens, 0);
    assert_int_equal(out.usage.output_tokens, 0);
    assert_null(out.response_id);
    msg_response_free(&out);
}

static void test_broken_arguments(void **state)
{
    (void)state;
    const char sse[] =
        CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"bash\","
              "\"arguments\":\"{\\\"command\\\": \\\"ls\"}}]}", "null")
        CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"c2\",\"function\":{\"name\":\"noop\","
              "\"arguments\":\"\"}}]}", "null")
        CHUNK("{\"tool_calls\":[{\"index\":2,\"id\":\"c3\",\"function\":{\"name\":\"dbl\","
              "\"arguments\":\"\\\"{\\\\\\\"a\\\\\\\":1}\\\"\"}}]}", "null")
        CHUNK("{}", "\"tool_calls\"") "data: [DONE]\n\n";
    msg_response out;
    loom_error err;
    assert_int_equal(decode(sse, &out, NULL, &err), 0);
    assert_int_equal(out.message.n_blocks, 3);
    assert_json_eq(out.message.blocks[0].input, "{\"_raw_arguments\":\"{\\\"command\\\": \\\"ls\"}");
    assert_json_eq(out.message.blocks[1].input, "{}");
    /* Double-encoded arguments are unwrapped. */
    assert_json_eq(out.message.blocks[2].input, "{\"a\":1}");
    assert_int_equal(out.stop_reason, LOOM_STOP_TOOL_USE);
    msg_response_free(&out);
}

static void test_reasoning_alias_and_index_quirks(void **state)
{
    (void)state;
    /* Ollama/OpenRouter "reasoning"; a gateway sending both names once;
     * calls without index; a reused index with a fresh id; no id at all. */
    const char sse[] =
        CHUNK("{\"reasoning\":\"a\"}", "null")
        CHUNK("{\"reasoning_content\":\"b\",\"reasoning\":\"b\"}", "null")
        CHUNK("{\"tool_calls\":[{\"id\":\"x1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
              "{\"id\":\"x2\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"k\\\":1}\"}}]}",
              "null")
        CHUNK("{\"tool_calls\":[{\"index\":5,\"id\":\"y1\",\"function\":{\"name\":\"h\","
              "\"arguments\":\"{}\"}}]}", "null")
        CHUNK("{\"tool_calls\":[{\"index\":5,\"id\":\"y2\",\"function\":{\"name\":\"i\","
              "\"arguments\":\"{}\"}}]}", "null")
        CHUNK("{\"tool_calls\":[{\"index\":9,\"function\":{\"name\":\"j\","
              "\"arguments\":\"{}\"}}]}", "null")
        CHUNK("{}", "\"tool_calls\"");
    msg_response out;
    rec r = {0};
    loom_error err;
    assert_int_equal(decode(sse, &out, &r, &err), 0);
    assert_string_equal(out.message.blocks[0].text, "ab");
    assert_int_equal(out.message.n_blocks, 6);
    assert_string_equal(out.message.blocks[1].id, "x1");
    assert_string_equal(out.message.blocks[2].id, "x2");
    assert_json_eq(out.message.blocks[2].input, "{\"k\":1}");
    assert_string_equal(out.message.blocks[3].id, "y1");
    assert_string_equal(out.message.blocks[4].id, "y2");
    assert_string_equal(out.message.blocks[5].name, "j");
    assert_string_equal(out.message.blocks[5].id, "call_4");
    assert_string_equal(str_cstr(&r.tools), "x1/f;x2/g;y1/h;y2/i;/j;");
    rec_free(&r);
    msg_response_free(&out);
}

/* ---- non-streaming ----------------------------------------------------- */

static void test_parse_body(void **state)
{
    (void)state;
    const char body[] =
        "{\"id\":\"chatcmpl-B1\",\"object\":\"chat.completion\",\"created\":1718000000,"
        "\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
        "\"content\":\"Checking.\",\"reasoning_content\":\"hmm\",\"refusal\":null,"
        "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"bash\","
        "\"arguments\":\"{\\\"command\\\":\\\"pwd\\\"}\"}},{\"id\":\"call_2\",\"type\":\"function\","
        "\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"}}]},"
        "\"logprobs\":null,\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":50,"
        "\"completion_tokens\":10,\"total_tokens\":60,\"prompt_tokens_details\":"
        "{\"cached_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0}}}";
    msg_response out = {0};
    loom_error err;
    assert_int_equal(openai_chat_codec.parse_body(body, strlen(body), &out, &err), 0);
    assert_int_equal(out.message.n_blocks, 4);
    assert_int_equal(out.message.blocks[0].kind, MSG_BLOCK_THINKING);
    assert_string_equal(out.message.blocks[1].text, "Checking.");
    assert_string_equal(out.message.blocks[2].id, "call_1");
    assert_json_eq(out.message.blocks[2].input, "{\"command\":\"pwd\"}");
    assert_string_equal(out.message.blocks[3].id, "call_2");
    assert_json_eq(out.message.blocks[3].input, "{\"path\":\"x\"}");
    assert_int_equal(out.stop_reason, LOOM_STOP_TOOL_USE);
    assert_string_equal(out.response_id, "chatcmpl-B1");
    assert_string_equal(out.model, "gpt-4o-mini");
    assert_int_equal(out.usage.input_tokens, 50);
    assert_int_equal(out.usage.output_tokens, 10);
    assert_non_null(out.usage.raw);
    msg_response_free(&out);

    /* Tool calls without ids in a body keep their positions. */
    const char noid[] = "{\"choices\":[{\"index\":0,\"message\":{\"content\":null,\"tool_calls\":["
                        "{\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}},"
                        "{\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]},"
                        "\"finish_reason\":\"stop\"}]}";
    assert_int_equal(openai_chat_codec.parse_body(noid, strlen(noid), &out, &err), 0);
    assert_int_equal(out.message.n_blocks, 2);
    assert_string_equal(out.message.blocks[0].name, "a");
    assert_string_equal(out.message.blocks[1].name, "b");
    assert_int_equal(out.stop_reason, LOOM_STOP_TOOL_USE);
    msg_response_free(&out);

    const char error[] = "{\"error\":{\"message\":\"Incorrect API key provided\","
                         "\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}";
    assert_int_not_equal(openai_chat_codec.parse_body(error, strlen(error), &out, &err), 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_AUTH);
    msg_response_free(&out);

    assert_int_equal(openai_chat_codec.parse_body("{\"x\":1}", 7, &out, &err),
                     -(int)LOOM_ERR_MODEL_PROTOCOL);
    msg_response_free(&out);
    assert_int_equal(openai_chat_codec.parse_body("nope", 4, &out, &err),
                     -(int)LOOM_ERR_MODEL_PROTOCOL);
    assert_non_null(strstr(err.message, "malformed response body"));
    msg_response_free(&out);
}

/* reasoning_effort goes to reasoning models only (o-series, gpt-5*: the
 * field is in openai-node 6.49.0 resources/chat/completions/
 * completions.d.ts, and older models refuse it); prompt_cache_key only to
 * OpenAI's own host. */
static void test_encode_effort_and_cache_key(void **state)
{
    (void)state;
    msg_request req;
    build_request(&req);
    req.cache_key = xstrdup("sess-1");
    provider_config cfg = {.base_url = "https://api.openai.com/v1", .reasoning_effort = "low"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_null(json_object_get(body, "reasoning_effort")); /* gpt-4o */
    assert_string_equal(json_get_str(body, "prompt_cache_key", ""), "sess-1");
    json_decref(body);
    provider_http_call_free(&call);

    free(req.model);
    req.model = xstrdup("o4-mini");
    body = encode_body(&req, &cfg, &call);
    assert_string_equal(json_get_str(body, "reasoning_effort", ""), "low");
    json_decref(body);
    provider_http_call_free(&call);

    /* A thinking budget without a configured effort maps to a level. */
    cfg.reasoning_effort[0] = '\0';
    req.thinking_budget = 20000;
    body = encode_body(&req, &cfg, &call);
    assert_string_equal(json_get_str(body, "reasoning_effort", ""), "high");
    json_decref(body);
    provider_http_call_free(&call);

    cfg.base_url = "http://localhost:11434/v1";
    body = encode_body(&req, &cfg, &call);
    assert_null(json_object_get(body, "prompt_cache_key"));
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_openai),
        cmocka_unit_test(test_encode_effort_and_cache_key),
        cmocka_unit_test(test_encode_local_server),
        cmocka_unit_test(test_encode_images_and_parts),
        cmocka_unit_test(test_encode_requires_model),
        cmocka_unit_test(test_stream_full),
        cmocka_unit_test(test_stream_bytewise),
        cmocka_unit_test(test_split_arguments_every_byte),
        cmocka_unit_test(test_text_split_inside_utf8),
        cmocka_unit_test(test_in_stream_error),
        cmocka_unit_test(test_truncated_stream),
        cmocka_unit_test(test_finish_without_done),
        cmocka_unit_test(test_malformed_data),
        cmocka_unit_test(test_wrong_types_tolerated),
        cmocka_unit_test(test_broken_arguments),
        cmocka_unit_test(test_reasoning_alias_and_index_quirks),
        cmocka_unit_test(test_parse_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

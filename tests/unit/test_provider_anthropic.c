/* test_provider_anthropic.c — the Anthropic Messages codec: request bodies, streams
 * decoded through the real SSE parser (tool arguments cut at every
 * boundary), errors, truncation, malformed data, non-streaming bodies; and
 * the shared error classification of provider.c. */
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

typedef struct seen {
    loom_str text, thinking, tools;
    loom_str complete; /* on_tool_call: "id/name=input;" */
} seen;

static void on_text(void *c, const char *d, size_t n) { str_append(&((seen *)c)->text, d, n); }
static void on_thinking(void *c, const char *d, size_t n)
{
    str_append(&((seen *)c)->thinking, d, n);
}
static void on_tool(void *c, const char *id, const char *name)
{
    str_printf(&((seen *)c)->tools, "%s/%s;", id, name);
}
static void on_tool_call(void *c, const char *id, const char *name, const json_t *input)
{
    char *in = json_dump_compact(input);
    str_printf(&((seen *)c)->complete, "%s/%s=%s;", id, name, in);
    free(in);
}
static void seen_free(seen *s)
{
    str_free(&s->complete);
    str_free(&s->text);
    str_free(&s->thinking);
    str_free(&s->tools);
}

typedef struct feed_ctx {
    provider_decoder *dec;
    loom_error *err;
} feed_ctx;

static int on_event(void *c, const sse_event *ev)
{
    feed_ctx *f = c;
    return anthropic_codec.decoder_event(f->dec, ev, f->err) != 0;
}

/* Decodes an SSE byte stream fed in pieces of `piece` bytes (0 = whole). */
static int decode(const char *sse, size_t len, size_t piece, msg_response *out, seen *s,
                  loom_error *err)
{
    provider_stream_sink sink = {.ctx = s, .on_text = on_text, .on_thinking = on_thinking,
                             .on_tool_use = on_tool, .on_tool_call = on_tool_call};
    memset(out, 0, sizeof *out);
    loom_error_clear(err);
    feed_ctx f = {.dec = anthropic_codec.decoder_new(out, s ? &sink : NULL), .err = err};
    sse_parser *p = sse_parser_new(on_event, &f);
    int rc = 0;
    if (!piece)
        piece = len ? len : 1;
    for (size_t off = 0; off < len && rc == 0; off += piece)
        rc = sse_parser_feed(p, sse + off, len - off < piece ? len - off : piece);
    if (rc == 0)
        rc = sse_parser_finish(p);
    if (rc == 0)
        rc = anthropic_codec.decoder_finish(f.dec, err);
    sse_parser_free(p);
    anthropic_codec.decoder_free(f.dec);
    return rc;
}

static void ev(loom_str *s, const char *name, const char *json)
{
    str_printf(s, "event: %s\ndata: %s\n\n", name, json);
}

/* An event carrying one input_json_delta whose partial_json is text[0..n). */
static void json_delta(loom_str *s, int index, const char *text, size_t n)
{
    json_t *e = json_pack("{s:s,s:i,s:{s:s,s:s%}}", "type", "content_block_delta", "index",
                          index, "delta", "type", "input_json_delta", "partial_json", text, n);
    char *d = json_dump_compact(e);
    ev(s, "content_block_delta", d);
    free(d);
    json_decref(e);
}

static const char *START =
    "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\","
    "\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,"
    "\"usage\":{\"input_tokens\":21,\"output_tokens\":1,\"cache_read_input_tokens\":5,"
    "\"cache_creation_input_tokens\":2}}}";

static void full_stream(loom_str *s, const char *args, size_t cut)
{
    ev(s, "message_start", START);
    ev(s, "ping", "{\"type\":\"ping\"}");
    ev(s, "content_block_start",
       "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\","
       "\"thinking\":\"\"}}");
    ev(s, "content_block_delta",
       "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
       "\"thinking\":\"hmm \"}}");
    ev(s, "content_block_delta",
       "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\","
       "\"signature\":\"SIG==\"}}");
    ev(s, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}");
    ev(s, "content_block_start",
       "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\","
       "\"text\":\"\"}}");
    ev(s, "content_block_delta",
       "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\","
       "\"text\":\"Hé\"}}");
    ev(s, "content_block_delta",
       "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\","
       "\"text\":\"llo ✓\"}}");
    ev(s, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}");
    ev(s, "content_block_start",
       "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\","
       "\"id\":\"toolu_A\",\"name\":\"Bash\",\"input\":{}}}");
    size_t n = strlen(args);
    json_delta(s, 2, args, cut);
    json_delta(s, 2, args + cut, n - cut);
    ev(s, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":2}");
    ev(s, "content_block_start",
       "{\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\","
       "\"id\":\"toolu_B\",\"name\":\"Read\",\"input\":{}}}");
    json_delta(s, 3, "{\"file_path\":\"/a\"}", 18);
    ev(s, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":3}");
    ev(s, "message_delta",
       "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":"
       "null},\"usage\":{\"output_tokens\":42}}");
    ev(s, "message_stop", "{\"type\":\"message_stop\"}");
}

static const char *ARGS = "{\"command\":\"echo \\\"héllo\\\" && ls\",\"n\":[1,2],\"u\":\"\\u00e9\"}";

static void test_stream_decodes_everything(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    full_stream(&s, ARGS, 7);
    msg_response r;
    seen seen_ = {0};
    loom_error err;
    assert_int_equal(decode(s.ptr, s.len, 0, &r, &seen_, &err), 0);
    assert_string_equal(str_cstr(&seen_.text), "Héllo ✓");
    assert_string_equal(str_cstr(&seen_.thinking), "hmm ");
    assert_string_equal(str_cstr(&seen_.tools), "toolu_A/Bash;toolu_B/Read;");
    assert_int_equal(r.message.n_blocks, 4);
    assert_int_equal(r.message.blocks[0].kind, MSG_BLOCK_THINKING);
    assert_string_equal(r.message.blocks[0].signature, "SIG==");
    assert_int_equal(r.message.blocks[1].kind, MSG_BLOCK_TEXT);
    assert_string_equal(r.message.blocks[1].text, "Héllo ✓");
    assert_int_equal(r.message.blocks[2].kind, MSG_BLOCK_TOOL_USE);
    assert_string_equal(r.message.blocks[3].name, "Read");
    /* Each tool block reported complete at its content_block_stop, in
     * order, with the very input the whole reply carries. */
    char *a = json_dump_compact(r.message.blocks[2].input);
    char *b = json_dump_compact(r.message.blocks[3].input);
    loom_str want = LOOM_STR_INIT;
    str_printf(&want, "toolu_A/Bash=%s;toolu_B/Read=%s;", a, b);
    assert_string_equal(str_cstr(&seen_.complete), want.ptr);
    assert_string_equal(b, "{\"file_path\":\"/a\"}");
    free(a);
    free(b);
    str_free(&want);
    assert_int_equal(r.stop_reason, LOOM_STOP_TOOL_USE);
    assert_string_equal(r.stop_reason_raw, "tool_use");
    assert_string_equal(r.response_id, "msg_01");
    assert_string_equal(r.model, "claude-test");
    assert_int_equal(r.usage.input_tokens, 21);
    assert_int_equal(r.usage.output_tokens, 42);
    assert_int_equal(r.usage.cache_read_tokens, 5);
    assert_int_equal(r.usage.cache_creation_tokens, 2);
    assert_int_equal(json_integer_value(json_object_get(r.usage.raw, "output_tokens")), 42);
    assert_int_equal(json_integer_value(json_object_get(r.usage.raw, "cache_creation_input_tokens")), 2);
    msg_response_free(&r);
    seen_free(&seen_);
    str_free(&s);
}

/* The tool input text cut into two deltas at every character boundary (a
 * JSON event cannot cut inside a UTF-8 character), and for one cut the whole
 * SSE byte stream fed one byte at a time: the input is always the same. */
static void test_arguments_split_everywhere(void **state)
{
    (void)state;
    loom_error perr;
    json_t *want = json_parse(ARGS, strlen(ARGS), "expected", &perr);
    assert_non_null(want);
    size_t n = strlen(ARGS);
    int checked = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        if (cut < n && (ARGS[cut] & 0xC0) == 0x80)
            continue; /* inside a multi-byte character */
        for (size_t piece = 0; piece <= 1; piece++) {
            if (piece == 1 && cut != 20)
                continue;
            loom_str s = LOOM_STR_INIT;
            full_stream(&s, ARGS, cut);
            msg_response r;
            loom_error err;
            assert_int_equal(decode(s.ptr, s.len, piece, &r, NULL, &err), 0);
            assert_true(json_equal(r.message.blocks[2].input, want));
            msg_response_free(&r);
            str_free(&s);
            checked++;
        }
    }
    assert_true(checked > 50);
    json_decref(want);
}

static void test_error_event_is_classified(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    ev(&s, "message_start", START);
    ev(&s, "error", "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}");
    msg_response r;
    loom_error err;
    assert_int_not_equal(decode(s.ptr, s.len, 0, &r, NULL, &err), 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_OVERLOADED);
    assert_true(err.retryable);
    assert_non_null(strstr(err.message, "Overloaded"));
    msg_response_free(&r);
    str_free(&s);
}

static void test_truncated_stream_is_retryable(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    full_stream(&s, ARGS, 3);
    s.len -= 60; /* cut before message_stop */
    msg_response r;
    loom_error err;
    assert_int_not_equal(decode(s.ptr, s.len, 0, &r, NULL, &err), 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_int_equal(r.message.n_blocks, 0); /* nothing half-built is handed out */
    msg_response_free(&r);
    str_free(&s);
}

/* A repeated content_block_stop reports the call once; a text block's
 * stop reports none. */
static void test_tool_call_reported_once(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    ev(&s, "message_start", START);
    ev(&s, "content_block_start",
       "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
       "\"text\":\"x\"}}");
    ev(&s, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}");
    ev(&s, "content_block_start",
       "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\","
       "\"id\":\"t1\",\"name\":\"Read\",\"input\":{\"file_path\":\"/b\"}}}");
    ev(&s, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}");
    ev(&s, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}");
    ev(&s, "message_stop", "{\"type\":\"message_stop\"}");
    msg_response r;
    seen seen_ = {0};
    loom_error err;
    assert_int_equal(decode(s.ptr, s.len, 0, &r, &seen_, &err), 0);
    assert_string_equal(str_cstr(&seen_.complete), "t1/Read={\"file_path\":\"/b\"};");
    msg_response_free(&r);
    seen_free(&seen_);
    str_free(&s);
}

static void test_malformed_data_names_the_line(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    ev(&s, "message_start", START);
    str_puts(&s, "data: {\"type\": broken\n\n");
    msg_response r;
    loom_error err;
    assert_int_not_equal(decode(s.ptr, s.len, 0, &r, NULL, &err), 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    assert_non_null(strstr(err.message, "line 5"));
    assert_non_null(strstr(err.message, "broken"));
    assert_false(err.retryable);
    msg_response_free(&r);
    str_free(&s);
}

static void test_broken_arguments_are_kept_raw(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    full_stream(&s, "{\"command\": \"ls", 4);
    msg_response r;
    loom_error err;
    assert_int_equal(decode(s.ptr, s.len, 0, &r, NULL, &err), 0);
    assert_string_equal(json_string_value(json_object_get(r.message.blocks[2].input,
                                                          "_raw_arguments")),
                        "{\"command\": \"ls");
    msg_response_free(&r);
    str_free(&s);
}

static void test_hostile_index_is_refused(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    ev(&s, "message_start", START);
    ev(&s, "content_block_start", "{\"type\":\"content_block_start\",\"index\":999999999,"
                                  "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}");
    msg_response r;
    loom_error err;
    assert_int_not_equal(decode(s.ptr, s.len, 0, &r, NULL, &err), 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    msg_response_free(&r);
    str_free(&s);
}

static void test_non_streaming_body(void **state)
{
    (void)state;
    const char *body =
        "{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\","
        "\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\",\"signature\":\"S\"},"
        "{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"tool_use\",\"id\":\"tu\",\"name\":\"Glob\","
        "\"input\":{\"pattern\":\"*.c\"}}],\"stop_reason\":\"tool_use\","
        "\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}";
    msg_response r = {0};
    loom_error err;
    assert_int_equal(anthropic_codec.parse_body(body, strlen(body), &r, &err), 0);
    assert_int_equal(r.message.n_blocks, 3);
    assert_string_equal(r.message.blocks[1].text, "hi");
    assert_string_equal(json_string_value(json_object_get(r.message.blocks[2].input, "pattern")),
                        "*.c");
    assert_int_equal(r.stop_reason, LOOM_STOP_TOOL_USE);
    assert_int_equal(r.usage.output_tokens, 4);
    msg_response_free(&r);
    assert_int_not_equal(anthropic_codec.parse_body("[1,2]", 5, &r, &err), 0);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    msg_response_free(&r);
}

static void test_encode_request(void **state)
{
    (void)state;
    msg_request req = {0};
    req.model = strdup("claude-x");
    req.system = strdup("Be brief.");
    req.system_cache = true;
    req.max_tokens = 1000;
    req.temperature = -1;
    req.stream = true;
    msg_message *u = msg_request_add_message(&req, MSG_ROLE_USER);
    msg_message_add_text(u, "hello");
    msg_message *a = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
    msg_message_add_thinking(a, "unsigned", NULL);
    msg_message_add_thinking(a, "signed", "SIG");
    msg_message_add_tool_use(a, "tu1", "Bash", json_pack("{s:s}", "command", "ls"));
    msg_message *r = msg_request_add_message(&req, MSG_ROLE_USER);
    msg_message_add_tool_result(r, "tu1", "boom", true)->cache_control = true;
    msg_request_add_tool(&req, "Bash", "Run a command", json_pack("{s:s}", "type", "object"));
    provider_config cfg;
    provider_config_init(&cfg);
    cfg.base_url = strdup("http://127.0.0.1:9/");
    cfg.api_key = strdup("k");
    provider_http_call call = {0};
    loom_error err;
    assert_int_equal(anthropic_codec.encode(&req, &cfg, &call, &err), 0);
    assert_string_equal(str_cstr(&call.url), "http://127.0.0.1:9/v1/messages");
    bool key = false, version = false;
    for (size_t i = 0; i < call.n_headers; i++) {
        key |= !strcmp(call.headers[i], "x-api-key: k");
        version |= !strcmp(call.headers[i], "anthropic-version: 2023-06-01");
    }
    assert_true(key && version);
    json_t *body = json_parse(call.body.ptr, call.body.len, "body", &err);
    assert_non_null(body);
    assert_string_equal(json_string_value(json_object_get(body, "model")), "claude-x");
    assert_true(json_is_true(json_object_get(body, "stream")));
    json_t *sys = json_array_get(json_object_get(body, "system"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(sys, "cache_control"),
                                                          "type")), "ephemeral");
    json_t *content = json_object_get(json_array_get(json_object_get(body, "messages"), 1),
                                      "content");
    assert_int_equal(json_array_size(content), 2); /* the unsigned thinking block is dropped */
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0),
                                                          "signature")), "SIG");
    json_t *result = json_array_get(json_object_get(json_array_get(json_object_get(body,
                                                                   "messages"), 2), "content"), 0);
    assert_true(json_is_true(json_object_get(result, "is_error")));
    assert_non_null(json_object_get(result, "cache_control"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(
                            json_object_get(body, "tools"), 0), "name")), "Bash");
    json_decref(body);
    provider_http_call_free(&call);
    provider_config_free(&cfg);
    msg_request_free(&req);
}

static void test_error_classification(void **state)
{
    (void)state;
    struct {
        long status;
        const char *body;
        loom_error_code code;
        bool retryable;
    } cases[] = {
        {429, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow\"}}",
         LOOM_ERR_MODEL_RATE_LIMITED, true},
        {529, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"o\"}}",
         LOOM_ERR_MODEL_OVERLOADED, true},
        {500, "{\"error\":{\"message\":\"x\",\"type\":\"server_error\"}}", LOOM_ERR_MODEL_UNAVAILABLE, true},
        {503, "<html>bad gateway</html>", LOOM_ERR_MODEL_UNAVAILABLE, true},
        {413, "", LOOM_ERR_MODEL_PROMPT_TOO_LONG, false},
        {400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":"
              "\"prompt is too long: 210000 tokens > 200000 maximum\"}}",
         LOOM_ERR_MODEL_PROMPT_TOO_LONG, false},
        {400, "{\"error\":{\"message\":\"too long\",\"type\":\"invalid_request_error\","
              "\"code\":\"context_length_exceeded\"}}", LOOM_ERR_MODEL_PROMPT_TOO_LONG, false},
        {401, "{\"error\":{\"message\":\"bad key\",\"type\":\"invalid_request_error\"}}",
         LOOM_ERR_MODEL_AUTH, false},
        {404, "{\"error\":{\"message\":\"no such model\",\"type\":\"not_found_error\"}}",
         LOOM_ERR_MODEL_REQUEST_REJECTED, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_error err;
        provider_classify_error_body(cases[i].status, cases[i].body, strlen(cases[i].body), &err);
        assert_int_equal(err.code, cases[i].code);
        assert_int_equal(err.retryable, cases[i].retryable);
        assert_int_equal(err.http_status, cases[i].status);
    }
    loom_error err;
    provider_classify_error_body(404, "{\"error\":{\"message\":\"no such model\"}}", 36, &err);
    assert_non_null(strstr(err.message, "no such model"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_decodes_everything),
        cmocka_unit_test(test_arguments_split_everywhere),
        cmocka_unit_test(test_error_event_is_classified),
        cmocka_unit_test(test_truncated_stream_is_retryable),
        cmocka_unit_test(test_tool_call_reported_once),
        cmocka_unit_test(test_malformed_data_names_the_line),
        cmocka_unit_test(test_broken_arguments_are_kept_raw),
        cmocka_unit_test(test_hostile_index_is_refused),
        cmocka_unit_test(test_non_streaming_body),
        cmocka_unit_test(test_encode_request),
        cmocka_unit_test(test_error_classification),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

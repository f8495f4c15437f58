/* test_provider_openai_responses.c — the Responses API codec: request bodies (input
 * items, reasoning sent back, tools), event streams decoded through the real
 * SSE parser (including arguments cut at every byte), errors, truncation,
 * malformed data and the non-streaming body. */
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
    loom_str tools;
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
    return openai_responses_codec.decoder_event(r->dec, ev, r->err) != 0;
}

static int decode_ex(const char *sse, size_t len, size_t cut, bool bytewise, msg_response *out,
                     rec *r, loom_error *err)
{
    provider_stream_sink sink = {.ctx = r, .on_text = rec_text, .on_thinking = rec_think,
                             .on_tool_use = rec_tool};
    memset(out, 0, sizeof *out);
    loom_error_clear(err);
    run ctx = {.dec = openai_responses_codec.decoder_new(out, r ? &sink : NULL), .err = err};
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
        rc = openai_responses_codec.decoder_finish(ctx.dec, err);
    else if (err->code == LOOM_OK)
        rc = loom_error_set(err, LOOM_ERR_INTERNAL, "sse parser stopped");
    else
        rc = -(int)err->code;
    sse_parser_free(p);
    openai_responses_codec.decoder_free(ctx.dec);
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

static void build_request(msg_request *req, bool with_encrypted)
{
    memset(req, 0, sizeof *req);
    req->model = xstrdup("gpt-5");
    req->system = xstrdup("You are Loom.");
    req->max_tokens = 2000;
    req->temperature = -1;
    req->stream = true;
    msg_message *m = msg_request_add_message(req, MSG_ROLE_USER);
    msg_message_add_text(m, "List files");
    m = msg_request_add_message(req, MSG_ROLE_ASSISTANT);
    msg_block *t = msg_message_add_thinking(m, "Plan: list.", "rs_1");
    if (with_encrypted)
        t->data = xstrdup("gAAAA-enc");
    msg_message_add_text(m, "Sure.");
    msg_message_add_tool_use(m, "call_1", "bash", json_pack("{s:s}", "command", "ls"));
    msg_message_add_tool_use(m, "call_2", "read", json_pack("{s:s}", "path", "a.txt"));
    m = msg_request_add_message(req, MSG_ROLE_USER);
    msg_message_add_tool_result(m, "call_1", "a.txt\nb.txt", false);
    msg_message_add_text(m, "Thanks, continue");
    msg_message_add_tool_result(m, "call_2", "hello", false);
    msg_request_add_tool(req, "bash", "Run a command",
                          json_pack("{s:s,s:{s:{s:s}}}", "type", "object", "properties",
                                    "command", "type", "string"));
}

static json_t *encode_body(const msg_request *req, const provider_config *cfg,
                           provider_http_call *call)
{
    loom_error err;
    loom_error_clear(&err);
    memset(call, 0, sizeof *call);
    assert_int_equal(openai_responses_codec.encode(req, cfg, call, &err), 0);
    json_t *body = json_loadb(call->body.ptr, call->body.len, 0, NULL);
    assert_non_null(body);
    return body;
}

/* ---- encoding ---------------------------------------------------------- */

static void test_encode(void **state)
{
    (void)state;
    msg_request req;
    build_request(&req, true);
    provider_config cfg = {.base_url = "https://api.openai.com/v1/", .api_key = "sk-test"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_string_equal(str_cstr(&call.url), "https://api.openai.com/v1/responses");
    assert_true(has_header(&call, "Authorization: Bearer sk-test"));
    assert_true(has_header(&call, "Accept: text/event-stream"));
    assert_true(has_header(&call, "Content-Type: application/json"));
    assert_json_eq(
        body,
        "{\"model\":\"gpt-5\",\"instructions\":\"You are Loom.\","
        "\"input\":["
        "{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"List files\"}]},"
        "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[{\"type\":\"summary_text\","
        "\"text\":\"Plan: list.\"}],\"encrypted_content\":\"gAAAA-enc\"},"
        "{\"role\":\"assistant\",\"content\":\"Sure.\"},"
        "{\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"bash\","
        "\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"},"
        "{\"type\":\"function_call\",\"call_id\":\"call_2\",\"name\":\"read\","
        "\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"call_1\",\"output\":\"a.txt\\nb.txt\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"call_2\",\"output\":\"hello\"},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"Thanks, continue\"}]}"
        "],"
        "\"tools\":[{\"type\":\"function\",\"name\":\"bash\",\"description\":\"Run a command\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}}},"
        "\"strict\":false}],"
        "\"max_output_tokens\":2000,\"reasoning\":{\"summary\":\"auto\"},"
        "\"stream\":true,\"store\":false,"
        "\"include\":[\"reasoning.encrypted_content\"]}");
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

static void test_encode_reasoning_without_content_dropped(void **state)
{
    (void)state;
    msg_request req;
    build_request(&req, false);
    req.stream = false;
    /* A local model that does not reason: no reasoning fields at all. */
    free(req.model);
    req.model = NULL;
    provider_config cfg = {.base_url = "http://localhost:8000/v1", .model = "m"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_false(has_header_prefix(&call, "Authorization:"));
    assert_false(has_header_prefix(&call, "Accept:"));
    json_t *input = json_object_get(body, "input");
    assert_int_equal(json_array_size(input), 7);
    size_t i;
    json_t *item;
    json_array_foreach(input, i, item) assert_string_not_equal(json_get_str(item, "type", ""),
                                                               "reasoning");
    assert_null(json_object_get(body, "include"));
    assert_true(json_is_false(json_object_get(body, "stream")));
    json_decref(body);
    provider_http_call_free(&call);

    /* Asking for reasoning turns on effort, summaries and encrypted content. */
    req.thinking_budget = 8000;
    req.model = xstrdup("gpt-5");
    body = encode_body(&req, &cfg, &call);
    assert_json_eq(json_object_get(body, "reasoning"), "{\"effort\":\"medium\",\"summary\":\"auto\"}");
    assert_json_eq(json_object_get(body, "include"), "[\"reasoning.encrypted_content\"]");
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

static void test_encode_image(void **state)
{
    (void)state;
    msg_request req = {.model = xstrdup("m"), .temperature = 0};
    msg_message *m = msg_request_add_message(&req, MSG_ROLE_USER);
    msg_message_add_image(m, "image/jpeg", "/9j/4AAQ");
    provider_config cfg = {.base_url = "http://h/v1"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_json_eq(json_object_get(body, "input"),
                   "[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\","
                   "\"image_url\":\"data:image/jpeg;base64,/9j/4AAQ\",\"detail\":\"auto\"}]}]");
    assert_true(json_get_num(body, "temperature", -1) == 0);
    assert_null(json_object_get(body, "instructions"));
    assert_null(json_object_get(body, "tools"));
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

/* ---- streaming --------------------------------------------------------- */

#define EV(type, json) "event: " type "\ndata: {\"type\":\"" type "\"," json "}\n\n"

static const char STREAM[] =
    EV("response.created", "\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":"
       "\"response\",\"created_at\":1,\"status\":\"in_progress\",\"model\":\"gpt-5-2025-08-07\","
       "\"output\":[],\"usage\":null}")
    EV("response.in_progress", "\"sequence_number\":1,\"response\":{\"id\":\"resp_1\","
       "\"status\":\"in_progress\"}")
    EV("response.output_item.added", "\"sequence_number\":2,\"output_index\":0,\"item\":"
       "{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":[]}")
    EV("response.reasoning_summary_part.added", "\"sequence_number\":3,\"item_id\":\"rs_1\","
       "\"output_index\":0,\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"\"}")
    EV("response.reasoning_summary_text.delta", "\"sequence_number\":4,\"item_id\":\"rs_1\","
       "\"output_index\":0,\"summary_index\":0,\"delta\":\"Plan: \"")
    EV("response.reasoning_summary_text.delta", "\"sequence_number\":5,\"item_id\":\"rs_1\","
       "\"output_index\":0,\"summary_index\":0,\"delta\":\"list files.\"")
    EV("response.output_item.done", "\"sequence_number\":6,\"output_index\":0,\"item\":"
       "{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\","
       "\"text\":\"Plan: list files.\"}],\"encrypted_content\":\"gAAAA-enc\"}")
    EV("response.output_item.added", "\"sequence_number\":7,\"output_index\":1,\"item\":"
       "{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],"
       "\"role\":\"assistant\"}")
    EV("response.content_part.added", "\"sequence_number\":8,\"item_id\":\"msg_1\","
       "\"output_index\":1,\"content_index\":0,\"part\":{\"type\":\"output_text\","
       "\"annotations\":[],\"text\":\"\"}")
    EV("response.output_text.delta", "\"sequence_number\":9,\"item_id\":\"msg_1\","
       "\"output_index\":1,\"content_index\":0,\"delta\":\"Running \",\"logprobs\":[]")
    EV("response.output_text.delta", "\"sequence_number\":10,\"item_id\":\"msg_1\","
       "\"output_index\":1,\"content_index\":0,\"delta\":\"two tools.\",\"logprobs\":[]")
    EV("response.output_text.done", "\"sequence_number\":11,\"item_id\":\"msg_1\","
       "\"output_index\":1,\"content_index\":0,\"text\":\"Running two tools.\"")
    EV("response.output_item.done", "\"sequence_number\":12,\"output_index\":1,\"item\":"
       "{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\","
       "\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"Running two tools.\"}]}")
    EV("response.output_item.added", "\"sequence_number\":13,\"output_index\":2,\"item\":"
       "{\"id\":\"fc_1\",\"type\":\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\","
       "\"call_id\":\"call_a\",\"name\":\"bash\"}")
    EV("response.output_item.added", "\"sequence_number\":14,\"output_index\":3,\"item\":"
       "{\"id\":\"fc_2\",\"type\":\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\","
       "\"call_id\":\"call_b\",\"name\":\"read\"}")
    EV("response.function_call_arguments.delta", "\"sequence_number\":15,\"item_id\":\"fc_1\","
       "\"output_index\":2,\"delta\":\"{\\\"command\\\":\"")
    EV("response.function_call_arguments.delta", "\"sequence_number\":16,\"item_id\":\"fc_2\","
       "\"output_index\":3,\"delta\":\"{\\\"path\\\":\\\"a.txt\\\"}\"")
    EV("response.function_call_arguments.delta", "\"sequence_number\":17,\"item_id\":\"fc_1\","
       "\"output_index\":2,\"delta\":\"\\\"ls\\\"}\"")
    EV("response.function_call_arguments.done", "\"sequence_number\":18,\"item_id\":\"fc_1\","
       "\"output_index\":2,\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"")
    EV("response.output_item.done", "\"sequence_number\":19,\"output_index\":2,\"item\":"
       "{\"id\":\"fc_1\",\"type\":\"function_call\",\"status\":\"completed\","
       "\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\",\"call_id\":\"call_a\",\"name\":\"bash\"}")
    EV("response.output_item.done", "\"sequence_number\":20,\"output_index\":3,\"item\":"
       "{\"id\":\"fc_2\",\"type\":\"function_call\",\"status\":\"completed\","
       "\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\",\"call_id\":\"call_b\",\"name\":\"read\"}")
    EV("response.some_future_event", "\"sequence_number\":21,\"whatever\":[1,2,3]")
    EV("response.completed", "\"sequence_number\":22,\"response\":{\"id\":\"resp_1\","
       "\"object\":\"response\",\"status\":\"completed\",\"model\":\"gpt-5-2025-08-07\","
       "\"error\":null,\"incomplete_details\":null,\"output\":["
       "{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\","
       "\"text\":\"Plan: list files.\"}],\"encrypted_content\":\"gAAAA-enc\"},"
       "{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\","
       "\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"Running two tools.\"}]},"
       "{\"id\":\"fc_1\",\"type\":\"function_call\",\"status\":\"completed\","
       "\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\",\"call_id\":\"call_a\",\"name\":\"bash\"},"
       "{\"id\":\"fc_2\",\"type\":\"function_call\",\"status\":\"completed\","
       "\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\",\"call_id\":\"call_b\",\"name\":\"read\"}],"
       "\"usage\":{\"input_tokens\":100,\"input_tokens_details\":{\"cached_tokens\":60},"
       "\"output_tokens\":20,\"output_tokens_details\":{\"reasoning_tokens\":5},"
       "\"total_tokens\":120}}");

static void check_full(const msg_response *out)
{
    assert_int_equal(out->message.role, MSG_ROLE_ASSISTANT);
    assert_int_equal(out->message.n_blocks, 4);
    const msg_block *b = out->message.blocks;
    assert_int_equal(b[0].kind, MSG_BLOCK_THINKING);
    assert_string_equal(b[0].text, "Plan: list files.");
    assert_string_equal(b[0].signature, "rs_1");
    assert_string_equal(b[0].data, "gAAAA-enc");
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
    assert_int_equal(out->stop_reason, LOOM_STOP_TOOL_USE);
    assert_string_equal(out->stop_reason_raw, "completed");
    assert_string_equal(out->response_id, "resp_1");
    assert_string_equal(out->model, "gpt-5-2025-08-07");
    assert_int_equal(out->usage.input_tokens, 40);
    assert_int_equal(out->usage.cache_read_tokens, 60);
    assert_int_equal(out->usage.output_tokens, 20);
    assert_int_equal(out->usage.reasoning_tokens, 5);
    assert_json_eq(out->usage.raw,
                   "{\"input_tokens\":100,\"input_tokens_details\":{\"cached_tokens\":60},"
                   "\"output_tokens\":20,\"output_tokens_details\":{\"reasoning_tokens\":5},"
                   "\"total_tokens\":120}");
}

static void test_stream_full(void **state)
{
    (void)state;
    msg_response out;
    rec r = {0};
    loom_error err;
    assert_int_equal(decode(STREAM, &out, &r, &err), 0);
    check_full(&out);
    assert_string_equal(str_cstr(&r.text), "Running two tools.");
    assert_string_equal(str_cstr(&r.thinking), "Plan: list files.");
    assert_string_equal(str_cstr(&r.tools), "call_a/bash;call_b/read;");
    rec_free(&r);
    msg_response_free(&out);

    assert_int_equal(decode_ex(STREAM, strlen(STREAM), 0, true, &out, NULL, &err), 0);
    check_full(&out);
    msg_response_free(&out);
}

static void test_done_items_are_authoritative(void **state)
{
    (void)state;
    /* Deltas that disagree with the .done item: the item wins. Summary parts
     * are separated by a blank line, as in the final item. */
    const char sse[] =
        EV("response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"rs_9\","
           "\"type\":\"reasoning\",\"summary\":[]}")
        EV("response.reasoning_summary_text.delta", "\"item_id\":\"rs_9\",\"output_index\":0,"
           "\"summary_index\":0,\"delta\":\"One.\"")
        EV("response.reasoning_summary_text.delta", "\"item_id\":\"rs_9\",\"output_index\":0,"
           "\"summary_index\":1,\"delta\":\"Two.\"")
        EV("response.output_item.added", "\"output_index\":1,\"item\":{\"id\":\"fc_9\","
           "\"type\":\"function_call\",\"call_id\":\"call_9\",\"name\":\"bash\",\"arguments\":\"\"}")
        EV("response.function_call_arguments.delta", "\"item_id\":\"fc_9\",\"output_index\":1,"
           "\"delta\":\"{\\\"garbage\"")
        EV("response.output_item.done", "\"output_index\":1,\"item\":{\"id\":\"fc_9\","
           "\"type\":\"function_call\",\"call_id\":\"call_9\",\"name\":\"bash\","
           "\"arguments\":\"{\\\"command\\\":\\\"pwd\\\"}\"}")
        EV("response.completed", "\"response\":{\"id\":\"resp_9\",\"status\":\"completed\"}");
    msg_response out;
    rec r = {0};
    loom_error err;
    assert_int_equal(decode(sse, &out, &r, &err), 0);
    assert_int_equal(out.message.n_blocks, 2);
    assert_string_equal(out.message.blocks[0].text, "One.\n\nTwo.");
    assert_string_equal(str_cstr(&r.thinking), "One.\n\nTwo.");
    assert_null(out.message.blocks[0].data);
    assert_json_eq(out.message.blocks[1].input, "{\"command\":\"pwd\"}");
    assert_int_equal(out.stop_reason, LOOM_STOP_TOOL_USE);
    assert_null(out.usage.raw);
    rec_free(&r);
    msg_response_free(&out);
}

/* ---- the split test ---------------------------------------------------- */

static const char ARGS[] = "{\"command\":\"echo \\\"h\xC3\xA9llo\\\" && ls\",\"n\":[1,2]}";

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

static void args_delta(loom_str *s, const char *p, size_t n, bool heavy)
{
    str_puts(s, "event: response.function_call_arguments.delta\n"
                "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_s\","
                "\"output_index\":0,\"delta\":\"");
    json_escape(s, p, n, heavy);
    str_puts(s, "\"}\n\n");
}

/* Only deltas carry the arguments here (no .done, no output in the final
 * response), so the result is the reassembly and nothing else. */
static void split_stream(loom_str *s, size_t k, bool heavy)
{
    size_t n = strlen(ARGS);
    str_clear(s);
    str_puts(s, EV("response.created", "\"response\":{\"id\":\"resp_s\",\"model\":\"m\"}")
                EV("response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"fc_s\","
                   "\"type\":\"function_call\",\"call_id\":\"call_s\",\"name\":\"bash\","
                   "\"arguments\":\"\"}"));
    args_delta(s, ARGS, k, heavy);
    args_delta(s, ARGS + k, n - k, heavy);
    str_puts(s, EV("response.completed", "\"response\":{\"id\":\"resp_s\","
                                         "\"status\":\"completed\"}"));
}

static void check_split_result(int rc, msg_response *out, json_t *want, const loom_error *err,
                               size_t k)
{
    if (rc != 0)
        fprintf(stderr, "k=%zu: %s\n", k, err->message);
    assert_int_equal(rc, 0);
    assert_int_equal(out->message.n_blocks, 1);
    assert_int_equal(out->message.blocks[0].kind, MSG_BLOCK_TOOL_USE);
    assert_string_equal(out->message.blocks[0].id, "call_s");
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

/* ---- failures and stop reasons ----------------------------------------- */

static void test_error_event(void **state)
{
    (void)state;
    const char sse[] =
        EV("response.created", "\"response\":{\"id\":\"resp_e\"}")
        EV("error", "\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\",\"param\":null,"
           "\"sequence_number\":2");
    msg_response out;
    loom_error err;
    int rc = decode(sse, &out, NULL, &err);
    assert_int_equal(rc, -(int)LOOM_ERR_MODEL_RATE_LIMITED);
    assert_true(err.retryable);
    assert_non_null(strstr(err.message, "Slow down"));
    msg_response_free(&out);

    /* The nested shape some servers use. */
    const char nested[] = EV("error", "\"error\":{\"type\":\"invalid_request_error\","
                                      "\"code\":\"context_length_exceeded\",\"message\":\"Your "
                                      "input exceeds the context window\"}");
    rc = decode(nested, &out, NULL, &err);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROMPT_TOO_LONG);
    msg_response_free(&out);

    const char failed[] =
        EV("response.created", "\"response\":{\"id\":\"resp_f\"}")
        EV("response.failed", "\"response\":{\"id\":\"resp_f\",\"status\":\"failed\",\"error\":"
           "{\"code\":\"server_error\",\"message\":\"The server had an error processing your "
           "request.\"}}");
    rc = decode(failed, &out, NULL, &err);
    assert_int_equal(rc, -(int)LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_non_null(strstr(err.message, "The server had an error"));
    msg_response_free(&out);

    /* Failed without an error object still fails, with a message. */
    rc = decode(EV("response.failed", "\"response\":{\"status\":\"failed\"}"), &out, NULL, &err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.message, "the response failed"));
    msg_response_free(&out);
}

static void test_truncated_stream(void **state)
{
    (void)state;
    const char sse[] =
        EV("response.created", "\"response\":{\"id\":\"resp_t\"}")
        EV("response.output_text.delta", "\"item_id\":\"msg_1\",\"output_index\":0,"
           "\"delta\":\"Hel\"");
    msg_response out;
    rec r = {0};
    loom_error err;
    int rc = decode(sse, &out, &r, &err);
    assert_int_equal(rc, -(int)LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_string_equal(err.message, "stream ended before the response was complete");
    assert_string_equal(str_cstr(&r.text), "Hel");
    assert_int_equal(out.message.n_blocks, 0);
    rec_free(&r);
    msg_response_free(&out);

    /* [DONE] is not this API's terminal event. */
    rc = decode("data: [DONE]\n\n", &out, NULL, &err);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    msg_response_free(&out);
}

static void test_incomplete(void **state)
{
    (void)state;
    const char sse[] =
        EV("response.output_text.delta", "\"item_id\":\"msg_1\",\"output_index\":0,"
           "\"delta\":\"Long answ\"")
        EV("response.incomplete", "\"response\":{\"id\":\"resp_i\",\"status\":\"incomplete\","
           "\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[],"
           "\"usage\":{\"input_tokens\":10,\"output_tokens\":50}}");
    msg_response out;
    loom_error err;
    assert_int_equal(decode(sse, &out, NULL, &err), 0);
    assert_int_equal(out.stop_reason, LOOM_STOP_MAX_TOKENS);
    assert_string_equal(out.stop_reason_raw, "max_output_tokens");
    assert_int_equal(out.message.n_blocks, 1);
    assert_string_equal(out.message.blocks[0].text, "Long answ");
    assert_int_equal(out.usage.input_tokens, 10);
    assert_int_equal(out.usage.output_tokens, 50);
    msg_response_free(&out);

    const char filt[] = EV("response.incomplete", "\"response\":{\"status\":\"incomplete\","
                                                  "\"incomplete_details\":{\"reason\":"
                                                  "\"content_filter\"}}");
    assert_int_equal(decode(filt, &out, NULL, &err), 0);
    assert_int_equal(out.stop_reason, LOOM_STOP_REFUSAL);
    msg_response_free(&out);

    const char plain[] =
        EV("response.output_text.delta", "\"item_id\":\"m\",\"output_index\":0,\"delta\":\"Hi\"")
        EV("response.completed", "\"response\":{\"status\":\"completed\"}");
    assert_int_equal(decode(plain, &out, NULL, &err), 0);
    assert_int_equal(out.stop_reason, LOOM_STOP_END_TURN);
    assert_string_equal(out.message.blocks[0].text, "Hi");
    msg_response_free(&out);
}

static void test_malformed_data(void **state)
{
    (void)state;
    /* Lines: 1 event, 2 data, 3 blank, 4 event, 5 data, 6 blank. */
    const char sse[] = EV("response.created", "\"response\":{\"id\":\"r\"}")
        "event: response.output_text.delta\ndata: {not json\n\n";
    msg_response out;
    loom_error err;
    int rc = decode(sse, &out, NULL, &err);
    assert_int_equal(rc, -(int)LOOM_ERR_MODEL_PROTOCOL);
    assert_non_null(strstr(err.message, "malformed stream event at line 6: invalid JSON in "
                                        "SSE data at line 1"));
    assert_non_null(strstr(err.message, "(\"{not json\")"));
    msg_response_free(&out);
}

static void test_wrong_types_and_unknown_events(void **state)
{
    (void)state;
    const char sse[] =
        "data: {\"type\":5}\n\n"
        "event: response.output_text.delta\ndata: {\"delta\":\"via event name\"}\n\n"
        EV("response.output_item.added", "\"output_index\":\"x\",\"item\":[1]")
        EV("response.output_item.done", "\"output_index\":-3,\"item\":{\"type\":7,\"id\":[]}")
        EV("response.function_call_arguments.delta", "\"item_id\":9,\"delta\":{}")
        EV("response.reasoning_summary_text.delta", "\"summary_index\":\"a\",\"delta\":null")
        EV("response.web_search_call.searching", "\"item_id\":\"ws_1\",\"output_index\":4")
        EV("response.completed", "\"response\":{\"status\":3,\"output\":{\"a\":1},"
           "\"usage\":[],\"id\":false}");
    msg_response out;
    loom_error err;
    assert_int_equal(decode(sse, &out, NULL, &err), 0);
    assert_int_equal(out.stop_reason, LOOM_STOP_END_TURN);
    assert_int_equal(out.message.n_blocks, 1);
    assert_string_equal(out.message.blocks[0].text, "via event name");
    assert_null(out.response_id);
    msg_response_free(&out);
}

static void test_broken_arguments(void **state)
{
    (void)state;
    const char sse[] =
        EV("response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"fc_1\","
           "\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"bash\","
           "\"arguments\":\"{\\\"command\\\": \\\"ls\"}")
        EV("response.output_item.done", "\"output_index\":1,\"item\":{\"id\":\"fc_2\","
           "\"type\":\"function_call\",\"call_id\":\"c2\",\"name\":\"noop\",\"arguments\":\"\"}")
        EV("response.completed", "\"response\":{\"status\":\"completed\"}");
    msg_response out;
    loom_error err;
    assert_int_equal(decode(sse, &out, NULL, &err), 0);
    assert_int_equal(out.message.n_blocks, 2);
    assert_json_eq(out.message.blocks[0].input,
                   "{\"_raw_arguments\":\"{\\\"command\\\": \\\"ls\"}");
    assert_json_eq(out.message.blocks[1].input, "{}");
    msg_response_free(&out);
}

/* ---- non-streaming ----------------------------------------------------- */

static void test_parse_body(void **state)
{
    (void)state;
    const char body[] =
        "{\"id\":\"resp_b\",\"object\":\"response\",\"created_at\":1,\"status\":\"completed\","
        "\"model\":\"gpt-5-mini\",\"error\":null,\"incomplete_details\":null,\"output\":["
        "{\"id\":\"rs_b\",\"type\":\"reasoning\",\"summary\":[],\"encrypted_content\":\"E\"},"
        "{\"id\":\"msg_b\",\"type\":\"message\",\"role\":\"assistant\",\"status\":\"completed\","
        "\"content\":[{\"type\":\"output_text\",\"text\":\"Hello \",\"annotations\":[]},"
        "{\"type\":\"output_text\",\"text\":\"there.\",\"annotations\":[]}]},"
        "{\"id\":\"fc_b\",\"type\":\"function_call\",\"call_id\":\"call_b\",\"name\":\"read\","
        "\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\",\"status\":\"completed\"}],"
        "\"usage\":{\"input_tokens\":30,\"input_tokens_details\":{\"cached_tokens\":10},"
        "\"output_tokens\":7,\"output_tokens_details\":{\"reasoning_tokens\":3},"
        "\"total_tokens\":37}}";
    msg_response out = {0};
    loom_error err;
    assert_int_equal(openai_responses_codec.parse_body(body, strlen(body), &out, &err), 0);
    assert_int_equal(out.message.n_blocks, 3);
    assert_int_equal(out.message.blocks[0].kind, MSG_BLOCK_THINKING);
    assert_string_equal(out.message.blocks[0].text, "");
    assert_string_equal(out.message.blocks[0].signature, "rs_b");
    assert_string_equal(out.message.blocks[0].data, "E");
    assert_string_equal(out.message.blocks[1].text, "Hello there.");
    assert_string_equal(out.message.blocks[2].id, "call_b");
    assert_json_eq(out.message.blocks[2].input, "{\"path\":\"x\"}");
    assert_int_equal(out.stop_reason, LOOM_STOP_TOOL_USE);
    assert_string_equal(out.response_id, "resp_b");
    assert_string_equal(out.model, "gpt-5-mini");
    assert_int_equal(out.usage.input_tokens, 20);
    assert_int_equal(out.usage.cache_read_tokens, 10);
    assert_int_equal(out.usage.output_tokens, 7);
    assert_int_equal(out.usage.reasoning_tokens, 3);
    msg_response_free(&out);

    const char failed[] = "{\"id\":\"r\",\"status\":\"failed\",\"error\":{\"code\":"
                          "\"rate_limit_exceeded\",\"message\":\"Too many\"}}";
    assert_int_equal(openai_responses_codec.parse_body(failed, strlen(failed), &out, &err),
                     -(int)LOOM_ERR_MODEL_RATE_LIMITED);
    msg_response_free(&out);

    const char pending[] = "{\"id\":\"r\",\"status\":\"in_progress\",\"output\":[]}";
    assert_int_equal(openai_responses_codec.parse_body(pending, strlen(pending), &out, &err),
                     -(int)LOOM_ERR_MODEL_PROTOCOL);
    msg_response_free(&out);

    assert_int_equal(openai_responses_codec.parse_body("[]", 2, &out, &err),
                     -(int)LOOM_ERR_MODEL_PROTOCOL);
    msg_response_free(&out);
    assert_int_equal(openai_responses_codec.parse_body("{}", 2, &out, &err),
                     -(int)LOOM_ERR_MODEL_PROTOCOL);
    msg_response_free(&out);
}

/* ---- reasoning across turns, effort, cache key ------------------------- */

/* The configured effort goes to reasoning models only; the session's cache
 * key to every request. Facts: openai/codex @001cb8e2 codex-rs/core/src/
 * client.rs (reasoning + include for reasoning families, prompt_cache_key =
 * conversation id); openai-node 6.49.0 resources/responses/responses.d.ts
 * (prompt_cache_key, Reasoning.effort). */
static void test_encode_effort_and_cache_key(void **state)
{
    (void)state;
    msg_request req;
    build_request(&req, true);
    req.cache_key = xstrdup("0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
    provider_config cfg = {.base_url = "https://api.openai.com/v1", .reasoning_effort = "high"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_json_eq(json_object_get(body, "reasoning"), "{\"effort\":\"high\",\"summary\":\"auto\"}");
    assert_json_eq(json_object_get(body, "include"), "[\"reasoning.encrypted_content\"]");
    assert_string_equal(json_get_str(body, "prompt_cache_key", ""),
                        "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
    json_decref(body);
    provider_http_call_free(&call);

    const char *reasoning_models[] = {"o3", "o4-mini", "o1", "gpt-5-codex", "gpt-5.1",
                                      "gpt-5-mini"};
    for (size_t i = 0; i < sizeof reasoning_models / sizeof *reasoning_models; i++) {
        free(req.model);
        req.model = xstrdup(reasoning_models[i]);
        body = encode_body(&req, &cfg, &call);
        assert_string_equal(json_get_str(json_get_obj(body, "reasoning"), "effort", ""), "high");
        json_decref(body);
        provider_http_call_free(&call);
    }

    /* A model that does not reason is never sent an effort (it would answer
     * 400); the reasoning item going back still needs the include. */
    free(req.model);
    req.model = xstrdup("gpt-4.1");
    body = encode_body(&req, &cfg, &call);
    assert_null(json_object_get(body, "reasoning"));
    assert_json_eq(json_object_get(body, "include"), "[\"reasoning.encrypted_content\"]");
    assert_non_null(json_object_get(body, "prompt_cache_key"));
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

/* Codex's own fixture, byte for byte: openai/codex @71163530
 * codex-rs/core/tests/cli_responses_fixture.sse. Its text is only in the
 * output_item.done message item (no output_text.delta), the item has no id
 * and no output_index, and a stray "#" line sits inside an event (a field
 * SSE ignores). The file ends with no blank line after its last event,
 * which net/sse.c dispatches at a clean end of stream. */
static const char CODEX_FIXTURE[] =
    "event: response.created\n"
    "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp1\"}}\n"
    "\n"
    "event: response.output_item.done\n"
    "# core/tests/cli_responses_fixture.sse\n"
    "data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"message\",\"role\":"
    "\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"fixture hello\"}]}}\n"
    "\n"
    "event: response.completed\n"
    "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp1\",\"output\":[]}}\n";

static void test_text_only_in_done_item(void **state)
{
    (void)state;
    msg_response out;
    rec r = {0};
    loom_error err;
    assert_int_equal(decode(CODEX_FIXTURE, &out, &r, &err), 0);
    assert_string_equal(str_cstr(&r.text), "fixture hello");
    assert_int_equal(out.message.n_blocks, 1);
    assert_int_equal(out.message.blocks[0].kind, MSG_BLOCK_TEXT);
    assert_string_equal(out.message.blocks[0].text, "fixture hello");
    assert_int_equal(out.stop_reason, LOOM_STOP_END_TURN);
    assert_string_equal(out.response_id, "resp1");
    rec_free(&r);
    msg_response_free(&out);

    /* Byte by byte, the same. */
    memset(&r, 0, sizeof r);
    assert_int_equal(decode_ex(CODEX_FIXTURE, strlen(CODEX_FIXTURE), 0, true, &out, &r, &err), 0);
    assert_string_equal(str_cstr(&r.text), "fixture hello");
    rec_free(&r);
    msg_response_free(&out);

    /* Deltas, then the done item repeating them: shown once. Deltas that
     * stopped short of the done item: the rest is shown at the done. */
    const char sse[] =
        EV("response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"msg_1\","
           "\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}")
        EV("response.output_text.delta", "\"item_id\":\"msg_1\",\"output_index\":0,"
           "\"content_index\":0,\"delta\":\"Hel\"")
        EV("response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"msg_1\","
           "\"type\":\"message\",\"role\":\"assistant\",\"status\":\"completed\","
           "\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"Hello.\"}]}")
        EV("response.output_item.done", "\"output_index\":1,\"item\":{\"id\":\"msg_2\","
           "\"type\":\"message\",\"role\":\"assistant\",\"status\":\"completed\","
           "\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\" Bye.\"}]}")
        EV("response.completed", "\"response\":{\"id\":\"resp_2\",\"status\":\"completed\","
           "\"output\":[{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
           "\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],"
           "\"text\":\"Hello.\"}]}]}");
    memset(&r, 0, sizeof r);
    assert_int_equal(decode(sse, &out, &r, &err), 0);
    assert_string_equal(str_cstr(&r.text), "Hello. Bye.");
    assert_int_equal(out.message.n_blocks, 2);
    rec_free(&r);
    msg_response_free(&out);

    /* A reasoning summary that arrives only in its done item is shown as
     * thinking, once. */
    const char think[] =
        EV("response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"rs_1\","
           "\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"Plan.\"}],"
           "\"encrypted_content\":\"gAAAA-x\"}")
        EV("response.completed", "\"response\":{\"id\":\"resp_3\",\"status\":\"completed\"}");
    memset(&r, 0, sizeof r);
    assert_int_equal(decode(think, &out, &r, &err), 0);
    assert_string_equal(str_cstr(&r.thinking), "Plan.");
    rec_free(&r);
    msg_response_free(&out);
}

/* What a reply's reasoning items become is what the next request sends
 * back: each reasoning item (id, summary, encrypted_content) before the
 * message or call it led to, in the reply's order. */
static void test_reasoning_round_trip(void **state)
{
    (void)state;
    const char sse[] =
        EV("response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"rs_a\","
           "\"type\":\"reasoning\",\"summary\":[],\"encrypted_content\":\"ENC-A\"}")
        EV("response.output_item.done", "\"output_index\":1,\"item\":{\"id\":\"fc_a\","
           "\"type\":\"function_call\",\"call_id\":\"call_a\",\"name\":\"bash\","
           "\"arguments\":\"{}\"}")
        EV("response.output_item.done", "\"output_index\":2,\"item\":{\"id\":\"rs_b\","
           "\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"B\"}],"
           "\"encrypted_content\":\"ENC-B\"}")
        EV("response.output_item.done", "\"output_index\":3,\"item\":{\"id\":\"msg_b\","
           "\"type\":\"message\",\"role\":\"assistant\",\"status\":\"completed\","
           "\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"Done.\"}]}")
        EV("response.completed", "\"response\":{\"id\":\"resp_r\",\"status\":\"completed\"}");
    msg_response out;
    loom_error err;
    assert_int_equal(decode(sse, &out, NULL, &err), 0);

    msg_request req;
    memset(&req, 0, sizeof req);
    req.model = xstrdup("gpt-5");
    req.temperature = -1;
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "go");
    msg_message_copy(msg_request_add_message(&req, MSG_ROLE_ASSISTANT), &out.message);
    msg_message_add_tool_result(msg_request_add_message(&req, MSG_ROLE_USER), "call_a", "ok",
                                 false);
    provider_config cfg = {.base_url = "https://api.openai.com/v1"};
    provider_http_call call;
    json_t *body = encode_body(&req, &cfg, &call);
    assert_json_eq(
        json_object_get(body, "input"),
        "[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"go\"}]},"
        "{\"type\":\"reasoning\",\"id\":\"rs_a\",\"summary\":[],\"encrypted_content\":\"ENC-A\"},"
        "{\"type\":\"function_call\",\"call_id\":\"call_a\",\"name\":\"bash\",\"arguments\":\"{}\"},"
        "{\"type\":\"reasoning\",\"id\":\"rs_b\",\"summary\":[{\"type\":\"summary_text\","
        "\"text\":\"B\"}],\"encrypted_content\":\"ENC-B\"},"
        "{\"role\":\"assistant\",\"content\":\"Done.\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"call_a\",\"output\":\"ok\"}]");
    assert_json_eq(json_object_get(body, "include"), "[\"reasoning.encrypted_content\"]");
    assert_true(json_is_false(json_object_get(body, "store")));
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
    msg_response_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_encode_reasoning_without_content_dropped),
        cmocka_unit_test(test_encode_image),
        cmocka_unit_test(test_stream_full),
        cmocka_unit_test(test_done_items_are_authoritative),
        cmocka_unit_test(test_split_arguments_every_byte),
        cmocka_unit_test(test_error_event),
        cmocka_unit_test(test_truncated_stream),
        cmocka_unit_test(test_incomplete),
        cmocka_unit_test(test_malformed_data),
        cmocka_unit_test(test_wrong_types_and_unknown_events),
        cmocka_unit_test(test_broken_arguments),
        cmocka_unit_test(test_parse_body),
        cmocka_unit_test(test_encode_effort_and_cache_key),
        cmocka_unit_test(test_text_only_in_done_item),
        cmocka_unit_test(test_reasoning_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

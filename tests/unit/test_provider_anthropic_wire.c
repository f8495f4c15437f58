/* test_provider_anthropic_wire.c — the Anthropic codec against the API's
 * own rules (issue 12): whitespace-only text blocks never sent, usage merged
 * the way the SDK merges it (a null never erases a count; thinking tokens
 * from output_tokens_details), and the thinking config fitted under
 * max_tokens with its beta header and no temperature. Events are in the
 * shapes of @anthropic-ai/sdk 1.15.0's types (src/resources/messages/
 * messages.ts: MessageStartEvent, MessageDeltaUsage, OutputTokensDetails). */
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
#include "net/sse.h"
#include "provider/provider.h"

/* --- helpers --------------------------------------------------------------- */

static json_t *encode(const msg_request *req, provider_http_call *call)
{
    provider_config cfg;
    provider_config_init(&cfg);
    cfg.base_url = strdup("http://127.0.0.1:9");
    loom_error err;
    memset(call, 0, sizeof *call);
    assert_int_equal(anthropic_codec.encode(req, &cfg, call, &err), 0);
    provider_config_free(&cfg);
    json_t *body = json_parse(call->body.ptr, call->body.len, "body", &err);
    assert_non_null(body);
    return body;
}

static bool has_header(const provider_http_call *call, const char *h)
{
    for (size_t i = 0; i < call->n_headers; i++)
        if (!strcmp(call->headers[i], h))
            return true;
    return false;
}

static msg_request base_request(void)
{
    msg_request req = {0};
    req.model = strdup("claude-sonnet-4-5");
    req.max_tokens = 16000;
    req.temperature = -1;
    req.stream = true;
    return req;
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

static int decode(const char *sse, msg_response *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    loom_error_clear(err);
    feed_ctx f = {.dec = anthropic_codec.decoder_new(out, NULL), .err = err};
    sse_parser *p = sse_parser_new(on_event, &f);
    int rc = sse_parser_feed(p, sse, strlen(sse));
    if (rc == 0)
        rc = sse_parser_finish(p);
    if (rc == 0)
        rc = anthropic_codec.decoder_finish(f.dec, err);
    sse_parser_free(p);
    anthropic_codec.decoder_free(f.dec);
    return rc;
}

/* --- whitespace-only text -------------------------------------------------- */

static void test_blank_text_blocks_are_left_out(void **state)
{
    (void)state;
    msg_request req = base_request();
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "hi");
    /* The model's whole reply was "   \n": the message goes, not the turn after. */
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_ASSISTANT), "   \n");
    msg_message *u = msg_request_add_message(&req, MSG_ROLE_USER);
    msg_message_add_text(u, "go on");
    msg_message_add_text(u, "\t\r\n ")->cache_control = true; /* its breakpoint moves back */
    msg_message *a = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
    msg_message_add_text(a, "");
    msg_message_add_text(a, " x ");
    provider_http_call call;
    json_t *body = encode(&req, &call);
    json_t *msgs = json_object_get(body, "messages");
    assert_int_equal(json_array_size(msgs), 3);
    json_t *second = json_array_get(msgs, 1);
    assert_string_equal(json_string_value(json_object_get(second, "role")), "user");
    json_t *content = json_object_get(second, "content");
    assert_int_equal(json_array_size(content), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "text")),
                        "go on");
    assert_non_null(json_object_get(json_array_get(content, 0), "cache_control"));
    content = json_object_get(json_array_get(msgs, 2), "content");
    assert_int_equal(json_array_size(content), 1); /* the empty block went too */
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "text")),
                        " x ");
    /* The request is untouched: the session's record is never rewritten. */
    assert_string_equal(req.messages[1].blocks[0].text, "   \n");
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

static void test_msg_text_blank(void **state)
{
    (void)state;
    assert_true(msg_text_blank(NULL));
    assert_true(msg_text_blank(""));
    assert_true(msg_text_blank(" \t\n\r\v\f"));
    assert_false(msg_text_blank(" . "));
    assert_false(msg_text_blank("\xc2\xa0x"));
}

/* --- usage ----------------------------------------------------------------- */

static const char *START =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\","
    "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],"
    "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,"
    "\"cache_creation_input_tokens\":30,\"cache_read_input_tokens\":1200,"
    "\"output_tokens\":2}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
    "{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
    "{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n";

static void decode_with_delta(const char *delta_usage, msg_response *r)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, START);
    str_printf(&s,
               "event: message_delta\n"
               "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
               "\"stop_sequence\":null},\"usage\":%s}\n\n"
               "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
               delta_usage);
    loom_error err;
    assert_int_equal(decode(s.ptr, r, &err), 0);
    str_free(&s);
}

static void test_null_delta_usage_keeps_start_counts(void **state)
{
    (void)state;
    msg_response r;
    decode_with_delta("{\"input_tokens\":null,\"cache_creation_input_tokens\":null,"
                      "\"cache_read_input_tokens\":null,\"output_tokens\":57,"
                      "\"output_tokens_details\":null,\"server_tool_use\":null}",
                      &r);
    assert_int_equal(r.usage.input_tokens, 472);
    assert_int_equal(r.usage.cache_creation_tokens, 30);
    assert_int_equal(r.usage.cache_read_tokens, 1200);
    assert_int_equal(r.usage.output_tokens, 57);
    assert_int_equal(r.usage.reasoning_tokens, 0);
    /* raw keeps the counts too, not the nulls over them */
    assert_int_equal(json_integer_value(json_object_get(r.usage.raw, "input_tokens")), 472);
    msg_response_free(&r);
}

static void test_delta_usage_numbers_update(void **state)
{
    (void)state;
    msg_response r;
    /* Cumulative totals in message_delta overwrite (never add), as the SDK does. */
    decode_with_delta("{\"input_tokens\":480,\"cache_creation_input_tokens\":30,"
                      "\"cache_read_input_tokens\":1200,\"output_tokens\":310,"
                      "\"output_tokens_details\":{\"thinking_tokens\":250}}",
                      &r);
    assert_int_equal(r.usage.input_tokens, 480);
    assert_int_equal(r.usage.output_tokens, 310);
    assert_int_equal(r.usage.reasoning_tokens, 250);
    json_t *u = msg_usage_to_json(&r.usage);
    assert_int_equal(json_integer_value(json_object_get(u, "reasoningTokens")), 250);
    json_decref(u);
    msg_response_free(&r);
}

static void test_body_usage_thinking_tokens(void **state)
{
    (void)state;
    const char *body =
        "{\"id\":\"msg_3\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\","
        "\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\","
        "\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":null,"
        "\"cache_read_input_tokens\":null,\"output_tokens\":90,"
        "\"output_tokens_details\":{\"thinking_tokens\":70}}}";
    msg_response r = {0};
    loom_error err;
    assert_int_equal(anthropic_codec.parse_body(body, strlen(body), &r, &err), 0);
    assert_int_equal(r.usage.input_tokens, 10);
    assert_int_equal(r.usage.cache_read_tokens, 0);
    assert_int_equal(r.usage.reasoning_tokens, 70);
    msg_response_free(&r);
}

/* --- thinking -------------------------------------------------------------- */

static void test_thinking_config(void **state)
{
    (void)state;
    msg_request req = base_request();
    req.thinking_budget = 8000;
    req.temperature = 0.5; /* refused with thinking: never sent */
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "think");
    provider_http_call call;
    json_t *body = encode(&req, &call);
    json_t *th = json_object_get(body, "thinking");
    assert_string_equal(json_string_value(json_object_get(th, "type")), "enabled");
    assert_int_equal(json_integer_value(json_object_get(th, "budget_tokens")), 8000);
    assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 16000);
    assert_null(json_object_get(body, "temperature"));
    assert_true(has_header(&call, "anthropic-beta: interleaved-thinking-2025-05-14"));
    json_decref(body);
    provider_http_call_free(&call);

    /* A budget at or over max_tokens is lowered under it. */
    req.thinking_budget = 31999;
    req.max_tokens = 8192;
    body = encode(&req, &call);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(body, "thinking"),
                                                        "budget_tokens")),
                     8191);
    json_decref(body);
    provider_http_call_free(&call);

    /* No room for the API's 1024 floor: no thinking, and temperature is back. */
    req.max_tokens = 1024;
    body = encode(&req, &call);
    assert_null(json_object_get(body, "thinking"));
    assert_non_null(json_object_get(body, "temperature"));
    assert_false(has_header(&call, "anthropic-beta: interleaved-thinking-2025-05-14"));
    json_decref(body);
    provider_http_call_free(&call);

    /* A Claude family without thinking (the model table) is sent none; a
     * name the table does not know is sent what was asked. */
    req.max_tokens = 8192;
    req.thinking_budget = 2048;
    free(req.model);
    req.model = strdup("claude-3-5-sonnet-20241022");
    body = encode(&req, &call);
    assert_null(json_object_get(body, "thinking"));
    json_decref(body);
    provider_http_call_free(&call);
    free(req.model);
    req.model = strdup("my-gateway-model");
    body = encode(&req, &call);
    assert_non_null(json_object_get(body, "thinking"));
    json_decref(body);
    provider_http_call_free(&call);

    /* Off: no header, no config. */
    req.thinking_budget = 0;
    req.max_tokens = 16000;
    body = encode(&req, &call);
    assert_null(json_object_get(body, "thinking"));
    assert_false(has_header(&call, "anthropic-beta: interleaved-thinking-2025-05-14"));
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

static void test_thinking_signature_before_tool_use(void **state)
{
    (void)state;
    msg_request req = base_request();
    req.thinking_budget = 2048;
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "list");
    msg_message *a = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
    msg_message_add_thinking(a, "I should list.", "EqQBCkgIARABGAIiQL");
    msg_message_add_tool_use(a, "toolu_1", "Bash", json_pack("{s:s}", "command", "ls"));
    msg_message_add_tool_result(msg_request_add_message(&req, MSG_ROLE_USER), "toolu_1", "a\n",
                                false);
    provider_http_call call;
    json_t *body = encode(&req, &call);
    json_t *content =
        json_object_get(json_array_get(json_object_get(body, "messages"), 1), "content");
    assert_int_equal(json_array_size(content), 2);
    json_t *t = json_array_get(content, 0);
    assert_string_equal(json_string_value(json_object_get(t, "type")), "thinking");
    assert_string_equal(json_string_value(json_object_get(t, "signature")), "EqQBCkgIARABGAIiQL");
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 1), "type")),
                        "tool_use");
    json_decref(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blank_text_blocks_are_left_out),
        cmocka_unit_test(test_msg_text_blank),
        cmocka_unit_test(test_null_delta_usage_keeps_start_counts),
        cmocka_unit_test(test_delta_usage_numbers_update),
        cmocka_unit_test(test_body_usage_thinking_tokens),
        cmocka_unit_test(test_thinking_config),
        cmocka_unit_test(test_thinking_signature_before_tool_use),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_session_record.c — the record schema: constructors, accessors, the
 * conversion of a model reply into records, and the line layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/uuid.h"
#include "session/record.h"

static void test_conversation_set(void **state)
{
    (void)state;
    const char *conv[] = {"message", "reasoning", "function_call", "function_call_result",
                          "summary"};
    for (size_t i = 0; i < 5; i++)
        assert_true(record_is_conversation(conv[i]));
    /* seed 001 §3.2 customInputItems (minus summary) and session-meta. */
    const char *other[] = {"custom-title", "ai-title", "file-history-snapshot", "topic",
                           "goal-result", "goal-progress", "turn-metrics",
                           "resend-fork-notice", "session-meta", "unknown-future-type",
                           ""};
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        assert_false(record_is_conversation(other[i]));
    assert_false(record_is_conversation(NULL));
}

static void test_constructors(void **state)
{
    (void)state;
    json_t *u = record_user_text("hello");
    assert_string_equal(record_type(u), "message");
    assert_true(uuid_valid(record_id(u)));
    assert_non_null(json_get_str(u, "timestamp", NULL));
    assert_null(json_object_get(u, "parentId"));  /* left to the transcript */
    assert_true(record_is_user_message(u));
    assert_false(record_is_assistant_side(u));
    record_add_image(u, "image/png", "iVBOR");
    json_t *content = json_get_arr(u, "content");
    assert_int_equal(json_array_size(content), 2);
    assert_string_equal(json_get_str(json_array_get(content, 1), "mediaType", ""), "image/png");
    json_decref(u);

    json_t *a = record_assistant_text("Interrupted by user");
    record_set_skip_run(a, true);
    assert_true(record_skip_run(a));
    assert_true(record_is_assistant_side(a));
    json_decref(a);

    json_t *r = record_reasoning(NULL, "sig", "opaque");
    assert_null(json_object_get(r, "text"));
    assert_string_equal(json_get_str(r, "redactedData", ""), "opaque");
    assert_true(record_is_assistant_side(r));
    json_decref(r);

    json_t *c = record_function_call("call_1", "Bash", NULL);
    assert_string_equal(json_get_str(c, "arguments", ""), "{}");
    json_decref(c);

    json_t *res = record_tool_result("call_1", "boom", true);
    assert_string_equal(json_get_str(res, "status", ""), "error");
    assert_true(json_get_bool(res, "isError", false));
    json_decref(res);
    res = record_tool_result("call_1", "fine", false);
    assert_string_equal(json_get_str(res, "status", ""), "completed");
    assert_false(json_get_bool(res, "isError", true));
    json_decref(res);

    json_t *s = record_summary("short", "parent-x");
    assert_true(json_is_null(json_object_get(s, "parentId")));
    assert_null(record_parent_id(s));
    assert_string_equal(record_logical_parent_id(s), "parent-x");
    json_decref(s);

    json_t *n = record_resend_fork_notice("p", "edited");
    assert_string_equal(record_parent_id(n), "p");
    assert_string_equal(json_get_str(n, "editedUserItemId", ""), "edited");
    assert_true(record_skip_run(n));
    json_decref(n);

    json_t *m = record_session_meta("/cwd", NULL, "model-1");
    assert_null(json_object_get(m, "provider"));
    assert_string_equal(json_get_str(m, "model", ""), "model-1");
    assert_non_null(json_get_str(m, "version", NULL));
    json_decref(m);
}

static void test_accessors_tolerate_wrong_types(void **state)
{
    (void)state;
    json_t *bad = json_pack("{s:i,s:[],s:b,s:{}}", "type", 3, "id", "parentId", 1,
                            "providerData");
    assert_null(record_type(bad));
    assert_null(record_id(bad));
    assert_null(record_parent_id(bad));
    assert_false(record_skip_run(bad));
    assert_false(record_is_assistant_side(bad));
    json_decref(bad);
    json_t *arr = json_array();
    assert_null(record_type(arr));
    assert_null(record_provider_data(arr, true));
    json_decref(arr);
    assert_null(record_type(NULL));
}

static void test_from_response_order_and_attribution(void **state)
{
    (void)state;
    msg_response resp = {0};
    resp.message.role = MSG_ROLE_ASSISTANT;
    msg_message_add_thinking(&resp.message, "plan", "sig-a");
    msg_message_add_text(&resp.message, "part 1");
    msg_message_add_text(&resp.message, "part 2");
    msg_message_add_tool_use(&resp.message, "c1", "Read", json_pack("{s:s}", "path", "x"));
    msg_message_add_tool_use(&resp.message, "c2", "Read", NULL);
    msg_message_add_redacted_thinking(&resp.message, "enc");
    resp.stop_reason = LOOM_STOP_TOOL_USE;
    resp.usage.input_tokens = 10;
    resp.usage.output_tokens = 5;
    resp.usage.raw = json_pack("{s:i}", "input_tokens", 10);
    resp.request_id = xstrdup("req-header");
    resp.response_id = xstrdup("msg_1");
    resp.model = xstrdup("m1");

    json_t *recs = record_from_response(&resp, NULL);
    assert_int_equal(json_array_size(recs), 5);
    const char *types[] = {"reasoning", "message", "function_call", "function_call",
                           "reasoning"};
    for (size_t i = 0; i < 5; i++) {
        json_t *r = json_array_get(recs, i);
        assert_string_equal(record_type(r), types[i]);
        json_t *pd = json_get_obj(r, "providerData");
        assert_string_equal(json_get_str(pd, "conversationRequestId", ""), "req-header");
        assert_string_equal(json_get_str(pd, "messageId", ""), "msg_1");
        assert_string_equal(json_get_str(pd, "model", ""), "m1");
        assert_true((json_object_get(pd, "usage") != NULL) == (i == 4));
    }
    json_t *msg = json_array_get(recs, 1);
    assert_string_equal(json_get_str(msg, "role", ""), "assistant");
    assert_int_equal(json_array_size(json_get_arr(msg, "content")), 2);
    json_t *c1 = json_array_get(recs, 2);
    assert_string_equal(json_get_str(c1, "arguments", ""), "{\"path\":\"x\"}");
    assert_string_equal(json_get_str(json_array_get(recs, 3), "arguments", ""), "{}");
    json_t *last = json_array_get(recs, 4);
    assert_null(json_object_get(last, "text"));
    assert_string_equal(json_get_str(last, "redactedData", ""), "enc");
    json_t *pd = json_get_obj(last, "providerData");
    assert_int_equal(json_get_int(json_get_obj(pd, "usage"), "inputTokens", -1), 10);
    assert_int_equal(json_get_int(json_get_obj(pd, "rawUsage"), "input_tokens", -1), 10);
    assert_non_null(json_get_str(pd, "stopReason", NULL));
    json_decref(recs);

    /* An explicit request id wins; an empty reply still records usage. */
    msg_message_free(&resp.message);
    resp.message.role = MSG_ROLE_ASSISTANT;
    recs = record_from_response(&resp, "req-explicit");
    assert_int_equal(json_array_size(recs), 1);
    json_t *only = json_array_get(recs, 0);
    assert_string_equal(json_get_str(json_get_obj(only, "providerData"), "conversationRequestId",
                                     ""),
                        "req-explicit");
    assert_non_null(json_get_obj(json_get_obj(only, "providerData"), "usage"));
    json_decref(recs);
    msg_response_free(&resp);
}

static void test_dump_line_leads_with_common_fields(void **state)
{
    (void)state;
    json_t *r = json_pack("{s:s,s:s,s:s,s:s,s:n,s:s}", "zeta", "z", "sessionId", "S",
                          "timestamp", "T", "type", "message", "parentId", "id", "I");
    char *line = record_dump_line(r);
    assert_string_equal(line, "{\"type\":\"message\",\"id\":\"I\",\"parentId\":null,"
                              "\"timestamp\":\"T\",\"sessionId\":\"S\",\"zeta\":\"z\"}");
    assert_null(strchr(line, '\n'));
    free(line);
    json_decref(r);
    /* Newlines inside values are escaped, so a record is always one line. */
    r = record_user_text("two\nlines");
    line = record_dump_line(r);
    assert_null(strchr(line, '\n'));
    free(line);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conversation_set),
        cmocka_unit_test(test_constructors),
        cmocka_unit_test(test_accessors_tolerate_wrong_types),
        cmocka_unit_test(test_from_response_order_and_attribution),
        cmocka_unit_test(test_dump_line_leads_with_common_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

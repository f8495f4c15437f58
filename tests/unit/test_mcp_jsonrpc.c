/* test_mcp_jsonrpc.c — the JSON-RPC reader and builders of ext/mcp: every
 * kind of message read right, every malformed one refused with an error
 * that names the server and says what was wrong (and where, in a batch),
 * batches split, the size cap held, and the builders' output read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "ext/mcp/jsonrpc.h"

static void parse_ok(const char *text, jsonrpc_batch *b)
{
    loom_error err;
    loom_error_clear(&err);
    int rc = jsonrpc_parse("fs", text, strlen(text), b, &err);
    if (rc != 0)
        fail_msg("%s: %s", text, err.message);
}

/* The text is refused, and the error names the server and holds want. */
static void parse_bad(const char *text, const char *want)
{
    jsonrpc_batch b;
    loom_error err;
    loom_error_clear(&err);
    int rc = jsonrpc_parse("fs", text, strlen(text), &b, &err);
    if (rc == 0)
        fail_msg("accepted: %s", text);
    assert_int_equal(err.code, LOOM_ERR_TOOL_EXECUTION_FAILED);
    assert_non_null(strstr(err.message, "MCP server \"fs\": "));
    if (!strstr(err.message, want))
        fail_msg("for %s: wanted \"%s\" in \"%s\"", text, want, err.message);
    assert_null(b.msgs);
    assert_null(b.doc);
}

static void test_request(void **state)
{
    jsonrpc_batch b;
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", &b);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.msgs[0].kind, JSONRPC_REQUEST);
    assert_string_equal(b.msgs[0].method, "ping");
    long long id = 0;
    assert_true(jsonrpc_id_int(b.msgs[0].id, &id));
    assert_int_equal(id, 7);
    assert_null(b.msgs[0].params);
    jsonrpc_batch_free(&b);

    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\",\"params\":{}}", &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_REQUEST);
    assert_false(jsonrpc_id_int(b.msgs[0].id, &id));
    assert_string_equal(json_string_value(b.msgs[0].id), "s1");
    assert_true(json_is_object(b.msgs[0].params));
    jsonrpc_batch_free(&b);
}

static void test_notification_result_error(void **state)
{
    jsonrpc_batch b;
    parse_ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
             "\"params\":{\"progressToken\":1,\"progress\":2}}",
             &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_NOTIFICATION);
    assert_null(b.msgs[0].id);
    jsonrpc_batch_free(&b);

    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[]}}", &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_RESULT);
    assert_true(json_is_object(b.msgs[0].result));
    jsonrpc_batch_free(&b);

    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601,\"message\":\"no\","
             "\"data\":{\"x\":1}}}",
             &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_ERROR);
    assert_int_equal(b.msgs[0].error_code, -32601);
    assert_string_equal(b.msgs[0].error_message, "no");
    assert_non_null(b.msgs[0].error_data);
    jsonrpc_batch_free(&b);

    /* An error about a message the peer could not read has a null id. */
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
             &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_ERROR);
    assert_true(json_is_null(b.msgs[0].id));
    jsonrpc_batch_free(&b);
}

static void test_batch(void **state)
{
    jsonrpc_batch b;
    parse_ok("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}]",
             &b);
    assert_int_equal(b.n, 2);
    assert_int_equal(b.msgs[0].kind, JSONRPC_RESULT);
    assert_int_equal(b.msgs[1].kind, JSONRPC_NOTIFICATION);
    jsonrpc_batch_free(&b);

    parse_bad("[]", "an empty batch");
    /* One bad member fails the whole batch, and the error says which. */
    parse_bad("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},{\"jsonrpc\":\"1.0\",\"id\":2,"
              "\"result\":{}}]",
              "message 2 of the batch of 2: ");
    parse_bad("[1]", "message 1 of the batch of 1: a message that is an integer");

    loom_str big = {0};
    str_putc(&big, '[');
    for (int i = 0; i <= JSONRPC_MAX_BATCH; i++)
        str_printf(&big, "%s{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", i ? "," : "");
    str_putc(&big, ']');
    parse_bad(big.ptr, "a batch of 1025 messages (at most 1024)");
    str_free(&big);
}

static void test_bad_messages(void **state)
{
    parse_bad("", "an empty message");
    parse_bad("{\"jsonrpc\":\"2.0\",", "not JSON");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}} trailing", "not JSON");
    parse_bad("\"hello\"", "not JSON");
    parse_bad("{\"id\":1,\"result\":{}}", "\"jsonrpc\" is missing");
    parse_bad("{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}", "\"jsonrpc\": \"1.0\"");
    parse_bad("{\"jsonrpc\":2,\"id\":1,\"result\":{}}", "\"jsonrpc\" is an integer");
    parse_bad("{\"jsonrpc\":\"2.0\",\"method\":5}", "\"method\" is an integer");
    parse_bad("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1.5}",
              "request \"x\" has an id of type number");
    parse_bad("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":null}", "request \"x\" has id null");
    parse_bad("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":3}",
              "\"x\": params is an integer");
    parse_bad("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1,\"result\":{}}",
              "\"x\" has a method and also a result");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":1}", "with id 1 has no method, result or error");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}",
              "id 1 has both a result and an error");
    parse_bad("{\"jsonrpc\":\"2.0\",\"result\":{}}", "a response without an id");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", "a result with id null");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":[1],\"error\":{\"code\":1,\"message\":\"m\"}}",
              "an error with an id of type array");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":\"boom\"}",
              "id 2: \"error\" is a string, not an object");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"message\":\"m\"}}",
              "id 2: its code is missing");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1.5,\"message\":\"m\"}}",
              "its code is a number, not an integer");
    parse_bad("{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"error\":{\"code\":1}}",
              "id \"q\": its message is missing");
}

static void test_size_cap(void **state)
{
    size_t n = JSONRPC_MAX_MESSAGE + 1;
    char *text = malloc(n + 1);
    memset(text, ' ', n);
    text[n] = '\0';
    jsonrpc_batch b;
    loom_error err;
    loom_error_clear(&err);
    assert_int_not_equal(jsonrpc_parse("big", text, n, &b, &err), 0);
    assert_non_null(strstr(err.message, "MCP server \"big\": a message of 16777217 bytes is over"));
    free(text);
}

static void test_builders_round_trip(void **state)
{
    json_t *params = json_pack("{s:s,s:{s:i}}", "name", "echo\nline", "_meta", "progressToken", 3);
    char *req = jsonrpc_request(12, "tools/call", params);
    /* One line: a string's newline is escaped. */
    assert_null(strchr(req, '\n'));
    jsonrpc_batch b;
    parse_ok(req, &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_REQUEST);
    assert_string_equal(b.msgs[0].method, "tools/call");
    assert_true(json_equal(b.msgs[0].params, params));
    jsonrpc_batch_free(&b);
    free(req);

    char *note = jsonrpc_notification("notifications/initialized", NULL);
    assert_string_equal(note, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    free(note);

    json_t *id = json_string("s1");
    char *res = jsonrpc_result(id, params);
    parse_ok(res, &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_RESULT);
    assert_true(json_equal(b.msgs[0].id, id));
    jsonrpc_batch_free(&b);
    free(res);
    res = jsonrpc_result(id, NULL);
    assert_string_equal(res, "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{}}");
    free(res);

    char *e = jsonrpc_error(id, JSONRPC_METHOD_NOT_FOUND, "method not found", NULL);
    parse_ok(e, &b);
    assert_int_equal(b.msgs[0].kind, JSONRPC_ERROR);
    assert_int_equal(b.msgs[0].error_code, -32601);
    jsonrpc_batch_free(&b);
    free(e);
    e = jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, "bad", params);
    parse_ok(e, &b);
    assert_true(json_is_null(b.msgs[0].id));
    assert_true(json_equal(b.msgs[0].error_data, params));
    jsonrpc_batch_free(&b);
    free(e);
    json_decref(id);
    json_decref(params);
}

/* breaker: a server that cuts a string inside a character (invalid UTF-8)
 * still gets its answer through, the bad bytes as U+FFFD; dropping it
 * would leave the caller waiting for its timeout (10 minutes). */
static void test_invalid_utf8_is_replaced(void **state)
{
    (void)state;
    jsonrpc_batch b;
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"bad \xff\xfe bytes \xc3\"}}", &b);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.msgs[0].kind, JSONRPC_RESULT);
    assert_int_equal(json_integer_value(b.msgs[0].id), 7);
    const char *t = json_string_value(json_object_get(b.msgs[0].result, "text"));
    assert_string_equal(t, "bad \xef\xbf\xbd\xef\xbf\xbd bytes \xef\xbf\xbd");
    jsonrpc_batch_free(&b);
    /* Text that is not JSON stays refused, valid UTF-8 or not. */
    parse_bad("not json \xff", "not JSON");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_notification_result_error),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_bad_messages),
        cmocka_unit_test(test_size_cap),
        cmocka_unit_test(test_builders_round_trip),
        cmocka_unit_test(test_invalid_utf8_is_replaced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

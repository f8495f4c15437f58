/* test_acp_client_reply.c — the checks of the client's answers to loom
 * acp's fs and terminal requests (src/surfaces/acp/acp_client_reply.c):
 * each well-formed answer is taken as it is, each malformed one is refused
 * with a message naming the method and the field; JSON-RPC errors read as
 * one line; and the edit diff and terminal hooks of the mapper
 * (acp_map.client_text, client_terminal) win over the disk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/acp/acp.h"

static json_t *j(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    assert_non_null(v);
    return v;
}

static void test_read_text(void **state)
{
    (void)state;
    char why[300];
    const char *text;
    size_t len;
    json_t *ok = j("{\"content\": \"a\\u0000b\\n\"}");
    assert_int_equal(acp_reply_read_text(ok, &text, &len, why, sizeof why), 0);
    assert_int_equal(len, 4); /* a NUL inside is kept, the length is the string's */
    assert_memory_equal(text, "a\0b\n", 4);
    json_decref(ok);
    const char *bad[] = {"{\"content\": 42}", "{}", "[]", "null", "\"text\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *v = j(bad[i]);
        assert_int_equal(acp_reply_read_text(v, &text, &len, why, sizeof why), -1);
        assert_non_null(strstr(why, "fs/read_text_file"));
        assert_non_null(strstr(why, "malformed"));
        json_decref(v);
    }
}

static void test_terminal_id(void **state)
{
    (void)state;
    char why[300];
    const char *id;
    json_t *ok = j("{\"terminalId\": \"term-9\"}");
    assert_int_equal(acp_reply_terminal_id(ok, &id, why, sizeof why), 0);
    assert_string_equal(id, "term-9");
    json_decref(ok);
    char longer[400] = "{\"terminalId\": \"";
    memset(longer + strlen(longer), 'x', 300);
    strcat(longer, "\"}");
    const char *bad[] = {"{\"terminalId\": 7}", "{\"terminalId\": \"\"}", "{}", "null", longer};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *v = j(bad[i]);
        assert_int_equal(acp_reply_terminal_id(v, &id, why, sizeof why), -1);
        assert_non_null(strstr(why, "terminal/create"));
        assert_non_null(strstr(why, "terminalId"));
        json_decref(v);
    }
}

static void test_exit_status(void **state)
{
    (void)state;
    char why[300];
    acp_exit ex;
    json_t *v = j("{\"exitCode\": 3, \"signal\": null}");
    assert_int_equal(acp_reply_exit_status("terminal/wait_for_exit", v, &ex, why, sizeof why), 0);
    assert_true(ex.known);
    assert_int_equal(ex.exit_code, 3);
    assert_string_equal(ex.signal, "");
    json_decref(v);
    v = j("{\"exitCode\": null, \"signal\": \"SIGKILL\"}");
    assert_int_equal(acp_reply_exit_status("terminal/wait_for_exit", v, &ex, why, sizeof why), 0);
    assert_int_equal(ex.exit_code, -1);
    assert_string_equal(ex.signal, "SIGKILL");
    json_decref(v);
    v = j("{}"); /* neither said: it ended, nothing more is known */
    assert_int_equal(acp_reply_exit_status("terminal/wait_for_exit", v, &ex, why, sizeof why), 0);
    assert_true(ex.known);
    assert_int_equal(ex.exit_code, -1);
    json_decref(v);
    const char *bad[] = {"{\"exitCode\": \"zero\"}", "{\"exitCode\": -1}", "{\"exitCode\": 1.5}",
                         "{\"exitCode\": 99999999999}", "{\"signal\": 9}",
                         "{\"signal\": \"SIG KILL; rm -rf\"}", "{\"signal\": \"\"}", "[]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = j(bad[i]);
        assert_int_equal(acp_reply_exit_status("terminal/wait_for_exit", v, &ex, why, sizeof why),
                         -1);
        assert_non_null(strstr(why, "terminal/wait_for_exit"));
        json_decref(v);
    }
}

static void test_terminal_output(void **state)
{
    (void)state;
    char why[300];
    acp_term_output out;
    json_t *v = j("{\"output\": \"hi\\n\", \"truncated\": true, \"exitStatus\": {\"exitCode\": 0}}");
    assert_int_equal(acp_reply_terminal_output(v, &out, why, sizeof why), 0);
    assert_string_equal(out.output, "hi\n");
    assert_int_equal(out.output_len, 3);
    assert_true(out.truncated);
    assert_true(out.exit.known);
    assert_int_equal(out.exit.exit_code, 0);
    json_decref(v);
    v = j("{\"output\": \"\", \"exitStatus\": null}"); /* still running */
    assert_int_equal(acp_reply_terminal_output(v, &out, why, sizeof why), 0);
    assert_false(out.exit.known);
    json_decref(v);
    const char *bad[] = {"{\"output\": 1}", "{\"truncated\": false}",
                         "{\"output\": \"x\", \"truncated\": \"no\"}",
                         "{\"output\": \"x\", \"exitStatus\": {\"exitCode\": \"1\"}}",
                         "{\"output\": \"x\", \"exitStatus\": 5}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = j(bad[i]);
        assert_int_equal(acp_reply_terminal_output(v, &out, why, sizeof why), -1);
        assert_non_null(strstr(why, "terminal/output"));
        json_decref(v);
    }
}

static void test_empty_and_errors(void **state)
{
    (void)state;
    char why[300];
    json_t *obj = j("{}"), *nul = j("null"), *num = j("3");
    assert_int_equal(acp_reply_empty("fs/write_text_file", obj, why, sizeof why), 0);
    assert_int_equal(acp_reply_empty("fs/write_text_file", nul, why, sizeof why), 0);
    assert_int_equal(acp_reply_empty("fs/write_text_file", num, why, sizeof why), -1);
    assert_non_null(strstr(why, "fs/write_text_file"));
    json_decref(obj);
    json_decref(nul);
    json_decref(num);
    json_t *e = j("{\"code\": -32002, \"message\": \"Resource not found: /a\"}");
    acp_reply_error_text("fs/read_text_file", e, why, sizeof why);
    assert_string_equal(why, "the client answered fs/read_text_file with error -32002: Resource "
                             "not found: /a");
    json_decref(e);
    e = j("\"nonsense\"");
    acp_reply_error_text("terminal/kill", e, why, sizeof why);
    assert_string_equal(why, "the client answered terminal/kill with a malformed error");
    json_decref(e);
}

/* ---- the mapper's hooks ------------------------------------------------------------ */

static char *buffer_text(void *ctx, const char *path, bool *known)
{
    (void)ctx;
    *known = strcmp(path, "/w/a.txt") == 0;
    return *known ? strdup("buffer text\n") : NULL;
}

static char *terminal_of(void *ctx, const char *call_id)
{
    (void)ctx;
    return strcmp(call_id, "b1") == 0 ? strdup("term-1") : NULL;
}

static json_t *event(const char *type, const char *payload)
{
    return json_pack("{s:s, s:o}", "type", type, "payload", json_loads(payload, 0, NULL));
}

static void test_map_hooks(void **state)
{
    (void)state;
    acp_map m;
    acp_map_init(&m, "/w", 0);
    m.client_text = buffer_text;
    m.client_terminal = terminal_of;
    json_t *out = json_array();
    json_t *e = event("tool.started", "{\"call_id\": \"w1\", \"tool\": \"Write\", \"input\": "
                                      "{\"file_path\": \"a.txt\", \"content\": \"new\\n\"}}");
    acp_map_event(&m, e, out);
    json_decref(e);
    /* The proposed diff's old text is the client's buffer (no such file on disk). */
    json_t *diff = json_array_get(json_object_get(json_array_get(out, 0), "content"), 0);
    assert_string_equal(json_string_value(json_object_get(diff, "oldText")), "buffer text\n");
    json_array_clear(out);
    e = event("tool.started", "{\"call_id\": \"b1\", \"tool\": \"Bash\", \"input\": "
                              "{\"command\": \"ls\"}}");
    acp_map_event(&m, e, out);
    json_decref(e);
    json_array_clear(out);
    e = event("tool.finished", "{\"call_id\": \"b1\", \"tool\": \"Bash\", \"is_error\": false, "
                               "\"output\": \"a.txt\"}");
    acp_map_event(&m, e, out);
    json_decref(e);
    json_t *content = json_object_get(json_array_get(out, 0), "content");
    assert_int_equal(json_array_size(content), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "type")),
                        "terminal");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(content, 0), "terminalId")), "term-1");
    json_decref(out);
    acp_map_clear(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_text),       cmocka_unit_test(test_terminal_id),
        cmocka_unit_test(test_exit_status),     cmocka_unit_test(test_terminal_output),
        cmocka_unit_test(test_empty_and_errors), cmocka_unit_test(test_map_hooks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

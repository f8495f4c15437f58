/* test_base_json.c — json_parse's acceptance rules and error positions, and
 * the getters' refusal to trust a member's type. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"

static json_t *parse(const char *s, loom_error *err)
{
    return json_parse(s, strlen(s), "test input", err);
}

static void test_parse_ok(void **state)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *v = parse("{\"a\": 1, \"b\": [true, null]}", &err);
    assert_non_null(v);
    assert_true(json_is_object(v));
    json_decref(v);
    /* Bare scalars are values too (SSE data may be one). */
    const char *scalars[] = {"42", "-1.5", "\"str\"", "null", "true", "  7 \n"};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        v = parse(scalars[i], &err);
        assert_non_null(v);
        json_decref(v);
    }
    /* len bounds the input: bytes past it are not looked at. */
    const char buf[] = "[1,2]garbage";
    v = json_parse(buf, 5, "slice", &err);
    assert_non_null(v);
    assert_int_equal(json_array_size(v), 2);
    json_decref(v);
}

static void test_parse_error_position(void **state)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *v = json_parse("{\"a\":}", 6, "SSE data", &err);
    assert_null(v);
    assert_int_not_equal(err.code, LOOM_OK);
    assert_non_null(strstr(err.message, "invalid JSON in SSE data at line 1, column 6: "));
    /* jansson's own explanation follows the position. */
    assert_non_null(strstr(err.message, "unexpected token"));

    loom_error_clear(&err);
    v = parse("[1,\n2,,]", &err);
    assert_null(v);
    assert_non_null(strstr(err.message, "invalid JSON in test input at line 2, column 3: "));

    /* The returned value is -code style through err, and NULL err is fine. */
    assert_null(parse("{", NULL));
}

static void test_trailing_data_rejected(void **state)
{
    const char *bad[] = {"{} {}", "1 2", "{\"a\":1}x", "[]]", "\"s\"\"t\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        loom_error err;
        loom_error_clear(&err);
        json_t *v = parse(bad[i], &err);
        assert_null(v);
        assert_non_null(strstr(err.message, "invalid JSON in test input at line 1, column "));
    }
}

static void test_empty_and_binary(void **state)
{
    loom_error err;
    loom_error_clear(&err);
    assert_null(json_parse("", 0, "empty body", &err));
    assert_non_null(strstr(err.message, "invalid JSON in empty body"));
    assert_null(json_parse(NULL, 0, "nothing", &err));
    assert_null(json_parse("{\"a\0\":1}", 8, "with NUL", &err));
    assert_null(json_parse("   ", 3, "blank", &err));
}

static void test_getters(void **state)
{
    json_t *o = parse("{\"s\":\"text\",\"i\":7,\"r\":2.5,\"t\":true,\"f\":false,"
                      "\"n\":null,\"o\":{\"k\":1},\"a\":[1]}",
                      NULL);
    assert_non_null(o);
    assert_string_equal(json_get_str(o, "s", "fb"), "text");
    assert_int_equal(json_get_int(o, "i", -1), 7);
    assert_true(json_get_num(o, "r", 0) == 2.5);
    assert_true(json_get_num(o, "i", 0) == 7.0); /* an integer is a number */
    assert_true(json_get_bool(o, "t", false));
    assert_false(json_get_bool(o, "f", true));
    assert_non_null(json_get_obj(o, "o"));
    assert_non_null(json_get_arr(o, "a"));

    /* Wrong types and missing keys give the fallback, never a crash. */
    assert_string_equal(json_get_str(o, "i", "fb"), "fb");
    assert_string_equal(json_get_str(o, "n", "fb"), "fb");
    assert_null(json_get_str(o, "missing", NULL));
    assert_int_equal(json_get_int(o, "s", -1), -1);
    assert_int_equal(json_get_int(o, "r", -1), -1); /* no silent truncation */
    assert_true(json_get_num(o, "s", 9.5) == 9.5);
    assert_true(json_get_bool(o, "i", true));
    assert_false(json_get_bool(o, "n", false));
    assert_null(json_get_obj(o, "a"));
    assert_null(json_get_arr(o, "o"));
    assert_null(json_get_obj(o, "missing"));

    /* Not an object at all, or NULL. */
    json_t *arr = json_get_arr(o, "a");
    assert_string_equal(json_get_str(arr, "s", "fb"), "fb");
    assert_int_equal(json_get_int(NULL, "i", 3), 3);
    assert_null(json_get_obj(NULL, "o"));
    assert_true(json_get_bool(o, NULL, true));
    json_decref(o);
}

static void test_dump_and_set(void **state)
{
    json_t *o = json_object();
    json_set_str(o, "z", "last letter");
    json_set_str(o, "a", "first letter");
    json_set_str(o, "skip", NULL);
    json_object_set_new(o, "n", json_integer(1));
    char *s = json_dump_compact(o);
    assert_string_equal(s, "{\"z\":\"last letter\",\"a\":\"first letter\",\"n\":1}");
    free(s);

    /* Invalid UTF-8 from a tool must not lose the field. */
    json_set_str(o, "bad", "ok\xff\xc3(end");
    assert_string_equal(json_get_str(o, "bad", NULL), "ok\xEF\xBF\xBD\xEF\xBF\xBD(end");
    json_set_str(o, "utf8", "caf\xc3\xa9");
    assert_string_equal(json_get_str(o, "utf8", NULL), "caf\xc3\xa9");
    json_decref(o);

    json_t *scalar = json_integer(5);
    s = json_dump_compact(scalar);
    assert_string_equal(s, "5");
    free(s);
    json_decref(scalar);
    assert_null(json_dump_compact(NULL));
}


/* json_dump_compact is Loom's own serializer: byte-identical to jansson's
 * compact form (the oracle) on awkward values, and it reads back equal. */
static void test_dump_compact_matches_jansson(void **state)
{
    (void)state;
    const char *docs[] = {
        "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
        "[\"quote \\\" backslash \\\\ slash / nl \\n tab \\t cr \\r bs \\b ff \\f\"]",
        "[\"\\u0000\\u0001\\u001f ctrl\",\"ünïcødé ✓ 𝄞\",\"\\u007f del\"]",
        "[0,-1,9223372036854775807,-9223372036854775808,1.5,-0.25,1e+100,3.0,0.1,1e-07,-2.5e-300]",
        "{\"\\n key with \\\"escapes\\\"\":{},\"empty\":[],\"s\":\"\"}",
        "\"a bare string\"", "42", "null",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        json_error_t e;
        json_t *v = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
        assert_non_null(v);
        char *ours = json_dump_compact(v);
        char *theirs = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        assert_non_null(ours);
        assert_string_equal(ours, theirs);
        json_t *back = json_loads(ours, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
        assert_true(json_equal(v, back));
        json_decref(back);
        free(ours);
        free(theirs);
        json_decref(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_compact_matches_jansson),
        cmocka_unit_test(test_parse_ok),         cmocka_unit_test(test_parse_error_position),
        cmocka_unit_test(test_trailing_data_rejected), cmocka_unit_test(test_empty_and_binary),
        cmocka_unit_test(test_getters),          cmocka_unit_test(test_dump_and_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

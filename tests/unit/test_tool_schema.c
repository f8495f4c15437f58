/* test_tool_schema.c — schema.c: every enforced keyword, the exact wording
 * of the messages a model reads (paths included), several problems in one
 * call, and schemas and values built to hurt (deep nesting, anyOf
 * blow-ups, malformed keywords). */
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
#include "tools/schema.h"

/* Validates value_text against schema_text (which must be accepted by
 * schema_parse). Returns NULL when valid, else the message (caller frees). */
static char *why_of(const char *schema_text, const char *value_text)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *schema = schema_parse(schema_text, &err);
    if (!schema)
        fail_msg("schema rejected: %s", err.message);
    json_error_t jerr;
    json_t *value = json_loads(value_text, JSON_DECODE_ANY, &jerr);
    if (!value)
        fail_msg("bad test value %s: %s", value_text, jerr.text);
    loom_str why = LOOM_STR_INIT;
    int rc = schema_validate(schema, value, &why);
    json_decref(schema);
    json_decref(value);
    if (rc == 0) {
        assert_int_equal(why.len, 0);
        str_free(&why);
        return NULL;
    }
    assert_int_equal(rc, -1);
    assert_true(why.len > 0);
    return str_steal(&why);
}

#define assert_valid(schema, value)                                                            \
    do {                                                                                       \
        char *w_ = why_of(schema, value);                                                      \
        if (w_)                                                                                \
            fail_msg("expected valid, got: %s", w_);                                           \
    } while (0)

#define assert_why(schema, value, expected)                                                    \
    do {                                                                                       \
        char *w_ = why_of(schema, value);                                                      \
        assert_non_null(w_);                                                                   \
        assert_string_equal(w_, expected);                                                     \
        free(w_);                                                                              \
    } while (0)

static const char grep_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\"},"
    "\"timeout\":{\"type\":\"integer\"},"
    "\"output_mode\":{\"type\":\"string\",\"enum\":[\"content\",\"files_with_matches\",\"count\"]},"
    "\"file_path\":{\"type\":\"string\"}},"
    "\"required\":[\"file_path\"],\"additionalProperties\":false}";

static void test_messages_from_the_brief(void **state)
{
    (void)state;
    assert_why(grep_schema, "{}", "The required parameter \"file_path\" is missing");
    assert_why(grep_schema, "{\"file_path\":\"a\",\"timeout\":\"10\"}",
               "\"timeout\" must be an integer, got string \"10\"");
    assert_why(grep_schema, "{\"file_path\":\"a\",\"output_mode\":\"lines\"}",
               "\"output_mode\" must be one of: \"content\", \"files_with_matches\", \"count\" "
               "(got string \"lines\")");
    assert_why("{\"type\":\"object\",\"properties\":{\"a\":{},\"b\":{}},"
               "\"additionalProperties\":false}",
               "{\"a\":1,\"foo\":2}", "unexpected parameter \"foo\" (allowed: a, b)");
    assert_valid(grep_schema, "{\"file_path\":\"a\",\"timeout\":10,\"output_mode\":\"count\"}");
}

static void test_types(void **state)
{
    (void)state;
    assert_valid("{\"type\":\"string\"}", "\"x\"");
    assert_why("{\"type\":\"string\"}", "5", "The input must be a string, got number 5");
    assert_valid("{\"type\":\"number\"}", "5");
    assert_valid("{\"type\":\"number\"}", "2.5");
    assert_why("{\"type\":\"number\"}", "\"5\"", "The input must be a number, got string \"5\"");
    assert_valid("{\"type\":\"integer\"}", "7");
    /* JSON Schema counts 10.0 as an integer: the value, not the spelling. */
    assert_valid("{\"type\":\"integer\"}", "10.0");
    assert_why("{\"type\":\"integer\"}", "10.5", "The input must be an integer, got number 10.5");
    assert_valid("{\"type\":\"boolean\"}", "false");
    assert_why("{\"type\":\"boolean\"}", "\"true\"",
               "The input must be a boolean, got string \"true\"");
    assert_valid("{\"type\":\"object\"}", "{}");
    assert_why("{\"type\":\"object\"}", "[1]", "The input must be an object, got an array");
    assert_valid("{\"type\":\"array\"}", "[]");
    assert_why("{\"type\":\"array\"}", "{}", "The input must be an array, got an object");
    assert_valid("{\"type\":\"null\"}", "null");
    assert_why("{\"type\":\"null\"}", "true", "The input must be null, got boolean true");
    assert_valid("{\"type\":[\"string\",\"null\"]}", "null");
    assert_why("{\"type\":\"object\",\"properties\":{\"x\":{\"type\":[\"string\",\"null\"]}}}",
               "{\"x\":5}", "\"x\" must be a string or null, got number 5");
    assert_why("{\"type\":[\"string\",\"integer\",\"boolean\"]}", "null",
               "The input must be a string, an integer or a boolean, got null");
    /* A wrong type says so alone: its other keywords would only be noise. */
    assert_why("{\"type\":\"string\",\"minLength\":3,\"enum\":[\"abc\"]}", "1",
               "The input must be a string, got number 1");
}

static void test_enum_const(void **state)
{
    (void)state;
    assert_valid("{\"enum\":[1,\"a\",null]}", "null");
    assert_valid("{\"enum\":[1,\"a\",null]}", "1.0"); /* 1 == 1.0 */
    assert_why("{\"enum\":[1,\"a\",null]}", "2", "The input must be one of: 1, \"a\", null (got number 2)");
    assert_valid("{\"const\":{\"k\":[1,2]}}", "{\"k\":[1,2]}");
    assert_why("{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"file\"}}}",
               "{\"kind\":\"dir\"}", "\"kind\" must be \"file\" (got string \"dir\")");
}

static void test_numbers(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"object\",\"properties\":{\"limit\":{\"type\":\"integer\","
                    "\"minimum\":1,\"maximum\":100}}}";
    assert_valid(s, "{\"limit\":1}");
    assert_valid(s, "{\"limit\":100}");
    assert_why(s, "{\"limit\":0}", "\"limit\" must be >= 1, got 0");
    assert_why(s, "{\"limit\":101}", "\"limit\" must be <= 100, got 101");
    assert_why("{\"exclusiveMinimum\":0}", "0", "The input must be > 0, got 0");
    assert_valid("{\"exclusiveMinimum\":0}", "0.001");
    assert_why("{\"exclusiveMaximum\":1.5}", "1.5", "The input must be < 1.5, got 1.5");
    /* Draft 4's boolean form. */
    assert_why("{\"minimum\":0,\"exclusiveMinimum\":true}", "0", "The input must be > 0, got 0");
    assert_valid("{\"minimum\":0,\"exclusiveMinimum\":false}", "0");
    /* Keywords for numbers do not apply to other types. */
    assert_valid("{\"minimum\":5}", "\"abc\"");
}

static void test_strings(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"string\","
                    "\"minLength\":1,\"maxLength\":5}}}";
    assert_why(s, "{\"content\":\"\"}", "\"content\" must not be empty");
    assert_valid(s, "{\"content\":\"h\\u00e9llo\"}"); /* 5 characters, 6 bytes */
    assert_why(s, "{\"content\":\"h\\u00e9llo!\"}",
               "\"content\" must be at most 5 characters long, got 6");
    assert_why("{\"minLength\":3}", "\"ab\"",
               "The input must be at least 3 characters long, got 2");
    assert_why("{\"maxLength\":1}", "\"ab\"", "The input must be at most 1 character long, got 2");
}

static void test_arrays(void **state)
{
    (void)state;
    const char *s = "{\"type\":\"array\",\"minItems\":1,\"maxItems\":2,\"items\":{\"type\":\"integer\"}}";
    assert_valid(s, "[1,2]");
    assert_why(s, "[]", "The input must have at least 1 item, got 0");
    assert_why(s, "[1,2,3]", "The input must have at most 2 items, got 3");
    assert_why(s, "[1,\"x\"]", "\"[1]\" must be an integer, got string \"x\"");
    /* Tuple form: one schema per position. */
    assert_why("{\"items\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "[\"a\",\"b\",3]",
               "\"[1]\" must be an integer, got string \"b\"");
}

static const char todo_schema[] =
    "{\"type\":\"object\",\"properties\":{\"todos\":{\"type\":\"array\",\"items\":{"
    "\"type\":\"object\",\"properties\":{"
    "\"content\":{\"type\":\"string\",\"minLength\":1},"
    "\"status\":{\"type\":\"string\",\"enum\":[\"pending\",\"in_progress\",\"completed\"]},"
    "\"activeForm\":{\"type\":\"string\"}},"
    "\"required\":[\"content\",\"status\"],\"additionalProperties\":false}}},"
    "\"required\":[\"todos\"],\"additionalProperties\":false}";

static void test_nested_paths(void **state)
{
    (void)state;
    assert_why(todo_schema,
               "{\"todos\":[{\"content\":\"a\",\"status\":\"pending\"},"
               "{\"content\":\"b\",\"status\":\"done\"}]}",
               "\"todos[1].status\" must be one of: \"pending\", \"in_progress\", \"completed\" "
               "(got string \"done\")");
    assert_why(todo_schema, "{\"todos\":[{\"status\":\"pending\"}]}",
               "The required parameter \"todos[0].content\" is missing");
    assert_why(todo_schema, "{\"todos\":[{\"content\":\"a\",\"status\":\"pending\",\"id\":1}]}",
               "unexpected parameter \"todos[0].id\" (allowed: content, status, activeForm)");
    /* Keys that are not identifiers are bracketed. */
    assert_why("{\"type\":\"object\",\"properties\":{\"headers\":{\"type\":\"object\","
               "\"additionalProperties\":{\"type\":\"string\"}}}}",
               "{\"headers\":{\"x y\":1}}", "\"headers['x y']\" must be a string, got number 1");
    assert_why("{\"type\":\"object\",\"additionalProperties\":false}", "{\"a\":1}",
               "unexpected parameter \"a\" (no parameters are allowed here)");
}

static void test_several_problems(void **state)
{
    (void)state;
    /* Everything wrong at once: all of it is reported, in a stable order
     * (required first, then members in the order the model wrote them). */
    assert_why(grep_schema, "{\"timeout\":\"1\",\"output_mode\":7,\"zz\":true}",
               "The required parameter \"file_path\" is missing\n"
               "\"timeout\" must be an integer, got string \"1\"\n"
               "\"output_mode\" must be a string, got number 7\n"
               "unexpected parameter \"zz\" (allowed: pattern, timeout, output_mode, file_path)");
    /* More than SCHEMA_MAX_ERRORS: the rest are counted. */
    char *w = why_of("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", "[1,2,3,4,5,6,7]");
    assert_non_null(w);
    assert_string_equal(w, "\"[0]\" must be a string, got number 1\n"
                           "\"[1]\" must be a string, got number 2\n"
                           "\"[2]\" must be a string, got number 3\n"
                           "\"[3]\" must be a string, got number 4\n"
                           "\"[4]\" must be a string, got number 5\n"
                           "(and 2 more problems)");
    free(w);
}

static void test_combinators(void **state)
{
    (void)state;
    const char *any = "{\"type\":\"object\",\"properties\":{\"v\":{\"anyOf\":["
                      "{\"type\":\"string\"},{\"type\":\"integer\",\"minimum\":0}]}}}";
    assert_valid(any, "{\"v\":\"x\"}");
    assert_valid(any, "{\"v\":3}");
    assert_why(any, "{\"v\":-1}",
               "\"v\" matches none of the allowed forms (closest: \"v\" must be >= 0, got -1)");
    const char *one = "{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"number\"}]}";
    assert_valid(one, "1.5");
    assert_why(one, "2",
               "The input matches more than one of the allowed forms (1 and 2); it must match "
               "exactly one");
    assert_why("{\"allOf\":[{\"minimum\":1},{\"maximum\":3}]}", "5",
               "The input must be <= 3, got 5");
    assert_valid("{\"allOf\":[{\"minimum\":1},{\"maximum\":3}]}", "2");
}

static void test_boolean_schemas(void **state)
{
    (void)state;
    assert_valid("true", "{\"anything\":[1]}");
    assert_why("false", "1", "The input is not allowed");
    assert_why("{\"type\":\"object\",\"properties\":{\"old\":false}}", "{\"old\":1}",
               "\"old\" is not allowed");
    /* Annotations are not checked. */
    assert_valid("{\"type\":\"string\",\"format\":\"uri\",\"pattern\":\"^z\",\"description\":\"d\"}",
                 "\"not a uri\"");
}

static void test_quoting(void **state)
{
    (void)state;
    /* Quotes and newlines are escaped; long strings are cut. */
    assert_why("{\"type\":\"integer\"}", "\"a\\\"b\\nc\"",
               "The input must be an integer, got string \"a\\\"b\\nc\"");
    char value[300];
    memset(value, 'x', sizeof value);
    value[0] = '"';
    value[sizeof value - 2] = '"';
    value[sizeof value - 1] = '\0';
    char *w = why_of("{\"type\":\"integer\"}", value);
    assert_non_null(w);
    assert_non_null(strstr(w, "xxx...\""));
    assert_true(strlen(w) < 120);
    free(w);
    /* A NULL value is missing input, not a crash. */
    json_t *s = schema_parse("{\"type\":\"object\"}", NULL);
    loom_str why = LOOM_STR_INIT;
    assert_int_equal(schema_validate(s, NULL, &why), -1);
    assert_string_equal(why.ptr, "The input is missing");
    str_free(&why);
    /* why may be NULL: only the verdict is wanted. */
    json_t *v = json_integer(1);
    assert_int_equal(schema_validate(s, v, NULL), -1);
    json_decref(v);
    json_decref(s);
}

static void expect_rejected(const char *schema_text, const char *fragment)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *s = schema_parse(schema_text, &err);
    if (s)
        fail_msg("accepted: %s", schema_text);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    if (!strstr(err.message, fragment))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, fragment);
}

static void test_bad_schemas(void **state)
{
    (void)state;
    expect_rejected("{\"type\":", "not valid JSON");
    expect_rejected("[1]", "must be an object or a boolean");
    expect_rejected("{\"type\":5}", "\"type\" must be");
    expect_rejected("{\"type\":\"strin\"}", "unknown type \"strin\"");
    expect_rejected("{\"type\":[]}", "\"type\" must be");
    expect_rejected("{\"type\":[\"string\",3]}", "\"type\" lists");
    expect_rejected("{\"properties\":[]}", "\"properties\" must be an object");
    expect_rejected("{\"properties\":{\"a\":{\"type\":\"x\"}}}", "at properties.a: unknown type");
    expect_rejected("{\"required\":\"a\"}", "\"required\" must be an array");
    expect_rejected("{\"required\":[1]}", "\"required\" must be an array");
    expect_rejected("{\"minLength\":-1}", "\"minLength\" must be a non-negative integer");
    expect_rejected("{\"maxItems\":1.5}", "\"maxItems\" must be a non-negative integer");
    expect_rejected("{\"minimum\":\"0\"}", "\"minimum\" must be a number");
    expect_rejected("{\"enum\":[]}", "\"enum\" must be a non-empty array");
    expect_rejected("{\"anyOf\":[]}", "\"anyOf\" must be a non-empty array");
    expect_rejected("{\"oneOf\":[{\"type\":1}]}", "at oneOf[0]");
    expect_rejected("{\"items\":{\"items\":3}}", "at items.items");
    expect_rejected("{\"additionalProperties\":{\"type\":\"nope\"}}", "at additionalProperties");
    expect_rejected("{\"type\":\"object\",\"type\":\"string\"}", "not valid JSON");
    expect_rejected(NULL, "missing input schema");
    /* schema_check on a schema built in memory (as MCP tools arrive). */
    json_t *s = json_pack("{s:s}", "type", "object");
    assert_int_equal(schema_check(s, NULL), 0);
    json_decref(s);
}

/* {"type":"array","items":{...}} nested n deep, with a string innermost. */
static char *nested_array_schema(int n)
{
    loom_str s = LOOM_STR_INIT;
    for (int i = 0; i < n; i++)
        str_puts(&s, "{\"type\":\"array\",\"items\":");
    str_puts(&s, "{\"type\":\"string\"}");
    for (int i = 0; i < n; i++)
        str_putc(&s, '}');
    return str_steal(&s);
}

static char *nested_array_value(int n, const char *inner)
{
    loom_str s = LOOM_STR_INIT;
    for (int i = 0; i < n; i++)
        str_putc(&s, '[');
    str_puts(&s, inner);
    for (int i = 0; i < n; i++)
        str_putc(&s, ']');
    return str_steal(&s);
}

static void test_hostile_depth(void **state)
{
    (void)state;
    /* A schema deeper than the limit is refused when parsed. */
    char *deep = nested_array_schema(SCHEMA_MAX_DEPTH + 5);
    expect_rejected(deep, "nested more than 64 levels deep");

    /* One that skipped schema_parse is still only followed to the limit. */
    json_t *schema = json_loads(deep, 0, NULL);
    assert_non_null(schema);
    char *vtext = nested_array_value(SCHEMA_MAX_DEPTH + 5, "1");
    json_t *value = json_loads(vtext, 0, NULL);
    assert_non_null(value);
    loom_str why = LOOM_STR_INIT;
    assert_int_equal(schema_validate(schema, value, &why), -1);
    assert_non_null(strstr(why.ptr, "is nested too deeply (more than 64 levels)"));
    str_free(&why);
    json_decref(schema);
    json_decref(value);
    free(vtext);
    free(deep);

    /* Within the limit, the path is exact at depth. */
    char *ok = nested_array_schema(10);
    char *v10 = nested_array_value(10, "1");
    char *w = why_of(ok, v10);
    assert_string_equal(w, "\"[0][0][0][0][0][0][0][0][0][0]\" must be a string, got number 1");
    free(w);
    free(ok);
    free(v10);

    /* A value far deeper than any schema is harmless: the walk follows the
     * schema, not the value. */
    char *huge = nested_array_value(2000, "0");
    assert_valid("{\"type\":\"array\"}", huge);
    free(huge);
}

static void test_anyof_blowup(void **state)
{
    (void)state;
    /* Nested anyOf whose first branch descends and second fails at once:
     * linear work, and the innermost problem must still be found. 30
     * levels of anyOf + items stay within the depth limit. */
    int levels = 30;
    loom_str s = LOOM_STR_INIT;
    for (int i = 0; i < levels; i++)
        str_puts(&s, "{\"anyOf\":[{\"type\":\"array\",\"items\":");
    str_puts(&s, "{\"type\":\"string\"}");
    for (int i = 0; i < levels; i++)
        str_puts(&s, "},{\"type\":\"array\",\"items\":{\"type\":\"string\"}}]}");
    char *text = str_steal(&s);
    json_t *schema = schema_parse(text, NULL);
    assert_non_null(schema);
    char *vtext = nested_array_value(levels, "1");
    json_t *value = json_loads(vtext, 0, NULL);
    loom_str why = LOOM_STR_INIT;
    assert_int_equal(schema_validate(schema, value, &why), -1);
    str_free(&why);

    /* A wide, shallow chain of failing branches. */
    levels = 40;
    loom_str t = LOOM_STR_INIT;
    for (int i = 0; i < levels; i++)
        str_puts(&t, "{\"anyOf\":[");
    str_puts(&t, "{\"type\":\"string\"}");
    for (int i = 0; i < levels; i++)
        str_puts(&t, ",{\"type\":\"string\"}]}");
    char *flat = str_steal(&t);
    json_t *schema2 = schema_parse(flat, NULL);
    assert_non_null(schema2);
    json_t *num = json_integer(1);
    assert_int_equal(schema_validate(schema2, num, &why), -1);
    str_free(&why);

    /* Exponential: each level's both branches are the whole next level. */
    json_t *blow = json_pack("{s:s}", "type", "string");
    for (int i = 0; i < levels; i++)
        blow = json_pack("{s:[o,O]}", "anyOf", blow, blow);
    assert_int_equal(schema_validate(blow, num, &why), -1);
    assert_non_null(strstr(why.ptr, "too complex"));
    str_free(&why);

    json_decref(blow);
    json_decref(num);
    json_decref(schema2);
    json_decref(schema);
    json_decref(value);
    free(flat);
    free(vtext);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages_from_the_brief),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_enum_const),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_nested_paths),
        cmocka_unit_test(test_several_problems),
        cmocka_unit_test(test_combinators),
        cmocka_unit_test(test_boolean_schemas),
        cmocka_unit_test(test_quoting),
        cmocka_unit_test(test_bad_schemas),
        cmocka_unit_test(test_hostile_depth),
        cmocka_unit_test(test_anyof_blowup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

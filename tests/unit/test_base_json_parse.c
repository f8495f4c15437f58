/* test_base_json_parse.c — json_parse_fast on the inputs where a JSON reader goes
 * wrong: every escape, surrogates, NUL, invalid UTF-8, numbers at the edges,
 * nesting at the depth limit, duplicate keys, trailing data, empty input.
 * Each case is also run through jansson's json_loadb, the oracle: both must
 * accept or refuse it, and accepted values must be equal (reals bit for bit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

static bool same(const json_t *a, const json_t *b)
{
    if (json_typeof(a) != json_typeof(b))
        return false;
    switch (json_typeof(a)) {
    case JSON_OBJECT: {
        void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
        for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                         ib = json_object_iter_next((json_t *)b, ib)) {
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0 ||
                !same(json_object_iter_value(ia), json_object_iter_value(ib)))
                return false;
        }
        return !ia && !ib;
    }
    case JSON_ARRAY:
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case JSON_INTEGER:
        return json_integer_value(a) == json_integer_value(b);
    case JSON_REAL: {
        double x = json_real_value(a), y = json_real_value(b);
        return memcmp(&x, &y, sizeof x) == 0;
    }
    default:
        return true;
    }
}

/* Parses len bytes with both readers; they must agree. Returns ours (or NULL
 * with *err filled). */
static json_t *parse_n(const char *s, size_t len, size_t flags, json_error_t *err)
{
    json_error_t scratch, theirs_err;
    if (!err)
        err = &scratch;
    json_t *theirs = json_loadb(s, len, flags, &theirs_err);
    json_t *ours = json_parse_fast(s, len, flags, err);
    if (!theirs != !ours)
        fail_msg("%.*s: jansson %s (%s), json_parse_fast %s (%s)", (int)len, s,
                 theirs ? "accepts" : "refuses", theirs_err.text, ours ? "accepts" : "refuses",
                 err->text);
    if (theirs && !same(theirs, ours))
        fail_msg("%.*s: values differ", (int)len, s);
    if (!ours) {
        assert_true(err->text[0] != '\0');
        assert_true(err->line >= 1);
    }
    json_decref(theirs);
    return ours;
}

static json_t *parse(const char *s, size_t flags, json_error_t *err)
{
    return parse_n(s, strlen(s), flags, err);
}

/* Accepted under DECODE_ANY; returns the value. */
static json_t *ok(const char *s)
{
    json_error_t err;
    json_t *v = parse(s, JSON_DECODE_ANY, &err);
    if (!v)
        fail_msg("%s refused: %s", s, err.text);
    return v;
}

/* Refused under DECODE_ANY, with a message containing want. */
static void bad_n(const char *s, size_t len, const char *want)
{
    json_error_t err;
    json_t *v = parse_n(s, len, JSON_DECODE_ANY, &err);
    if (v)
        fail_msg("%.*s accepted", (int)len, s);
    if (want && !strstr(err.text, want))
        fail_msg("%.*s: error \"%s\" lacks \"%s\"", (int)len, s, err.text, want);
}

static void bad(const char *s, const char *want) { bad_n(s, strlen(s), want); }

static void want_string(const char *json, const char *want, size_t want_len)
{
    json_t *v = ok(json);
    assert_true(json_is_string(v));
    assert_int_equal(json_string_length(v), want_len);
    assert_memory_equal(json_string_value(v), want, want_len);
    json_decref(v);
}

static void test_escapes(void **state)
{
    (void)state;
    want_string("\"\\\"\"", "\"", 1);
    want_string("\"\\\\\"", "\\", 1);
    want_string("\"\\/\"", "/", 1);
    want_string("\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t", 5);
    want_string("\"a\\u0041\\u00e9\\u4E2D\"", "aA\xc3\xa9\xe4\xb8\xad", 7);
    want_string("\"\\u007f\\u0080\\u07FF\\u0800\\uFFFF\"",
                  "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf", 11);
    /* Escapes between runs of plain text, keys with escapes. */
    want_string("\"plain text \\n then more plain text \\t end\"",
                  "plain text \n then more plain text \t end", 39);
    json_t *v = ok("{\"k\\n\\u00e9\":{\"\\\"\":[\"x\\\\y\"]},\"k2\":1}");
    assert_non_null(json_object_get(v, "k\n\xc3\xa9"));
    json_decref(v);

    bad("\"\\x\"", "invalid escape");
    bad("\"\\u12\"", "invalid escape");
    bad("\"\\u12G4\"", "invalid escape");
    bad("\"\\U0041\"", "invalid escape");
    bad("\"\\", "invalid escape");
    bad("\"\\'\"", "invalid escape");
    bad("\"abc", "premature end of input");
}

static void test_surrogates(void **state)
{
    (void)state;
    want_string("\"\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80", 4);
    want_string("\"\\ud800\\udc00\\udbff\\udfff\"", "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 8);
    bad("\"\\ud800\"", "invalid Unicode '\\uD800'");
    bad("\"\\udc00\"", "invalid Unicode '\\uDC00'");
    bad("\"\\udfff x\"", "invalid Unicode");
    bad("\"\\ud800x\"", "invalid Unicode");
    bad("\"\\ud800\\n\"", "invalid Unicode");
    bad("\"\\ud800\\u0041\"", "invalid Unicode '\\uD800\\u0041'");
    bad("\"\\ud800\\ud800\"", "invalid Unicode");
    bad("\"\\ud800\\u12\"", "invalid escape");
    bad("[\"\\uDBFF\"]", NULL);
}

static void test_nul(void **state)
{
    (void)state;
    bad("\"a\\u0000b\"", "\\u0000 is not allowed");
    bad("[\"\\u0000\"]", "\\u0000 is not allowed");
    bad("{\"a\\u0000\":1}", "NUL byte in object key not supported");

    json_error_t err;
    json_t *v = parse("[\"a\\u0000b\"]", JSON_ALLOW_NUL, &err);
    assert_non_null(v);
    assert_int_equal(json_string_length(json_array_get(v, 0)), 3);
    assert_memory_equal(json_string_value(json_array_get(v, 0)), "a\0b", 3);
    json_decref(v);
    /* Never in a key, even with JSON_ALLOW_NUL. */
    assert_null(parse("{\"a\\u0000\":1}", JSON_ALLOW_NUL, &err));

    /* A raw NUL byte is a control character in a string and a bad token
     * elsewhere ... */
    bad_n("[\"a\0b\"]", 7, "control character 0x0");
    bad_n("[\0]", 3, NULL);
    bad_n("[1, \0 2]", 8, NULL);
    bad_n("\"a\"\0", 4, NULL);
    /* ... except right after a number or literal, where jansson skips one. */
    v = parse_n("[1\0,true\0,null\0]", 16, 0, &err);
    assert_non_null(v);
    assert_int_equal(json_array_size(v), 3);
    json_decref(v);
    v = parse_n("1\0", 2, JSON_DECODE_ANY, &err);
    assert_non_null(v);
    json_decref(v);
    bad_n("1\0\0", 3, NULL);
    bad_n("1 \0", 3, NULL);
}

static void test_utf8(void **state)
{
    (void)state;
    want_string("\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"",
                  "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", 19);
    want_string("\"\x7f\"", "\x7f", 1);
    const char *invalid[] = {
        "\"\x80\"",                 /* lone continuation byte */
        "\"\xbf\"",
        "\"\xc0\xaf\"",             /* overlong '/' */
        "\"\xc1\xbf\"",             /* overlong */
        "\"\xe0\x80\xaf\"",         /* overlong, 3 bytes */
        "\"\xe0\x9f\xbf\"",
        "\"\xf0\x80\x80\xaf\"",     /* overlong, 4 bytes */
        "\"\xf0\x8f\xbf\xbf\"",
        "\"\xed\xa0\x80\"",         /* UTF-16 surrogate D800 */
        "\"\xed\xbf\xbf\"",         /* DFFF */
        "\"\xf4\x90\x80\x80\"",     /* past U+10FFFF */
        "\"\xf5\x80\x80\x80\"",
        "\"\xff\"",
        "\"\xfe\"",
        "\"\xc3\"",                 /* truncated */
        "\"\xe4\xb8\"",
        "\"\xf0\x9f\x98\"",
        "\"\xc3(\"",                /* bad continuation */
        "\"\xe4\xb8(\"",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        bad(invalid[i], "unable to decode byte");
    /* Truncated at the very end of the buffer. */
    bad_n("\"\xe4\xb8", 3, NULL);
    /* Outside strings any byte >= 0x80 is refused, valid or not. */
    bad("[\xc3\xa9]", "invalid token");
    bad("[\xff]", "unable to decode byte 0xff");
}

static void test_control_characters(void **state)
{
    (void)state;
    char s[] = "\"a?b\"";
    for (int c = 1; c < 0x20; c++) {
        s[2] = (char)c;
        bad(s, c == '\n' ? "unexpected newline" : "control character");
    }
    /* Specials at every offset of the eight-byte scan. */
    for (size_t off = 0; off < 24; off++) {
        char buf[40];
        memset(buf, 'x', sizeof buf);
        buf[0] = '"';
        buf[1 + off] = '\\';
        buf[2 + off] = 'n';
        buf[30] = '"';
        json_t *v = parse_n(buf, 31, JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        assert_int_equal(json_string_length(v), 28);
        assert_int_equal(json_string_value(v)[off], '\n');
        json_decref(v);
        buf[1 + off] = '\x01';
        assert_null(parse_n(buf, 31, JSON_DECODE_ANY, NULL));
        buf[1 + off] = '\xc3';
        buf[2 + off] = '\xa9';
        v = parse_n(buf, 31, JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        json_decref(v);
        buf[1 + off] = '"';
        assert_null(parse_n(buf, 31, JSON_DECODE_ANY, NULL)); /* trailing data */
    }
}

static void want_int(const char *s, json_int_t want)
{
    json_t *v = ok(s);
    assert_true(json_is_integer(v));
    assert_true(json_integer_value(v) == want);
    json_decref(v);
}

static void want_real(const char *s, double want)
{
    json_t *v = ok(s);
    assert_true(json_is_real(v));
    double got = json_real_value(v);
    assert_memory_equal(&got, &want, sizeof got);
    json_decref(v);
}

static void test_numbers(void **state)
{
    (void)state;
    want_int("0", 0);
    want_int("-0", 0);
    want_int("-1", -1);
    want_int("123456789012345678", 123456789012345678LL);
    want_int("9223372036854775807", INT64_MAX);
    want_int("-9223372036854775808", INT64_MIN);
    bad("9223372036854775808", "too big integer");
    bad("-9223372036854775809", "too big negative integer");
    bad("123456789012345678901234567890", "too big integer");

    want_real("-0.0", -0.0);
    want_real("0.0", 0.0);
    want_real("-0e10", -0.0);
    want_real("1.5", 1.5);
    want_real("0.1", 0.1);
    want_real("1e5", 1e5);
    want_real("1E+5", 1e5);
    want_real("1e-5", 1e-5);
    want_real("2.5e-300", 2.5e-300);
    want_real("1.7976931348623157e308", 1.7976931348623157e308);
    want_real("4.9e-324", 4.9e-324);
    want_real("9007199254740993.0", 9007199254740993.0); /* past 2^53: strtod */
    want_real("123456789012345678901234567890.5", 123456789012345678901234567890.5);
    want_real("0.30000000000000004", 0.30000000000000004);
    want_real("1e-400", 0.0); /* underflow is no error */
    want_real("0e99999999999999999999", 0.0);
    bad("1e400", "real number overflow");
    bad("-1e400", "real number overflow");
    bad("1.8e308", "real number overflow");

    /* Long texts take strtod's path on a heap copy. */
    char longnum[512];
    strcpy(longnum, "0.");
    memset(longnum + 2, '0', 300);
    strcpy(longnum + 302, "15e300");
    want_real(longnum, 0.15);
    memset(longnum, '9', 400);
    strcpy(longnum + 400, ".5");
    bad(longnum, "real number overflow");
    strcpy(longnum + 300, ".5");
    want_real(longnum, 1e300);

    json_t *v = parse("[3]", JSON_DECODE_INT_AS_REAL, NULL);
    assert_true(json_is_real(json_array_get(v, 0)));
    json_decref(v);
    v = parse("[9223372036854775808]", JSON_DECODE_INT_AS_REAL, NULL);
    assert_non_null(v);
    json_decref(v);

    const char *invalid[] = {"01", "-01", "00", "+1", ".5", "1.", "1.e5", "-", "-a", "1e",
                             "1e+", "1E-", "--1", "0x10", "1.5.3", "Infinity", "NaN", "-Infinity"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        bad(invalid[i], NULL);
}

static void test_depth(void **state)
{
    (void)state;
    size_t n = JSON_PARSER_MAX_DEPTH + 2;
    char *s = malloc(2 * n + 8);
    for (size_t depth = JSON_PARSER_MAX_DEPTH - 1; depth <= JSON_PARSER_MAX_DEPTH + 1; depth++) {
        /* depth arrays, empty innermost: fine up to the limit. */
        memset(s, '[', depth);
        memset(s + depth, ']', depth);
        json_error_t err;
        json_t *v = parse_n(s, 2 * depth, 0, &err);
        assert_true((v != NULL) == (depth <= JSON_PARSER_MAX_DEPTH));
        if (!v)
            assert_non_null(strstr(err.text, "maximum parsing depth reached"));
        json_decref(v);
        /* A scalar inside counts one level more. */
        memset(s, '[', depth);
        s[depth] = '1';
        memset(s + depth + 1, ']', depth);
        v = parse_n(s, 2 * depth + 1, 0, &err);
        assert_true((v != NULL) == (depth < JSON_PARSER_MAX_DEPTH));
        json_decref(v);
    }
    /* Objects count the same way: 2048 of them around a scalar is too deep,
     * 2047 is not. */
    size_t depth = JSON_PARSER_MAX_DEPTH;
    char *o = malloc(depth * 5 + depth + 8);
    size_t k = 0;
    for (size_t i = 0; i < depth; i++) {
        memcpy(o + k, "{\"a\":", 5);
        k += 5;
    }
    o[k++] = '1';
    memset(o + k, '}', depth);
    k += depth;
    assert_null(parse_n(o, k, 0, NULL));
    json_t *v = parse_n(o + 5, k - 6, 0, NULL);
    assert_non_null(v);
    json_decref(v);
    free(o);
    free(s);
}

static void test_objects(void **state)
{
    (void)state;
    /* The last duplicate wins, in the first one's place. */
    json_t *v = ok("{\"a\":1,\"b\":2,\"a\":3}");
    assert_int_equal(json_object_size(v), 2);
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 3);
    assert_string_equal(json_object_iter_key(json_object_iter(v)), "a");
    json_decref(v);
    json_error_t err;
    assert_null(parse("{\"a\":1,\"a\":2}", JSON_REJECT_DUPLICATES, &err));
    assert_non_null(strstr(err.text, "duplicate object key"));
    /* Escaped and plain spellings of one key are duplicates too. */
    assert_null(parse("{\"a\":1,\"\\u0061\":2}", JSON_REJECT_DUPLICATES, &err));
    v = parse("{\"a\":{\"a\":1},\"b\":{\"a\":2}}", JSON_REJECT_DUPLICATES, &err);
    assert_non_null(v);
    json_decref(v);

    const char *invalid[] = {"{\"a\" 1}", "{\"a\":}", "{\"a\":1,}", "{,}", "{a:1}",
                             "{\"a\":1 \"b\":2}", "{\"a\"", "{\"a\":", "{\"a\":1", "{1:2}",
                             "[1,]", "[,1]", "[1 2]", "[", "]", "}", "[}", "{]", "[1:2]"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        bad(invalid[i], NULL);
    bad("{\"a\" 1}", "':' expected near '1'");
    bad("{\"a\":1,}", "string or '}' expected near '}'");
    bad("[1 2]", "']' expected near '2'");
    bad("{\"a\":1 2}", "'}' expected near '2'");
    bad("[", "']' expected near end of file");
    bad("[nul]", "invalid token near 'nul'");
    bad("[truex]", "invalid token near 'truex'");
    bad("[True]", "invalid token");
}

static void test_top_level_and_trailing(void **state)
{
    (void)state;
    json_error_t err;
    /* Without JSON_DECODE_ANY only an object or array may stand alone. */
    const char *scalars[] = {"1", "\"s\"", "true", "null", "-0.5"};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        assert_null(parse(scalars[i], 0, &err));
        assert_non_null(strstr(err.text, "'[' or '{' expected"));
        json_t *v = parse(scalars[i], JSON_DECODE_ANY, &err);
        assert_non_null(v);
        json_decref(v);
    }
    /* A lexical error in the first token is reported as such. */
    assert_null(parse("\"abc", 0, &err));
    assert_non_null(strstr(err.text, "premature end of input"));

    bad("{} x", "end of file expected near 'x'");
    bad("[1] [2]", "end of file expected");
    bad("1 2", "end of file expected");
    bad("\"a\"\"b\"", "end of file expected");
    json_t *v = ok(" \t\r\n[1]\n \t\r ");
    json_decref(v);

    /* JSON_DISABLE_EOF_CHECK stops after the value and says where. */
    v = parse("[1] x", JSON_DISABLE_EOF_CHECK, &err);
    assert_non_null(v);
    assert_int_equal(err.position, 3);
    json_decref(v);
    v = parse("12 x", JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &err);
    assert_non_null(v);
    assert_int_equal(err.position, 2);
    json_decref(v);

    /* Empty and blank input, NULL. */
    bad_n("", 0, "near end of file");
    bad(" \n\t ", NULL);
    assert_null(parse_n("", 0, 0, &err));
    assert_null(json_parse_fast(NULL, 0, JSON_DECODE_ANY, &err));
    assert_non_null(strstr(err.text, "wrong arguments"));
    assert_null(json_parse_fast("[", 1, 0, NULL)); /* NULL error is fine */

    /* len bounds the input. */
    v = json_parse_fast("[1,2]garbage", 5, 0, NULL);
    assert_non_null(v);
    assert_int_equal(json_array_size(v), 2);
    json_decref(v);
}

static void test_error_position(void **state)
{
    (void)state;
    json_error_t err;
    assert_null(parse("{\"a\":}", 0, &err));
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 6);
    assert_int_equal(err.position, 6);
    assert_non_null(strstr(err.text, "unexpected token near '}'"));
    assert_int_equal(json_error_code(&err), json_error_invalid_syntax);

    assert_null(parse("[1,\n2,,]", 0, &err));
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 3);

    /* Columns count characters, not bytes. */
    assert_null(parse("[\"\xc3\xa9\xc3\xa9\", x]", 0, &err));
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 8);

    assert_null(parse("{not json", 0, &err));
    assert_int_equal(err.column, 4);
    assert_non_null(strstr(err.text, "string or '}' expected near 'not'"));

    assert_null(parse("[1e400]", 0, &err));
    assert_int_equal(json_error_code(&err), json_error_numeric_overflow);
    assert_null(parse("[\"\xff\"]", 0, &err));
    assert_int_equal(json_error_code(&err), json_error_invalid_utf8);
    assert_null(parse("[", 0, &err));
    assert_int_equal(json_error_code(&err), json_error_premature_end_of_input);
}

static void test_json_parse_wrapper(void **state)
{
    (void)state;
    /* base/json.c's json_parse goes through json_parse_fast. */
    loom_error e;
    loom_error_clear(&e);
    json_t *v = json_parse("{\"a\":[1,2.5,\"\\u00e9\"]}", 22, "test", &e);
    assert_non_null(v);
    json_decref(v);
    assert_null(json_parse("{\"a\":}", 6, "SSE data", &e));
    assert_non_null(strstr(e.message, "invalid JSON in SSE data at line 1, column 6: "
                                      "unexpected token near '}'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_surrogates),
        cmocka_unit_test(test_nul),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_control_characters),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_top_level_and_trailing),
        cmocka_unit_test(test_error_position),
        cmocka_unit_test(test_json_parse_wrapper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_mcp_tool.c — ext/mcp/mcp_tool.c and output.c without a server or a
 * manager: the Loom name of a server's tool, the declaration made from a
 * tools/list entry (annotation defaults failing closed, schemas the
 * checker refuses, the description cap, alwaysLoad), and the conversion of
 * every kind of tools/call result, oversized ones spilled to a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/utf8.h"
#include "context/tokens.h"
#include "ext/mcp/mcp_tool.h"
#include "ext/mcp/output.h"
#include "tools/registry.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad test JSON %s: %s", text, e.text);
    return v;
}

static struct mcp_tool *tool_of(const char *entry)
{
    json_t *j = J(entry);
    loom_error err;
    loom_error_clear(&err);
    struct mcp_tool *t = mcp_tool_new(NULL, "srv", j, false, &err);
    json_decref(j);
    if (!t)
        fail_msg("tool refused: %s", err.message);
    return t;
}

static bool valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t l = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

/* ---- naming -------------------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    char *n = mcp_tool_loom_name("everything", "get-sum");
    assert_string_equal(n, "mcp__everything__get-sum");
    free(n);
    n = mcp_tool_loom_name("my server.v2", "list files/é");
    assert_string_equal(n, "mcp__my_server_v2__list_files__");
    free(n);

    char long_tool[200];
    memset(long_tool, 'x', sizeof long_tool - 1);
    long_tool[sizeof long_tool - 1] = '\0';
    char *a = mcp_tool_loom_name("srv", long_tool);
    long_tool[150] = 'y'; /* differs only in the part that is cut off */
    char *b = mcp_tool_loom_name("srv", long_tool);
    assert_int_equal(strlen(a), 64);
    assert_int_equal(strlen(b), 64);
    assert_string_not_equal(a, b);
    assert_memory_equal(a, "mcp__srv__xxx", 13);
    assert_int_equal(a[64 - 9], '-');
    for (const char *p = a; *p; p++)
        assert_true(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", *p));
    /* Stable: the same names give the same cut name. */
    char *c = mcp_tool_loom_name("srv", long_tool);
    assert_string_equal(b, c);
    free(a);
    free(b);
    free(c);
}

/* ---- declarations -------------------------------------------------------- */

static void test_declaration(void **state)
{
    (void)state;
    struct mcp_tool *t = tool_of(
        "{\"name\":\"echo\",\"description\":\"Echoes.\",\"inputSchema\":{\"type\":\"object\","
        "\"properties\":{\"message\":{\"type\":\"string\"}},\"required\":[\"message\"]}}");
    assert_string_equal(t->def.name, "mcp__srv__echo");
    assert_ptr_equal(t->def.name, t->loom_name);
    assert_string_equal(t->def.description, "Echoes.");
    assert_string_equal(t->remote_name, "echo");
    assert_string_equal(t->server, "srv");
    assert_ptr_equal(t->def.impl, t);
    assert_non_null(t->def.run);
    assert_null(t->output_schema);
    assert_true(t->tokens > 10);
    assert_false(t->always_load);
    /* The registry takes it as it is. */
    tool_registry *reg = tool_registry_new();
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(tool_registry_add(reg, &t->def, &err), 0);
    tool_registry_free(reg);
    mcp_tool_free(t);

    /* No type: "object" is supplied; no description: the title; neither:
     * a stand-in, never empty. */
    t = tool_of("{\"name\":\"a\",\"title\":\"The A tool\",\"inputSchema\":{}}");
    assert_non_null(strstr(t->schema_text, "\"type\":\"object\""));
    assert_string_equal(t->description, "The A tool");
    mcp_tool_free(t);
    t = tool_of("{\"name\":\"b\",\"inputSchema\":{\"type\":\"object\"}}");
    assert_true(strlen(t->description) > 0);
    mcp_tool_free(t);
}

static void test_annotations(void **state)
{
    (void)state;
    static const struct {
        const char *ann;
        bool read_only, destructive;
    } cases[] = {
        {"", false, true}, /* absent: it may change the world */
        {",\"annotations\":{}", false, true},
        {",\"annotations\":{\"readOnlyHint\":true}", true, false},
        {",\"annotations\":{\"readOnlyHint\":true,\"destructiveHint\":false}", true, false},
        {",\"annotations\":{\"readOnlyHint\":true,\"destructiveHint\":true}", false, true},
        {",\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":false}", false, false},
        {",\"annotations\":{\"readOnlyHint\":\"yes\"}", false, true}, /* wrong type: closed */
        {",\"annotations\":\"readOnly\"", false, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[300];
        snprintf(buf, sizeof buf, "{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}%s}",
                 cases[i].ann);
        struct mcp_tool *t = tool_of(buf);
        assert_int_equal(t->def.read_only, cases[i].read_only);
        assert_int_equal(t->def.concurrency_safe, cases[i].read_only);
        assert_int_equal(t->destructive, cases[i].destructive);
        mcp_tool_free(t);
    }
    struct mcp_tool *t = tool_of("{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"},"
                                 "\"_meta\":{\"anthropic/alwaysLoad\":true}}");
    assert_true(t->always_load);
    mcp_tool_free(t);
    json_t *j = J("{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}}");
    t = mcp_tool_new(NULL, "srv", j, true, NULL);
    assert_true(t->always_load);
    mcp_tool_free(t);
    json_decref(j);
}

static void expect_refused(const char *entry, const char *what)
{
    json_t *j = J(entry);
    loom_error err;
    loom_error_clear(&err);
    struct mcp_tool *t = mcp_tool_new(NULL, "srv", j, false, &err);
    json_decref(j);
    assert_null(t);
    assert_non_null(strstr(err.message, "\"srv\""));
    if (what && !strstr(err.message, what))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, what);
}

static void test_refused(void **state)
{
    (void)state;
    expect_refused("{\"inputSchema\":{\"type\":\"object\"}}", "name");
    expect_refused("{\"name\":\"\",\"inputSchema\":{\"type\":\"object\"}}", "name");
    expect_refused("{\"name\":\"t\"}", "\"t\"");
    expect_refused("{\"name\":\"t\",\"inputSchema\":[]}", "inputSchema");
    expect_refused("{\"name\":\"t\",\"inputSchema\":{\"type\":\"string\"}}", "\"t\"");
    expect_refused("{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\",\"required\":5}}",
                   "\"t\"");
    expect_refused("{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"},"
                   "\"outputSchema\":{\"type\":\"nonsense\"}}",
                   "outputSchema");
    expect_refused("[1,2]", NULL);
}

static void test_description_cap(void **state)
{
    (void)state;
    loom_str e = LOOM_STR_INIT;
    str_puts(&e, "{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"},\"description\":\"");
    for (int i = 0; i < 3000; i++)
        str_puts(&e, "é"); /* two bytes each: the cut must not split one */
    str_puts(&e, "\"}");
    struct mcp_tool *t = tool_of(e.ptr);
    size_t n = strlen(t->description);
    assert_true(n < 2048 + 100);
    assert_true(valid_utf8(t->description, n));
    assert_non_null(strstr(t->description, "description cut at 2048"));
    mcp_tool_free(t);
    str_free(&e);
}

/* ---- results ------------------------------------------------------------- */

static struct mcp_tool *plain_tool(void)
{
    return tool_of("{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}}");
}

static void convert(const struct mcp_tool *t, const char *result, int64_t max, tool_result *r)
{
    json_t *j = J(result);
    tool_result_init(r);
    mcp_tool_convert_result(t, j, NULL, max, r);
    json_decref(j);
}

static void test_result_kinds(void **state)
{
    (void)state;
    struct mcp_tool *t = plain_tool();
    tool_result r;
    convert(t, "{\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"text\",\"text\":"
               "\"two\"}]}",
            25000, &r);
    assert_string_equal(str_cstr(&r.text), "one\ntwo");
    assert_false(r.is_error);
    assert_non_null(r.raw);
    tool_result_free(&r);

    /* The first image goes to the model; a second one is only described. */
    convert(t, "{\"content\":[{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":"
               "\"image/png\"},{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"}]}",
            25000, &r);
    assert_string_equal(r.image_media_type, "image/png");
    assert_string_equal(r.image_data, "iVBORw0KGgo=");
    assert_non_null(strstr(str_cstr(&r.text), "[image: image/png, 8 bytes]"));
    assert_non_null(strstr(str_cstr(&r.text), "not shown"));
    /* raw keeps the short data, but a blob over 256 chars is dropped. */
    tool_result_free(&r);
    loom_str big = LOOM_STR_INIT;
    str_puts(&big, "{\"content\":[{\"type\":\"audio\",\"mimeType\":\"audio/wav\",\"data\":\"");
    for (int i = 0; i < 1000; i++)
        str_puts(&big, "AAAA");
    str_puts(&big, "\"}]}");
    convert(t, big.ptr, 25000, &r);
    assert_string_equal(str_cstr(&r.text), "[audio: audio/wav, 3000 bytes]");
    assert_null(r.image_data);
    char *raw = json_dump_compact(r.raw);
    assert_null(strstr(raw, "AAAAAAAA"));
    assert_non_null(strstr(raw, "4000 base64 chars omitted"));
    free(raw);
    tool_result_free(&r);
    str_free(&big);

    /* An image type the providers refuse is described, not passed on. */
    convert(t, "{\"content\":[{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/tiff\"}]}",
            25000, &r);
    assert_null(r.image_data);
    assert_non_null(strstr(str_cstr(&r.text), "[image: image/tiff, 3 bytes]"));
    tool_result_free(&r);

    convert(t, "{\"content\":[{\"type\":\"resource_link\",\"uri\":\"file:///a.txt\",\"name\":"
               "\"a.txt\"},{\"type\":\"resource\",\"resource\":{\"uri\":\"test://r/1\",\"text\":"
               "\"embedded text\"}},{\"type\":\"resource\",\"resource\":{\"uri\":\"test://r/2\","
               "\"mimeType\":\"application/octet-stream\",\"blob\":\"AAECAw==\"}},{\"type\":"
               "\"weird\"}]}",
            25000, &r);
    assert_string_equal(str_cstr(&r.text),
                        "[resource: a.txt file:///a.txt]\nembedded text\n"
                        "[binary resource test://r/2: application/octet-stream, 4 bytes]\n"
                        "[unsupported content type weird]");
    tool_result_free(&r);

    convert(t, "{\"content\":[{\"type\":\"text\",\"text\":\"boom\"}],\"isError\":true}", 25000,
            &r);
    assert_true(r.is_error);
    assert_string_equal(str_cstr(&r.text), "boom");
    tool_result_free(&r);
    convert(t, "{\"content\":[],\"isError\":true}", 25000, &r);
    assert_true(r.is_error);
    assert_true(r.text.len > 0);
    tool_result_free(&r);

    /* Not an object, content of the wrong type: errors or notes, no crash. */
    convert(t, "[1]", 25000, &r);
    assert_true(r.is_error);
    assert_non_null(strstr(str_cstr(&r.text), "\"srv\""));
    tool_result_free(&r);
    convert(t, "{\"content\":{\"type\":\"text\"}}", 25000, &r);
    assert_false(r.is_error);
    assert_true(r.text.len > 0);
    tool_result_free(&r);
    mcp_tool_free(t);
}

static void test_structured(void **state)
{
    (void)state;
    struct mcp_tool *t = tool_of(
        "{\"name\":\"weather\",\"inputSchema\":{\"type\":\"object\"},\"outputSchema\":{\"type\":"
        "\"object\",\"properties\":{\"temperature\":{\"type\":\"number\"}},\"required\":["
        "\"temperature\"]}}");
    assert_non_null(t->output_schema);
    tool_result r;
    /* No content: the compact JSON is the text. */
    convert(t, "{\"content\":[],\"structuredContent\":{\"temperature\":21.5}}", 25000, &r);
    assert_false(r.is_error);
    assert_string_equal(str_cstr(&r.text), "{\"temperature\":21.5}");
    tool_result_free(&r);
    /* Content given: it is the text. */
    convert(t, "{\"content\":[{\"type\":\"text\",\"text\":\"21.5 C\"}],\"structuredContent\":"
               "{\"temperature\":21.5}}",
            25000, &r);
    assert_string_equal(str_cstr(&r.text), "21.5 C");
    tool_result_free(&r);
    /* A mismatch is a tool error naming the path. */
    convert(t, "{\"content\":[],\"structuredContent\":{\"temperature\":\"warm\"}}", 25000, &r);
    assert_true(r.is_error);
    assert_non_null(strstr(str_cstr(&r.text), "outputSchema"));
    assert_non_null(strstr(str_cstr(&r.text), "temperature"));
    tool_result_free(&r);
    /* Declared but missing. */
    convert(t, "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}", 25000, &r);
    assert_true(r.is_error);
    tool_result_free(&r);
    /* An error result is not checked against the schema. */
    convert(t, "{\"content\":[{\"type\":\"text\",\"text\":\"no city\"}],\"isError\":true}", 25000,
            &r);
    assert_true(r.is_error);
    assert_string_equal(str_cstr(&r.text), "no city");
    tool_result_free(&r);
    mcp_tool_free(t);
    /* Without an outputSchema, structuredContent alone is still shown. */
    t = plain_tool();
    convert(t, "{\"structuredContent\":{\"a\":[1,2]}}", 25000, &r);
    assert_string_equal(str_cstr(&r.text), "{\"a\":[1,2]}");
    tool_result_free(&r);
    mcp_tool_free(t);
}

static void test_spill(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_mcp_spill_XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct mcp_tool *t = plain_tool();
    /* 3000 ASCII bytes (about 834 tokens) then 3000 two-byte characters
     * (one token each): the 1000-token cut falls among the "é"s, where a
     * byte cut could split one. */
    loom_str text = LOOM_STR_INIT;
    for (int i = 0; i < 300; i++)
        str_puts(&text, "abcdefghi\n");
    for (int i = 0; i < 3000; i++)
        str_puts(&text, "é");
    json_t *res = json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", text.ptr);
    tool_result r;
    tool_result_init(&r);
    mcp_tool_convert_result(t, res, dir, 1000, &r);
    json_decref(res);
    assert_false(r.is_error);
    assert_true(valid_utf8(r.text.ptr, r.text.len));
    const char *note = strstr(r.text.ptr, "…output cut at 1000 tokens; the whole result (6000 "
                                          "chars) is in ");
    assert_non_null(note);
    assert_non_null(strstr(note, "Read it with offset/limit"));
    /* What precedes the note is a prefix of the text, ending between two
     * characters. */
    size_t kept = (size_t)(note - r.text.ptr) - 2;
    assert_true(kept > 3000 && kept < text.len);
    assert_memory_equal(r.text.ptr, text.ptr, kept);
    assert_int_equal(((unsigned char)text.ptr[kept] & 0xC0) != 0x80, 1);
    /* The file holds everything, mode 0600, in the spill dir. */
    const char *path = json_string_value(json_object_get(r.raw, "spillPath"));
    assert_non_null(path);
    assert_true(json_is_true(json_object_get(r.raw, "truncated")));
    assert_memory_equal(path, dir, strlen(dir));
    assert_non_null(strstr(path, "mcp__srv__t-"));
    assert_non_null(strstr(r.text.ptr, path));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *whole = NULL;
    size_t len = 0;
    assert_int_equal(file_read_all(path, &whole, &len, NULL), 0);
    assert_int_equal(len, text.len);
    assert_memory_equal(whole, text.ptr, len);
    free(whole);
    unlink(path);
    tool_result_free(&r);

    /* Under the cap: untouched, no file. */
    convert(t, "{\"content\":[{\"type\":\"text\",\"text\":\"small\"}]}", 1000, &r);
    assert_string_equal(str_cstr(&r.text), "small");
    assert_null(json_object_get(r.raw, "spillPath"));
    tool_result_free(&r);
    assert_int_equal(rmdir(dir), 0); /* empty: nothing else was written */
    str_free(&text);
    mcp_tool_free(t);
}

static void test_prefix(void **state)
{
    (void)state;
    /* Every cap gives a prefix that fits and ends on a boundary. */
    const char *s = "aé中😀bc€";
    size_t n = strlen(s);
    for (int64_t cap = 0; cap < 10; cap++) {
        size_t k = mcp_output_prefix(s, n, cap);
        assert_true(k <= n);
        assert_true(valid_utf8(s, k));
        assert_true(tokens_estimate_text(s, k) <= cap);
    }
    assert_int_equal(mcp_output_prefix(s, n, 1000), n);
    assert_int_equal(mcp_output_prefix(s, n, 0), 0);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    struct mcp_tool *t = plain_tool();
    /* jansson refuses such bytes when parsing; a value built without the
     * check (a transport that skipped it) must still come out valid. */
    json_t *res = json_pack("{s:[{s:s, s:o}]}", "content", "type", "text", "text",
                            json_stringn_nocheck("ok\xff\xfe!\xc3", 6));
    tool_result r;
    tool_result_init(&r);
    mcp_tool_convert_result(t, res, NULL, 25000, &r);
    json_decref(res);
    assert_true(valid_utf8(r.text.ptr, r.text.len));
    assert_memory_equal(r.text.ptr, "ok", 2);
    assert_non_null(strstr(r.text.ptr, "\xef\xbf\xbd!")); /* U+FFFD */
    /* The raw result serializes (the session record holds it). */
    char *raw = json_dumps(r.raw, JSON_COMPACT);
    assert_non_null(raw);
    free(raw);
    tool_result_free(&r);

    /* A NUL inside a text is dropped, not a cut. */
    res = json_pack("{s:[{s:s, s:o}]}", "content", "type", "text", "text",
                    json_stringn("a\0b", 3));
    tool_result_init(&r);
    mcp_tool_convert_result(t, res, NULL, 25000, &r);
    json_decref(res);
    assert_string_equal(str_cstr(&r.text), "ab");
    tool_result_free(&r);
    mcp_tool_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),          cmocka_unit_test(test_declaration),
        cmocka_unit_test(test_annotations),    cmocka_unit_test(test_refused),
        cmocka_unit_test(test_description_cap), cmocka_unit_test(test_result_kinds),
        cmocka_unit_test(test_structured),     cmocka_unit_test(test_spill),
        cmocka_unit_test(test_prefix),         cmocka_unit_test(test_invalid_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_mcp_resources.c — the pure parts of ext/mcp/resources.c: finding
 * @server:uri mentions in a prompt (known servers only, at a word start,
 * the uri running to whitespace, the longest server name winning,
 * duplicates dropped) and rendering a resources/read result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ext/mcp/resources.h"

static const char *const servers[] = {"fs", "fs-extra", "everything"};

static void test_mentions(void **state)
{
    (void)state;
    const char *p = "Compare @fs:file:///a.txt with @fs-extra:file:///b.txt\tand "
                    "@everything:test://static/resource/1. Ignore @nope:x, mail@fs:y, @fs: "
                    "and again @fs:file:///a.txt";
    mcp_mention *v = NULL;
    size_t n = mcp_mentions_find(p, servers, 3, &v);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].server, "fs");
    assert_string_equal(v[0].uri, "file:///a.txt");
    assert_int_equal(v[0].start, strlen("Compare "));
    assert_int_equal(v[0].len, strlen("@fs:file:///a.txt"));
    assert_string_equal(v[1].server, "fs-extra");
    assert_string_equal(v[1].uri, "file:///b.txt");
    assert_string_equal(v[2].server, "everything");
    assert_string_equal(v[2].uri, "test://static/resource/1.");
    mcp_mentions_free(v, n);

    n = mcp_mentions_find("@fs:/etc/hosts", servers, 3, &v);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].start, 0);
    assert_string_equal(v[0].uri, "/etc/hosts");
    mcp_mentions_free(v, n);

    n = mcp_mentions_find("no mentions here @", servers, 3, &v);
    assert_int_equal(n, 0);
    mcp_mentions_free(v, n);
    n = mcp_mentions_find("@fs:x", NULL, 0, &v);
    assert_int_equal(n, 0);
    mcp_mentions_free(v, n);
}

static void test_contents(void **state)
{
    (void)state;
    json_error_t e;
    json_t *r = json_loads("{\"contents\":[{\"uri\":\"test://1\",\"mimeType\":\"text/plain\","
                           "\"text\":\"hello\"},{\"uri\":\"test://2\",\"mimeType\":"
                           "\"image/png\",\"blob\":\"AAAAAA==\"},7]}",
                           0, &e);
    assert_non_null(r);
    loom_str s = LOOM_STR_INIT;
    mcp_resource_contents_text(r, &s);
    assert_string_equal(str_cstr(&s), "hello\n[binary resource test://2: image/png, 4 bytes]");
    json_decref(r);
    str_free(&s);

    r = json_loads("{\"contents\":\"oops\"}", 0, &e);
    mcp_resource_contents_text(r, &s);
    assert_string_equal(str_cstr(&s), "(the resource has no contents)");
    json_decref(r);
    str_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mentions),
        cmocka_unit_test(test_contents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_server_knowledge.c — knowledge search over filesystem sources
 * (knowledge.h) in a temporary folder: hits ranked by term count, the
 * citation fields, a symbolic link out of the folder refused, dot-folders
 * and binary files skipped, allow_quote false empties snippets, a denied
 * source, a non-filesystem source named in the summary, an empty query,
 * the limit. One thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "surfaces/server/runs/knowledge.h"

#include "tmpdir.h"

typedef struct kb_fixture {
    char dir[512];      /* the source's folder */
    char outside[512];  /* a folder beside it, with a secret */
    knowledge_source src;
} kb_fixture;

static int setup(void **state)
{
    kb_fixture *f = calloc(1, sizeof *f);
    if (tmpdir_make(f->dir, sizeof f->dir, "loom-kb", true) != 0 ||
        tmpdir_make(f->outside, sizeof f->outside, "loom-kb-out", true) != 0)
        return -1;
    tmpdir_write(f->dir, "deploy.md",
                 "# Deploying the service\n"
                 "\n"
                 "Run the deploy script from the release branch.\n"
                 "The rollback script undoes a deploy of the service.\n"
                 "Unrelated line.\n");
    tmpdir_write(f->dir, "notes/ops.txt", "   a rollback needs the on-call approver   \n");
    tmpdir_write(f->dir, ".git/config", "deploy rollback service deploy\n");
    tmpdir_write(f->dir, ".hidden.md", "deploy rollback service\n");
    tmpdir_write(f->outside, "secret.md", "deploy rollback service secret\n");
    /* A binary file: a NUL early on. */
    loom_str bin = LOOM_STR_INIT;
    str_printf(&bin, "%s/blob.bin", f->dir);
    FILE *fp = fopen(str_cstr(&bin), "wb");
    fwrite("deploy\0rollback service\n", 1, 25, fp);
    fclose(fp);
    str_free(&bin);
    /* Links: one out of the folder (file), one out (folder), one inside. */
    loom_str a = LOOM_STR_INIT, b = LOOM_STR_INIT;
    str_printf(&a, "%s/secret.md", f->outside);
    str_printf(&b, "%s/escape.md", f->dir);
    assert_int_equal(symlink(str_cstr(&a), str_cstr(&b)), 0);
    str_clear(&b);
    str_printf(&b, "%s/outdir", f->dir);
    assert_int_equal(symlink(f->outside, str_cstr(&b)), 0);
    str_clear(&b);
    str_printf(&b, "%s/alias.md", f->dir);
    assert_int_equal(symlink("notes/ops.txt", str_cstr(&b)), 0);
    str_free(&a), str_free(&b);

    f->src.id = "handbook";
    f->src.type = "filesystem";
    f->src.scope = "global";
    f->src.path = f->dir;
    f->src.trust_tier = "high";
    f->src.allow_search = true;
    f->src.allow_quote = true;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    kb_fixture *f = *state;
    tmpdir_remove(f->dir);
    tmpdir_remove(f->outside);
    free(f);
    return 0;
}

static json_t *search(const knowledge_source *const *srcs, size_t n, const char *q, int limit)
{
    srv_error err = {0};
    char *text = knowledge_search(srcs, n, q, limit, "run_k", &err);
    assert_non_null(text);
    json_t *pack = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(pack);
    return pack;
}

static const char *cit_str(json_t *pack, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(pack, "citations"),
                                                            i), key));
}

static void test_ranked(void **state)
{
    kb_fixture *f = *state;
    const knowledge_source *srcs[] = {&f->src};
    json_t *p = search(srcs, 1, "Rollback the DEPLOY of service", 10);
    json_t *cits = json_object_get(p, "citations");
    /* deploy.md:4 has all three terms, deploy.md:1 and :3 one or two, the
     * ops note and its in-folder alias one; nothing from .git, .hidden.md,
     * blob.bin, escape.md or outdir/. */
    assert_true(json_array_size(cits) >= 4);
    assert_string_equal(cit_str(p, 0, "uri"), "kb://handbook/deploy.md#L4");
    assert_string_equal(cit_str(p, 0, "title"), "Deploying the service");
    assert_string_equal(cit_str(p, 0, "snippet"),
                        "The rollback script undoes a deploy of the service.");
    assert_string_equal(cit_str(p, 0, "source"), "handbook");
    assert_string_equal(cit_str(p, 0, "trust_tier"), "high");
    assert_int_equal(strncmp(cit_str(p, 0, "citation_id"), "cit_", 4), 0);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(cits, 0), "line")), 4);
    assert_true(json_is_true(json_object_get(json_array_get(cits, 0), "quotable")));
    assert_string_equal(cit_str(p, 1, "uri"), "kb://handbook/deploy.md#L1");
    size_t i;
    json_t *c;
    bool alias = false, ops = false;
    json_array_foreach(cits, i, c) {
        const char *uri = json_string_value(json_object_get(c, "uri"));
        assert_null(strstr(uri, ".git"));
        assert_null(strstr(uri, ".hidden"));
        assert_null(strstr(uri, "blob.bin"));
        assert_null(strstr(uri, "escape.md"));
        assert_null(strstr(uri, "outdir"));
        assert_null(strstr(json_string_value(json_object_get(c, "snippet")), "secret"));
        if (strcmp(uri, "kb://handbook/notes/ops.txt#L1") == 0) {
            ops = true;
            /* No heading: the file's name; the line trimmed. */
            assert_string_equal(json_string_value(json_object_get(c, "title")), "ops.txt");
            assert_string_equal(json_string_value(json_object_get(c, "snippet")),
                                "a rollback needs the on-call approver");
        }
        alias = alias || strcmp(uri, "kb://handbook/alias.md#L1") == 0;
    }
    assert_true(ops);
    assert_true(alias);
    assert_true(json_real_value(json_object_get(p, "confidence")) > 0.99);
    const char *fresh = json_string_value(json_object_get(p, "freshness"));
    assert_non_null(fresh);
    assert_int_equal(strlen(fresh), 10);
    assert_string_equal(json_string_value(json_object_get(p, "run_id")), "run_k");
    assert_string_equal(json_string_value(json_object_get(p, "question")),
                        "Rollback the DEPLOY of service");
    assert_int_equal(strncmp(json_string_value(json_object_get(p, "evidence_pack_id")), "evp_", 4),
                     0);
    json_decref(p);

    /* Confidence: the best line has one of two terms. */
    p = search(srcs, 1, "approver zebra", 5);
    assert_int_equal(json_array_size(json_object_get(p, "citations")), 2); /* ops + alias */
    assert_true(json_real_value(json_object_get(p, "confidence")) > 0.49);
    assert_true(json_real_value(json_object_get(p, "confidence")) < 0.51);
    json_decref(p);

    /* No hit: no citations, confidence 0, freshness null. */
    p = search(srcs, 1, "zebra", 5);
    assert_int_equal(json_array_size(json_object_get(p, "citations")), 0);
    assert_true(json_is_null(json_object_get(p, "freshness")));
    assert_non_null(strstr(json_string_value(json_object_get(p, "summary")), "handbook"));
    json_decref(p);
}

static void test_symlink_escape_refused(void **state)
{
    kb_fixture *f = *state;
    const knowledge_source *srcs[] = {&f->src};
    json_t *p = search(srcs, 1, "secret", 50);
    assert_int_equal(json_array_size(json_object_get(p, "citations")), 0);
    json_decref(p);
}

static void test_no_quote(void **state)
{
    kb_fixture *f = *state;
    f->src.allow_quote = false;
    const knowledge_source *srcs[] = {&f->src};
    json_t *p = search(srcs, 1, "deploy", 5);
    json_t *cits = json_object_get(p, "citations");
    assert_true(json_array_size(cits) > 0);
    size_t i;
    json_t *c;
    json_array_foreach(cits, i, c) {
        assert_string_equal(json_string_value(json_object_get(c, "snippet")), "");
        assert_true(json_is_false(json_object_get(c, "quotable")));
        assert_non_null(json_string_value(json_object_get(c, "uri")));
    }
    json_decref(p);
}

static void test_denied_and_other_types(void **state)
{
    kb_fixture *f = *state;
    knowledge_source closed = f->src;
    closed.id = "vault";
    closed.allow_search = false;
    const knowledge_source *srcs[] = {&f->src, &closed};
    srv_error err = {0};
    assert_null(knowledge_search(srcs, 2, "deploy", 5, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_KNOWLEDGE_SOURCE_DENIED);
    assert_non_null(strstr(err.message, "vault"));
    srv_error_clear(&err);

    knowledge_source wiki = {.id = "team_wiki", .type = "mcp", .allow_search = true,
                             .allow_quote = true};
    const knowledge_source *two[] = {&wiki, &f->src};
    json_t *p = search(two, 2, "deploy", 5);
    const char *sum = json_string_value(json_object_get(p, "summary"));
    assert_non_null(strstr(sum, "team_wiki (mcp) is not searchable by this server"));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(p, "citations"), i, c)
        assert_string_equal(json_string_value(json_object_get(c, "source")), "handbook");
    json_decref(p);

    const knowledge_source *only[] = {&wiki};
    p = search(only, 1, "deploy", 5);
    assert_int_equal(json_array_size(json_object_get(p, "citations")), 0);
    assert_string_equal(json_string_value(json_object_get(p, "run_id")), "run_k");
    json_decref(p);
}

static void test_empty_query(void **state)
{
    kb_fixture *f = *state;
    const knowledge_source *srcs[] = {&f->src};
    const char *bad[] = {"", "   ", "?!.,", NULL};
    for (size_t i = 0; i < 4; i++) {
        srv_error err = {0};
        assert_null(knowledge_search(srcs, 1, bad[i], 5, NULL, &err));
        assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
        srv_error_clear(&err);
    }
}

static void test_limit(void **state)
{
    kb_fixture *f = *state;
    for (int i = 0; i < 60; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "many/f%02d.md", i);
        tmpdir_write(f->dir, rel, "needle here\nneedle again\n");
    }
    const knowledge_source *srcs[] = {&f->src};
    json_t *p = search(srcs, 1, "needle", 0); /* default 5 */
    assert_int_equal(json_array_size(json_object_get(p, "citations")), 5);
    assert_string_equal(cit_str(p, 0, "uri"), "kb://handbook/many/f00.md#L1");
    assert_string_equal(cit_str(p, 1, "uri"), "kb://handbook/many/f00.md#L2");
    json_decref(p);
    p = search(srcs, 1, "needle", 3);
    assert_int_equal(json_array_size(json_object_get(p, "citations")), 3);
    json_decref(p);
    p = search(srcs, 1, "needle", 1000); /* at most 50 */
    assert_int_equal(json_array_size(json_object_get(p, "citations")), 50);
    json_decref(p);
    /* A long line is cut to 240 bytes. */
    loom_str longl = LOOM_STR_INIT;
    for (int i = 0; i < 100; i++)
        str_puts(&longl, "haystack ");
    tmpdir_write(f->dir, "long.md", str_cstr(&longl));
    str_free(&longl);
    p = search(srcs, 1, "haystack", 1);
    assert_int_equal(strlen(cit_str(p, 0, "snippet")), 240);
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ranked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_escape_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_quote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_denied_and_other_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_query, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_memory_select.c — the lexical selector (ext/memory/select.h): terms
 * in the name or description weigh more than in the body, common words and
 * short ones never count, a file the goal names counts when the entry
 * mentions it, recency alone never picks, the order (score, then newer),
 * the cap, the session's already-surfaced entries left out; and the strict
 * extractor-reply parser (reply.h) the other end of the loop relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ext/memory/entry.h"
#include "ext/memory/reply.h"
#include "ext/memory/select.h"

#define DAY (24LL * 3600 * 1000)
#define NOW (1800000000000LL)

static memory_entry mk(const char *slug, const char *name, const char *desc, const char *body,
                       int age_days)
{
    memory_entry e = {0};
    e.path = strdup(slug);
    e.slug = strdup(slug);
    e.name = strdup(name);
    e.description = strdup(desc);
    e.body = strdup(body);
    e.mtime_ms = NOW - age_days * DAY;
    return e;
}

static double score(const memory_entry *e, const char *goal, double *rel)
{
    memory_pick p = {0};
    memory_score(e, goal, NOW, &p);
    json_decref(p.terms);
    *rel = p.relevance;
    return p.score;
}

static void name_terms_weigh_more_than_body_terms(void **state)
{
    (void)state;
    memory_entry a = mk("a", "Deploy steps", "how we ship", "nothing else", 0);
    memory_entry b = mk("b", "Other", "unrelated", "we deploy by hand", 0);
    double ra, rb;
    double sa = score(&a, "How do we deploy?", &ra), sb = score(&b, "How do we deploy?", &rb);
    assert_true(ra == 2.0 && rb == 1.0);
    assert_true(sa > sb);
    memory_entry_clear(&a);
    memory_entry_clear(&b);
}

static void stopwords_and_short_words_never_count(void **state)
{
    (void)state;
    memory_entry a = mk("a", "The and for with", "is a to of", "that this what", 0);
    double r;
    score(&a, "what is the thing for, and is this it?", &r);
    assert_true(r == 0.0);
    memory_entry_clear(&a);
}

static void a_named_file_counts_when_mentioned(void **state)
{
    (void)state;
    memory_entry a = mk("a", "Parser quirk", "x", "main.c has a hand-written lexer", 0);
    memory_pick p = {0};
    memory_score(&a, "fix the bug in `src/main.c`,", NOW, &p);
    assert_true(p.relevance >= 3.0);
    char *why = memory_pick_why(&p);
    assert_non_null(strstr(why, "main.c"));
    free(why);
    json_decref(p.terms);
    memory_entry_clear(&a);
}

static void recency_alone_never_picks_and_order_is_score_then_newer(void **state)
{
    (void)state;
    memory_entry v[4] = {
        mk("fresh-unrelated", "Lunch", "pizza on fridays", "food", 0),
        mk("old-match", "Release process", "release on tuesdays", "qa first", 40),
        mk("new-match", "Release notes", "release notes live in NOTES", "keep it short", 1),
        mk("strong", "Release tuesday", "release day is tuesday", "release tuesday", 3),
    };
    memory_pick out[5];
    size_t n = memory_select(v, 4, "When is the release on tuesday?", NOW, NULL, 5, out);
    assert_int_equal(n, 3);
    assert_string_equal(v[out[0].index].slug, "strong");
    /* Equal relevance: recency decides (the newer first). */
    assert_string_equal(v[out[1].index].slug, "new-match");
    assert_string_equal(v[out[2].index].slug, "old-match");
    assert_int_equal(out[2].age_days, 40);
    memory_picks_free(out, n);
    n = memory_select(v, 4, "release", NOW, NULL, 5, out);
    assert_int_equal(n, 3);
    assert_string_equal(v[out[0].index].slug, "new-match");
    memory_picks_free(out, n);
    /* The cap and the session's surfaced set. */
    json_t *skip = json_pack("[s]", "strong");
    n = memory_select(v, 4, "When is the release on tuesday?", NOW, skip, 1, out);
    assert_int_equal(n, 1);
    assert_string_equal(v[out[0].index].slug, "new-match");
    memory_picks_free(out, n);
    json_decref(skip);
    for (int i = 0; i < 4; i++)
        memory_entry_clear(&v[i]);
}

static void reply_parser_is_strict(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *why; /* NULL: accepted */
        size_t n;
    } cases[] = {
        {"NO_EXTRACTION_NEEDED\n", NULL, 0},
        {"{\"memories\":[]}", NULL, 0},
        {"```json\n{\"memories\":[{\"action\":\"merge\",\"target\":\"a-b\"}]}\n```", NULL, 1},
        {"{\"memories\":[{\"action\":\"add\",\"name\":\"N\",\"description\":\"D\",\"type\":"
         "\"user\",\"body\":\"B\"}]}", NULL, 1},
        {"Sure: {\"memories\":[]}", "not one JSON object", 0},
        {"{\"memories\":[],\"extra\":1}", "one key", 0},
        {"{\"memories\":[{\"action\":\"add\",\"name\":\"N\",\"description\":\"D\"}]}",
         "memories[0].type is missing", 0},
        {"{\"memories\":[{\"action\":\"add\",\"name\":\"N\\nM\",\"description\":\"D\",\"type\":"
         "\"user\",\"body\":\"B\"}]}", "memories[0].name must be one line", 0},
        {"{\"memories\":[{\"action\":\"replace\",\"target\":\"../x\",\"name\":\"N\","
         "\"description\":\"D\",\"type\":\"user\",\"body\":\"B\"}]}", "slug", 0},
        {"{\"memories\":[{\"action\":\"merge\",\"target\":\"a\",\"sneaky\":1}]}", "unknown key", 0},
        {"{\"memories\":[{\"action\":\"delete\",\"target\":\"a\"}]}", "add, merge or replace", 0},
        {"{\"memories\":[{\"action\":\"add\",\"target\":\"a\",\"name\":\"N\",\"description\":"
         "\"D\",\"type\":\"user\",\"body\":\"B\"}]}", "add takes no target", 0},
        {"{\"memories\":[1,2,3,4,5,6,7,8,9]}", "over 8", 0},
        {"{\"memories\":[],\"memories\":[]}", "not one JSON object", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        memory_reply r;
        loom_str why = LOOM_STR_INIT;
        int rc = memory_reply_parse(cases[i].text, strlen(cases[i].text), &r, &why);
        if (cases[i].why) {
            if (rc == 0 || !strstr(str_cstr(&why), cases[i].why))
                fail_msg("case %zu: rc %d, why [%s], want [%s]", i, rc, str_cstr(&why),
                         cases[i].why);
            assert_int_equal(r.n, 0);
        } else {
            if (rc != 0)
                fail_msg("case %zu refused: %s", i, str_cstr(&why));
            assert_int_equal(r.n, cases[i].n);
        }
        memory_reply_free(&r);
        str_free(&why);
    }
}

static void slugs_and_index_lines(void **state)
{
    (void)state;
    char s[MEMORY_SLUG_MAX + 1];
    memory_slugify("  Indentation: Tabs, not Spaces! ", s);
    assert_string_equal(s, "indentation-tabs-not-spaces");
    memory_slugify("../../etc/passwd", s);
    assert_string_equal(s, "etc-passwd");
    memory_slugify("日本", s);
    assert_string_equal(s, "memory");
    assert_true(memory_slug_valid("a-b-1"));
    assert_false(memory_slug_valid("a/b"));
    assert_false(memory_slug_valid("-a"));
    assert_false(memory_slug_valid(""));
    memory_entry e = mk("long", "Name", "", "", 0);
    free(e.description);
    e.description = malloc(400);
    memset(e.description, 0, 400);
    for (int i = 0; i < 100; i++)
        strcat(e.description, "é");
    char *line = memory_index_line(&e);
    assert_true(strlen(line) <= MEMORY_INDEX_LINE_MAX);
    assert_non_null(strstr(line, "…"));
    free(line);
    memory_entry_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(name_terms_weigh_more_than_body_terms),
        cmocka_unit_test(stopwords_and_short_words_never_count),
        cmocka_unit_test(a_named_file_counts_when_mentioned),
        cmocka_unit_test(recency_alone_never_picks_and_order_is_score_then_newer),
        cmocka_unit_test(reply_parser_is_strict),
        cmocka_unit_test(slugs_and_index_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

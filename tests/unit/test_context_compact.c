/* test_context_compact.c — ladder step D: the summarization request (no
 * tools, its prompt, the six sections, the user's words verbatim, the fit
 * into a budget), summary extraction from a reply, the user messages of a
 * chain, and the degenerate-summary guard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/compact.h"
#include "context/tokens.h"
#include "session/record.h"

static char *repeat(const char *head, const char *unit, size_t times, const char *tail)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, head);
    for (size_t i = 0; i < times; i++)
        str_puts(&s, unit);
    str_puts(&s, tail);
    return str_steal(&s);
}

static void free_recs(json_t **r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(r[i]);
}

static const char *request_text(const msg_request *req)
{
    assert_int_equal(req->n_messages, 1);
    assert_int_equal(req->messages[0].role, MSG_ROLE_USER);
    assert_int_equal(req->messages[0].n_blocks, 1);
    assert_int_equal(req->messages[0].blocks[0].kind, MSG_BLOCK_TEXT);
    return req->messages[0].blocks[0].text;
}

static void test_build_request(void **state)
{
    (void)state;
    char *huge = repeat("HEADMARK ", "0123456789", 10000, " TAILMARK");
    char *mid = strstr(huge, "0123456789");
    memcpy(mid + 50000, "MIDMARK", 7);
    json_t *r[8];
    size_t n = 0;
    r[n++] = record_user_text("please fix the parser in src/parse.c");
    r[n++] = record_function_call("k1", "Read", "{\"path\":\"src/parse.c\"}");
    r[n++] = record_tool_result("k1", huge, false);
    r[n++] = record_assistant_text("I will switch to atoi");
    r[n++] = record_user_text("no, use strtol instead\n(and keep the tests green)");
    json_t *skip = record_assistant_text("Interrupted by user");
    record_set_skip_run(skip, true);
    r[n++] = skip;
    json_t *users = compact_user_messages(r, n);
    assert_int_equal(json_array_size(users), 2);

    const int64_t budget = 20000;
    msg_request req = {0};
    compact_build_request(r, n, users, "focus on the tests", budget, &req);
    assert_int_equal(req.n_tools, 0);
    assert_null(req.tools);
    assert_string_equal(req.system, COMPACT_SYSTEM_PROMPT);
    const char *text = request_text(&req);
    for (int i = 0; i < 6; i++)
        if (!strstr(text, compact_sections[i]))
            fail_msg("section \"%s\" missing", compact_sections[i]);
    /* In order. */
    const char *p = text;
    for (int i = 0; i < 6; i++) {
        const char *q = strstr(p, compact_sections[i]);
        assert_non_null(q);
        p = q;
    }
    assert_non_null(strstr(text, "<user_message>\nplease fix the parser in src/parse.c\n"
                                 "</user_message>"));
    assert_non_null(strstr(text, "<user_message>\nno, use strtol instead\n(and keep the tests "
                                 "green)\n</user_message>"));
    assert_non_null(strstr(text, "focus on the tests"));
    assert_non_null(strstr(text, "<analysis>"));
    assert_non_null(strstr(text, "<summary>"));
    assert_non_null(strstr(text, "I will switch to atoi"));
    /* The huge result is cut in the middle: head and tail stay. */
    assert_non_null(strstr(text, "HEADMARK"));
    assert_non_null(strstr(text, "TAILMARK"));
    assert_null(strstr(text, "MIDMARK"));
    assert_true(strlen(text) < 20000);
    assert_true(tokens_estimate_request(&req) <= budget);
    msg_request_free(&req);

    /* Without instructions. */
    memset(&req, 0, sizeof req);
    compact_build_request(r, n, users, NULL, budget, &req);
    assert_null(strstr(request_text(&req), "Additional instructions"));
    msg_request_free(&req);

    json_decref(users);
    free_recs(r, n);
    free(huge);
}

/* A long conversation is cut in the middle to fit the budget; its start
 * (the request) and its end (the current work) stay, and the user's words
 * are never cut. */
static void fit_conversation(const char *unit, int64_t budget)
{
    json_t *r[402];
    size_t n = 0;
    r[n++] = record_user_text("FIRST REQUEST");
    char buf[64];
    for (int i = 0; i < 200; i++) {
        char *t = repeat("", unit, 40, "");
        snprintf(buf, sizeof buf, "k%d", i);
        r[n++] = record_function_call(buf, "Grep", "{\"pattern\":\"x\"}");
        r[n++] = record_tool_result(buf, t, false);
        free(t);
    }
    r[n++] = record_assistant_text("LATEST WORK");
    json_t *users = compact_user_messages(r, n);
    msg_request req = {0};
    compact_build_request(r, n, users, NULL, budget, &req);
    const char *text = request_text(&req);
    assert_non_null(strstr(text, "FIRST REQUEST"));
    assert_non_null(strstr(text, "LATEST WORK"));
    assert_non_null(strstr(text, "<user_message>\nFIRST REQUEST\n</user_message>"));
    assert_non_null(strstr(text, "of the conversation"));
    int64_t est = tokens_estimate_request(&req);
    if (est > budget)
        fail_msg("request of %lld tokens over a budget of %lld", (long long)est,
                 (long long)budget);
    msg_request_free(&req);
    json_decref(users);
    free_recs(r, n);
}

static void test_build_request_fits_budget(void **state)
{
    (void)state;
    fit_conversation("some ascii log line ", 4000);
    fit_conversation("some ascii log line ", 20000);
    /* The estimate counts a non-ASCII character as a token: a cut made in
     * bytes at 3.6 per token would overshoot with Cyrillic or CJK text. */
    fit_conversation("журнал ", 4000);
    fit_conversation("日志行内容", 4000);
    fit_conversation("日志行内容", 20000);
}

static void test_user_messages(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *r[7];
    size_t n = 0;
    r[n++] = record_user_text("one");
    r[n++] = record_summary("earlier", NULL);
    r[n++] = json_loads("{\"type\":\"message\",\"role\":\"user\",\"content\":\"two\"}", 0, &jerr);
    r[n++] = json_loads("{\"type\":\"message\",\"role\":\"user\",\"collapsed\":true,"
                        "\"content\":[{\"type\":\"text\",\"text\":\"fold\"}]}",
                        0, &jerr);
    json_t *note = record_user_text("harness note");
    record_set_skip_run(note, true);
    r[n++] = note;
    r[n++] = record_assistant_text("reply");
    json_t *multi = record_user_text("three");
    json_array_append_new(json_get_arr(multi, "content"),
                          json_pack("{s:s,s:s}", "type", "text", "text", "3b"));
    r[n++] = multi;
    json_t *u = compact_user_messages(r, n);
    assert_int_equal(json_array_size(u), 3);
    assert_string_equal(json_string_value(json_array_get(u, 0)), "one");
    assert_string_equal(json_string_value(json_array_get(u, 1)), "two");
    assert_string_equal(json_string_value(json_array_get(u, 2)), "three\n3b");
    json_decref(u);
    free_recs(r, n);
    u = compact_user_messages(NULL, 0);
    assert_int_equal(json_array_size(u), 0);
    json_decref(u);
}

static void expect_summary(const char *reply, const char *want)
{
    char *s = compact_extract_summary(reply);
    if (!want) {
        if (s)
            fail_msg("expected NULL for \"%s\", got \"%s\"", reply ? reply : "(null)", s);
        return;
    }
    assert_non_null(s);
    assert_string_equal(s, want);
    free(s);
}

static void test_extract_summary(void **state)
{
    (void)state;
    expect_summary("<analysis>\nthinking\n</analysis>\n\n<summary>\n1. Primary Request\nfix it\n"
                   "</summary>\n",
                   "1. Primary Request\nfix it");
    expect_summary("<summary>only this</summary> trailing", "only this");
    expect_summary("<summary>\nno close tag, cut by max_tokens", "no close tag, cut by max_tokens");
    expect_summary("<analysis>scratch</analysis>\nThe summary text.\n", "The summary text.");
    expect_summary("Intro. <analysis>scratch</analysis> Outro.", "Intro.  Outro.");
    expect_summary("  plain summary without tags \n", "plain summary without tags");
    expect_summary("", NULL);
    expect_summary(" \n\t ", NULL);
    expect_summary("<summary>  </summary>", NULL);
    expect_summary("<analysis>only scratch</analysis>", NULL);
    expect_summary(NULL, NULL);
    /* The analysis may name the tag it is about to write. */
    expect_summary("<analysis>Next I write the <summary> with six sections.</analysis>\n"
                   "<summary>real summary</summary>",
                   "real summary");
}

static void test_has_new_history(void **state)
{
    (void)state;
    assert_false(compact_has_new_history(NULL, 0));
    json_t *r[5];
    r[0] = record_user_text("hello");
    r[1] = record_assistant_text("hi");
    r[2] = record_summary("we said hello", NULL);
    r[3] = record_session_meta("/", "p", "m"); /* not conversation */
    r[4] = record_user_text("and now?");
    assert_true(compact_has_new_history(r, 2));
    assert_false(compact_has_new_history(r, 3));          /* ends in a summary */
    assert_false(compact_has_new_history(r, 4));          /* …then only a meta record */
    assert_true(compact_has_new_history(r, 5));           /* summary, then a message */
    assert_false(compact_has_new_history(&r[2], 1));      /* a lone summary */
    assert_false(compact_has_new_history(&r[3], 1));      /* nothing conversational */
    free_recs(r, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_request),
        cmocka_unit_test(test_build_request_fits_budget),
        cmocka_unit_test(test_user_messages),
        cmocka_unit_test(test_extract_summary),
        cmocka_unit_test(test_has_new_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

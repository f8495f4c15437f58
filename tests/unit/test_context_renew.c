/* test_context_renew.c — renew's history compression: the incompressible
 * core (goal, the user's words, recent errors) survives any budget, the rest
 * is kept by relevance to the goal, weight and recency. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "context/renew.h"
#include "session/record.h"

typedef struct chain {
    json_t *r[256];
    size_t n;
} chain;

static void push(chain *c, json_t *rec)
{
    assert_true(c->n < sizeof c->r / sizeof c->r[0]);
    c->r[c->n++] = rec;
}

static void chain_free(chain *c)
{
    for (size_t i = 0; i < c->n; i++)
        json_decref(c->r[i]);
    c->n = 0;
}

static char *filler(const char *word, size_t times)
{
    loom_str s = LOOM_STR_INIT;
    for (size_t i = 0; i < times; i++) {
        str_puts(&s, word);
        str_putc(&s, ' ');
    }
    return str_steal(&s);
}

/* One assistant turn: a call and its result. */
static void turn(chain *c, const char *id, const char *output, bool is_error)
{
    push(c, record_function_call(id, "Bash", "{\"command\":\"make\"}"));
    push(c, record_tool_result(id, output, is_error));
}

static void test_core_kept_over_budget(void **state)
{
    (void)state;
    chain c = {0};
    push(&c, record_user_text("GOAL: refactor the lexer into tokens.c"));
    char *noise = filler("noise", 100);
    char id[16];
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "k%d", i);
        turn(&c, id, noise, false);
    }
    push(&c, record_user_text("CORRECTION: keep the old API"));
    for (int i = 5; i < 8; i++) {
        snprintf(id, sizeof id, "k%d", i);
        turn(&c, id, noise, false);
    }
    json_t *note = record_user_text("HARNESS NOTE");
    record_set_skip_run(note, true);
    push(&c, note);
    renew_stats st;
    char *out = renew_compress(c.r, c.n, "refactor the lexer into tokens.c", 1,
                               RENEW_DEFAULT_LAMBDA, 7, &st);
    assert_non_null(out);
    assert_true(strncmp(out, "[Context renewed at turn 7", 26) == 0);
    assert_non_null(strstr(out, "GOAL: refactor the lexer into tokens.c"));
    assert_non_null(strstr(out, "CORRECTION: keep the old API"));
    assert_null(strstr(out, "noise"));
    assert_null(strstr(out, "HARNESS NOTE"));
    /* Only the core remains: the goal and the correction. */
    assert_int_equal(st.kept, st.core);
    assert_int_equal(st.core, 2);
    assert_true(st.items > st.kept);
    assert_true(st.tokens_before > st.tokens_after);
    /* The goal comes first, labelled as such. */
    const char *g = strstr(out, "goal (verbatim): GOAL");
    const char *u = strstr(out, "the user wrote (verbatim): CORRECTION");
    assert_non_null(g);
    assert_non_null(u);
    assert_true(g < u);
    free(out);

    /* st may be NULL. */
    out = renew_compress(c.r, c.n, NULL, 0, RENEW_DEFAULT_LAMBDA, 1, NULL);
    assert_non_null(strstr(out, "CORRECTION: keep the old API"));
    free(out);
    free(noise);
    chain_free(&c);

    /* An empty history. */
    out = renew_compress(NULL, 0, "goal", 100, RENEW_DEFAULT_LAMBDA, 1, &st);
    assert_true(strncmp(out, "[Context renewed at turn 1", 26) == 0);
    assert_int_equal(st.items, 0);
    free(out);
}

static void test_recent_errors_kept(void **state)
{
    (void)state;
    chain c = {0};
    push(&c, record_user_text("make the build pass"));
    char id[16];
    /* An error 15 turns back: old, compressible. */
    turn(&c, "old", "OLD ERROR: undefined reference", true);
    for (int i = 0; i < 14; i++) {
        snprintf(id, sizeof id, "k%d", i);
        turn(&c, id, "fine", false);
    }
    turn(&c, "new", "NEW ERROR: missing semicolon", true);
    push(&c, record_assistant_text("fixing it"));
    renew_stats st;
    char *out = renew_compress(c.r, c.n, "zzz", 1, RENEW_DEFAULT_LAMBDA, 20, &st);
    assert_non_null(strstr(out, "NEW ERROR: missing semicolon"));
    assert_null(strstr(out, "OLD ERROR"));
    assert_int_equal(st.core, 2); /* the goal and the recent error */
    assert_int_equal(st.kept, 2);
    free(out);
    chain_free(&c);
}

static void test_relevance(void **state)
{
    (void)state;
    chain c = {0};
    push(&c, record_user_text("go"));
    char *rel = filler("lexer tokenizer", 40);
    char *irr = filler("weather forecast", 40);
    /* Both results in one turn: the same age, the same length. */
    push(&c, record_function_call("a", "Read", "{}"));
    push(&c, record_function_call("b", "Read", "{}"));
    push(&c, record_tool_result("a", irr, false));
    push(&c, record_tool_result("b", rel, false));
    renew_stats st;
    /* Room for the core and one result, not two. */
    char *out = renew_compress(c.r, c.n, "rewrite the lexer tokenizer", 250,
                               RENEW_DEFAULT_LAMBDA, 3, &st);
    assert_non_null(strstr(out, "lexer tokenizer"));
    assert_null(strstr(out, "weather"));
    free(out);

    /* With the order swapped the choice is the same. */
    chain_free(&c);
    push(&c, record_user_text("go"));
    push(&c, record_function_call("a", "Read", "{}"));
    push(&c, record_function_call("b", "Read", "{}"));
    push(&c, record_tool_result("a", rel, false));
    push(&c, record_tool_result("b", irr, false));
    out = renew_compress(c.r, c.n, "rewrite the lexer tokenizer", 250, RENEW_DEFAULT_LAMBDA,
                         3, &st);
    assert_non_null(strstr(out, "lexer tokenizer"));
    assert_null(strstr(out, "weather"));
    free(out);
    free(rel);
    free(irr);
    chain_free(&c);
}

static void test_results_outweigh_text(void **state)
{
    (void)state;
    chain c = {0};
    push(&c, record_user_text("go"));
    char *body = filler("lexer", 50);
    loom_str said = LOOM_STR_INIT, got = LOOM_STR_INIT;
    str_printf(&said, "SAID %s", body);
    str_printf(&got, "GOT %s", body);
    /* One turn: the assistant's text, a call, its result (same age). */
    push(&c, record_assistant_text(str_cstr(&said)));
    push(&c, record_function_call("k", "Read", "{}"));
    push(&c, record_tool_result("k", str_cstr(&got), false));
    char *out = renew_compress(c.r, c.n, "lexer", 110, RENEW_DEFAULT_LAMBDA, 2, NULL);
    assert_non_null(strstr(out, "GOT lexer"));
    assert_null(strstr(out, "SAID lexer"));
    free(out);
    /* With room for both, both stay, oldest first. */
    out = renew_compress(c.r, c.n, "lexer", 100000, RENEW_DEFAULT_LAMBDA, 2, NULL);
    const char *s = strstr(out, "SAID lexer"), *g = strstr(out, "GOT lexer");
    assert_non_null(s);
    assert_non_null(g);
    assert_true(s < g);
    free(out);
    str_free(&said);
    str_free(&got);
    free(body);
    chain_free(&c);

    /* Ties go to the newer item, and the result is always the newer one in a
     * turn; so give the text a slightly higher relevance (10 of 10 goal
     * words against 9 of 10): only the weight (1.5 against 1.2) keeps the
     * result. */
    const char *goal = "alpha bravo charlie delta echo foxtrot golf hotel india juliet";
    char *all = filler("alpha bravo charlie delta echo foxtrot golf hotel india juliet", 5);
    char *nine = filler("alpha bravo charlie delta echo foxtrot golf hotel india xxxxxx", 5);
    str_printf(&said, "SAID %s", all);
    str_printf(&got, "GOT %s", nine);
    push(&c, record_user_text("go"));
    push(&c, record_assistant_text(str_cstr(&said)));
    push(&c, record_function_call("k", "Read", "{}"));
    push(&c, record_tool_result("k", str_cstr(&got), false));
    out = renew_compress(c.r, c.n, goal, 110, RENEW_DEFAULT_LAMBDA, 2, NULL);
    assert_non_null(strstr(out, "GOT alpha"));
    assert_null(strstr(out, "SAID alpha"));
    free(out);
    str_free(&said);
    str_free(&got);
    free(all);
    free(nine);
    chain_free(&c);
}

static void test_recency(void **state)
{
    (void)state;
    chain c = {0};
    push(&c, record_user_text("go"));
    char *body = filler("data", 60);
    loom_str a = LOOM_STR_INIT, b = LOOM_STR_INIT;
    str_printf(&a, "OLDER %s", body);
    str_printf(&b, "NEWER %s", body);
    turn(&c, "a", str_cstr(&a), false);
    for (int i = 0; i < 5; i++)
        push(&c, record_assistant_text("ok"));
    push(&c, record_user_text("continue"));
    turn(&c, "b", str_cstr(&b), false);
    char *out = renew_compress(c.r, c.n, "unrelated", 120, 0.5, 4, NULL);
    assert_non_null(strstr(out, "NEWER"));
    assert_null(strstr(out, "OLDER"));
    free(out);
    str_free(&a);
    str_free(&b);
    free(body);
    chain_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_kept_over_budget),
        cmocka_unit_test(test_recent_errors_kept),
        cmocka_unit_test(test_relevance),
        cmocka_unit_test(test_results_outweigh_text),
        cmocka_unit_test(test_recency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

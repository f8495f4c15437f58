/* test_context_ladder.c — the compaction ladder: step thresholds, config
 * validation, snip / micro / collapse over a view, the view through recorded
 * edits, and tolerance of malformed context-edit records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/ladder.h"
#include "session/history.h"
#include "session/record.h"

/* --- helpers ------------------------------------------------------------------ */

/* head + n filler bytes + tail; caller frees. */
static char *big(const char *head, char fill, size_t n, const char *tail)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, head);
    for (size_t i = 0; i < n; i++)
        str_putc(&s, fill);
    str_puts(&s, tail);
    return str_steal(&s);
}

typedef struct chain {
    json_t *r[128];
    size_t n;
} chain;

static json_t *push(chain *c, json_t *rec)
{
    assert_true(c->n < sizeof c->r / sizeof c->r[0]);
    c->r[c->n++] = rec;
    return rec;
}

static void chain_free(chain *c)
{
    for (size_t i = 0; i < c->n; i++)
        json_decref(c->r[i]);
    c->n = 0;
}

static json_t *result_big(const char *call_id, size_t bytes)
{
    char *out = big("HEAD-", 'x', bytes, "-TAIL");
    json_t *r = record_tool_result(call_id, out, false);
    free(out);
    return r;
}

/* The text of a message record's first text block. */
static const char *msg_text(const json_t *rec)
{
    return json_get_str(json_array_get(json_get_arr(rec, "content"), 0), "text", NULL);
}

/* Applies one edit record over c and returns the view (freed by caller). */
typedef struct view {
    json_t **v;
    size_t n;
    json_t *keep;
} view;

static void view_of(const ladder_edits *e, const chain *c, view *out)
{
    ladder_view(e, c->r, c->n, &out->v, &out->n, &out->keep);
}

static void view_free(view *v)
{
    free(v->v);
    json_decref(v->keep);
    memset(v, 0, sizeof *v);
}

/* history_from_records over v: no synthesized results, no orphans, and every
 * tool_use of an assistant message answered in the next user message. */
static void assert_paired(json_t *const *v, size_t n)
{
    msg_request req = {0};
    history_stats st;
    history_from_records(v, n, &req, &st);
    assert_int_equal(st.n_synthesized, 0);
    assert_int_equal(st.n_orphans, 0);
    for (size_t i = 0; i < req.n_messages; i++) {
        msg_message *m = &req.messages[i];
        if (m->role != MSG_ROLE_ASSISTANT)
            continue;
        for (size_t b = 0; b < m->n_blocks; b++) {
            if (m->blocks[b].kind != MSG_BLOCK_TOOL_USE)
                continue;
            assert_true(i + 1 < req.n_messages);
            msg_message *next = &req.messages[i + 1];
            assert_int_equal(next->role, MSG_ROLE_USER);
            bool found = false;
            for (size_t k = 0; k < next->n_blocks; k++)
                found |= next->blocks[k].kind == MSG_BLOCK_TOOL_RESULT &&
                         !strcmp(next->blocks[k].id, m->blocks[b].id);
            assert_true(found);
        }
    }
    msg_request_free(&req);
}

/* --- thresholds and config ------------------------------------------------------ */

static void test_step_for_thresholds(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c);
    assert_int_equal(ladder_step_for(&c, 0.0), LADDER_NONE);
    assert_int_equal(ladder_step_for(&c, 0.4999), LADDER_NONE);
    assert_int_equal(ladder_step_for(&c, 0.50), LADDER_SNIP);   /* exactly at A */
    assert_int_equal(ladder_step_for(&c, 0.5999), LADDER_SNIP);
    assert_int_equal(ladder_step_for(&c, 0.60), LADDER_MICRO);  /* exactly at B */
    assert_int_equal(ladder_step_for(&c, 0.70), LADDER_COLLAPSE);
    assert_int_equal(ladder_step_for(&c, 0.7999), LADDER_COLLAPSE);
    assert_int_equal(ladder_step_for(&c, 0.80), LADDER_COMPACT);
    assert_int_equal(ladder_step_for(&c, 0.9999), LADDER_COMPACT);
    assert_int_equal(ladder_step_for(&c, 1.0), LADDER_RENEW);
    assert_int_equal(ladder_step_for(&c, 2.5), LADDER_RENEW);
    assert_string_equal(ladder_step_name(LADDER_COLLAPSE), "collapse");
    assert_string_equal(ladder_step_name(LADDER_RENEW), "renew");
    assert_string_equal(ladder_step_name((ladder_step)99), "none");

    /* Custom thresholds are honoured. */
    c.snip = 0.2;
    c.micro = 0.3;
    c.collapse = 0.4;
    c.compact = 0.9;
    assert_int_equal(ladder_step_for(&c, 0.3), LADDER_MICRO);
    assert_int_equal(ladder_step_for(&c, 0.85), LADDER_COLLAPSE);
}

static json_t *parse(const char *s)
{
    json_error_t jerr;
    json_t *v = json_loads(s, 0, &jerr);
    assert_non_null(v);
    return v;
}

static int from_json(ladder_config *c, const char *s, char *why, size_t why_len)
{
    ladder_config_default(c);
    why[0] = '\0';
    json_t *v = parse(s);
    int rc = ladder_config_from_json(c, v, why, why_len);
    json_decref(v);
    return rc;
}

static void test_config_from_json(void **state)
{
    (void)state;
    ladder_config c;
    char why[256];
    assert_int_equal(from_json(&c, "{\"snip\":0.4,\"micro\":0.5,\"collapse\":0.6,\"compact\":0.9,"
                                   "\"keep_results\":5,\"keep_turns\":2}",
                               why, sizeof why),
                     0);
    assert_true(c.snip == 0.4 && c.micro == 0.5 && c.collapse == 0.6 && c.compact == 0.9);
    assert_int_equal(c.keep_results, 5);
    assert_int_equal(c.keep_turns, 2);

    /* Absent keys keep the defaults; NULL is no configuration. */
    assert_int_equal(from_json(&c, "{}", why, sizeof why), 0);
    assert_true(c.snip == 0.50 && c.compact == 0.80 && c.keep_results == 3);
    ladder_config_default(&c);
    assert_int_equal(ladder_config_from_json(&c, NULL, why, sizeof why), 0);

    static const char *const bad[] = {
        "[]",                                       /* not an object */
        "{\"snip\":0.6,\"micro\":0.5}",             /* decreasing */
        "{\"micro\":0.5}",                          /* equal to snip's default */
        "{\"collapse\":0.85}",                      /* above compact's default */
        "{\"compact\":1.0}",                        /* out of (0, 1) */
        "{\"compact\":1.5}",
        "{\"snip\":0}",
        "{\"snip\":-0.1}",
        "{\"snip\":\"0.3\"}",                       /* wrong type */
        "{\"snip\":true}",
        "{\"keep_results\":-1}",
        "{\"keep_results\":1001}",
        "{\"keep_results\":2.5}",
        "{\"keep_turns\":0}",
        "{\"keep_turns\":\"4\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (from_json(&c, bad[i], why, sizeof why) != -1)
            fail_msg("accepted %s", bad[i]);
        assert_true(why[0] != '\0');
    }
    assert_int_equal(from_json(&c, "{\"keep_results\":0}", why, sizeof why), 0);
    assert_int_equal(c.keep_results, 0);
}

/* --- snip ----------------------------------------------------------------------- */

static void test_snip_largest_result(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c);
    const int64_t window = 10000; /* oversized: over 1,000 tokens */
    chain ch = {0};
    push(&ch, record_user_text("look at the logs"));
    push(&ch, record_function_call("small", "Read", "{\"path\":\"a\"}"));
    push(&ch, result_big("small", 500));
    push(&ch, record_function_call("mid", "Read", "{\"path\":\"b\"}"));
    push(&ch, result_big("mid", 5000));
    push(&ch, record_function_call("large", "Read", "{\"path\":\"c\"}"));
    push(&ch, result_big("large", 10000));
    push(&ch, record_assistant_text("they are long"));
    char *huge = big("please ", 'u', 30000, " thanks");
    push(&ch, record_user_text(huge)); /* the request at hand: never cut */

    ladder_edits e;
    ladder_edits_init(&e);
    view v;
    view_of(&e, &ch, &v);
    int64_t saved = -1;
    json_t *edit = ladder_snip(&c, v.v, v.n, window, &saved);
    assert_non_null(edit);
    assert_string_equal(record_type(edit), RECORD_CONTEXT_EDIT);
    assert_string_equal(json_get_str(edit, "kind", ""), "snip");
    assert_true(saved > 0);
    assert_int_equal(json_get_int(edit, "savedTokens", -1), saved);
    json_t *results = json_get_obj(edit, "results");
    assert_non_null(results);
    assert_int_equal(json_object_size(results), 1);
    const char *cut = json_get_str(results, "large", NULL);
    assert_non_null(cut);
    assert_true(strncmp(cut, "HEAD-", 5) == 0);
    assert_true(strlen(cut) > 5 && !strcmp(cut + strlen(cut) - 5, "-TAIL"));
    assert_non_null(strstr(cut, "cut from the middle"));
    assert_true(strlen(cut) < 10000);
    /* Well under the limit afterwards, so it is not picked again. */
    assert_true(ladder_record_tokens(v.v[6]) - saved < window / 10);
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_free(&v);

    /* Through the view the result is cut; the record on file is not. */
    view_of(&e, &ch, &v);
    assert_int_equal(v.n, ch.n);
    assert_string_equal(json_get_str(v.v[6], "output", ""), cut);
    assert_int_equal(strlen(json_get_str(ch.r[6], "output", "")), 10010);

    /* The next snip takes the next largest; then nothing is oversized but
     * the newest user message, which stays whole. */
    edit = ladder_snip(&c, v.v, v.n, window, &saved);
    assert_non_null(edit);
    assert_non_null(json_get_str(json_get_obj(edit, "results"), "mid", NULL));
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_free(&v);
    view_of(&e, &ch, &v);
    saved = -1;
    assert_null(ladder_snip(&c, v.v, v.n, window, &saved));
    assert_int_equal(saved, 0);
    assert_ptr_equal(v.v[8], ch.r[8]);
    view_free(&v);

    ladder_edits_free(&e);
    chain_free(&ch);
    free(huge);
}

static void test_snip_older_user_message_and_nothing(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c);
    chain ch = {0};
    char *paste = big("LOG START ", 'p', 20000, " LOG END");
    json_t *old = push(&ch, record_user_text(paste));
    push(&ch, record_assistant_text("read it"));
    push(&ch, record_user_text("short follow-up"));

    int64_t saved;
    json_t *edit = ladder_snip(&c, ch.r, ch.n, 10000, &saved);
    assert_non_null(edit);
    const char *cut = json_get_str(json_get_obj(edit, "messages"), record_id(old), NULL);
    assert_non_null(cut);
    assert_true(strncmp(cut, "LOG START ", 10) == 0);
    assert_non_null(strstr(cut, " LOG END"));
    assert_non_null(strstr(cut, "cut from the middle"));

    ladder_edits e;
    ladder_edits_init(&e);
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view v;
    view_of(&e, &ch, &v);
    assert_string_equal(msg_text(v.v[0]), cut);
    assert_string_equal(msg_text(ch.r[0]), paste);
    view_free(&v);
    ladder_edits_free(&e);

    /* Nothing oversized: a big window. */
    assert_null(ladder_snip(&c, ch.r, ch.n, 10000000, &saved));
    assert_int_equal(saved, 0);
    chain_free(&ch);

    /* Only the newest user message is big: never cut. */
    push(&ch, record_user_text("hi"));
    push(&ch, record_assistant_text("hello"));
    push(&ch, record_user_text(paste));
    assert_null(ladder_snip(&c, ch.r, ch.n, 10000, &saved));
    chain_free(&ch);

    /* An empty view. */
    assert_null(ladder_snip(&c, NULL, 0, 10000, &saved));
    free(paste);
}

/* An image counts 1,000 tokens but cannot be cut as text: an older message
 * carrying images must not hide a real oversized result from the snip. */
static void test_snip_not_blocked_by_images(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c);
    chain ch = {0};
    json_t *shot = push(&ch, record_user_text("see the screenshots"));
    record_add_image(shot, "image/png", "AAAA");
    record_add_image(shot, "image/png", "BBBB");
    push(&ch, record_function_call("k", "Bash", "{\"command\":\"make\"}"));
    push(&ch, result_big("k", 5000)); /* ~1,400 tokens */
    push(&ch, record_user_text("why does it fail?"));

    int64_t saved;
    json_t *edit = ladder_snip(&c, ch.r, ch.n, 10000, &saved);
    assert_non_null(edit);
    assert_non_null(json_get_str(json_get_obj(edit, "results"), "k", NULL));
    json_decref(edit);
    chain_free(&ch);

    /* An older message with a long paste and a screenshot: the text is cut,
     * the image stays in the view. */
    char *paste = big("PASTE ", 'p', 20000, " END");
    shot = push(&ch, record_user_text(paste));
    record_add_image(shot, "image/png", "AAAA");
    push(&ch, record_assistant_text("ok"));
    push(&ch, record_user_text("next"));
    edit = ladder_snip(&c, ch.r, ch.n, 10000, &saved);
    assert_non_null(edit);
    ladder_edits e;
    ladder_edits_init(&e);
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view v;
    view_of(&e, &ch, &v);
    json_t *content = json_get_arr(v.v[0], "content");
    assert_int_equal(json_array_size(content), 2);
    assert_non_null(strstr(msg_text(v.v[0]), "cut from the middle"));
    assert_string_equal(json_get_str(json_array_get(content, 1), "type", ""), "image");
    view_free(&v);
    ladder_edits_free(&e);
    chain_free(&ch);
    free(paste);
}

/* --- micro ---------------------------------------------------------------------- */

static void test_micro(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c); /* K = 3 */
    chain ch = {0};
    push(&ch, record_user_text("go"));
    char id[16];
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "k%d", i);
        push(&ch, record_function_call(id, "Read", "{}"));
        if (i == 1)
            push(&ch, record_tool_result(id, "ok", false)); /* short: not worth clearing */
        else
            push(&ch, result_big(id, 1000));
    }
    push(&ch, record_assistant_text("done"));

    ladder_edits e;
    ladder_edits_init(&e);
    view v;
    view_of(&e, &ch, &v);
    int64_t saved = 0;
    json_t *edit = ladder_micro(&c, v.v, v.n, &saved);
    assert_non_null(edit);
    assert_string_equal(json_get_str(edit, "kind", ""), "micro");
    assert_true(saved > 0);
    assert_int_equal(json_get_int(edit, "savedTokens", -1), saved);
    json_t *results = json_get_obj(edit, "results");
    assert_int_equal(json_object_size(results), 2); /* k0 and k2; k1 is short */
    assert_non_null(json_get_str(results, "k0", NULL));
    assert_null(json_object_get(results, "k1"));
    assert_non_null(json_get_str(results, "k2", NULL));
    for (int i = 3; i < 6; i++) {
        snprintf(id, sizeof id, "k%d", i);
        assert_null(json_object_get(results, id)); /* the newest three stay whole */
    }
    assert_true(strncmp(json_get_str(results, "k0", ""), "[Old tool result cleared", 24) == 0);
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_free(&v);

    view_of(&e, &ch, &v);
    assert_true(strncmp(json_get_str(v.v[2], "output", ""), "[Old tool result cleared", 24) == 0);
    assert_string_equal(json_get_str(v.v[4], "output", ""), "ok");
    assert_ptr_equal(v.v[12], ch.r[12]); /* k5's result: untouched */
    assert_paired(v.v, v.n);

    /* Idempotent: a second micro over the edited view frees nothing. */
    saved = -1;
    assert_null(ladder_micro(&c, v.v, v.n, &saved));
    assert_int_equal(saved, 0);
    view_free(&v);

    /* K = 0 clears every long result; too few results → NULL. */
    c.keep_results = 0;
    assert_non_null(edit = ladder_micro(&c, ch.r, ch.n, &saved));
    assert_int_equal(json_object_size(json_get_obj(edit, "results")), 5);
    json_decref(edit);
    c.keep_results = 10;
    assert_null(ladder_micro(&c, ch.r, ch.n, &saved));

    ladder_edits_free(&e);
    chain_free(&ch);
}

/* --- collapse ------------------------------------------------------------------- */

/* u0, then turns t = 0..n-1: assistant text, call, result, user message. */
static void build_turns(chain *ch, int from, int n)
{
    char buf[128];
    for (int t = from; t < from + n; t++) {
        snprintf(buf, sizeof buf, "turn %d: reading", t);
        push(ch, record_assistant_text(buf));
        snprintf(buf, sizeof buf, "k%d", t);
        push(ch, record_function_call(buf, "Read", "{\"path\":\"src/lexer.c\"}"));
        json_t *r = result_big(buf, 2000);
        push(ch, r);
        if (t == 1)
            snprintf(buf, sizeof buf, "no — use strtol,\nnot atoi (message %d) «ß»", t);
        else
            snprintf(buf, sizeof buf, "user message %d", t);
        push(ch, record_user_text(buf));
    }
}

static void test_collapse(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c); /* keep 4 turns */
    chain ch = {0};
    push(&ch, record_user_text("fix the lexer"));
    build_turns(&ch, 0, 8);
    /* The first folded record (turn 0's assistant text) and the last (the
     * user message after turn 3). */
    json_t *first = ch.r[1], *last = ch.r[16];
    assert_string_equal(msg_text(last), "user message 3");

    ladder_edits e;
    ladder_edits_init(&e);
    view v;
    view_of(&e, &ch, &v);
    int64_t saved = 0;
    json_t *edit = ladder_collapse(&c, v.v, v.n, &saved);
    assert_non_null(edit);
    assert_string_equal(json_get_str(edit, "kind", ""), "collapse");
    assert_true(saved > 0);
    json_t *col = json_get_obj(edit, "collapse");
    assert_string_equal(json_get_str(col, "first", ""), record_id(first));
    assert_string_equal(json_get_str(col, "last", ""), record_id(last));
    const char *text = json_get_str(col, "text", "");
    assert_non_null(strstr(text, "no — use strtol,\nnot atoi (message 1) «ß»")); /* verbatim */
    assert_non_null(strstr(text, "user message 0"));
    assert_non_null(strstr(text, "user message 2"));
    assert_non_null(strstr(text, "user message 3"));
    assert_null(strstr(text, "user message 4"));
    assert_non_null(strstr(text, "Read"));
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_free(&v);

    view_of(&e, &ch, &v);
    /* u0, the fold, then turns 4..7 whole (4 records each). */
    assert_int_equal(v.n, 1 + 1 + 16);
    assert_ptr_equal(v.v[0], ch.r[0]);
    assert_true(record_is_user_message(v.v[1]));
    assert_true(json_get_bool(v.v[1], "collapsed", false));
    assert_string_equal(msg_text(v.v[1]), text);
    for (size_t i = 2; i < v.n; i++)
        assert_ptr_equal(v.v[i], ch.r[17 + i - 2]);
    assert_paired(v.v, v.n);

    /* Nothing left to fold: only the four kept turns remain. */
    assert_null(ladder_collapse(&c, v.v, v.n, &saved));
    view_free(&v);

    /* More turns: a second fold after the first; both apply. */
    build_turns(&ch, 8, 4);
    view_of(&e, &ch, &v);
    edit = ladder_collapse(&c, v.v, v.n, &saved);
    assert_non_null(edit);
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_free(&v);
    view_of(&e, &ch, &v);
    size_t folds = 0;
    for (size_t i = 0; i < v.n; i++)
        folds += json_get_bool(v.v[i], "collapsed", false);
    assert_true(folds >= 1);
    assert_int_equal(v.n - folds - 1, 16); /* the newest four turns stay whole */
    assert_paired(v.v, v.n);
    /* Every user message survives verbatim somewhere in the view. */
    char want[64];
    for (int t = 0; t < 12; t++) {
        if (t == 1)
            continue;
        snprintf(want, sizeof want, "user message %d", t);
        bool found = false;
        for (size_t i = 0; i < v.n && !found; i++)
            found = record_is_user_message(v.v[i]) && strstr(msg_text(v.v[i]), want);
        if (!found)
            fail_msg("lost \"%s\"", want);
    }
    view_free(&v);

    ladder_edits_free(&e);
    chain_free(&ch);
}

static void test_collapse_too_few_turns(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c);
    chain ch = {0};
    push(&ch, record_user_text("fix the lexer"));
    build_turns(&ch, 0, 5); /* keep 4 + only one foldable */
    int64_t saved = -1;
    assert_null(ladder_collapse(&c, ch.r, ch.n, &saved));
    assert_int_equal(saved, 0);
    c.keep_turns = 3;
    json_t *edit = ladder_collapse(&c, ch.r, ch.n, &saved);
    assert_non_null(edit);
    json_decref(edit);
    chain_free(&ch);
    assert_null(ladder_collapse(&c, NULL, 0, &saved));
}

/* A user message whose content is a bare string (history.c accepts it) is
 * still carried verbatim into the fold. */
static void test_collapse_string_content(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c);
    c.keep_turns = 1;
    chain ch = {0};
    push(&ch, record_user_text("start"));
    build_turns(&ch, 0, 1);
    push(&ch, parse("{\"type\":\"message\",\"id\":\"s1\",\"role\":\"user\","
                    "\"content\":\"PLAIN STRING CORRECTION\"}"));
    assert_true(ladder_record_tokens(ch.r[ch.n - 1]) > 8);
    build_turns(&ch, 1, 2);
    int64_t saved;
    json_t *edit = ladder_collapse(&c, ch.r, ch.n, &saved);
    assert_non_null(edit);
    const char *text = json_get_str(json_get_obj(edit, "collapse"), "text", "");
    assert_non_null(strstr(text, "PLAIN STRING CORRECTION"));
    json_decref(edit);
    chain_free(&ch);
}

/* A fold that starts right after a turn whose calls are answered later in
 * the same user-side run still keeps calls and results together. */
static void test_collapse_parallel_calls(void **state)
{
    (void)state;
    ladder_config c;
    ladder_config_default(&c);
    c.keep_turns = 1;
    chain ch = {0};
    push(&ch, record_user_text("start"));
    char id[16];
    for (int t = 0; t < 4; t++) {
        push(&ch, record_reasoning("think", "sig", NULL));
        for (int k = 0; k < 3; k++) {
            snprintf(id, sizeof id, "t%dk%d", t, k);
            push(&ch, record_function_call(id, "Grep", "{\"pattern\":\"x\"}"));
        }
        for (int k = 2; k >= 0; k--) {
            snprintf(id, sizeof id, "t%dk%d", t, k);
            push(&ch, result_big(id, 1500));
        }
    }
    int64_t saved;
    json_t *edit = ladder_collapse(&c, ch.r, ch.n, &saved);
    assert_non_null(edit);
    ladder_edits e;
    ladder_edits_init(&e);
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view v;
    view_of(&e, &ch, &v);
    assert_paired(v.v, v.n);
    view_free(&v);
    ladder_edits_free(&e);
    chain_free(&ch);
}

/* --- the view and its edits ------------------------------------------------------ */

static void test_view_applies_edits(void **state)
{
    (void)state;
    chain ch = {0};
    json_t *u0 = push(&ch, record_user_text("original request"));
    json_t *a1 = push(&ch, record_assistant_text("step"));
    push(&ch, record_function_call("k1", "Read", "{}"));
    push(&ch, record_tool_result("k1", "long output", false));
    json_t *u2 = push(&ch, record_user_text("more"));
    push(&ch, record_assistant_text("done"));

    ladder_edits e;
    ladder_edits_init(&e);
    view v;
    /* No edits: the records themselves. */
    view_of(&e, &ch, &v);
    assert_int_equal(v.n, ch.n);
    for (size_t i = 0; i < v.n; i++)
        assert_ptr_equal(v.v[i], ch.r[i]);
    assert_int_equal(json_array_size(v.keep), 0);
    view_free(&v);

    json_t *edit = record_new(RECORD_CONTEXT_EDIT);
    json_object_set_new(edit, "results", json_pack("{s:s}", "k1", "cleared"));
    json_object_set_new(edit, "messages", json_pack("{s:s}", record_id(u0), "shortened"));
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_of(&e, &ch, &v);
    assert_int_equal(v.n, ch.n);
    assert_string_equal(json_get_str(v.v[3], "output", ""), "cleared");
    assert_string_equal(msg_text(v.v[0]), "shortened");
    assert_string_equal(record_id(v.v[0]), record_id(u0));
    assert_string_equal(msg_text(u0), "original request"); /* the record is untouched */
    assert_string_equal(json_get_str(ch.r[3], "output", ""), "long output");
    view_free(&v);

    /* A collapse whose end is not in the chain (a rewind cut it) is ignored. */
    edit = record_new(RECORD_CONTEXT_EDIT);
    json_object_set_new(edit, "collapse", json_pack("{s:s,s:s,s:s}", "first", record_id(a1),
                                                    "last", "not-in-this-chain", "text",
                                                    "FOLDED"));
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_of(&e, &ch, &v);
    assert_int_equal(v.n, ch.n);
    for (size_t i = 0; i < v.n; i++)
        assert_false(json_get_bool(v.v[i], "collapsed", false));
    view_free(&v);

    /* One whose end is: a1..u2 become one user text. */
    edit = record_new(RECORD_CONTEXT_EDIT);
    json_object_set_new(edit, "collapse", json_pack("{s:s,s:s,s:s}", "first", record_id(a1),
                                                    "last", record_id(u2), "text", "FOLDED"));
    ladder_edits_add(&e, edit);
    json_decref(edit);
    view_of(&e, &ch, &v);
    assert_int_equal(v.n, 3);
    assert_string_equal(msg_text(v.v[0]), "shortened");
    assert_true(record_is_user_message(v.v[1]));
    assert_string_equal(msg_text(v.v[1]), "FOLDED");
    assert_ptr_equal(v.v[2], ch.r[5]);
    assert_paired(v.v, v.n);
    view_free(&v);

    ladder_edits_free(&e);
    chain_free(&ch);
}

static void test_edits_ignore_malformed(void **state)
{
    (void)state;
    static const char *const recs[] = {
        "{\"type\":\"context-edit\",\"results\":\"k1\"}",
        "{\"type\":\"context-edit\",\"results\":{\"k1\":5,\"k2\":null,\"k3\":[\"x\"]}}",
        "{\"type\":\"context-edit\",\"messages\":[\"u1\"]}",
        "{\"type\":\"context-edit\",\"messages\":{\"u1\":{\"text\":\"x\"}}}",
        "{\"type\":\"context-edit\",\"collapse\":\"all\"}",
        "{\"type\":\"context-edit\",\"collapse\":{\"first\":1,\"last\":\"b\",\"text\":\"t\"}}",
        "{\"type\":\"context-edit\",\"collapse\":{\"first\":\"a\",\"last\":2,\"text\":\"t\"}}",
        "{\"type\":\"context-edit\",\"collapse\":{\"first\":\"a\",\"last\":\"b\",\"text\":3}}",
        "{\"type\":\"context-edit\",\"collapse\":{\"first\":\"a\",\"last\":\"b\"}}",
        "{\"type\":\"context-edit\",\"collapse\":[\"a\",\"b\",\"t\"]}",
        "{\"type\":7,\"results\":{\"k1\":\"x\"}}",
        "{\"results\":{\"k1\":\"x\"}}",
        "{\"type\":\"message\",\"results\":{\"k1\":\"x\"}}",
        "[\"context-edit\"]",
        "\"context-edit\"",
        "null",
    };
    ladder_edits e;
    ladder_edits_init(&e);
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
        json_error_t jerr;
        json_t *r = json_loads(recs[i], JSON_DECODE_ANY, &jerr);
        assert_non_null(r);
        ladder_edits_add(&e, r);
        json_decref(r);
    }
    ladder_edits_add(&e, NULL);
    assert_int_equal(json_object_size(e.results), 0);
    assert_int_equal(json_object_size(e.messages), 0);
    assert_int_equal(json_object_size(e.collapses), 0);

    /* A well-formed part next to a malformed one is still taken. */
    json_t *r = parse("{\"type\":\"context-edit\",\"results\":{\"k1\":\"ok\",\"k2\":1}}");
    ladder_edits_add(&e, r);
    json_decref(r);
    assert_int_equal(json_object_size(e.results), 1);

    /* The view over a chain with those edits still works. */
    chain ch = {0};
    push(&ch, record_user_text("x"));
    push(&ch, record_function_call("k1", "Read", "{}"));
    push(&ch, record_tool_result("k1", "full", false));
    view v;
    view_of(&e, &ch, &v);
    assert_string_equal(json_get_str(v.v[2], "output", ""), "ok");
    view_free(&v);
    chain_free(&ch);
    ladder_edits_free(&e);
}

static void test_record_tokens(void **state)
{
    (void)state;
    json_t *r = record_tool_result("k", "", false);
    assert_int_equal(ladder_record_tokens(r), 8);
    json_decref(r);
    r = record_user_text("hello");
    record_add_image(r, "image/png", "AAAA");
    assert_int_equal(ladder_record_tokens(r), 8 + 2 + 1000);
    json_decref(r);
    r = record_session_meta("/", "p", "m");
    assert_int_equal(ladder_record_tokens(r), 0);
    json_decref(r);
    assert_int_equal(ladder_record_tokens(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_for_thresholds),
        cmocka_unit_test(test_config_from_json),
        cmocka_unit_test(test_snip_largest_result),
        cmocka_unit_test(test_snip_older_user_message_and_nothing),
        cmocka_unit_test(test_snip_not_blocked_by_images),
        cmocka_unit_test(test_micro),
        cmocka_unit_test(test_collapse),
        cmocka_unit_test(test_collapse_too_few_turns),
        cmocka_unit_test(test_collapse_string_content),
        cmocka_unit_test(test_collapse_parallel_calls),
        cmocka_unit_test(test_view_applies_edits),
        cmocka_unit_test(test_edits_ignore_malformed),
        cmocka_unit_test(test_record_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

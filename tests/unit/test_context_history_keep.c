/* test_context_history_keep.c — the kept history (context/history_keep.h)
 * makes the same request bytes as the records do, turn after turn, through
 * what invalidates it: a rewind, a summary, an edit, a call still without
 * its result, a blank reply that merges two user runs, another transcript.
 * Each step encodes the kept request twice (the second time from the kept
 * wire bytes) and once made from the records, with the Anthropic and the
 * Chat codecs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/history_keep.h"
#include "context/ladder.h"
#include "provider/provider.h"
#include "session/history.h"
#include "session/record.h"
#include "session/transcript.h"

typedef struct fixture {
    char dir[64];
    transcript *t;
    ladder_edits edits;
    history_keep keep;
    int calls;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/loom-keep-test.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    loom_error err;
    f->t = transcript_create(f->dir, "/tmp", "anthropic", "m", &err);
    assert_non_null(f->t);
    ladder_edits_init(&f->edits);
    history_keep_init(&f->keep);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    history_keep_free(&f->keep);
    ladder_edits_free(&f->edits);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    transcript_free(f->t);
    free(f);
    return 0;
}

static void append(fixture *f, json_t *rec)
{
    loom_error err;
    assert_int_equal(transcript_append_new(f->t, rec, &err), 0);
}

static char *encode(const provider_codec_ops *codec, const msg_request *req)
{
    provider_config cfg = {.kind = PROVIDER_ANTHROPIC, .model = "m",
                           .base_url = "http://127.0.0.1:9/v1"};
    provider_http_call call = {0};
    loom_error err;
    assert_int_equal(codec->encode(req, &cfg, &call, &err), 0);
    char *body = str_steal(&call.body);
    provider_http_call_free(&call);
    return body;
}

/* The request as the kept history makes it and as the records do: the
 * same bytes, each time. Returns how many messages it borrowed. */
static size_t same_as_records(fixture *f)
{
    msg_request kept = {0}, fresh = {0};
    int64_t borrowed_tokens = 0;
    assert_true(history_keep_request(&f->keep, f->t, &f->edits, &kept, &borrowed_tokens));
    json_t **chain = NULL, **view = NULL, *copies = NULL;
    size_t nc = 0, nv = 0;
    assert_int_equal(transcript_active(f->t, &chain, &nc), 0);
    ladder_view(&f->edits, chain, nc, &view, &nv, &copies);
    history_from_records(view, nv, &fresh, NULL);
    free(chain);
    free(view);
    /* The codecs that keep a message's bytes, each twice: the second
     * encode writes the kept bytes. */
    const provider_codec_ops *codecs[] = {&anthropic_codec, &openai_chat_codec};
    for (size_t c = 0; c < 2; c++) {
        char *a = encode(codecs[c], &kept), *again = encode(codecs[c], &kept),
             *b = encode(codecs[c], &fresh);
        assert_string_equal(a, b);
        assert_string_equal(again, b);
        free(a);
        free(again);
        free(b);
    }
    size_t borrowed = kept.n_borrowed;
    msg_request_free(&kept);
    msg_request_free(&fresh);
    json_decref(copies);
    return borrowed;
}

/* One model turn: a text and a Read call, then its result. */
static void tool_turn(fixture *f, bool with_result)
{
    char id[32], out[64];
    snprintf(id, sizeof id, "call_%d", ++f->calls);
    snprintf(out, sizeof out, "contents %d", f->calls);
    append(f, record_assistant_text("reading"));
    append(f, record_function_call(id, "Read", "{\"file_path\":\"a\"}"));
    if (with_result)
        append(f, record_tool_result(id, out, false));
}

static void test_turns_are_kept(void **state)
{
    fixture *f = *state;
    append(f, record_user_text("read a again and again"));
    assert_int_equal(same_as_records(f), 0);
    size_t last = 0;
    for (int i = 0; i < 20; i++) {
        tool_turn(f, true);
        size_t borrowed = same_as_records(f);
        assert_true(borrowed >= last);
        last = borrowed;
    }
    /* All but the last run are borrowed, and the keep started once. */
    assert_true(last >= 38);
    assert_int_equal(f->keep.rebuilds, 1);
}

static void test_pending_call_then_result(void **state)
{
    fixture *f = *state;
    append(f, record_user_text("go"));
    tool_turn(f, true);
    same_as_records(f);
    /* The process died while the tool ran: the call gets a made-up result. */
    tool_turn(f, false);
    same_as_records(f);
    char id[32];
    snprintf(id, sizeof id, "call_%d", f->calls);
    append(f, record_tool_result(id, "late", false));
    same_as_records(f);
    tool_turn(f, true);
    same_as_records(f);
    assert_int_equal(f->keep.rebuilds, 1);
}

static void test_rewind_summary_and_edits_start_over(void **state)
{
    fixture *f = *state;
    append(f, record_user_text("go"));
    for (int i = 0; i < 4; i++)
        tool_turn(f, true);
    same_as_records(f);
    char *back = xstrdup(transcript_leaf(f->t));
    tool_turn(f, true);
    tool_turn(f, true);
    same_as_records(f);
    /* A rewind: the leaf moves back, a new branch grows from there. */
    loom_error err;
    assert_int_equal(transcript_set_leaf(f->t, back, &err), 0);
    free(back);
    unsigned long before = f->keep.rebuilds;
    same_as_records(f);
    assert_true(f->keep.rebuilds > before);
    tool_turn(f, true);
    same_as_records(f);
    /* A compaction summary ends the chain the model sees. */
    append(f, record_summary("what happened so far", NULL));
    append(f, record_user_text("carry on"));
    before = f->keep.rebuilds;
    same_as_records(f);
    assert_true(f->keep.rebuilds > before);
    tool_turn(f, true);
    tool_turn(f, true);
    same_as_records(f);
    /* A context edit clears an old result. */
    char id[32];
    snprintf(id, sizeof id, "call_%d", f->calls - 1);
    json_t *edit = record_new(RECORD_CONTEXT_EDIT);
    json_object_set_new(edit, "results", json_pack("{s:s}", id, "[cleared]"));
    ladder_edits_add(&f->edits, edit);
    append(f, edit);
    before = f->keep.rebuilds;
    same_as_records(f);
    assert_true(f->keep.rebuilds > before);
    tool_turn(f, true);
    same_as_records(f);
}

static void test_blank_reply_merges_user_runs(void **state)
{
    fixture *f = *state;
    append(f, record_user_text("one"));
    tool_turn(f, true);
    same_as_records(f);
    /* A blank assistant reply makes no message: the user runs on either
     * side of it become one message. */
    append(f, record_assistant_text(""));
    append(f, record_user_text("two"));
    same_as_records(f);
    tool_turn(f, true);
    same_as_records(f);
    append(f, record_assistant_text(""));
    append(f, record_user_text("three"));
    tool_turn(f, true);
    tool_turn(f, true);
    same_as_records(f);
}

static void test_another_transcript(void **state)
{
    fixture *f = *state;
    append(f, record_user_text("first session"));
    tool_turn(f, true);
    tool_turn(f, true);
    same_as_records(f);
    loom_error err;
    transcript *other = transcript_create(f->dir, "/tmp", "anthropic", "m", &err);
    assert_non_null(other);
    transcript *mine = f->t;
    f->t = other;
    append(f, record_user_text("second session"));
    same_as_records(f);
    f->t = mine;
    same_as_records(f);
    transcript_free(other);
    assert_int_equal(f->keep.rebuilds, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_turns_are_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_call_then_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewind_summary_and_edits_start_over, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_blank_reply_merges_user_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_another_transcript, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

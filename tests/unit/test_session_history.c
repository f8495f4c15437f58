/* test_session_history.c — records to wire messages: merging by side,
 * result order, summaries, and the repair of unanswered or orphaned calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "session/history.h"
#include "session/record.h"
#include "session/transcript.h"

/* Parses a JSONL literal and converts its active chain. */
static transcript *convert(const char *jsonl, msg_request *req, history_stats *st)
{
    transcript *t = transcript_parse(jsonl, strlen(jsonl), "test");
    memset(req, 0, sizeof *req);
    assert_int_equal(history_from_transcript(t, req, st), 0);
    return t;
}

#define REC(body) "{" body "}\n"

static void test_merge_and_result_order(void **state)
{
    (void)state;
    const char *jsonl =
        REC("\"type\":\"session-meta\",\"id\":\"m\",\"parentId\":null")
        REC("\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"role\":\"user\","
            "\"content\":[{\"type\":\"text\",\"text\":\"read two files\"},"
            "{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":\"AAAA\"}]")
        REC("\"type\":\"reasoning\",\"id\":\"r1\",\"parentId\":\"u1\",\"text\":\"plan\","
            "\"signature\":\"sig\"")
        REC("\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"r1\",\"role\":\"assistant\","
            "\"content\":[{\"type\":\"text\",\"text\":\"on it\"}]")
        REC("\"type\":\"function_call\",\"id\":\"c1\",\"parentId\":\"a1\",\"callId\":\"k1\","
            "\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"")
        REC("\"type\":\"function_call\",\"id\":\"c2\",\"parentId\":\"c1\",\"callId\":\"k2\","
            "\"name\":\"Read\",\"arguments\":\"not json\"")
        REC("\"type\":\"file-history-snapshot\",\"id\":\"f\",\"parentId\":null")
        /* results arrive out of call order */
        REC("\"type\":\"function_call_result\",\"id\":\"x2\",\"parentId\":\"c2\","
            "\"callId\":\"k2\",\"status\":\"error\",\"output\":\"no such file\"")
        REC("\"type\":\"function_call_result\",\"id\":\"x1\",\"parentId\":\"x2\","
            "\"callId\":\"k1\",\"status\":\"completed\",\"output\":\"A\",\"isError\":false")
        REC("\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"x1\",\"role\":\"user\","
            "\"content\":[{\"type\":\"text\",\"text\":\"and then?\"}]")
        REC("\"type\":\"reasoning\",\"id\":\"r2\",\"parentId\":\"u2\",\"redactedData\":\"ENC\"")
        REC("\"type\":\"message\",\"id\":\"a2\",\"parentId\":\"r2\",\"role\":\"assistant\","
            "\"content\":[{\"type\":\"text\",\"text\":\"done\"},{\"type\":\"text\",\"text\":\"\"}]");
    msg_request req;
    history_stats st;
    transcript *t = convert(jsonl, &req, &st);
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_int_equal(req.n_messages, 4);

    msg_message *m = &req.messages[0];
    assert_int_equal(m->role, MSG_ROLE_USER);
    assert_int_equal(m->n_blocks, 2);
    assert_int_equal(m->blocks[1].kind, MSG_BLOCK_IMAGE);
    assert_string_equal(m->blocks[1].media_type, "image/png");

    m = &req.messages[1];
    assert_int_equal(m->role, MSG_ROLE_ASSISTANT);
    assert_int_equal(m->n_blocks, 4);
    assert_int_equal(m->blocks[0].kind, MSG_BLOCK_THINKING);
    assert_string_equal(m->blocks[0].signature, "sig");
    assert_int_equal(m->blocks[1].kind, MSG_BLOCK_TEXT);
    assert_int_equal(m->blocks[2].kind, MSG_BLOCK_TOOL_USE);
    assert_string_equal(m->blocks[2].id, "k1");
    assert_string_equal(json_get_str(m->blocks[2].input, "path", ""), "a");
    assert_true(json_is_object(m->blocks[3].input));  /* broken arguments → {} */
    assert_int_equal(json_object_size(m->blocks[3].input), 0);

    m = &req.messages[2];
    assert_int_equal(m->role, MSG_ROLE_USER);
    assert_int_equal(m->n_blocks, 3);
    assert_int_equal(m->blocks[0].kind, MSG_BLOCK_TOOL_RESULT);
    assert_string_equal(m->blocks[0].id, "k1");  /* call order, not file order */
    assert_false(m->blocks[0].is_error);
    assert_string_equal(m->blocks[1].id, "k2");
    assert_true(m->blocks[1].is_error);
    assert_int_equal(m->blocks[2].kind, MSG_BLOCK_TEXT);
    assert_string_equal(m->blocks[2].text, "and then?");

    m = &req.messages[3];
    assert_int_equal(m->n_blocks, 2);  /* the empty text block is dropped */
    assert_int_equal(m->blocks[0].kind, MSG_BLOCK_REDACTED_THINKING);
    assert_string_equal(m->blocks[0].data, "ENC");

    assert_int_equal(st.n_synthesized, 0);
    assert_int_equal(st.n_orphans, 0);
    msg_request_free(&req);
    transcript_free(t);
}

static void test_missing_results_synthesized(void **state)
{
    (void)state;
    /* The process died while k2 ran, and again after k3 was requested. */
    const char *jsonl =
        REC("\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"role\":\"user\","
            "\"content\":\"go\"")
        REC("\"type\":\"function_call\",\"id\":\"c1\",\"parentId\":\"u1\",\"callId\":\"k1\","
            "\"name\":\"Bash\",\"arguments\":\"{}\"")
        REC("\"type\":\"function_call\",\"id\":\"c2\",\"parentId\":\"c1\",\"callId\":\"k2\","
            "\"name\":\"Bash\",\"arguments\":\"{}\"")
        REC("\"type\":\"function_call_result\",\"id\":\"x1\",\"parentId\":\"c2\","
            "\"callId\":\"k1\",\"status\":\"completed\",\"output\":\"ok\"")
        REC("\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"x1\",\"role\":\"user\","
            "\"content\":[{\"type\":\"text\",\"text\":\"continue\"}]")
        REC("\"type\":\"function_call\",\"id\":\"c3\",\"parentId\":\"u2\",\"callId\":\"k3\","
            "\"name\":\"Bash\",\"arguments\":\"{}\"");
    msg_request req;
    history_stats st;
    transcript *t = convert(jsonl, &req, &st);
    assert_int_equal(req.n_messages, 5);
    msg_message *m = &req.messages[2];
    assert_int_equal(m->n_blocks, 3);
    assert_string_equal(m->blocks[0].id, "k1");
    assert_false(m->blocks[0].is_error);
    assert_string_equal(m->blocks[1].id, "k2");
    assert_true(m->blocks[1].is_error);
    assert_string_equal(m->blocks[1].text, HISTORY_INTERRUPTED_RESULT);
    m = &req.messages[4];
    assert_int_equal(m->role, MSG_ROLE_USER);
    assert_int_equal(m->n_blocks, 1);
    assert_string_equal(m->blocks[0].id, "k3");
    assert_true(m->blocks[0].is_error);
    assert_int_equal(st.n_synthesized, 2);
    msg_request_free(&req);
    transcript_free(t);
}

static void test_summary_and_orphans(void **state)
{
    (void)state;
    const char *jsonl =
        REC("\"type\":\"message\",\"id\":\"u0\",\"parentId\":null,\"role\":\"user\","
            "\"content\":\"ancient\"")
        REC("\"type\":\"summary\",\"id\":\"s\",\"parentId\":null,\"logicalParentId\":\"u0\","
            "\"summary\":\"we fixed the bug\"")
        REC("\"type\":\"function_call_result\",\"id\":\"x9\",\"parentId\":\"s\","
            "\"callId\":\"k9\",\"status\":\"completed\",\"output\":\"late\"")
        REC("\"type\":\"message\",\"id\":\"u1\",\"parentId\":\"x9\",\"role\":\"user\","
            "\"content\":[{\"type\":\"text\",\"text\":\"next\"}]")
        REC("\"type\":\"message\",\"id\":\"weird\",\"parentId\":\"u1\",\"role\":\"system\","
            "\"content\":\"ignored\"")
        REC("\"type\":\"function_call\",\"id\":\"bad\",\"parentId\":\"weird\","
            "\"name\":\"NoCallId\"");
    msg_request req;
    history_stats st;
    transcript *t = convert(jsonl, &req, &st);
    assert_int_equal(req.n_messages, 1);
    msg_message *m = &req.messages[0];
    assert_int_equal(m->role, MSG_ROLE_USER);
    assert_int_equal(m->n_blocks, 3);
    assert_string_equal(m->blocks[0].text, HISTORY_SUMMARY_PREFIX "we fixed the bug");
    assert_int_equal(m->blocks[1].kind, MSG_BLOCK_TEXT);  /* orphan result as text */
    assert_non_null(strstr(m->blocks[1].text, "k9"));
    assert_non_null(strstr(m->blocks[1].text, "late"));
    assert_string_equal(m->blocks[2].text, "next");
    assert_int_equal(st.n_orphans, 1);
    assert_int_equal(st.n_skipped, 1);
    msg_request_free(&req);
    transcript_free(t);
}

static void test_from_live_transcript(void **state)
{
    (void)state;
    /* Records made by the constructors convert without any JSONL typed by
     * hand: the path the loop takes. */
    json_t *recs[4];
    recs[0] = record_user_text("hi");
    recs[1] = record_function_call("k", "Glob", "{\"pattern\":\"*.c\"}");
    recs[2] = record_tool_result("k", "a.c", false);
    recs[3] = record_assistant_text("found a.c");
    msg_request req = {0};
    history_stats st;
    history_from_records(recs, 4, &req, &st);
    assert_int_equal(req.n_messages, 4);
    assert_int_equal(req.messages[2].blocks[0].kind, MSG_BLOCK_TOOL_RESULT);
    assert_int_equal(st.n_used, 4);
    for (size_t i = 0; i < 4; i++)
        json_decref(recs[i]);
    msg_request_free(&req);
}

/* A garbled line in the middle (the first reply's tool result) no longer
 * cuts the history there: the loader reconnects the orphan, the request
 * starts with the first prompt, and the call left without its result gets
 * the interrupted result. */
static void test_reconnected_gap_keeps_first_prompt(void **state)
{
    (void)state;
#define TS(s) "\"timestamp\":\"2026-01-01T00:00:0" #s ".000Z\","
    const char *jsonl =
        REC("\"type\":\"session-meta\",\"id\":\"m\",\"parentId\":null")
        REC("\"type\":\"message\",\"id\":\"u1\",\"parentId\":null," TS(1)
            "\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"first prompt\"}]")
        REC("\"type\":\"function_call\",\"id\":\"c1\",\"parentId\":\"u1\"," TS(2)
            "\"callId\":\"k1\",\"name\":\"Read\",\"arguments\":\"{}\"")
        "{\"type\":\"function_call_result\",\"id\":\"x1\",\"par\x01ntId\"\n"
        REC("\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"x1\"," TS(4)
            "\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"done\"}]")
        REC("\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"a1\"," TS(5)
            "\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"next\"}]");
#undef TS
    msg_request req;
    history_stats st;
    transcript *t = convert(jsonl, &req, &st);
    loom_error err;
    assert_int_equal(transcript_check(t, false, &err), 0);
    /* user | assistant: the call and "done" | user: the made-up result, "next" */
    assert_int_equal(req.n_messages, 3);
    assert_int_equal(req.messages[0].role, MSG_ROLE_USER);
    assert_string_equal(req.messages[0].blocks[0].text, "first prompt");
    assert_int_equal(req.messages[1].role, MSG_ROLE_ASSISTANT);
    assert_int_equal(req.messages[1].blocks[0].kind, MSG_BLOCK_TOOL_USE);
    assert_string_equal(req.messages[1].blocks[1].text, "done");
    assert_int_equal(req.messages[2].role, MSG_ROLE_USER);
    assert_int_equal(req.messages[2].blocks[0].kind, MSG_BLOCK_TOOL_RESULT);
    assert_string_equal(req.messages[2].blocks[1].text, "next");
    assert_int_equal(st.n_synthesized, 1);
    msg_request_free(&req);
    transcript_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_and_result_order),
        cmocka_unit_test(test_missing_results_synthesized),
        cmocka_unit_test(test_summary_and_orphans),
        cmocka_unit_test(test_from_live_transcript),
        cmocka_unit_test(test_reconnected_gap_keeps_first_prompt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

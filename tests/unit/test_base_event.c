/* test_base_event.c — the event record and the payload constructors of
 * base/event.h: each payload's keys, in their order (surfaces and the e2e
 * tests read the JSON byte for byte), and the tool preview's cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/event.h"
#include "base/json.h"

/* Compares the compact JSON of v (stolen) with want. */
static void assert_json(json_t *v, const char *want)
{
    assert_non_null(v);
    char *got = json_dump_compact(v);
    json_decref(v);
    if (strcmp(got, want))
        fail_msg("got  %s\nwant %s", got, want);
    free(got);
}

static void test_envelope_names_type_and_visibility(void **state)
{
    (void)state;
    json_t *ev = event_make("run-1", LOOM_EV_TOOL_STARTED, LOOM_VIS_AUDIT, NULL, NULL);
    const char *keys[] = {"event_id", "run_id", "type", "ts", "visibility", "correlation_id",
                          "payload"};
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(ev, k, v) {
        assert_true(i < 7);
        assert_string_equal(k, keys[i++]);
    }
    assert_int_equal(i, 7);
    assert_string_equal(json_get_str(ev, "type", ""), "tool.started");
    assert_string_equal(json_get_str(ev, "visibility", ""), "audit");
    assert_true(json_is_null(json_object_get(ev, "correlation_id")));
    assert_int_equal(json_object_size(json_object_get(ev, "payload")), 0);
    json_decref(ev);
}

static void test_warnings_keep_their_key_order(void **state)
{
    (void)state;
    assert_json(event_warning("hook", "m"), "{\"kind\":\"hook\",\"message\":\"m\"}");
    assert_json(event_warningf("hook_stopped", "a Stop hook ended the run: %s", "why"),
                "{\"kind\":\"hook_stopped\",\"message\":\"a Stop hook ended the run: why\"}");
    assert_json(event_warning_model_retry("slow", LOOM_ERR_MODEL_RATE_LIMITED, 2, 1.5),
                "{\"kind\":\"model_retry\",\"message\":\"slow\",\"code\":\"model_rate_limited\","
                "\"attempt\":2,\"delay_s\":1.5}");
    assert_json(event_warning_compaction_skipped("auto", "blocked: %s", "x"),
                "{\"kind\":\"compaction_skipped\",\"trigger\":\"auto\",\"message\":\"blocked: x\"}");
    assert_json(event_warning_tool_loop("again", "Read", 3),
                "{\"kind\":\"tool_loop\",\"message\":\"again\",\"tool\":\"Read\",\"repeats\":3}");
}

static void test_model_and_approval_payloads(void **state)
{
    (void)state;
    assert_json(event_model_completed(2, LOOM_STOP_END_TURN, NULL, json_object(), 0.5, NULL, NULL, 0, 0),
                "{\"turn\":2,\"stop_reason\":\"end_turn\",\"request_id\":null,\"usage\":{},"
                "\"cost_usd\":0.5}");
    assert_json(event_model_usage("permission_classifier", NULL, 1, json_object(), 0),
                "{\"purpose\":\"permission_classifier\",\"tool\":null,\"calls\":1,\"usage\":{},"
                "\"cost_usd\":0.0}");
    assert_json(event_model_completed(1, LOOM_STOP_END_TURN, "r1", json_object(), -1, NULL, NULL, 0, 0),
                "{\"turn\":1,\"stop_reason\":\"end_turn\",\"request_id\":\"r1\",\"usage\":{}}");
    assert_json(event_model_usage("permission_classifier", "Bash", 1, json_object(), -1),
                "{\"purpose\":\"permission_classifier\",\"tool\":\"Bash\",\"calls\":1,"
                "\"usage\":{}}");
    assert_json(event_model_usage_compaction(json_object(), -1),
                "{\"purpose\":\"compaction\",\"usage\":{}}");
    assert_json(event_approval_resolved("a1", "Bash", false, NULL),
                "{\"approval_id\":\"a1\",\"tool\":\"Bash\",\"approved\":false,\"always\":null}");
    assert_json(event_hook_output("Stop", NULL, "out"),
                "{\"event\":\"Stop\",\"hook\":\"\",\"output\":\"out\"}");
}

static void test_tool_preview_cuts_on_a_character(void **state)
{
    (void)state;
    /* 1999 ASCII bytes then "é" (2 bytes): the cap falls inside it, so the
     * preview ends before it; output_chars is the whole length. */
    char text[2100];
    memset(text, 'a', 1999);
    memcpy(text + 1999, "\xC3\xA9tail", 6);
    size_t n = 1999 + 6;
    json_t *p = event_tool_finished("c1", "Read", false, 1000, 3000, text, n, NULL, NULL);
    assert_int_equal(strlen(json_get_str(p, "output", "")), 1999);
    assert_int_equal(json_get_int(p, "output_chars", 0), (int64_t)n);
    assert_int_equal(json_get_int(p, "duration_ms", -1), 2);
    assert_null(json_object_get(p, "failed_step"));
    json_decref(p);
    /* Bytes that are not UTF-8 become U+FFFD instead of losing the payload. */
    json_t *raw = json_pack("{s:i}", "exit", 1);
    p = event_tool_finished("c2", "Bash", true, 0, 0, "x\xFFy", 3, "execute", raw);
    assert_string_equal(json_get_str(p, "output", ""), "x\xEF\xBF\xBDy");
    assert_string_equal(json_get_str(p, "failed_step", ""), "execute");
    assert_ptr_equal(json_object_get(p, "raw"), raw);
    json_decref(p);
    json_decref(raw);
}

static void test_run_end_payload_leaves_out_what_is_absent(void **state)
{
    (void)state;
    assert_json(event_run_ended(LOOM_RUN_COMPLETED, "done", LOOM_STOP_END_TURN, "s1", 1,
                                json_object(), -1, LOOM_OK, "", NULL),
                "{\"state\":\"completed\",\"result\":\"done\",\"stop_reason\":\"end_turn\","
                "\"session_id\":\"s1\",\"num_turns\":1,\"usage\":{}}");
    json_t *intr = json_pack("{s:s}", "source", "external_signal");
    assert_json(event_run_ended(LOOM_RUN_FAILED, NULL, LOOM_STOP_EXTERNAL_SIGNAL, "s1", 0,
                                json_object(), 0.25, LOOM_ERR_RUN_RESUMABLE, "stopped", intr),
                "{\"state\":\"failed\",\"result\":\"\",\"stop_reason\":\"external_signal\","
                "\"session_id\":\"s1\",\"num_turns\":0,\"usage\":{},\"cost_usd\":0.25,"
                "\"error\":{\"code\":\"run_resumable\",\"message\":\"stopped\"},"
                "\"interrupt\":{\"source\":\"external_signal\"}}");
    json_decref(intr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelope_names_type_and_visibility),
        cmocka_unit_test(test_warnings_keep_their_key_order),
        cmocka_unit_test(test_model_and_approval_payloads),
        cmocka_unit_test(test_tool_preview_cuts_on_a_character),
        cmocka_unit_test(test_run_end_payload_leaves_out_what_is_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

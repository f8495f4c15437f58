/* test_server_artifacts.c — what a run leaves behind (artifacts.h): every
 * artifact's name, kind, type, title and content for a run with a patch;
 * no patch.diff for a run without changes; the max_artifacts cap; bad JSON
 * inputs taken as absent. Pure functions: one thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/runs/artifacts.h"

static const char *RUN =
    "{\"run_id\":\"run_a1\",\"state\":\"completed\",\"goal\":\"Fix the parser\","
    "\"started_at\":\"2026-12-02T14:00:00.000Z\",\"ended_at\":\"2026-12-02T14:00:02.500Z\","
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":120,\"output_tokens\":34}}";

static const char *RESULT =
    "{\"state\":\"completed\",\"result\":\"Fixed the off-by-one in parse.c.\","
    "\"stop_reason\":\"end_turn\",\"num_turns\":4,"
    "\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}";

static const char *PATCH =
    "diff --git a/src/parse.c b/src/parse.c\n"
    "--- a/src/parse.c\n"
    "+++ b/src/parse.c\n"
    "@@ -1,3 +1,3 @@\n"
    "-int n = len;\n"
    "+int n = len - 1;\n"
    "+/* why */\n"
    " return n;\n"
    "diff --git a/README.md b/README.md\n"
    "--- a/README.md\n"
    "+++ b/README.md\n"
    "@@ -1 +1,2 @@\n"
    " # x\n"
    "+more\n";

static const char *EVENTS =
    "[{\"seq\":1,\"type\":\"tool.started\",\"payload\":{\"call_id\":\"c1\",\"tool\":\"Bash\"}},"
    "{\"seq\":2,\"type\":\"approval.requested\",\"payload\":{\"approval_id\":\"apv_1\","
    "\"tool\":\"Bash\",\"question\":\"Run make?\"}},"
    "{\"seq\":3,\"type\":\"approval.resolved\",\"payload\":{\"approval_id\":\"apv_1\","
    "\"status\":\"approved\",\"actor_id\":\"alice\",\"comment\":\"go\"}},"
    "{\"seq\":4,\"type\":\"tool.finished\",\"payload\":{\"call_id\":\"c1\",\"tool\":\"Bash\","
    "\"is_error\":false}},"
    "{\"seq\":5,\"type\":\"tool.started\",\"payload\":{\"call_id\":\"c2\",\"tool\":\"Edit\"}},"
    "{\"seq\":6,\"type\":\"tool.failed\",\"payload\":{\"call_id\":\"c2\",\"tool\":\"Edit\","
    "\"is_error\":true}},"
    "{\"seq\":7,\"type\":\"tool.started\",\"payload\":{\"call_id\":\"c3\",\"tool\":\"Read\"}}]";

static const artifact_item *find(const artifact_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    return NULL;
}

static void check_item(const artifact_list *l, size_t i, const char *name, const char *kind,
                       const char *type)
{
    assert_true(i < l->n);
    assert_string_equal(l->items[i].name, name);
    assert_string_equal(l->items[i].kind, kind);
    assert_string_equal(l->items[i].content_type, type);
    assert_int_equal(l->items[i].len, strlen(l->items[i].data));
}

static void test_run_with_patch(void **state)
{
    (void)state;
    artifact_input in = {"run_a1", RUN, RESULT, PATCH, EVENTS, 20};
    artifact_list l;
    assert_int_equal(artifacts_build(&in, &l), 0);
    assert_int_equal(l.n, 5);
    assert_int_equal(l.dropped, 0);
    check_item(&l, 0, "patch.diff", "patch", "text/x-diff");
    check_item(&l, 1, "conclusion.md", "text", "text/markdown");
    check_item(&l, 2, "result.json", "json", "application/json");
    check_item(&l, 3, "report.md", "report", "text/markdown");
    check_item(&l, 4, "summary.json", "summary", "application/json");

    assert_string_equal(l.items[0].data, PATCH);
    assert_string_equal(l.items[0].title, "Patch: 2 files changed, +3 -1");
    assert_string_equal(l.items[1].data, "Fixed the off-by-one in parse.c.");
    assert_string_equal(l.items[2].data, RESULT);

    const char *r = l.items[3].data;
    assert_non_null(strstr(r, "# Run run_a1"));
    assert_non_null(strstr(r, "**Goal:** Fix the parser"));
    assert_non_null(strstr(r, "**State:** completed"));
    assert_non_null(strstr(r, "**Stop reason:** end_turn"));
    assert_non_null(strstr(r, "1. Bash — ok"));
    assert_non_null(strstr(r, "2. Edit — failed"));
    assert_non_null(strstr(r, "3. Read — did not finish"));
    assert_non_null(strstr(r, "- apv_1 (Bash): approved by alice — go"));
    assert_non_null(strstr(r, "- src/parse.c\n- README.md\n"));
    assert_non_null(strstr(r, "input tokens: 120"));
    assert_non_null(strstr(r, "output tokens: 34"));

    json_t *s = json_loads(l.items[4].data, 0, NULL);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "run_id")), "run_a1");
    assert_string_equal(json_string_value(json_object_get(s, "state")), "completed");
    assert_string_equal(json_string_value(json_object_get(s, "stop_reason")), "end_turn");
    assert_string_equal(json_string_value(json_object_get(s, "started_at")),
                        "2026-12-02T14:00:00.000Z");
    assert_int_equal(json_integer_value(json_object_get(s, "duration_ms")), 2500);
    assert_int_equal(json_integer_value(json_object_get(s, "turns")), 4);
    assert_int_equal(json_integer_value(json_object_get(s, "tool_calls")), 3);
    assert_int_equal(json_integer_value(json_object_get(s, "tool_failures")), 1);
    assert_int_equal(json_integer_value(json_object_get(s, "approvals")), 1);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(s, "usage"), "input_tokens")), 120);
    json_t *names = json_object_get(s, "artifacts");
    assert_int_equal(json_array_size(names), 5);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "patch.diff");
    assert_string_equal(json_string_value(json_array_get(names, 4)), "summary.json");
    json_decref(s);
    artifact_list_free(&l);
    assert_int_equal(l.n, 0);
}

static void test_no_changes_no_patch(void **state)
{
    (void)state;
    artifact_input in = {"run_b", RUN, RESULT, "", NULL, 20};
    artifact_list l;
    assert_int_equal(artifacts_build(&in, &l), 0);
    assert_int_equal(l.n, 4);
    assert_null(find(&l, "patch.diff"));
    assert_string_equal(l.items[0].name, "conclusion.md");
    assert_non_null(strstr(find(&l, "report.md")->data, "## Files changed\n\nNone."));
    artifact_list_free(&l);

    in.patch = NULL;
    assert_int_equal(artifacts_build(&in, &l), 0);
    assert_int_equal(l.n, 4);
    artifact_list_free(&l);
}

static void test_cap(void **state)
{
    (void)state;
    artifact_input in = {"run_c", RUN, RESULT, PATCH, EVENTS, 2};
    artifact_list l;
    assert_int_equal(artifacts_build(&in, &l), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.dropped, 3);
    assert_string_equal(l.items[0].name, "patch.diff");
    assert_string_equal(l.items[1].name, "conclusion.md");
    artifact_list_free(&l);

    in.max_artifacts = 0;
    assert_int_equal(artifacts_build(&in, &l), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.dropped, 5);
    artifact_list_free(&l);

    /* The summary lists the artifacts that were kept. */
    in.patch = NULL;
    in.max_artifacts = 4;
    assert_int_equal(artifacts_build(&in, &l), 0);
    assert_int_equal(l.n, 4);
    json_t *s = json_loads(find(&l, "summary.json")->data, 0, NULL);
    assert_int_equal(json_array_size(json_object_get(s, "artifacts")), 4);
    json_decref(s);
    artifact_list_free(&l);
}

static void test_bad_json_absent(void **state)
{
    (void)state;
    const char *bad[] = {"{", "[1,2]", "\"text\"", "null", "{\"a\":", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        artifact_input in = {"run_d", bad[i], bad[i], NULL, bad[i], 20};
        artifact_list l;
        assert_int_equal(artifacts_build(&in, &l), 0);
        assert_int_equal(l.n, 4);
        assert_string_equal(find(&l, "result.json")->data, "{}");
        assert_string_equal(find(&l, "conclusion.md")->data, "");
        assert_non_null(strstr(find(&l, "report.md")->data, "**State:** unknown"));
        json_t *s = json_loads(find(&l, "summary.json")->data, 0, NULL);
        assert_non_null(s);
        assert_true(json_is_null(json_object_get(s, "state")));
        assert_true(json_is_null(json_object_get(s, "duration_ms")));
        json_decref(s);
        artifact_list_free(&l);
    }
    /* Events of the wrong shapes. */
    artifact_input in = {"run_e", RUN, NULL, NULL,
                         "[1, null, {\"type\":7}, {\"type\":\"tool.failed\"},"
                         "{\"type\":\"approval.resolved\",\"payload\":[]}]",
                         20};
    artifact_list l;
    assert_int_equal(artifacts_build(&in, &l), 0);
    assert_non_null(strstr(find(&l, "report.md")->data, "1. ? — failed"));
    artifact_list_free(&l);
    /* NULL everything. */
    artifact_input empty = {0};
    assert_int_equal(artifacts_build(&empty, &l), 0);
    assert_int_equal(l.n, 0);
    artifact_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_with_patch),
        cmocka_unit_test(test_no_changes_no_patch),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_bad_json_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

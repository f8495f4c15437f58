/* test_context_working_json.c — C_working as data (context/working_json.h):
 * the payload's shape (plan items, every dashboard field, open events only)
 * and the rule behind working.updated: a new rendering only when the plan,
 * the dashboard, the goal or the open events changed, none for a repeat. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "context/plan.h"
#include "context/working.h"
#include "context/working_json.h"

static void set_plan(todo_list *l, const char *json)
{
    json_error_t je;
    json_t *todos = json_loads(json, 0, &je);
    assert_non_null(todos);
    assert_int_equal(todo_list_set(l, todos, NULL), 0);
    json_decref(todos);
}

static void test_shape(void **state)
{
    (void)state;
    todo_list *plan = todo_list_new();
    working *w = working_new(plan);
    working_set_goal(w, "Fix the build");
    set_plan(plan, "[{\"content\":\"read the log\",\"status\":\"completed\"},"
                   "{\"content\":\"patch cmake\",\"status\":\"in_progress\","
                   "\"activeForm\":\"Patching cmake\"}]");
    dashboard d = {.tokens = 6712, .window = 16000, .budget_total = 500000,
                   .budget_used = 120000, .depth = 1, .turn = 3};
    working_set_dashboard(w, &d);
    working_note_step(w, true);
    working_set_heartbeat(w, 1700000000123);
    assert_int_equal(working_add_event(w, &(surface_event){.id = "ev_a", .source = "filesystem",
                                                             .summary = "src/a.c changed",
                                                             .urgency = EVENT_HIGH}),
                     1);
    assert_int_equal(working_add_event(w, &(surface_event){.id = "ev_b", .source = "process",
                                                             .summary = "make exited",
                                                             .urgency = EVENT_LOW}),
                     1);
    /* An ignored event is resolved at once: history, not the panel's. */
    assert_int_equal(working_ack_event(w, "ev_b", "ignore", NULL, NULL), 0);

    json_t *j = working_json(w);
    assert_string_equal(json_get_str(j, "goal", ""), "Fix the build");
    assert_int_equal(json_integer_value(json_object_get(j, "turn")), 3);
    const json_t *items = json_object_get(j, "plan");
    assert_int_equal(json_array_size(items), 2);
    assert_string_equal(json_get_str(json_array_get(items, 1), "content", ""), "patch cmake");
    assert_string_equal(json_get_str(json_array_get(items, 1), "status", ""), "in_progress");
    assert_string_equal(json_get_str(json_array_get(items, 1), "activeForm", ""),
                        "Patching cmake");
    const json_t *dj = json_object_get(j, "dashboard");
    assert_int_equal(json_integer_value(json_object_get(dj, "tokens")), 6712);
    assert_int_equal(json_integer_value(json_object_get(dj, "window")), 16000);
    assert_int_equal(json_integer_value(json_object_get(dj, "budget_total")), 500000);
    assert_int_equal(json_integer_value(json_object_get(dj, "budget_used")), 120000);
    assert_int_equal(json_integer_value(json_object_get(dj, "errors_recent")), 1);
    assert_int_equal(json_integer_value(json_object_get(dj, "depth")), 1);
    assert_int_equal(json_integer_value(json_object_get(dj, "last_hb_ms")), 1700000000123);
    assert_int_equal(json_integer_value(json_object_get(dj, "turn")), 3);
    const json_t *evs = json_object_get(j, "events");
    assert_int_equal(json_array_size(evs), 1);
    const json_t *e = json_array_get(evs, 0);
    assert_string_equal(json_get_str(e, "event_id", ""), "ev_a");
    assert_string_equal(json_get_str(e, "source", ""), "filesystem");
    assert_string_equal(json_get_str(e, "summary", ""), "src/a.c changed");
    assert_string_equal(json_get_str(e, "urgency", ""), "high");
    assert_string_equal(json_get_str(e, "state", ""), "projected");
    json_decref(j);
    working_free(w);
    todo_list_free(plan);
}

/* Calls working_json_if_changed and says whether it gave a payload. */
static int changed(working *w, char **last)
{
    json_t *j = working_json_if_changed(w, last);
    int got = j != NULL;
    if (j) {
        /* What it gives back is what it remembers. */
        char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        assert_string_equal(s, *last);
        free(s);
    }
    json_decref(j);
    return got;
}

static void test_only_on_change(void **state)
{
    (void)state;
    todo_list *plan = todo_list_new();
    working *w = working_new(plan);
    char *last = NULL;
    working_set_goal(w, "g");
    assert_int_equal(changed(w, &last), 1); /* the first is always news */
    assert_int_equal(changed(w, &last), 0);
    assert_int_equal(changed(w, &last), 0);

    set_plan(plan, "[{\"content\":\"one\",\"status\":\"pending\"}]");
    assert_int_equal(changed(w, &last), 1);
    assert_int_equal(changed(w, &last), 0);
    /* The same plan written again is not a change. */
    set_plan(plan, "[{\"content\":\"one\",\"status\":\"pending\"}]");
    assert_int_equal(changed(w, &last), 0);
    set_plan(plan, "[{\"content\":\"one\",\"status\":\"in_progress\"}]");
    assert_int_equal(changed(w, &last), 1);

    dashboard d = working_get_dashboard(w);
    d.turn = 2;
    working_set_dashboard(w, &d);
    assert_int_equal(changed(w, &last), 1);
    working_set_dashboard(w, &d);
    assert_int_equal(changed(w, &last), 0);
    d.tokens = 900;
    working_set_dashboard(w, &d);
    assert_int_equal(changed(w, &last), 1);
    working_note_step(w, false); /* a success leaves errors_recent at 0 */
    assert_int_equal(changed(w, &last), 0);
    working_note_step(w, true);
    assert_int_equal(changed(w, &last), 1);
    working_set_heartbeat(w, 42);
    assert_int_equal(changed(w, &last), 1);

    assert_int_equal(working_add_event(w, &(surface_event){.id = "ev_x", .source = "process",
                                                             .summary = "done"}),
                     1);
    assert_int_equal(changed(w, &last), 1);
    assert_int_equal(changed(w, &last), 0);
    assert_int_equal(working_ack_event(w, "ev_x", "defer", "later", NULL), 0);
    assert_int_equal(changed(w, &last), 1); /* its state moved */

    /* A fresh run's memory of what it sent starts empty. */
    char *other = NULL;
    assert_int_equal(changed(w, &other), 1);
    free(other);
    free(last);
    working_free(w);
    todo_list_free(plan);
}

static void test_null_working(void **state)
{
    (void)state;
    json_t *j = working_json(NULL);
    assert_true(json_is_object(j));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_only_on_change),
        cmocka_unit_test(test_null_working),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

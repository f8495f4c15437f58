/* test_base_protocol.c — include/loom_protocol.h: every value's name goes
 * there and back, no name is used twice, and docs/events.md's tables list
 * exactly the header's event types, run states, stop reasons and error
 * codes with their numbers (as test_policy_decision.c checks the decision
 * table against docs/permissions.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "loom.h"

/* One enum of the header seen through its name functions. */
typedef struct {
    const char *section;  /* the "## " heading of its table in docs/events.md */
    int end;              /* one past the highest number */
    int first;            /* the lowest number that names a value */
    const char *(*name)(int v);
    int (*from_name)(const char *name);
} protocol_enum;

static const char *event_name(int v) { return loom_event_type_name((loom_event_type)v); }
static int event_from(const char *n)
{
    loom_event_type t = loom_event_type_from_name(n);
    return t == LOOM_EV_NONE ? -1 : (int)t;
}
static const char *state_name(int v) { return loom_run_state_name((loom_run_state)v); }
static const char *stop_name(int v) { return loom_stop_reason_name((loom_stop_reason)v); }
static const char *error_name(int v) { return loom_error_code_name((loom_error_code)v); }

static const protocol_enum enums[] = {
    {"Event types", LOOM_EVENT_TYPE_END, 1, event_name, event_from},
    {"Run states", LOOM_RUN_STATE_END, 0, state_name, loom_run_state_from_name},
    {"Stop reasons", LOOM_STOP_REASON_END, 0, stop_name, loom_stop_reason_from_name},
    {"Error codes", LOOM_ERROR_CODE_END, 0, error_name, loom_error_code_from_name},
};

static void test_names_round_trip(void **state)
{
    (void)state;
    for (size_t e = 0; e < sizeof enums / sizeof enums[0]; e++) {
        const protocol_enum *pe = &enums[e];
        for (int v = pe->first; v < pe->end; v++) {
            const char *n = pe->name(v);
            assert_non_null(n);
            if (pe->from_name(n) != v)
                fail_msg("%s: %d is named %s, which reads back as %d", pe->section, v, n,
                         pe->from_name(n));
            /* No two values share a name (a name means one number, always). */
            for (int w = pe->first; w < v; w++)
                if (!strcmp(pe->name(w), n))
                    fail_msg("%s: %d and %d are both named %s", pe->section, w, v, n);
        }
        assert_int_equal(pe->from_name("no_such_name"), -1);
        assert_int_equal(pe->from_name(NULL), -1);
    }
}

static void test_out_of_range_values_have_safe_names(void **state)
{
    (void)state;
    assert_null(loom_event_type_name(LOOM_EV_NONE));
    assert_null(loom_event_type_name((loom_event_type)LOOM_EVENT_TYPE_END));
    assert_int_equal(loom_event_type_from_name("tool.started"), LOOM_EV_TOOL_STARTED);
    assert_string_equal(loom_error_code_name((loom_error_code)-3), "unknown_error");
    assert_string_equal(loom_error_code_name((loom_error_code)LOOM_ERROR_CODE_END), "unknown_error");
    assert_string_equal(loom_run_state_name((loom_run_state)99), "unknown");
    assert_string_equal(loom_stop_reason_name((loom_stop_reason)99), "none");
    assert_string_equal(loom_visibility_name(LOOM_VIS_USER), "user");
    assert_string_equal(loom_visibility_name(LOOM_VIS_SYSTEM), "system");
    assert_string_equal(loom_visibility_name(LOOM_VIS_AUDIT), "audit");
}

/* The numbers callers may have compiled in: a change here is a break of
 * the protocol, not a refactoring. */
static void test_numbers_are_fixed(void **state)
{
    (void)state;
    assert_int_equal(LOOM_ERR_INVALID_REQUEST, 1);
    assert_int_equal(LOOM_ERR_RUN_RESUMABLE, 9);
    assert_int_equal(LOOM_ERR_TOOL_EXECUTION_FAILED, 11);
    assert_int_equal(LOOM_ERR_MODEL_OVERLOADED, 16);
    assert_int_equal(LOOM_ERR_INTERNAL, 26);
    assert_int_equal(LOOM_EV_TOKEN_DELTA, 1);
    assert_int_equal(LOOM_EV_WARNING_EMITTED, 11);
    assert_int_equal(LOOM_EV_HEARTBEAT_EVENT, 19);
    assert_int_equal(LOOM_RUN_COMPLETED, 5);
    assert_int_equal(LOOM_STOP_END_TURN, 1);
    assert_int_equal(LOOM_STOP_MAX_TURNS, 8);
    assert_int_equal(LOOM_STOP_PROMPT_BLOCKED, 16);
    /* base/error.h carries the header's codes: the C return convention. */
    loom_error err;
    assert_int_equal(loom_error_set(&err, LOOM_ERR_IO, "x"), -25);
    assert_int_equal(err.code, LOOM_ERR_IO);
}

/* Reads the tables of docs/events.md: in the section headed "## <name>",
 * every row "| N | `name` | …" is (N, name). */
static void check_section(FILE *f, const protocol_enum *pe)
{
    rewind(f);
    char line[4096];
    bool in = false;
    int seen = 0;
    char want[128];
    snprintf(want, sizeof want, "## %s\n", pe->section);
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "## ", 3)) {
            in = !strcmp(line, want);
            continue;
        }
        int n;
        char name[128];
        if (!in || sscanf(line, "| %d | `%127[^`]` |", &n, name) != 2)
            continue;
        if (n != pe->first + seen)
            fail_msg("docs/events.md %s: row %s has number %d, expected %d", pe->section, name,
                     n, pe->first + seen);
        const char *code = pe->name(n);
        if (!code || strcmp(code, name))
            fail_msg("docs/events.md %s: %d is %s in the docs, %s in loom_protocol.h",
                     pe->section, n, name, code ? code : "(none)");
        seen++;
    }
    if (pe->first + seen != pe->end)
        fail_msg("docs/events.md %s lists %d values, loom_protocol.h has %d", pe->section, seen,
                 pe->end - pe->first);
}

static void test_doc_tables_match_header(void **state)
{
    (void)state;
    const char *data = getenv("LOOM_TEST_DATA");
    if (!data)
        skip();
    char path[1024];
    snprintf(path, sizeof path, "%s/../docs/events.md", data);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    for (size_t e = 0; e < sizeof enums / sizeof enums[0]; e++)
        check_section(f, &enums[e]);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_out_of_range_values_have_safe_names),
        cmocka_unit_test(test_numbers_are_fixed),
        cmocka_unit_test(test_doc_tables_match_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

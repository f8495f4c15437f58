/* test_context_working.c — C_working: the rendered block (exact text with and
 * without optional parts), event dedupe by fingerprint, ack rules and the
 * forward-only event states, the error window, and M_f snapshots (round trip
 * byte for byte, missing and damaged files). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/str.h"
#include "base/uuid.h"
#include "context/mf_state.h"
#include "context/working.h"
#include "context/working_render.h"
#include "context/plan.h"

static char tmpdir[4096];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-working-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *at(const char *rel)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", tmpdir, rel);
    return str_steal(&s);
}

static char *slurp(const char *path)
{
    char *data = NULL;
    assert_int_equal(file_read_all(path, &data, NULL, NULL), 0);
    return data;
}

static void put(const char *path, const char *text)
{
    assert_int_equal(file_write_atomic(path, text, strlen(text), 0644, NULL), 0);
}

static void set_plan(todo_list *plan, const char *json)
{
    json_error_t jerr;
    json_t *todos = json_loads(json, 0, &jerr);
    assert_non_null(todos);
    assert_int_equal(todo_list_set(plan, todos, NULL), 0);
    json_decref(todos);
}

/* Adds an event; returns working_add_event's answer. */
static int add(working *w, const char *id, const char *fp, const char *source,
               const char *summary, event_urgency u, int64_t ms)
{
    surface_event ev = {
        .id = (char *)id,
        .fingerprint = (char *)fp,
        .source = (char *)source,
        .summary = (char *)summary,
        .urgency = u,
        .detected_ms = ms,
    };
    return working_add_event(w, &ev);
}

static event_state state_of(working *w, const char *id)
{
    size_t n;
    surface_event *evs = working_events(w, &n);
    event_state st = EVENT_ARCHIVED; /* not in the surface */
    for (size_t i = 0; i < n; i++)
        if (strcmp(evs[i].id, id) == 0)
            st = evs[i].state;
    working_events_free(evs, n);
    return st;
}

static void test_render_minimal(void **state)
{
    working *w = working_new(NULL);
    char *out = working_render(w);
    assert_string_equal(out, "<working-memory>\n"
                             "goal: (none)\n"
                             "dashboard: context ~0 tokens \u00B7 progress: not reported \u00B7 "
                             "errors in last 10 steps: 0 \u00B7 depth 0 \u00B7 heartbeat: off "
                             "\u00B7 interrupt requested: no\n"
                             "plan:\n"
                             "(no plan yet \u2014 use TodoWrite for multi-step work)\n"
                             "events:\n"
                             "pending: none\n"
                             "</working-memory>\n");
    free(out);

    /* A goal with lines of its own; a window unknown; an empty plan. */
    todo_list *plan = todo_list_new();
    working_free(w);
    w = working_new(plan);
    working_set_goal(w, "Fix the build\nthen run the tests\r\n\n");
    dashboard d = {.tokens = 1234567, .depth = 2, .errors_recent = 9, .interrupt_requested = true};
    working_set_dashboard(w, &d);
    out = working_render(w);
    assert_string_equal(out, "<working-memory>\n"
                             "goal: Fix the build\n"
                             "  then run the tests\n"
                             "dashboard: context ~1,234,567 tokens \u00B7 progress: not reported "
                             "\u00B7 errors in last 10 steps: 0 \u00B7 depth 2 \u00B7 heartbeat: "
                             "off \u00B7 interrupt requested: no\n"
                             "plan:\n"
                             "(no plan yet \u2014 use TodoWrite for multi-step work)\n"
                             "events:\n"
                             "pending: none\n"
                             "</working-memory>\n");
    free(out);
    char *g = working_goal(w);
    assert_string_equal(g, "Fix the build\nthen run the tests\r\n\n");
    free(g);
    working_free(w);
    todo_list_free(plan);
}

static void test_render_full(void **state)
{
    todo_list *plan = todo_list_new();
    set_plan(plan, "[{\"content\":\"read\",\"status\":\"completed\"},"
                   "{\"content\":\"patch\",\"status\":\"completed\"},"
                   "{\"content\":\"build\",\"status\":\"in_progress\"},"
                   "{\"content\":\"test\",\"status\":\"pending\"},"
                   "{\"content\":\"commit\",\"status\":\"pending\"}]");
    working *w = working_new(plan);
    working_set_goal(w, "Fix the build");
    dashboard d = {.tokens = 6712, .window = 16000, .budget_total = 500000,
                   .budget_used = 120000, .turn = 7};
    working_set_dashboard(w, &d);
    working_note_step(w, false);
    working_note_step(w, true);
    working_note_step(w, false);

    const int64_t t0 = 1764491284123; /* 2025-11-30 08:28:04 UTC */
    assert_int_equal(add(w, "ev_1", "fp1", "filesystem", "src/a.c changed", EVENT_LOW, t0), 1);
    assert_int_equal(add(w, "ev_2", "fp2", "process", "build server\nexited", EVENT_CRITICAL,
                         t0 + 61000),
                     1);
    assert_int_equal(add(w, "ev_3", "fp3", "resource", "disk 91% full", EVENT_HIGH, t0), 1);
    assert_int_equal(add(w, "ev_4", "fp4", "filesystem", "tmp file touched", EVENT_LOW, t0), 1);
    assert_int_equal(working_ack_event(w, "ev_3", "replan", "clean build dir first", NULL), 0);
    assert_int_equal(working_ack_event(w, "ev_4", "ignore", NULL, NULL), 0);
    working_set_knowledge(w, json_pack("[s]", "why does it fail?"), NULL,
                          json_pack("[s,s]", "c1", "c2"));

    char *out = working_render(w);
    assert_string_equal(
        out, "<working-memory>\n"
             "goal: Fix the build\n"
             "dashboard: context 42% (6,712 of 16,000 tokens) \u00B7 budget 120,000 of 500,000 "
             "tokens used \u00B7 progress: 2 of 5 plan items done \u00B7 errors in last 10 "
             "steps: 1 \u00B7 depth 0 \u00B7 heartbeat: off \u00B7 interrupt requested: no\n"
             "plan:\n"
             "\u2611 read\n\u2611 patch\n\u25D0 build\n\u2610 test\n\u2610 commit\n"
             "events:\n"
             "pending:\n"
             "- [ev_2] critical process: build server exited (detected 08:29:05 UTC)\n"
             "- [ev_1] low filesystem: src/a.c changed (detected 08:28:04 UTC)\n"
             "active risks:\n"
             "- [ev_3] resource: disk 91% full \u2014 replan: clean build dir first\n"
             "recent decisions:\n"
             "- [ev_3] replan: disk 91% full\n"
             "- [ev_4] ignore: tmp file touched\n"
             "knowledge: active questions 1 \u00B7 evidence packs 0 \u00B7 citations 2\n"
             "</working-memory>\n");
    free(out);

    /* The model's own progress text wins over the plan's counts; the
     * heartbeat shows its age. */
    working_set_progress(w, "build fixed,\ntests next");
    working_set_heartbeat(w, clock_wall_ms() - 5000);
    working_set_interrupt(w, true);
    out = working_render(w);
    assert_non_null(strstr(out, "\u00B7 progress: build fixed, tests next \u00B7"));
    assert_non_null(strstr(out, "\u00B7 heartbeat: 5s ago \u00B7 interrupt requested: yes\n"));
    free(out);
    dashboard got = working_get_dashboard(w);
    assert_int_equal(got.turn, 7);
    assert_int_equal(got.errors_recent, 1);
    assert_true(got.interrupt_requested);

    /* Knowledge cleared: the line goes. */
    working_set_knowledge(w, json_array(), NULL, json_object());
    out = working_render(w);
    assert_null(strstr(out, "knowledge:"));
    free(out);
    working_free(w);
    todo_list_free(plan);
}

static void test_ids_and_dedupe(void **state)
{
    working *w = working_new(NULL);
    assert_int_equal(working_add_event(w, NULL), -1);
    /* No id: "ev_" + a UUIDv7. */
    assert_int_equal(add(w, NULL, "fs:src/a.c:42", "filesystem", "a.c changed", EVENT_HIGH, 0),
                     1);
    size_t n;
    surface_event *evs = working_events(w, &n);
    assert_int_equal(n, 1);
    assert_int_equal(strncmp(evs[0].id, "ev_", 3), 0);
    assert_true(uuid_valid(evs[0].id + 3));
    assert_int_equal(evs[0].state, EVENT_PROJECTED);
    assert_true(evs[0].detected_ms > 0);
    char *gen = strdup(evs[0].id);
    working_events_free(evs, n);

    /* The same change again, under another id: not reported twice. */
    assert_int_equal(add(w, NULL, "fs:src/a.c:42", "filesystem", "a.c changed", EVENT_HIGH, 0),
                     0);
    assert_int_equal(add(w, "ev_other", "fs:src/a.c:42", "filesystem", "again", EVENT_LOW, 0),
                     0);
    /* A given id is kept; the same id twice is one event. */
    assert_int_equal(add(w, "ev_given", "fp-b", "process", "b", EVENT_LOW, 0), 1);
    assert_int_equal(add(w, "ev_given", "fp-c", "process", "c", EVENT_LOW, 0), 0);
    assert_int_equal(working_pending_count(w), 2);

    /* Still deduped while an active risk, and while resolved but among the
     * recent decisions. */
    assert_int_equal(working_ack_event(w, gen, "defer", NULL, NULL), 0);
    assert_int_equal(add(w, NULL, "fs:src/a.c:42", "filesystem", "x", EVENT_HIGH, 0), 0);
    assert_int_equal(working_ack_event(w, "ev_given", "ignore", NULL, NULL), 0);
    assert_int_equal(state_of(w, "ev_given"), EVENT_RESOLVED);
    assert_int_equal(add(w, NULL, "fp-b", "process", "b", EVENT_LOW, 0), 0);

    /* Once its decision leaves the window, a resolved event is archived;
     * an active risk stays whatever happens to its decision. */
    for (int i = 0; i < WORKING_RECENT_DECISIONS; i++) {
        char id[32], fp[32];
        snprintf(id, sizeof id, "ev_fill%d", i);
        snprintf(fp, sizeof fp, "fill%d", i);
        assert_int_equal(add(w, id, fp, "external_signal", "fill", EVENT_LOW, 0), 1);
        assert_int_equal(working_ack_event(w, id, "ignore", NULL, NULL), 0);
    }
    assert_int_equal(state_of(w, "ev_given"), EVENT_ARCHIVED);
    assert_int_equal(state_of(w, gen), EVENT_ACKNOWLEDGED);
    assert_int_equal(add(w, NULL, "fp-b", "process", "b", EVENT_LOW, 0), 1);
    char *out = working_render(w);
    assert_null(strstr(out, "[ev_given]"));
    assert_non_null(strstr(out, "[ev_fill0] ignore: fill"));
    free(out);
    free(gen);
    working_free(w);
}

static void test_ack_rules(void **state)
{
    working *w = working_new(NULL);
    assert_int_equal(add(w, "ev_a", "fa", "filesystem", "a", EVENT_HIGH, 1000), 1);
    assert_int_equal(add(w, "ev_b", "fb", "process", "b", EVENT_CRITICAL, 1000), 1);
    working_set_interrupt(w, true);

    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(working_ack_event(w, "ev_nope", "ignore", NULL, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_non_null(strstr(err.message, "ev_nope"));
    assert_int_equal(working_ack_event(w, NULL, "ignore", NULL, &err), -1);

    loom_error_clear(&err);
    assert_int_equal(working_ack_event(w, "ev_a", "shrug", NULL, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    assert_non_null(strstr(err.message, "shrug"));
    assert_non_null(strstr(err.message, EVENT_DISPOSITIONS));
    assert_int_equal(working_ack_event(w, "ev_a", NULL, NULL, NULL), -1);
    assert_int_equal(state_of(w, "ev_a"), EVENT_PROJECTED);
    assert_int_equal(working_pending_count(w), 2);

    /* ignore: resolved at once, a recent decision, no risk. */
    assert_int_equal(working_ack_event(w, "ev_a", "ignore", "noise", NULL), 0);
    assert_int_equal(state_of(w, "ev_a"), EVENT_RESOLVED);
    assert_int_equal(working_pending_count(w), 1);
    assert_true(working_get_dashboard(w).interrupt_requested);
    char *out = working_render(w);
    assert_null(strstr(out, "active risks:"));
    assert_non_null(strstr(out, "recent decisions:\n- [ev_a] ignore: a\n"));
    assert_non_null(strstr(out, "pending:\n- [ev_b] critical process: b"));
    free(out);

    /* replan: an active risk until resolved; the last pending one clears
     * the interrupt request. */
    assert_int_equal(working_ack_event(w, "ev_b", "replan", NULL, NULL), 0);
    assert_int_equal(state_of(w, "ev_b"), EVENT_ACKNOWLEDGED);
    assert_int_equal(working_pending_count(w), 0);
    assert_false(working_get_dashboard(w).interrupt_requested);
    out = working_render(w);
    assert_non_null(strstr(out, "pending: none\nactive risks:\n- [ev_b] process: b \u2014 replan\n"
                                "recent decisions:\n- [ev_a] ignore: a\n- [ev_b] replan: b\n"));
    free(out);
    assert_int_equal(working_resolve_event(w, "ev_b"), 0);
    assert_int_equal(state_of(w, "ev_b"), EVENT_RESOLVED);
    out = working_render(w);
    assert_null(strstr(out, "active risks:"));
    assert_non_null(strstr(out, "- [ev_b] replan: b\n"));
    free(out);

    /* Every disposition is accepted. */
    const char *all[] = {"ignore", "defer", "replan", "decompose", "handoff_to_harness",
                         "terminate_current_act"};
    for (size_t i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof id, "ev_d%zu", i);
        assert_int_equal(add(w, id, id, "resource", "d", EVENT_LOW, 1), 1);
        assert_int_equal(working_ack_event(w, id, all[i], NULL, NULL), 0);
        assert_int_equal(state_of(w, id), i == 0 ? EVENT_RESOLVED : EVENT_ACKNOWLEDGED);
    }
    working_free(w);
}

static void test_forward_only(void **state)
{
    working *w = working_new(NULL);
    assert_int_equal(add(w, "ev_x", "fx", "process", "x", EVENT_HIGH, 1), 1);
    /* Projected cannot jump to resolved without a disposition. */
    assert_int_equal(working_resolve_event(w, "ev_x"), -1);
    assert_int_equal(working_resolve_event(w, "ev_none"), -1);
    assert_int_equal(state_of(w, "ev_x"), EVENT_PROJECTED);

    assert_int_equal(working_ack_event(w, "ev_x", "defer", "later", NULL), 0);
    loom_error err;
    loom_error_clear(&err);
    /* Acknowledged once: a second ack (even "ignore") is refused and changes
     * nothing, disposition included. */
    assert_int_equal(working_ack_event(w, "ev_x", "ignore", NULL, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_int_equal(state_of(w, "ev_x"), EVENT_ACKNOWLEDGED);
    size_t n;
    surface_event *evs = working_events(w, &n);
    assert_int_equal(n, 1);
    assert_string_equal(evs[0].disposition, "defer");
    assert_string_equal(evs[0].note, "later");
    working_events_free(evs, n);

    assert_int_equal(working_resolve_event(w, "ev_x"), 0);
    assert_int_equal(working_resolve_event(w, "ev_x"), -1);
    assert_int_equal(working_ack_event(w, "ev_x", "replan", NULL, NULL), -1);
    assert_int_equal(state_of(w, "ev_x"), EVENT_RESOLVED);
    /* Re-adding it does not bring it back to pending. */
    assert_int_equal(add(w, "ev_x", "fx", "process", "x", EVENT_HIGH, 1), 0);
    assert_int_equal(state_of(w, "ev_x"), EVENT_RESOLVED);
    assert_int_equal(working_pending_count(w), 0);
    working_free(w);
}

static void test_renew_request(void **state)
{
    working *w = working_new(NULL);
    assert_null(working_take_renew(w));
    working_request_renew(w, NULL);
    working_request_renew(w, "context is mostly stale tool output");
    char *r = working_take_renew(w);
    assert_string_equal(r, "context is mostly stale tool output");
    free(r);
    assert_null(working_take_renew(w));
    working_request_renew(w, "");
    r = working_take_renew(w);
    assert_string_equal(r, "requested");
    free(r);
    working_free(w);
}

/* The archive hook sees each resolved event leave the surface, once. */
static char archived_ids[4][32];
static int n_archived;
static void record_archive(void *ctx, const surface_event *ev)
{
    (void)ctx;
    assert_int_equal(ev->state, EVENT_ARCHIVED);
    if (n_archived < 4)
        snprintf(archived_ids[n_archived], sizeof archived_ids[0], "%s", ev->id);
    n_archived++;
}

static void test_archive_hook(void **state)
{
    (void)state;
    working *w = working_new(NULL);
    n_archived = 0;
    working_set_archive_hook(w, record_archive, NULL);
    assert_int_equal(add(w, "ev_first", "fp-first", "process", "first", EVENT_LOW, 0), 1);
    assert_int_equal(working_ack_event(w, "ev_first", "ignore", NULL, NULL), 0);
    assert_int_equal(n_archived, 0); /* resolved, but still a recent decision */
    for (int i = 0; i < WORKING_RECENT_DECISIONS; i++) {
        char id[32], fp[32];
        snprintf(id, sizeof id, "ev_more%d", i);
        snprintf(fp, sizeof fp, "more%d", i);
        assert_int_equal(add(w, id, fp, "process", "more", EVENT_LOW, 0), 1);
        assert_int_equal(working_ack_event(w, id, "ignore", NULL, NULL), 0);
    }
    assert_int_equal(n_archived, 1);
    assert_string_equal(archived_ids[0], "ev_first");
    working_set_archive_hook(w, NULL, NULL);
    working_free(w);
}

static void test_error_window(void **state)
{
    working *w = working_new(NULL);
    assert_int_equal(working_get_dashboard(w).errors_recent, 0);
    for (int i = 0; i < 3; i++)
        working_note_step(w, true);
    assert_int_equal(working_get_dashboard(w).errors_recent, 3);
    for (int i = 0; i < 7; i++)
        working_note_step(w, false);
    assert_int_equal(working_get_dashboard(w).errors_recent, 3);
    /* Step 11 pushes the first failure out, and so on. */
    working_note_step(w, false);
    assert_int_equal(working_get_dashboard(w).errors_recent, 2);
    working_note_step(w, true);
    assert_int_equal(working_get_dashboard(w).errors_recent, 2);
    for (int i = 0; i < 9; i++)
        working_note_step(w, false);
    assert_int_equal(working_get_dashboard(w).errors_recent, 1);
    working_note_step(w, false);
    assert_int_equal(working_get_dashboard(w).errors_recent, 0);
    for (int i = 0; i < 25; i++)
        working_note_step(w, true);
    assert_int_equal(working_get_dashboard(w).errors_recent, WORKING_ERROR_WINDOW);

    /* The loop's dashboard writes do not touch the derived or control
     * fields. */
    working_set_heartbeat(w, 12345);
    working_set_interrupt(w, true);
    dashboard d = {.tokens = 10, .window = 100, .errors_recent = 0, .last_hb_ms = 0,
                   .interrupt_requested = false, .depth = 1};
    working_set_dashboard(w, &d);
    dashboard got = working_get_dashboard(w);
    assert_int_equal(got.errors_recent, WORKING_ERROR_WINDOW);
    assert_int_equal(got.last_hb_ms, 12345);
    assert_true(got.interrupt_requested);
    assert_int_equal(got.tokens, 10);
    assert_int_equal(got.depth, 1);
    char *out = working_render(w);
    assert_non_null(strstr(out, "context 10% (10 of 100 tokens)"));
    assert_non_null(strstr(out, "errors in last 10 steps: 10"));
    free(out);
    working_free(w);
}

/* A working memory with something in every part. */
static working *populated(todo_list *plan)
{
    set_plan(plan, "[{\"content\":\"one\",\"status\":\"completed\",\"activeForm\":\"Doing one\"},"
                   "{\"content\":\"two \\u00e9\",\"status\":\"in_progress\"},"
                   "{\"content\":\"three\",\"status\":\"pending\",\"activeForm\":\"Three-ing\"}]");
    working *w = working_new(plan);
    working_set_goal(w, "Ship it\nwithout breaking main");
    working_set_progress(w, "half way");
    dashboard d = {.tokens = 9000, .window = 200000, .budget_total = 1000000,
                   .budget_used = 4000, .depth = 1, .turn = 12};
    working_set_dashboard(w, &d);
    working_note_step(w, true);
    working_note_step(w, false);
    working_note_step(w, true);
    working_set_interrupt(w, true);
    assert_int_equal(add(w, NULL, "fp-pending", "filesystem", "pending one", EVENT_CRITICAL,
                         1764491284123),
                     1);
    assert_int_equal(add(w, "ev_risk", "fp-risk", "resource", "risky", EVENT_HIGH, 1764491285000),
                     1);
    assert_int_equal(add(w, "ev_done", "fp-done", "process", "done", EVENT_LOW, 1764491286000),
                     1);
    assert_int_equal(add(w, "ev_ign", "fp-ign", "mf_events", "ign", EVENT_LOW, 1764491287000), 1);
    assert_int_equal(working_ack_event(w, "ev_risk", "decompose", "split it", NULL), 0);
    assert_int_equal(working_ack_event(w, "ev_done", "replan", NULL, NULL), 0);
    assert_int_equal(working_resolve_event(w, "ev_done"), 0);
    assert_int_equal(working_ack_event(w, "ev_ign", "ignore", "noise", NULL), 0);
    working_set_knowledge(w, json_pack("[{s:s}]", "q", "why?"),
                          json_pack("[{s:s, s:[s]}]", "pack", "p1", "citations", "c1"),
                          json_pack("[s]", "c1"));
    return w;
}

static void assert_same_file(const char *a, const char *b)
{
    char *x = slurp(a), *y = slurp(b);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

static void test_save_load_roundtrip(void **state)
{
    todo_list *plan = todo_list_new();
    working *w = populated(plan);
    char *dir1 = at("mf1"), *dir2 = at("mf1/again");
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(working_save(w, dir1, &err), 0);

    todo_list *plan2 = todo_list_new();
    working *w2 = working_new(plan2);
    working_set_goal(w2, "something else");
    assert_int_equal(add(w2, "ev_stale", "fp-stale", "process", "stale", EVENT_LOW, 1), 1);
    assert_int_equal(working_load(w2, dir1, &err), 0);

    /* Plan items byte-identical. */
    json_t *j1 = todo_list_json(plan), *j2 = todo_list_json(plan2);
    char *p1 = json_dumps(j1, 0), *p2 = json_dumps(j2, 0);
    assert_int_equal(json_array_size(j2), 3);
    assert_string_equal(p1, p2);
    free(p1);
    free(p2);
    json_decref(j1);
    json_decref(j2);

    /* Events keep ids, states, dispositions, notes, times. */
    size_t n1, n2;
    surface_event *a = working_events(w, &n1), *b = working_events(w2, &n2);
    assert_int_equal(n1, n2);
    assert_int_equal(n1, 4);
    for (size_t i = 0; i < n1; i++) {
        assert_string_equal(a[i].id, b[i].id);
        assert_string_equal(a[i].fingerprint, b[i].fingerprint);
        assert_string_equal(a[i].source, b[i].source);
        assert_string_equal(a[i].summary, b[i].summary);
        assert_int_equal(a[i].urgency, b[i].urgency);
        assert_int_equal(a[i].state, b[i].state);
        assert_int_equal(a[i].detected_ms, b[i].detected_ms);
        if (a[i].disposition)
            assert_string_equal(a[i].disposition, b[i].disposition);
        else
            assert_null(b[i].disposition);
        if (a[i].note)
            assert_string_equal(a[i].note, b[i].note);
        else
            assert_null(b[i].note);
    }
    assert_int_equal(b[0].state, EVENT_PROJECTED);
    assert_int_equal(b[1].state, EVENT_ACKNOWLEDGED);
    assert_int_equal(b[2].state, EVENT_RESOLVED);
    assert_int_equal(b[3].state, EVENT_RESOLVED);
    working_events_free(a, n1);
    working_events_free(b, n2);

    /* Goal, dashboard and the whole block: identical. */
    char *g = working_goal(w2);
    assert_string_equal(g, "Ship it\nwithout breaking main");
    free(g);
    dashboard d1 = working_get_dashboard(w), d2 = working_get_dashboard(w2);
    assert_int_equal(d1.tokens, d2.tokens);
    assert_int_equal(d1.window, d2.window);
    assert_int_equal(d1.budget_total, d2.budget_total);
    assert_int_equal(d1.budget_used, d2.budget_used);
    assert_int_equal(d1.errors_recent, d2.errors_recent);
    assert_int_equal(d2.errors_recent, 2);
    assert_int_equal(d1.depth, d2.depth);
    assert_int_equal(d1.last_hb_ms, d2.last_hb_ms);
    assert_true(d2.interrupt_requested);
    assert_int_equal(d1.turn, d2.turn);
    char *r1 = working_render(w), *r2 = working_render(w2);
    assert_string_equal(r1, r2);
    assert_null(strstr(r2, "ev_stale"));
    free(r1);
    free(r2);

    /* Saving what was loaded writes the same bytes. */
    assert_int_equal(working_save(w2, dir2, &err), 0);
    const char *names[] = {"working_state.json", "plan_state.json", "event_state.json",
                           "knowledge_state.json"};
    for (size_t i = 0; i < 4; i++) {
        loom_str x = LOOM_STR_INIT, y = LOOM_STR_INIT;
        str_printf(&x, "%s/%s", dir1, names[i]);
        str_printf(&y, "%s/%s", dir2, names[i]);
        assert_same_file(x.ptr, y.ptr);
        str_free(&x);
        str_free(&y);
    }

    /* The error window survives too: the next step pushes the same outcome
     * out in both. */
    for (int i = 0; i < 8; i++) {
        working_note_step(w, false);
        working_note_step(w2, false);
        assert_int_equal(working_get_dashboard(w).errors_recent,
                         working_get_dashboard(w2).errors_recent);
    }
    assert_int_equal(working_get_dashboard(w2).errors_recent, 1);

    /* Loaded events still dedupe and still take their next step. */
    assert_int_equal(add(w2, NULL, "fp-pending", "filesystem", "again", EVENT_LOW, 0), 0);
    assert_int_equal(working_resolve_event(w2, "ev_risk"), 0);

    working_free(w);
    working_free(w2);
    todo_list_free(plan);
    todo_list_free(plan2);
    free(dir1);
    free(dir2);
}

static void test_missing_and_damaged(void **state)
{
    todo_list *plan = todo_list_new();
    working *w = working_new(plan);
    working_set_goal(w, "keep me");
    loom_error err;
    loom_error_clear(&err);

    /* Nothing there: fine, nothing changes. */
    char *empty = at("empty");
    assert_int_equal(file_mkdirs(empty, 0755, NULL), 0);
    assert_int_equal(working_load(w, empty, &err), 0);
    assert_int_equal(working_load(w, tmpdir, &err), 0);
    char *g = working_goal(w);
    assert_string_equal(g, "keep me");
    free(g);

    /* A good snapshot with one damaged file: an error naming it, and none
     * of the good files applied. */
    todo_list *src_plan = todo_list_new();
    working *src = populated(src_plan);
    char *dir = at("bad");
    assert_int_equal(working_save(src, dir, &err), 0);
    char *events = at("bad/event_state.json");
    put(events, "{\"events\": [ {\"id\": \"ev_1\",, } ]}");
    assert_true(working_load(w, dir, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_SESSION_CORRUPT);
    assert_non_null(strstr(err.message, "event_state.json"));
    assert_non_null(strstr(err.message, "line 1"));
    g = working_goal(w);
    assert_string_equal(g, "keep me");
    free(g);
    char *r = todo_list_render(plan);
    assert_string_equal(r, "");
    free(r);

    /* Well-formed JSON with a wrong value: the file and the member named. */
    put(events, "{\"events\": [{\"id\": \"ev_1\", \"urgency\": \"low\", \"state\": \"flying\"}]}");
    loom_error_clear(&err);
    assert_true(working_load(w, dir, &err) < 0);
    assert_non_null(strstr(err.message, "event_state.json"));
    assert_non_null(strstr(err.message, "events[0].state \"flying\""));

    put(events, "{\"events\": [{\"id\": \"ev_1\", \"urgency\": \"low\", \"state\": "
                "\"acknowledged\", \"disposition\": \"panic\"}]}");
    assert_true(working_load(w, dir, &err) < 0);
    assert_non_null(strstr(err.message, "events[0].disposition \"panic\""));

    put(events, "[1, 2]");
    assert_true(working_load(w, dir, &err) < 0);
    assert_non_null(strstr(err.message, "event_state.json"));
    assert_non_null(strstr(err.message, "not a JSON object"));

    put(events, "{\"events\": []}");
    char *ws = at("bad/working_state.json");
    put(ws, "{\"goal\": \"g\", \"dashboard\": {\"tokens\": \"many\"}}");
    assert_true(working_load(w, dir, &err) < 0);
    assert_non_null(strstr(err.message, "working_state.json"));
    assert_non_null(strstr(err.message, "dashboard.tokens is not an integer"));
    free(ws);

    ws = at("bad/working_state.json");
    put(ws, "{\"goal\": \"restored\"}");
    char *ps = at("bad/plan_state.json");
    put(ps, "{\"todos\": [{\"content\": \"x\", \"status\": \"sleeping\"}]}");
    assert_true(working_load(w, dir, &err) < 0);
    assert_non_null(strstr(err.message, "plan_state.json"));
    assert_non_null(strstr(err.message, "todos[0]"));
    g = working_goal(w);
    assert_string_equal(g, "keep me");
    free(g);

    char *ks = at("bad/knowledge_state.json");
    put(ps, "{\"todos\": []}");
    put(ks, "{\"citations\": {}}");
    assert_true(working_load(w, dir, &err) < 0);
    assert_non_null(strstr(err.message, "knowledge_state.json"));
    assert_non_null(strstr(err.message, "citations is not an array"));

    /* Repaired: it loads. */
    put(ks, "{\"citations\": [\"c\"]}");
    assert_int_equal(working_load(w, dir, &err), 0);
    g = working_goal(w);
    assert_string_equal(g, "restored");
    free(g);
    r = working_render(w);
    assert_non_null(strstr(r, "knowledge: active questions 0 \u00B7 evidence packs 0 \u00B7 "
                              "citations 1\n"));
    free(r);

    free(ks);
    free(ps);
    free(ws);
    free(events);
    free(dir);
    free(empty);
    working_free(src);
    todo_list_free(src_plan);
    working_free(w);
    todo_list_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_minimal),
        cmocka_unit_test(test_render_full),
        cmocka_unit_test(test_ids_and_dedupe),
        cmocka_unit_test(test_ack_rules),
        cmocka_unit_test(test_forward_only),
        cmocka_unit_test(test_error_window),
        cmocka_unit_test(test_archive_hook),
        cmocka_unit_test(test_renew_request),
        cmocka_unit_test_setup_teardown(test_save_load_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_and_damaged, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_tool_live.c — what the tools hand the REPL's view (docs/repl.md):
 * Bash's output as tool.progress events while the command runs (new text
 * only, in order, at most ten a second plus the last), and the
 * structuredPatch of Edit's and Write's results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"
#include "session/file_history.h"
#include "tools/builtin/builtin.h"
#include "tools/file_state.h"

static char tmpdir[256];
static loom_cancel cancel_flag;

typedef struct seen {
    json_t *events;   /* the payloads, in order */
    json_t *times;    /* when each came (ms) */
} seen;

static void collect(void *ctx, loom_event_type type, json_t *payload)
{
    seen *s = ctx;
    if (type == LOOM_EV_TOOL_PROGRESS) {
        json_array_append_new(s->events, payload);
        json_array_append_new(s->times, json_integer(clock_mono_ms()));
    } else {
        json_decref(payload);
    }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int group_setup(void **state)
{
    (void)state;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-live-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir))
        return -1;
    char home[300];
    snprintf(home, sizeof home, "%s/home", tmpdir);
    setenv("LOOM_HOME", home, 1);
    setenv("LOOM_DISABLE_FILE_CHECKPOINTING", "1", 1);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static tool_result run(const tool_def *def, json_t *input, tool_ctx *ctx)
{
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(def->run(input, ctx, &r), 0);
    json_decref(input);
    return r;
}

static void bash_sends_its_output_while_it_runs(void **state)
{
    (void)state;
    seen s = {json_array(), json_array()};
    tool_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cwd = tmpdir;
    ctx.cancel = &cancel_flag;
    ctx.emit = collect;
    ctx.emit_ctx = &s;
    ctx.call_id = "call-1";
    tool_result r = run(&tool_bash,
                        json_pack("{s:s}", "command", "echo first; sleep 0.5; echo second"), &ctx);
    assert_false(r.is_error);
    assert_true(json_array_size(s.events) >= 2);
    const json_t *first = json_array_get(s.events, 0);
    assert_string_equal(json_get_str(first, "call_id", ""), "call-1");
    assert_string_equal(json_get_str(first, "tool", ""), "Bash");
    /* The first line came on its own: sent before the second was printed. */
    assert_string_equal(json_get_str(first, "output", ""), "first\n");
    loom_str all = LOOM_STR_INIT;
    size_t i;
    json_t *e;
    json_array_foreach(s.events, i, e) str_puts(&all, json_get_str(e, "output", ""));
    assert_string_equal(str_cstr(&all), "first\nsecond\n"); /* new text only, in order */
    assert_int_equal(json_get_int(json_array_get(s.events, json_array_size(s.events) - 1),
                                  "progress", 0), 13); /* bytes so far */
    str_free(&all);
    tool_result_free(&r);
    json_decref(s.events);
    json_decref(s.times);
}

static void bash_sends_at_most_ten_events_a_second(void **state)
{
    (void)state;
    seen s = {json_array(), json_array()};
    tool_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cwd = tmpdir;
    ctx.cancel = &cancel_flag;
    ctx.emit = collect;
    ctx.emit_ctx = &s;
    ctx.call_id = "call-2";
    /* Output without a pause for about a second. */
    int64_t began = clock_mono_ms();
    tool_result r = run(&tool_bash,
                        json_pack("{s:s}", "command",
                                  "for i in $(seq 1 40); do echo line $i; sleep 0.025; done"),
                        &ctx);
    int64_t took = clock_mono_ms() - began;
    size_t n = json_array_size(s.events);
    assert_true(n >= 1);
    /* Forty lines, but no more than one event per 100 ms, plus the last. */
    assert_true((int64_t)n <= took / 100 + 2);
    loom_str all = LOOM_STR_INIT;
    size_t i;
    json_t *e;
    json_array_foreach(s.events, i, e) str_puts(&all, json_get_str(e, "output", ""));
    assert_non_null(strstr(str_cstr(&all), "line 1\n"));
    assert_non_null(strstr(str_cstr(&all), "line 40\n"));
    str_free(&all);
    tool_result_free(&r);
    json_decref(s.events);
    json_decref(s.times);
}

static void write_and_edit_results_carry_a_structured_patch(void **state)
{
    (void)state;
    tool_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cwd = tmpdir;
    ctx.session_id = "sess";
    ctx.files = file_state_new();
    ctx.history = file_history_new("sess");
    char path[300];
    snprintf(path, sizeof path, "%s/p.txt", tmpdir);
    tool_result r = run(&tool_write, json_pack("{s:s,s:s}", "file_path", path, "content",
                                               "a\nb\nc\n"), &ctx);
    assert_false(r.is_error);
    char *patch = json_dump_compact(json_object_get(r.raw, "structuredPatch"));
    assert_string_equal(patch, "[{\"oldStart\":0,\"oldLines\":0,\"newStart\":1,\"newLines\":3,"
                               "\"lines\":[\"+a\",\"+b\",\"+c\"]}]");
    free(patch);
    tool_result_free(&r);
    r = run(&tool_edit, json_pack("{s:s,s:s,s:s}", "file_path", path, "old_string", "b",
                                  "new_string", "B"), &ctx);
    assert_false(r.is_error);
    patch = json_dump_compact(json_object_get(r.raw, "structuredPatch"));
    assert_string_equal(patch, "[{\"oldStart\":1,\"oldLines\":3,\"newStart\":1,\"newLines\":3,"
                               "\"lines\":[\" a\",\"-b\",\"+B\",\" c\"]}]");
    free(patch);
    tool_result_free(&r);
    file_state_free(ctx.files);
    file_history_free(ctx.history);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bash_sends_its_output_while_it_runs),
        cmocka_unit_test(bash_sends_at_most_ten_events_a_second),
        cmocka_unit_test(write_and_edit_results_carry_a_structured_patch),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

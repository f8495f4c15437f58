/* test_tool_shell.c — Bash (foreground and background), TaskOutput,
 * TaskStop and the task registry: capture, exit codes, caps, timeout and
 * cancel reaching the whole process group, background output windows,
 * stopping tasks and the registry killing what is left at its end.
 *
 * The test process makes itself a child subreaper, so a grandchild orphaned
 * by a killed shell is reparented to us (not to a PID 1 that may never
 * reap), and "it is gone" is checked by reaping it and seeing kill(pid, 0)
 * fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "tools/builtin/builtin.h"
#include "tools/tasks.h"

static char tmpdir[256];
static loom_cancel cancel_flag;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int group_setup(void **state)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-shell-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static tool_ctx make_ctx(task_registry *tasks)
{
    tool_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cwd = tmpdir;
    ctx.session_id = "test-session";
    atomic_store(&cancel_flag, 0);
    ctx.cancel = &cancel_flag;
    ctx.tasks = tasks;
    return ctx;
}

/* Runs a tool on input (stolen) and returns its result. */
static tool_result run(const tool_def *def, json_t *input, tool_ctx *ctx)
{
    assert_non_null(input);
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(def->run(input, ctx, &r), 0);
    json_decref(input);
    assert_non_null(r.text.ptr);
    return r;
}

static tool_result bash(tool_ctx *ctx, const char *command)
{
    return run(&tool_bash, json_pack("{s:s}", "command", command), ctx);
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("expected to find \"%s\" in:\n%s", needle, hay);
}

static pid_t wait_pidfile(const char *path)
{
    int64_t until = clock_mono_ms() + 5000;
    for (;;) {
        char *data = NULL;
        if (file_read_all(path, &data, NULL, NULL) == 0 && data[0]) {
            pid_t pid = (pid_t)atol(data);
            free(data);
            if (pid > 1)
                return pid;
        }
        free(data);
        if (clock_mono_ms() > until)
            fail_msg("no pid written to %s", path);
        clock_sleep_ms(10, NULL);
    }
}

/* Waits up to 3 s for an orphaned descendant (ours, as subreaper) to die,
 * reaps it; then it must be gone from the process table. */
static void assert_gone(pid_t pid)
{
    int64_t until = clock_mono_ms() + 3000;
    int status;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno == ECHILD))
            break;
        if (clock_mono_ms() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("process %d survived the group kill", (int)pid);
        }
        clock_sleep_ms(5, NULL);
    }
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static char *path_in_tmp(const char *name)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", tmpdir, name);
    return str_steal(&s);
}

/* ---- foreground ------------------------------------------------------------ */

static void test_echo_capture(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    tool_result r = bash(&ctx, "echo hello; echo world");
    assert_false(r.is_error);
    assert_string_equal(r.text.ptr, "hello\nworld");
    assert_non_null(r.raw);
    assert_int_equal(json_get_int(r.raw, "exitCode", -9), 0);
    assert_true(json_is_null(json_object_get(r.raw, "signal")));
    assert_false(json_get_bool(r.raw, "interrupted", true));
    assert_false(json_get_bool(r.raw, "timedOut", true));
    assert_false(json_get_bool(r.raw, "sandboxDenied", true));
    assert_int_equal(json_get_int(r.raw, "stdoutBytesTruncated", -1), 0);
    assert_int_equal(json_get_int(r.raw, "stderrBytesTruncated", -1), 0);
    tool_result_free(&r);

    r = bash(&ctx, "true");
    assert_false(r.is_error);
    assert_string_equal(r.text.ptr, "(no output)");
    tool_result_free(&r);

    assert_false(tool_bash.read_only);
    assert_false(tool_bash.concurrency_safe);
    assert_string_equal(tool_bash.name, "Bash");
}

static void test_exit_code_and_stderr(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    tool_result r = bash(&ctx, "echo to-err >&2; echo to-out; exit 3");
    assert_true(r.is_error);
    /* Status first, then stdout, then stderr. */
    assert_string_equal(r.text.ptr, "Exit code 3\nto-out\nto-err");
    assert_int_equal(json_get_int(r.raw, "exitCode", -9), 3);
    tool_result_free(&r);

    r = bash(&ctx, "echo only-err >&2");
    assert_false(r.is_error);
    assert_string_equal(r.text.ptr, "only-err");
    tool_result_free(&r);

    /* Invalid input is a result the model can act on. */
    r = run(&tool_bash, json_pack("{s:i}", "command", 5), &ctx);
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "command");
    tool_result_free(&r);
}

static void test_signal_named(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    tool_result r = bash(&ctx, "echo before; kill -SEGV $$");
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "signal 11 (SIGSEGV)");
    assert_contains(r.text.ptr, "before");
    assert_string_equal(json_get_str(r.raw, "signal", ""), "SIGSEGV");
    assert_true(json_is_null(json_object_get(r.raw, "exitCode")));
    tool_result_free(&r);
}

static void test_cwd_and_env(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    tool_result r = bash(&ctx, "pwd; echo \"LOOM=$LOOM\"; cat; echo stdin-done");
    char real[PATH_MAX];
    assert_non_null(realpath(tmpdir, real));
    loom_str want = LOOM_STR_INIT;
    str_printf(&want, "%s\nLOOM=1\nstdin-done", real);
    assert_string_equal(r.text.ptr, want.ptr);
    str_free(&want);
    tool_result_free(&r);
}

static void test_timeout_kills_group(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    char *pidfile = path_in_tmp("timeout.pid");
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "echo partial; sleep 60 & echo $! > '%s'; wait", pidfile);
    /* On a loaded machine bash may not reach the `&` within 300 ms; then
     * there is no grandchild to check, and a longer timeout is tried. */
    long timeouts[] = {300, 3000};
    for (size_t i = 0; i < 2; i++) {
        int64_t t0 = clock_mono_ms();
        tool_result r = run(&tool_bash,
                            json_pack("{s:s, s:i}", "command", cmd.ptr, "timeout", timeouts[i]),
                            &ctx);
        int64_t took = clock_mono_ms() - t0;
        assert_true(r.is_error);
        char want[64];
        snprintf(want, sizeof want, "Command timed out after %ld ms", timeouts[i]);
        assert_contains(r.text.ptr, want);
        assert_true(json_get_bool(r.raw, "timedOut", false));
        assert_false(json_get_bool(r.raw, "interrupted", true));
        assert_true(took >= timeouts[i] && took < timeouts[i] + 5000);
        bool started = file_exists(pidfile);
        if (started)
            assert_contains(r.text.ptr, "partial");
        tool_result_free(&r);
        if (started) {
            assert_gone(wait_pidfile(pidfile));
            break;
        }
        print_message("the command had not started its grandchild after %ld ms; retrying\n",
                      timeouts[i]);
        assert_true(i == 0);
    }
    str_free(&cmd);
    free(pidfile);

    /* The pipeline's cap wins over a longer timeout from the model. */
    ctx.timeout_ms = 200;
    int64_t t0 = clock_mono_ms();
    tool_result r = run(&tool_bash,
                        json_pack("{s:s, s:i}", "command", "sleep 30", "timeout", 600000), &ctx);
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "timed out after 200 ms");
    assert_true(clock_mono_ms() - t0 < 5000);
    tool_result_free(&r);
}

typedef struct {
    loom_cancel *flag;
    long after_ms;
    const char *wait_for; /* a file to appear first (the command is running), or NULL */
    _Atomic int64_t fired_at;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = arg;
    int64_t until = clock_mono_ms() + 10000;
    while (c->wait_for && !file_exists(c->wait_for) && clock_mono_ms() < until)
        clock_sleep_ms(5, NULL);
    clock_sleep_ms(c->after_ms, NULL);
    atomic_store(&c->fired_at, clock_mono_ms());
    atomic_store(c->flag, 1);
    return NULL;
}

static void test_cancel_interrupts(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    char *pidfile = path_in_tmp("cancel.pid");
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "sleep 60 & echo $! > '%s'; wait", pidfile);
    /* Cancel once the command is running (its pid file exists), so a slow
     * machine cannot turn this into a cancel-before-start. */
    canceller c = {&cancel_flag, 100, pidfile, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    tool_result r = bash(&ctx, cmd.ptr);
    int64_t done = clock_mono_ms();
    pthread_join(th, NULL);
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "Command was interrupted");
    assert_true(json_get_bool(r.raw, "interrupted", false));
    /* SIGTERM ends sleep at once: well inside the 2 s grace period. */
    assert_true(done - atomic_load(&c.fired_at) < 1500);
    tool_result_free(&r);
    assert_gone(wait_pidfile(pidfile));
    str_free(&cmd);
    free(pidfile);

    /* Already cancelled: the command never runs. */
    char *marker = path_in_tmp("must-not-exist");
    loom_str touch = LOOM_STR_INIT;
    str_printf(&touch, "touch '%s'", marker);
    r = bash(&ctx, touch.ptr); /* flag is still set */
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "interrupted");
    assert_false(file_exists(marker));
    tool_result_free(&r);
    str_free(&touch);
    free(marker);
}

static void test_output_cap_keeps_head_and_tail(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    tool_result r = bash(&ctx, "seq 1 200000; seq 1 5 >&2");
    assert_false(r.is_error);
    /* Head, a marker with the byte count, the tail, then all of stderr. */
    assert_true(strncmp(r.text.ptr, "1\n2\n3\n", 6) == 0);
    assert_contains(r.text.ptr, "bytes truncated]");
    assert_contains(r.text.ptr, "199999\n200000\n1\n2\n3\n4\n5");
    assert_true(r.text.len < 31000);
    json_int_t cut = json_integer_value(json_object_get(r.raw, "stdoutBytesTruncated"));
    /* seq 1 200000 prints 1288895 bytes; about 30000 of them are shown. */
    assert_true(cut > 1288895 - 31000 && cut < 1288895 - 29000);
    assert_int_equal(json_get_int(r.raw, "stderrBytesTruncated", -1), 0);
    /* The cut lands on line ends. */
    const char *mark = strstr(r.text.ptr, "\n\n... [");
    assert_non_null(mark);
    const char *after = strstr(mark, "] ...\n\n");
    assert_non_null(after);
    after += 7;
    assert_true(after[0] >= '1' && after[0] <= '9');
    assert_true(*(after - 1) == '\n');
    tool_result_free(&r);

    /* Configurable with Claude Code's variable. */
    setenv("BASH_MAX_OUTPUT_LENGTH", "2000", 1);
    r = bash(&ctx, "seq 1 10000");
    unsetenv("BASH_MAX_OUTPUT_LENGTH");
    assert_true(r.text.len < 2200);
    assert_contains(r.text.ptr, "\n10000");
    tool_result_free(&r);
}

/* ---- background ------------------------------------------------------------- */

static char *started_id(const tool_result *r)
{
    const char *p = strstr(r->text.ptr, "with ID: ");
    assert_non_null(p);
    p += 9;
    return xstrndup(p, strcspn(p, "\n"));
}

static tool_result task_output(tool_ctx *ctx, const char *id, bool block, int timeout)
{
    return run(&tool_task_output,
               json_pack("{s:s, s:b, s:i}", "task_id", id, "block", block, "timeout", timeout),
               ctx);
}

static void test_background_task_output(void **state)
{
    task_registry *reg = task_registry_new();
    tool_ctx ctx = make_ctx(reg);
    /* "two" waits for a gate the test opens, so a loaded machine cannot
     * reorder the steps; then it comes 300 ms later. */
    char *gate = path_in_tmp("gate");
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "echo one; until [ -e '%s' ]; do sleep 0.02; done; sleep 0.3; echo two",
               gate);
    tool_result r = run(&tool_bash,
                        json_pack("{s:s, s:b, s:s}", "command", cmd.ptr, "run_in_background", 1,
                                  "description", "two lines"),
                        &ctx);
    assert_false(r.is_error);
    assert_contains(r.text.ptr, "Command running in background with ID: bash_1");
    char *id = started_id(&r);
    assert_string_equal(json_get_str(r.raw, "backgroundTaskId", ""), "bash_1");
    tool_result_free(&r);

    /* Peek until "one" has arrived. */
    loom_str seen = LOOM_STR_INIT;
    int64_t until = clock_mono_ms() + 10000;
    while (!strstr(str_cstr(&seen), "one") && clock_mono_ms() < until) {
        r = task_output(&ctx, id, false, 0);
        assert_false(r.is_error);
        assert_contains(r.text.ptr, "Task bash_1: running\n");
        assert_string_equal(json_get_str(r.raw, "retrieval_status", ""), "not_ready");
        str_puts(&seen, r.text.ptr);
        tool_result_free(&r);
        clock_sleep_ms(10, NULL);
    }
    assert_contains(str_cstr(&seen), "one");
    assert_null(strstr(str_cstr(&seen), "two"));
    str_free(&seen);
    int fd = open(gate, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    close(fd);

    r = task_output(&ctx, id, true, 5000);
    assert_false(r.is_error);
    assert_contains(r.text.ptr, "completed (exit 0)");
    assert_contains(r.text.ptr, "two");
    assert_null(strstr(r.text.ptr, "one")); /* only what is new */
    assert_string_equal(json_get_str(r.raw, "retrieval_status", ""), "success");
    assert_int_equal(json_get_int(r.raw, "exitCode", -9), 0);
    tool_result_free(&r);

    r = task_output(&ctx, id, true, 5000);
    assert_contains(r.text.ptr, "(no new output)");
    tool_result_free(&r);

    task_info *list;
    size_t n = task_registry_list(reg, &list);
    assert_int_equal(n, 1);
    assert_string_equal(list[0].id, "bash_1");
    assert_string_equal(list[0].description, "two lines");
    assert_int_equal(list[0].status, TASK_COMPLETED);
    assert_int_equal(list[0].output_total, 8);
    task_info_free_array(list, n);

    /* Unknown ids are named with the known ones. */
    r = task_output(&ctx, "bash_99", false, 0);
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "bash_99");
    assert_contains(r.text.ptr, "bash_1");
    tool_result_free(&r);

    assert_true(tool_task_output.read_only);
    assert_true(tool_task_output.concurrency_safe);
    free(id);
    free(gate);
    str_free(&cmd);
    task_registry_free(reg);
}


/* --- external tasks (tasks.h's port: background agents) --------------------- */

typedef struct fake_ext {
    bool running;
    bool released;
    int stops;
    bool unread;             /* "agent says hi" not read yet */
} fake_ext;

static void ext_info(void *ctx, task_info *info)
{
    fake_ext *e = ctx;
    info->command = strdup("Agent: look around");
    info->description = strdup("look around");
    info->status = e->running ? TASK_RUNNING : e->stops ? TASK_KILLED : TASK_COMPLETED;
    info->exit_code = e->running || e->stops ? -1 : 0;
    info->output_total = 13;
}

static void ext_read(void *ctx, loom_str *out, uint64_t *missed)
{
    fake_ext *e = ctx;
    *missed = 0;
    if (e->unread)
        str_puts(out, "agent says hi");
    e->unread = false;
}

static void ext_tail(void *ctx, size_t max, loom_str *out)
{
    (void)ctx, (void)max;
    str_puts(out, "agent says hi");
}

static int ext_wait(void *ctx, long timeout_ms, const loom_cancel *cancel)
{
    (void)timeout_ms, (void)cancel;
    fake_ext *e = ctx;
    e->running = false; /* it finishes while waited for */
    return 0;
}

static int ext_stop(void *ctx, long grace_ms)
{
    (void)grace_ms;
    fake_ext *e = ctx;
    e->stops++;
    bool was = e->running;
    e->running = false;
    return was ? 0 : 1;
}

static void ext_release(void *ctx)
{
    ((fake_ext *)ctx)->released = true;
}

static const task_external_ops fake_ext_ops = {ext_info, ext_read, ext_tail, ext_wait, ext_stop,
                                                ext_release};

static void test_external_tasks_answer_task_output_and_stop(void **state)
{
    (void)state;
    task_registry *reg = task_registry_new();
    tool_ctx ctx = make_ctx(reg);
    fake_ext a = {.running = true, .unread = true}, b = {.running = true};
    assert_int_equal(task_registry_add_external(reg, "agent_1", &fake_ext_ops, &a), 0);
    assert_int_equal(task_registry_add_external(reg, "agent_2", &fake_ext_ops, &b), 0);
    fake_ext dup = {0};
    assert_int_equal(task_registry_add_external(reg, "agent_2", &fake_ext_ops, &dup), -1);
    assert_true(dup.released); /* refused: released at once */

    tool_result r = task_output(&ctx, "agent_1", false, 0);
    assert_false(r.is_error);
    assert_contains(r.text.ptr, "agent_1: running");
    assert_contains(r.text.ptr, "agent says hi");
    tool_result_free(&r);
    r = task_output(&ctx, "agent_1", true, 5000);
    assert_contains(r.text.ptr, "completed (exit 0)");
    assert_null(strstr(r.text.ptr, "agent says hi")); /* read once */
    tool_result_free(&r);

    r = run(&tool_task_stop, json_pack("{s:s}", "task_id", "agent_2"), &ctx);
    assert_false(r.is_error);
    assert_int_equal(b.stops, 1);
    tool_result_free(&r);

    task_info *list;
    size_t n = task_registry_list(reg, &list);
    assert_int_equal(n, 2);
    assert_string_equal(list[1].id, "agent_2");
    assert_int_equal(list[1].status, TASK_KILLED);
    task_info_free_array(list, n);
    char *ids = task_registry_ids(reg);
    assert_string_equal(ids, "agent_1, agent_2");
    free(ids);

    /* The registry's end stops and releases each. */
    task_registry_free(reg);
    assert_true(a.released && b.released);
    assert_int_equal(a.stops, 1);
}

static void test_background_failure_and_wait_timeout(void **state)
{
    task_registry *reg = task_registry_new();
    tool_ctx ctx = make_ctx(reg);
    tool_result r = run(&tool_bash,
                        json_pack("{s:s, s:b}", "command", "echo bad >&2; exit 4",
                                  "run_in_background", 1),
                        &ctx);
    char *failing = started_id(&r);
    tool_result_free(&r);
    r = run(&tool_bash, json_pack("{s:s, s:b}", "command", "sleep 60", "run_in_background", 1),
            &ctx);
    char *sleeping = started_id(&r);
    tool_result_free(&r);

    r = task_output(&ctx, failing, true, 5000);
    assert_contains(r.text.ptr, "failed (exit 4)");
    assert_contains(r.text.ptr, "bad"); /* stderr is captured too */
    tool_result_free(&r);

    int64_t t0 = clock_mono_ms();
    r = task_output(&ctx, sleeping, true, 200);
    assert_true(clock_mono_ms() - t0 >= 200);
    assert_false(r.is_error);
    assert_contains(r.text.ptr, "running");
    assert_contains(r.text.ptr, "still running after waiting 200 ms");
    assert_string_equal(json_get_str(r.raw, "retrieval_status", ""), "timeout");
    tool_result_free(&r);

    /* A blocking wait honours the cancel flag. */
    canceller c = {&cancel_flag, 150, NULL, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    r = task_output(&ctx, sleeping, true, 10000);
    int64_t done = clock_mono_ms();
    pthread_join(th, NULL);
    assert_true(done - atomic_load(&c.fired_at) < 500); /* polled every 50 ms */
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "interrupted");
    tool_result_free(&r);

    free(failing);
    free(sleeping);
    task_registry_free(reg); /* stops the sleeper */
}

static void test_background_output_window(void **state)
{
    task_registry *reg = task_registry_new();
    tool_ctx ctx = make_ctx(reg);
    /* 3 MiB of output; only the last 1 MiB is kept. */
    tool_result r = run(&tool_bash,
                        json_pack("{s:s, s:b}", "command",
                                  "head -c 3145728 /dev/zero | tr '\\0' a; echo; echo END",
                                  "run_in_background", 1),
                        &ctx);
    char *id = started_id(&r);
    tool_result_free(&r);
    r = task_output(&ctx, id, true, 10000);
    assert_contains(r.text.ptr, "completed (exit 0)");
    assert_contains(r.text.ptr, "bytes of earlier output were dropped");
    assert_contains(r.text.ptr, "\nEND");
    json_int_t cut = json_integer_value(json_object_get(r.raw, "outputBytesTruncated"));
    assert_true(cut > 3145728 - 1048576);
    tool_result_free(&r);

    task_info info;
    assert_int_equal(task_registry_get(reg, id, &info), 0);
    assert_int_equal(info.output_total, 3145728 + 5);
    assert_int_equal(info.output_dropped, 3145728 + 5 - TASK_OUTPUT_WINDOW);
    task_info_free(&info);
    loom_str tail = LOOM_STR_INIT;
    assert_int_equal(task_registry_tail(reg, id, 6, &tail), 0);
    assert_string_equal(tail.ptr, "a\nEND\n");
    str_free(&tail);
    free(id);
    task_registry_free(reg);
}

/* What a background shell leaves behind ends with it: a setsid'd sleeper
 * started by a task whose shell then exits is gone once the task is seen
 * ended; a sleeper of a task still running at the registry's end is gone
 * when the registry is freed (the session's end). */
static void test_background_leftovers_end(void **state)
{
    task_registry *reg = task_registry_new();
    tool_ctx ctx = make_ctx(reg);
    char *pid_a = path_in_tmp("left-a.pid"), *pid_b = path_in_tmp("left-b.pid");
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "setsid -f sh -c 'echo $$ > \"%s\"; exec sleep 61' >/dev/null 2>&1;"
                     " while [ ! -s '%s' ]; do sleep 0.01; done", pid_a, pid_a);
    tool_result r = run(&tool_bash, json_pack("{s:s, s:b}", "command", cmd.ptr,
                                              "run_in_background", 1), &ctx);
    char *id = started_id(&r);
    tool_result_free(&r);
    pid_t detached = wait_pidfile(pid_a);
    task_info info;
    assert_int_equal(task_registry_wait(reg, id, 5000, NULL), 0);
    assert_int_equal(task_registry_get(reg, id, &info), 0);
    assert_int_not_equal(info.status, TASK_RUNNING);
    task_info_free(&info);
    /* The task is ended only after its leftovers were killed and reaped. */
    assert_int_equal(kill(detached, 0), -1);
    free(id);

    str_free(&cmd);
    str_printf(&cmd, "setsid -f sh -c 'echo $$ > \"%s\"; exec sleep 62' >/dev/null 2>&1; sleep 63",
               pid_b);
    r = run(&tool_bash, json_pack("{s:s, s:b}", "command", cmd.ptr, "run_in_background", 1),
            &ctx);
    tool_result_free(&r);
    pid_t detached_b = wait_pidfile(pid_b);
    task_registry_free(reg);
    assert_int_equal(kill(detached_b, 0), -1);
    str_free(&cmd);
    free(pid_a);
    free(pid_b);
}

static void test_task_stop_kills_group(void **state)
{
    task_registry *reg = task_registry_new();
    tool_ctx ctx = make_ctx(reg);
    char *pidfile = path_in_tmp("stop.pid");
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "echo started; sleep 60 & echo $! > '%s'; wait", pidfile);
    tool_result r = run(&tool_bash, json_pack("{s:s, s:b}", "command", cmd.ptr,
                                              "run_in_background", 1),
                        &ctx);
    char *id = started_id(&r);
    tool_result_free(&r);
    pid_t grandchild = wait_pidfile(pidfile);

    int64_t t0 = clock_mono_ms();
    r = run(&tool_task_stop, json_pack("{s:s}", "task_id", id), &ctx);
    assert_true(clock_mono_ms() - t0 < 2000); /* SIGTERM was enough */
    assert_false(r.is_error);
    assert_contains(r.text.ptr, "Stopped task bash_1");
    assert_contains(r.text.ptr, "started"); /* the output tail */
    assert_true(json_get_bool(r.raw, "stopped", false));
    tool_result_free(&r);
    assert_gone(grandchild);

    r = task_output(&ctx, id, false, 0);
    assert_contains(r.text.ptr, "killed");
    tool_result_free(&r);

    /* Stopping it again: nothing to stop. */
    r = run(&tool_task_stop, json_pack("{s:s}", "task_id", id), &ctx);
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "not running");
    tool_result_free(&r);

    r = run(&tool_task_stop, json_pack("{s:s}", "task_id", "nope"), &ctx);
    assert_true(r.is_error);
    assert_contains(r.text.ptr, "Known task IDs: bash_1");
    tool_result_free(&r);

    /* A group that ignores SIGTERM gets SIGKILL after the grace period. */
    char *pidfile2 = path_in_tmp("stubborn.pid");
    str_clear(&cmd);
    str_printf(&cmd, "trap '' TERM; sleep 60 & echo $! > '%s'; wait", pidfile2);
    char *id2 = NULL;
    loom_error err;
    assert_int_equal(task_registry_start(reg, cmd.ptr, tmpdir, NULL, &id2, &err), 0);
    pid_t stubborn = wait_pidfile(pidfile2);
    t0 = clock_mono_ms();
    assert_int_equal(task_registry_stop(reg, id2, 300), 0);
    int64_t took = clock_mono_ms() - t0;
    assert_true(took >= 300 && took < 3000);
    assert_gone(stubborn);
    task_info info;
    task_registry_get(reg, id2, &info);
    assert_int_equal(info.status, TASK_KILLED);
    task_info_free(&info);

    free(id2);
    free(pidfile2);
    free(id);
    free(pidfile);
    str_free(&cmd);
    task_registry_free(reg);
}

static void test_registry_free_kills_leftovers(void **state)
{
    task_registry *reg = task_registry_new();
    char *p1 = path_in_tmp("left1.pid"), *p2 = path_in_tmp("left2.pid");
    loom_str c1 = LOOM_STR_INIT, c2 = LOOM_STR_INIT;
    str_printf(&c1, "sleep 60 & echo $! > '%s'; wait", p1);
    str_printf(&c2, "trap '' TERM; sleep 60 & echo $! > '%s'; wait", p2);
    char *id1, *id2;
    loom_error err;
    assert_int_equal(task_registry_start(reg, c1.ptr, tmpdir, NULL, &id1, &err), 0);
    assert_int_equal(task_registry_start(reg, c2.ptr, tmpdir, NULL, &id2, &err), 0);
    assert_string_equal(id1, "bash_1");
    assert_string_equal(id2, "bash_2");
    pid_t g1 = wait_pidfile(p1), g2 = wait_pidfile(p2);
    int64_t t0 = clock_mono_ms();
    task_registry_free(reg);
    int64_t took = clock_mono_ms() - t0;
    /* One shared grace period (2 s) for the stubborn one, not one each. */
    assert_true(took < TASK_GRACE_MS + 3000);
    assert_gone(g1);
    assert_gone(g2);
    task_registry_free(NULL);

    /* A working directory that does not exist is a clear error. */
    reg = task_registry_new();
    char *id3 = NULL;
    assert_true(task_registry_start(reg, "true", "/nonexistent/loom", NULL, &id3, &err) < 0);
    assert_null(id3);
    assert_non_null(strstr(err.message, "/nonexistent/loom"));
    char *ids = task_registry_ids(reg);
    assert_string_equal(ids, "(none)");
    free(ids);
    task_registry_free(reg);

    free(id1);
    free(id2);
    free(p1);
    free(p2);
    str_free(&c1);
    str_free(&c2);
}

static void test_background_without_registry(void **state)
{
    tool_ctx ctx = make_ctx(NULL);
    tool_result r = run(&tool_bash, json_pack("{s:s, s:b}", "command", "true",
                                              "run_in_background", 1),
                        &ctx);
    assert_true(r.is_error);
    tool_result_free(&r);
    r = run(&tool_task_output, json_pack("{s:s}", "task_id", "bash_1"), &ctx);
    assert_true(r.is_error);
    tool_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_capture),
        cmocka_unit_test(test_exit_code_and_stderr),
        cmocka_unit_test(test_signal_named),
        cmocka_unit_test(test_cwd_and_env),
        cmocka_unit_test(test_timeout_kills_group),
        cmocka_unit_test(test_cancel_interrupts),
        cmocka_unit_test(test_output_cap_keeps_head_and_tail),
        cmocka_unit_test(test_background_task_output),
        cmocka_unit_test(test_external_tasks_answer_task_output_and_stop),
        cmocka_unit_test(test_background_failure_and_wait_timeout),
        cmocka_unit_test(test_background_output_window),
        cmocka_unit_test(test_task_stop_kills_group),
        cmocka_unit_test(test_background_leftovers_end),
        cmocka_unit_test(test_registry_free_kills_leftovers),
        cmocka_unit_test(test_background_without_registry),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

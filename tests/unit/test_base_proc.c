/* test_base_proc.c — proc_run: capture, exit status, caps, stdin, cwd, env,
 * timeout and cancel reaching the whole process group, and commands that
 * cannot be executed.
 *
 * The test process makes itself a child subreaper: grandchildren orphaned by
 * a killed shell are reparented to us rather than to PID 1 (which, in some
 * containers, never reaps), so "the grandchild is gone" can be checked by
 * reaping it and then seeing kill(pid, 0) fail. */
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
#include "base/proc.h"
#include "base/str.h"

static char tmpdir[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int group_setup(void **state)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-proc-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static proc_spec spec_of(const char *const *argv)
{
    proc_spec s;
    memset(&s, 0, sizeof s);
    s.argv = argv;
    return s;
}

static void run_ok(const proc_spec *s, proc_result *r)
{
    loom_error err;
    loom_error_clear(&err);
    int rc = proc_run(s, r, &err);
    if (rc != 0)
        fail_msg("proc_run failed: %s", err.message);
}

/* Reads a pid written by the child shell. */
static pid_t read_pid(const char *path)
{
    char *data;
    loom_error err;
    if (file_read_all(path, &data, NULL, &err) < 0)
        fail_msg("%s", err.message);
    pid_t pid = (pid_t)atol(data);
    free(data);
    assert_true(pid > 1);
    return pid;
}

/* Waits up to 2 s for an orphaned descendant (ours, as subreaper) to die and
 * reaps it; then it must be gone from the process table. */
static void assert_gone(pid_t pid)
{
    int64_t until = clock_mono_ms() + 2000;
    int status;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            assert_true(WIFSIGNALED(status));
            break;
        }
        if (w < 0 && errno == ECHILD)
            break; /* not ours to reap: already gone, or reaped elsewhere */
        if (clock_mono_ms() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("process %d survived the group kill", (int)pid);
        }
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void test_echo_capture(void **state)
{
    const char *argv[] = {"echo", "hello", "world", NULL};
    proc_spec s = spec_of(argv);
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.term_signal, 0);
    assert_false(r.timed_out);
    assert_false(r.cancelled);
    assert_string_equal(r.out, "hello world\n");
    assert_int_equal(r.out_len, 12);
    assert_string_equal(r.err, "");
    assert_int_equal(r.err_len, 0);
    assert_int_equal(r.out_dropped + r.err_dropped, 0);
    assert_true(r.duration_ms >= 0);
    proc_result_free(&r);
    proc_result_free(&r); /* safe twice */
}

static void test_exit_codes_and_signals(void **state)
{
    const char *a1[] = {"sh", "-c", "exit 3", NULL};
    proc_spec s = spec_of(a1);
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.term_signal, 0);
    proc_result_free(&r);

    const char *a2[] = {"false", NULL};
    s = spec_of(a2);
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 1);
    proc_result_free(&r);

    const char *a3[] = {"sh", "-c", "kill -KILL $$", NULL};
    s = spec_of(a3);
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, -1);
    assert_int_equal(r.term_signal, SIGKILL);
    assert_false(r.timed_out);
    proc_result_free(&r);
}

static void test_stderr(void **state)
{
    const char *argv[] = {"sh", "-c", "echo to-out; echo to-err >&2; exit 2", NULL};
    proc_spec s = spec_of(argv);
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 2);
    assert_string_equal(r.out, "to-out\n");
    assert_string_equal(r.err, "to-err\n");
    proc_result_free(&r);
}

static void test_capture_cap_counts_dropped(void **state)
{
    const char *argv[] = {"sh", "-c", "head -c 100000 /dev/zero; head -c 5000 /dev/zero >&2",
                          NULL};
    proc_spec s = spec_of(argv);
    s.capture_cap = 1000;
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out_len, 1000);
    assert_int_equal(r.out_dropped, 99000);
    assert_int_equal(r.err_len, 1000);
    assert_int_equal(r.err_dropped, 4000);
    /* NUL bytes are kept and counted, the buffer still terminated. */
    assert_int_equal(r.out[0], '\0');
    assert_int_equal(r.out[999], '\0');
    proc_result_free(&r);
}

static void test_stdin_input(void **state)
{
    const char *argv[] = {"cat", NULL};
    proc_spec s = spec_of(argv);
    s.input = "line one\n\0binary\n";
    s.input_len = 17;
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out_len, 17);
    assert_memory_equal(r.out, "line one\n\0binary\n", 17);
    proc_result_free(&r);

    /* Bigger than any pipe buffer: feeding and draining must interleave. */
    size_t big = 4 * 1024 * 1024;
    char *in = malloc(big);
    for (size_t i = 0; i < big; i++)
        in[i] = (char)('a' + i % 26);
    s.input = in;
    s.input_len = big;
    s.capture_cap = big;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out_len, big);
    assert_int_equal(r.out_dropped, 0);
    assert_memory_equal(r.out, in, big);
    proc_result_free(&r);

    /* A child that never reads its stdin must not hurt the parent
     * (SIGPIPE) nor hang it. */
    const char *no_read[] = {"true", NULL};
    s = spec_of(no_read);
    s.input = in;
    s.input_len = big;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    proc_result_free(&r);
    free(in);

    /* Empty input is an immediate EOF. */
    s = spec_of(argv);
    s.input = "";
    s.input_len = 0;
    run_ok(&s, &r);
    assert_int_equal(r.out_len, 0);
    proc_result_free(&r);
}

static void test_closed_stdio_in_parent(void **state)
{
    /* With fd 0 closed in Loom, the next pipe lands on fd 0; the child must
     * still get each stream on the right descriptor. */
    int saved = dup(0);
    assert_true(saved >= 0);
    close(0);
    const char *argv[] = {"sh", "-c", "cat; echo err >&2", NULL};
    proc_spec s = spec_of(argv);
    s.input = "via stdin\n";
    s.input_len = 10;
    s.timeout_ms = 5000;
    proc_result r;
    run_ok(&s, &r);
    dup2(saved, 0);
    close(saved);
    assert_false(r.timed_out);
    assert_string_equal(r.out, "via stdin\n");
    assert_string_equal(r.err, "err\n");
    proc_result_free(&r);
}

static void test_stdin_default_devnull(void **state)
{
    /* cat on /dev/null ends at once; on an inherited terminal it would block. */
    const char *argv[] = {"sh", "-c", "cat; readlink /proc/self/fd/0", NULL};
    proc_spec s = spec_of(argv);
    s.timeout_ms = 5000;
    proc_result r;
    run_ok(&s, &r);
    assert_false(r.timed_out);
    assert_string_equal(r.out, "/dev/null\n");
    proc_result_free(&r);
}

static void test_cwd_and_env(void **state)
{
    const char *argv[] = {"pwd", NULL};
    proc_spec s = spec_of(argv);
    s.cwd = tmpdir;
    proc_result r;
    run_ok(&s, &r);
    char real[PATH_MAX];
    assert_non_null(realpath(tmpdir, real));
    loom_str want = LOOM_STR_INIT;
    str_printf(&want, "%s\n", real);
    assert_string_equal(r.out, str_cstr(&want));
    str_free(&want);
    proc_result_free(&r);

    const char *sh[] = {"sh", "-c", "echo \"$LOOM_T_VAR|${HOME-unset}\"", NULL};
    const char *env[] = {"LOOM_T_VAR=given", "PATH=/usr/bin:/bin", NULL};
    s = spec_of(sh);
    s.envp = env;
    run_ok(&s, &r);
    assert_string_equal(r.out, "given|unset\n");
    proc_result_free(&r);

    /* A working directory that does not exist: like a shell, 127 + why. */
    const char *t[] = {"true", NULL};
    s = spec_of(t);
    s.cwd = "/nonexistent/loom/dir";
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 127);
    assert_non_null(strstr(r.err, "/nonexistent/loom/dir"));
    assert_non_null(strstr(r.err, "No such file or directory"));
    proc_result_free(&r);
}

static void test_missing_command_127(void **state)
{
    const char *argv[] = {"loom-no-such-command-xyz", "arg", NULL};
    proc_spec s = spec_of(argv);
    proc_result r;
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(proc_run(&s, &r, &err), 0);
    assert_int_equal(r.exit_code, 127);
    assert_int_equal(r.term_signal, 0);
    assert_non_null(strstr(r.err, "loom-no-such-command-xyz"));
    assert_non_null(strstr(r.err, "No such file or directory"));
    assert_string_equal(r.out, "");
    proc_result_free(&r);

    /* A file without execute permission. */
    loom_str plain = LOOM_STR_INIT;
    str_printf(&plain, "%s/not-executable", tmpdir);
    assert_int_equal(file_write_atomic(plain.ptr, "echo hi\n", 8, 0644, &err), 0);
    const char *argv2[] = {plain.ptr, NULL};
    s = spec_of(argv2);
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 127);
    assert_non_null(strstr(r.err, "Permission denied"));
    assert_non_null(strstr(r.err, plain.ptr));
    proc_result_free(&r);
    str_free(&plain);

    const char *empty[] = {NULL};
    s = spec_of(empty);
    assert_true(proc_run(&s, &r, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
}

static void test_timeout_kills_group(void **state)
{
    loom_str pidfile = LOOM_STR_INIT, script = LOOM_STR_INIT;
    str_printf(&pidfile, "%s/timeout.pid", tmpdir);
    str_printf(&script, "sleep 30 & echo $! > '%s'; wait", pidfile.ptr);
    const char *argv[] = {"sh", "-c", script.ptr, NULL};
    proc_spec s = spec_of(argv);
    /* Long enough that the shell has written its pid file even on a loaded
     * machine; the assertions are about what was killed, not how fast. */
    s.timeout_ms = 1000;
    s.grace_ms = 1000;
    proc_result r;
    run_ok(&s, &r);
    assert_true(r.timed_out);
    assert_false(r.cancelled);
    assert_int_equal(r.exit_code, -1);
    /* SIGTERM was enough: the SIGKILL after the grace period never came. */
    assert_int_equal(r.term_signal, SIGTERM);
    assert_true(r.duration_ms >= 1000);
    proc_result_free(&r);
    assert_gone(read_pid(pidfile.ptr));
    str_free(&pidfile);
    str_free(&script);
}

static void test_timeout_sigkill_after_grace(void **state)
{
    /* Everything in the group ignores SIGTERM: only the SIGKILL after the
     * grace period ends it, grandchild included. */
    loom_str pidfile = LOOM_STR_INIT, script = LOOM_STR_INIT;
    str_printf(&pidfile, "%s/stubborn.pid", tmpdir);
    str_printf(&script, "trap '' TERM; sleep 30 & echo $! > '%s'; wait", pidfile.ptr);
    const char *argv[] = {"sh", "-c", script.ptr, NULL};
    proc_spec s = spec_of(argv);
    s.timeout_ms = 1000;
    s.grace_ms = 300;
    proc_result r;
    run_ok(&s, &r);
    assert_true(r.timed_out);
    assert_int_equal(r.term_signal, SIGKILL);
    assert_true(r.duration_ms >= 1300);
    proc_result_free(&r);
    assert_gone(read_pid(pidfile.ptr));
    str_free(&pidfile);
    str_free(&script);
}

typedef struct {
    loom_cancel *flag;
    const char *wait_for;  /* cancel once this file exists (the group is up) */
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = arg;
    for (int i = 0; i < 1000 && access(c->wait_for, F_OK) != 0; i++)
        clock_sleep_ms(10, NULL);
    clock_sleep_ms(50, NULL); /* the pid is written before `wait` starts */
    atomic_store(c->flag, 1);
    return NULL;
}

static void test_cancel_from_thread(void **state)
{
    loom_cancel flag = 0;
    loom_str pidfile = LOOM_STR_INIT, script = LOOM_STR_INIT;
    str_printf(&pidfile, "%s/cancel.pid", tmpdir);
    str_printf(&script, "sleep 30 & echo $! > '%s'; wait", pidfile.ptr);
    const char *argv[] = {"sh", "-c", script.ptr, NULL};
    proc_spec s = spec_of(argv);
    s.cancel = &flag;
    s.grace_ms = 1000;
    canceller c = {&flag, pidfile.ptr};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    proc_result r;
    run_ok(&s, &r);
    pthread_join(th, NULL);
    assert_true(r.cancelled);
    assert_false(r.timed_out);
    assert_int_equal(r.term_signal, SIGTERM);

    proc_result_free(&r);
    assert_gone(read_pid(pidfile.ptr));
    str_free(&pidfile);
    str_free(&script);

    /* Cancelled before the start: nothing is run. */
    loom_error err;
    loom_error_clear(&err);
    const char *touch[] = {"sh", "-c", "echo ran > should-not-exist", NULL};
    s = spec_of(touch);
    s.cwd = tmpdir;
    s.cancel = &flag;
    assert_true(proc_run(&s, &r, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_RUN_CANCELLED);
    assert_true(r.cancelled);
    assert_null(r.out);
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/should-not-exist", tmpdir);
    assert_false(file_exists(path.ptr));
    str_free(&path);
}

static void test_background_child_does_not_hold_us(void **state)
{
    /* The command exits but leaves a grandchild holding stdout open: we
     * return after a short drain, not when the grandchild ends. */
    loom_str pidfile = LOOM_STR_INIT, script = LOOM_STR_INIT;
    str_printf(&pidfile, "%s/bg.pid", tmpdir);
    str_printf(&script, "sleep 30 & echo $! > '%s'; echo done", pidfile.ptr);
    const char *argv[] = {"sh", "-c", script.ptr, NULL};
    proc_spec s = spec_of(argv);
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "done\n");
    assert_true(r.duration_ms < 20000); /* returned long before the 30 s sleep ends */
    proc_result_free(&r);
    pid_t bg = read_pid(pidfile.ptr);
    kill(bg, SIGKILL);
    assert_gone(bg);
    str_free(&pidfile);
    str_free(&script);
}

/* Nothing a command starts outlives the call: a grandchild that left the
 * group and the session (setsid), and one that stayed in the group, are both
 * killed and reaped by the time proc_run returns — not later. */
static void test_leftovers_end_with_the_call(void **state)
{
    (void)state;
    loom_str a = LOOM_STR_INIT, b = LOOM_STR_INIT, script = LOOM_STR_INIT;
    str_printf(&a, "%s/detached.pid", tmpdir);
    str_printf(&b, "%s/grouped.pid", tmpdir);
    str_printf(&script,
               "setsid -f sh -c 'echo $$ > \"%s.tmp\"; mv \"%s.tmp\" \"%s\"; exec sleep 31'"
               " >/dev/null 2>&1; (sh -c 'echo $$ > \"%s\"; exec sleep 32' &);"
               " while [ ! -s '%s' ] || [ ! -s '%s' ]; do sleep 0.01; done; echo ok",
               a.ptr, a.ptr, a.ptr, b.ptr, a.ptr, b.ptr);
    const char *argv[] = {"sh", "-c", script.ptr, NULL};
    proc_spec s = spec_of(argv);
    s.timeout_ms = 10000;
    proc_result r;
    run_ok(&s, &r);
    assert_string_equal(r.out, "ok\n");
    proc_result_free(&r);
    pid_t detached = read_pid(a.ptr), grouped = read_pid(b.ptr);
    /* Reaped already: no waiting here, the pids are simply gone. */
    assert_int_equal(kill(detached, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(kill(grouped, 0), -1);
    assert_int_equal(errno, ESRCH);
    str_free(&a);
    str_free(&b);
    str_free(&script);
}

/* While another command runs (a background shell, registered), a call's
 * orphan that left its group still ends with the call — it started after
 * the call began — while an orphan that started before the call (the other
 * command's, say) is left to that command's end. */
static void test_leftovers_end_beside_a_running_command(void **state)
{
    (void)state;
    /* The running command: its own group, registered. */
    proc_spawn_lock();
    pid_t bg = fork();
    if (bg == 0) {
        setpgid(0, 0);
        execlp("sleep", "sleep", "60", (char *)NULL);
        _exit(127);
    }
    proc_spawn_unlock(bg);
    assert_true(bg > 0);
    setpgid(bg, bg);

    /* An older orphan, in a session of its own, re-parented to us. */
    loom_str old = LOOM_STR_INIT, a = LOOM_STR_INIT, script = LOOM_STR_INIT;
    str_printf(&old, "%s/old.pid", tmpdir);
    str_printf(&a, "%s/call.pid", tmpdir);
    pid_t mid = fork();
    if (mid == 0) {
        setsid();
        pid_t g = fork();
        if (g == 0) {
            char buf[32];
            int n = snprintf(buf, sizeof buf, "%d", (int)getpid());
            int fd = open(old.ptr, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0 && write(fd, buf, (size_t)n) == n)
                close(fd);
            execlp("sleep", "sleep", "61", (char *)NULL);
        }
        _exit(0);
    }
    waitpid(mid, NULL, 0);
    for (int i = 0; i < 200 && access(old.ptr, F_OK) != 0; i++) {
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
    pid_t older = read_pid(old.ptr);
    /* Past the clock tick it started in, so the call begins later. */
    struct timespec tick = {0, 40 * 1000000};
    nanosleep(&tick, NULL);

    str_printf(&script,
               "setsid -f sh -c 'echo $$ > \"%s.tmp\"; mv \"%s.tmp\" \"%s\"; exec sleep 33'"
               " >/dev/null 2>&1; while [ ! -s '%s' ]; do sleep 0.01; done; echo ok",
               a.ptr, a.ptr, a.ptr, a.ptr);
    const char *argv[] = {"sh", "-c", script.ptr, NULL};
    proc_spec s = spec_of(argv);
    s.timeout_ms = 10000;
    proc_result r;
    run_ok(&s, &r);
    assert_string_equal(r.out, "ok\n");
    proc_result_free(&r);
    pid_t detached = read_pid(a.ptr);
    assert_int_equal(kill(detached, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(kill(older, 0), 0); /* not the call's: still there */

    /* The running command ends: with nothing else running, the older
     * orphan goes too. */
    kill(-bg, SIGKILL);
    waitpid(bg, NULL, 0);
    proc_call_end(bg);
    assert_gone(older);
    str_free(&old);
    str_free(&a);
    str_free(&script);
}

/* A supervised child hands one descriptor to the parent: the callback runs
 * in the parent while the child lives, each time the descriptor is
 * readable. Without a supervisor the hand-over reports failure. */
static int pass_pipe_setup(void *ctx, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    int *expect_pass = ctx;
    if (proc_child_can_pass_fd() != (*expect_pass != 0))
        return -1;
    if (!*expect_pass)
        return proc_child_pass_fd(0) == -1 ? 0 : -1;
    int p[2];
    if (pipe(p) != 0)
        return -1;
    if (write(p[1], "x", 1) != 1 || proc_child_pass_fd(p[0]) != 0)
        return -1;
    close(p[0]);
    close(p[1]);
    return 0;
}

static void count_supervise(void *ctx, int fd)
{
    char c;
    if (read(fd, &c, 1) == 1 && c == 'x')
        (*(int *)ctx)++;
}

static void test_supervised_fd_reaches_parent(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "echo ran", NULL};
    int expect_pass = 1, seen = 0;
    proc_spec s = spec_of(argv);
    s.child_setup = pass_pipe_setup;
    s.child_ctx = &expect_pass;
    s.supervise = count_supervise;
    s.supervise_ctx = &seen;
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "ran\n");
    assert_int_equal(seen, 1);
    proc_result_free(&r);

    expect_pass = 0;
    s.supervise = NULL;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "ran\n");
    proc_result_free(&r);
}

static void test_signals_reset_for_child(void **state)
{
    /* Loom ignores SIGPIPE and may block signals; the child must start with
     * defaults, or `yes | head` would spin on EPIPE and complain. */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    sigset_t block, oldmask;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &oldmask);

    const char *argv[] = {"sh", "-c",
                          "yes | head -c 4 >/dev/null; grep -E '^(SigBlk|SigIgn)' /proc/self/status",
                          NULL};
    proc_spec s = spec_of(argv);
    s.timeout_ms = 5000;
    proc_result r;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_false(r.timed_out);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "SigBlk:\t0000000000000000"));
    proc_result_free(&r);

    pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
    sigaction(SIGPIPE, &old, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_capture),
        cmocka_unit_test(test_exit_codes_and_signals),
        cmocka_unit_test(test_stderr),
        cmocka_unit_test(test_capture_cap_counts_dropped),
        cmocka_unit_test(test_stdin_input),
        cmocka_unit_test(test_stdin_default_devnull),
        cmocka_unit_test(test_closed_stdio_in_parent),
        cmocka_unit_test(test_cwd_and_env),
        cmocka_unit_test(test_missing_command_127),
        cmocka_unit_test(test_timeout_kills_group),
        cmocka_unit_test(test_timeout_sigkill_after_grace),
        cmocka_unit_test(test_cancel_from_thread),
        cmocka_unit_test(test_background_child_does_not_hold_us),
        cmocka_unit_test(test_leftovers_end_with_the_call),
        cmocka_unit_test(test_leftovers_end_beside_a_running_command),
        cmocka_unit_test(test_supervised_fd_reaches_parent),
        cmocka_unit_test(test_signals_reset_for_child),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

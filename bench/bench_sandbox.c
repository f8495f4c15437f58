/* bench_sandbox.c — what the sandbox adds to starting a command.
 *
 * Each case forks a child that exits at once (or execs /bin/true) and is
 * waited for, RUNS times; the figure is wall time per command, median and
 * mean, in microseconds:
 *   fork              fork + _exit, the floor
 *   fork+apply        the child builds the rules and enters them (sandbox_apply)
 *   prepare+fork      the Bash tool's way: rules built in the parent
 *                     (sandbox_prepare), the child only enters them
 *   exec true         fork + exec /bin/true, unsandboxed
 *   exec true, sbx    the same under the sandbox (prepare + enter + exec)
 * and, timed apart so fork's noise does not drown them:
 *   prepare           sandbox_prepare alone, in the parent
 *   enter             sandbox_prep_apply alone, timed inside the child
 * The policy is the default one (credential stores under $HOME denied, temp
 * dirs writable) for the cwd, network denied.
 *
 * usage: bench_sandbox [RUNS]   (default 200). Prints a table and one JSON line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

typedef enum { B_FORK, B_APPLY, B_PREPARED, B_EXEC, B_EXEC_SBX } bench_case;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double one(bench_case c, const sandbox_policy *p)
{
    double t0 = now_us();
    sandbox_prep *prep = NULL;
    char msg[512];
    if ((c == B_PREPARED || c == B_EXEC_SBX) && sandbox_prepare(p, &prep, msg, sizeof msg) != 0) {
        fprintf(stderr, "sandbox_prepare: %s\n", msg);
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        if (c == B_APPLY && sandbox_apply(p, msg, sizeof msg) != 0)
            _exit(2);
        if ((c == B_PREPARED || c == B_EXEC_SBX) && sandbox_prep_apply(prep, msg, sizeof msg) != 0)
            _exit(2);
        if (c == B_EXEC || c == B_EXEC_SBX) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    sandbox_prep_free(prep);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed (status %d)\n", st);
        exit(1);
    }
    return now_us() - t0;
}

/* prepare, then enter in a child that sends back how long entering took. */
static void parts(const sandbox_policy *p, double *prepare_us, double *enter_us)
{
    char msg[512];
    sandbox_prep *prep = NULL;
    double t0 = now_us();
    if (sandbox_prepare(p, &prep, msg, sizeof msg) != 0) {
        fprintf(stderr, "sandbox_prepare: %s\n", msg);
        exit(1);
    }
    *prepare_us = now_us() - t0;
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        double t1 = now_us();
        int rc = sandbox_prep_apply(prep, msg, sizeof msg);
        double d = now_us() - t1;
        if (rc != 0 || write(fds[1], &d, sizeof d) != (ssize_t)sizeof d)
            _exit(2);
        _exit(0);
    }
    close(fds[1]);
    if (read(fds[0], enter_us, sizeof *enter_us) != (ssize_t)sizeof *enter_us) {
        fprintf(stderr, "the child did not report\n");
        exit(1);
    }
    close(fds[0]);
    waitpid(pid, NULL, 0);
    sandbox_prep_free(prep);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    if (runs < 1)
        runs = 1;
    int abi = sandbox_supported();
    if (abi < 1) {
        fprintf(stderr, "bench_sandbox: the sandbox is not supported here: %s\n",
                sandbox_unsupported_reason());
        return 1;
    }
    sandbox_policy p;
    sandbox_policy_init(&p, ".");
    p.enabled = true;

    static const char *const names[] = {"fork", "fork+apply", "prepare+fork", "exec true",
                                        "exec true, sbx"};
    static const char *const keys[] = {"fork_us", "fork_apply_us", "prepare_fork_us",
                                       "exec_us", "exec_sandboxed_us"};
    double median[5], mean[5];
    double *t = malloc(sizeof *t * (size_t)runs);
    for (int c = 0; c < 5; c++) {
        one((bench_case)c, &p); /* warm caches (and the seccomp program) */
        double sum = 0;
        for (int i = 0; i < runs; i++) {
            t[i] = one((bench_case)c, &p);
            sum += t[i];
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        median[c] = t[runs / 2];
        mean[c] = sum / runs;
    }
    double *pt = malloc(sizeof *pt * (size_t)runs), *et = malloc(sizeof *et * (size_t)runs);
    double psum = 0, esum = 0;
    for (int i = 0; i < runs; i++) {
        parts(&p, &pt[i], &et[i]);
        psum += pt[i];
        esum += et[i];
    }
    qsort(pt, (size_t)runs, sizeof *pt, cmp_double);
    qsort(et, (size_t)runs, sizeof *et, cmp_double);
    double prep_med = pt[runs / 2], enter_med = et[runs / 2];
    free(pt);
    free(et);
    free(t);

    printf("Landlock ABI %d, %d runs each, network denied, %zu denied paths\n", abi, runs,
           p.deny_read.n);
    printf("%-16s %12s %12s\n", "case", "median µs", "mean µs");
    for (int c = 0; c < 5; c++)
        printf("%-16s %12.1f %12.1f\n", names[c], median[c], mean[c]);
    printf("%-16s %12.1f %12.1f\n", "prepare", prep_med, psum / runs);
    printf("%-16s %12.1f %12.1f\n", "enter", enter_med, esum / runs);
    printf("sandbox cost per command (prepare + enter, medians): %.1f µs\n",
           prep_med + enter_med);
    printf("{\"abi\":%d,\"runs\":%d", abi, runs);
    for (int c = 0; c < 5; c++)
        printf(",\"%s\":%.1f", keys[c], median[c]);
    printf(",\"prepare_us\":%.1f,\"enter_us\":%.1f,\"sandbox_cost_us\":%.1f}\n", prep_med,
           enter_med, prep_med + enter_med);
    sandbox_policy_free(&p);
    return 0;
}

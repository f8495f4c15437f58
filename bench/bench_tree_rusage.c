/* bench_tree_rusage.c — runs one command and reports what its whole process
 * tree cost: user + system CPU, wall time to the command's exit, and peak RSS.
 * bench/peers.sh measures Loom, Codex and Claude Code with it, so every agent
 * is charged for the helpers it spawns (shells, tool runners, background
 * daemons) and nothing is subtracted that the agent could not avoid.
 *
 * Why a subreaper: /usr/bin/time only sees descendants that their parent
 * waited for, and reports CPU in 10 ms steps. Here the wrapper becomes the
 * reaper of every orphan in the tree (PR_SET_CHILD_SUBREAPER), so a helper
 * that outlives its parent is still waited for and counted. Helpers still
 * running 2 s after the command exits are killed (their CPU up to then is
 * counted) so a lingering daemon cannot hang the bench.
 *
 * usage: bench_tree_rusage OUT.json -- CMD [ARG...]
 * OUT.json gets {"exit":N,"cpu_ms":…,"user_ms":…,"sys_ms":…,"wall_ms":…,
 * "max_rss_kb":N,"lingering_killed":N}; the exit status is the command's. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double tv_ms(struct timeval tv)
{
    return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

/* Children of this process that are still alive (orphans re-parented to us
 * count too): read from /proc, since they may have left our process group. */
static int kill_own_children(void)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int killed = 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(proc))) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* The command name may hold spaces and parentheses: the fields after
         * it start at the last ')'. Field 4 is the parent pid. */
        char *close = strrchr(buf, ')');
        char state;
        int ppid;
        if (close && sscanf(close + 1, " %c %d", &state, &ppid) == 2 && ppid == self) {
            kill(atoi(e->d_name), SIGKILL);
            killed++;
        }
    }
    closedir(proc);
    return killed;
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: bench_tree_rusage OUT.json -- CMD [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        perror("bench_tree_rusage: prctl(PR_SET_CHILD_SUBREAPER)");
        return 2;
    }
    double start = now_ms();
    pid_t child = fork();
    if (child < 0) {
        perror("bench_tree_rusage: fork");
        return 2;
    }
    if (child == 0) {
        execvp(argv[3], argv + 3);
        fprintf(stderr, "bench_tree_rusage: cannot run %s: %s\n", argv[3], strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    double wall = now_ms() - start;

    /* Reap what the command left behind: give it 2 s to finish on its own. */
    int lingering = 0;
    double grace_end = now_ms() + 2000;
    for (;;) {
        pid_t p = waitpid(-1, NULL, WNOHANG);
        if (p < 0 && errno == ECHILD)
            break;
        if (p > 0)
            continue;
        if (now_ms() > grace_end) {
            lingering += kill_own_children();
            while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
            }
            break;
        }
        usleep(10000);
    }

    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        fprintf(stderr, "bench_tree_rusage: cannot write %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    double user = tv_ms(ru.ru_utime), sys = tv_ms(ru.ru_stime);
    fprintf(out,
            "{\"exit\":%d,\"cpu_ms\":%.3f,\"user_ms\":%.3f,\"sys_ms\":%.3f,\"wall_ms\":%.3f,"
            "\"max_rss_kb\":%ld,\"lingering_killed\":%d}\n",
            code, user + sys, user, sys, wall, ru.ru_maxrss, lingering);
    fclose(out);
    return code;
}

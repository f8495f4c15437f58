/* bench_startup.c — how soon the interactive loom is ready, and how soon a
 * typed line reaches the model. Driven by bench/startup.sh.
 *
 * Each run starts loom on a fresh pseudo-terminal (120x40), as a person's
 * terminal would, and takes two figures:
 *   start to first prompt   from just before fork to the moment the prompt
 *                           ("› ", after the "loom " header) is read from
 *                           the terminal: loading settings, making the agent
 *                           and the session, drawing the header;
 *   line to first request   from writing a line and its Enter to the
 *                           terminal (in one write, as a paste) to the
 *                           request's arrival at mockllm, read from the
 *                           mock's request log ("t", the same wall clock):
 *                           reading the line, starting the run, building
 *                           and sending the request.
 * Then it waits for the reply and the next prompt, and ends loom with
 * /exit. With a second loom (BASELINE), the two run in turn, A B A B …, so a
 * machine getting slower or faster during the call moves both alike; the
 * ratio is taken pair by pair and its median printed.
 *
 * usage: bench_startup MOCK_LOG RUNS LOOM [BASELINE_LOOM]
 * (BENCH_WARMUP=N: N unmeasured runs of each first, default 1)
 * The environment (provider variables pointing at mockllm, LOOM_HOME, TERM,
 * LANG) is the caller's and is passed to loom unchanged. Single-threaded;
 * owns each child it starts and reaps it. Prints a table and one JSON line;
 * exit status 1 when a run did not reach its prompt or request in time. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define BENCH_PROMPT "\xe2\x80\xba " /* the REPL's prompt, "› " */
#define BENCH_LINE "say hello\r"
/* Not Ctrl-D: typed the moment the prompt is drawn, it can come before the
 * line editor has the terminal (a person is never that quick), and a
 * Ctrl-D read by the terminal's own line discipline then is lost; a
 * whole line is not. */
#define BENCH_EXIT "/exit\r"
#define BENCH_TIMEOUT_S 30.0

typedef struct sample {
    double prompt_ms, request_ms;
} sample;

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Lines in the mock's log, and the "t" of line `want` (1-based) when it is
 * there. mockllm writes "t" first: {"t":1234.567890,…}. */
static long log_lines(const char *log, long want, double *t)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    long n = 0;
    while (getline(&line, &cap, f) > 0)
        if (++n == want && t && sscanf(line, "{\"t\":%lf", t) != 1)
            *t = -1;
    free(line);
    fclose(f);
    return n;
}

/* The terminal's output so far, kept whole (a run prints a few KiB). */
typedef struct screen {
    char *buf;
    size_t len, cap;
    bool closed; /* loom closed the terminal (it exited) */
} screen;

/* Reads what the terminal has for up to wait_ms; -1 at its end (loom exited). */
static int pump(int master, screen *s, int wait_ms)
{
    if (s->closed)
        return -1;
    struct pollfd p = {.fd = master, .events = POLLIN};
    int r = poll(&p, 1, wait_ms);
    if (r <= 0)
        return r < 0 && errno != EINTR ? -1 : 0;
    char chunk[4096];
    ssize_t n = read(master, chunk, sizeof chunk);
    if (n <= 0) {
        s->closed = true; /* EIO once the child has closed the slave side */
        return -1;
    }
    if (s->len + (size_t)n + 1 > s->cap) {
        s->cap = (s->len + (size_t)n + 1) * 2;
        s->buf = realloc(s->buf, s->cap);
        if (!s->buf)
            abort();
    }
    memcpy(s->buf + s->len, chunk, (size_t)n);
    s->len += (size_t)n;
    s->buf[s->len] = '\0';
    return 1;
}

/* The first prompt drawn at or after offset `from`, after the header. */
static const char *find_prompt(const screen *s, size_t from)
{
    if (!s->buf || from >= s->len)
        return NULL;
    const char *header = strstr(s->buf, "loom ");
    if (!header)
        return NULL;
    const char *start = s->buf + from > header ? s->buf + from : header;
    return strstr(start, BENCH_PROMPT);
}

/* A prompt after offset `from` not followed by the typed line. */
static bool next_prompt(const screen *s, size_t from)
{
    static const size_t line_len = sizeof BENCH_LINE - 2; /* without the \r */
    const char *p;
    while ((p = find_prompt(s, from)) != NULL) {
        const char *after = p + strlen(BENCH_PROMPT);
        if (strncmp(after, BENCH_LINE, line_len) != 0)
            return true;
        from = (size_t)(after - s->buf);
    }
    return false;
}

static pid_t spawn_on_pty(const char *loom, int *master_out)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) || unlockpt(master))
        return -1;
    struct winsize ws = {.ws_row = 40, .ws_col = 120};
    ioctl(master, TIOCSWINSZ, &ws);
    const char *slave = ptsname(master);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setsid();
        int fd = open(slave, O_RDWR);
        if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0)
            _exit(126);
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2)
            close(fd);
        close(master);
        execl(loom, loom, (char *)NULL);
        _exit(127);
    }
    *master_out = master;
    return pid;
}

/* One run of loom; 0 with s filled, -1 (after saying why) otherwise. */
static int run_once(const char *loom, const char *log, sample *out)
{
    long before = log_lines(log, 0, NULL);
    screen s = {0};
    int master = -1, rc = -1;
    double t0 = clock_s(CLOCK_MONOTONIC);
    pid_t pid = spawn_on_pty(loom, &master);
    if (pid < 0) {
        perror("bench_startup: pty/fork");
        return -1;
    }
    const char *why = "the first prompt";
    while (!find_prompt(&s, 0)) {
        if (pump(master, &s, 50) < 0 || clock_s(CLOCK_MONOTONIC) - t0 > BENCH_TIMEOUT_S)
            goto done;
    }
    out->prompt_ms = (clock_s(CLOCK_MONOTONIC) - t0) * 1000.0;

    /* From here on, a prompt is the one after the reply (the typed line's
     * echo has none, unless the editor redraws the line: that one is
     * followed by the line and skipped). */
    size_t mark = s.len;
    double typed = clock_s(CLOCK_REALTIME), t_req = -1;
    if (write(master, BENCH_LINE, strlen(BENCH_LINE)) != (ssize_t)strlen(BENCH_LINE))
        goto done;
    why = "the request at mockllm";
    while (log_lines(log, before + 1, &t_req) <= before) {
        if (pump(master, &s, 2) < 0 || clock_s(CLOCK_REALTIME) - typed > BENCH_TIMEOUT_S)
            goto done;
    }
    out->request_ms = (t_req - typed) * 1000.0;

    /* The reply, then the prompt again: /exit on it ends loom. */
    why = "the prompt after the reply";
    while (!next_prompt(&s, mark)) {
        if (pump(master, &s, 50) < 0 || clock_s(CLOCK_REALTIME) - typed > BENCH_TIMEOUT_S)
            goto done;
    }
    if (write(master, BENCH_EXIT, strlen(BENCH_EXIT)) != (ssize_t)strlen(BENCH_EXIT))
        goto done;
    why = NULL;
    rc = 0;
done:
    if (why)
        fprintf(stderr, "bench_startup: %s did not come %s; the terminal showed:\n%.*s\n", why,
                s.closed ? "before loom closed the terminal" : "within the time limit", (int)(s.len > 3000 ? 3000 : s.len),
                s.buf ? s.buf + (s.len > 3000 ? s.len - 3000 : 0) : "");
    /* Drain until loom closes the terminal, then reap it; 10 s at most.
     * The terminal closes a moment before the process can be reaped. */
    double end = clock_s(CLOCK_MONOTONIC) + 10;
    while (rc == 0 && clock_s(CLOCK_MONOTONIC) < end && pump(master, &s, 50) >= 0)
        ;
    int status;
    pid_t done_pid;
    while ((done_pid = waitpid(pid, &status, WNOHANG)) == 0 && rc == 0 &&
           clock_s(CLOCK_MONOTONIC) < end)
        usleep(1000);
    if (done_pid == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        if (rc == 0) {
            fprintf(stderr, "bench_startup: loom did not exit on /exit; the terminal showed:\n%.*s\n",
                    (int)(s.len > 3000 ? 3000 : s.len), s.buf ? s.buf + (s.len > 3000 ? s.len - 3000 : 0) : "");
            rc = -1;
        }
    }
    close(master);
    free(s.buf);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median, min and max of n values (sorted in place). */
static void stats(double *v, int n, double out[3])
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    out[0] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    out[1] = v[0];
    out[2] = v[n - 1];
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: bench_startup MOCK_LOG RUNS LOOM [BASELINE_LOOM]\n");
        return 2;
    }
    const char *log = argv[1], *loom[2] = {argv[3], argc == 5 ? argv[4] : NULL};
    int runs = atoi(argv[2]), n_loom = loom[1] ? 2 : 1;
    if (runs < 1 || runs > 1000)
        runs = 20;
    sample *s[2] = {calloc((size_t)runs, sizeof(sample)), calloc((size_t)runs, sizeof(sample))};
    if (!s[0] || !s[1])
        return 1;
    /* One warm-up each (page cache, the mock's first connection), or
     * BENCH_WARMUP of them (0 when an outside timer runs this program). */
    const char *wenv = getenv("BENCH_WARMUP");
    int warmups = wenv && *wenv ? atoi(wenv) : 1;
    for (int w = 0; w < warmups; w++)
        for (int k = 0; k < n_loom; k++) {
            sample ws;
            if (run_once(loom[k], log, &ws))
                return 1;
        }
    for (int i = 0; i < runs; i++)
        for (int k = 0; k < n_loom; k++)
            if (run_once(loom[k], log, &s[k][i]))
                return 1;

    static const char *const names[2] = {"start to first prompt", "line to first request"};
    static const char *const keys[2] = {"prompt_ms", "request_ms"};
    double fig[2][2][3], ratio[2][3];
    double *v = malloc(sizeof(double) * (size_t)runs);
    if (!v)
        return 1;
    for (int f = 0; f < 2; f++) {
        for (int k = 0; k < n_loom; k++) {
            for (int i = 0; i < runs; i++)
                v[i] = f == 0 ? s[k][i].prompt_ms : s[k][i].request_ms;
            stats(v, runs, fig[f][k]);
        }
        if (n_loom == 2) {
            for (int i = 0; i < runs; i++) {
                double a = f == 0 ? s[0][i].prompt_ms : s[0][i].request_ms;
                double b = f == 0 ? s[1][i].prompt_ms : s[1][i].request_ms;
                v[i] = b > 0 ? a / b : 0;
            }
            stats(v, runs, ratio[f]);
        }
    }
    printf("interactive loom on a pty, median (min–max) of %d runs%s\n", runs,
           n_loom == 2 ? ", this build vs the baseline in turn" : "");
    for (int f = 0; f < 2; f++) {
        printf("%-24s %8.2f ms (%.2f–%.2f)", names[f], fig[f][0][0], fig[f][0][1], fig[f][0][2]);
        if (n_loom == 2)
            printf("   baseline %8.2f ms (%.2f–%.2f)   ratio %.3f (%.3f–%.3f)", fig[f][1][0],
                   fig[f][1][1], fig[f][1][2], ratio[f][0], ratio[f][1], ratio[f][2]);
        printf("\n");
    }
    printf("{\"runs\":%d", runs);
    for (int f = 0; f < 2; f++) {
        printf(",\"%s\":{\"median\":%.3f,\"min\":%.3f,\"max\":%.3f", keys[f], fig[f][0][0],
               fig[f][0][1], fig[f][0][2]);
        if (n_loom == 2)
            printf(",\"baseline_median\":%.3f,\"ratio_median\":%.4f", fig[f][1][0], ratio[f][0]);
        printf("}");
    }
    printf("}\n");
    free(v);
    free(s[0]);
    free(s[1]);
    return 0;
}

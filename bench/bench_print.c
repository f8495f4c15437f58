/* bench_print.c — measures `loom -p` on a short chat against mockllm.
 *
 * For each run: wall time from fork to the first request reaching the mock
 * (read from the mock's request log, same wall clock), total wall time, CPU
 * (user + system) and peak RSS of the child (wait4). The same figures are
 * taken for a baseline in the same run: curl sending the very request body
 * loom sent, so the ratio shows what Loom adds over a bare HTTP client.
 *
 * usage: bench_print LOOM CURL_BODY_FILE MOCK_URL MOCK_LOG RUNS
 * (bench/run.sh sets this up). Prints a table and one JSON line. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

typedef struct sample {
    double to_first_request_ms, wall_ms, cpu_ms, rss_kb;
} sample;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The "t" of the last line of the mock's log (a request's arrival). */
static double last_request_time(const char *log)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return -1;
    char *line = NULL, *last = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        free(last);
        last = strdup(line);
    }
    free(line);
    fclose(f);
    double t = -1;
    json_t *doc = last ? json_loads(last, 0, NULL) : NULL;
    if (doc)
        t = json_number_value(json_object_get(doc, "t"));
    json_decref(doc);
    free(last);
    return t;
}

static int run_once(char *const argv[], const char *log, sample *s)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int devnull = open("/dev/null", 1);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    double t1 = now_s();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench: %s exited with status %d\n", argv[0], status);
        return -1;
    }
    s->to_first_request_ms = (last_request_time(log) - t0) * 1000.0;
    s->wall_ms = (t1 - t0) * 1000.0;
    s->cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
    s->rss_kb = (double)ru.ru_maxrss;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(sample *s, int n, size_t field)
{
    double v[n];
    for (int i = 0; i < n; i++)
        v[i] = *(double *)((char *)&s[i] + field);
    qsort(v, n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: bench_print LOOM BODY_FILE MOCK_URL MOCK_LOG RUNS\n");
        return 2;
    }
    const char *loom = argv[1], *body = argv[2], *url = argv[3], *log = argv[4];
    int runs = atoi(argv[5]);
    if (runs < 1 || runs > 1000)
        runs = 20;
    char at_body[4096], endpoint[1024];
    snprintf(at_body, sizeof at_body, "@%s", body);
    snprintf(endpoint, sizeof endpoint, "%s/v1/messages", url);
    char *loom_argv[] = {(char *)loom, "-p", "Say hello", NULL};
    char *curl_argv[] = {"curl", "-sS", "-N", "-o", "/dev/null", "-X", "POST", endpoint,
                         "-H", "content-type: application/json", "-H", "x-api-key: bench",
                         "-H", "anthropic-version: 2023-06-01", "--data-binary", at_body, NULL};
    sample *ls = calloc(runs, sizeof *ls), *cs = calloc(runs, sizeof *cs);
    for (int i = 0; i < runs; i++)
        if (run_once(loom_argv, log, &ls[i]) || run_once(curl_argv, log, &cs[i]))
            return 1;

    struct {
        const char *name;
        size_t off;
        const char *unit;
    } fields[] = {
        {"to first request", offsetof(sample, to_first_request_ms), "ms"},
        {"total wall", offsetof(sample, wall_ms), "ms"},
        {"cpu (user+sys)", offsetof(sample, cpu_ms), "ms"},
        {"peak RSS", offsetof(sample, rss_kb), "KiB"},
    };
    printf("loom -p vs curl (same request body), median of %d runs\n", runs);
    printf("%-18s %12s %12s %8s\n", "", "loom", "curl", "ratio");
    json_t *out = json_pack("{s:i}", "runs", runs);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        double l = median(ls, runs, fields[i].off), c = median(cs, runs, fields[i].off);
        printf("%-18s %9.2f %-3s %8.2f %-3s %7.2fx\n", fields[i].name, l, fields[i].unit, c,
               fields[i].unit, c > 0 ? l / c : 0);
        json_object_set_new(out, fields[i].name,
                            json_pack("{s:f,s:f,s:s}", "loom", l, "curl", c, "unit", fields[i].unit));
    }
    char *s = json_dumps(out, JSON_COMPACT);
    printf("%s\n", s);
    free(s);
    json_decref(out);
    free(ls);
    free(cs);
    return 0;
}

/* reqlog.c — the JSONL request log tests read to assert what the client sent
 * (headers, body) and what it got (turn, attempt, fault, status). One line per
 * request, written whole and flushed under a mutex so concurrent requests
 * never interleave and a test can read the log while the server runs.
 *
 * The capture: with MOCKLLM_CAPTURE_DIR set, the same lines also go to
 * DIR/mockllm-<pid>.jsonl, whether or not --log was given — so a whole test
 * suite's requests can be checked afterwards (tests/validate/check_suite.sh
 * type-checks them against the official SDKs' types) without any test's own
 * log being touched. */
#include "mockllm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *log_file;
static FILE *capture_file;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

int reqlog_open(const char *path)
{
    log_file = fopen(path, "a");
    return log_file ? 0 : -1;
}

int reqlog_open_capture(void)
{
    const char *dir = getenv("MOCKLLM_CAPTURE_DIR");
    if (!dir || !*dir)
        return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/mockllm-%ld.jsonl", dir, (long)getpid());
    capture_file = fopen(path, "a");
    return capture_file ? 0 : -1;
}

static void put_line(FILE *f, const char *t, const char *rest)
{
    fputs(t, f);
    fputs(rest, f);
    fputc('\n', f);
    fflush(f);
}

void reqlog_write(const json_t *entry)
{
    if (!log_file && !capture_file)
        return;
    char *js = json_dumps(entry, JSON_COMPACT);
    if (!js)
        return;
    /* jansson prints reals with up to 17 digits; write "t" by hand so it is
     * always seconds with exactly microsecond precision, and first. */
    char t[48];
    snprintf(t, sizeof t, "{\"t\":%.6f%s", mock_now(), strlen(js) > 2 ? "," : "");
    pthread_mutex_lock(&log_mu);
    if (log_file)
        put_line(log_file, t, js + 1);
    if (capture_file)
        put_line(capture_file, t, js + 1);
    pthread_mutex_unlock(&log_mu);
    free(js);
}

void reqlog_close(void)
{
    pthread_mutex_lock(&log_mu);
    if (log_file)
        fclose(log_file);
    if (capture_file)
        fclose(capture_file);
    log_file = capture_file = NULL;
    pthread_mutex_unlock(&log_mu);
}

/* reqlog.c — the JSONL request log tests read to assert what the client sent
 * (headers, body) and what it got (turn, attempt, fault, status). One line per
 * request, written whole and flushed under a mutex so concurrent requests
 * never interleave and a test can read the log while the server runs. */
#include "mockllm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *log_file;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

int reqlog_open(const char *path)
{
    log_file = fopen(path, "a");
    return log_file ? 0 : -1;
}

void reqlog_write(const json_t *entry)
{
    if (!log_file)
        return;
    char *js = json_dumps(entry, JSON_COMPACT);
    if (!js)
        return;
    /* jansson prints reals with up to 17 digits; write "t" by hand so it is
     * always seconds with exactly microsecond precision, and first. */
    char t[48];
    snprintf(t, sizeof t, "{\"t\":%.6f%s", mock_now(), strlen(js) > 2 ? "," : "");
    pthread_mutex_lock(&log_mu);
    fputs(t, log_file);
    fputs(js + 1, log_file);
    fputc('\n', log_file);
    fflush(log_file);
    pthread_mutex_unlock(&log_mu);
    free(js);
}

void reqlog_close(void)
{
    pthread_mutex_lock(&log_mu);
    if (log_file)
        fclose(log_file);
    log_file = NULL;
    pthread_mutex_unlock(&log_mu);
}

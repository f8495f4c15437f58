/* stdio.c — the stdio transport: newline-delimited JSON-RPC on stdin and
 * stdout (MCP: "Transports", stdio), logs on stderr. One connection; each
 * line is one message; stdout writes are whole lines under one lock, since
 * calls answer from their own threads. At end of input the calls still
 * running are cancelled and waited for. */
#include "surfaces/mcp_server/mcps.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

/* The longest line read: a bigger one is answered with a parse error and
 * skipped. */
#define MAX_LINE (16u << 20)

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void stdout_send(void *ctx, json_t *msg, bool final)
{
    (void)ctx;
    (void)final;
    if (!msg)
        return;
    char *text = json_dump_compact(msg);
    json_decref(msg);
    if (!text)
        return;
    pthread_mutex_lock(&out_lock);
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    pthread_mutex_unlock(&out_lock);
    free(text);
}

int mcps_stdio_serve(mcps_server *srv)
{
    signal(SIGPIPE, SIG_IGN); /* a client gone: writes fail, the end of input follows */
    mcps_conn *c = mcps_conn_new(srv);
    mcps_sink sink = {stdout_send, NULL, NULL, NULL};
    loom_str line = LOOM_STR_INIT;
    bool too_long = false;
    int ch;
    for (;;) {
        ch = getchar();
        if (ch != EOF && ch != '\n') {
            if (line.len < MAX_LINE)
                str_putc(&line, (char)ch);
            else
                too_long = true;
            continue;
        }
        size_t n = line.len;
        if (n && line.ptr[n - 1] == '\r')
            n--;
        bool blank = true;
        for (size_t i = 0; i < n && blank; i++)
            blank = line.ptr[i] == ' ' || line.ptr[i] == '\t';
        if (too_long)
            mcps_handle(c, NULL, 0, &sink);
        else if (!blank)
            mcps_handle(c, line.ptr, n, &sink);
        str_clear(&line);
        too_long = false;
        if (ch == EOF)
            break;
    }
    str_free(&line);
    mcps_conn_close(c);
    return 0;
}

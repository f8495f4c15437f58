/* bench_mcp.c — what Loom's MCP client costs: connect + tools/list, and one
 * tools/call, against a real server, beside a baseline that talks to the
 * same server with raw pipes (write the request line, read the answer
 * line: no JSON-RPC bookkeeping, no threads) in the same run. The
 * difference of the medians is the harness's overhead per call.
 *
 * Over HTTP the baseline is one plain POST of the same request through
 * Loom's own HTTP client (net/http.h), reply read whole: what the
 * transport's threads, SSE reading and id matching add on top.
 *
 * usage: bench_mcp stdio CALLS COMMAND [ARGS…]   (the server's `echo` tool)
 *        bench_mcp http CALLS URL
 * Prints medians in ms (connect) and µs (calls); both sides first make
 * WARMUP unmeasured calls. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "net/http.h"
#include "ext/mcp/client.h"
#include "ext/mcp/transport.h"

/* Calls made before measuring, on each side: the server's JIT warms up. */
#define WARMUP 100

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n ? v[n / 2] : 0;
}

static mcp_client *open_client(const char *kind, char **argv, loom_error *err)
{
    mcp_transport_events ev = {0};
    mcp_transport *t;
    if (!strcmp(kind, "stdio")) {
        mcp_stdio_spec spec = {.command = argv[0], .args = (const char *const *)argv + 1};
        t = mcp_stdio_open("bench", &spec, &ev, err);
    } else {
        mcp_http_spec spec = {.url = argv[0]};
        t = mcp_http_open("bench", &spec, &ev, err);
    }
    if (!t)
        return NULL;
    mcp_client *c = mcp_client_new("bench", t, &(mcp_client_host){0});
    if (mcp_client_connect(c, 30000, NULL, err) != 0) {
        mcp_client_free(c);
        return NULL;
    }
    return c;
}

/* The raw baseline: the same server over pipes, one line out, one line in. */
static double raw_stdio_call_us(char **argv, int calls)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    FILE *w = fdopen(in[1], "w"), *r = fdopen(out[0], "r");
    char *line = NULL;
    size_t cap = 0;
    fputs("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
          "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n",
          w);
    fflush(w);
    while (getline(&line, &cap, r) > 0 && !strstr(line, "\"id\":0"))
        ;
    fputs("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n", w);
    double *v = calloc((size_t)calls, sizeof *v);
    for (int i = -WARMUP; i < calls; i++) {
        int64_t t0 = clock_mono_ns();
        fprintf(w, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                   "\"echo\",\"arguments\":{\"message\":\"ping\"}}}\n", i + WARMUP + 1);
        fflush(w);
        char want[32], want_end[32];
        snprintf(want, sizeof want, "\"id\":%d,", i + WARMUP + 1);
        snprintf(want_end, sizeof want_end, "\"id\":%d}", i + WARMUP + 1);
        while (getline(&line, &cap, r) > 0 && !strstr(line, want) && !strstr(line, want_end))
            ;
        if (i >= 0)
            v[i] = (double)(clock_mono_ns() - t0) / 1000.0;
    }
    double m = median(v, calls);
    free(v);
    free(line);
    fclose(w);
    fclose(r);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    return m;
}

static int discard(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
    return 0;
}

static int post(const char *url, const char *sid, const char *body, char **sid_out)
{
    char sid_h[256];
    snprintf(sid_h, sizeof sid_h, "Mcp-Session-Id: %s", sid ? sid : "");
    const char *headers[] = {"Content-Type: application/json",
                             "Accept: application/json, text/event-stream",
                             "MCP-Protocol-Version: 2025-11-25", sid ? sid_h : NULL, NULL};
    const char *want[] = {"Mcp-Session-Id", NULL};
    http_request req = {.method = "POST", .url = url, .headers = headers, .body = body,
                        .body_len = strlen(body), .capture_headers = want};
    http_response resp = {0};
    loom_error err;
    int rc = http_perform(&req, discard, NULL, &resp, &err);
    if (sid_out)
        *sid_out = resp.captured[0] ? strdup(resp.captured[0]) : NULL;
    long status = resp.status;
    http_response_free(&resp);
    return rc == 0 && status / 100 == 2 ? 0 : -1;
}

/* The raw baseline over HTTP: initialize, then the same calls as plain POSTs. */
static double raw_http_call_us(const char *url, int calls)
{
    char *sid = NULL;
    if (post(url, NULL,
             "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
             "\"name\":\"raw\",\"version\":\"1\"}}}",
             &sid) != 0)
        return -1;
    post(url, sid, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", NULL);
    double *v = calloc((size_t)calls, sizeof *v);
    char body[256];
    for (int i = -WARMUP; i < calls; i++) {
        snprintf(body, sizeof body,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
                 "\"name\":\"echo\",\"arguments\":{\"message\":\"ping\"}}}", i + WARMUP + 1);
        int64_t t0 = clock_mono_ns();
        post(url, sid, body, NULL);
        if (i >= 0)
            v[i] = (double)(clock_mono_ns() - t0) / 1000.0;
    }
    double m = median(v, calls);
    free(v);
    free(sid);
    return m;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_mcp stdio|http CALLS COMMAND|URL [ARGS…]\n");
        return 2;
    }
    const char *kind = argv[1];
    int calls = atoi(argv[2]);
    char **target = argv + 3;
    enum { CONNECTS = 5 };
    double connect_ms[CONNECTS];
    loom_error err;
    for (int i = 0; i < CONNECTS; i++) {
        int64_t t0 = clock_mono_ns();
        mcp_client *c = open_client(kind, target, &err);
        if (!c) {
            fprintf(stderr, "bench_mcp: %s\n", err.message);
            return 1;
        }
        json_t *tools = mcp_client_list_all(c, "tools/list", "tools", 0, 30000, &err);
        connect_ms[i] = (double)(clock_mono_ns() - t0) / 1e6;
        json_decref(tools);
        mcp_client_free(c);
    }
    mcp_client *c = open_client(kind, target, &err);
    if (!c) {
        fprintf(stderr, "bench_mcp: %s\n", err.message);
        return 1;
    }
    double *v = calloc((size_t)calls, sizeof *v);
    for (int i = -WARMUP; i < calls; i++) {
        int64_t t0 = clock_mono_ns();
        json_t *r = mcp_client_request(c, "tools/call",
                                       json_pack("{s:s,s:{s:s}}", "name", "echo", "arguments",
                                                 "message", "ping"),
                                       NULL, &err);
        if (i >= 0)
            v[i] = (double)(clock_mono_ns() - t0) / 1000.0;
        if (!r) {
            fprintf(stderr, "bench_mcp: call %d: %s\n", i, err.message);
            return 1;
        }
        json_decref(r);
    }
    double loom_us = median(v, calls);
    free(v);
    mcp_client_free(c);
    printf("mcp %s: connect + tools/list  median %.1f ms (%d runs)\n", kind,
           median(connect_ms, CONNECTS), CONNECTS);
    printf("mcp %s: tools/call echo       median %.1f us (%d calls, Loom's client)\n", kind,
           loom_us, calls);
    bool stdio = !strcmp(kind, "stdio");
    double raw = stdio ? raw_stdio_call_us(target, calls) : raw_http_call_us(target[0], calls);
    printf("mcp %s: tools/call echo       median %.1f us (%s, the baseline)\n", kind, raw,
           stdio ? "raw pipes" : "plain POSTs");
    printf("mcp %s: harness overhead per call %.1f us (ratio %.2f)\n", kind, loom_us - raw,
           raw > 0 ? loom_us / raw : 0);
    return 0;
}

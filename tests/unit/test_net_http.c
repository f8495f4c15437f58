/* test_net_http.c — http_perform against a tiny loopback HTTP/1.1 server that
 * runs in a thread of this test and misbehaves on request: streams in
 * pieces, answers 429, drops or resets mid-body, stalls, frames bodies in
 * every way HTTP/1.1 allows and a few it does not.
 *
 * The contract tests run twice, once per transport (the plain client, then
 * libcurl via LOOM_HTTP_CLIENT=curl), because http.h promises the same
 * behaviour from both. Tests of what only the plain client decides (its
 * stricter framing checks, its cancel latency) run once. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/str.h"
#include "net/http.h"
#include "net/http_internal.h"

/* How long the server waits for anything before giving up, so a broken
 * client can fail the test but never hang it. */
#define SERVER_PATIENCE_MS 5000
/* A stalled server holds the connection this long; the client must end the
 * transfer well before (idle timeout, cancel) for the test to pass. */
#define STALL_MS 15000

typedef enum {
    SC_FIXED,  /* send s->response verbatim, close */
    SC_STREAM, /* 200, chunked, several separate writes */
    SC_DROP,   /* 200, chunked, one chunk, then a clean close */
    SC_RESET,  /* 200, chunked, one chunk, then RST */
    SC_STALL,  /* 200, chunked, one chunk, then silence until the client leaves */
    SC_TRICKLE, /* send s->response a few bytes at a time, close */
    SC_HOLD,   /* send s->response, then keep the connection until the client leaves */
    SC_PING,   /* 200, chunked, one chunk, then an SSE ping every 50 ms until the client leaves */
} scenario;

typedef struct server {
    int lfd;
    int port;
    scenario sc;
    const char *response; /* SC_FIXED */
    pthread_t thread;
    loom_str request;     /* everything the client sent */
    size_t body_len;      /* Content-Length of the request */
    int accepted;
} server;

static const char *const stream_chunks[] = {
    "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
    "event: content_block_delta\ndata: {\"text\":\"Grüße 世界 🎉\"}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
};

static void send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static void send_str(int fd, const char *s)
{
    send_all(fd, s, strlen(s));
}

static void send_chunk(int fd, const char *s)
{
    char head[32];
    snprintf(head, sizeof head, "%zx\r\n", strlen(s));
    send_str(fd, head);
    send_str(fd, s);
    send_str(fd, "\r\n");
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool wait_readable(int fd, int ms)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll(&pfd, 1, ms) == 1;
}

/* Reads one request (head and Content-Length body) into s->request. */
static void read_request(server *s, int fd)
{
    char buf[65536];
    size_t head_end = 0;
    for (;;) {
        if (head_end && s->request.len >= head_end + s->body_len)
            return;
        if (!wait_readable(fd, SERVER_PATIENCE_MS))
            return;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            return;
        str_append(&s->request, buf, (size_t)n);
        if (!head_end) {
            const char *end = strstr(s->request.ptr, "\r\n\r\n");
            if (end) {
                head_end = (size_t)(end - s->request.ptr) + 4;
                const char *cl = strcasestr(s->request.ptr, "\r\ncontent-length:");
                if (cl && cl < end)
                    s->body_len = strtoul(cl + 17, NULL, 10);
            }
        }
    }
}

static const char stream_head[] = "HTTP/1.1 200 OK\r\n"
                                  "Content-Type: text/event-stream\r\n"
                                  "request-id: req_stream_1\r\n"
                                  "Transfer-Encoding: chunked\r\n"
                                  "\r\n";

static void *serve(void *arg)
{
    server *s = arg;
    if (!wait_readable(s->lfd, SERVER_PATIENCE_MS))
        return NULL;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    s->accepted++;
    read_request(s, fd);

    switch (s->sc) {
    case SC_FIXED:
        send_str(fd, s->response);
        break;
    case SC_HOLD: {
        /* A client that reads past the framing waits here, and fails. */
        send_str(fd, s->response);
        char c;
        if (wait_readable(fd, STALL_MS))
            (void)recv(fd, &c, 1, 0);
        break;
    }
    case SC_TRICKLE:
        /* Every line, chunk header and CRLF split across reads. */
        for (size_t i = 0, n = strlen(s->response); i < n; i += 3) {
            send_all(fd, s->response + i, n - i < 3 ? n - i : 3);
            pause_ms(1);
        }
        break;
    case SC_STREAM:
        send_str(fd, stream_head);
        for (size_t i = 0; i < sizeof stream_chunks / sizeof *stream_chunks; i++) {
            pause_ms(20); /* separate writes, so the client sees separate reads */
            send_chunk(fd, stream_chunks[i]);
        }
        send_str(fd, "0\r\n\r\n");
        break;
    case SC_DROP:
    case SC_RESET:
        send_str(fd, stream_head);
        send_chunk(fd, stream_chunks[0]);
        pause_ms(50);
        if (s->sc == SC_RESET) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        break;
    case SC_PING: {
        /* Bytes keep coming, far inside any idle timeout, but never the end. */
        send_str(fd, stream_head);
        send_chunk(fd, stream_chunks[0]);
        for (int i = 0; i < STALL_MS / 50; i++) {
            char c;
            if (wait_readable(fd, 50) && recv(fd, &c, 1, MSG_DONTWAIT) <= 0)
                break; /* the client left */
            send_chunk(fd, ": keep-alive\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n");
        }
        break;
    }
    case SC_STALL: {
        send_str(fd, stream_head);
        send_chunk(fd, stream_chunks[0]);
        /* Wait for the client to give up (recv sees EOF), or STALL_MS. */
        char c;
        if (wait_readable(fd, STALL_MS))
            (void)recv(fd, &c, 1, 0);
        break;
    }
    }
    close(fd);
    return NULL;
}

static void server_start(server *s, scenario sc, const char *response)
{
    memset(s, 0, sizeof *s);
    s->sc = sc;
    s->response = response;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->lfd >= 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(listen(s->lfd, 4), 0);
    socklen_t alen = sizeof addr;
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&addr, &alen), 0);
    s->port = ntohs(addr.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

/* Waits for the one-connection server to finish; s->request stays readable. */
static void server_join(server *s)
{
    pthread_join(s->thread, NULL);
    close(s->lfd);
}

static void server_stop(server *s)
{
    server_join(s);
    str_free(&s->request);
}

/* A port nothing listens on: bound once to learn a free number, then closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    socklen_t alen = sizeof addr;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &alen), 0);
    close(fd);
    return ntohs(addr.sin_port);
}

typedef struct sink {
    loom_str got;
    int calls;
    int stop_at_call;      /* return nonzero on this call (1-based); 0 = never */
    loom_error *set_err;   /* when stopping, set this error first */
} sink;

static int on_body(void *ctx, const char *data, size_t len)
{
    sink *k = ctx;
    k->calls++;
    str_append(&k->got, data, len);
    if (k->stop_at_call && k->calls == k->stop_at_call) {
        if (k->set_err)
            loom_error_set(k->set_err, LOOM_ERR_MODEL_OVERLOADED, "provider said overloaded");
        return 1;
    }
    return 0;
}

static const char *const test_headers[] = {
    "Content-Type: application/json",
    "x-api-key: test-key",
    NULL,
};

static int perform(server *s, const char *path, const char *body, size_t body_len,
                   long idle_ms, const loom_cancel *cancel, sink *k, http_response *resp,
                   loom_error *err)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s ? s->port : closed_port(), path);
    http_request req = {
        .method = "POST",
        .url = url,
        .headers = test_headers,
        .body = body,
        .body_len = body_len,
        .connect_timeout_ms = 2000,
        .idle_timeout_ms = idle_ms,
        .cancel = cancel,
    };
    return http_perform(&req, on_body, k, resp, err);
}

static void test_stream_chunks_concatenated(void **state)
{
    server s;
    server_start(&s, SC_STREAM, NULL);
    sink k = {0};
    http_response resp;
    loom_error err;
    const char *body = "{\"model\":\"m\",\"stream\":true}";
    assert_int_equal(perform(&s, "/v1/messages", body, strlen(body), 0, NULL, &k, &resp, &err), 0);
    server_stop(&s);

    loom_str want = LOOM_STR_INIT;
    for (size_t i = 0; i < sizeof stream_chunks / sizeof *stream_chunks; i++)
        str_puts(&want, stream_chunks[i]);
    assert_int_equal(k.got.len, want.len);
    assert_memory_equal(k.got.ptr, want.ptr, want.len);
    assert_true(k.calls >= 1);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.body_bytes, want.len);
    assert_string_equal(resp.request_id, "req_stream_1");
    assert_string_equal(resp.content_type, "text/event-stream");
    assert_true(resp.retry_after_s < 0);
    assert_int_equal(resp.error_body.len, 0);
    assert_int_equal(err.code, LOOM_OK);
    http_response_free(&resp);
    str_free(&want);
    str_free(&k.got);
}

static void test_request_as_sent(void **state)
{
    /* Big enough that curl would ask for 100-continue unless told not to. */
    size_t len = (size_t)2 << 20;
    char *body = xmalloc(len);
    for (size_t i = 0; i < len; i++)
        body[i] = (char)('a' + i % 26);
    server s;
    server_start(&s, SC_FIXED, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(perform(&s, "/v1/chat/completions", body, len, 0, NULL, &k, &resp, &err), 0);
    server_join(&s);

    const char *req = s.request.ptr;
    assert_non_null(req);
    const char *head_end = strstr(req, "\r\n\r\n");
    assert_non_null(head_end);
    size_t head_len = (size_t)(head_end - req) + 4;
    char *head = xstrndup(req, head_len);
    assert_true(strncmp(head, "POST /v1/chat/completions HTTP/1.1\r\n", 36) == 0);
    assert_non_null(strstr(head, "\r\nUser-Agent: loom/" LOOM_VERSION_STRING "\r\n"));
    assert_non_null(strstr(head, "\r\nx-api-key: test-key\r\n"));
    assert_non_null(strstr(head, "\r\nContent-Type: application/json\r\n"));
    assert_null(strcasestr(head, "\r\nExpect:"));
    assert_int_equal(s.request.len - head_len, len);
    assert_memory_equal(req + head_len, body, len);
    assert_int_equal(resp.status, 200);
    assert_int_equal(k.got.len, 2);
    assert_int_equal(s.accepted, 1);
    free(head);
    free(body);
    str_free(&s.request);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_429_retry_after_and_error_body(void **state)
{
    server s;
    server_start(&s, SC_FIXED,
                 "HTTP/1.1 429 Too Many Requests\r\n"
                 "Retry-After: 2\r\n"
                 "x-request-id: req_429\r\n"
                 "Content-Type: application/json\r\n"
                 "Content-Length: 52\r\n"
                 "\r\n"
                 "{\"error\":{\"type\":\"rate_limit_error\",\"message\":\"x\"}}\n");
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(perform(&s, "/v1/messages", "{}", 2, 0, NULL, &k, &resp, &err), 0);
    server_stop(&s);
    assert_int_equal(resp.status, 429);
    assert_true(resp.retry_after_s == 2.0);
    assert_string_equal(resp.request_id, "req_429");
    assert_string_equal(resp.content_type, "application/json");
    assert_string_equal(str_cstr(&resp.error_body),
                        "{\"error\":{\"type\":\"rate_limit_error\",\"message\":\"x\"}}\n");
    assert_int_equal(k.calls, 0); /* a non-2xx body never reaches on_body */
    assert_int_equal(resp.body_bytes, 0);
    http_response_free(&resp);
}

static void test_retry_after_http_date(void **state)
{
    char date[64], response[256];
    time_t when = time(NULL) + 30;
    struct tm tm;
    gmtime_r(&when, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    snprintf(response, sizeof response,
             "HTTP/1.1 503 Service Unavailable\r\nRetry-After: %s\r\nContent-Length: 0\r\n\r\n",
             date);
    server s;
    server_start(&s, SC_FIXED, response);
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(perform(&s, "/", "{}", 2, 0, NULL, &k, &resp, &err), 0);
    server_stop(&s);
    assert_int_equal(resp.status, 503);
    assert_true(resp.retry_after_s >= 27 && resp.retry_after_s <= 30);
    http_response_free(&resp);
}

static void test_retry_after_ms_preferred(void **state)
{
    server s;
    server_start(&s, SC_FIXED,
                 "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\n"
                 "retry-after-ms: 1500\r\nContent-Length: 0\r\n\r\n");
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(perform(&s, "/", "{}", 2, 0, NULL, &k, &resp, &err), 0);
    server_stop(&s);
    assert_true(resp.retry_after_s == 1.5);
    http_response_free(&resp);
}

static void test_error_body_capped(void **state)
{
    size_t n = 100 * 1024;
    loom_str response = LOOM_STR_INIT;
    str_printf(&response, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: %zu\r\n\r\n", n);
    for (size_t i = 0; i < n; i++)
        str_putc(&response, (char)('0' + i % 10));
    server s;
    server_start(&s, SC_FIXED, response.ptr);
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(perform(&s, "/", "{}", 2, 0, NULL, &k, &resp, &err), 0);
    server_stop(&s);
    assert_int_equal(resp.status, 500);
    assert_int_equal(resp.error_body.len, 64 * 1024);
    const char *sent_body = strstr(response.ptr, "\r\n\r\n") + 4;
    assert_memory_equal(resp.error_body.ptr, sent_body, 64 * 1024);
    http_response_free(&resp);
    str_free(&response);
}

static void test_redirect_not_followed(void **state)
{
    server s;
    server_start(&s, SC_FIXED,
                 "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\n"
                 "Content-Length: 5\r\n\r\nmoved");
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(perform(&s, "/", "{}", 2, 0, NULL, &k, &resp, &err), 0);
    server_stop(&s);
    assert_int_equal(resp.status, 302);
    assert_string_equal(str_cstr(&resp.error_body), "moved");
    http_response_free(&resp);
}

static void check_dropped(scenario sc)
{
    server s;
    server_start(&s, sc, NULL);
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = perform(&s, "/v1/messages", "{}", 2, 0, NULL, &k, &resp, &err);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_MODEL_UNAVAILABLE);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_int_equal(err.http_status, 200);
    assert_non_null(strstr(err.message, "127.0.0.1"));
    /* What arrived before the drop was delivered. */
    assert_string_equal(str_cstr(&k.got), stream_chunks[0]);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_mid_body_close_unavailable(void **state)
{
    check_dropped(SC_DROP);
}

static void test_mid_body_reset_unavailable(void **state)
{
    check_dropped(SC_RESET);
}

static void test_stall_idle_timeout(void **state)
{
    server s;
    server_start(&s, SC_STALL, NULL);
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = perform(&s, "/v1/messages", "{}", 2, 1000, NULL, &k, &resp, &err);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_MODEL_TIMEOUT);
    assert_true(err.retryable);
    assert_int_equal(err.http_status, 200);
    assert_string_equal(str_cstr(&k.got), stream_chunks[0]);
    http_response_free(&resp);
    str_free(&k.got);
}

/* The overall deadline ends a stream that pings for ever inside the idle
 * timeout, with a timeout that is not retried; what arrived was delivered. */
static void test_ping_forever_total_deadline(void **state)
{
    server s;
    server_start(&s, SC_PING, NULL);
    sink k = {0};
    http_response resp;
    loom_error err;
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/messages", s.port);
    http_request req = {.method = "POST", .url = url, .headers = test_headers, .body = "{}",
                        .body_len = 2, .connect_timeout_ms = 2000, .idle_timeout_ms = 1000,
                        .total_timeout_ms = 700};
    int rc = http_perform(&req, on_body, &k, &resp, &err);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_MODEL_TIMEOUT);
    assert_false(err.retryable);
    assert_non_null(strstr(err.message, "overall deadline of 700 ms"));
    assert_int_equal(err.http_status, 200);
    assert_non_null(strstr(str_cstr(&k.got), "ping")); /* the pings did arrive */
    http_response_free(&resp);
    str_free(&k.got);
}

typedef struct canceller {
    loom_cancel *flag;
    long after_ms;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = arg;
    pause_ms(c->after_ms);
    atomic_store(c->flag, 1);
    return NULL;
}

/* Without a total deadline only the cancel flag ends the pinging stream: the
 * pings keep the idle timeout from firing. */
static void test_ping_forever_idle_never_fires(void **state)
{
    server s;
    server_start(&s, SC_PING, NULL);
    loom_cancel flag = 0;
    canceller c = {&flag, 800};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = perform(&s, "/v1/messages", "{}", 2, 300, &flag, &k, &resp, &err);
    pthread_join(th, NULL);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_RUN_CANCELLED);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_cancel_from_other_thread(void **state)
{
    server s;
    server_start(&s, SC_STALL, NULL);
    loom_cancel flag = 0;
    canceller c = {&flag, 300};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    sink k = {0};
    http_response resp;
    loom_error err;
    /* The idle timeout is the default 300 s and the server stalls for 15 s:
     * only the cancel flag can end this transfer with this code. */
    int rc = perform(&s, "/v1/messages", "{}", 2, 0, &flag, &k, &resp, &err);
    pthread_join(th, NULL);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_RUN_CANCELLED);
    assert_int_equal(err.code, LOOM_ERR_RUN_CANCELLED);
    assert_false(err.retryable);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_cancel_before_start(void **state)
{
    loom_cancel flag = 1;
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(perform(NULL, "/", "{}", 2, 0, &flag, &k, &resp, &err),
                     -LOOM_ERR_RUN_CANCELLED);
    assert_int_equal(resp.status, 0);
    http_response_free(&resp);
}

static void test_connection_refused(void **state)
{
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = perform(NULL, "/v1/messages", "{}", 2, 0, NULL, &k, &resp, &err);
    assert_int_equal(rc, -LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_int_equal(err.http_status, 0);
    assert_int_equal(resp.status, 0);
    assert_non_null(strstr(err.message, "http://127.0.0.1:"));
    assert_non_null(strstr(err.message, "/v1/messages"));
    http_response_free(&resp);
}

static void test_url_secrets_not_in_message(void **state)
{
    char url[160];
    snprintf(url, sizeof url, "http://user:hunter2@127.0.0.1:%d/v1/x?key=SECRET#frag",
             closed_port());
    http_request req = {.method = "GET", .url = url, .connect_timeout_ms = 2000};
    http_response resp;
    loom_error err;
    assert_int_equal(http_perform(&req, NULL, NULL, &resp, &err), -LOOM_ERR_MODEL_UNAVAILABLE);
    assert_null(strstr(err.message, "hunter2"));
    assert_null(strstr(err.message, "SECRET"));
    assert_non_null(strstr(err.message, "http://127.0.0.1:"));
    assert_non_null(strstr(err.message, "/v1/x"));
    http_response_free(&resp);
}

static void test_body_callback_error_kept(void **state)
{
    server s;
    server_start(&s, SC_STREAM, NULL);
    loom_error err;
    sink k = {.stop_at_call = 1, .set_err = &err};
    http_response resp;
    int rc = perform(&s, "/v1/messages", "{}", 2, 0, NULL, &k, &resp, &err);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_MODEL_OVERLOADED);
    assert_int_equal(err.code, LOOM_ERR_MODEL_OVERLOADED);
    assert_string_equal(err.message, "provider said overloaded");
    assert_int_equal(err.http_status, 200);
    assert_int_equal(k.calls, 1);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_body_callback_stop_is_protocol_error(void **state)
{
    server s;
    server_start(&s, SC_STREAM, NULL);
    loom_error err;
    sink k = {.stop_at_call = 1};
    http_response resp;
    int rc = perform(&s, "/v1/messages", "{}", 2, 0, NULL, &k, &resp, &err);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_MODEL_PROTOCOL);
    assert_false(err.retryable);
    http_response_free(&resp);
    str_free(&k.got);
}

/* ---- framing, interim responses, headers: both transports ---- */

/* The URL's query carries a fake key, so every failure message can be
 * checked for leaking it. */
static int fetch(scenario sc, const char *response, const char *method, sink *k,
                 http_response *resp, loom_error *err, loom_str *request_out)
{
    server s;
    server_start(&s, sc, response);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/x?key=SECRET", s.port);
    bool with_body = strcmp(method, "POST") == 0;
    http_request req = {
        .method = method,
        .url = url,
        .headers = test_headers,
        .body = with_body ? "{}" : NULL,
        .body_len = with_body ? 2 : 0,
        .connect_timeout_ms = 2000,
        .idle_timeout_ms = 2000,
    };
    int rc = http_perform(&req, on_body, k, resp, err);
    server_join(&s);
    if (request_out)
        *request_out = s.request;
    else
        str_free(&s.request);
    return rc;
}

static void test_content_length_body(void **state)
{
    /* The server keeps the connection open: the client must stop at
     * Content-Length, and ignore what comes after it. */
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(fetch(SC_HOLD,
                           "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n"
                           "\r\nhello worldEXCESS",
                           "POST", &k, &resp, &err, NULL),
                     0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(str_cstr(&k.got), "hello world");
    assert_int_equal(resp.body_bytes, 11);
    assert_string_equal(resp.content_type, "text/plain");
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_close_delimited_body(void **state)
{
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(fetch(SC_FIXED,
                           "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
                           "POST", &k, &resp, &err, NULL),
                     0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(str_cstr(&k.got), "until the end");
    assert_int_equal(resp.body_bytes, 13);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_chunked_extensions_and_trailer(void **state)
{
    /* Trickled three bytes at a time, so lines and CRLFs split across reads;
     * held open after, so the last chunk and trailer must end the body. */
    static const char response[] = "HTTP/1.1 200 OK\r\n"
                                   "Transfer-Encoding: chunked\r\n"
                                   "request-id: req_chunk\r\n"
                                   "\r\n"
                                   "5;name=value\r\nhello\r\n"
                                   "6 ; x=\"y;z\"\r\n world\r\n"
                                   "A\r\n, chunked!\r\n"
                                   "0;last\r\n"
                                   "X-Checksum: abc\r\n"
                                   "\r\n";
    for (int i = 0; i < 2; i++) {
        sink k = {0};
        http_response resp;
        loom_error err;
        assert_int_equal(fetch(i ? SC_HOLD : SC_TRICKLE, response, "POST", &k, &resp, &err, NULL),
                         0);
        assert_int_equal(resp.status, 200);
        assert_string_equal(str_cstr(&k.got), "hello world, chunked!");
        assert_int_equal(resp.body_bytes, 21);
        assert_string_equal(resp.request_id, "req_chunk");
        http_response_free(&resp);
        str_free(&k.got);
    }
}

static void check_cut_short(const char *response, const char *delivered)
{
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = fetch(SC_FIXED, response, "POST", &k, &resp, &err, NULL);
    assert_int_equal(rc, -LOOM_ERR_MODEL_UNAVAILABLE);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    assert_true(err.retryable);
    assert_int_equal(err.http_status, 200);
    assert_non_null(strstr(err.message, "http://127.0.0.1:"));
    assert_non_null(strstr(err.message, "/v1/x"));
    assert_null(strstr(err.message, "SECRET"));
    assert_string_equal(str_cstr(&k.got), delivered);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_cut_short_content_length(void **state)
{
    check_cut_short("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", "only this");
}

static void test_cut_short_chunked(void **state)
{
    /* Between chunks, and inside one. */
    check_cut_short("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", "hello");
    check_cut_short("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n8\r\nwor",
                    "hellowor");
}

static void test_interim_100_then_200(void **state)
{
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(fetch(SC_FIXED,
                           "HTTP/1.1 100 Continue\r\nrequest-id: req_interim\r\n\r\n"
                           "HTTP/1.1 200 OK\r\nx-request-id: req_final\r\nContent-Length: 2\r\n"
                           "\r\nok",
                           "POST", &k, &resp, &err, NULL),
                     0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(str_cstr(&k.got), "ok");
    assert_string_equal(resp.request_id, "req_final");
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_lf_only_line_ends(void **state)
{
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(fetch(SC_HOLD,
                           "HTTP/1.1 200 OK\nContent-Type: text/plain\nrequest-id: req_lf\n"
                           "Content-Length: 2\n\nok",
                           "POST", &k, &resp, &err, NULL),
                     0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(str_cstr(&k.got), "ok");
    assert_string_equal(resp.request_id, "req_lf");
    assert_string_equal(resp.content_type, "text/plain");
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_no_body_for_head_204_304(void **state)
{
    /* Held open, and the HEAD announces a length: a client that waited for
     * a body here would time out. */
    static const struct {
        const char *method, *response;
        long status;
    } cases[] = {
        {"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 200},
        {"POST", "HTTP/1.1 204 No Content\r\n\r\n", 204},
        {"GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 1000\r\n\r\n", 304},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sink k = {0};
        http_response resp;
        loom_error err;
        assert_int_equal(fetch(SC_HOLD, cases[i].response, cases[i].method, &k, &resp, &err, NULL),
                         0);
        assert_int_equal(resp.status, cases[i].status);
        assert_int_equal(k.calls, 0);
        assert_int_equal(resp.error_body.len, 0);
        http_response_free(&resp);
    }
}

/* What the MCP transports read from a response: named headers captured,
 * readable from inside the body callback, and body-less GET and DELETE. */
typedef struct capture_sink {
    sink k;
    http_response *resp;
    char *session_seen; /* captured[0] as on_body first saw it */
    char *type_seen;
} capture_sink;

static int capture_body(void *ctx, const char *data, size_t len)
{
    capture_sink *c = ctx;
    if (!c->k.calls) {
        c->session_seen = c->resp->captured[0] ? xstrdup(c->resp->captured[0]) : NULL;
        c->type_seen = c->resp->content_type ? xstrdup(c->resp->content_type) : NULL;
    }
    return on_body(&c->k, data, len);
}

static void test_capture_headers(void **state)
{
    server s;
    server_start(&s, SC_TRICKLE,
                 "HTTP/1.1 200 OK\r\n"
                 "Content-Type: text/event-stream\r\n"
                 "mcp-session-id: first\r\n"
                 "MCP-SESSION-ID:   sess-42  \r\n"
                 "X-Other: o\r\n"
                 "Content-Length: 15\r\n"
                 "\r\n"
                 "data: {\"a\":1}\n\n");
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", s.port);
    static const char *const want[] = {"Mcp-Session-Id", "X-Absent", "x-other", NULL};
    http_response resp;
    loom_error err;
    capture_sink c = {.resp = &resp};
    http_request req = {.method = "POST", .url = url, .headers = test_headers, .body = "{}",
                        .body_len = 2, .connect_timeout_ms = 2000, .capture_headers = want};
    assert_int_equal(http_perform(&req, capture_body, &c, &resp, &err), 0);
    server_stop(&s);
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.captured[0], "sess-42"); /* the last one wins, trimmed */
    assert_null(resp.captured[1]);
    assert_string_equal(resp.captured[2], "o");
    assert_null(resp.captured[3]);
    assert_string_equal(c.session_seen, "sess-42");
    assert_string_equal(c.type_seen, "text/event-stream");
    assert_string_equal(str_cstr(&c.k.got), "data: {\"a\":1}\n\n");
    http_response_free(&resp);
    assert_null(resp.captured[0]);
    free(c.session_seen);
    free(c.type_seen);
    str_free(&c.k.got);

    /* A capture list on an error response: kept too, body in error_body. */
    server_start(&s, SC_FIXED,
                 "HTTP/1.1 404 Not Found\r\nMcp-Session-Id: gone\r\nContent-Length: 4\r\n\r\nnope");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", s.port);
    sink k = {0};
    assert_int_equal(http_perform(&req, on_body, &k, &resp, &err), 0);
    server_stop(&s);
    assert_int_equal(resp.status, 404);
    assert_string_equal(resp.captured[0], "gone");
    assert_string_equal(str_cstr(&resp.error_body), "nope");
    assert_int_equal(k.calls, 0);
    http_response_free(&resp);
}

static void test_get_and_delete_without_body(void **state)
{
    static const char *const methods[] = {"GET", "DELETE"};
    for (size_t i = 0; i < 2; i++) {
        server s;
        server_start(&s, SC_FIXED, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", s.port);
        static const char *const hdrs[] = {"Mcp-Session-Id: s1", NULL};
        http_request req = {.method = methods[i], .url = url, .headers = hdrs,
                            .connect_timeout_ms = 2000};
        sink k = {0};
        http_response resp;
        loom_error err;
        assert_int_equal(http_perform(&req, on_body, &k, &resp, &err), 0);
        server_join(&s);
        const char *r = str_cstr(&s.request);
        char line[64];
        snprintf(line, sizeof line, "%s /mcp HTTP/1.1\r\n", methods[i]);
        assert_true(strncmp(r, line, strlen(line)) == 0);
        assert_non_null(strcasestr(r, "\r\nMcp-Session-Id: s1\r\n"));
        assert_null(strcasestr(r, "\r\ncontent-length:"));
        assert_non_null(strstr(r, "\r\n\r\n"));
        assert_int_equal(strlen(strstr(r, "\r\n\r\n")), 4); /* nothing after the head */
        assert_int_equal(resp.status, 200);
        assert_string_equal(str_cstr(&k.got), "ok");
        str_free(&s.request);
        str_free(&k.got);
        http_response_free(&resp);
    }
}

static void test_retry_after_other_date_forms(void **state)
{
    static const char *const formats[] = {
        "%A, %d-%b-%y %H:%M:%S GMT", /* RFC 850 */
        "%a %b %e %H:%M:%S %Y",      /* asctime */
    };
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char date[64], response[256];
        time_t when = time(NULL) + 30;
        struct tm tm;
        gmtime_r(&when, &tm);
        strftime(date, sizeof date, formats[i], &tm);
        snprintf(response, sizeof response,
                 "HTTP/1.1 429 Too Many Requests\r\nRetry-After: %s\r\nContent-Length: 0\r\n\r\n",
                 date);
        sink k = {0};
        http_response resp;
        loom_error err;
        assert_int_equal(fetch(SC_FIXED, response, "POST", &k, &resp, &err, NULL), 0);
        assert_int_equal(resp.status, 429);
        assert_true(resp.retry_after_s >= 27 && resp.retry_after_s <= 30);
        http_response_free(&resp);
    }
}

static void test_basic_auth_from_userinfo(void **state)
{
    server s;
    server_start(&s, SC_FIXED, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    char url[128];
    snprintf(url, sizeof url, "http://user:p%%40ss@127.0.0.1:%d/", s.port);
    http_request req = {.method = "GET", .url = url, .connect_timeout_ms = 2000};
    http_response resp;
    loom_error err;
    assert_int_equal(http_perform(&req, NULL, NULL, &resp, &err), 0);
    server_join(&s);
    assert_int_equal(resp.status, 200);
    /* base64("user:p@ss") */
    assert_non_null(strstr(str_cstr(&s.request), "\r\nAuthorization: Basic dXNlcjpwQHNz\r\n"));
    str_free(&s.request);
    http_response_free(&resp);
}

static void test_caller_header_conventions(void **state)
{
    /* libcurl's header-list conventions, kept by both transports. */
    static const char *const headers[] = {
        "Accept:",                /* removes the default */
        "X-Empty;",               /* sent with an empty value */
        "User-Agent: custom/1.0", /* replaces the default */
        "X-Ignored; not empty",   /* neither form: dropped */
        NULL,
    };
    server s;
    server_start(&s, SC_FIXED, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/h", s.port);
    http_request req = {.method = "GET", .url = url, .headers = headers,
                        .connect_timeout_ms = 2000};
    http_response resp;
    loom_error err;
    assert_int_equal(http_perform(&req, NULL, NULL, &resp, &err), 0);
    server_join(&s);
    const char *got = str_cstr(&s.request);
    assert_null(strcasestr(got, "\r\nAccept:"));
    assert_non_null(strstr(got, "\r\nX-Empty:\r\n"));
    assert_non_null(strstr(got, "\r\nUser-Agent: custom/1.0\r\n"));
    assert_null(strstr(got, "loom/"));
    assert_null(strstr(got, "X-Ignored"));
    char host[64];
    snprintf(host, sizeof host, "\r\nHost: 127.0.0.1:%d\r\n", s.port);
    assert_non_null(strstr(got, host));
    str_free(&s.request);
    http_response_free(&resp);
}

static void test_localhost_name(void **state)
{
    /* The server listens on 127.0.0.1 only, as local model servers do. */
    server s;
    server_start(&s, SC_FIXED, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    char url[64];
    snprintf(url, sizeof url, "http://LocalHost:%d/v1/models", s.port);
    http_request req = {.method = "GET", .url = url, .connect_timeout_ms = 2000};
    sink k = {0};
    http_response resp;
    loom_error err;
    assert_int_equal(http_perform(&req, on_body, &k, &resp, &err), 0);
    server_join(&s);
    assert_int_equal(resp.status, 200);
    assert_string_equal(str_cstr(&k.got), "ok");
    const char *line = "GET /v1/models HTTP/1.1\r\n";
    assert_true(strncmp(str_cstr(&s.request), line, strlen(line)) == 0);
    str_free(&s.request);
    str_free(&k.got);
    http_response_free(&resp);
}

/* ---- the proxy environment: both transports must agree on who goes direct ---- */

static void test_proxy_env_honoured(void **state)
{
    /* The test server plays the proxy. The .invalid host can never resolve,
     * so the request only arrives if it went to the proxy unresolved. */
    server s;
    server_start(&s, SC_FIXED, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    char proxy[64];
    snprintf(proxy, sizeof proxy, "http://127.0.0.1:%d", s.port);
    setenv("http_proxy", proxy, 1);
    http_request req = {.method = "POST", .url = "http://proxied.invalid/x", .body = "{}",
                        .body_len = 2, .connect_timeout_ms = 2000};
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = http_perform(&req, on_body, &k, &resp, &err);
    unsetenv("http_proxy");
    server_join(&s);
    assert_int_equal(rc, 0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(str_cstr(&k.got), "ok");
    const char *line = "POST http://proxied.invalid/x HTTP/1.1\r\n";
    assert_true(strncmp(str_cstr(&s.request), line, strlen(line)) == 0);
    str_free(&s.request);
    http_response_free(&resp);
    str_free(&k.got);
}

/* With a proxy on a dead port configured, a request that goes direct
 * succeeds and one sent to the proxy is refused. */
static int via_dead_proxy(const char *proxy_var, const char *no_proxy_var, const char *no_proxy)
{
    char proxy[64];
    snprintf(proxy, sizeof proxy, "http://127.0.0.1:%d", closed_port());
    setenv(proxy_var, proxy, 1);
    if (no_proxy_var)
        setenv(no_proxy_var, no_proxy, 1);
    server s;
    server_start(&s, SC_FIXED, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = perform(&s, "/direct", "{}", 2, 0, NULL, &k, &resp, &err);
    unsetenv(proxy_var);
    if (no_proxy_var)
        unsetenv(no_proxy_var);
    if (rc != 0) {
        /* The server never got a connection: wake its accept so it can end. */
        {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s.port),
                                    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
            (void)connect(fd, (struct sockaddr *)&a, sizeof a);
            close(fd);
        }
    }
    server_stop(&s);
    http_response_free(&resp);
    str_free(&k.got);
    return rc;
}

static void test_no_proxy_rules(void **state)
{
    assert_int_equal(via_dead_proxy("http_proxy", "no_proxy", "*"), 0);
    assert_int_equal(via_dead_proxy("http_proxy", "no_proxy", "example.com, 127.0.0.1"), 0);
    assert_int_equal(via_dead_proxy("all_proxy", "no_proxy", "localhost,127.0.0.0/8"), 0);
    assert_int_equal(via_dead_proxy("ALL_PROXY", "NO_PROXY", ".example.com,127.0.0.1"), 0);
    assert_int_equal(via_dead_proxy("http_proxy", "no_proxy", "example.com 127.0.0.1"), 0);
    /* curl never reads HTTP_PROXY for http:// (a CGI "Proxy:" header sets it). */
    assert_int_equal(via_dead_proxy("HTTP_PROXY", NULL, NULL), 0);
    /* Not matched: the dead proxy is used, and refuses. */
    assert_int_equal(via_dead_proxy("http_proxy", NULL, NULL), -LOOM_ERR_MODEL_UNAVAILABLE);
    assert_int_equal(via_dead_proxy("http_proxy", "no_proxy", "127.0.0.2,0.0.1,27.0.0.1"),
                     -LOOM_ERR_MODEL_UNAVAILABLE);
    assert_int_equal(via_dead_proxy("all_proxy", "no_proxy", "10.0.0.0/8,127.0.0.0/0,*,127.0.0.1."),
                     -LOOM_ERR_MODEL_UNAVAILABLE);
    /* As in curl, a variable set to "" counts as unset. */
    setenv("no_proxy", "", 1);
    assert_int_equal(via_dead_proxy("http_proxy", "NO_PROXY", "127.0.0.1"), 0);
    unsetenv("no_proxy");
    setenv("http_proxy", "", 1);
    assert_int_equal(via_dead_proxy("all_proxy", NULL, NULL), -LOOM_ERR_MODEL_UNAVAILABLE);
    unsetenv("http_proxy");
}

/* ---- what only the plain transport decides ---- */

static void check_protocol_error(const char *response)
{
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = fetch(SC_FIXED, response, "POST", &k, &resp, &err, NULL);
    assert_int_equal(rc, -LOOM_ERR_MODEL_PROTOCOL);
    assert_int_equal(err.code, LOOM_ERR_MODEL_PROTOCOL);
    assert_false(err.retryable);
    assert_null(strstr(err.message, "SECRET"));
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_malformed_chunk_size(void **state)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    static const char *const bodies[] = {
        "zz\r\nhello\r\n0\r\n\r\n",
        "5x\r\nhello\r\n0\r\n\r\n",
        "\r\nhello\r\n0\r\n\r\n",
        "-5\r\nhello\r\n0\r\n\r\n",
        "fffffffffffffffff\r\nhello\r\n0\r\n\r\n",
        "5\r\nhello!!\r\n0\r\n\r\n", /* the chunk is longer than its size */
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        char response[256];
        snprintf(response, sizeof response, "%s%s", head, bodies[i]);
        check_protocol_error(response);
    }
}

static void test_oversize_headers(void **state)
{
    loom_str response = LOOM_STR_INIT;
    str_puts(&response, "HTTP/1.1 200 OK\r\n");
    for (int i = 0; response.len < 70 * 1024; i++) {
        str_printf(&response, "X-Pad-%d: ", i);
        for (int j = 0; j < 100; j++)
            str_putc(&response, 'a');
        str_puts(&response, "\r\n");
    }
    str_puts(&response, "Content-Length: 2\r\n\r\nok");
    check_protocol_error(response.ptr);
    str_free(&response);
}

static void test_not_http(void **state)
{
    check_protocol_error("SSH-2.0-OpenSSH_9.2\r\n");
    check_protocol_error("HTTP/1.1 2000 OK\r\n\r\n");
    check_protocol_error("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello");
}

static void test_header_line_break_refused(void **state)
{
    /* A value with a line break could smuggle headers or a request of its
     * own; nothing is sent. */
    static const char *const headers[] = {"x-api-key: k\r\nX-Injected: 1", NULL};
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", closed_port());
    http_request req = {.method = "GET", .url = url, .headers = headers};
    http_response resp;
    loom_error err;
    assert_int_equal(http_perform(&req, NULL, NULL, &resp, &err), -LOOM_ERR_INVALID_REQUEST);
    assert_null(strstr(err.message, "X-Injected"));
    http_response_free(&resp);
}

typedef struct timed_canceller {
    loom_cancel *flag;
    long after_ms;
    int64_t at_ms;
} timed_canceller;

static void *cancel_later_timed(void *arg)
{
    timed_canceller *c = arg;
    pause_ms(c->after_ms);
    c->at_ms = clock_mono_ms();
    atomic_store(c->flag, 1);
    return NULL;
}

static void test_cancel_latency(void **state)
{
    /* The plain transport polls in 50 ms slices; libcurl's progress
     * callback runs about once a second, so this is the plain path only. */
    server s;
    server_start(&s, SC_STALL, NULL);
    loom_cancel flag = 0;
    timed_canceller c = {&flag, 200, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later_timed, &c), 0);
    sink k = {0};
    http_response resp;
    loom_error err;
    int rc = perform(&s, "/v1/messages", "{}", 2, 0, &flag, &k, &resp, &err);
    int64_t returned = clock_mono_ms();
    pthread_join(th, NULL);
    server_stop(&s);
    assert_int_equal(rc, -LOOM_ERR_RUN_CANCELLED);
    /* The stall never ends by itself, so returning at all proves the cancel
     * reached the transfer; how fast (50 ms slices) is bench material, not a
     * test assertion. */
    assert_true(returned >= c.at_ms);
    http_response_free(&resp);
    str_free(&k.got);
}

static void test_http_date_forms(void **state)
{
    /* RFC 9110 §5.6.7's example instant, 784111777, in each accepted form. */
    assert_int_equal(http_parse_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    assert_int_equal(http_parse_date("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
    assert_int_equal(http_parse_date("Sun Nov  6 08:49:37 1994"), 784111777);
    assert_int_equal(http_parse_date("  sun, 6 nov 1994 08:49:37 utc "), 784111777);
    assert_int_equal(http_parse_date("Sun, 06 Nov 1994 08:49:37"), 784111777);
    assert_int_equal(http_parse_date("Sun, 06 Nov 1994 08:49:37 PST"), (time_t)-1);
    assert_int_equal(http_parse_date("Sun, 06 Nov 1994 8:49:37 GMT"), (time_t)-1);
    assert_int_equal(http_parse_date("Sun, 32 Nov 1994 08:49:37 GMT"), (time_t)-1);
    assert_int_equal(http_parse_date("Sun, 06 Nox 1994 08:49:37 GMT"), (time_t)-1);
    assert_int_equal(http_parse_date("Sun, 06 Nov 994 08:49:37 GMT"), (time_t)-1);
    assert_int_equal(http_parse_date("Sun, 06 Nov 1994 24:49:37 GMT"), (time_t)-1);
    assert_int_equal(http_parse_date("Sun Nov  6 08:49:37 94"), (time_t)-1);
    assert_int_equal(http_parse_date("tomorrow"), (time_t)-1);
    assert_int_equal(http_parse_date(""), (time_t)-1);
}

static int use_plain(void **state)
{
    unsetenv("LOOM_HTTP_CLIENT");
    return 0;
}

static int use_curl(void **state)
{
    setenv("LOOM_HTTP_CLIENT", "curl", 1);
    return 0;
}

int main(void)
{
    /* The server is on loopback; a proxy from the environment would only
     * get in the way. */
    const char *proxies[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                             "all_proxy",  "ALL_PROXY",  "no_proxy",    "NO_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++)
        unsetenv(proxies[i]);
    http_global_init();

    const struct CMUnitTest both[] = {
        cmocka_unit_test(test_stream_chunks_concatenated),
        cmocka_unit_test(test_request_as_sent),
        cmocka_unit_test(test_429_retry_after_and_error_body),
        cmocka_unit_test(test_retry_after_http_date),
        cmocka_unit_test(test_retry_after_ms_preferred),
        cmocka_unit_test(test_error_body_capped),
        cmocka_unit_test(test_redirect_not_followed),
        cmocka_unit_test(test_mid_body_close_unavailable),
        cmocka_unit_test(test_mid_body_reset_unavailable),
        cmocka_unit_test(test_stall_idle_timeout),
        cmocka_unit_test(test_ping_forever_total_deadline),
        cmocka_unit_test(test_ping_forever_idle_never_fires),
        cmocka_unit_test(test_cancel_from_other_thread),
        cmocka_unit_test(test_cancel_before_start),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_url_secrets_not_in_message),
        cmocka_unit_test(test_body_callback_error_kept),
        cmocka_unit_test(test_body_callback_stop_is_protocol_error),
        cmocka_unit_test(test_content_length_body),
        cmocka_unit_test(test_close_delimited_body),
        cmocka_unit_test(test_chunked_extensions_and_trailer),
        cmocka_unit_test(test_cut_short_content_length),
        cmocka_unit_test(test_cut_short_chunked),
        cmocka_unit_test(test_interim_100_then_200),
        cmocka_unit_test(test_lf_only_line_ends),
        cmocka_unit_test(test_no_body_for_head_204_304),
        cmocka_unit_test(test_retry_after_other_date_forms),
        cmocka_unit_test(test_basic_auth_from_userinfo),
        cmocka_unit_test(test_caller_header_conventions),
        cmocka_unit_test(test_localhost_name),
        cmocka_unit_test(test_proxy_env_honoured),
        cmocka_unit_test(test_no_proxy_rules),
        cmocka_unit_test(test_capture_headers),
        cmocka_unit_test(test_get_and_delete_without_body),
    };
    const struct CMUnitTest plain_only[] = {
        cmocka_unit_test(test_http_date_forms),
        cmocka_unit_test(test_malformed_chunk_size),
        cmocka_unit_test(test_oversize_headers),
        cmocka_unit_test(test_not_http),
        cmocka_unit_test(test_header_line_break_refused),
        cmocka_unit_test(test_cancel_latency),
    };
    int failed = cmocka_run_group_tests_name("plain transport", both, use_plain, NULL);
    failed += cmocka_run_group_tests_name("plain transport only", plain_only, use_plain, NULL);
    failed += cmocka_run_group_tests_name("libcurl transport", both, use_curl, use_plain);
    return failed;
}

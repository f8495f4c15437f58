/* test_mcp_server_call_tool.c — what `loom mcp serve` is built on:
 * loom_session_tool_specs_json (the built-ins' declarations and what Loom
 * knows of them) and loom_session_call_tool (one call through the governed
 * pipeline outside a run: a read runs, a command the default mode would ask
 * about is denied headless, bypassPermissions lets a write run, bad input is
 * an error, an unknown tool a find_tool result, a run in progress makes a
 * call wait its turn); then the server's message
 * handler (src/surfaces/mcp_server/rpc.c) without tools: the lifecycle,
 * ping, pagination cursors, and JSON-RPC errors for broken messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "loom.h"
#include "surfaces/mcp_server/mcps.h"
#include "tmpdir.h"

static char home[256], work[300];

static int setup(void **state)
{
    (void)state;
    tmpdir_loom_home(home, sizeof home, work, sizeof work, "loom-mcps");
    tmpdir_write(work, "notes.txt", "hello notes\n");
    tmpdir_write(work, "x/keep", "keep\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(home);
}

static loom_session *session_in(const char *mode, loom_agent **agent_out)
{
    loom_config *cfg = loom_config_new();
    loom_status st;
    assert_int_equal(loom_config_set(cfg, "provider", "replay", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", "/dev/null", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", work, &st), 0);
    assert_int_equal(loom_config_set(cfg, "permission_mode", mode, &st), 0);
    loom_agent *agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    if (!agent)
        fail_msg("the agent was refused: %s", st.message);
    loom_session *s = loom_session_new(agent, &st);
    assert_non_null(s);
    *agent_out = agent;
    return s;
}

static json_t *call(loom_session *s, const char *name, const char *input)
{
    loom_status st;
    char *text = loom_session_call_tool(s, name, input, &st);
    if (!text)
        fail_msg("loom_session_call_tool(%s) failed: %s", name, st.message);
    json_t *r = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(r);
    return r;
}

static void test_specs(void **state)
{
    (void)state;
    loom_agent *a;
    loom_session *s = session_in("default", &a);
    char *text = loom_session_tool_specs_json(s);
    json_t *specs = json_loads(text, 0, NULL);
    free(text);
    assert_true(json_is_array(specs));
    bool read = false, bash = false, fetch = false;
    size_t i;
    json_t *t;
    json_array_foreach(specs, i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        assert_non_null(json_string_value(json_object_get(t, "description")));
        assert_true(json_is_object(json_object_get(t, "input_schema")));
        if (!strcmp(n, "Read")) {
            read = true;
            assert_true(json_is_true(json_object_get(t, "read_only")));
            assert_non_null(json_object_get(json_object_get(json_object_get(t, "input_schema"),
                                                            "properties"),
                                            "file_path"));
        } else if (!strcmp(n, "Bash")) {
            bash = true;
            assert_true(json_is_false(json_object_get(t, "read_only")));
        } else if (!strcmp(n, "WebFetch")) {
            fetch = true;
            assert_true(json_is_true(json_object_get(t, "sends_out")));
        }
    }
    assert_true(read && bash && fetch);
    json_decref(specs);
    assert_null(loom_session_tool_specs_json(NULL));
    loom_session_free(s);
    loom_agent_free(a);
}

static void test_call_default_mode(void **state)
{
    (void)state;
    loom_agent *a;
    loom_session *s = session_in("default", &a);
    json_t *r = call(s, "Read", "{\"file_path\": \"notes.txt\"}");
    assert_false(json_is_true(json_object_get(r, "is_error")));
    assert_non_null(strstr(json_string_value(json_object_get(r, "text")), "hello notes"));
    assert_null(json_object_get(r, "failed_step"));
    json_decref(r);

    r = call(s, "Bash", "{\"command\": \"rm -rf x\"}");
    assert_true(json_is_true(json_object_get(r, "is_error")));
    assert_string_equal(json_string_value(json_object_get(r, "failed_step")), "decide");
    assert_non_null(strstr(json_string_value(json_object_get(r, "text")), "denied"));
    json_decref(r);
    char p[400];
    snprintf(p, sizeof p, "%s/x/keep", work);
    assert_int_equal(access(p, F_OK), 0);

    r = call(s, "Write", "{\"file_path\": \"new.txt\", \"content\": \"x\"}");
    assert_true(json_is_true(json_object_get(r, "is_error")));
    json_decref(r);
    snprintf(p, sizeof p, "%s/new.txt", work);
    assert_int_not_equal(access(p, F_OK), 0);

    r = call(s, "NoSuchTool", "{}");
    assert_true(json_is_true(json_object_get(r, "is_error")));
    assert_string_equal(json_string_value(json_object_get(r, "failed_step")), "find_tool");
    json_decref(r);

    r = call(s, "Read", "{\"file_path\": 7}");
    assert_true(json_is_true(json_object_get(r, "is_error")));
    assert_string_equal(json_string_value(json_object_get(r, "failed_step")), "validate_schema");
    json_decref(r);

    loom_status st;
    assert_null(loom_session_call_tool(s, "Read", "not json", &st));
    assert_int_equal(st.code, LOOM_ERR_INVALID_REQUEST);
    assert_null(loom_session_call_tool(s, "Read", "[1]", &st));
    assert_int_equal(st.code, LOOM_ERR_INVALID_REQUEST);
    assert_null(loom_session_call_tool(s, NULL, "{}", &st));
    assert_int_equal(st.code, LOOM_ERR_INVALID_REQUEST);
    assert_non_null(strstr(st.message, "name"));
    assert_null(loom_session_call_tool(NULL, "Read", "{}", &st));
    assert_null(loom_session_call_tool(NULL, "Read", "{}", NULL));
    loom_session_free(s);
    loom_agent_free(a);
}

static void test_call_bypass(void **state)
{
    (void)state;
    loom_agent *a;
    loom_session *s = session_in("bypassPermissions", &a);
    json_t *r = call(s, "Write", "{\"file_path\": \"made.txt\", \"content\": \"made\\n\"}");
    assert_false(json_is_true(json_object_get(r, "is_error")));
    json_decref(r);
    char p[400];
    snprintf(p, sizeof p, "%s/made.txt", work);
    assert_int_equal(access(p, F_OK), 0);
    loom_session_free(s);
    loom_agent_free(a);
}

/* A run in progress holds the session: a tool call waits its turn
 * (invalid_state_transition), and goes through once the run has ended. */
static void test_call_during_run(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/cassette.json", home);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"turns\": [{\"reply\": {\"text\": \"Checking.\", \"tool_calls\": [{\"id\": "
          "\"c1\", \"name\": \"Bash\", \"input\": {\"command\": \"echo hi\"}}]}},"
          " {\"reply\": {\"text\": \"Done.\"}}]}",
          f);
    fclose(f);
    loom_config *cfg = loom_config_new();
    loom_status st;
    assert_int_equal(loom_config_set(cfg, "provider", "replay", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", path, &st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", work, &st), 0);
    assert_int_equal(loom_config_set(cfg, "interactive", "true", &st), 0);
    assert_int_equal(loom_config_set(cfg, "ask_tools", "Bash(echo:*)", &st), 0);
    loom_agent *a = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    assert_non_null(a);
    loom_session *s = loom_session_new(a, &st);
    assert_non_null(s);
    loom_run_options opts = {.queue_events = true};
    loom_run *r = loom_run_start(s, "say hi", &opts, &st);
    assert_non_null(r);
    loom_event *ev;
    bool asked = false;
    while (!asked && loom_run_next_event(r, &ev, 20000) == 1) {
        asked = !strcmp(ev->type, "approval.requested");
        loom_event_free(ev);
    }
    assert_true(asked);
    assert_null(loom_session_call_tool(s, "Read", "{\"file_path\": \"notes.txt\"}", &st));
    assert_int_equal(st.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    loom_run_cancel(r);
    loom_run_wait(r);
    while (loom_run_next_event(r, &ev, 1000) == 1)
        loom_event_free(ev);
    loom_run_free(r);
    json_t *res = call(s, "Read", "{\"file_path\": \"notes.txt\"}");
    assert_false(json_is_true(json_object_get(res, "is_error")));
    json_decref(res);
    loom_session_free(s);
    loom_agent_free(a);
}

/* ---- the message handler, no tools ----------------------------------------- */

typedef struct captured {
    json_t *msgs;
} captured;

static void cap_send(void *ctx, json_t *msg, bool final)
{
    (void)final;
    captured *c = ctx;
    if (msg)
        json_array_append_new(c->msgs, msg);
}

/* Handles text and returns the one answer (NULL when none); *outcome set. */
static json_t *ask(mcps_conn *conn, const char *text, mcps_outcome *outcome)
{
    captured cap = {json_array()};
    mcps_sink sink = {cap_send, NULL, NULL, &cap};
    mcps_outcome o = mcps_handle(conn, text, strlen(text), &sink);
    if (outcome)
        *outcome = o;
    assert_true(json_array_size(cap.msgs) <= 1);
    json_t *m = json_array_size(cap.msgs) ? json_incref(json_array_get(cap.msgs, 0)) : NULL;
    json_decref(cap.msgs);
    return m;
}

static int code_of(json_t *m)
{
    int c = (int)json_integer_value(json_object_get(json_object_get(m, "error"), "code"));
    json_decref(m);
    return c;
}

static void test_rpc(void **state)
{
    (void)state;
    mcps_options o = {.page_size = 2};
    mcps_server *srv = mcps_server_new(&o, false);
    mcps_conn *c = mcps_conn_new(srv);
    assert_int_equal(code_of(ask(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL)),
                     MCPS_INVALID_REQUEST);
    json_t *m = ask(c, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}", NULL);
    assert_int_equal(json_object_size(json_object_get(m, "result")), 0);
    assert_string_equal(json_string_value(json_object_get(m, "id")), "a");
    json_decref(m);
    m = ask(c,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":"
            "{\"protocolVersion\":\"2024-01-01\",\"capabilities\":{}}}",
            NULL);
    json_t *res = json_object_get(m, "result");
    /* An unknown version: the newest we speak. */
    assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), "2025-11-25");
    assert_non_null(json_string_value(json_object_get(res, "instructions")));
    assert_non_null(json_object_get(json_object_get(res, "capabilities"), "tools"));
    json_decref(m);
    assert_true(mcps_conn_initialized(c));
    mcps_outcome out;
    assert_null(ask(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &out));
    assert_int_equal(out, MCPS_NO_REPLY);
    m = ask(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}", NULL);
    assert_int_equal(json_array_size(json_object_get(json_object_get(m, "result"), "tools")), 0);
    assert_null(json_object_get(json_object_get(m, "result"), "nextCursor"));
    json_decref(m);
    assert_int_equal(code_of(ask(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\","
                                    "\"params\":{\"cursor\":\"loom:9\"}}",
                                 NULL)),
                     MCPS_INVALID_PARAMS);
    assert_int_equal(code_of(ask(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                                    "\"params\":{\"name\":\"Read\"}}",
                                 NULL)),
                     MCPS_INVALID_PARAMS);
    assert_int_equal(code_of(ask(c, "{", NULL)), MCPS_PARSE_ERROR);
    assert_int_equal(code_of(ask(c, "[]", NULL)), MCPS_INVALID_REQUEST);
    assert_int_equal(code_of(ask(c, "null", NULL)), MCPS_INVALID_REQUEST);
    assert_int_equal(code_of(ask(c, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", NULL)),
                     MCPS_INVALID_REQUEST);
    assert_int_equal(code_of(ask(c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x/y\"}", NULL)),
                     MCPS_METHOD_NOT_FOUND);
    assert_int_equal(code_of(ask(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\","
                                    "\"params\":{\"protocolVersion\":\"2025-06-18\"}}",
                                 NULL)),
                     MCPS_INVALID_REQUEST);
    captured none = {json_array()};
    mcps_handle(c, NULL, 0, &(mcps_sink){cap_send, NULL, NULL, &none});
    assert_int_equal(json_array_size(none.msgs), 1); /* no message: a parse error */
    json_decref(none.msgs);
    mcps_conn_close(c);
    mcps_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_specs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_default_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_bypass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_during_run, setup, teardown),
        cmocka_unit_test(test_rpc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_acp_map.c — loom acp's pure parts (src/surfaces/acp/acp.h): run
 * events → session/update objects (text and thought chunks, tool calls with
 * kind, title, locations and rawInput, updates with the edit's whole-file
 * diff or the output, TodoWrite → plan, Bash's live output, usage), the
 * permission request's tool call and options, the answers' decisions, stop
 * reasons, the conversation replay, prompt content blocks → a goal, the
 * commands list; the JSON-RPC line classifier; and the dispatcher with
 * sessions off, its answers captured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "surfaces/acp/acp.h"

static json_t *ev(const char *type, const char *payload_json)
{
    json_t *p = json_loads(payload_json, 0, NULL);
    assert_non_null(p);
    return json_pack("{s:s, s:s, s:n, s:o}", "type", type, "event_id", "e1", "correlation_id",
                     "payload", p);
}

static json_t *map_one(acp_map *m, json_t *event)
{
    json_t *out = json_array();
    acp_map_event(m, event, out);
    json_decref(event);
    return out;
}

static const char *s_at(const json_t *arr, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(arr, i), key));
}

static void test_chunks(void **state)
{
    (void)state;
    acp_map m;
    acp_map_init(&m, "/w", 0);
    json_t *out = map_one(&m, ev("token.delta", "{\"channel\":\"text\",\"text\":\"Hel\"}"));
    assert_int_equal(json_array_size(out), 1);
    assert_string_equal(s_at(out, 0, "sessionUpdate"), "agent_message_chunk");
    json_t *c = json_object_get(json_array_get(out, 0), "content");
    assert_string_equal(json_string_value(json_object_get(c, "type")), "text");
    assert_string_equal(json_string_value(json_object_get(c, "text")), "Hel");
    json_decref(out);
    out = map_one(&m, ev("token.delta", "{\"channel\":\"reasoning\",\"text\":\"hmm\"}"));
    assert_string_equal(s_at(out, 0, "sessionUpdate"), "agent_thought_chunk");
    json_decref(out);
    /* A sub-agent's text is its own, an empty delta nothing. */
    out = map_one(&m, ev("token.delta", "{\"channel\":\"text\",\"text\":\"x\",\"agent_id\":\"a\"}"));
    assert_int_equal(json_array_size(out), 0);
    json_decref(out);
    out = map_one(&m, ev("token.delta", "{\"channel\":\"text\",\"text\":\"\"}"));
    assert_int_equal(json_array_size(out), 0);
    json_decref(out);
    /* Events with nothing to show, or no payload. */
    out = map_one(&m, ev("run.state_changed", "{\"state\":\"running\"}"));
    assert_int_equal(json_array_size(out), 0);
    json_decref(out);
    json_t *bare = json_pack("{s:s}", "type", "token.delta");
    out = map_one(&m, bare);
    assert_int_equal(json_array_size(out), 0);
    json_decref(out);
    acp_map_clear(&m);
}

static void test_kinds_titles(void **state)
{
    (void)state;
    assert_string_equal(acp_tool_kind("Read"), "read");
    assert_string_equal(acp_tool_kind("Edit"), "edit");
    assert_string_equal(acp_tool_kind("Write"), "edit");
    assert_string_equal(acp_tool_kind("Grep"), "search");
    assert_string_equal(acp_tool_kind("Glob"), "search");
    assert_string_equal(acp_tool_kind("Bash"), "execute");
    assert_string_equal(acp_tool_kind("WebFetch"), "fetch");
    assert_string_equal(acp_tool_kind("TodoWrite"), "think");
    assert_string_equal(acp_tool_kind("mcp__x__y"), "other");
    assert_string_equal(acp_tool_kind(NULL), "other");
    json_t *in = json_pack("{s:s}", "command", "ls -la\nrm -rf /");
    char *t = acp_tool_title("Bash", in);
    assert_string_equal(t, "`ls -la\xe2\x80\xa6`");
    free(t);
    json_decref(in);
    in = json_pack("{s:s, s:s}", "pattern", "TODO", "path", "src");
    t = acp_tool_title("Grep", in);
    assert_string_equal(t, "Grep TODO in src");
    free(t);
    json_t *locs = acp_tool_locations("Grep", in, "/w");
    assert_string_equal(json_string_value(json_object_get(json_array_get(locs, 0), "path")),
                        "/w/src");
    json_decref(locs);
    json_decref(in);
    t = acp_tool_title("Mystery", NULL);
    assert_string_equal(t, "Mystery");
    free(t);
    in = json_pack("{s:s, s:i}", "file_path", "a.c", "offset", 40);
    locs = acp_tool_locations("Read", in, "/w/");
    json_t *l0 = json_array_get(locs, 0);
    assert_string_equal(json_string_value(json_object_get(l0, "path")), "/w/a.c");
    assert_int_equal(json_integer_value(json_object_get(l0, "line")), 40);
    json_decref(locs);
    json_decref(in);
}

static char *tmp_file(const char *content)
{
    char *path = strdup("/tmp/test_acp_map.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    return path;
}

static void write_file(const char *path, const char *content)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static void test_edit_diff(void **state)
{
    (void)state;
    char *path = tmp_file("one\ntwo\n");
    acp_map m;
    acp_map_init(&m, "/w", 0);
    char payload[1024];
    snprintf(payload, sizeof payload,
             "{\"call_id\":\"c1\",\"tool\":\"Edit\",\"input\":{\"file_path\":\"%s\","
             "\"old_string\":\"two\",\"new_string\":\"2\"}}",
             path);
    json_t *out = map_one(&m, ev("tool.started", payload));
    assert_int_equal(json_array_size(out), 2);
    json_t *tc = json_array_get(out, 0);
    assert_string_equal(s_at(out, 0, "sessionUpdate"), "tool_call");
    assert_string_equal(s_at(out, 0, "toolCallId"), "c1");
    assert_string_equal(s_at(out, 0, "kind"), "edit");
    assert_string_equal(s_at(out, 0, "status"), "pending");
    assert_string_equal(json_string_value(json_object_get(json_object_get(tc, "rawInput"),
                                                          "new_string")),
                        "2");
    json_t *d = json_array_get(json_object_get(tc, "content"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "type")), "diff");
    assert_string_equal(json_string_value(json_object_get(d, "oldText")), "two");
    assert_string_equal(s_at(out, 1, "status"), "in_progress");
    json_decref(out);

    /* The permission request's tool call is the same call, with its diff. */
    json_t *ask = ev("approval.requested",
                     "{\"approval_id\":\"ap1\",\"tool\":\"Edit\",\"input\":{},"
                     "\"question\":\"Allow Edit?\"}");
    json_t *ptc = acp_map_permission_tool_call(&m, ask);
    assert_string_equal(json_string_value(json_object_get(ptc, "toolCallId")), "c1");
    assert_string_equal(json_string_value(json_object_get(ptc, "kind")), "edit");
    json_decref(ptc);
    json_decref(ask);

    write_file(path, "one\n2\n");
    out = map_one(&m, ev("tool.finished", "{\"call_id\":\"c1\",\"tool\":\"Edit\",\"is_error\":false,"
                                          "\"output\":\"ok\"}"));
    assert_int_equal(json_array_size(out), 1);
    assert_string_equal(s_at(out, 0, "sessionUpdate"), "tool_call_update");
    assert_string_equal(s_at(out, 0, "status"), "completed");
    d = json_array_get(json_object_get(json_array_get(out, 0), "content"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "type")), "diff");
    assert_string_equal(json_string_value(json_object_get(d, "path")), path);
    assert_string_equal(json_string_value(json_object_get(d, "oldText")), "one\ntwo\n");
    assert_string_equal(json_string_value(json_object_get(d, "newText")), "one\n2\n");
    json_decref(out);

    /* Write of a new file: oldText null. */
    char created[256];
    snprintf(created, sizeof created, "%s.new", path);
    snprintf(payload, sizeof payload,
             "{\"call_id\":\"c2\",\"tool\":\"Write\",\"input\":{\"file_path\":\"%s\","
             "\"content\":\"fresh\\n\"}}",
             created);
    json_decref(map_one(&m, ev("tool.started", payload)));
    write_file(created, "fresh\n");
    out = map_one(&m, ev("tool.finished", "{\"call_id\":\"c2\",\"tool\":\"Write\"}"));
    d = json_array_get(json_object_get(json_array_get(out, 0), "content"), 0);
    assert_true(json_is_null(json_object_get(d, "oldText")));
    assert_string_equal(json_string_value(json_object_get(d, "newText")), "fresh\n");
    json_decref(out);
    unlink(created);
    unlink(path);
    free(path);
    acp_map_clear(&m);
}

static void test_failed_and_output(void **state)
{
    (void)state;
    acp_map m;
    acp_map_init(&m, "/w", 0);
    json_decref(map_one(&m, ev("tool.started", "{\"call_id\":\"b1\",\"tool\":\"Bash\","
                                               "\"input\":{\"command\":\"make\"}}")));
    json_t *out = map_one(&m, ev("tool.progress", "{\"call_id\":\"b1\",\"tool\":\"Bash\","
                                                  "\"progress\":3,\"output\":\"ab\\n\"}"));
    json_decref(out);
    out = map_one(&m, ev("tool.progress", "{\"call_id\":\"b1\",\"tool\":\"Bash\","
                                          "\"progress\":6,\"output\":\"cd\\n\"}"));
    json_t *c = json_object_get(json_array_get(json_object_get(json_array_get(out, 0), "content"), 0),
                                "content");
    assert_string_equal(json_string_value(json_object_get(c, "text")), "ab\ncd\n");
    json_decref(out);
    out = map_one(&m, ev("tool.failed", "{\"call_id\":\"b1\",\"tool\":\"Bash\",\"is_error\":true,"
                                        "\"output\":\"exit 2\"}"));
    assert_string_equal(s_at(out, 0, "status"), "failed");
    c = json_object_get(json_array_get(json_object_get(json_array_get(out, 0), "content"), 0),
                        "content");
    assert_string_equal(json_string_value(json_object_get(c, "text")), "exit 2");
    json_decref(out);
    /* Progress for a call never started: nothing. */
    out = map_one(&m, ev("tool.progress", "{\"call_id\":\"zz\",\"output\":\"x\"}"));
    assert_int_equal(json_array_size(out), 0);
    json_decref(out);
    acp_map_clear(&m);
}

static void test_plan(void **state)
{
    (void)state;
    acp_map m;
    acp_map_init(&m, "/w", 0);
    json_t *out = map_one(
        &m, ev("tool.started",
               "{\"call_id\":\"t1\",\"tool\":\"TodoWrite\",\"input\":{\"todos\":["
               "{\"content\":\"Write tests\",\"status\":\"in_progress\",\"activeForm\":\"x\"},"
               "{\"content\":\"Ship\",\"status\":\"weird\",\"activeForm\":\"y\"}]}}"));
    assert_int_equal(json_array_size(out), 1);
    assert_string_equal(s_at(out, 0, "sessionUpdate"), "plan");
    json_t *entries = json_object_get(json_array_get(out, 0), "entries");
    assert_int_equal(json_array_size(entries), 2);
    assert_string_equal(s_at(entries, 0, "content"), "Write tests");
    assert_string_equal(s_at(entries, 0, "status"), "in_progress");
    assert_string_equal(s_at(entries, 0, "priority"), "medium");
    assert_string_equal(s_at(entries, 1, "status"), "pending");
    json_decref(out);
    out = map_one(&m, ev("tool.finished", "{\"call_id\":\"t1\",\"tool\":\"TodoWrite\"}"));
    assert_int_equal(json_array_size(out), 0); /* a plan has no tool call to finish */
    json_decref(out);
    acp_map_clear(&m);
}

static void test_usage(void **state)
{
    (void)state;
    acp_map m;
    acp_map_init(&m, "/w", 200000);
    json_t *out = map_one(&m, ev("model.completed",
                                 "{\"turn\":1,\"usage\":{\"inputTokens\":100,\"outputTokens\":20,"
                                 "\"cacheReadTokens\":5,\"cacheCreationTokens\":0},"
                                 "\"cost_usd\":0.5}"));
    json_t *u = json_array_get(out, 0);
    assert_string_equal(s_at(out, 0, "sessionUpdate"), "usage_update");
    assert_int_equal(json_integer_value(json_object_get(u, "used")), 125);
    assert_int_equal(json_integer_value(json_object_get(u, "size")), 200000);
    assert_string_equal(json_string_value(json_object_get(json_object_get(u, "cost"), "currency")),
                        "USD");
    json_decref(out);
    acp_map_clear(&m);
    acp_map_init(&m, "/w", 0); /* no window known: no update */
    out = map_one(&m, ev("model.completed", "{\"usage\":{\"inputTokens\":1}}"));
    assert_int_equal(json_array_size(out), 0);
    json_decref(out);
    acp_map_clear(&m);
}

static void test_permissions_stops(void **state)
{
    (void)state;
    json_t *o = acp_permission_options();
    assert_int_equal(json_array_size(o), 4);
    for (size_t i = 0; i < 4; i++)
        assert_non_null(acp_permission_decision(s_at(o, i, "optionId")));
    json_decref(o);
    assert_string_equal(acp_permission_decision("allow_once"), "allow");
    assert_string_equal(acp_permission_decision("allow_always"), "allow_always");
    assert_string_equal(acp_permission_decision("reject_once"), "deny");
    assert_string_equal(acp_permission_decision("reject_always"), "deny");
    assert_null(acp_permission_decision("maybe"));
    assert_null(acp_permission_decision(NULL));
    assert_string_equal(acp_stop_reason(LOOM_STOP_END_TURN, LOOM_RUN_COMPLETED, false), "end_turn");
    assert_string_equal(acp_stop_reason(LOOM_STOP_END_TURN, LOOM_RUN_COMPLETED, true), "cancelled");
    assert_string_equal(acp_stop_reason(LOOM_STOP_CANCELLED, LOOM_RUN_CANCELLED, false),
                        "cancelled");
    assert_string_equal(acp_stop_reason(LOOM_STOP_MAX_TOKENS, LOOM_RUN_COMPLETED, false),
                        "max_tokens");
    assert_string_equal(acp_stop_reason(LOOM_STOP_MAX_TURNS, LOOM_RUN_FAILED, false),
                        "max_turn_requests");
    assert_string_equal(acp_stop_reason(LOOM_STOP_REFUSAL, LOOM_RUN_COMPLETED, false), "refusal");
    assert_null(acp_stop_reason(LOOM_STOP_MODEL_ERROR, LOOM_RUN_FAILED, false));
}

static void test_replay(void **state)
{
    (void)state;
    json_t *conv = json_loads(
        "[{\"kind\":\"user\",\"text\":\"fix it\"},{\"kind\":\"assistant\",\"text\":\"Looking.\"},"
        "{\"kind\":\"tool_call\",\"name\":\"Read\",\"input\":\"{\\\"file_path\\\":\\\"/w/a.c\\\"}\"},"
        "{\"kind\":\"tool_result\",\"text\":\"int x;\",\"is_error\":false},"
        "{\"kind\":\"tool_call\",\"name\":\"Bash\",\"input\":\"not json\"},"
        "{\"kind\":\"tool_result\",\"text\":\"boom\",\"is_error\":true},"
        "{\"kind\":\"resume_note\",\"text\":\"go on\"},{\"kind\":\"assistant\",\"text\":\"\"}]",
        0, NULL);
    assert_non_null(conv);
    json_t *u = acp_replay_updates(conv);
    assert_int_equal(json_array_size(u), 6);
    assert_string_equal(s_at(u, 0, "sessionUpdate"), "user_message_chunk");
    assert_string_equal(s_at(u, 1, "sessionUpdate"), "agent_message_chunk");
    assert_string_equal(s_at(u, 2, "sessionUpdate"), "tool_call");
    assert_string_equal(s_at(u, 2, "kind"), "read");
    assert_string_equal(s_at(u, 3, "sessionUpdate"), "tool_call_update");
    assert_string_equal(s_at(u, 3, "toolCallId"), s_at(u, 2, "toolCallId"));
    assert_string_equal(s_at(u, 3, "status"), "completed");
    assert_string_equal(s_at(u, 4, "kind"), "execute");
    assert_string_equal(json_string_value(json_object_get(json_array_get(u, 4), "rawInput")),
                        "not json");
    assert_string_equal(s_at(u, 5, "status"), "failed");
    json_decref(u);
    json_decref(conv);
    u = acp_replay_updates(NULL);
    assert_int_equal(json_array_size(u), 0);
    json_decref(u);
}

static char *goal_of(const char *prompt_json, const char *dir, char *why)
{
    json_t *p = json_loads(prompt_json, 0, NULL);
    char *g = acp_prompt_goal(p, dir, why, 300);
    json_decref(p);
    return g;
}

static void test_prompt_goal(void **state)
{
    (void)state;
    char why[300];
    char *g = goal_of("[{\"type\":\"text\",\"text\":\"Explain\"},"
                      "{\"type\":\"resource_link\",\"name\":\"a.c\",\"uri\":\"file:///w/a.c\"},"
                      "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///w/b.c\","
                      "\"text\":\"int b;\"}},"
                      "{\"type\":\"resource_link\",\"name\":\"doc\",\"uri\":\"https://x.y/doc\"}]",
                      NULL, why);
    assert_non_null(g);
    assert_non_null(strstr(g, "Explain"));
    assert_non_null(strstr(g, "@/w/a.c"));
    assert_non_null(strstr(g, "<context uri=\"file:///w/b.c\">\nint b;\n</context>"));
    assert_non_null(strstr(g, "[doc](https://x.y/doc)"));
    free(g);
    /* An image without a folder to write it to is a note. */
    g = goal_of("[{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\"}]", NULL,
                why);
    assert_non_null(strstr(g, "could not include"));
    free(g);
    /* With one, an @mention of the file written. */
    char dir[] = "/tmp/test_acp_img.XXXXXX";
    assert_non_null(mkdtemp(dir));
    g = goal_of("[{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\"}]", dir,
                why);
    assert_non_null(g);
    assert_true(g[0] == '@');
    FILE *f = fopen(g + 1, "rb");
    assert_non_null(f);
    unsigned char head[8];
    assert_int_equal(fread(head, 1, 8, f), 8);
    assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
    fclose(f);
    unlink(g + 1);
    rmdir(dir);
    free(g);
    assert_null(goal_of("\"text\"", NULL, why));
    assert_non_null(strstr(why, "array"));
    assert_null(goal_of("[]", NULL, why));
    assert_null(goal_of("[{\"type\":\"text\"}]", NULL, why));
    assert_non_null(strstr(why, "prompt[0]"));
    assert_null(goal_of("[{\"type\":\"video\"}]", NULL, why));
    assert_null(goal_of("[5]", NULL, why));
}

static void test_commands(void **state)
{
    (void)state;
    json_t *ext = json_loads("{\"skills\":[{\"name\":\"review\",\"description\":\"Review code\","
                             "\"user_invocable\":true,\"argument_hint\":\"[file]\"},"
                             "{\"name\":\"hidden\",\"user_invocable\":false}],"
                             "\"commands\":[{\"name\":\"deploy\",\"description\":\"Ship it\"},"
                             "{\"name\":\"review\",\"description\":\"dup\"}]}",
                             0, NULL);
    json_t *c = acp_commands_from_extensions(ext);
    assert_int_equal(json_array_size(c), 2);
    assert_string_equal(s_at(c, 0, "name"), "review");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(json_array_get(c, 0), "input"), "hint")),
        "[file]");
    assert_string_equal(s_at(c, 1, "name"), "deploy");
    assert_string_equal(s_at(c, 1, "description"), "Ship it");
    json_decref(c);
    json_decref(ext);
    c = acp_commands_from_extensions(NULL);
    assert_int_equal(json_array_size(c), 0);
    json_t *prompts = json_loads("[{\"server\":\"fake\",\"name\":\"greet\",\"command\":"
                                 "\"mcp__fake__greet\",\"description\":\"Greets\","
                                 "\"arguments\":[{\"name\":\"name\"},{\"name\":\"tone\"}]},"
                                 "{\"name\":\"no command\"}]",
                                 0, NULL);
    acp_commands_add_mcp_prompts(c, prompts);
    assert_int_equal(json_array_size(c), 1);
    assert_string_equal(s_at(c, 0, "name"), "mcp__fake__greet");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(json_array_get(c, 0), "input"), "hint")),
        "name tone");
    acp_commands_add_mcp_prompts(c, NULL);
    json_decref(prompts);
    json_decref(c);
}

static void test_questions_form(void **state)
{
    (void)state;
    json_t *qs = json_loads("[{\"question\":\"Which color?\",\"header\":\"Color\","
                            "\"options\":[{\"label\":\"Red\",\"description\":\"warm\"},"
                            "{\"label\":\"Blue\"}]},"
                            "{\"question\":\"Which sizes?\",\"multiSelect\":true,"
                            "\"options\":[{\"label\":\"S\"},{\"label\":\"M\"}]},"
                            "{\"question\":\"Which color?\"},{\"header\":\"no text\"}]",
                            0, NULL);
    json_t *f = acp_questions_form(qs);
    assert_non_null(f);
    json_t *props = json_object_get(f, "properties");
    assert_int_equal(json_object_size(props), 2); /* the repeated and the textless left out */
    json_t *c = json_object_get(props, "Which color?");
    assert_string_equal(json_string_value(json_object_get(c, "type")), "string");
    assert_string_equal(json_string_value(json_object_get(c, "title")), "Color");
    json_t *one = json_object_get(c, "oneOf");
    assert_int_equal(json_array_size(one), 2);
    assert_string_equal(s_at(one, 0, "const"), "Red");
    assert_string_equal(s_at(one, 0, "description"), "warm");
    json_t *m = json_object_get(props, "Which sizes?");
    assert_string_equal(json_string_value(json_object_get(m, "type")), "array");
    assert_int_equal(json_array_size(json_object_get(json_object_get(m, "items"), "anyOf")), 2);
    assert_int_equal(json_array_size(json_object_get(f, "required")), 2);
    json_decref(f);
    /* The tool input holding the array works too; nothing to ask is NULL. */
    json_t *input = json_pack("{s:O}", "questions", qs);
    f = acp_questions_form(input);
    assert_non_null(f);
    json_decref(f);
    json_decref(input);
    json_decref(qs);
    assert_null(acp_questions_form(NULL));
    json_t *empty = json_array();
    assert_null(acp_questions_form(empty));
    json_decref(empty);
}

static void test_rpc_parse(void **state)
{
    (void)state;
    acp_msg m;
    const char *l = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/new\",\"params\":{}}";
    acp_msg_parse(l, strlen(l), &m);
    assert_int_equal(m.kind, ACP_MSG_REQUEST);
    assert_string_equal(m.method, "session/new");
    acp_msg_clear(&m);
    l = "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{}}";
    acp_msg_parse(l, strlen(l), &m);
    assert_int_equal(m.kind, ACP_MSG_NOTIFICATION);
    acp_msg_clear(&m);
    l = "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}";
    acp_msg_parse(l, strlen(l), &m);
    assert_int_equal(m.kind, ACP_MSG_RESPONSE);
    acp_msg_clear(&m);
    static const struct {
        const char *line;
        int code;
    } bad[] = {
        {"{", ACP_PARSE_ERROR},
        {"{\"a\":1,\"a\":2}", ACP_PARSE_ERROR},
        {"[]", ACP_INVALID_REQUEST},
        {"{\"id\":1,\"method\":\"x\"}", ACP_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}", ACP_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":3}", ACP_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":1}", ACP_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"result\":{}}", ACP_INVALID_REQUEST},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        acp_msg_parse(bad[i].line, strlen(bad[i].line), &m);
        assert_int_equal(m.kind, ACP_MSG_INVALID);
        assert_int_equal(m.error_code, bad[i].code);
        acp_msg_clear(&m);
    }
}

/* The dispatcher with sessions off: its lines captured. */
static void capture(void *ctx, const char *line, size_t n)
{
    json_t *arr = ctx;
    json_t *v = json_loadb(line, n, 0, NULL);
    assert_non_null(v);
    json_array_append_new(arr, v);
}

static void test_dispatch(void **state)
{
    (void)state;
    json_t *got = json_array();
    acp_server_options opt = {.write = capture, .write_ctx = got, .sessions = false};
    acp_server *s = acp_server_new(&opt);
    static const char *const lines[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"/\",\"mcpServers\":[]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\",\"prompt\":[]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"authenticate\",\"params\":{\"methodId\":\"x\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session/list\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"bogus\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}",
        "\r\n",
        "nope",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        acp_server_handle_line(s, lines[i], strlen(lines[i]));
    acp_server_free(s);
    assert_int_equal(json_array_size(got), 7);
    json_t *init = json_object_get(json_array_get(got, 0), "result");
    assert_int_equal(json_integer_value(json_object_get(init, "protocolVersion")), 1);
    assert_true(json_is_true(json_object_get(json_object_get(init, "agentCapabilities"),
                                             "loadSession")));
    assert_true(json_is_array(json_object_get(init, "authMethods")));
    const int codes[] = {0, ACP_INTERNAL_ERROR, ACP_NOT_FOUND, 0, 0, ACP_METHOD_NOT_FOUND,
                         ACP_PARSE_ERROR};
    for (size_t i = 1; i < 7; i++) {
        json_t *r = json_array_get(got, i);
        json_t *e = json_object_get(r, "error");
        if (codes[i])
            assert_int_equal(json_integer_value(json_object_get(e, "code")), codes[i]);
        else
            assert_null(e);
    }
    assert_true(json_is_array(
        json_object_get(json_object_get(json_array_get(got, 4), "result"), "sessions")));
    json_decref(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunks),        cmocka_unit_test(test_kinds_titles),
        cmocka_unit_test(test_edit_diff),     cmocka_unit_test(test_failed_and_output),
        cmocka_unit_test(test_plan),          cmocka_unit_test(test_usage),
        cmocka_unit_test(test_permissions_stops), cmocka_unit_test(test_replay),
        cmocka_unit_test(test_prompt_goal),   cmocka_unit_test(test_commands),
        cmocka_unit_test(test_questions_form),
        cmocka_unit_test(test_rpc_parse),     cmocka_unit_test(test_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

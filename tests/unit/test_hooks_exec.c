/* test_hooks_exec.c — what a hook's answer does: Claude Code's exit codes
 * and stdout JSON (permissionDecision, decision, updatedInput,
 * additionalContext, continue, systemMessage), timeouts that are errors and
 * kill the hook, invalid output, the payload on stdin and the environment,
 * and http hooks against a loopback server running in a thread of this
 * test (plain sockets; proxy variables are unset so nothing leaves 127.0.0.1).
 *
 * Each hook is a real bash script written into a mkdtemp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "hooks/registry.h"
#include "hooks/run.h"

static char tmpdir[256];
static int script_seq;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int group_setup(void **state)
{
    static const char *const proxies[] = {"http_proxy", "HTTP_PROXY", "https_proxy",
                                          "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++)
        unsetenv(proxies[i]);
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-hookx-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes an executable bash script; returns its path (caller frees). */
static char *script(const char *body)
{
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/hook%d.sh", tmpdir, ++script_seq);
    loom_str text = LOOM_STR_INIT;
    str_printf(&text, "#!/bin/bash\n%s\n", body);
    loom_error err;
    if (file_write_atomic(path.ptr, text.ptr, text.len, 0755, &err) < 0)
        fail_msg("%s", err.message);
    str_free(&text);
    return str_steal(&path);
}

static char *tmp_path(const char *name)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", tmpdir, name);
    return str_steal(&s);
}

/* Registers each script body as a command hook of ev (matcher "*"), in
 * order, with extra members (JSON object text) on every hook when given. */
static hook_registry *registry_of(const char *event, const char *extra, const char *const *bodies,
                                  size_t n)
{
    hook_registry *reg = hook_registry_new();
    json_t *hooks = json_array();
    for (size_t i = 0; i < n; i++) {
        char *path = script(bodies[i]);
        json_t *h = json_pack("{s:s, s:s}", "type", "command", "command", path);
        free(path);
        if (extra) {
            json_t *x = json_loads(extra, 0, NULL);
            assert_non_null(x);
            json_object_update(h, x);
            json_decref(x);
        }
        json_array_append_new(hooks, h);
    }
    json_t *settings = json_pack("{s:[{s:s, s:o}]}", event, "matcher", "*", "hooks", hooks);
    loom_error err;
    loom_error_clear(&err);
    if (hook_registry_load(reg, settings, HOOK_SRC_USER, true, &err) < 0)
        fail_msg("%s", err.message);
    json_decref(settings);
    return reg;
}

static hook_registry *one_hook(const char *event, const char *body)
{
    return registry_of(event, NULL, &body, 1);
}

static json_t *bash_payload(const char *command)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:{s:s}}", "session_id", "sess-1", "transcript_path",
                     "/tmp/t.jsonl", "cwd", tmpdir, "tool_name", "Bash", "tool_input", "command",
                     command);
}

static hook_outcome fire(hook_registry *reg, hook_event ev)
{
    json_t *p = bash_payload("rm -rf build");
    hook_outcome o = hooks_run(reg, ev, p, NULL);
    json_decref(p);
    return o;
}

static bool has_notice(const hook_outcome *o, hook_notice_kind kind, const char *needle)
{
    for (size_t i = 0; i < o->n_notices; i++)
        if (o->notices[i].kind == kind && strstr(o->notices[i].text, needle))
            return true;
    return false;
}

/* ---- exit 0 with JSON --------------------------------------------------- */

static void decision_case(const char *decision, perm_verdict want)
{
    loom_str body = LOOM_STR_INIT;
    str_printf(&body,
               "cat > /dev/null\n"
               "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\","
               " \"permissionDecision\": \"%s\", \"permissionDecisionReason\": \"because %s\"}}'",
               decision, decision);
    hook_registry *reg = one_hook("PreToolUse", body.ptr);
    str_free(&body);
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_int_equal(o.permission, want);
    char reason[64];
    snprintf(reason, sizeof reason, "because %s", decision);
    assert_string_equal(o.permission_reason, reason);
    assert_int_equal(o.blocked, want == PERM_DENY);
    if (want == PERM_DENY)
        assert_string_equal(o.block_reason, reason);
    assert_int_equal(o.n_results, 1);
    assert_int_equal(o.results[0].exit_code, 0);
    assert_int_equal(o.results[0].verdict, want);
    assert_int_equal(o.results[0].status, want == PERM_DENY ? HOOK_STATUS_BLOCKED : HOOK_STATUS_OK);
    assert_int_equal(o.n_notices, 0);
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

static void test_permission_decisions(void **state)
{
    decision_case("deny", PERM_DENY);
    decision_case("allow", PERM_ALLOW);
    decision_case("ask", PERM_ASK);
}

static void test_deny_beats_ask_beats_allow(void **state)
{
    const char *const bodies[] = {
        "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\","
        " \"permissionDecisionReason\": \"fine\"}}'",
        "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"deny\","
        " \"permissionDecisionReason\": \"no: first\"}}'",
        "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"ask\"}}'",
        "echo '{\"decision\": \"block\", \"reason\": \"no: second\"}'",
    };
    hook_registry *reg = registry_of("PreToolUse", NULL, bodies, 4);
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_int_equal(o.ran, 4);
    assert_int_equal(o.permission, PERM_DENY);
    assert_string_equal(o.permission_reason, "no: first\nno: second");
    assert_true(o.blocked);
    assert_int_equal(o.results[0].verdict, PERM_ALLOW);
    assert_int_equal(o.results[2].verdict, PERM_ASK);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    const char *const ask_allow[] = {
        "echo '{\"decision\": \"approve\", \"reason\": \"ok by me\"}'",
        "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"ask\","
        " \"permissionDecisionReason\": \"check with the user\"}}'",
    };
    reg = registry_of("PreToolUse", NULL, ask_allow, 2);
    o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_int_equal(o.permission, PERM_ASK);
    assert_string_equal(o.permission_reason, "check with the user");
    assert_false(o.blocked);
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

static void test_decision_block_and_approve(void **state)
{
    hook_registry *reg =
        one_hook("PreToolUse", "echo '{\"decision\": \"block\", \"reason\": \"not here\"}'");
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_int_equal(o.permission, PERM_DENY);
    assert_true(o.blocked);
    assert_string_equal(o.block_reason, "not here");
    assert_int_equal(o.results[0].status, HOOK_STATUS_BLOCKED);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    reg = one_hook("PreToolUse", "echo '{\"decision\": \"approve\"}'");
    o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_int_equal(o.permission, PERM_ALLOW);
    assert_false(o.blocked);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* On PostToolUse, block feeds the reason to the model. */
    reg = one_hook("PostToolUse", "echo '{\"decision\": \"block\", \"reason\": \"lint failed\"}'");
    o = fire(reg, HOOK_POST_TOOL_USE);
    assert_int_equal(o.permission, PERM_NONE);
    assert_true(o.blocked);
    assert_string_equal(o.block_reason, "lint failed");
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

/* PermissionRequest answers in its own shape: decision.behavior. */
static void test_permission_request_decision(void **state)
{
    hook_registry *reg = one_hook(
        "PermissionRequest",
        "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\":"
        " {\"behavior\": \"deny\", \"message\": \"not on Fridays\","
        " \"updatedInput\": {\"command\": \"true\"}}}}'");
    hook_outcome o = fire(reg, HOOK_PERMISSION_REQUEST);
    assert_int_equal(o.permission, PERM_DENY);
    assert_true(o.blocked);
    assert_string_equal(o.block_reason, "not on Fridays");
    assert_string_equal(json_get_str(o.updated_input, "command", ""), "true");
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

/* ---- exit codes, timeouts, bad output ----------------------------------- */

static void test_exit2_blocks_with_stderr(void **state)
{
    hook_registry *reg = one_hook("PreToolUse",
                                  "echo '{\"decision\": \"approve\"}'\n" /* ignored on exit 2 */
                                  "echo 'Blocked: rm is not allowed' >&2\nexit 2");
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_true(o.blocked);
    assert_int_equal(o.permission, PERM_DENY);
    assert_string_equal(o.block_reason, "Blocked: rm is not allowed");
    assert_int_equal(o.results[0].exit_code, 2);
    assert_int_equal(o.results[0].status, HOOK_STATUS_BLOCKED);
    assert_int_equal(o.n_notices, 0);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* Stop: exit 2 keeps the agent going; stderr is for the model. */
    reg = one_hook("Stop", "echo 'tests still fail' >&2; exit 2");
    o = fire(reg, HOOK_STOP);
    assert_true(o.blocked);
    assert_int_equal(o.permission, PERM_NONE);
    assert_string_equal(o.block_reason, "tests still fail");
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

static void test_exit1_is_nonblocking_error(void **state)
{
    hook_registry *reg = one_hook("PreToolUse", "echo 'jq: not found' >&2; exit 1");
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_false(o.blocked);
    assert_int_equal(o.permission, PERM_NONE);
    assert_int_equal(o.results[0].status, HOOK_STATUS_ERROR);
    assert_int_equal(o.results[0].exit_code, 1);
    assert_non_null(strstr(o.results[0].message, "jq: not found"));
    assert_true(has_notice(&o, HOOK_NOTICE_ERROR, "failed (exit code 1: jq: not found)"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* A wrong script path (exit 127) is the same kind of error, visible. */
    hook_registry *r2 = hook_registry_new();
    json_t *s = json_pack("{s:[{s:[{s:s, s:s}]}]}", "PreToolUse", "hooks", "type", "command",
                          "command", "/nonexistent/guard.sh");
    loom_error err;
    assert_int_equal(hook_registry_load(r2, s, HOOK_SRC_USER, true, &err), 0);
    json_decref(s);
    o = fire(r2, HOOK_PRE_TOOL_USE);
    assert_false(o.blocked);
    assert_int_equal(o.results[0].exit_code, 127);
    assert_true(has_notice(&o, HOOK_NOTICE_ERROR, "exit code 127"));
    hook_outcome_free(&o);
    hook_registry_free(r2);
}

static void test_timeout_is_error_and_kills(void **state)
{
    char *pidfile = tmp_path("sleeper.pid");
    loom_str body = LOOM_STR_INIT;
    /* exec: the sleeping process is the hook's own, so proc_run reaps it
     * and "gone" is exactly kill(pid, 0) failing. */
    str_printf(&body, "echo $$ > '%s'\nexec sleep 30", pidfile);
    const char *b = body.ptr;
    hook_registry *reg = registry_of("PreToolUse", "{\"timeout\": 1}", &b, 1);
    str_free(&body);
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_false(o.blocked);
    assert_int_equal(o.permission, PERM_NONE);
    assert_int_equal(o.results[0].status, HOOK_STATUS_TIMEOUT);
    assert_true(has_notice(&o, HOOK_NOTICE_ERROR, "timed out after 1 s"));
    assert_true(has_notice(&o, HOOK_NOTICE_ERROR, "did not block"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    char *pidtext;
    loom_error err;
    assert_int_equal(file_read_all(pidfile, &pidtext, NULL, &err), 0);
    pid_t pid = (pid_t)atol(pidtext);
    free(pidtext);
    free(pidfile);
    assert_true(pid > 1);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void test_invalid_json_is_a_notice(void **state)
{
    hook_registry *reg = one_hook("PreToolUse", "echo '{\"decision\": \"block\",'");
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_false(o.blocked);
    assert_int_equal(o.permission, PERM_NONE);
    assert_int_equal(o.results[0].status, HOOK_STATUS_ERROR);
    assert_true(has_notice(&o, HOOK_NOTICE_ERROR, "printed invalid JSON"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* A permissionDecision that is not one of the three is ignored, said. */
    reg = one_hook("PreToolUse", "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"yes\"}}'");
    o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_int_equal(o.permission, PERM_NONE);
    assert_true(has_notice(&o, HOOK_NOTICE_WARNING, "permissionDecision must be"));
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

/* ---- what flows back ---------------------------------------------------- */

static void test_updated_input(void **state)
{
    const char *const bodies[] = {
        "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\","
        " \"permissionDecision\": \"allow\", \"updatedInput\": {\"command\": \"rm -rf ./build\"}}}'",
    };
    hook_registry *reg = registry_of("PreToolUse", NULL, bodies, 1);
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_non_null(o.updated_input);
    assert_string_equal(json_get_str(o.updated_input, "command", ""), "rm -rf ./build");
    assert_int_equal(o.permission, PERM_ALLOW);
    assert_int_equal(o.n_notices, 0);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* Two hooks rewrite differently: the later wins, and the user is told. */
    const char *const two[] = {
        "echo '{\"hookSpecificOutput\": {\"updatedInput\": {\"command\": \"first\"}}}'",
        "echo '{\"hookSpecificOutput\": {\"updatedInput\": {\"command\": \"second\"}}}'",
    };
    reg = registry_of("PreToolUse", NULL, two, 2);
    o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_string_equal(json_get_str(o.updated_input, "command", ""), "second");
    assert_true(has_notice(&o, HOOK_NOTICE_WARNING, "both changed the tool input"));
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

static void test_additional_context(void **state)
{
    const char *const bodies[] = {
        ("echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\","
         " \"additionalContext\": \"first note\"}}'"),
        "echo '{\"hookSpecificOutput\": {\"additionalContext\": \"second note\"}}'",
        "echo 'plain text is verbose output here'",
    };
    hook_registry *reg = registry_of("PostToolUse", NULL, bodies, 3);
    hook_outcome o = fire(reg, HOOK_POST_TOOL_USE);
    assert_string_equal(o.additional_context, "first note\nsecond note");
    assert_true(has_notice(&o, HOOK_NOTICE_OUTPUT, "plain text is verbose output here"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* UserPromptSubmit: plain stdout is context for the model. */
    const char *const ups[] = {
        "echo 'Current branch: main'",
        "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"UserPromptSubmit\","
        " \"additionalContext\": \"Sprint ends Friday\"}}'",
    };
    reg = registry_of("UserPromptSubmit", NULL, ups, 2);
    json_t *p = json_pack("{s:s, s:s}", "prompt", "hi", "cwd", tmpdir);
    o = hooks_run(reg, HOOK_USER_PROMPT_SUBMIT, p, NULL);
    json_decref(p);
    assert_string_equal(o.additional_context, "Current branch: main\nSprint ends Friday");
    assert_int_equal(o.n_notices, 0);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* hookSpecificOutput for another event is ignored, with a warning. */
    reg = one_hook("PostToolUse", "echo '{\"hookSpecificOutput\": {\"hookEventName\": "
                                  "\"PreToolUse\", \"additionalContext\": \"x\"}}'");
    o = fire(reg, HOOK_POST_TOOL_USE);
    assert_null(o.additional_context);
    assert_true(has_notice(&o, HOOK_NOTICE_WARNING, "answered hookSpecificOutput for PreToolUse"));
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

static void test_continue_false_and_system_message(void **state)
{
    hook_registry *reg =
        one_hook("PostToolUse", "echo '{\"continue\": false, \"stopReason\": \"budget spent\","
                                " \"systemMessage\": \"heads up\", \"suppressOutput\": true}'");
    hook_outcome o = fire(reg, HOOK_POST_TOOL_USE);
    assert_true(o.stop);
    assert_string_equal(o.stop_reason, "budget spent");
    assert_true(o.suppress_output);
    assert_true(has_notice(&o, HOOK_NOTICE_MESSAGE, "heads up"));
    assert_false(o.blocked);
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

static void test_stdin_payload_and_env(void **state)
{
    char *dump = tmp_path("stdin.json");
    char *envf = tmp_path("env.txt");
    char *sub = tmp_path("work");
    assert_int_equal(mkdir(sub, 0755), 0);
    loom_str body = LOOM_STR_INIT;
    str_printf(&body,
               "cat > '%s'\n"
               "printf '%%s\\n%%s\\n%%s\\n' \"$CLAUDE_PROJECT_DIR\" \"$LOOM_PROJECT_DIR\" \"$PWD\" > '%s'",
               dump, envf);
    hook_registry *reg = one_hook("PreToolUse", body.ptr);
    str_free(&body);

    json_t *p = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:s}", "session_id", "sess-42",
                          "transcript_path", "/tmp/t.jsonl", "cwd", sub, "tool_name", "Bash",
                          "tool_input", "command", "git push", "description", "ship it",
                          "tool_use_id", "toolu_1");
    hook_run_opts opts = {.project_dir = tmpdir};
    hook_outcome o = hooks_run(reg, HOOK_PRE_TOOL_USE, p, &opts);
    json_decref(p);
    assert_int_equal(o.results[0].status, HOOK_STATUS_OK);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    char *text;
    loom_error err;
    assert_int_equal(file_read_all(dump, &text, NULL, &err), 0);
    json_t *got = json_parse(text, strlen(text), "stdin", &err);
    free(text);
    assert_non_null(got);
    assert_string_equal(json_get_str(got, "session_id", ""), "sess-42");
    assert_string_equal(json_get_str(got, "hook_event_name", ""), "PreToolUse");
    assert_string_equal(json_get_str(got, "tool_name", ""), "Bash");
    assert_string_equal(json_get_str(got, "tool_use_id", ""), "toolu_1");
    assert_string_equal(json_get_str(got, "cwd", ""), sub);
    assert_string_equal(json_get_str(json_get_obj(got, "tool_input"), "command", ""), "git push");
    json_decref(got);

    assert_int_equal(file_read_all(envf, &text, NULL, &err), 0);
    loom_str want = LOOM_STR_INIT;
    str_printf(&want, "%s\n%s\n%s\n", tmpdir, tmpdir, sub);
    assert_string_equal(text, want.ptr);
    str_free(&want);
    free(text);
    free(dump);
    free(envf);
    free(sub);
}

/* ---- http hooks --------------------------------------------------------- */

typedef struct server {
    int lfd;
    int port;
    const char *response;
    pthread_t thread;
    loom_str request;
} server;

static void *serve_one(void *arg)
{
    server *s = arg;
    struct pollfd pfd = {.fd = s->lfd, .events = POLLIN};
    if (poll(&pfd, 1, 5000) != 1)
        return NULL;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char buf[8192];
    size_t want = (size_t)-1;
    while (s->request.len < want) {
        struct pollfd cp = {.fd = fd, .events = POLLIN};
        if (poll(&cp, 1, 5000) != 1)
            break;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            break;
        str_append(&s->request, buf, (size_t)n);
        const char *end = strstr(s->request.ptr, "\r\n\r\n");
        if (end && want == (size_t)-1) {
            const char *cl = strcasestr(s->request.ptr, "content-length:");
            size_t body = cl && cl < end ? (size_t)atol(cl + 15) : 0;
            want = (size_t)(end + 4 - s->request.ptr) + body;
        }
    }
    const char *r = s->response;
    size_t len = strlen(r);
    while (len) {
        ssize_t n = send(fd, r, len, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        r += n;
        len -= (size_t)n;
    }
    close(fd);
    return NULL;
}

static void server_start(server *s, const char *response)
{
    memset(s, 0, sizeof *s);
    s->response = response;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->lfd, 4), 0);
    socklen_t al = sizeof a;
    getsockname(s->lfd, (struct sockaddr *)&a, &al);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve_one, s), 0);
}

/* Waits for the one exchange to finish; s->request then holds it. */
static void server_join(server *s)
{
    pthread_join(s->thread, NULL);
}

static void server_free(server *s)
{
    close(s->lfd);
    str_free(&s->request);
}

static hook_registry *http_hook(int port, const char *event)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/hooks/pre", port);
    json_t *settings = json_pack(
        "{s:[{s:s, s:[{s:s, s:s, s:{s:s, s:s}, s:[s], s:i}]}]}", event, "matcher", "Bash", "hooks",
        "type", "http", "url", url, "headers", "Authorization", "Bearer $HOOK_TEST_TOKEN",
        "X-Secret", "[$HOME]", "allowedEnvVars", "HOOK_TEST_TOKEN", "timeout", 5);
    hook_registry *reg = hook_registry_new();
    loom_error err;
    loom_error_clear(&err);
    if (hook_registry_load(reg, settings, HOOK_SRC_USER, true, &err) < 0)
        fail_msg("%s", err.message);
    json_decref(settings);
    return reg;
}

static void test_http_hook_deny(void **state)
{
    static const char body[] =
        "{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\","
        " \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"policy server says no\"}}";
    char resp[512];
    snprintf(resp, sizeof resp,
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n%s",
             strlen(body), body);
    setenv("HOOK_TEST_TOKEN", "t0k3n", 1);
    server s;
    server_start(&s, resp);
    hook_registry *reg = http_hook(s.port, "PreToolUse");
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    server_join(&s);
    assert_int_equal(o.permission, PERM_DENY);
    assert_true(o.blocked);
    assert_string_equal(o.permission_reason, "policy server says no");
    assert_int_equal(o.results[0].type, HOOK_TYPE_HTTP);
    assert_int_equal(o.results[0].exit_code, 200);

    const char *req = str_cstr(&s.request);
    assert_non_null(strstr(req, "POST /hooks/pre HTTP/1.1"));
    assert_non_null(strcasestr(req, "content-type: application/json"));
    assert_non_null(strstr(req, "Authorization: Bearer t0k3n"));
    assert_non_null(strstr(req, "X-Secret: []")); /* $HOME is not in allowedEnvVars */
    const char *json = strstr(req, "\r\n\r\n");
    assert_non_null(json);
    loom_error err;
    json_t *sent = json_parse(json + 4, strlen(json + 4), "request body", &err);
    assert_non_null(sent);
    assert_string_equal(json_get_str(sent, "hook_event_name", ""), "PreToolUse");
    assert_string_equal(json_get_str(json_get_obj(sent, "tool_input"), "command", ""),
                        "rm -rf build");
    json_decref(sent);
    hook_outcome_free(&o);
    hook_registry_free(reg);
    server_free(&s);
    unsetenv("HOOK_TEST_TOKEN");
}

static void test_http_hook_500_is_error(void **state)
{
    server s;
    server_start(&s, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 13\r\n"
                     "Connection: close\r\n\r\ndatabase down");
    hook_registry *reg = http_hook(s.port, "PreToolUse");
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    server_join(&s);
    server_free(&s);
    assert_false(o.blocked);
    assert_int_equal(o.permission, PERM_NONE);
    assert_int_equal(o.results[0].status, HOOK_STATUS_ERROR);
    assert_int_equal(o.results[0].exit_code, 500);
    assert_true(has_notice(&o, HOOK_NOTICE_ERROR, "answered HTTP 500: database down"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* Nobody listening: an error too, never a block. */
    server dead;
    server_start(&dead, "");
    int port = dead.port;
    close(dead.lfd); /* the thread's poll fails fast; nothing accepts */
    pthread_join(dead.thread, NULL);
    str_free(&dead.request);
    reg = http_hook(port, "PreToolUse");
    o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_false(o.blocked);
    assert_int_equal(o.results[0].status, HOOK_STATUS_ERROR);
    assert_true(has_notice(&o, HOOK_NOTICE_ERROR, "failed"));
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

/* What a hook printed is kept for verbose display, unless it answered
 * suppressOutput: true; the rest of the answer applies either way. */
static void test_output_and_suppress_output(void **state)
{
    hook_registry *reg = one_hook(
        "PostToolUse", "echo '{\"suppressOutput\": true, \"hookSpecificOutput\": {\"hookEventName\":"
                       " \"PostToolUse\", \"additionalContext\": \"still applies\"}}'");
    hook_outcome o = fire(reg, HOOK_POST_TOOL_USE);
    assert_int_equal(o.n_results, 1);
    assert_null(o.results[0].output);
    assert_string_equal(o.additional_context, "still applies");
    hook_outcome_free(&o);
    hook_registry_free(reg);

    reg = one_hook("PostToolUse", "echo '{\"hookSpecificOutput\": {\"hookEventName\":"
                                  " \"PostToolUse\", \"additionalContext\": \"shown\"}}'");
    o = fire(reg, HOOK_POST_TOOL_USE);
    assert_non_null(o.results[0].output);
    assert_non_null(strstr(o.results[0].output, "additionalContext"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    reg = one_hook("PostToolUse", "echo 'plain words'");
    o = fire(reg, HOOK_POST_TOOL_USE);
    assert_string_equal(o.results[0].output, "plain words");
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* "suppressOutput": false, or a non-boolean, suppresses nothing. */
    reg = one_hook("PostToolUse", "echo '{\"suppressOutput\": \"yes\"}'");
    o = fire(reg, HOOK_POST_TOOL_USE);
    assert_non_null(o.results[0].output);
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

/* continue:false is reported alongside a block; the integrator gives it
 * precedence (the run ends rather than the model being told "denied"). */
static void test_continue_false_with_block(void **state)
{
    hook_registry *reg = one_hook(
        "PreToolUse", "echo '{\"continue\": false, \"stopReason\": \"halt\", \"decision\": \"block\","
                      " \"reason\": \"no\"}'");
    hook_outcome o = fire(reg, HOOK_PRE_TOOL_USE);
    assert_true(o.stop);
    assert_string_equal(o.stop_reason, "halt");
    assert_int_equal(o.permission, PERM_DENY);
    hook_outcome_free(&o);
    hook_registry_free(reg);
    /* Two hooks stop: both reasons, one per line. */
    const char *const bodies[] = {"echo '{\"continue\": false, \"stopReason\": \"one\"}'",
                                  "echo '{\"continue\": false, \"stopReason\": \"two\"}'"};
    reg = registry_of("Stop", NULL, bodies, 2);
    o = fire(reg, HOOK_STOP);
    assert_true(o.stop);
    assert_string_equal(o.stop_reason, "one\ntwo");
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permission_decisions),
        cmocka_unit_test(test_deny_beats_ask_beats_allow),
        cmocka_unit_test(test_decision_block_and_approve),
        cmocka_unit_test(test_permission_request_decision),
        cmocka_unit_test(test_exit2_blocks_with_stderr),
        cmocka_unit_test(test_exit1_is_nonblocking_error),
        cmocka_unit_test(test_timeout_is_error_and_kills),
        cmocka_unit_test(test_invalid_json_is_a_notice),
        cmocka_unit_test(test_updated_input),
        cmocka_unit_test(test_additional_context),
        cmocka_unit_test(test_continue_false_and_system_message),
        cmocka_unit_test(test_stdin_payload_and_env),
        cmocka_unit_test(test_http_hook_deny),
        cmocka_unit_test(test_http_hook_500_is_error),
        cmocka_unit_test(test_output_and_suppress_output),
        cmocka_unit_test(test_continue_false_with_block),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

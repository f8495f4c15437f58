/* test_tool_misc.c — the small built-in tools: TodoWrite (and todo_list),
 * AskUserQuestion, WebFetch against a loopback HTTP server running in a
 * thread of this test, and the HTML-to-text converter WebFetch uses.
 *
 * The tools are called the way the pipeline calls them: the input is first
 * checked against the tool's own schema (schema.c), then validate, then
 * run. Nothing here needs the registry, so this program links before every
 * other built-in tool exists. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/str.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/html_text.h"
#include "tools/schema.h"
#include "context/plan.h"
#include "tools/tool.h"

/* ---- calling a tool as the pipeline does ---- */

/* Schema check, then the tool's validate; 0 when the call may run, else
 * the message (in *why). */
static int precheck(const tool_def *def, const json_t *input, tool_ctx *ctx, loom_str *why)
{
    json_t *schema = schema_parse(def->input_schema, NULL);
    assert_non_null(schema);
    int rc = schema_validate(schema, input, why);
    json_decref(schema);
    if (rc == 0 && def->validate)
        rc = def->validate(input, ctx, why);
    return rc;
}

/* Runs def on input_text (which must pass precheck); result in *out. */
static void call(const tool_def *def, const char *input_text, tool_ctx *ctx, tool_result *out)
{
    json_error_t jerr;
    json_t *input = json_loads(input_text, 0, &jerr);
    if (!input)
        fail_msg("bad test input: %s", jerr.text);
    loom_str why = LOOM_STR_INIT;
    if (precheck(def, input, ctx, &why) != 0)
        fail_msg("input refused: %s", why.ptr);
    str_free(&why);
    tool_result_init(out);
    assert_int_equal(def->run(input, ctx, out), 0);
    json_decref(input);
}

/* The precheck message for input_text (NULL when it passes); caller frees. */
static char *refusal(const tool_def *def, const char *input_text, tool_ctx *ctx)
{
    json_t *input = json_loads(input_text, 0, NULL);
    assert_non_null(input);
    loom_str why = LOOM_STR_INIT;
    int rc = precheck(def, input, ctx, &why);
    json_decref(input);
    if (rc == 0) {
        str_free(&why);
        return NULL;
    }
    return str_steal(&why);
}

/* ---- TodoWrite ---- */

static void test_todo_list(void **state)
{
    (void)state;
    todo_list *l = todo_list_new();
    char *r = todo_list_render(l);
    assert_string_equal(r, "");
    free(r);

    json_t *todos = json_loads("[{\"content\":\"Write tests\",\"status\":\"completed\","
                               "\"activeForm\":\"Writing tests\"},"
                               "{\"content\":\"Fix bug\",\"status\":\"in_progress\","
                               "\"activeForm\":\"Fixing bug\"},"
                               "{\"content\":\"Ship\",\"status\":\"pending\"}]",
                               0, NULL);
    loom_str why = LOOM_STR_INIT;
    assert_int_equal(todo_list_set(l, todos, &why), 0);
    assert_int_equal(why.len, 0);
    r = todo_list_render(l);
    assert_string_equal(r, "\u2611 Write tests\n\u25D0 Fix bug\n\u2610 Ship\n");
    free(r);
    todo_counts c = todo_list_counts(l);
    assert_int_equal(c.pending, 1);
    assert_int_equal(c.in_progress, 1);
    assert_int_equal(c.completed, 1);

    /* activeForm defaults to content. */
    json_t *j = todo_list_json(l);
    assert_int_equal(json_array_size(j), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 2), "activeForm")),
                        "Ship");
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 1), "status")),
                        "in_progress");
    json_decref(j);
    json_decref(todos);

    /* Malformed lists are refused and leave the plan as it was. */
    static const struct {
        const char *json, *why;
    } bad[] = {
        {"{}", "\"todos\" must be an array"},
        {"[{\"status\":\"pending\"}]", "\"todos[0]\" has no content"},
        {"[{\"content\":\"\",\"status\":\"pending\"}]", "\"todos[0]\" has no content"},
        {"[{\"content\":\"a\",\"status\":\"pending\"},{\"content\":\"b\",\"status\":\"done\"}]",
         "\"todos[1]\" has a status that is not one of"},
        {"[{\"content\":\"a\",\"status\":\"pending\",\"activeForm\":3}]",
         "\"todos[0]\" has an activeForm that is not a string"},
        {"[7]", "\"todos[0]\" must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *t = json_loads(bad[i].json, 0, NULL);
        str_clear(&why);
        assert_int_equal(todo_list_set(l, t, &why), -1);
        if (!strstr(str_cstr(&why), bad[i].why))
            fail_msg("%s: got \"%s\"", bad[i].json, str_cstr(&why));
        json_decref(t);
    }
    json_t *many = json_array();
    for (int i = 0; i < TODO_MAX_ITEMS + 1; i++)
        json_array_append_new(many, json_pack("{s:s,s:s}", "content", "x", "status", "pending"));
    str_clear(&why);
    assert_int_equal(todo_list_set(l, many, &why), -1);
    assert_non_null(strstr(why.ptr, "at most 100"));
    json_decref(many);
    c = todo_list_counts(l);
    assert_int_equal(c.pending + c.in_progress + c.completed, 3);

    /* Two in progress: accepted, with a note. */
    json_t *two = json_loads("[{\"content\":\"a\",\"status\":\"in_progress\"},"
                             "{\"content\":\"b\",\"status\":\"in_progress\"}]",
                             0, NULL);
    str_clear(&why);
    assert_int_equal(todo_list_set(l, two, &why), 0);
    assert_non_null(strstr(why.ptr, "2 items are in_progress"));
    assert_int_equal(todo_list_counts(l).in_progress, 2);
    json_decref(two);

    /* All completed: the plan is done and cleared. */
    json_t *done = json_loads("[{\"content\":\"a\",\"status\":\"completed\"}]", 0, NULL);
    str_clear(&why);
    assert_int_equal(todo_list_set(l, done, &why), 0);
    r = todo_list_render(l);
    assert_string_equal(r, "");
    free(r);
    json_decref(done);
    str_free(&why);
    todo_list_free(l);
}

typedef struct todo_race {
    todo_list *l;
    atomic_int stop;
} todo_race;

static void *todo_reader(void *arg)
{
    todo_race *r = arg;
    while (!atomic_load(&r->stop)) {
        char *s = todo_list_render(r->l);
        /* Every list written has 2 items: a reader sees all or none. */
        size_t lines = 0;
        for (char *p = s; *p; p++)
            lines += *p == '\n';
        if (lines != 0 && lines != 2)
            abort();
        free(s);
        json_decref(todo_list_json(r->l));
    }
    return NULL;
}

static void test_todo_list_threads(void **state)
{
    (void)state;
    todo_race r = {.l = todo_list_new()};
    pthread_t t;
    pthread_create(&t, NULL, todo_reader, &r);
    for (int i = 0; i < 2000; i++) {
        json_t *todos = json_pack("[{s:s,s:s},{s:s,s:s}]", "content", i % 2 ? "a" : "bb",
                                  "status", "pending", "content", "c", "status", "in_progress");
        assert_int_equal(todo_list_set(r.l, todos, NULL), 0);
        json_decref(todos);
    }
    atomic_store(&r.stop, 1);
    pthread_join(t, NULL);
    todo_list_free(r.l);
}

static void test_todo_write_tool(void **state)
{
    (void)state;
    assert_string_equal(tool_todo_write.name, "TodoWrite");
    assert_false(tool_todo_write.read_only);
    assert_false(tool_todo_write.concurrency_safe);

    todo_list *l = todo_list_new();
    tool_ctx ctx = {.cwd = "/", .todos = l};
    tool_result res;
    call(&tool_todo_write,
         "{\"todos\":[{\"content\":\"Read code\",\"status\":\"in_progress\","
         "\"activeForm\":\"Reading code\"},"
         "{\"content\":\"Patch\",\"status\":\"pending\",\"activeForm\":\"Patching\"}]}",
         &ctx, &res);
    assert_false(res.is_error);
    assert_string_equal(res.text.ptr,
                        "Todos have been modified successfully. Ensure that you continue to use "
                        "the todo list to track your progress.\n\n"
                        "\u25D0 Read code\n\u2610 Patch");
    assert_int_equal(json_array_size(json_object_get(res.raw, "oldTodos")), 0);
    assert_int_equal(json_array_size(json_object_get(res.raw, "newTodos")), 2);
    tool_result_free(&res);

    /* The second call sees the first as oldTodos; finishing everything
     * still shows the final list although the plan is cleared. */
    call(&tool_todo_write,
         "{\"todos\":[{\"content\":\"Read code\",\"status\":\"completed\","
         "\"activeForm\":\"Reading code\"},"
         "{\"content\":\"Patch\",\"status\":\"completed\",\"activeForm\":\"Patching\"}]}",
         &ctx, &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "\u2611 Read code\n\u2611 Patch"));
    assert_int_equal(json_array_size(json_object_get(res.raw, "oldTodos")), 2);
    char *now = todo_list_render(l);
    assert_string_equal(now, "");
    free(now);
    tool_result_free(&res);

    /* Two in progress: done, with the note passed on. */
    call(&tool_todo_write,
         "{\"todos\":[{\"content\":\"a\",\"status\":\"in_progress\",\"activeForm\":\"A\"},"
         "{\"content\":\"b\",\"status\":\"in_progress\",\"activeForm\":\"B\"}]}",
         &ctx, &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "Note: 2 items are in_progress"));
    tool_result_free(&res);

    /* The schema catches what the model gets wrong, by path. */
    char *w = refusal(&tool_todo_write,
                      "{\"todos\":[{\"content\":\"a\",\"status\":\"doing\",\"activeForm\":\"A\"}]}",
                      &ctx);
    assert_string_equal(w, "\"todos[0].status\" must be one of: \"pending\", \"in_progress\", "
                           "\"completed\" (got string \"doing\")");
    free(w);
    w = refusal(&tool_todo_write, "{\"todo\":[]}", &ctx);
    assert_string_equal(w, "The required parameter \"todos\" is missing\n"
                           "unexpected parameter \"todo\" (allowed: todos)");
    free(w);

    /* No plan in this session: an error result, not a crash. */
    tool_ctx bare = {.cwd = "/"};
    call(&tool_todo_write, "{\"todos\":[]}", &bare, &res);
    assert_true(res.is_error);
    tool_result_free(&res);
    todo_list_free(l);
}

/* ---- AskUserQuestion ---- */

static const char two_questions[] =
    "{\"questions\":["
    "{\"question\":\"Which database?\",\"header\":\"DB\",\"multiSelect\":false,"
    "\"options\":[{\"label\":\"SQLite\",\"description\":\"embedded\"},"
    "{\"label\":\"Postgres\",\"description\":\"server\"}]},"
    "{\"question\":\"Which features?\",\"header\":\"Features\",\"multiSelect\":true,"
    "\"options\":[{\"label\":\"Auth\",\"description\":\"login\"},"
    "{\"label\":\"Search\",\"description\":\"full text\"}]}]}";

typedef struct stub {
    const char *reply; /* NULL: the user dismissed the dialog */
    int calls;
    size_t questions;
} stub;

static char *stub_ask(void *arg, const json_t *questions)
{
    stub *s = arg;
    s->calls++;
    s->questions = json_array_size(questions);
    return s->reply ? strdup(s->reply) : NULL;
}

static void test_ask_user(void **state)
{
    (void)state;
    assert_string_equal(tool_ask_user.name, "AskUserQuestion");
    assert_true(tool_ask_user.read_only);
    assert_false(tool_ask_user.concurrency_safe);

    /* Headless. */
    tool_ctx ctx = {.cwd = "/"};
    tool_result res;
    call(&tool_ask_user, two_questions, &ctx, &res);
    assert_true(res.is_error);
    assert_string_equal(res.text.ptr,
                        "No user is available to answer questions in this mode (headless). "
                        "Proceed with your best judgement and state your assumptions.");
    assert_true(json_is_true(json_object_get(res.raw, "noUserAvailable")));
    tool_result_free(&res);

    /* A user answering with the JSON object the surfaces produce. */
    stub s = {.reply = "{\"Which features?\":[\"Auth\",\"Search\"],\"Which database?\":\"SQLite\"}"};
    ctx.ask_user = stub_ask;
    ctx.ask_ctx = &s;
    call(&tool_ask_user, two_questions, &ctx, &res);
    assert_false(res.is_error);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.questions, 2);
    assert_string_equal(res.text.ptr, "User has answered your questions:\n"
                                      "\"Which database?\" = \"SQLite\"\n"
                                      "\"Which features?\" = \"Auth, Search\"\n"
                                      "You can now continue with the user's answers in mind.");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(res.raw, "answers"), "Which database?")),
        "SQLite");
    tool_result_free(&res);

    /* Free text instead of JSON. */
    s.reply = "use whatever is simplest";
    call(&tool_ask_user, two_questions, &ctx, &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "The user replied: use whatever is simplest"));
    tool_result_free(&res);

    /* Dismissed. */
    s.reply = NULL;
    call(&tool_ask_user, two_questions, &ctx, &res);
    assert_true(res.is_error);
    assert_true(json_is_true(json_object_get(res.raw, "declined")));
    tool_result_free(&res);

    /* Shape rules: 1-4 questions, 2-4 options, distinct texts. */
    char *w = refusal(&tool_ask_user, "{\"questions\":[]}", &ctx);
    assert_string_equal(w, "\"questions\" must have at least 1 item, got 0");
    free(w);
    w = refusal(&tool_ask_user,
                "{\"questions\":[{\"question\":\"Q?\",\"header\":\"H\","
                "\"options\":[{\"label\":\"only\",\"description\":\"d\"}]}]}",
                &ctx);
    assert_string_equal(w, "\"questions[0].options\" must have at least 2 items, got 1");
    free(w);
    w = refusal(&tool_ask_user,
                "{\"questions\":[{\"question\":\"Q?\",\"header\":\"H\",\"options\":["
                "{\"label\":\"a\",\"description\":\"d\"},{\"label\":\"a\",\"description\":\"e\"}]}]}",
                &ctx);
    assert_non_null(w);
    assert_non_null(strstr(w, "\"questions[0].options[1].label\" repeats options[0]"));
    free(w);
    w = refusal(&tool_ask_user,
                "{\"questions\":[{\"question\":\"Q?\",\"header\":\"H\",\"options\":["
                "{\"label\":\"a\",\"description\":\"d\"},{\"label\":\"b\",\"description\":\"e\"}]},"
                "{\"question\":\"Q?\",\"header\":\"H2\",\"options\":["
                "{\"label\":\"a\",\"description\":\"d\"},{\"label\":\"b\",\"description\":\"e\"}]}]}",
                &ctx);
    assert_non_null(w);
    assert_non_null(strstr(w, "\"questions[1].question\" repeats questions[0]"));
    free(w);
}

/* ---- html_text ---- */

static void expect_text(const char *html, const char *want)
{
    size_t n = 0;
    char *t = html_to_text(html, strlen(html), &n);
    assert_int_equal(n, strlen(t));
    if (strcmp(t, want) != 0)
        fail_msg("html: %s\nwant: [%s]\n got: [%s]", html, want, t);
    free(t);
}

static void test_html_text(void **state)
{
    (void)state;
    expect_text("", "");
    expect_text("plain   text\n\n here", "plain text here");
    expect_text("<p>One</p><p>Two</p>", "One\n\nTwo");
    expect_text("<div>a</div><div>b</div>", "a\nb");
    expect_text("a<br>b<br><br>c", "a\nb\n\nc");
    expect_text("<h1>Title</h1><h2>Sub  title</h2><p>x</p>", "# Title\n\n## Sub title\n\nx");
    expect_text("<ul><li>one</li><li>two<ul><li>deep</li></ul></li></ul>",
                "- one\n- two\n  - deep");
    expect_text("<ol><li>a<li>b</ol>", "1. a\n2. b");
    expect_text("<script>var s = '</p><b>no</b>';</script><style>p{}</style>kept",
                "kept");
    expect_text("<SCRIPT type=x>alert(1)</SCRIPT >after", "after");
    expect_text("<html><head><title>T</title><meta charset=utf-8></head><body>B</body></html>",
                "B");
    /* A head that never closes ends where the content starts. */
    expect_text("<head><title>T</title><p>Body</p>", "Body");
    expect_text("<noscript><p>enable js</p></noscript><svg><text>1</text><svg></svg></svg>ok",
                "ok");
    expect_text("a<!-- <p>hidden</p> -->b<!DOCTYPE html><?xml x?>c", "abc");
    expect_text("<a href=\"https://x.org/a?b=1&amp;c=2\">the link</a>",
                "the link (https://x.org/a?b=1&c=2)");
    expect_text("<a href='https://x.org'>https://x.org</a>", "https://x.org");
    expect_text("<a href=\"#top\">Top</a> <a href=\"javascript:void(0)\">JS</a>", "Top JS");
    expect_text("<a href=/rel>rel</a>", "rel (/rel)");
    expect_text("<a href=\"https://x.org\"></a>nothing", "nothing");
    expect_text("<img src=a.png alt=\"A cat\"><img src=b.png>", "[image: A cat]");
    expect_text("&amp; &lt;tag&gt; &quot;q&quot; &#39;s&#39; a&nbsp;b", "& <tag> \"q\" 's' a b");
    expect_text("&#233;&#xE9;&#x1F600;&#128;&#0;&euro;&mdash;", "\u00e9\u00e9\U0001F600\u20ac\uFFFD\u20ac\u2014");
    expect_text("&unknown; & &amp &#xZZ;", "&unknown; & &amp &#xZZ;");
    expect_text("<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>",
                "A | B\n1 | 2");
    expect_text("x<pre>  keep\n    this</pre>after", "x\n\n  keep\n    this\n\nafter");
    expect_text("a < b and c>d", "a < b and c>d");
    expect_text("<p>unterminated <b", "unterminated");
    expect_text("<p title=\"x > y\">attr</p>", "attr");
    expect_text("<hr>", "---");
    /* Invalid UTF-8 and NUL become U+FFFD; the result is valid UTF-8. */
    expect_text("a\xff" "b\xc3(c", "a\uFFFD" "b\uFFFD(c");
    size_t n;
    char *t = html_to_text("x\0y", 3, &n);
    assert_string_equal(t, "x\uFFFDy");
    free(t);
    t = html_to_text(NULL, 0, &n);
    assert_string_equal(t, "");
    free(t);

    /* Hostile nesting costs nothing but fidelity. */
    loom_str deep = LOOM_STR_INIT;
    for (int i = 0; i < 5000; i++)
        str_puts(&deep, "<ul><li>x");
    t = html_to_text(deep.ptr, deep.len, &n);
    assert_true(n > 0);
    free(t);
    str_free(&deep);

    /* Latin-1 / Windows-1252 transcoding. */
    t = text_to_utf8("caf\xe9 \x80 \x81\r\nx", 11, 1, &n);
    assert_string_equal(t, "caf\u00e9 \u20ac \uFFFD\nx");
    free(t);
    t = text_to_utf8("ok \xed\xa0\x80 \xe2\x82\xac \xf4\x90\x80\x80", 15, 0, &n);
    assert_string_equal(t, "ok \uFFFD\uFFFD\uFFFD \u20ac \uFFFD\uFFFD\uFFFD\uFFFD");
    free(t);
}

/* ---- WebFetch against a loopback server ---- */

#define SERVER_PATIENCE_MS 5000
#define BIG_BODY (6u * 1024 * 1024)

typedef struct web_server {
    int lfd;
    int port;
    pthread_t thread;
    atomic_int stop;
    atomic_int requests;
    char last_path[256];
} web_server;

static const char page_html[] =
    "<!DOCTYPE html><html><head><title>Test page</title>"
    "<style>body { color: red; }</style>"
    "<script>document.write('<p>injected</p>');</script></head>"
    "<body><h1>Hello &amp; welcome</h1>"
    "<p>Fish &lt;3 chips &#8212; &quot;tasty&quot;.</p>"
    "<ul><li>First</li><li>Second</li></ul>"
    "<p>See <a href=\"https://example.com/docs?a=1&amp;b=2\">the docs</a>.</p>"
    "</body></html>";

static void send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        p += n;
        len -= (size_t)n;
    }
}

static void respond(int fd, const char *status, const char *headers, const void *body,
                    size_t len)
{
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\n%sContent-Length: %zu\r\nConnection: close\r\n\r\n", status,
                     headers, len);
    send_all(fd, head, (size_t)n);
    send_all(fd, body, len);
}

static void serve_one(web_server *s, int fd)
{
    char req[8192];
    size_t have = 0;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, SERVER_PATIENCE_MS) != 1)
            return;
        ssize_t n = recv(fd, req + have, sizeof req - 1 - have, 0);
        if (n <= 0)
            return;
        have += (size_t)n;
        req[have] = '\0';
        if (strstr(req, "\r\n\r\n") || have == sizeof req - 1)
            break;
    }
    char path[256] = "";
    sscanf(req, "GET %255s", path);
    snprintf(s->last_path, sizeof s->last_path, "%s", path);
    atomic_fetch_add(&s->requests, 1);

    char loc[512];
    if (strcmp(path, "/page") == 0) {
        respond(fd, "200 OK", "Content-Type: text/html; charset=utf-8\r\n", page_html,
                strlen(page_html));
    } else if (strcmp(path, "/redirect") == 0) {
        respond(fd, "302 Found", "Location: /page\r\n", "", 0);
    } else if (strcmp(path, "/redirect-abs") == 0) {
        snprintf(loc, sizeof loc, "Location: http://127.0.0.1:%d/page\r\n", s->port);
        respond(fd, "301 Moved Permanently", loc, "", 0);
    } else if (strcmp(path, "/loop") == 0) {
        respond(fd, "302 Found", "Location: /loop\r\n", "", 0);
    } else if (strcmp(path, "/away") == 0) {
        respond(fd, "302 Found", "Location: https://elsewhere.example/landing\r\n", "", 0);
    } else if (strcmp(path, "/missing") == 0) {
        const char *b = "<html><body><h1>Not here</h1><p>Try /page</p></body></html>";
        respond(fd, "404 Not Found", "Content-Type: text/html\r\n", b, strlen(b));
    } else if (strcmp(path, "/image") == 0) {
        static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0};
        respond(fd, "200 OK", "Content-Type: image/png\r\n", png, sizeof png);
    } else if (strcmp(path, "/big") == 0) {
        char *big = malloc(BIG_BODY);
        memset(big, 'a', BIG_BODY);
        for (size_t i = 99; i < BIG_BODY; i += 100)
            big[i] = '\n';
        respond(fd, "200 OK", "Content-Type: text/plain\r\n", big, BIG_BODY);
        free(big);
    } else if (strcmp(path, "/json") == 0) {
        const char *b = "{\"name\":\"loom\",\"tags\":[\"a\",\"b\"]}";
        respond(fd, "200 OK", "Content-Type: application/json\r\n", b, strlen(b));
    } else if (strcmp(path, "/latin1") == 0) {
        respond(fd, "200 OK", "Content-Type: text/plain; charset=ISO-8859-1\r\n", "caf\xe9", 4);
    } else if (strcmp(path, "/untyped") == 0) {
        const char *b = "<!doctype html><p>sniffed</p>";
        respond(fd, "200 OK", "", b, strlen(b));
    } else if (strcmp(path, "/empty") == 0) {
        respond(fd, "200 OK", "Content-Type: text/html\r\n", "", 0);
    } else {
        respond(fd, "500 Internal Server Error", "Content-Type: text/plain\r\n", "boom", 4);
    }
}

static void *web_serve(void *arg)
{
    web_server *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd pfd = {.fd = s->lfd, .events = POLLIN};
        if (poll(&pfd, 1, 50) != 1)
            continue;
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        serve_one(s, fd);
        shutdown(fd, SHUT_WR);
        close(fd);
    }
    return NULL;
}

static int web_setup(void **state)
{
    web_server *s = calloc(1, sizeof *s);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->lfd, 16) != 0)
        return -1;
    socklen_t alen = sizeof a;
    getsockname(s->lfd, (struct sockaddr *)&a, &alen);
    s->port = ntohs(a.sin_port);
    pthread_create(&s->thread, NULL, web_serve, s);
    *state = s;
    return 0;
}

static int web_teardown(void **state)
{
    web_server *s = *state;
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->lfd);
    free(s);
    return 0;
}

/* Fetches path from the test server with prompt "What is it?". */
static void fetch(web_server *s, const char *path, tool_result *res)
{
    char input[512];
    snprintf(input, sizeof input,
             "{\"url\":\"http://127.0.0.1:%d%s\",\"prompt\":\"What is it?\"}", s->port, path);
    tool_ctx ctx = {.cwd = "/"};
    call(&tool_web_fetch, input, &ctx, res);
}

static void test_web_fetch_html(void **state)
{
    web_server *s = *state;
    assert_true(tool_web_fetch.read_only);
    assert_true(tool_web_fetch.concurrency_safe);
    tool_result res;
    fetch(s, "/page", &res);
    assert_false(res.is_error);
    char want[1024];
    const char *text = "# Hello & welcome\n\n"
                       "Fish <3 chips \u2014 \"tasty\".\n\n"
                       "- First\n- Second\n\n"
                       "See the docs (https://example.com/docs?a=1&b=2).";
    snprintf(want, sizeof want, "Question: What is it?\nContent of http://127.0.0.1:%d/page (%zu chars):\n%s",
             s->port, (size_t)111, text);
    assert_string_equal(res.text.ptr, want);
    assert_null(strstr(res.text.ptr, "injected"));
    assert_null(strstr(res.text.ptr, "color"));
    assert_null(strstr(res.text.ptr, "Test page"));
    assert_int_equal(json_integer_value(json_object_get(res.raw, "code")), 200);
    assert_string_equal(json_string_value(json_object_get(res.raw, "contentType")), "text/html");
    assert_false(json_is_true(json_object_get(res.raw, "truncated")));
    tool_result_free(&res);

    /* "localhost" is loopback too: plain http, not upgraded. */
    char input[256];
    snprintf(input, sizeof input, "{\"url\":\"http://localhost:%d/json\",\"prompt\":\"p\"}",
             s->port);
    tool_ctx ctx = {.cwd = "/"};
    call(&tool_web_fetch, input, &ctx, &res);
    if (res.is_error)
        fail_msg("%s", res.text.ptr);
    assert_non_null(strstr(res.text.ptr, "Content of http://localhost:"));
    tool_result_free(&res);
}

static void test_web_fetch_text_types(void **state)
{
    web_server *s = *state;
    tool_result res;
    fetch(s, "/json", &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "(32 chars):\n{\"name\":\"loom\",\"tags\":[\"a\",\"b\"]}"));
    tool_result_free(&res);

    fetch(s, "/latin1", &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "(4 chars):\ncaf\u00e9"));
    tool_result_free(&res);

    fetch(s, "/untyped", &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, ":\nsniffed"));
    tool_result_free(&res);

    fetch(s, "/empty", &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "(0 chars):\n(the page has no text content)"));
    tool_result_free(&res);
}

static void test_web_fetch_errors(void **state)
{
    web_server *s = *state;
    tool_result res;
    fetch(s, "/missing", &res);
    assert_true(res.is_error);
    char want[256];
    snprintf(want, sizeof want, "Fetching http://127.0.0.1:%d/missing failed: HTTP 404 Not Found",
             s->port);
    assert_memory_equal(res.text.ptr, want, strlen(want));
    assert_non_null(strstr(res.text.ptr, "The server said:\n# Not here\n\nTry /page"));
    assert_int_equal(json_integer_value(json_object_get(res.raw, "code")), 404);
    tool_result_free(&res);

    fetch(s, "/image", &res);
    assert_true(res.is_error);
    assert_non_null(strstr(res.text.ptr, "is binary content (image/png)"));
    tool_result_free(&res);

    fetch(s, "/nope", &res);
    assert_true(res.is_error);
    assert_non_null(strstr(res.text.ptr, "HTTP 500 Internal Server Error"));
    assert_non_null(strstr(res.text.ptr, "boom"));
    tool_result_free(&res);

    /* Nothing listening: the transport's error, as a result. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(fd, (struct sockaddr *)&a, sizeof a);
    socklen_t alen = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &alen);
    close(fd); /* the port is now (almost certainly) closed */
    char input[256];
    snprintf(input, sizeof input, "{\"url\":\"http://127.0.0.1:%d/\",\"prompt\":\"p\"}",
             ntohs(a.sin_port));
    tool_ctx ctx = {.cwd = "/"};
    call(&tool_web_fetch, input, &ctx, &res);
    assert_true(res.is_error);
    assert_non_null(strstr(res.text.ptr, "failed:"));
    tool_result_free(&res);
}

static void test_web_fetch_big(void **state)
{
    web_server *s = *state;
    tool_result res;
    fetch(s, "/big", &res);
    assert_false(res.is_error);
    /* 5 MiB read of 6, 100k characters shown. */
    assert_int_equal(json_integer_value(json_object_get(res.raw, "bytes")), 5 * 1024 * 1024);
    assert_int_equal(json_integer_value(json_object_get(res.raw, "chars")), 5 * 1024 * 1024);
    assert_true(json_is_true(json_object_get(res.raw, "truncated")));
    assert_non_null(strstr(res.text.ptr,
                           "[Content truncated: showing the first 100000 of 5242880 characters.]"));
    assert_non_null(strstr(res.text.ptr, "[The page is larger than 5 MiB; only its first 5 MiB "
                                         "were read.]"));
    assert_true(res.text.len < 101000);
    tool_result_free(&res);
}

static void test_web_fetch_redirects(void **state)
{
    web_server *s = *state;
    tool_result res;
    fetch(s, "/redirect", &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "# Hello & welcome"));
    assert_non_null(strstr(res.text.ptr, "redirected from"));
    tool_result_free(&res);

    fetch(s, "/redirect-abs", &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "# Hello & welcome"));
    tool_result_free(&res);

    fetch(s, "/loop", &res);
    assert_true(res.is_error);
    assert_non_null(strstr(res.text.ptr, "redirected more than 5 times"));
    tool_result_free(&res);

    /* Another host: reported, not followed. */
    int before = atomic_load(&s->requests);
    fetch(s, "/away", &res);
    assert_false(res.is_error);
    assert_non_null(strstr(res.text.ptr, "REDIRECT DETECTED"));
    assert_non_null(strstr(res.text.ptr, "Redirect URL: https://elsewhere.example/landing"));
    assert_int_equal(atomic_load(&s->requests), before + 1);
    tool_result_free(&res);
}

static void test_web_fetch_refusals(void **state)
{
    (void)state;
    tool_ctx ctx = {.cwd = "/"};
    static const struct {
        const char *url, *why;
    } bad[] = {
        {"ftp://example.com/x", "only http:// and https:// URLs can be fetched"},
        {"file:///etc/passwd", "only http:// and https:// URLs can be fetched"},
        {"https://user:pw@example.com/", "user name or password"},
        {"https://@example.com/", "user name or password"},
        {"example.com/page", "not an absolute URL"},
        {"https:///path", "names no host"},
        {"https://exa mple.com/", "spaces or control characters"},
        {"https://example.com:99999/", "port is not a number"},
        {"https://example.com:/", "port is empty"},
        {"https://ex<ample.com/", "host name contains"},
        {"https://[::1/", "no closing ']'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char input[256];
        snprintf(input, sizeof input, "{\"url\":\"%s\",\"prompt\":\"p\"}", bad[i].url);
        char *w = refusal(&tool_web_fetch, input, &ctx);
        if (!w || !strstr(w, bad[i].why))
            fail_msg("%s: got \"%s\"", bad[i].url, w ? w : "(accepted)");
        free(w);
    }
    loom_str long_url = LOOM_STR_INIT;
    str_puts(&long_url, "{\"url\":\"https://example.com/");
    for (int i = 0; i < 2000; i++)
        str_putc(&long_url, 'a');
    str_puts(&long_url, "\",\"prompt\":\"p\"}");
    char *w = refusal(&tool_web_fetch, long_url.ptr, &ctx);
    assert_non_null(w);
    assert_non_null(strstr(w, "longer than 2000 characters"));
    free(w);
    str_free(&long_url);

    w = refusal(&tool_web_fetch, "{\"url\":\"https://example.com/\"}", &ctx);
    assert_string_equal(w, "The required parameter \"prompt\" is missing");
    free(w);
}

static void test_web_fetch_upgrade(void **state)
{
    (void)state;
    /* http:// to a host that is not loopback goes out as https://. A
     * .invalid name never resolves, so no traffic leaves the machine; the
     * error names the URL that was tried. */
    tool_ctx ctx = {.cwd = "/"};
    tool_result res;
    call(&tool_web_fetch, "{\"url\":\"http://loom-test.invalid/x\",\"prompt\":\"p\"}", &ctx, &res);
    assert_true(res.is_error);
    if (!strstr(res.text.ptr, "https://loom-test.invalid/x"))
        fail_msg("not upgraded: %s", res.text.ptr);
    tool_result_free(&res);
}

int main(void)
{
    /* Every fetch must go straight to the loopback server (or fail at DNS,
     * for the upgrade test), never through a proxy from the environment. */
    static const char *const proxy_vars[] = {"http_proxy", "HTTP_PROXY", "https_proxy",
                                             "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                                             "no_proxy",   "NO_PROXY"};
    for (size_t i = 0; i < sizeof proxy_vars / sizeof *proxy_vars; i++)
        unsetenv(proxy_vars[i]);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_todo_list),
        cmocka_unit_test(test_todo_list_threads),
        cmocka_unit_test(test_todo_write_tool),
        cmocka_unit_test(test_ask_user),
        cmocka_unit_test(test_html_text),
        cmocka_unit_test(test_web_fetch_refusals),
        cmocka_unit_test(test_web_fetch_upgrade),
    };
    const struct CMUnitTest web_tests[] = {
        cmocka_unit_test(test_web_fetch_html),
        cmocka_unit_test(test_web_fetch_text_types),
        cmocka_unit_test(test_web_fetch_errors),
        cmocka_unit_test(test_web_fetch_big),
        cmocka_unit_test(test_web_fetch_redirects),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("web_fetch", web_tests, web_setup, web_teardown);
    return failed;
}

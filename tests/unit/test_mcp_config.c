/* test_mcp_config.c — the MCP servers' configuration (ext/mcp/config.h):
 * ${VAR} expansion, the sources and which wins, --strict-mcp-config, each
 * entry's types and defaults, bad entries kept with their error, approval
 * of project servers (from the user and local settings; the project's own
 * only when trusted), the timeouts' environment overrides, and the
 * add / replace / remove / approve round trip that keeps a file's other
 * keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "ext/mcp/config.h"
#include "api/internal.h"

static char dir[256];
static char user_path[300];

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad test JSON: %s", je.text);
    return v;
}

static void write_file(const char *rel, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    loom_error err;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    assert_int_equal(file_mkdirs(path, 0700, &err), 0);
    *slash = '/';
    assert_int_equal(file_write_atomic(path, text, strlen(text), 0644, &err), 0);
}

static json_t *read_json(const char *rel)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *text = NULL;
    size_t len;
    loom_error err;
    if (file_read_all(path, &text, &len, &err) != 0)
        return NULL;
    json_t *v = parse(text);
    free(text);
    return v;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/loom-mcp-config.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(user_path, sizeof user_path, "%s/home/settings.json", dir);
    unsetenv("MCP_TIMEOUT");
    unsetenv("MCP_TOOL_TIMEOUT");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static mcp_config_inputs inputs(void)
{
    mcp_config_inputs in;
    memset(&in, 0, sizeof in);
    in.project_dir = dir;
    in.user_settings_path = user_path;
    return in;
}

static void load(const mcp_config_inputs *in, mcp_config_set *s)
{
    loom_error err;
    if (mcp_config_load(in, s, &err) != 0)
        fail_msg("load: %s", err.message);
}

static bool warned(const mcp_config_set *s, const char *part)
{
    size_t i;
    json_t *w;
    json_array_foreach(s->warnings, i, w) if (strstr(json_string_value(w), part)) return true;
    return false;
}

/* ---- expansion ---------------------------------------------------------------- */

static void test_expand(void **state)
{
    (void)state;
    setenv("MCPT_A", "alpha", 1);
    setenv("MCPT_EMPTY", "", 1);
    unsetenv("MCPT_UNSET");
    char *missing = (char *)1;
    char *s = mcp_expand_env("x${MCPT_A}y ${MCPT_UNSET:-dflt} ${MCPT_EMPTY:-e} [${MCPT_EMPTY}]",
                             &missing);
    assert_string_equal(s, "xalphay dflt e []");
    assert_null(missing);
    free(s);
    /* Not references: stay as written. */
    s = mcp_expand_env("$MCPT_A ${1x} ${ MCPT_A} ${MCPT_A-x} ${MCPT_A $", &missing);
    assert_string_equal(s, "$MCPT_A ${1x} ${ MCPT_A} ${MCPT_A-x} ${MCPT_A $");
    free(s);
    s = mcp_expand_env("", &missing);
    assert_string_equal(s, "");
    free(s);
    /* A default may be empty, and may hold what a name may not. */
    s = mcp_expand_env("${MCPT_UNSET:-}|${MCPT_UNSET:-a b/c:d}", &missing);
    assert_string_equal(s, "|a b/c:d");
    free(s);
    assert_null(mcp_expand_env("a ${MCPT_A} ${MCPT_UNSET} ${MCPT_OTHER_UNSET}", &missing));
    assert_string_equal(missing, "MCPT_UNSET");
    free(missing);
    assert_null(mcp_expand_env("${MCPT_UNSET}", NULL));
}

/* ---- sources and precedence ----------------------------------------------------- */

static void test_precedence(void **state)
{
    (void)state;
    write_file("home/settings.json",
               "{\"model\": \"m\", \"mcpServers\": {\"a\": {\"command\": \"user-a\"},"
               " \"u\": {\"command\": \"user-u\"}}}");
    write_file(".mcp.json", "{\"mcpServers\": {\"a\": {\"command\": \"project-a\"},"
                            " \"b\": {\"command\": \"project-b\"}, \"p\": {\"command\": \"pp\"}}}");
    write_file(".loom/settings.local.json",
               "{\"mcpServers\": {\"b\": {\"command\": \"local-b\"}, \"c\": {\"command\": "
               "\"local-c\"}}}");
    mcp_config_inputs in = inputs();
    in.trusted = true;
    const char *cli[] = {"{\"mcpServers\": {\"c\": {\"command\": \"cli-c\"}}}"};
    in.cli_configs = cli;
    in.n_cli = 1;
    mcp_config_set s;
    load(&in, &s);
    assert_int_equal(s.n, 5);
    /* Configuration order: first seen; a later source replaces in place. */
    const char *names[] = {"a", "u", "b", "p", "c"};
    const char *cmds[] = {"project-a", "user-u", "local-b", "pp", "cli-c"};
    mcp_scope scopes[] = {MCP_SCOPE_PROJECT, MCP_SCOPE_USER, MCP_SCOPE_LOCAL, MCP_SCOPE_PROJECT,
                          MCP_SCOPE_CLI};
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(s.servers[i].name, names[i]);
        assert_string_equal(s.servers[i].command, cmds[i]);
        assert_int_equal(s.servers[i].scope, scopes[i]);
        assert_null(s.servers[i].error);
    }
    assert_string_equal(s.servers[4].source, "--mcp-config");
    assert_non_null(strstr(s.servers[0].source, ".mcp.json"));
    assert_non_null(strstr(s.servers[2].source, ".loom/settings.local.json"));
    assert_string_equal(s.servers[1].source, user_path);
    assert_ptr_equal(mcp_config_find(&s, "b"), &s.servers[2]);
    assert_null(mcp_config_find(&s, "zz"));
    mcp_config_set_free(&s);

    /* Strict: the --mcp-config servers only; a second one wins over the first. */
    const char *two[] = {"{\"mcpServers\": {\"c\": {\"command\": \"one\"}, \"d\": {\"url\": "
                         "\"http://x/\"}}}",
                         "{\"mcpServers\": {\"c\": {\"command\": \"two\"}}}"};
    in.cli_configs = two;
    in.n_cli = 2;
    in.strict = true;
    load(&in, &s);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.servers[0].command, "two");
    assert_string_equal(s.servers[1].url, "http://x/");
    mcp_config_set_free(&s);

    /* A --mcp-config file is named as the source. */
    write_file("extra.json", "{\"mcpServers\": {\"f\": {\"command\": \"file-f\"}}}");
    char path[600];
    snprintf(path, sizeof path, "%s/extra.json", dir);
    const char *file[] = {path};
    in.cli_configs = file;
    in.n_cli = 1;
    load(&in, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.servers[0].source, path);
    mcp_config_set_free(&s);
}

static void test_user_path_default(void **state)
{
    (void)state;
    char home[400];
    snprintf(home, sizeof home, "%s/lh", dir);
    setenv("LOOM_HOME", home, 1);
    write_file("lh/settings.json", "{\"mcpServers\": {\"h\": {\"command\": \"x\"}}}");
    mcp_config_inputs in = inputs();
    in.user_settings_path = NULL;
    in.project_dir = NULL; /* no project: user and cli only */
    mcp_config_set s;
    load(&in, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.servers[0].scope, MCP_SCOPE_USER);
    mcp_config_set_free(&s);
    unsetenv("LOOM_HOME");
}

static void test_load_errors(void **state)
{
    (void)state;
    mcp_config_inputs in = inputs();
    mcp_config_set s;
    loom_error err;
    write_file(".mcp.json", "{\"mcpServers\": {");
    assert_int_equal(mcp_config_load(&in, &s, &err), -1);
    assert_non_null(strstr(err.message, ".mcp.json"));
    write_file(".mcp.json", "[1]");
    assert_int_equal(mcp_config_load(&in, &s, &err), -1);
    assert_non_null(strstr(err.message, "not a JSON object"));
    write_file(".mcp.json", "{\"mcpServers\": []}");
    load(&in, &s);
    assert_int_equal(s.n, 0);
    assert_true(warned(&s, "\"mcpServers\" must be an object"));
    mcp_config_set_free(&s);

    const char *missing[] = {"/nonexistent/mcp.json"};
    in.cli_configs = missing;
    in.n_cli = 1;
    assert_int_equal(mcp_config_load(&in, &s, &err), -1);
    assert_non_null(strstr(err.message, "neither a readable file nor JSON"));
    const char *bad[] = {"  {\"mcpServers\": "};
    in.cli_configs = bad;
    assert_int_equal(mcp_config_load(&in, &s, &err), -1);
    assert_non_null(strstr(err.message, "--mcp-config"));
    const char *none[] = {"{\"servers\": {}}"};
    in.cli_configs = none;
    load(&in, &s);
    assert_true(warned(&s, "no \"mcpServers\""));
    mcp_config_set_free(&s);
}

/* ---- entries -------------------------------------------------------------------- */

static void test_types_and_defaults(void **state)
{
    (void)state;
    write_file(".mcp.json",
               "{\"mcpServers\": {"
               " \"s\": {\"command\": \"srv\"},"
               " \"h\": {\"url\": \"https://h.example/mcp\", \"headers\": {\"X-A\": \"1\"}},"
               " \"e\": {\"type\": \"sse\", \"url\": \"http://e/sse\", \"timeout\": 5000,"
               "   \"alwaysLoad\": true, \"instructions\": \"use me\", \"oauth\": {}},"
               " \"x\": {\"type\": \"stdio\", \"command\": \"c\", \"args\": [\"-y\", \"pkg\"],"
               "   \"env\": {\"K\": \"V\"}, \"cwd\": \"/tmp\", \"disabled\": true},"
               " \"bad_type\": {\"type\": \"ws\", \"url\": \"http://x\"},"
               " \"no_cmd\": {\"type\": \"stdio\"},"
               " \"neither\": {\"args\": []},"
               " \"bad_args\": {\"command\": \"c\", \"args\": [\"ok\", 3]},"
               " \"args_obj\": {\"command\": \"c\", \"args\": {}},"
               " \"bad_env\": {\"command\": \"c\", \"env\": {\"K\": 1}},"
               " \"bad_timeout\": {\"command\": \"c\", \"timeout\": \"10s\"},"
               " \"bad_url\": {\"type\": \"http\", \"url\": \"ftp://x\"},"
               " \"no_url\": {\"type\": \"http\"},"
               " \"bad_bool\": {\"command\": \"c\", \"disabled\": \"yes\"},"
               " \"not_obj\": \"npx server\"}}");
    mcp_config_inputs in = inputs();
    in.trusted = true;
    mcp_config_set s;
    load(&in, &s);
    assert_int_equal(s.n, 15);
    const mcp_server_config *c = mcp_config_find(&s, "s");
    assert_int_equal(c->kind, MCP_KIND_STDIO);
    assert_non_null(c->args);
    assert_null(c->args[0]);
    assert_int_equal(c->timeout_ms, MCP_DEFAULT_CALL_TIMEOUT_MS);
    assert_int_equal(c->connect_timeout_ms, MCP_DEFAULT_CONNECT_TIMEOUT_MS);
    assert_false(c->always_load || c->disabled);
    assert_true(c->needs_approval); /* a project server nobody approved */
    c = mcp_config_find(&s, "h");
    assert_int_equal(c->kind, MCP_KIND_HTTP);
    assert_string_equal(json_get_str(c->headers, "X-A", ""), "1");
    c = mcp_config_find(&s, "e");
    assert_int_equal(c->kind, MCP_KIND_SSE);
    assert_int_equal(c->timeout_ms, 5000);
    assert_true(c->always_load);
    assert_string_equal(c->instructions, "use me");
    assert_null(c->error);
    assert_true(warned(&s, "unknown key \"oauth\""));
    c = mcp_config_find(&s, "x");
    assert_string_equal(c->args[0], "-y");
    assert_string_equal(c->args[1], "pkg");
    assert_null(c->args[2]);
    assert_string_equal(json_get_str(c->env, "K", ""), "V");
    assert_string_equal(c->cwd, "/tmp");
    assert_true(c->disabled);

    struct {
        const char *name, *part;
    } bad[] = {
        {"bad_type", "\"type\" must be"},   {"no_cmd", "needs a \"command\""},
        {"neither", "needs \"command\""},    {"bad_args", "args[1] must be a string"},
        {"args_obj", "\"args\" must be"},    {"bad_env", "\"env\".K must be a string"},
        {"bad_timeout", "\"timeout\""},      {"bad_url", "http:// or https://"},
        {"no_url", "needs a \"url\""},       {"bad_bool", "\"disabled\" must be true or false"},
        {"not_obj", "must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        c = mcp_config_find(&s, bad[i].name);
        assert_non_null(c);
        if (!c->error || !strstr(c->error, bad[i].part))
            fail_msg("%s: error \"%s\" lacks \"%s\"", bad[i].name, c->error ? c->error : "",
                     bad[i].part);
        /* The error names the file and the server. */
        assert_non_null(strstr(c->error, ".mcp.json"));
        assert_non_null(strstr(c->error, bad[i].name));
    }
    mcp_config_set_free(&s);
}

static void test_expansion_in_entries(void **state)
{
    (void)state;
    setenv("MCPT_BIN", "/opt/bin/srv", 1);
    setenv("MCPT_TOKEN", "sekrit", 1);
    unsetenv("MCPT_NOPE");
    write_file(".mcp.json",
               "{\"mcpServers\": {"
               " \"s\": {\"command\": \"${MCPT_BIN}\", \"args\": [\"--t=${MCPT_TOKEN}\","
               "   \"${MCPT_NOPE:-fallback}\"], \"env\": {\"T\": \"${MCPT_TOKEN}\"},"
               "   \"cwd\": \"${MCPT_NOPE:-/work}\"},"
               " \"h\": {\"url\": \"https://${MCPT_NOPE:-api.example}/mcp\","
               "   \"headers\": {\"Authorization\": \"Bearer ${MCPT_TOKEN}\"}},"
               " \"m\": {\"url\": \"https://x/${MCPT_NOPE}\"},"
               " \"m2\": {\"command\": \"c\", \"headers\": {},"
               "   \"env\": {\"A\": \"${MCPT_NOPE}\"}}}}");
    mcp_config_inputs in = inputs();
    in.trusted = true;
    mcp_config_set s;
    load(&in, &s);
    const mcp_server_config *c = mcp_config_find(&s, "s");
    assert_null(c->error);
    assert_string_equal(c->command, "/opt/bin/srv");
    assert_string_equal(c->args[0], "--t=sekrit");
    assert_string_equal(c->args[1], "fallback");
    assert_string_equal(json_get_str(c->env, "T", ""), "sekrit");
    assert_string_equal(c->cwd, "/work");
    c = mcp_config_find(&s, "h");
    assert_null(c->error);
    assert_string_equal(c->url, "https://api.example/mcp");
    assert_string_equal(json_get_str(c->headers, "Authorization", ""), "Bearer sekrit");
    /* An unset ${VAR}: that server's error, naming the variable and the file. */
    c = mcp_config_find(&s, "m");
    assert_non_null(c->error);
    assert_non_null(strstr(c->error, "${MCPT_NOPE} is not set"));
    assert_non_null(strstr(c->error, "url"));
    assert_non_null(strstr(c->error, ".mcp.json"));
    c = mcp_config_find(&s, "m2");
    assert_non_null(strstr(c->error, "env.A: ${MCPT_NOPE}"));
    mcp_config_set_free(&s);
}

static void test_timeouts_env(void **state)
{
    (void)state;
    write_file(".mcp.json", "{\"mcpServers\": {\"a\": {\"command\": \"c\"},"
                            " \"b\": {\"command\": \"c\", \"timeout\": 1234}}}");
    mcp_config_inputs in = inputs();
    in.trusted = true;
    setenv("MCP_TOOL_TIMEOUT", "7000", 1);
    setenv("MCP_TIMEOUT", "900", 1);
    mcp_config_set s;
    load(&in, &s);
    assert_int_equal(mcp_config_find(&s, "a")->timeout_ms, 7000);
    assert_int_equal(mcp_config_find(&s, "a")->connect_timeout_ms, 900);
    /* The entry's own timeout wins over the environment's default. */
    assert_int_equal(mcp_config_find(&s, "b")->timeout_ms, 1234);
    assert_int_equal(mcp_config_find(&s, "b")->connect_timeout_ms, 900);
    mcp_config_set_free(&s);
    setenv("MCP_TOOL_TIMEOUT", "soon", 1);
    unsetenv("MCP_TIMEOUT");
    load(&in, &s);
    assert_int_equal(mcp_config_find(&s, "a")->timeout_ms, MCP_DEFAULT_CALL_TIMEOUT_MS);
    assert_true(warned(&s, "MCP_TOOL_TIMEOUT=\"soon\""));
    mcp_config_set_free(&s);
    unsetenv("MCP_TOOL_TIMEOUT");
}

static void test_copy(void **state)
{
    (void)state;
    write_file(".mcp.json", "{\"mcpServers\": {\"a\": {\"command\": \"c\", \"args\": [\"1\"],"
                            " \"env\": {\"K\": \"V\"}, \"instructions\": \"i\"}}}");
    mcp_config_inputs in = inputs();
    mcp_config_set s;
    load(&in, &s);
    mcp_server_config copy;
    mcp_server_config_copy(&copy, &s.servers[0]);
    mcp_config_set_free(&s);
    assert_string_equal(copy.name, "a");
    assert_string_equal(copy.args[0], "1");
    assert_string_equal(json_get_str(copy.env, "K", ""), "V");
    assert_string_equal(copy.instructions, "i");
    assert_true(copy.needs_approval);
    mcp_server_config_free(&copy);
}

/* ---- approval ------------------------------------------------------------------- */

/* needs_approval / disabled of server name with these settings documents. */
static void approval(const char *user, const char *project, const char *local, bool trusted,
                     const char *name, bool needs, bool disabled)
{
    json_t *docs[3] = {user ? parse(user) : NULL, project ? parse(project) : NULL,
                       local ? parse(local) : NULL};
    mcp_config_inputs in = inputs();
    for (int i = 0; i < 3; i++)
        in.settings[i] = docs[i];
    in.trusted = trusted;
    mcp_config_set s;
    load(&in, &s);
    const mcp_server_config *c = mcp_config_find(&s, name);
    assert_non_null(c);
    if (c->needs_approval != needs || c->disabled != disabled)
        fail_msg("%s (user %s, project %s, local %s, trusted %d): needs_approval %d disabled %d",
                 name, user ? user : "-", project ? project : "-", local ? local : "-", trusted,
                 c->needs_approval, c->disabled);
    mcp_config_set_free(&s);
    for (int i = 0; i < 3; i++)
        json_decref(docs[i]);
}

static void test_approval(void **state)
{
    (void)state;
    write_file("home/settings.json", "{\"mcpServers\": {\"u\": {\"command\": \"c\"}}}");
    write_file(".mcp.json", "{\"mcpServers\": {\"p\": {\"command\": \"c\"},"
                            " \"q\": {\"command\": \"c\"}}}");
    write_file(".loom/settings.local.json", "{\"mcpServers\": {\"l\": {\"command\": \"c\"}}}");
    const char *en_p = "{\"enabledMcpjsonServers\": [\"p\"]}";
    const char *all = "{\"enableAllProjectMcpServers\": true}";
    const char *dis_p = "{\"disabledMcpjsonServers\": [\"p\"]}";
    for (int t = 0; t < 2; t++) {
        bool trusted = t == 1;
        /* Nobody said anything: a project server waits. */
        approval(NULL, NULL, NULL, trusted, "p", true, false);
        /* User and local settings approve, trusted or not. */
        approval(en_p, NULL, NULL, trusted, "p", false, false);
        approval(NULL, NULL, en_p, trusted, "p", false, false);
        approval(NULL, NULL, en_p, trusted, "q", true, false);
        approval(all, NULL, NULL, trusted, "q", false, false);
        approval(NULL, NULL, all, trusted, "q", false, false);
        /* The project's own settings only in a trusted workspace. */
        approval(NULL, en_p, NULL, trusted, "p", !trusted, false);
        approval(NULL, all, NULL, trusted, "q", !trusted, false);
        /* Disabled beats enabled, from any layer: keeping a server off
         * only tightens, so the project's own file counts untrusted too. */
        approval(dis_p, NULL, all, trusted, "p", false, true);
        approval("{\"enabledMcpjsonServers\": [\"p\"], \"disabledMcpjsonServers\": [\"p\"]}", NULL,
                 NULL, trusted, "p", false, true);
        approval(NULL, dis_p, NULL, trusted, "p", false, true);
        approval(en_p, dis_p, NULL, trusted, "p", false, true);
        /* The user's own servers never wait. */
        approval(NULL, NULL, NULL, trusted, "u", false, false);
        approval(dis_p, NULL, NULL, trusted, "u", false, false);
        /* A local settings file in an untrusted workspace may be committed:
         * its servers wait like .mcp.json's. */
        approval(NULL, NULL, NULL, trusted, "l", !trusted, false);
        approval("{\"enabledMcpjsonServers\": [\"l\"]}", NULL, NULL, trusted, "l", false, false);
    }
    /* The project settings file is not a source: a warning says where to go. */
    json_t *proj = parse("{\"mcpServers\": {\"z\": {\"command\": \"c\"}}}");
    mcp_config_inputs pi = inputs();
    pi.settings[1] = proj;
    mcp_config_set ps;
    load(&pi, &ps);
    assert_null(mcp_config_find(&ps, "z"));
    assert_true(warned(&ps, "is not read there"));
    mcp_config_set_free(&ps);
    json_decref(proj);
    /* --mcp-config servers are the user's words. */
    mcp_config_inputs in = inputs();
    const char *cli[] = {"{\"mcpServers\": {\"c\": {\"command\": \"c\"}}}"};
    in.cli_configs = cli;
    in.n_cli = 1;
    mcp_config_set s;
    load(&in, &s);
    assert_false(mcp_config_find(&s, "c")->needs_approval);
    mcp_config_set_free(&s);
}

/* ---- editing -------------------------------------------------------------------- */

static void add(mcp_config_inputs *in, mcp_scope scope, const char *name, const char *entry,
                bool replace, int want, const char *part)
{
    json_t *e = parse(entry);
    loom_error err;
    memset(&err, 0, sizeof err);
    int rc = mcp_config_add(in, scope, name, e, replace, &err);
    json_decref(e);
    if (rc != want)
        fail_msg("add %s: rc %d (%s)", name, rc, err.message);
    if (part && !strstr(err.message, part))
        fail_msg("add %s: \"%s\" lacks \"%s\"", name, err.message, part);
}

static void test_edit_round_trip(void **state)
{
    (void)state;
    write_file("home/settings.json", "{\"model\": \"keep-me\", \"env\": {\"A\": \"1\"}}");
    write_file(".loom/settings.local.json", "{\"permissions\": {\"allow\": [\"Read\"]}}");
    mcp_config_inputs in = inputs();
    in.trusted = true;
    unsetenv("MCPT_LATER");
    add(&in, MCP_SCOPE_USER, "u1", "{\"command\": \"npx\", \"args\": [\"-y\", \"s\"]}", false, 0,
        NULL);
    add(&in, MCP_SCOPE_PROJECT, "p1", "{\"type\": \"http\", \"url\": \"https://x/${MCPT_LATER}\"}",
        false, 0, NULL);
    add(&in, MCP_SCOPE_LOCAL, "l1", "{\"command\": \"srv\"}", false, 0, NULL);
    /* Files: other keys kept, ${VAR} kept as written. */
    json_t *u = read_json("home/settings.json");
    assert_string_equal(json_get_str(u, "model", ""), "keep-me");
    assert_string_equal(json_get_str(json_get_obj(u, "env"), "A", ""), "1");
    assert_string_equal(
        json_get_str(json_get_obj(json_get_obj(u, "mcpServers"), "u1"), "command", ""), "npx");
    json_decref(u);
    json_t *p = read_json(".mcp.json");
    assert_string_equal(
        json_get_str(json_get_obj(json_get_obj(p, "mcpServers"), "p1"), "url", ""),
        "https://x/${MCPT_LATER}");
    json_decref(p);
    json_t *l = read_json(".loom/settings.local.json");
    assert_non_null(json_get_obj(l, "permissions"));
    assert_non_null(json_get_obj(json_get_obj(l, "mcpServers"), "l1"));
    json_decref(l);
    /* A new .mcp.json follows the umask; settings files keep their mode. */
    struct stat st;
    char path[600];
    snprintf(path, sizeof path, "%s/.loom/settings.local.json", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);

    /* Existing name: refused unless replace. */
    add(&in, MCP_SCOPE_LOCAL, "l1", "{\"command\": \"other\"}", false, -1, "already exists");
    add(&in, MCP_SCOPE_LOCAL, "l1", "{\"command\": \"other\"}", true, 0, NULL);
    mcp_config_set s;
    load(&in, &s);
    assert_int_equal(s.n, 3);
    assert_string_equal(mcp_config_find(&s, "l1")->command, "other");
    assert_non_null(strstr(mcp_config_find(&s, "p1")->error, "${MCPT_LATER} is not set"));
    mcp_config_set_free(&s);

    /* Bad entries and names are refused, the file untouched. */
    add(&in, MCP_SCOPE_LOCAL, "l2", "{\"type\": \"http\"}", false, -1, "needs a \"url\"");
    add(&in, MCP_SCOPE_LOCAL, "l2", "[]", false, -1, "must be an object");
    add(&in, MCP_SCOPE_LOCAL, "bad name", "{\"command\": \"c\"}", false, -1, "letters, digits");
    add(&in, MCP_SCOPE_CLI, "c", "{\"command\": \"c\"}", false, -1, "--mcp-config");
    l = read_json(".loom/settings.local.json");
    assert_null(json_object_get(json_get_obj(l, "mcpServers"), "l2"));
    json_decref(l);
    /* A file that is not JSON is not overwritten. */
    write_file("home/settings.json", "{broken");
    add(&in, MCP_SCOPE_USER, "u2", "{\"command\": \"c\"}", false, -1, "not changed");
    write_file("home/settings.json",
               "{\"model\": \"keep-me\", \"mcpServers\": {\"u1\": {\"command\": \"npx\"},"
               " \"l1\": {\"command\": \"dup\"}}}");

    /* Remove: by scope, or from the single scope holding it. */
    loom_error err;
    assert_int_equal(mcp_config_remove(&in, false, MCP_SCOPE_USER, "l1", &err), -1);
    assert_non_null(strstr(err.message, "user"));
    assert_non_null(strstr(err.message, "local"));
    assert_int_equal(mcp_config_remove(&in, true, MCP_SCOPE_USER, "l1", &err), 0);
    assert_int_equal(mcp_config_remove(&in, false, MCP_SCOPE_USER, "l1", &err), 0);
    assert_int_equal(mcp_config_remove(&in, false, MCP_SCOPE_USER, "l1", &err), -1);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_int_equal(mcp_config_remove(&in, true, MCP_SCOPE_PROJECT, "u1", &err), -1);
    assert_non_null(strstr(err.message, ".mcp.json"));
    assert_int_equal(mcp_config_remove(&in, false, MCP_SCOPE_USER, "p1", &err), 0);
    l = read_json(".loom/settings.local.json");
    assert_non_null(json_get_obj(l, "permissions"));
    assert_null(json_object_get(json_get_obj(l, "mcpServers"), "l1"));
    json_decref(l);
    u = read_json("home/settings.json");
    assert_string_equal(json_get_str(u, "model", ""), "keep-me");
    json_decref(u);
    load(&in, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.servers[0].name, "u1");
    mcp_config_set_free(&s);
}

static void test_approve(void **state)
{
    (void)state;
    write_file(".mcp.json", "{\"mcpServers\": {\"p\": {\"command\": \"c\"}}}");
    mcp_config_inputs in = inputs();
    loom_error err;
    /* No local file yet: created, private. */
    assert_int_equal(mcp_config_approve(&in, "p", &err), 0);
    assert_int_equal(mcp_config_approve(&in, "p", &err), 0); /* once only */
    json_t *l = read_json(".loom/settings.local.json");
    assert_int_equal(json_array_size(json_get_arr(l, "enabledMcpjsonServers")), 1);
    char path[600];
    snprintf(path, sizeof path, "%s/.loom/settings.local.json", dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* The approval counts on the next load. */
    in.settings[2] = l;
    mcp_config_set s;
    load(&in, &s);
    assert_false(s.servers[0].needs_approval);
    mcp_config_set_free(&s);
    json_decref(l);
    write_file(".loom/settings.local.json", "{\"x\": 1, \"enabledMcpjsonServers\": \"p\"}");
    assert_int_equal(mcp_config_approve(&in, "p", &err), -1);
    assert_non_null(strstr(err.message, "not a list"));
    write_file(".loom/settings.local.json", "{\"x\": 1, \"enabledMcpjsonServers\": [\"o\"]}");
    assert_int_equal(mcp_config_approve(&in, "p", &err), 0);
    l = read_json(".loom/settings.local.json");
    assert_int_equal(json_get_int(l, "x", 0), 1);
    assert_int_equal(json_array_size(json_get_arr(l, "enabledMcpjsonServers")), 2);
    json_decref(l);
    in.project_dir = NULL;
    assert_int_equal(mcp_config_approve(&in, "p", &err), -1);
    assert_non_null(strstr(err.message, "project directory"));
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(mcp_scope_name(MCP_SCOPE_USER), "user");
    assert_string_equal(mcp_scope_name(MCP_SCOPE_PROJECT), "project");
    assert_string_equal(mcp_scope_name(MCP_SCOPE_LOCAL), "local");
    assert_string_equal(mcp_scope_name(MCP_SCOPE_CLI), "cli");
    assert_string_equal(mcp_kind_name(MCP_KIND_STDIO), "stdio");
    assert_string_equal(mcp_kind_name(MCP_KIND_HTTP), "http");
    assert_string_equal(mcp_kind_name(MCP_KIND_SSE), "sse");
}

/* The api's inputs from config values: the options mcp_config and
 * strict_mcp_config, checked as loom_config_set checks them. */
static void test_api_inputs(void **state)
{
    (void)state;
    json_t *values = parse("{\"mcp_config\": \"[\\\"a.json\\\", \\\"{}\\\"]\","
                           " \"strict_mcp_config\": \"yes\"}");
    json_t *files[3] = {NULL, NULL, NULL};
    mcp_config_inputs in;
    loom_status st;
    assert_int_equal(api_mcp_config_inputs(values, files, true, "/w", "/u", &in, &st), 0);
    assert_int_equal(in.n_cli, 2);
    assert_string_equal(in.cli_configs[0], "a.json");
    assert_string_equal(in.cli_configs[1], "{}");
    assert_true(in.strict && in.trusted);
    assert_string_equal(in.project_dir, "/w");
    assert_string_equal(in.user_settings_path, "/u");
    api_mcp_config_inputs_free(&in);
    json_decref(values);
    values = parse("{\"mcp_config\": \"[1]\"}");
    assert_int_equal(api_mcp_config_inputs(values, files, false, "/w", NULL, &in, &st), -1);
    assert_non_null(strstr(st.message, "array of strings"));
    json_decref(values);

    loom_config *cfg = loom_config_new();
    assert_int_equal(loom_config_set(cfg, "mcp_config", "{\"mcpServers\": {}}", &st), -1);
    assert_int_equal(loom_config_set(cfg, "mcp_config", "[\"x\"]", &st), 0);
    assert_int_equal(loom_config_set(cfg, "strict_mcp_config", "maybe", &st), -1);
    /* Before the settings are loaded there is no workspace to read. */
    assert_null(loom_mcp_list_json(cfg, &st));
    assert_int_equal(loom_mcp_add(cfg, "nowhere", "n", "{}", false, &st), -1);
    assert_non_null(strstr(st.message, "user, project, local"));
    loom_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_path_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_types_and_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expansion_in_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeouts_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edit_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approve, setup, teardown),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_api_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

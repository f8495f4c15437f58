/* mcp_cmd.c — `loom mcp list|get|add|add-json|remove`: the MCP servers a
 * session here would have, and editing the files that name them, through
 * loom.h's loom_mcp_* functions. Claude Code's syntax: options before the
 * server's name, everything after it the command and its arguments
 * (`loom mcp add NAME -- npx -y server`), `--transport http NAME URL`,
 * default scope local.
 *
 * Single-threaded: runs once and exits. */
#include "surfaces/cli/mcp_cmd.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/termsafe.h"
#include "loom.h"
#include "surfaces/cli/setup.h"
#include "surfaces/cli/sibling_cmd.h"

#define MCP_MAX_FLAGS 16

static void usage(FILE *f)
{
    fputs("usage: loom mcp list [--json] [--mcp-config FILE|JSON]... [--strict-mcp-config]\n"
          "       loom mcp get NAME [--json] [--mcp-config FILE|JSON]... [--strict-mcp-config]\n"
          "       loom mcp add [--scope S] [--transport stdio|http|sse] [-e KEY=VALUE]...\n"
          "                    [-H 'Name: value']... [--replace] NAME COMMAND_OR_URL [ARGS...]\n"
          "       loom mcp add-json [--scope S] [--replace] NAME JSON\n"
          "       loom mcp remove [--scope S] NAME\n"
          "       loom mcp serve [--http HOST:PORT] [--permission-mode MODE] ...  Loom as an\n"
          "                    MCP server (loom mcp serve --help; docs/mcp-server.md)\n"
          "\n"
          "The MCP servers a session in this folder gets, and the files naming them:\n"
          "  user     ~/.loom/settings.json (or $LOOM_HOME/settings.json) \"mcpServers\"\n"
          "  project  .mcp.json \"mcpServers\" (Claude Code's file; shared with the repository)\n"
          "  local    .loom/settings.local.json \"mcpServers\" (the default scope)\n"
          "  cli      --mcp-config FILE|JSON; with --strict-mcp-config the only ones\n"
          "Later scopes win by name. Project servers start only once approved:\n"
          "\"enabledMcpjsonServers\": [NAME] or \"enableAllProjectMcpServers\": true in the\n"
          "user or local settings (a folder's own .loom/settings.json counts only when the\n"
          "folder is trusted). ${VAR} and ${VAR:-default} are expanded when loaded.\n"
          "\n"
          "  -s, --scope S       user, project or local (default local)\n"
          "  -t, --transport T   stdio (default), http or sse\n"
          "  -e, --env KEY=VALUE an environment variable of a stdio server (repeatable)\n"
          "  -H, --header 'N: V' a header of an http or sse server (repeatable)\n"
          "      --replace       overwrite a server of that name in that scope\n"
          "      --json          machine-readable output\n"
          "  -h, --help          this help\n"
          "\n"
          "examples:\n"
          "  loom mcp add everything -- npx -y @modelcontextprotocol/server-everything\n"
          "  loom mcp add --transport http --scope user notes https://notes.example/mcp\n"
          "  loom mcp add-json api '{\"type\":\"http\",\"url\":\"https://x/mcp\"}'\n"
          "\n"
          "Exit status: 0 done, 1 failed, 2 usage error. See docs/mcp.md.\n",
          f);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("loom mcp: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see loom mcp --help)\n", stderr);
    return 2;
}

/* What the subcommands' flags said. */
typedef struct mcp_args {
    const char *scope;
    const char *transport;
    const char *env[MCP_MAX_FLAGS];
    int n_env;
    const char *headers[MCP_MAX_FLAGS];
    int n_headers;
    const char *mcp_configs[MCP_MAX_FLAGS];
    int n_mcp_configs;
    bool strict, json, replace, help;
    char **pos; /* the positional words, in order (into argv) */
    int n_pos;
} mcp_args;

/* Whether a is flag (long or short) and, when it takes a value, where the
 * value is: "--scope=user", "--scope user", "-s user". */
static bool flag_value(int argc, char **argv, int *i, const char *lng, const char *shrt,
                       const char **value, int *rc)
{
    const char *a = argv[*i];
    size_t n = strlen(lng);
    if (strncmp(a, lng, n) == 0 && a[n] == '=') {
        *value = a + n + 1;
        return true;
    }
    if (strcmp(a, lng) != 0 && !(shrt && strcmp(a, shrt) == 0))
        return false;
    if (*i + 1 >= argc) {
        *rc = usage_error("%s needs a value", a);
        return true;
    }
    *value = argv[++*i];
    return true;
}

static int push(const char **list, int *n, const char *v, const char *flag)
{
    if (*n == MCP_MAX_FLAGS)
        return usage_error("too many %s flags", flag);
    list[(*n)++] = v;
    return 0;
}

/* Parses argv[1..]: flags until the first positional word (the server's
 * name) or "--"; after the name everything is positional — for add, the
 * command and its own flags — unless flags_after_name (list, get and
 * remove take flags anywhere). 0, or the exit status of a usage error. */
static int parse_args(int argc, char **argv, bool flags_after_name, mcp_args *a)
{
    memset(a, 0, sizeof *a);
    a->pos = xcalloc((size_t)argc + 1, sizeof *a->pos);
    bool flags = true, dashdash = false;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        /* The first "--" ends the flags (`add NAME -- npx -y server`);
         * a later one is the command's own. */
        if (!dashdash && !strcmp(s, "--")) {
            dashdash = true;
            flags = false;
            continue;
        }
        if (!flags || s[0] != '-' || !s[1]) {
            a->pos[a->n_pos++] = argv[i];
            if (!flags_after_name)
                flags = false;
            continue;
        }
        const char *v = NULL;
        int rc = 0;
        if (!strcmp(s, "-h") || !strcmp(s, "--help"))
            a->help = true;
        else if (!strcmp(s, "--json"))
            a->json = true;
        else if (!strcmp(s, "--replace"))
            a->replace = true;
        else if (!strcmp(s, "--strict-mcp-config"))
            a->strict = true;
        else if (flag_value(argc, argv, &i, "--scope", "-s", &v, &rc))
            a->scope = v;
        else if (flag_value(argc, argv, &i, "--transport", "-t", &v, &rc))
            a->transport = v;
        else if (flag_value(argc, argv, &i, "--env", "-e", &v, &rc))
            rc = rc ? rc : push(a->env, &a->n_env, v, "-e");
        else if (flag_value(argc, argv, &i, "--header", "-H", &v, &rc))
            rc = rc ? rc : push(a->headers, &a->n_headers, v, "-H");
        else if (flag_value(argc, argv, &i, "--mcp-config", NULL, &v, &rc))
            rc = rc ? rc : push(a->mcp_configs, &a->n_mcp_configs, v, "--mcp-config");
        else
            rc = usage_error("unknown option %s", s);
        if (rc)
            return rc;
    }
    return 0;
}

/* A config with the settings of this folder and the --mcp-config flags. */
static loom_config *load_config(const mcp_args *a)
{
    loom_status st;
    loom_config *cfg = loom_config_new();
    if (setup_mcp_options(cfg, a->mcp_configs, a->n_mcp_configs, a->strict, &st) != 0 ||
        loom_config_load_settings(cfg, &st) != 0) {
        fprintf(stderr, "loom mcp: %s\n", st.message);
        loom_config_free(cfg);
        return NULL;
    }
    return cfg;
}

/* The configured servers ({"servers", "warnings"}); warnings printed. */
static json_t *list_servers(const mcp_args *a)
{
    loom_config *cfg = load_config(a);
    if (!cfg)
        return NULL;
    loom_status st;
    char *text = loom_mcp_list_json(cfg, &st);
    loom_config_free(cfg);
    if (!text) {
        fprintf(stderr, "loom mcp: %s\n", st.message);
        return NULL;
    }
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(doc, "warnings"), i, w)
        fprintf(stderr, "loom mcp: warning: %s\n", json_string_value(w));
    return doc;
}

/* A word as a shell would need it to mean itself. */
static void put_word(loom_str *out, const char *w)
{
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "@%+=:,./-_") == strlen(w)) {
        str_puts(out, w);
        return;
    }
    str_putc(out, '\'');
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            str_puts(out, "'\\''");
        else
            str_putc(out, *p);
    }
    str_putc(out, '\'');
}

/* stdio: the command line; http/sse: the URL. Caller frees. */
/* v with every string and key made terminal-safe (base/termsafe.h): a
 * repository's .mcp.json names its servers, commands and URLs, and `loom
 * mcp list` in that folder must not send its escape sequences (a retitled
 * window, a line rewritten to hide "needs approval") to the terminal. */
static json_t *terminal_safe(const json_t *v)
{
    if (json_is_string(v)) {
        char *t = termsafe_dup(json_string_value(v));
        json_t *r = json_string(t ? t : "");
        free(t);
        return r ? r : json_string("?");
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m) json_array_append_new(a, terminal_safe(m));
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m) {
            char *sk = termsafe_dup(k);
            json_object_set_new(o, sk ? sk : "?", terminal_safe(m));
            free(sk);
        }
        return o;
    }
    return json_copy((json_t *)v);
}

static char *target_of(const json_t *s)
{
    loom_str out = LOOM_STR_INIT;
    const char *url = json_get_str(s, "url", NULL);
    if (url) {
        str_puts(&out, url);
        return str_steal(&out);
    }
    put_word(&out, json_get_str(s, "command", ""));
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(s, "args"), i, a) {
        str_putc(&out, ' ');
        put_word(&out, json_string_value(a));
    }
    return str_steal(&out);
}

static const char *status_of(const json_t *s, char *buf, size_t size)
{
    const char *err = json_get_str(s, "error", NULL);
    if (err) {
        snprintf(buf, size, "error: %s", err);
        return buf;
    }
    if (json_is_true(json_object_get(s, "disabled")))
        return "disabled";
    if (json_is_true(json_object_get(s, "needs_approval")))
        return "needs approval";
    return "ok to start";
}

static const char APPROVAL_HINT[] =
    "A project server starts once approved: name it in \"enabledMcpjsonServers\" (or set\n"
    "\"enableAllProjectMcpServers\": true) in .loom/settings.local.json or the user settings.\n"
    "In an untrusted folder only the user settings count; the local file's servers wait too.\n";

static int cmd_list(const mcp_args *a)
{
    if (a->n_pos)
        return usage_error("list takes no names (loom mcp get %s shows one)", a->pos[0]);
    json_t *doc = list_servers(a);
    if (!doc)
        return 1;
    json_t *servers = json_object_get(doc, "servers");
    if (a->json) {
        char *text = json_dumps(servers, JSON_INDENT(2));
        printf("%s\n", text);
        free(text);
        json_decref(doc);
        return 0;
    }
    if (json_array_size(servers) == 0) {
        printf("No MCP servers configured. Add one: loom mcp add NAME -- COMMAND [ARGS...]\n");
        json_decref(doc);
        return 0;
    }
    json_t *safe = terminal_safe(servers);
    json_decref(doc);
    doc = safe;
    servers = safe;
    int wn = 4, wt = 6;
    size_t i;
    json_t *s;
    json_array_foreach(servers, i, s) {
        int n = (int)strlen(json_get_str(s, "name", ""));
        char *t = target_of(s);
        int tl = (int)strlen(t);
        free(t);
        wn = n > wn ? n : wn;
        wt = tl > wt ? (tl > 60 ? 60 : tl) : wt;
    }
    printf("%-*s  %-7s  %-9s  %-*s  %s\n", wn, "NAME", "SCOPE", "TRANSPORT", wt, "TARGET",
           "STATUS");
    bool waiting = false;
    json_array_foreach(servers, i, s) {
        char *t = target_of(s);
        if (strlen(t) > 60)
            strcpy(t + 57, "...");
        char buf[1200];
        const char *status = status_of(s, buf, sizeof buf);
        waiting = waiting || !strcmp(status, "needs approval");
        printf("%-*s  %-7s  %-9s  %-*s  %s\n", wn, json_get_str(s, "name", ""),
               json_get_str(s, "scope", ""), json_get_str(s, "transport", ""), wt, t, status);
        free(t);
    }
    if (waiting)
        printf("\n%s", APPROVAL_HINT);
    json_decref(doc);
    return 0;
}

static void print_map(const char *title, const json_t *m, const char *sep)
{
    if (!json_object_size(m))
        return;
    printf("  %s:\n", title);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v) printf("    %s%s%s\n", k, sep, json_string_value(v));
}

static int cmd_get(const mcp_args *a)
{
    if (a->n_pos != 1)
        return usage_error("get takes one server name%s", "");
    json_t *doc = list_servers(a);
    if (!doc)
        return 1;
    const json_t *found = NULL;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "servers"), i, s)
        if (!strcmp(json_get_str(s, "name", ""), a->pos[0]))
            found = s;
    if (!found) {
        fprintf(stderr, "loom mcp: no MCP server \"%s\" (loom mcp list shows them)\n", a->pos[0]);
        json_decref(doc);
        return 1;
    }
    if (a->json) {
        char *text = json_dumps(found, JSON_INDENT(2));
        printf("%s\n", text);
        free(text);
        json_decref(doc);
        return 0;
    }
    json_t *safe = terminal_safe(found);
    json_decref(doc);
    doc = safe;
    found = safe;
    char buf[1200];
    printf("%s:\n", json_get_str(found, "name", "?"));
    printf("  Scope: %s (%s)\n", json_get_str(found, "scope", ""),
           json_get_str(found, "source", ""));
    printf("  Transport: %s\n", json_get_str(found, "transport", ""));
    char *t = target_of(found);
    printf("  %s: %s\n", json_get_str(found, "url", NULL) ? "URL" : "Command", t);
    free(t);
    if (json_get_str(found, "cwd", NULL))
        printf("  Cwd: %s\n", json_get_str(found, "cwd", ""));
    print_map("Environment", json_object_get(found, "env"), "=");
    print_map("Headers", json_object_get(found, "headers"), ": ");
    printf("  Timeout: %lld ms per request, %lld ms to connect\n",
           (long long)json_get_int(found, "timeout_ms", 0),
           (long long)json_get_int(found, "connect_timeout_ms", 0));
    printf("  Always load: %s\n",
           json_is_true(json_object_get(found, "alwaysLoad")) ? "yes" : "no");
    if (json_get_str(found, "instructions", NULL))
        printf("  Instructions: %s\n", json_get_str(found, "instructions", ""));
    const char *status = status_of(found, buf, sizeof buf);
    printf("  Status: %s\n", status);
    if (!strcmp(status, "needs approval"))
        printf("\n%s", APPROVAL_HINT);
    json_decref(doc);
    return 0;
}

/* The file a scope writes (for the message after a change). Caller frees. */
static char *scope_file(const loom_config *cfg, const char *scope)
{
    loom_str s = LOOM_STR_INIT;
    if (scope && !strcmp(scope, "user"))
        str_puts(&s, loom_config_user_settings_path(cfg));
    else
        str_printf(&s, "%s/%s", loom_config_workspace(cfg),
                   scope && !strcmp(scope, "project") ? ".mcp.json" : ".loom/settings.local.json");
    return str_steal(&s);
}

/* Writes the entry and says where. */
static int write_entry(const mcp_args *a, const char *name, const json_t *entry)
{
    loom_config *cfg = load_config(a);
    if (!cfg)
        return 1;
    char *text = json_dump_compact(entry);
    loom_status st;
    int rc = loom_mcp_add(cfg, a->scope, name, text, a->replace, &st);
    free(text);
    if (rc != 0)
        fprintf(stderr, "loom mcp: %s\n", st.message);
    else {
        const char *scope = a->scope ? a->scope : "local";
        char *file = scope_file(cfg, scope);
        printf("Added %s MCP server \"%s\" to the %s configuration (%s)\n",
               json_get_str(entry, "type", "stdio"), name, scope, file);
        if (!strcmp(scope, "project") ||
            (!strcmp(scope, "local") && !loom_config_workspace_trusted(cfg)))
            printf("It starts once approved%s (loom mcp get %s says how).\n",
                   strcmp(scope, "project") ? ": this folder is not trusted" : "", name);
        free(file);
    }
    loom_config_free(cfg);
    return rc == 0 ? 0 : 1;
}

/* -e KEY=VALUE / -H 'Name: value' into obj. 0, or the usage status. */
static int put_pairs(json_t *obj, const char *const *v, int n, char sep, const char *flag)
{
    for (int i = 0; i < n; i++) {
        const char *at = strchr(v[i], sep);
        if (!at || at == v[i])
            return usage_error(sep == '=' ? "-e wants KEY=VALUE, not \"%s\""
                                          : "-H wants 'Name: value', not \"%s\"",
                               v[i]);
        char *key = xstrndup(v[i], (size_t)(at - v[i]));
        const char *val = at + 1;
        while (sep == ':' && *val == ' ')
            val++;
        json_object_set_new(obj, key, json_string(val));
        free(key);
    }
    (void)flag;
    return 0;
}

static int cmd_add(const mcp_args *a)
{
    const char *tr = a->transport ? a->transport : "stdio";
    bool stdio = !strcmp(tr, "stdio");
    if (!stdio && strcmp(tr, "http") && strcmp(tr, "sse"))
        return usage_error("--transport must be stdio, http or sse, not \"%s\"", tr);
    if (a->n_pos < 2)
        return usage_error("add needs a NAME and a %s", stdio ? "COMMAND" : "URL");
    if (!stdio && a->n_pos > 2)
        return usage_error("an %s server takes a URL only, no arguments", tr);
    if (stdio && a->n_headers)
        return usage_error("-H is for http and sse servers%s", "");
    if (!stdio && a->n_env)
        return usage_error("-e is for stdio servers%s", "");
    json_t *entry = json_object();
    json_object_set_new(entry, "type", json_string(tr));
    int rc = 0;
    if (stdio) {
        json_object_set_new(entry, "command", json_string(a->pos[1]));
        json_t *args = json_array();
        for (int i = 2; i < a->n_pos; i++)
            json_array_append_new(args, json_string(a->pos[i]));
        json_object_set_new(entry, "args", args);
        if (a->n_env) {
            json_t *env = json_object();
            json_object_set_new(entry, "env", env);
            rc = put_pairs(env, a->env, a->n_env, '=', "-e");
        }
        if (!strncmp(a->pos[1], "http://", 7) || !strncmp(a->pos[1], "https://", 8))
            fprintf(stderr, "loom mcp: note: \"%s\" looks like a URL; for a remote server add "
                            "--transport http\n",
                    a->pos[1]);
    } else {
        json_object_set_new(entry, "url", json_string(a->pos[1]));
        if (a->n_headers) {
            json_t *h = json_object();
            json_object_set_new(entry, "headers", h);
            rc = put_pairs(h, a->headers, a->n_headers, ':', "-H");
        }
    }
    if (rc == 0)
        rc = write_entry(a, a->pos[0], entry);
    json_decref(entry);
    return rc;
}

static int cmd_add_json(const mcp_args *a)
{
    if (a->n_pos != 2)
        return usage_error("add-json takes NAME and one JSON text%s", "");
    json_error_t je;
    json_t *entry = json_loads(a->pos[1], 0, &je);
    if (!entry) {
        fprintf(stderr, "loom mcp: the JSON is not valid: %s (line %d, column %d)\n", je.text,
                je.line, je.column);
        return 1;
    }
    int rc = write_entry(a, a->pos[0], entry);
    json_decref(entry);
    return rc;
}

static int cmd_remove(const mcp_args *a)
{
    if (a->n_pos != 1)
        return usage_error("remove takes one server name%s", "");
    loom_config *cfg = load_config(a);
    if (!cfg)
        return 1;
    loom_status st;
    int rc = loom_mcp_remove(cfg, a->scope, a->pos[0], &st);
    if (rc != 0)
        fprintf(stderr, "loom mcp: %s\n", st.message);
    else if (a->scope)
        printf("Removed MCP server \"%s\" from the %s configuration\n", a->pos[0], a->scope);
    else
        printf("Removed MCP server \"%s\"\n", a->pos[0]);
    loom_config_free(cfg);
    return rc == 0 ? 0 : 1;
}

int mcp_cmd_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "serve")) /* Loom as an MCP server: docs/mcp-server.md */
        return sibling_cmd_exec("loom-mcp-server", argc - 1, argv + 1);
    static const struct {
        const char *name;
        int (*run)(const mcp_args *);
        bool flags_after_name;
    } subs[] = {
        {"list", cmd_list, true},        {"get", cmd_get, true},
        {"add", cmd_add, false},         {"add-json", cmd_add_json, false},
        {"remove", cmd_remove, true},    {"rm", cmd_remove, true},
    };
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        if (strcmp(argv[1], subs[i].name) != 0)
            continue;
        mcp_args a;
        int rc = parse_args(argc - 1, argv + 1, subs[i].flags_after_name, &a);
        if (rc == 0 && a.help)
            usage(stdout);
        else if (rc == 0)
            rc = subs[i].run(&a);
        free(a.pos);
        return rc;
    }
    return usage_error("unknown subcommand \"%s\"", argv[1]);
}

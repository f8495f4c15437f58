/* plugin_cmd.c — `loom plugin …` and the words /plugin shares with it
 * (plugin_cmd.h), through loom.h's loom_plugin_* functions. What a
 * manifest or a marketplace says (names, descriptions, errors quoting
 * them) is a repository's text: it is made terminal-safe before it is
 * printed.
 *
 * Single-threaded: `loom plugin` runs once and exits; /plugin runs on the
 * REPL's main thread between runs. */
#include "surfaces/cli/plugin_cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/termsafe.h"

enum { T_PLAIN, T_DIM, T_BOLD, T_RED, T_YELLOW, T_GREEN };

static void say(const plugin_out *o, int tone, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const plugin_out *o, int tone, const char *fmt, ...)
{
    loom_str s = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    char *safe = termsafe_dup(str_cstr(&s));
    o->line(o->ctx, tone, safe ? safe : "");
    free(safe);
    str_free(&s);
}

static const char USAGE[] =
    "usage: loom plugin list [--json]\n"
    "       loom plugin install NAME@MARKETPLACE | NAME | PATH\n"
    "       loom plugin enable NAME | disable NAME | remove NAME\n"
    "       loom plugin marketplace add SOURCE | list [--json] | remove NAME\n"
    "\n"
    "Plugins bring commands, agents, skills, hooks, MCP servers and output styles\n"
    "(a folder with .loom-plugin/plugin.json or Claude Code's .claude-plugin/plugin.json).\n"
    "A marketplace is a folder or a git repository with marketplace.json; SOURCE is\n"
    "its path, a git URL (https://, file://, git@…) or GitHub's owner/repo.\n"
    "Installed copies live in $LOOM_HOME/plugins; \"enabledPlugins\" in the user\n"
    "settings says which count. A plugin's hooks and MCP servers run only in a\n"
    "trusted workspace. Changes count from the next start. See docs/plugins.md.\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

static void count(loom_str *s, const json_t *p, const char *key, const char *one,
                  const char *many)
{
    json_int_t n = json_integer_value(json_object_get(p, key));
    if (!n)
        return;
    str_printf(s, "%s%lld %s", s->len ? " \xc2\xb7 " : "", (long long)n, n == 1 ? one : many);
}

static char *list_text(const loom_config *cfg, const plugin_out *o)
{
    loom_status st;
    char *text = loom_plugin_list_json(cfg, &st);
    if (!text)
        say(o, T_RED, "%s", st.message);
    return text;
}

static json_t *list_doc(const loom_config *cfg, const plugin_out *o)
{
    char *text = list_text(cfg, o);
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return doc;
}

static void show_warnings(const json_t *doc, const plugin_out *o)
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(doc, "warnings"), i, w)
        say(o, T_YELLOW, "warning: %s", json_string_value(w));
}

static int print_json(const loom_config *cfg, const plugin_out *o, const char *part)
{
    json_t *doc = list_doc(cfg, o);
    if (!doc)
        return 1;
    char *text = json_dumps(part ? json_object_get(doc, part) : doc, JSON_INDENT(2));
    o->line(o->ctx, T_PLAIN, text ? text : "null");
    free(text);
    json_decref(doc);
    return 0;
}

static int cmd_list(const loom_config *cfg, const plugin_out *o, bool json)
{
    if (json)
        return print_json(cfg, o, NULL);
    json_t *doc = list_doc(cfg, o);
    if (!doc)
        return 1;
    show_warnings(doc, o);
    const json_t *plugins = json_object_get(doc, "plugins");
    if (json_array_size(plugins) == 0) {
        say(o, T_DIM, "No plugins installed. Add a marketplace (loom plugin marketplace add "
                      "SOURCE), then: loom plugin install NAME@MARKETPLACE");
        json_decref(doc);
        return 0;
    }
    say(o, T_BOLD, "Plugins");
    size_t i;
    json_t *p;
    json_array_foreach(plugins, i, p) {
        const char *err = json_get_str(p, "error", NULL);
        bool on = json_is_true(json_object_get(p, "enabled"));
        const char *ver = json_get_str(p, "version", NULL);
        say(o, err ? T_RED : on ? T_GREEN : T_YELLOW, "  %s  %s%s%s", json_get_str(p, "id", "?"),
            err ? "broken" : on ? "enabled" : "disabled", ver ? "  " : "", ver ? ver : "");
        loom_str parts = LOOM_STR_INIT;
        count(&parts, p, "commands", "command", "commands");
        count(&parts, p, "agents", "agent", "agents");
        count(&parts, p, "skills", "skill", "skills");
        count(&parts, p, "hooks", "hook", "hooks");
        count(&parts, p, "mcp_servers", "MCP server", "MCP servers");
        count(&parts, p, "output_styles", "output style", "output styles");
        const char *desc = json_get_str(p, "description", NULL);
        if (desc)
            say(o, T_DIM, "    %s", desc);
        if (parts.len)
            say(o, T_DIM, "    %s", parts.ptr);
        str_free(&parts);
        if (err)
            say(o, T_RED, "    %s", err);
    }
    json_decref(doc);
    return 0;
}

static int cmd_marketplaces(const loom_config *cfg, const plugin_out *o, bool json)
{
    if (json)
        return print_json(cfg, o, "marketplaces");
    json_t *doc = list_doc(cfg, o);
    if (!doc)
        return 1;
    const json_t *ms = json_object_get(doc, "marketplaces");
    if (json_array_size(ms) == 0)
        say(o, T_DIM, "No marketplaces. Add one: loom plugin marketplace add SOURCE");
    else
        say(o, T_BOLD, "Marketplaces");
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m) {
        say(o, T_PLAIN, "  %s  %s  %s", json_get_str(m, "name", "?"), json_get_str(m, "kind", ""),
            json_get_str(m, "source", ""));
        const char *err = json_get_str(m, "error", NULL);
        if (err)
            say(o, T_RED, "    %s", err);
        size_t k;
        json_t *e;
        json_array_foreach(json_object_get(m, "plugins"), k, e) {
            const char *d = json_get_str(e, "description", NULL);
            say(o, T_DIM, "    %s%s%s", json_get_str(e, "name", "?"), d ? " \xe2\x80\x94 " : "",
                d ? d : "");
        }
    }
    json_decref(doc);
    return 0;
}

static int failed(const plugin_out *o, const loom_status *st)
{
    say(o, T_RED, "%s", st->message);
    return 1;
}

int plugin_cmd_run(const loom_config *cfg, int n, char *const *words, const plugin_out *o,
                   bool *changed)
{
    if (changed)
        *changed = false;
    bool json = false;
    const char *pos[4] = {0};
    int np = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(words[i], "--json"))
            json = true;
        else if (np < 4)
            pos[np++] = words[i];
        else
            np++;
    }
    const char *sub = np ? pos[0] : "list";
    loom_status st;
    if (!strcmp(sub, "list") && np <= 1)
        return cmd_list(cfg, o, json);
    if (!strcmp(sub, "install") && np == 2) {
        if (loom_plugin_install(cfg, pos[1], &st) != 0)
            return failed(o, &st);
        say(o, T_GREEN, "Installed %s and enabled it; it counts from the next start", pos[1]);
    } else if ((!strcmp(sub, "enable") || !strcmp(sub, "disable")) && np == 2) {
        bool on = sub[0] == 'e';
        if (loom_plugin_set_enabled(cfg, pos[1], on, &st) != 0)
            return failed(o, &st);
        say(o, T_GREEN, "%s %s; it counts from the next start", on ? "Enabled" : "Disabled",
            pos[1]);
    } else if ((!strcmp(sub, "remove") || !strcmp(sub, "uninstall")) && np == 2) {
        if (loom_plugin_remove(cfg, pos[1], &st) != 0)
            return failed(o, &st);
        say(o, T_GREEN, "Removed %s", pos[1]);
    } else if (!strcmp(sub, "marketplace") && np >= 2) {
        const char *verb = pos[1];
        if (!strcmp(verb, "list") && np == 2)
            return cmd_marketplaces(cfg, o, json);
        if (!strcmp(verb, "add") && np == 3) {
            char *name = NULL;
            if (loom_plugin_marketplace_add(cfg, pos[2], &name, &st) != 0)
                return failed(o, &st);
            say(o, T_GREEN, "Added marketplace %s; install from it: loom plugin install "
                            "NAME@%s", name, name);
            free(name);
            return 0; /* nothing installed changed */
        }
        if ((!strcmp(verb, "remove") || !strcmp(verb, "rm")) && np == 3) {
            if (loom_plugin_marketplace_remove(cfg, pos[2], &st) != 0)
                return failed(o, &st);
            say(o, T_GREEN, "Removed marketplace %s (its installed plugins stay)", pos[2]);
            return 0;
        }
        say(o, T_RED, "usage: plugin marketplace add SOURCE | list | remove NAME");
        return 2;
    } else {
        say(o, T_RED, "usage: plugin list | install SPEC | enable NAME | disable NAME | "
                      "remove NAME | marketplace add SOURCE | marketplace list");
        return 2;
    }
    if (changed)
        *changed = true;
    return 0;
}

/* ---- `loom plugin` -------------------------------------------------------------- */

static void to_stdio(void *ctx, int tone, const char *text)
{
    (void)ctx;
    if (tone == T_RED)
        fprintf(stderr, "loom plugin: %s\n", text);
    else
        printf("%s\n", text);
}

int plugin_cmd_main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
                      !strcmp(argv[1], "help"))) {
        fputs(USAGE, stdout);
        return 0;
    }
    loom_status st;
    loom_config *cfg = loom_config_new();
    if (loom_config_load_settings(cfg, &st) != 0) {
        fprintf(stderr, "loom plugin: %s\n", st.message);
        loom_config_free(cfg);
        return 1;
    }
    plugin_out o = {to_stdio, NULL};
    int rc = plugin_cmd_run(cfg, argc - 1, argv + 1, &o, NULL);
    if (rc == 2)
        fputs("(see loom plugin --help)\n", stderr);
    loom_config_free(cfg);
    return rc;
}

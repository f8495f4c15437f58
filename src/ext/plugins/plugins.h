/* plugins.h — plugins: folders that bring commands, agents, skills, hooks,
 * MCP servers and output styles together, the marketplaces they come
 * from, and which are installed and enabled (docs/plugins.md).
 *
 * A plugin is a folder with a manifest, .loom-plugin/plugin.json or Claude
 * Code's .claude-plugin/plugin.json accepted as is ({"name", "version",
 * "description", "author", "commands", "agents", "skills", "hooks",
 * "mcpServers", "outputStyles"}; the component keys may name other paths
 * or hold the config inline). Without them the default folders count:
 * commands/, agents/, skills/, output-styles/, hooks/hooks.json, .mcp.json.
 *
 * Installed plugins are copied under $LOOM_HOME/plugins/<marketplace>/<name>
 * and listed in $LOOM_HOME/plugins/installed.json; "enabledPlugins"
 * ({"name@marketplace": bool}) in the user settings says which count (the
 * project's settings may enable one only in a trusted workspace). A
 * plugin's hooks and MCP servers need the same workspace trust as the
 * project's own; its commands, agents, skills and styles are the user's
 * (they installed it).
 *
 * Pure functions over files; no state. */
#ifndef LOOM_EXT_PLUGINS_PLUGINS_H
#define LOOM_EXT_PLUGINS_PLUGINS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "ext/sources.h"

typedef struct plugin {
    char *name;             /* the manifest's name: what "plugin:" prefixes */
    char *id;               /* "name@marketplace" (or "name" installed from a path) */
    char *version, *description;    /* may be NULL */
    char *root;             /* the installed copy, absolute */
    char *marketplace;      /* may be NULL */
    bool enabled;
    /* Component folders (absolute; NULL when the plugin has none). */
    char *commands_dir, *agents_dir, *skills_dir, *styles_dir;
    json_t *hooks;          /* a settings-shaped "hooks" object, ${CLAUDE_PLUGIN_ROOT}
                               and ${LOOM_PLUGIN_ROOT} expanded; NULL: none */
    json_t *mcp_servers;    /* an "mcpServers" object, roots expanded; NULL: none */
    char *error;            /* why the plugin could not be read (then nothing of it counts) */
    json_t *warnings;       /* strings: what of a readable plugin was ignored, and why
                               (a second folder for one kind, an unknown path); NULL: none */
} plugin;

typedef struct plugin_set {
    plugin *v;
    size_t n;
    json_t *warnings;       /* strings: a malformed manifest names the file and the problem */
} plugin_set;

typedef struct plugins_opts {
    const char *home;               /* the Loom home; NULL: loom_home() */
    const json_t *user_settings;    /* for enabledPlugins (borrowed; may be NULL) */
    const json_t *project_settings; /* counted only when trusted */
    bool trusted;
} plugins_opts;

/* The installed plugins with their enabled state. Never fails for a bad
 * plugin (its error is set, a warning added). 0, or -1 with err when the
 * installed list itself is unreadable. Free with plugin_set_free. */
int plugins_load(const plugins_opts *o, plugin_set *out, loom_error *err);
void plugin_set_free(plugin_set *s);

/* The enabled plugins as ext_plugin_root rows (pointing into s) for
 * ext_dirs_for; *n gets the count. Caller frees the array only. */
ext_plugin_root *plugins_roots(const plugin_set *s, size_t *n);

/* Reads one plugin folder's manifest and components (for install and for
 * load). 0 or -1 with err naming the manifest and the problem. */
int plugin_read(const char *root, plugin *out, loom_error *err);
void plugin_clear(plugin *p);

#endif

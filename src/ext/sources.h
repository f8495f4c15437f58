/* sources.h — where extensions come from: the folders a kind of extension
 * (skills, commands, agents, output styles) is read from for one
 * workspace, in precedence order, and which of them are skipped and why.
 *
 * One list for every kind so the rules cannot drift apart:
 *   user      ~/.claude/<kind> (compat; $CLAUDE_CONFIG_DIR/<kind> when set),
 *             ~/.agents/<kind> (skills only),
 *             $LOOM_HOME/<kind>
 *   plugin    <plugin root>/<kind> of each enabled plugin (names are
 *             namespaced "plugin:name" by the caller, so they never shadow)
 *   project   <dir>/.claude/<kind> (compat), <dir>/.agents/<kind> (skills
 *             only, each directory from the repository root down to cwd),
 *             <cwd>/.loom/<kind>
 * Later folders win by name. A project folder counts only when the
 * workspace is trusted (and one above cwd only when that folder is trusted
 * too); an untrusted one that exists is skipped with a
 * notice naming it (a hostile repository does not get to define what a
 * skill or a command does). compat false drops the .claude folders.
 *
 * Pure: reads the file system (stat), no state. */
#ifndef LOOM_EXT_SOURCES_H
#define LOOM_EXT_SOURCES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* EXT_SCOPE_BUILTIN: shipped with Loom (ext/commands/builtin.c), no folder. */
typedef enum { EXT_SCOPE_USER, EXT_SCOPE_PLUGIN, EXT_SCOPE_PROJECT, EXT_SCOPE_BUILTIN } ext_scope;

typedef struct ext_dir {
    char *path;         /* absolute; exists and is a directory */
    ext_scope scope;
    char *plugin;       /* the plugin's name for EXT_SCOPE_PLUGIN, else NULL */
} ext_dir;

typedef struct ext_dirs {
    ext_dir *v;         /* lowest precedence first */
    size_t n;
} ext_dirs;

/* An enabled plugin's folders (ext/plugins/plugins.h fills these): its
 * root, and each kind's folder when its manifest names another one (NULL:
 * <root>/<kind>). */
typedef struct ext_plugin_root {
    const char *name;
    const char *root;
    const char *skills, *commands, *agents, *styles;
} ext_plugin_root;

typedef struct ext_source_opts {
    const char *cwd;            /* the workspace, absolute */
    const char *home;           /* the Loom home; NULL: loom_home() */
    const char *user_home;      /* for ~/.claude and ~/.agents; NULL: $HOME (and
                                   settings_claude_home() for .claude) */
    bool trusted;               /* the workspace's own folders count */
    /* The user settings (borrowed; may be NULL): a folder above cwd counts
     * only when it is itself trusted there (trust_workspace_trusted), so
     * trusting a project does not trust what a shared parent holds. NULL:
     * the walk trusts as trusted says. */
    const json_t *user_settings;
    bool claude_compat;         /* read the .claude folders too (default true) */
    const ext_plugin_root *plugins;
    size_t n_plugins;
} ext_source_opts;

/* The folders kind ("skills", "commands", "agents", "output-styles") is
 * read from, in precedence order (lowest first). Folders that do not exist
 * are left out. notices (may be NULL) gets one string per untrusted
 * project folder skipped: "skipped .claude/skills: the workspace is not
 * trusted (…)". Free with ext_dirs_free. */
void ext_dirs_for(const char *kind, const ext_source_opts *o, ext_dirs *out, json_t *notices);
void ext_dirs_free(ext_dirs *d);

/* How a notice or a listing names a scope: "user", "plugin", "project". */
const char *ext_scope_name(ext_scope s);

#endif

/* manage.h — changing which plugins are installed and enabled, and the
 * marketplaces they come from (`loom plugin …`, /plugin, loom.h's
 * loom_plugin_*): the files under $LOOM_HOME/plugins and the user
 * settings' "enabledPlugins".
 *
 *   $LOOM_HOME/plugins/installed.json        {"version": 1, "plugins": {"name@market":
 *                                             {"name", "marketplace"?, "root", "version"?,
 *                                              "source", "installedAt"}}}
 *   $LOOM_HOME/plugins/known_marketplaces.json  {"name": {"source", "kind"
 *                                             (directory|git), "root", "addedAt"}}
 *   $LOOM_HOME/plugins/<marketplace>/<name>  an installed copy
 *   $LOOM_HOME/plugins/_local/<name>         a copy installed from a folder's path
 *   $LOOM_HOME/plugins/_marketplaces/<name>  a git marketplace's clone
 * (a name never starts with '_', so the three cannot collide).
 *
 * Every file is rewritten atomically, other keys kept. A git source is
 * cloned with `git clone --depth 1` (no prompt for credentials). A copy
 * takes regular files and folders, keeps a link that stays inside the
 * plugin, refuses one that leaves it, and stops at the caps below.
 *
 * home NULL means loom_home(); settings_path NULL means the user settings
 * file (settings_user_path()). Not thread-safe against a concurrent
 * change of the same home (two `loom plugin` processes: the last write
 * wins, each write whole). */
#ifndef LOOM_EXT_PLUGINS_MANAGE_H
#define LOOM_EXT_PLUGINS_MANAGE_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/* A copy's limits: files, total bytes, one file's bytes, folder depth. */
#define PLUGIN_COPY_MAX_FILES 10000
#define PLUGIN_COPY_MAX_BYTES (200ull * 1024 * 1024)
#define PLUGIN_COPY_MAX_FILE_BYTES (50ull * 1024 * 1024)
#define PLUGIN_COPY_MAX_DEPTH 32
/* How long one git clone may take. */
#define PLUGIN_GIT_TIMEOUT_MS (5L * 60 * 1000)

/* <home>/plugins (caller frees). */
char *plugins_dir(const char *home);

/* installed.json as a document ({"version": 1, "plugins": {}} when absent).
 * -1 with err when it exists but cannot be read as one. */
int plugins_installed_read(const char *home, json_t **doc, loom_error *err);
int plugins_installed_write(const char *home, const json_t *doc, loom_error *err);

/* Sets enabledPlugins[id] in the settings file: state 1 true, 0 false, -1
 * removes the key. */
int plugins_settings_enable(const char *settings_path, const char *id, int state,
                            loom_error *err);

/* ---- marketplaces (marketplace.c) ---- */

/* A marketplace's file read from its root: {"name", "plugins": [{"name",
 * "source", "description"?, "version"?}], "metadata"?: {"pluginRoot"?}}
 * (.loom-plugin/marketplace.json, else .claude-plugin/marketplace.json).
 * 0 with *doc (caller frees), -1 with err naming the file and the problem
 * (not there, not JSON, no valid name, "plugins" not a list of entries
 * with a name and a source). */
int marketplace_read(const char *root, json_t **doc, loom_error *err);

/* Adds the marketplace at source: a local folder (recorded where it is),
 * or a git repository (a URL, a file:// URL, git@host:path, or a path
 * ending in .git), cloned under _marketplaces/<name>. Adding the same
 * source again refreshes it; another source under a taken name is an
 * error. *name_out (may be NULL; caller frees) gets its name. */
int marketplace_add(const char *home, const char *source, char **name_out, loom_error *err);

/* known_marketplaces.json as {"name": {…}} (caller frees); {} when absent. */
int marketplace_known(const char *home, json_t **doc, loom_error *err);

/* Removes a marketplace's record (and its clone). Installed plugins stay. */
int marketplace_remove(const char *home, const char *name, loom_error *err);

/* Where plugin name of marketplace market (NULL: the one marketplace
 * listing it) comes from: *entry (the marketplace's entry, caller frees),
 * *market_out (caller frees), *mroot (the marketplace's root, caller
 * frees). -1 with err: no such marketplace or plugin, or two list it. */
int marketplace_find(const char *home, const char *name, const char *market, json_t **entry,
                     char **market_out, char **mroot, loom_error *err);

/* ---- install (install.c) ---- */

/* Installs spec — "plugin@marketplace", "plugin", or a plugin folder's
 * path (one holding a '/', or "." ) — copies it into place, records it
 * and enables it in the settings file. *id_out (may be NULL; caller
 * frees) gets "name@marketplace" (or "name"). Installing again replaces
 * the copy. */
int plugin_install(const char *home, const char *settings_path, const char *spec,
                   const char *cwd, char **id_out, loom_error *err);

/* name: an id ("name@marketplace") or a name only one installed plugin
 * has. *id_out (may be NULL; caller frees) gets the id. */
int plugin_set_enabled(const char *home, const char *settings_path, const char *name,
                       bool enabled, char **id_out, loom_error *err);
int plugin_remove(const char *home, const char *settings_path, const char *name, char **id_out,
                  loom_error *err);

/* Copies the tree at src (a folder) to dst (which must not exist), under
 * the caps above; a link leaving src, a special file or a cap reached is
 * an error naming it (dst is then removed). ".git" is left out. */
int plugin_copy_tree(const char *src, const char *dst, loom_error *err);
/* rm -r of path, which must lie under below (a safety net); 0 or -1. */
int plugin_remove_tree(const char *below, const char *path, loom_error *err);

/* Runs `git clone --depth 1 -- url dst`. 0, or -1 with err holding git's
 * message. */
int plugin_git_clone(const char *url, const char *dst, loom_error *err);

#endif

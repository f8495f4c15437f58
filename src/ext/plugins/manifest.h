/* manifest.h — the pieces of reading a plugin that the other files of
 * ext/plugins (and the fuzz target) share: a manifest parsed from text,
 * the name rule, and reading a small JSON file under a size cap.
 *
 * Not for use outside src/ext/plugins and tests. No state; any thread. */
#ifndef LOOM_EXT_PLUGINS_MANIFEST_H
#define LOOM_EXT_PLUGINS_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "ext/plugins/plugins.h"

/* The most a manifest (plugin.json, marketplace.json) may weigh, and a
 * component's JSON file (hooks.json, .mcp.json): a repository's file, read
 * whole. */
#define PLUGIN_MANIFEST_MAX_BYTES (256u * 1024u)
#define PLUGIN_JSON_FILE_MAX_BYTES (1024u * 1024u)
/* The longest plugin or marketplace name. */
#define PLUGIN_NAME_MAX 64

/* A plugin's or a marketplace's name: lowercase letters, digits, '-', '_'
 * and '.', starting with a letter or digit, at most PLUGIN_NAME_MAX bytes,
 * never "__" (a plugin's MCP tools are mcp__plugin_<name>_<server>__<tool>,
 * so "__" would make the names ambiguous). */
bool plugin_name_valid(const char *name);

/* Reads a JSON object from path, at most cap bytes. 0 with *doc; 1 when
 * the file does not exist (*doc NULL); -1 with err naming the file and the
 * problem (too big, not JSON — with line and column —, not an object). */
int plugin_json_file(const char *path, size_t cap, json_t **doc, loom_error *err);

/* Parses manifest text (file names the manifest in messages; NULL text:
 * no manifest, the name is root's last component) for the plugin folder
 * root (absolute, existing), reading the component files it names under
 * root. 0 with out filled, or -1 with err naming the file and the problem
 * (out is then cleared). */
int plugin_manifest_parse(const char *root, const char *file, const char *text, size_t len,
                          plugin *out, loom_error *err);

/* A manifest's relative path ("./x/y") under root, made absolute with the
 * symlinks resolved; NULL with *why set when it is not "./…", climbs out
 * with "..", or resolves outside root (a link leaving the plugin). */
char *plugin_path_under(const char *root, const char *rel, const char **why);

#endif

/* fuzz_plugin_manifest.c — a plugin's manifest (ext/plugins/manifest.c)
 * and a marketplace's file (marketplace.c) over arbitrary bytes: both are
 * a repository's words. Neither may crash or leak. A manifest read must
 * give a valid name, the fuzz folder as root and every component folder
 * inside it — never a path a link or ".." led out of — or fail with a
 * message naming the manifest and leave the plugin empty; a marketplace
 * must give a valid name and entries with names and sources, or an error
 * naming its file. Any disagreement aborts.
 *
 * The plugin folder is made once: default commands/ and hooks/hooks.json,
 * a .mcp.json, and a link "out" to /tmp (outside). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "ext/plugins/manage.h"
#include "ext/plugins/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    loom_error err;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    file_mkdirs(path, 0700, &err);
    *slash = '/';
    file_write_atomic(path, text, strlen(text), 0600, &err);
}

static void make_root(void)
{
    if (root[0])
        return;
    char tmpl[] = "/tmp/loom-fuzz-plugin.XXXXXX";
    char *d = mkdtemp(tmpl);
    if (!d)
        abort();
    char real[64];
    if (!realpath(d, real))
        abort();
    snprintf(root, sizeof root, "%s", real);
    put("commands/a.md", "a\n");
    put("more/b.md", "b\n");
    put("hooks/hooks.json", "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", "
                            "\"command\": \"${CLAUDE_PLUGIN_ROOT}/s\"}]}]}}");
    put(".mcp.json", "{\"mcpServers\": {\"m\": {\"command\": \"x\"}}}");
    char link[128];
    snprintf(link, sizeof link, "%s/out", root);
    if (symlink("/tmp", link) != 0)
        abort();
}

static void check_dir(const char *d)
{
    size_t n = strlen(root);
    if (d && (strncmp(d, root, n) != 0 || (d[n] != '/' && d[n] != '\0')))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    make_root();
    plugin p;
    loom_error err;
    memset(&err, 0, sizeof err);
    if (plugin_manifest_parse(root, "fuzz/plugin.json", (const char *)data, size, &p, &err) ==
        0) {
        if (!plugin_name_valid(p.name) || strcmp(p.root, root) != 0)
            abort();
        check_dir(p.commands_dir);
        check_dir(p.agents_dir);
        check_dir(p.skills_dir);
        check_dir(p.styles_dir);
        if ((p.hooks && !json_is_object(p.hooks)) ||
            (p.mcp_servers && !json_is_object(p.mcp_servers)))
            abort();
        plugin_clear(&p);
    } else {
        if (p.name || p.root || p.hooks || !err.message[0] ||
            (!strstr(err.message, "fuzz/plugin.json") && !strstr(err.message, root)))
            abort();
    }

    /* The same bytes as a marketplace's file. */
    char folder[128], path[160];
    snprintf(folder, sizeof folder, "%s/.loom-plugin", root);
    snprintf(path, sizeof path, "%s/marketplace.json", folder);
    loom_error werr;
    file_mkdirs(folder, 0700, &werr);
    if (file_write_atomic(path, data, size, 0600, &werr) != 0)
        return 0;
    json_t *doc;
    if (marketplace_read(root, &doc, &err) == 0) {
        if (!plugin_name_valid(json_string_value(json_object_get(doc, "name"))))
            abort();
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(doc, "plugins"), i, e) {
            const json_t *src = json_object_get(e, "source");
            if (!plugin_name_valid(json_string_value(json_object_get(e, "name"))) ||
                (!json_is_string(src) && !json_is_object(src)))
                abort();
        }
        json_decref(doc);
    } else if (!strstr(err.message, "marketplace.json")) {
        abort();
    }
    unlink(path);
    return 0;
}

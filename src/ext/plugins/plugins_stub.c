/* plugins_stub.c — TEMPORARY: no plugins, so the wiring builds before
 * ext/plugins lands. The plugins helper deletes this file. */
#include <stdlib.h>
#include <string.h>

#include "ext/plugins/plugins.h"

int plugins_load(const plugins_opts *o, plugin_set *out, loom_error *err)
{
    (void)o; (void)err;
    memset(out, 0, sizeof *out);
    out->warnings = json_array();
    return 0;
}
void plugin_set_free(plugin_set *s) { json_decref(s->warnings); free(s->v); memset(s, 0, sizeof *s); }
ext_plugin_root *plugins_roots(const plugin_set *s, size_t *n) { (void)s; *n = 0; return NULL; }
int plugin_read(const char *root, plugin *out, loom_error *err)
{
    (void)root; memset(out, 0, sizeof *out);
    return loom_error_set(err, LOOM_ERR_INTERNAL, "plugins are not built yet");
}
void plugin_clear(plugin *p) { (void)p; }

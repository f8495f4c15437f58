/* styles_stub.c — TEMPORARY: no output styles, so the wiring builds
 * before ext/styles lands. The styles helper deletes this file. */
#include <stdlib.h>

#include "ext/styles/styles.h"

struct style_set { int unused; };
style_set *style_set_load(const ext_source_opts *o, loom_error *err) { (void)o; (void)err; return calloc(1, sizeof(style_set)); }
void style_set_free(style_set *s) { free(s); }
size_t style_set_count(const style_set *s) { (void)s; return 0; }
const output_style *style_set_at(const style_set *s, size_t i) { (void)s; (void)i; return NULL; }
const output_style *style_set_find(const style_set *s, const char *n) { (void)s; (void)n; return NULL; }
size_t style_set_warning_count(const style_set *s) { (void)s; return 0; }
const char *style_set_warning(const style_set *s, size_t i) { (void)s; (void)i; return NULL; }

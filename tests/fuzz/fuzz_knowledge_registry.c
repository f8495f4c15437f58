/* fuzz_knowledge_registry.c — libFuzzer target for knowledge_sources.yaml
 * (ext/knowledge/registry.c over base/frontmatter's yaml_mapping_parse):
 * whatever the file holds, the reader must not crash or leak; it gives a
 * registry whose every source has an id, a known type, a trust tier and a
 * scope (a filesystem one at least one absolute path), or NULL with a
 * LOOM_ERR_CONFIG message naming the file. Any disagreement aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/frontmatter.h"
#include "ext/knowledge/registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *doc = yaml_mapping_parse((const char *)data, size, &err);
    if (!doc) {
        if (err.code == 0 || !err.message[0])
            abort();
        return 0;
    }
    knowledge_registry *r = knowledge_registry_new();
    loom_error_clear(&err);
    if (knowledge_registry_add_json(r, doc, "fuzz.yaml", "/base", &err) != 0) {
        if (err.code != LOOM_ERR_CONFIG || strncmp(err.message, "fuzz.yaml: ", 11) != 0 || r->n)
            abort();
    }
    for (size_t i = 0; i < r->n; i++) {
        const knowledge_src *s = &r->v[i];
        if (!s->id || !s->trust_tier || !s->scope || (int)s->type < 0 || s->type > KSRC_MCP)
            abort();
        if (s->type == KSRC_FILESYSTEM && (!s->paths || !s->paths[0] || s->paths[0][0] != '/'))
            abort();
        json_decref(knowledge_src_json(s));
        (void)knowledge_src_quotable(r, s);
        (void)knowledge_src_requires_citation(r, s);
    }
    knowledge_registry_free(r);
    json_decref(doc);
    return 0;
}

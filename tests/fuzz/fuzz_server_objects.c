/* fuzz_server_objects.c — the config files of loom serve
 * (src/surfaces/server/config/) from arbitrary bytes: a config folder is
 * written by people and read by a server. The first byte picks the file
 * kind (p profiles, o policies, k knowledge sources, anything else
 * tenants), the rest is the YAML text, loaded through the same reader and
 * checkers as objects_load_all. Errors are fine; a crash, a leak, an error
 * without "FILE:LINE" or a loaded set that breaks objects.h's promises is
 * not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/config/config_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_loaded(const server_objects *o)
{
    for (size_t i = 0; i < o->n_profiles; i++) {
        const agent_profile *p = &o->profiles[i];
        if (!p->json || p->max_depth < 0 || p->max_depth > 16 || p->max_turns < 1 ||
            objects_profile(o, p->id, p->tenant_id) != p)
            abort();
    }
    for (size_t i = 0; i < o->n_sources; i++) {
        const knowledge_source *s = &o->sources[i];
        if (!s->json || !s->scope || !s->trust_tier || (s->path && s->path[0] != '/'))
            abort();
    }
    if (o->n_tenants == 0)
        abort();
    for (size_t i = 0; i < o->n_tenants; i++) {
        const tenant_config *t = &o->tenants[i];
        if (t->n_projects == 0)
            abort();
        for (size_t j = 0; j < t->n_projects; j++)
            if (t->projects[j].workspace[0] != '/')
                abort();
    }
    for (size_t i = 0; i < o->n_tokens; i++)
        if (strlen(o->tokens[i].sha256_hex) != 64 || !objects_tenant(o, o->tokens[i].tenant_id))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char kind = data[0] == 'p' || data[0] == 'o' || data[0] == 'k' ? (char)data[0] : 't';
    srv_error err = {0};
    server_objects *o = cfg_load_text(kind, (const char *)data + 1, size - 1, &err);
    if (o) {
        check_loaded(o);
        objects_free(o);
    } else if (err.code != LOOM_ERR_CONFIG || !strstr(err.message, ".yaml:")) {
        abort();
    }
    srv_error_clear(&err);
    return 0;
}

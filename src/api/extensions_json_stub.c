/* extensions_json_stub.c — TEMPORARY (branch h15-compat only): a weak
 * loom_agent_extensions_json answering NULL ("no extensions report yet"),
 * so `loom doctor` links before api/extensions.c lands. The lead's strong
 * definition replaces it; delete this file when merging.
 * No state; thread-safe. */
#include "api/internal.h"

__attribute__((weak)) char *loom_agent_extensions_json(loom_agent *agent)
{
    (void)agent;
    return NULL;
}

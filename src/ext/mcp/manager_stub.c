/* manager_stub.c — TEMPORARY: DELETE when manager.c lands.
 *
 * Weak stand-ins for the manager functions the MCP tools call, so the
 * tools branch links before the manager exists. Each fails or returns
 * nothing; manager.c's strong definitions replace them. No state, any
 * thread.
 */
#include <stddef.h>

#include "ext/mcp/manager.h"

__attribute__((weak)) json_t *mcp_manager_request(mcp_manager *m, const char *server,
                                                  const char *method, json_t *params,
                                                  const mcp_call_opts *opts, loom_error *err)
{
    (void)m;
    (void)opts;
    json_decref(params);
    loom_error_set(err, LOOM_ERR_INTERNAL, "MCP server \"%s\": %s: no MCP manager (stub)",
                   server ? server : "", method ? method : "");
    return NULL;
}

__attribute__((weak)) const char *const *mcp_manager_servers(mcp_manager *m, size_t *n)
{
    (void)m;
    if (n)
        *n = 0;
    return NULL;
}

__attribute__((weak)) bool mcp_manager_offers(mcp_manager *m, const char *server, const char *cap)
{
    (void)m;
    (void)server;
    (void)cap;
    return false;
}

__attribute__((weak)) const mcp_tool **mcp_manager_deferred(mcp_manager *m, size_t *n)
{
    (void)m;
    if (n)
        *n = 0;
    return NULL;
}

__attribute__((weak)) void mcp_manager_load_deferred(mcp_manager *m, const char *const *names,
                                                     size_t n)
{
    (void)m;
    (void)names;
    (void)n;
}

__attribute__((weak)) const char *mcp_manager_spill_dir(const mcp_manager *m)
{
    (void)m;
    return NULL;
}

__attribute__((weak)) int64_t mcp_manager_max_output_tokens(const mcp_manager *m)
{
    (void)m;
    return 25000;
}

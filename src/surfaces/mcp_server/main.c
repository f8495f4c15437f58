/* main.c — loom-mcp-server, what `loom mcp serve` runs: Loom as an MCP
 * server over stdio (the default) or Streamable HTTP (--http), offering
 * Loom's built-in tools and the agent tool (docs/mcp-server.md). */
#include "surfaces/mcp_server/mcps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "Usage: loom mcp serve [options]\n"
    "Loom as an MCP server: its built-in tools, each call decided by Loom's permission\n"
    "pipeline under one mode, and the tool \"agent\", which runs a whole task.\n"
    "\n"
    "Options:\n"
    "  --http HOST:PORT        Streamable HTTP at http://HOST:PORT/mcp instead of stdio\n"
    "                          (loopback only unless a token is set; PORT 0: any)\n"
    "  --token TOKEN           require Authorization: Bearer TOKEN (also LOOM_MCP_TOKEN)\n"
    "  --allow-origin ORIGIN   accept this Origin too (repeatable; loopback ones always are)\n"
    "  --permission-mode MODE  default | acceptEdits | plan | auto | dontAsk |\n"
    "                          bypassPermissions (default: default; a call that would\n"
    "                          ask a person is refused: no one can answer)\n"
    "  --cwd DIR               the working directory (default: the current one)\n"
    "  --model MODEL           the agent tool's model (default: the settings')\n"
    "  --no-agent-tool         offer only the built-in tools\n"
    "  --port-file FILE        write the HTTP port chosen there\n"
    "  -h, --help              this text\n";

int main(int argc, char **argv)
{
    mcps_options o = {0};
    mcps_http_options h = {0};
    const char *http = NULL;
    const char **origins = calloc((size_t)argc + 1, sizeof *origins);
    size_t n_origins = 0;
    h.token = getenv("LOOM_MCP_TOKEN");
    if (h.token && !*h.token)
        h.token = NULL;
    const char *ps = getenv("LOOM_MCP_PAGE_SIZE");
    if (ps && atoi(ps) > 0)
        o.page_size = (size_t)atoi(ps);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            free(origins);
            return 0;
        } else if (!strcmp(a, "--no-agent-tool")) {
            o.no_agent_tool = true;
            continue;
        } else if (!strcmp(a, "--http"))
            slot = &http;
        else if (!strcmp(a, "--token"))
            slot = &h.token;
        else if (!strcmp(a, "--permission-mode"))
            slot = &o.permission_mode;
        else if (!strcmp(a, "--cwd"))
            slot = &o.cwd;
        else if (!strcmp(a, "--model"))
            slot = &o.model;
        else if (!strcmp(a, "--port-file"))
            slot = &h.port_file;
        else if (!strcmp(a, "--allow-origin"))
            slot = &origins[n_origins++];
        else {
            fprintf(stderr, "loom mcp serve: unknown option %s\n\n%s", a, USAGE);
            free(origins);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "loom mcp serve: %s needs a value\n", a);
            free(origins);
            return 2;
        }
        *slot = argv[++i];
    }
    h.allowed_origins = origins;
    if (o.permission_mode && !strcmp(o.permission_mode, "delegate")) {
        fprintf(stderr, "loom mcp serve: --permission-mode delegate needs a person to "
                        "delegate to; use default, acceptEdits, dontAsk or bypassPermissions\n");
        free(origins);
        return 2;
    }
    mcps_server *srv = mcps_server_new(&o, true);
    if (!srv) {
        free(origins);
        return 1;
    }
    int rc;
    if (http) {
        char host[256];
        const char *colon = strrchr(http, ':');
        char *end = NULL;
        long port = colon ? strtol(colon + 1, &end, 10) : -1;
        if (!colon || colon == http || (size_t)(colon - http) >= sizeof host || !end ||
            *end || port < 0 || port > 65535) {
            fprintf(stderr, "loom mcp serve: --http takes HOST:PORT (127.0.0.1:8765), not %s\n",
                    http);
            mcps_server_free(srv);
            free(origins);
            return 2;
        }
        memcpy(host, http, (size_t)(colon - http));
        host[colon - http] = '\0';
        h.host = host;
        h.port = (unsigned)port;
        rc = mcps_http_serve(srv, &h);
    } else {
        rc = mcps_stdio_serve(srv);
    }
    mcps_server_free(srv);
    free(origins);
    return rc;
}

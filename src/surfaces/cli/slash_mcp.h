/* slash_mcp.h — the REPL's MCP parts: /mcp (each server's state, counts and
 * error; reconnect and approve), the start-up question for project servers
 * that need approval, and whether a line is a server prompt's command.
 * Through loom.h only; the main thread, between runs. */
#ifndef LOOM_CLI_SLASH_MCP_H
#define LOOM_CLI_SLASH_MCP_H

#include <stdbool.h>

#include "surfaces/cli/slash_host.h"

/* /mcp, /mcp reconnect NAME, /mcp approve NAME. */
void slash_mcp(slash_host *h, const char *args);
/* Asks, for each project server that needs approval, whether to start it
 * (ask returns the typed line, malloc'd, or NULL at end of input). */
void slash_mcp_ask_approvals(slash_host *h, char *(*ask)(void *ctx, const char *prompt),
                             void *ctx);
/* "/mcp__server__prompt …": a server's prompt, sent as the goal. */
bool slash_is_mcp_prompt(const char *line);

#endif

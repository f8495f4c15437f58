/* mcp_cmd.h — the `loom mcp` subcommand: list, get, add, add-json and
 * remove MCP servers (docs/mcp.md, "Configuration"), with Claude Code's
 * syntax. */
#ifndef LOOM_CLI_MCP_CMD_H
#define LOOM_CLI_MCP_CMD_H

/* argv[0] is "mcp". Returns the exit status: 0 done, 1 failed, 2 usage. */
int mcp_cmd_main(int argc, char **argv);

#endif

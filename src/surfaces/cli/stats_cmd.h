/* stats_cmd.h — `loom stats [--json] [--since DATE] [--by day|model|project|agent]`:
 * usage, cost and tool failures over the session files (docs/cli.md). */
#ifndef LOOM_CLI_STATS_CMD_H
#define LOOM_CLI_STATS_CMD_H

int stats_cmd_main(int argc, char **argv);

#endif

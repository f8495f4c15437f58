/* memory_cmd.h — `loom memory [--json] [--cwd DIR] [--recalls N]`: the
 * project's memory entries (and E1's pattern and failure files), the files
 * that are not entries and why, and the last recalls with why each entry
 * was chosen (docs/memory.md, docs/cli.md). */
#ifndef LOOM_CLI_MEMORY_CMD_H
#define LOOM_CLI_MEMORY_CMD_H

int memory_cmd_main(int argc, char **argv);

#endif

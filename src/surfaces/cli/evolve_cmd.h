/* evolve_cmd.h — `loom evolve review|audit|stats`: self-evolution's
 * proposals, constraint audit and metrics (docs/evolve.md, docs/cli.md). */
#ifndef LOOM_CLI_EVOLVE_CMD_H
#define LOOM_CLI_EVOLVE_CMD_H

int evolve_cmd_main(int argc, char **argv);

#endif

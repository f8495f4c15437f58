/* sibling_cmd.h — the subcommands that are programs of their own, run the
 * way git runs git-<name>: `loom serve` is loom-serve (the runtime server,
 * which links libmicrohttpd and SQLite the terminal agent has no use for).
 * A new one is a row in main.c's dispatch, a program name here. */
#ifndef LOOM_CLI_SIBLING_CMD_H
#define LOOM_CLI_SIBLING_CMD_H

/* Execs program with argv[1..] (argv[0] is replaced by program). Returns
 * only when it cannot be run (127, after a message on stderr). */
int sibling_cmd_exec(const char *program, int argc, char **argv);

#endif

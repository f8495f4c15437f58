/* serve_cmd.h — `loom serve …`: runs the runtime server, the loom-serve
 * program, the way git runs git-<name>. */
#ifndef LOOM_CLI_SERVE_CMD_H
#define LOOM_CLI_SERVE_CMD_H

/* argv[0] is "serve". Returns only when loom-serve cannot be run (127). */
int serve_cmd_main(int argc, char **argv);

#endif

/* signal_cmd.h — `loom signal SESSION [NAME]`: hands an external signal to
 * the heartbeat of the run working on a session (docs/heartbeat.md). */
#ifndef LOOM_CLI_SIGNAL_CMD_H
#define LOOM_CLI_SIGNAL_CMD_H

int signal_cmd_main(int argc, char **argv);

#endif

/* sandbox_cmd.h — `loom sandbox [--allow-network] [--write PATH]… -- CMD ARGS…`:
 * runs one command under the sandbox policy of the current settings, with the
 * current directory as the workspace. */
#ifndef LOOM_CLI_SANDBOX_CMD_H
#define LOOM_CLI_SANDBOX_CMD_H

/* argv[0] is "sandbox". Does not return when the command starts (the
 * process becomes it, so its exit status is ours); otherwise returns 125 when
 * loom sandbox itself failed (usage, settings, unsupported and refused) or
 * 126/127 when the command could not be executed, as a shell would. */
int sandbox_cmd_main(int argc, char **argv);

#endif

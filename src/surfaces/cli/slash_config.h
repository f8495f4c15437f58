/* slash_config.h — /config (the effective settings, which layer set each
 * key; `/config set KEY VALUE` writes the workspace's local settings and
 * reopens the agent) and /doctor (`loom doctor`'s report for the REPL's
 * agent). docs/repl.md. Through loom.h; the main thread, between runs. */
#ifndef LOOM_CLI_SLASH_CONFIG_H
#define LOOM_CLI_SLASH_CONFIG_H

#include "surfaces/cli/slash_host.h"

/* /config [set KEY VALUE | unset KEY] */
void slash_config(slash_host *r, const char *args);
/* /doctor */
void slash_doctor(slash_host *r, const char *args);

#endif

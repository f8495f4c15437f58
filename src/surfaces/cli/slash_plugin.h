/* slash_plugin.h — the REPL's /plugin: `loom plugin`'s words (list,
 * install, enable, disable, remove, marketplace add|list|remove) on the
 * user's plugins, and a change applied at once by reopening the session
 * in a new agent (slash_host's reopen). Through loom.h only; the main
 * thread, between runs. */
#ifndef LOOM_CLI_SLASH_PLUGIN_H
#define LOOM_CLI_SLASH_PLUGIN_H

#include "surfaces/cli/slash_host.h"

void slash_plugin(slash_host *h, const char *args);

#endif

/* setup.h — turning the command line into a config, an agent's config and
 * an open session: the part the headless mode and the REPL share, so both
 * honour the same flags the same way. */
#ifndef LOOM_CLI_SETUP_H
#define LOOM_CLI_SETUP_H

#include <stdbool.h>

#include "loom.h"
#include "surfaces/cli/options.h"

/* CLI flags become config options; settings files fill what flags left.
 * interactive says whether a person can answer questions. model, when not
 * NULL, replaces opt->model (the REPL's /model). Returns a config the caller
 * frees, or NULL with st set. */
loom_config *setup_config(const cli_options *opt, bool interactive, const char *model,
                          loom_status *st);

/* --mcp-config values (n of them) and --strict-mcp-config as the config
 * options mcp_config and strict_mcp_config. 0, or -1 with st set. */
int setup_mcp_options(loom_config *cfg, const char *const *configs, int n, bool strict,
                      loom_status *st);

/* Opens the session the flags ask for: --resume ID, --continue (either one
 * optionally --fork-session'ed), or a new one. NULL with st set. */
loom_session *setup_session(const cli_options *opt, loom_agent *agent, loom_status *st);

#endif

/* trust_prompt.h — what the terminal says about workspace trust and loose
 * permission modes at start: the REPL's trust question (docs/repl.md,
 * "Workspace trust") and the one-line mode notice both surfaces print. */
#ifndef LOOM_CLI_TRUST_PROMPT_H
#define LOOM_CLI_TRUST_PROMPT_H

#include "loom.h"
#include "surfaces/cli/options.h"

/* The trust question for a config loaded untrusted whose folder settings
 * said something that was ignored (asked only then, and only on a
 * terminal). Returns the config to use: cfg itself when the answer is no
 * (or the question was not asked), or — after "y" recorded the folder in the
 * user settings — a new config loaded trusted (cfg is freed). NULL with st
 * set when that reload fails. */
loom_config *trust_prompt_ask(const cli_options *opt, loom_config *cfg, loom_status *st);

/* A sentence for a permission mode a person must always see (plan,
 * acceptEdits, bypassPermissions, fullAccess), or NULL for the others. */
const char *trust_prompt_mode_notice(const char *mode);

#endif

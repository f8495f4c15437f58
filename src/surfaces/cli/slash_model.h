/* slash_model.h — /model and /cost: the model table (aliases → ids, window,
 * dated price) with the current model marked, switching models, and the
 * conversation's tokens and dollars (docs/repl.md, docs/providers.md).
 * Through loom.h; the main thread, between runs. */
#ifndef LOOM_CLI_SLASH_MODEL_H
#define LOOM_CLI_SLASH_MODEL_H

#include "surfaces/cli/slash_host.h"

/* /model [NAME] */
void slash_model(slash_host *r, const char *args);
/* /cost */
void slash_cost(slash_host *r, const char *args);

#endif

/* slash_agents.h — the REPL's sub-agent commands: /agents (the catalog the
 * Agent tool spawns from, and the session's agents running or ended),
 * /agents show ID, /agents stop ID, /agents merge, and the per-agent rows
 * /cost adds after a run that spawned. Through loom.h only; the main
 * thread, between runs. */
#ifndef LOOM_CLI_SLASH_AGENTS_H
#define LOOM_CLI_SLASH_AGENTS_H

#include "surfaces/cli/slash_host.h"

/* /agents [show ID | stop ID | merge]. */
void slash_agents(slash_host *h, const char *args);
/* /cost's breakdown of the last run by agent (h->last_by_agent); nothing
 * when no sub-agent ran in it. */
void slash_agents_cost(slash_host *h);

#endif

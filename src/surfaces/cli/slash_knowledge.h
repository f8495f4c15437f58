/* slash_knowledge.h — /knowledge: the session's external knowledge — the
 * configured sources, the active questions, the evidence packs (summary,
 * facts, conflicts) and their citations — through
 * loom_session_knowledge_json (docs/knowledge.md). Main thread. */
#ifndef LOOM_CLI_SLASH_KNOWLEDGE_H
#define LOOM_CLI_SLASH_KNOWLEDGE_H

#include "surfaces/cli/slash_host.h"

void slash_knowledge(slash_host *r, const char *args);

#endif

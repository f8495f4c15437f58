/* slash_context.h — the REPL's context commands: /compact, /context,
 * /events, /memory and the `# text` line that adds to ./AGENTS.md. They go
 * through loom_session_compact, loom_session_context_json,
 * loom_session_events_json and loom_session_remember (docs/context.md,
 * docs/heartbeat.md); docs/repl.md describes them. */
#ifndef LOOM_CLI_SLASH_CONTEXT_H
#define LOOM_CLI_SLASH_CONTEXT_H

#include <stdbool.h>

#include "surfaces/cli/slash_host.h"

/* /compact [instructions]: summarizes the history now. */
void slash_compact(slash_host *r, const char *args);
/* /context: what the next request would hold, partition by partition. */
void slash_context(slash_host *r, const char *args);
/* /events: the heartbeat's events in working memory, with their state. */
void slash_events(slash_host *r, const char *args);
/* /memory [edit]: the memory files loaded, and how to change them. */
void slash_memory(slash_host *r, const char *args);

/* A submitted line that is a memory note: one line starting with a single
 * '#' (not "##…", not "#!…"). */
bool slash_is_memory_line(const char *line);
/* Adds text (the line after its '#') to ./AGENTS.md, in force from the next
 * message on. */
void slash_remember(slash_host *r, const char *text);

#endif

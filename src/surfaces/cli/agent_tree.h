/* agent_tree.h — the sub-agents of a run as the terminal shows them: one
 * line per running agent under the spinner,
 *   ⎿ reviewer (code-reviewer) · Bash · 12.3k tokens · 8s
 * indented by depth, fed by agent.spawned / agent.progress /
 * agent.completed and by the tool events a sub-agent's run forwards (their
 * payload carries agent_id); an ended agent leaves the tree and gives one
 * summary line instead. Also: telling a forwarded event from the run's own.
 *
 * Owns its copies of names; never writes to the terminal itself (the REPL
 * and print mode decide where lines go). One thread at a time: the one
 * draining the run's events. */
#ifndef LOOM_CLI_AGENT_TREE_H
#define LOOM_CLI_AGENT_TREE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/str.h"
#include "loom.h"

typedef struct agent_tree agent_tree;

agent_tree *agent_tree_new(void);
void agent_tree_free(agent_tree *t);

/* agent.spawned's payload: a new line (now_ms: the clock its elapsed time
 * counts from). A second spawned for a known id only refreshes it. */
void agent_tree_spawned(agent_tree *t, const json_t *payload, int64_t now_ms);
/* agent.progress's payload: the agent's current tool, tokens and elapsed
 * time (which resets its clock: now_ms minus elapsed_ms). */
void agent_tree_progress(agent_tree *t, const json_t *payload, int64_t now_ms);
/* A forwarded tool.started (tool set) or tool.finished (tool NULL) of the
 * agent agent_id. */
void agent_tree_tool(agent_tree *t, const char *agent_id, const char *tool);
/* agent.completed's payload: the agent leaves the tree; its summary line
 * ("✓ reviewer (code-reviewer) completed · 3 tool uses · 12.3k tokens ·
 * 8.1s", plain text, terminal-safe, no newline) is appended to summary.
 * Returns whether the agent was in the tree (a summary is given either way). */
bool agent_tree_completed(agent_tree *t, const json_t *payload, loom_str *summary);
/* Running agents in the tree. */
size_t agent_tree_count(const agent_tree *t);
/* The name the tree knows agent_id by ("reviewer"), or NULL. */
const char *agent_tree_name(const agent_tree *t, const char *agent_id);
/* The tree's lines, each cut to cols characters, joined by '\n' (no final
 * newline), appended to out; nothing when no agent runs. Terminal-safe. */
void agent_tree_render(const agent_tree *t, int64_t now_ms, int cols, loom_str *out);

/* The agent_id a sub-agent's forwarded event carries in its payload, or
 * NULL for the run's own events (and for agent.* events, whose agent_id
 * names the agent they are about). Returns a pointer into doc. */
const char *agent_tree_event_agent(const loom_event *ev, const json_t *doc);
/* For a token.delta, whether it came from a sub-agent, without parsing
 * every token: only text holding "agent_id" is looked at closely. */
bool agent_tree_token_from_agent(const loom_event *ev);

/* "12.3k tokens · 8.1s"-style pieces. */
long long agent_tree_usage_tokens(const json_t *usage);

#endif

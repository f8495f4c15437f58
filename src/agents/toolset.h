/* toolset.h — a sub-agent's tool registry: the parent's tools filtered by
 * its role and agent file, its own MCP tools, and the tools only
 * sub-agents have (StructuredOutput).
 *
 * Filtering is by the tool-name part of the rule strings of the one rule
 * engine ("Bash(git:*)" names Bash; "mcp__github__*" every tool of that
 * server); a rule's content part is the pipeline's to enforce (through
 * governance_child's tool_allow). Read-only roles keep only read-only and
 * local-state tools, without Agent. Threading: builds on the caller's
 * thread; the registry is read-only afterwards.
 */
#ifndef LOOM_AGENTS_TOOLSET_H
#define LOOM_AGENTS_TOOLSET_H

#include <stdbool.h>

#include "agents/catalog.h"
#include "base/error.h"
#include "base/str.h"
#include "tools/registry.h"

struct mcp_manager;

typedef struct agent_toolset_opts {
    const tool_registry *parent;     /* the parent run's tools (Agent, SendMessage come from it) */
    const agent_def *def;            /* NULL: every tool */
    bool read_only;                  /* the role allows no side effect (Explore, Plan) */
    struct mcp_manager *mcp;         /* the child's own MCP connections; NULL: none */
    int64_t window_tokens;           /* for the MCP tools' deferral */
    const tool_def *extra;           /* StructuredOutput; NULL: none */
    const tool_def *publish;         /* Publish (the session has a bus); NULL: none */
} agent_toolset_opts;

/* The child's registry (new): the parent's non-MCP tools that pass the
 * filters in their order, then the MCP tools that pass, then extra. The
 * MCP servers' instructions go to instructions (may be NULL). NULL with
 * err on a failure to register. */
tool_registry *agent_toolset_build(const agent_toolset_opts *o, loom_str *instructions,
                                   loom_error *err);

/* Whether a tool named name passes the name part of the rules (NULL:
 * none). Exposed for the unit test. */
bool agent_toolset_rule_names(const char *const *rules, const char *name);
/* Whether tool def passes o's filters (role, tools, disallowed). */
bool agent_toolset_allows(const agent_toolset_opts *o, const tool_def *def);

#endif

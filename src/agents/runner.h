/* runner.h — one sub-agent's lifecycle: prepare (checks, SubagentStart,
 * resources), execute (a loop run to its end; again later = resume), and
 * release (the single cleanup), plus the result the parent's Agent call
 * gets.
 *
 * Resources a child owns while it holds them (agent_resources): its
 * file-state cache (a clone of the parent's), task registry, todo list,
 * working memory, MCP connections (a clone of the session's), governance
 * (governance_child), sidechain transcript, tool registry and contexts.
 * agent_release frees all of them in a fixed order; the node itself stays
 * in the session (tree.h's owner rule), so a finished agent can be resumed:
 * agent_execute on a node without resources builds them again and opens
 * its sidechain where it ended.
 *
 * Threading: prepare runs on the parent's tool-call thread; execute and
 * release on whichever thread runs the child (the same tool-call thread
 * for a foreground agent, background.c's thread for a background one).
 * Two executes of one node never overlap (the state is RUNNING between).
 */
#ifndef LOOM_AGENTS_RUNNER_H
#define LOOM_AGENTS_RUNNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "agents/tree.h"
#include "base/error.h"
#include "runtime/loop.h"
#include "tools/tool.h"

struct mcp_manager;
struct governance;
struct agent_worktree;

/* What the Agent call asked for (agent_tool.c parses the input into it;
 * the strings are borrowed from the input for the prepare call only). */
typedef struct agent_request {
    const char *description;
    const char *prompt;
    const char *subagent_type;       /* NULL: "general-purpose" */
    const char *model;               /* NULL/"inherit": the def's, else the parent's */
    const char *name;                /* NULL: none */
    bool background;                 /* run_in_background (or the def's background: true) */
    bool isolation_worktree;         /* isolation: "worktree" (or the def's) */
    const json_t *output_schema;     /* NULL: the def's, else free text */
    int64_t share_tokens;            /* share.tokens; 0: none */
    double share_usd;                /* share.usd; 0: none */
    const json_t *input;             /* the whole Agent input (SubagentStart sees it) */
} agent_request;

/* What a child holds (node->res). The first group is released by
 * agent_release (in the reverse order of its making) and built again by a
 * resume; the rest lives until agents_session_free. runner.c's alone. */
typedef struct agent_resources {
    bool live;                       /* the first group is held */
    file_state *files;
    task_registry *tasks;
    todo_list *todos;
    working *working;
    struct mcp_manager *mcp;         /* a clone of origin_mcp; NULL: none */
    struct governance *gov;          /* governance_child of origin_gov; NULL: none */
    transcript *t;                   /* the sidechain */
    tool_registry *tools;            /* the child's own (toolset.c); NULL for a fork */
    const tool_registry *live_tools; /* what its run declares (tools, or the parent's for a fork) */
    loom_str instructions;           /* its MCP servers' instructions */
    bool toolset_given;
    tool_ctx tctx;
    loop_io io;
    loop_params params;

    /* Kept across releases. */
    provider_config provider;        /* the parent's, model swapped (shallow: never freed deeply) */
    char *prompt;                    /* the first prompt (after SubagentStart) */
    char *system_static;             /* the child's system prompt; NULL: the parent's */
    char *cwd, *parent_session;
    struct agent_worktree *wt;       /* isolation: worktree; NULL: none */
    struct sandbox_policy *wt_policy;
    tool_def *structured;            /* StructuredOutput; NULL: no schema */
    bool counted, reserved;          /* the running count raised, the share reserved */
    bool want_worktree;              /* isolation "worktree" asked for: it never runs outside one */
    /* Borrowed from the parent (valid while the session lives, the rule
     * background.c keeps for what outlives a run). */
    file_state *origin_files;
    struct governance *origin_gov;
    struct mcp_manager *origin_mcp;
    const tool_registry *origin_tools;
    transcript *origin_t;            /* the parent's conversation (a fork copies it) */
    provider_port origin_model;
    void (*parent_io_emit)(void *ctx, loom_event_type type, loom_visibility vis,
                           const char *corr, json_t *payload);
    void *parent_io_ctx;
    void (*parent_emit)(void *ctx, loom_event_type type, json_t *payload);
    void *parent_emit_ctx;
} agent_resources;

/* What one execute produced. */
typedef struct agent_outcome {
    loom_run_state state;
    loom_stop_reason stop_reason;
    bool partial;                    /* ended early (max_turns, budget_share, the pool): status "partial" */
    char *final_text;                /* the last assistant message (structured: the JSON text); owned */
    json_t *structured;              /* the StructuredOutput value (owned), or NULL */
    char *error;                     /* the run's error message when it failed; owned */
    int turns, tool_uses;            /* this execute's */
    msg_usage usage;                 /* the node's tree total so far (raw NULL) */
    double cost_usd;                 /* < 0: unknown */
    int64_t duration_ms;             /* this execute's wall time */
} agent_outcome;

enum {
    AGENT_PREP_OK = 0,       /* *child is ready */
    AGENT_PREP_HANDOFF = 1,  /* depth limit: nothing spawned; agent_handoff_result says so */
    AGENT_PREP_REFUSED = 2,  /* refused with a message for the model (running cap, share, hook): out set */
};

/* Checks the depth, the running cap and the share, resolves the agent_def
 * (subagent_type), fires SubagentStart (its updatedInput re-checked with
 * pipeline_recheck_input on the Agent tool, then prompt, subagent_type and
 * model taken from it), creates the node and its resources, emits
 * agent.spawned. AGENT_PREP_OK with *child set; AGENT_PREP_HANDOFF (no
 * child); AGENT_PREP_REFUSED with out holding the is_error result; -1 with
 * err on an internal failure. */
int agent_prepare(spawn_node *parent, tool_ctx *parent_ctx, const agent_request *req,
                  spawn_node **child, tool_result *out, loom_error *err);

/* One loop run of child with prompt as its user text (the first prompt;
 * later: a SendMessage), to its end; then SubagentStop (a block answer
 * runs it one more turn with the reason, at most 3 times). A node without
 * resources (released) gets them again first, its sidechain reopened. Sets
 * the node's state (IDLE, FAILED, CANCELLED), last_text/last_raw, and
 * emits agent.completed. Returns 0, or -1 when the run could not start
 * (out->error says why, state FAILED). Always fills out (free with
 * agent_outcome_free). */
int agent_execute(spawn_node *child, const char *prompt, agent_outcome *out);
void agent_outcome_free(agent_outcome *o);

/* Cleanup: the child's subtree cancelled, then its shells, MCP servers,
 * memory, governance, transcript and worktree released in that order; the
 * share unreserved and the running count lowered. The node stays in the
 * session. Idempotent. */
void agent_release(spawn_node *child);

/* The Agent tool's result for an outcome: text = the final message (the
 * JSON text when structured; for a partial run a JSON {status:"partial",
 * stop_reason, last_message, agent_id}), raw = Claude Code's toolUseResult
 * shape {status, agentId, agentType, model, content:[{type,text}],
 * totalDurationMs, totalTokens, totalToolUseCount, usage, prompt, costUsd?,
 * stopReason, transcriptPath, worktreePath?, worktreeBranch?, structured?}.
 * is_error when the run failed. */
void agent_outcome_result(const spawn_node *child, const char *prompt, const agent_outcome *o,
                          tool_result *out);
/* The raw object on its own (new reference). */
json_t *agent_outcome_raw(const spawn_node *child, const char *prompt, const agent_outcome *o);

/* The depth-limit hand-off result: text = {"status":"handoff","reason":
 * "depth_limit","depth":…,"d_max":…,"goal":…,"report":…}, not an error. */
void agent_handoff_result(const spawn_node *parent, int d_max, const char *goal,
                          tool_result *out);

/* agents/background.c (the lead's): starts child on its own thread —
 * agent_execute(child, prompt) then agent_release, with its output written
 * to a file and a note posted to the parent's inbox when it ends — and
 * registers it as an external task of parent_ctx->tasks. out gets
 * {agent_id, output_file} at once (status "async_launched"). 0, or -1
 * with out holding the error result (the caller then agent_release()s).
 * Ownership of child's run passes to the thread on 0. */
int agent_bg_start(spawn_node *child, const char *prompt, tool_ctx *parent_ctx, tool_result *out);
/* Joins every background thread of the session (their nodes cancelled
 * first by the caller): agents_session_free calls it before freeing nodes. */
void agent_bg_join_all(agents_session *s);
/* The tree port's before_final for background children: in a headless
 * root run with background agents still running, blocks until one ends
 * and returns its note (malloc'd); NULL lets the run end. */
char *agent_bg_before_final(spawn_node *n, const char *final_text);
/* SendMessage (agent_tool.c registers it; background.c implements it). */
extern const tool_def tool_send_message;

/* The child's emit: adds agent_id/agent_name to the payload and hands it to
 * the parent's emit (exported for background.c's own events). */
void agent_forward_emit(void *ctx, loom_event_type type, json_t *payload);

#endif

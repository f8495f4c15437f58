/* agents.h — sub-agents as the integrator (src/api/) sees them: the
 * session's spawn trees, the tools that spawn, the runs they attach to.
 *
 * One agents_session per loom_session. Each main run attaches a root node
 * (agents_run_attach); the Agent tool spawns children under it, each a loop
 * run of its own (agents/runner.c) with its own file-state cache, todo
 * list, shell tasks, MCP connections and governance, drawing on the root's
 * budget pool. Background agents outlive the run that started them and
 * belong to the session until they end or it is freed. Thread-safe: the
 * run's thread, the tool pool's threads and background agents' threads all
 * call in.
 */
#ifndef LOOM_AGENTS_AGENTS_H
#define LOOM_AGENTS_AGENTS_H

#include <jansson.h>
#include <stdbool.h>

#include "agents/catalog.h"
#include "base/error.h"
#include "hooks/run.h"
#include "runtime/loop.h"
#include "tools/registry.h"

struct mcp_manager;
struct spawn_node;

typedef struct agents_config {
    bool enabled;               /* the Agent tool is declared (settings agents.enabled, --agents) */
    int max_depth;              /* d_max: runtime.max_depth, default 3 */
    int max_running;            /* running sub-agents at once, default 8 */
    int max_turns;              /* a sub-agent's turns when its file names none, default 200 */
    bool inherit_mode;          /* a child without permissionMode takes the parent's (default true) */
    bool merge_auto;            /* merge: "auto" — worktree agents merged back when the last ends */
    double bus_delta_min;       /* the M_f bus's δ_min (default MF_BUS_DELTA_MIN) */
} agents_config;

/* Defaults of the fields above. */
void agents_config_defaults(agents_config *c);

typedef struct agents_session agents_session;

typedef struct agents_session_opts {
    const agents_config *config;     /* copied */
    const agent_catalog *catalog;    /* borrowed: the agent's, outlives the session */
    /* The skills an agent file's "skills" list names are looked up here
     * and their bodies start the sub-agent's system prompt (borrowed; NULL:
     * none). */
    const struct skill_catalog *skills;
    const char *session_id;
    const char *session_path;        /* the session file: sidechains go beside it */
    const char *mf_dir;              /* <session>.mf/: subagents/ and bus/ under it */
    const char *cwd;
} agents_session_opts;

agents_session *agents_session_new(const agents_session_opts *o);
/* Cancels every sub-agent still running, joins their threads, releases
 * what they hold (shells, MCP servers, worktrees as agent_worktree_finish
 * says) and frees. NULL is a no-op. */
void agents_session_free(agents_session *s);

/* What a main run lends its sub-agents, valid from attach to detach. */
typedef struct agents_run_env {
    const loop_params *params;       /* the parent's: provider, prices, caps, system parts */
    loop_io *io;                     /* the parent's: model port, emit, governance, cancel */
    tool_ctx *tctx;                  /* the parent's tool context (run_id, approvals, ask_user) */
    struct mcp_manager *mcp;         /* the session's MCP servers (cloned per child); NULL: none */
    const char *run_id;
} agents_run_env;

/* Attaches a run: a root node whose pool holds the run's caps, io->tree
 * set to its port. Returns the node for tool_ctx.spawn. */
struct spawn_node *agents_run_attach(agents_session *s, const agents_run_env *env);
/* The run ended: foreground children are done; background ones go on
 * under the session. res->usage and res->cost_usd get every descendant's
 * usage added (the tree's total), and by_agent (when not NULL) the
 * breakdown [{agent_id, name, agent_type, depth, usage, cost_usd,
 * state}] as a new reference. */
void agents_run_detach(agents_session *s, struct spawn_node *root, loop_result *res,
                       json_t **by_agent);
/* loom_run_cancel, a signal: every node of that run's tree is cancelled. */
void agents_cancel_run(agents_session *s, const char *run_id);

/* agents/hook_agent.c: runs a `type: "agent"` hook (a hook_llm_fn,
 * hooks/run.h; ctx is the agents_session) as a short read-only sub-agent
 * of the attached run. agents_run_attach sets it as the governance's
 * agent_hook port, agents_run_detach clears it. */
int agents_hook_agent(void *ctx, const hook_llm_request *req, json_t **reply, loom_error *err);

/* Adds Agent (alias Task) and SendMessage to reg, after what it holds; the
 * Agent tool's description lists cat's agents. 0, or -1 with err. */
int agents_add_tools(tool_registry *reg, const agent_catalog *cat, loom_error *err);

/* /agents and loom_session_agents_json: every sub-agent of the session,
 * running or ended, [{agent_id, name, agent_type, state, depth, background,
 * tool (current), tokens, cost_usd, elapsed_ms, transcript, worktree?,
 * result?}] (new reference). */
json_t *agents_list_json(agents_session *s);
/* Stops one agent and its subtree. 0, 1 not running, -1 unknown id. */
int agents_stop(agents_session *s, const char *agent_id);
/* /agents merge: merges every finished worktree agent with changes not yet
 * merged (agents/merge.h's report), NULL with err when there is none or
 * cwd is not a repository. */
json_t *agents_merge(agents_session *s, loom_error *err);

#endif

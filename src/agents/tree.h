/* tree.h — the spawn tree of a session's sub-agents and the budget pool
 * each root run shares with everything it spawns.
 *
 * A spawn_node is one agent: a main run's root (depth 0) or a sub-agent
 * (depth = parent + 1). It carries its own cancel flag, its usage counters,
 * an inbox of notes for its model (a background child finished, a
 * SendMessage arrived) and its lifecycle state. Each root run has a
 * spawn_pool: the run's caps (max_tokens_total, max_usd), the shares
 * reserved by children, the running count.
 *
 * Owner rule: the agents_session owns every node it ever made — roots and
 * sub-agents, running or ended — until agents_session_free, which first
 * cancels every node, joins the background threads (agent_bg_join_all)
 * and only then frees them. A pointer to a node is therefore valid for as
 * long as the session is; no refcount is needed, and no node is freed
 * while a run or thread of the session is alive.
 *
 * Threading: every function here is thread-safe. Counters are atomics; the
 * tree's shape (children lists, the session's node list, names) and each
 * inbox are under the session's mutex; state is an atomic.
 */
#ifndef LOOM_AGENTS_TREE_H
#define LOOM_AGENTS_TREE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "agents/agents.h"
#include "agents/catalog.h"
#include "base/cancel.h"
#include "runtime/loop.h"

typedef struct spawn_node spawn_node;
struct agent_resources;  /* agents/runner.h */

/* One root run's budget pool, shared by its whole tree. */
typedef struct spawn_pool {
    int64_t cap_tokens;              /* 0: none (the root run's max_tokens_total) */
    int64_t cap_micro_usd;           /* 0: none (max_usd × 1e6) */
    _Atomic int64_t used_tokens;     /* every model call of the tree */
    _Atomic int64_t used_micro_usd;
    int64_t reserved_tokens;         /* Σ shares of live children: under the session's mutex */
    int64_t reserved_micro_usd;
    atomic_int running;              /* sub-agents of this tree running now */
} spawn_pool;

/* Usage counters: own (the node's own model calls) and tree (its own plus
 * every descendant's, for shares and the live breakdown). */
typedef struct spawn_usage {
    _Atomic int64_t input, output, cache_read, cache_write, reasoning;
    _Atomic int64_t micro_usd;       /* cost × 1e6; stays 0 when prices are unknown */
    atomic_bool cost_known;
} spawn_usage;

typedef enum spawn_state {
    SPAWN_NEW = 0,       /* prepared, not started */
    SPAWN_RUNNING,       /* in a loop_run */
    SPAWN_IDLE,          /* its last run ended (completed or partial); resumable by SendMessage */
    SPAWN_FAILED,        /* its last run failed (model error, …); resumable too */
    SPAWN_CANCELLED,     /* stopped (TaskStop, /agents stop, its parent cancelled) */
} spawn_state;

struct spawn_node {
    char id[32];                     /* "agent_1", "agent_2" … per session; "main_N" for roots */
    char *name;                      /* the Agent input's name; NULL: none (id is used) */
    char *type;                      /* subagent_type ("general-purpose", "Explore", a file's); NULL for a root */
    char *model;                     /* the model it runs on (resolved); NULL for a root */
    char *description;               /* the Agent input's description; may be NULL */
    int depth;                       /* 0 for a root */
    spawn_node *parent;              /* NULL for a root */
    spawn_node *children, *next_sibling;   /* under the session's mutex */
    spawn_node *next_in_session;     /* the session's list, in creation order */
    agents_session *session;
    spawn_pool *pool;                /* the root's (owned by the root) */
    char *run_id;                    /* the ROOT run's id: approvals surface there */
    const agent_def *def;            /* the catalog's (borrowed); NULL for a root */

    loom_cancel cancel;              /* its own flag: its run polls it */
    const loom_cancel *outer_cancel; /* a root: the run's own flag (the loop polls it); NULL otherwise */
    _Atomic int state;               /* spawn_state */
    bool background;                 /* runs on its own thread (agents/background.c) */
    char *parent_call_id;            /* the Agent tool call that spawned it */

    int64_t share_tokens;            /* 0: draws from the pool's unreserved rest */
    int64_t share_micro_usd;
    spawn_usage own, tree;
    atomic_int turns;                /* model calls, over every run of it */
    atomic_int tool_uses;            /* tool calls it made */
    char *_Atomic current_tool;      /* the tool it runs now (malloc'd; swapped atomically) */
    int64_t started_ms, ended_ms;    /* wall clock; ended 0 while running */
    _Atomic int64_t last_progress_ms; /* agent.progress throttle (250 ms; its tool threads race) */

    char *transcript_path;           /* its sidechain: <mf_dir>/subagents/<id>.jsonl */
    char *worktree_path, *worktree_branch;  /* isolation: worktree; NULL: none */
    bool worktree_changed, worktree_merged;

    /* The last run's outcome, for TaskOutput, /agents and resume (under the
     * session's mutex): malloc'd text and the raw result object. */
    char *last_text;
    json_t *last_raw;

    /* StructuredOutput (agents/structured.c): the schema (borrowed from the
     * def or the request, kept alive by the node: owned reference), the
     * accepted value, the attempts made, the reminders given. */
    json_t *output_schema;
    json_t *structured;
    int structured_attempts, structured_reminders;
    int stop_hook_blocks;            /* SubagentStop "block" answers taken (≤ 3) */
    /* The Bash commands it ran (a verification step must name one of
     * them: seed 000 row 4.5a, anti-pattern 1). Under the session's mutex. */
    char **commands;
    size_t n_commands;

    /* The inbox: notes for the node's model, delivered at its next turn
     * boundary (loop_tree_port.take_notes). Under the session's mutex;
     * inbox_cv is signalled on every post. */
    char **inbox;
    size_t inbox_n, inbox_cap;
    pthread_cond_t inbox_cv;

    struct agent_resources *res;     /* agents/runner.c: NULL while it holds none */
    void *bg;                        /* agents/background.c's own state for the node; NULL: none */
};

/* The session: its nodes, its config and what its runs share. Defined
 * here so runner.c and background.c reach it; only tree.c changes the
 * list. */
struct agents_session {
    pthread_mutex_t mu;              /* the tree's shape, names, inboxes, last_* */
    agents_config config;
    const agent_catalog *catalog;    /* borrowed */
    const struct skill_catalog *skills; /* borrowed; NULL: none */
    char *session_id, *session_path, *mf_dir, *cwd;
    spawn_node *nodes, *nodes_tail;
    int next_agent, next_root;
    /* What the current main run lends (agents_run_attach to detach); a
     * background child started by it keeps copies of what it needs. */
    agents_run_env env;
    bool env_set;
    /* env is read under env_mu; env_users counts the calls into the run's
     * sinks in flight (runner.c's trampolines), which detach waits out, so
     * a background child never calls into a run that has ended. */
    pthread_mutex_t env_mu;
    pthread_cond_t env_cv;
    int env_users;
    /* The main run's tool set as its loop has it now (the MCP servers'
     * tools in it) and the instructions that go with it: agents_run_attach
     * wraps the run's tool-set port to see each change, so a fork declares
     * exactly what its parent's last request did. Under env_mu; the
     * registry is borrowed (the session keeps every one it made until its
     * end), live_ext is a copy. */
    loop_toolset_port inner_toolset;
    const tool_registry *live_tools;
    char *live_ext;
    /* The M_f bus (<mf_dir>/bus, agents/bus.h) children publish on; NULL:
     * none (no mf_dir, or bus.c not linked in). */
    struct mf_bus *bus;
    /* Worktree agents not finished yet (merge "auto": the last one to
     * finish merges); and one merge at a time. Under mu / merge_mu. */
    int live_worktrees;
    pthread_mutex_t merge_mu;
};

/* A root node for a run: its pool gets caps from p (max_tokens_total,
 * max_usd); outer is the run's cancel flag. */
spawn_node *spawn_node_new_root(agents_session *s, const char *run_id, const loop_params *p,
                                const loom_cancel *outer);
/* A child of parent at depth parent->depth + 1, state SPAWN_NEW, its id the
 * session's next "agent_N". Fails (NULL, err set) when name is already
 * taken by another node of the session. The share is reserved by
 * spawn_pool_reserve, not here. */
spawn_node *spawn_node_new_child(spawn_node *parent, const char *type, const char *name,
                                 const char *description, loom_error *err);

/* Finds a node of the session by id ("agent_3") or name (exact). NULL:
 * none. */
spawn_node *spawn_session_find(agents_session *s, const char *id_or_name);

/* Sets level (CANCEL_RUN …) on n and every node below it. */
void spawn_node_cancel_subtree(spawn_node *n, int level);
/* n's own flag or any ancestor's (a root's run flag too) is set. */
bool spawn_node_cancelled(const spawn_node *n);

spawn_state spawn_node_state(const spawn_node *n);
void spawn_node_set_state(spawn_node *n, spawn_state st);
/* "new", "running", "idle", "failed", "cancelled". */
const char *spawn_state_name(spawn_state st);
/* The name to show: name, or id when it has none. */
const char *spawn_node_label(const spawn_node *n);

/* Inbox. post copies text and wakes waiters; take returns every note
 * joined by blank lines (malloc'd) and empties the inbox, NULL when empty;
 * wait blocks until the inbox is not empty, n is cancelled, or timeout_ms
 * passed (< 0: no limit): true when a note is there. */
void spawn_node_post_note(spawn_node *n, const char *text);
char *spawn_node_take_notes(spawn_node *n);
bool spawn_node_wait_notes(spawn_node *n, long timeout_ms);

/* Usage: adds u and usd (< 0: unknown) to n's own counters, to n's and
 * every ancestor's tree counters, and to the pool. */
void spawn_node_charge(spawn_node *n, const msg_usage *u, double usd);
/* The node's counters as a msg_usage (raw NULL); tree: with descendants. */
void spawn_node_usage(const spawn_node *n, bool tree, msg_usage *out, double *usd);
int64_t spawn_usage_tokens(const spawn_usage *u);
/* Sets the tool the node runs now (NULL: none); copies. */
void spawn_node_set_tool(spawn_node *n, const char *tool);
/* malloc'd copy of it, or NULL. */
char *spawn_node_tool(spawn_node *n);

/* Notes a Bash command n ran; whether it ran cmd (exact, ends trimmed). */
void spawn_node_note_command(spawn_node *n, const char *cmd);
bool spawn_node_ran_command(spawn_node *n, const char *cmd);

/* Reserves the child's share in its pool: 0, or -1 with why (malloc'd)
 * when the share exceeds the pool's unreserved rest. A share of 0 needs
 * nothing. Released (and unspent parts returned) by spawn_pool_unreserve
 * when the child's run ends for good. */
int spawn_pool_reserve(spawn_node *child, int64_t tokens, int64_t micro_usd, char **why);
void spawn_pool_unreserve(spawn_node *child);
/* The running cap: 0 and the count raised, or -1 when max running
 * sub-agents already run. end lowers it. */
int spawn_pool_begin_run(spawn_node *child, int max_running);
void spawn_pool_end_run(spawn_node *child);

/* The tree port for n's loop run (charge, exhausted, take_notes,
 * before_final); ctx is n. */
loop_tree_port spawn_node_tree_port(spawn_node *n);
/* The exhausted() check on its own: n's share, then the pool, then any
 * ancestor cancelled. */
bool spawn_node_exhausted(spawn_node *n, loom_stop_reason *stop, char *msg, size_t size);

/* One node as a JSON row (new reference): {agent_id, name?, agent_type,
 * depth, state, background, usage, cost_usd?, tool?, tokens, elapsed_ms,
 * turns, tool_uses, transcript?, worktree?}. */
json_t *spawn_node_json(spawn_node *n);
/* The usage_by_agent rows of every descendant of root (not root itself),
 * in creation order (new reference). */
json_t *spawn_usage_by_agent(spawn_node *root);

/* The bus of n's session (agents/bus.h's Publish tool finds it here). */
struct mf_bus *spawn_node_bus(spawn_node *n);

/* The session's nodes: called by agents_session_free once no thread of
 * the session runs any more. */
void spawn_session_free_nodes(agents_session *s);

#endif

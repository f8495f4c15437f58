/* catalog.h — the agents a run can spawn: the built-in roles and the agent
 * files of the user, the project and plugins (Claude Code's format).
 *
 * An agent file is Markdown with YAML frontmatter; the body is the agent's
 * prompt. Sources, later ones winning by name: the built-in roles, then
 * the folders ext/sources.h lists for "agents" — ~/.claude/agents,
 * ~/.loom/agents, plugins' agents/ (named "plugin:name", so a plugin never
 * replaces another's agent), .claude/agents from the repository root down
 * to cwd, .loom/agents. An untrusted workspace's own files are skipped
 * with a notice (a hostile repository does not get to define what Explore
 * does).
 * A bad file, or a bad key in one, is a warning naming file and key; the
 * rest of the catalog loads. Built once per agent, read-only afterwards:
 * any thread may read it.
 */
#ifndef LOOM_AGENTS_CATALOG_H
#define LOOM_AGENTS_CATALOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "ext/sources.h"
#include "policy/perm_types.h"

typedef enum {
    AGENT_ROLE_CUSTOM = 0,      /* an agent file */
    AGENT_ROLE_GENERAL,         /* general-purpose */
    AGENT_ROLE_EXPLORE,         /* Explore: read-only search and reading */
    AGENT_ROLE_PLAN,            /* Plan: no side effects, returns a plan */
    AGENT_ROLE_VERIFICATION,    /* verification: adversarial, structured verdict */
    AGENT_ROLE_FORK,            /* fork: the parent's whole context, same prefix */
} agent_role;

typedef struct agent_def {
    char *name;                 /* subagent_type: "Explore", "code-reviewer" */
    char *description;          /* when to use it: shown in the Agent tool's description */
    char *prompt;               /* the system prompt (the file's body; a role's text) */
    char *model;                /* NULL or "inherit": the parent's; "sonnet"/"haiku"/… or an id */
    agent_role role;
    /* Rule strings of the one rule engine ("Read", "Bash(git:*)",
     * "mcp__github__*"), NULL-terminated. tools NULL: every tool the
     * parent has (less the role's limits); disallowed NULL: none. */
    char **tools;
    char **disallowed;
    bool read_only;             /* the role or file allows no side effect at all */
    bool mode_set;              /* permissionMode given */
    perm_mode mode;
    int max_turns;              /* 0: the runtime's default */
    char **skills;              /* NULL-terminated; NULL: none */
    json_t *mcp_servers;        /* the file's mcpServers (object or array of names); NULL: the parent's */
    json_t *hooks;              /* the file's hooks block (settings shape); NULL: none */
    json_t *output_schema;      /* JSON Schema the result must match; NULL: free text */
    bool isolation_worktree;    /* isolation: worktree */
    bool background;            /* background: true — always runs in the background */
    char *source;               /* the file it came from; "built-in" for a role */
} agent_def;

typedef struct agent_catalog agent_catalog;

typedef struct agent_catalog_opts {
    const char *cwd;            /* the workspace (.loom/agents, .claude/agents) */
    const char *home;           /* the Loom home (~/.loom); NULL: loom_home() */
    const char *user_home;      /* for ~/.claude/agents; NULL: $HOME */
    bool trusted;               /* the workspace's own files count */
    const json_t *user_settings;/* for the trust of folders above cwd (ext/sources.h) */
    bool claude_off;            /* compat off: no .claude/agents folder counts */
    const ext_plugin_root *plugins; /* the enabled plugins (their agents/ folders) */
    size_t n_plugins;
} agent_catalog_opts;

/* Loads the catalog. Never fails for a bad file: warnings collect them.
 * NULL only when out of memory (err set). */
agent_catalog *agent_catalog_load(const agent_catalog_opts *o, loom_error *err);
void agent_catalog_free(agent_catalog *c);

/* The agent named name (exact, then case-insensitive), or NULL. */
const agent_def *agent_catalog_find(const agent_catalog *c, const char *name);
size_t agent_catalog_count(const agent_catalog *c);
/* In the order the Agent tool's description lists them: roles first. */
const agent_def *agent_catalog_at(const agent_catalog *c, size_t i);
/* "<file>: key 'tools': …" lines, and notices of skipped untrusted files. */
size_t agent_catalog_warning_count(const agent_catalog *c);
const char *agent_catalog_warning(const agent_catalog *c, size_t i);

/* Parses one agent file's text (path names it in warnings). NULL when the
 * file cannot be an agent (no frontmatter, no name or description): err
 * says why. Bad optional keys are dropped with a warning each, through
 * warn (may be NULL). Free with agent_def_free. */
agent_def *agent_def_parse(const char *path, const char *text,
                           void (*warn)(void *ctx, const char *msg), void *warn_ctx,
                           loom_error *err);
void agent_def_free(agent_def *d);

/* The built-in role rows (roles.c), in catalog order; n set to the count. */
const agent_def *agent_roles_builtin(size_t *n);
/* The role's name ("Explore"; "custom" for an agent file). Each built-in
 * prompt opens with the marker "You are Loom's <name> agent", so tests and
 * logs can tell requests apart (the fork has no prompt of its own). */
const char *agent_role_name(agent_role r);

#endif

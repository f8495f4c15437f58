/* loom.h — the public C API of libloom, and its manual.
 *
 * Loom turns a language model into an agent: it calls the model, runs the
 * tools the model asks for, keeps the conversation as a session on disk, and
 * reports everything it does as a stream of events. The API has four
 * objects, each made from the one before:
 *
 *   loom_config   what to run: provider, model, working directory, limits
 *   loom_agent    a configured agent: provider, tools, system prompt
 *   loom_session  one conversation, an append-only file under LOOM_HOME
 *   loom_run      one user goal carried to its end: model calls and tool
 *                 calls until the model gives a final answer
 *
 * A run executes on its own thread. Its events (one JSON schema, see
 * docs/events.md) reach the caller by callback (on the run's thread) and/or
 * by polling loom_run_next_event. Every function that can fail takes a
 * loom_status * (may be NULL) and returns NULL or a negative number on
 * failure, with a stable error code ("model_overloaded",
 * "resource_not_found", …; numbers and names in loom_protocol.h, listed in
 * docs/events.md) and a message saying what and where.
 *
 * Thread safety: a config, agent or session is used by one thread at a
 * time, except that loom_run_cancel, loom_run_next_event and
 * loom_run_state may be called from any thread while the run executes. One
 * run at a time per session: loom_run_start on a session whose run has not
 * ended fails with invalid_state_transition.
 *
 * Arguments: a NULL handle or required string is an error, never a crash.
 * A function taking a loom_status * then fails with invalid_request, the
 * message naming the function and the argument ("loom_run_start: s is
 * NULL"); one without returns its empty answer: NULL, 0, false, -1, or
 * LOOM_RUN_FAILED for a loom_run_state, and does nothing for a *_free or
 * loom_run_cancel.
 *
 * Out of memory: libloom does not return an error for a failed allocation.
 * Every allocation goes through one allocator, which on failure writes
 * "loom: out of memory (allocating N bytes)" to stderr and aborts the
 * process — a half-applied state change, a run that silently lost an event
 * or a session line, would be worse. jansson is set to the same allocator
 * when libloom loads, for the whole process (jansson has only one).
 *
 * Memory: objects are freed by their *_free function; strings returned as
 * `const char *` belong to the object and live as long as it; strings
 * returned as `char *` are the caller's to free().
 */
#ifndef LOOM_H
#define LOOM_H

#include <stdbool.h>
#include <stddef.h>

/* Error codes, event types, run states and stop reasons, each with its
 * fixed number and wire name. */
#include "loom_protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as "MAJOR.MINOR.PATCH" (set once, in CMakeLists.txt). */
const char *loom_version(void);

/* ---- models (docs/providers.md) ----------------------------------------- */

/* The id a model alias stands for (sonnet, opus, haiku, fable; OpenAI's
 * names are ids and come back as given), from Loom's one model table;
 * any other name, a model the table does not know, comes back as given.
 * The result is static or the argument. Every way of naming a model (the
 * option "model", /model, an agent file's, skill's or command's model:)
 * goes through it before a request is made. */
const char *loom_model_resolve(const char *name);
/* One model as JSON text (caller frees): {"id", "alias"? (when model was
 * one), "context_window", "max_output_tokens", "price"?: {"input",
 * "output", "cache_write", "cache_read" (USD per million tokens),
 * "long_prompt"?: {"above" (prompt tokens), the four again}}, "table_date"}
 * — no "price" when the table has none for the id. NULL for NULL. */
char *loom_model_info_json(const char *model);
/* The alias table, in order (caller frees): {"date" (when it was checked),
 * "models": [{"alias", "id", "provider" (anthropic|openai),
 * "context_window", "max_output_tokens", "price"?}]}. */
char *loom_models_json(void);

/* ---- status ------------------------------------------------------------ */

typedef struct loom_status {
    loom_error_code code;   /* LOOM_OK, or one of the codes of loom_protocol.h */
    const char *code_name;  /* "ok", "invalid_request", "model_overloaded", … */
    char message[1024];     /* what went wrong and where */
} loom_status;

/* ---- config ------------------------------------------------------------ */

typedef struct loom_config loom_config;

loom_config *loom_config_new(void);
/* Sets one option by name (value NULL: unset it). Keys, with the values
 * they take (a whole number has its range; a bool is true|false, 1|0 or
 * yes|no; a number is non-negative):
 *   provider        anthropic | openai | openai-responses | replay
 *   model, base_url, api_key, cassette (replay script)  text
 *   fallback_model  text: used after the primary model fails (circuit breaker)
 *   cwd             text: the working directory tools run in (default: getcwd)
 *   compat_claude   bool: Claude Code's files count (default true; also
 *                   LOOM_COMPAT_CLAUDE, and the user settings' "compat":
 *                   {"claude": false}). Off, a .claude settings file still
 *                   gives its deny and ask rules (docs/compat.md)
 *   system_prompt   text: replaces the built-in static system prompt
 *   append_system_prompt  text: added after it
 *   max_turns       whole 1–1000000: model calls per run (default 500)
 *   max_retries     whole 0–100: retries of one failed model call (default 3)
 *   stream          bool (default true)
 *   permission_mode default | acceptEdits | plan | auto | dontAsk |
 *                   bypassPermissions | fullAccess | delegate
 *   loop_threshold  whole 2–1000: identical consecutive tool calls before a
 *                   warning (3)
 *   max_tokens_total  whole 0–2^40: stop the run when total tokens exceed
 *                   this (0 = off)
 *   max_usd         number: stop when the run's cost exceeds this (needs prices)
 *   price_input_per_mtok, price_output_per_mtok  number: USD per million tokens
 *   interactive     bool: a person can answer questions
 *   allowed_tools, disallowed_tools  text: permission rules ("Bash(git:*)"),
 *                   comma-separated (--allowedTools / --disallowedTools)
 *   add_dirs        text: more readable directories, one a line (--add-dir)
 *   context_window  whole 1000–2^32: the model's window in tokens
 *   max_output_tokens  whole 1–2^24: the model's output cap
 *   reasoning_effort  low | medium | high: how hard an OpenAI reasoning
 *                   model (gpt-5*, o-series) thinks; unset: the model's
 *                   default. Ignored for other models (--reasoning-effort;
 *                   a settings "models" entry's "reasoningEffort" too)
 *   token_budget    an amount (500k, 1.5m, 200000; a leading + allowed):
 *                   stop the run past it, when max_tokens_total is 0
 *   auto_compact    bool (default true)
 *   compaction      JSON: the compaction thresholds (docs/context.md)
 *   renew_lambda    number: renew's λ (docs/context.md)
 *   heartbeat       JSON: the heartbeat block (docs/heartbeat.md), checked here;
 *                   its relative paths resolve against the agent's cwd
 *   thinking        extended thinking (Anthropic): true (a budget of 31999
 *                   tokens, Claude Code's), false (off, the default), a
 *                   budget from 1024 to 1000000, or {"budget_tokens": N};
 *                   a model's settings entry may set it too. The budget is
 *                   kept under the request's max_tokens
 *   mcp_config      JSON: an array of --mcp-config values, each a file path
 *                   or a JSON text holding {"mcpServers": {…}} (docs/mcp.md)
 *   strict_mcp_config  bool: only the mcp_config servers count, none from
 *                   the settings files or .mcp.json (--strict-mcp-config)
 *   agents          bool: sub-agents (the Agent tool, alias Task); settings
 *                   "agents": {"enabled", "maxDepth", "maxRunning", …}
 *   output_style    text: the output style's name (default "default"; settings
 *                   "outputStyle" too): docs/output-styles.md. An unknown name
 *                   is a session warning, and the default is used
 *   status_line     JSON: {"type": "command", "command": "…", "padding"?}, the
 *                   REPL footer's command (settings "statusLine", docs/repl.md)
 *   ask_tools       text: permission rules that always ask a person, as
 *                   allowed_tools (a policy's "ask" list; settings' "ask")
 *   approval_timeout_seconds  whole 1–31536000: how long an approval waits
 *                   for its answer before it expires (default 600, seed 000)
 *   max_agent_depth whole 0–16: how deep sub-agents may nest (0: no
 *                   sub-agents; settings "agents": {"maxDepth"}; the lower wins)
 *   max_tool_seconds  whole 1–86400: the longest one tool call may run; a
 *                   command past it is stopped and its call fails (0/unset:
 *                   each tool's own limit)
 * Returns 0, or -1 with st set: invalid_request for an unknown key,
 * config_invalid for a bad value, the message naming the key and what it
 * takes ("max_turns must be a whole number from 1 to 1000000, not
 * \"many\""); a refused value leaves the option as it was. Values read
 * from settings files are checked the same way by loom_agent_new. */
int loom_config_set(loom_config *cfg, const char *key, const char *value, loom_status *st);
/* Reads settings files ($LOOM_HOME/settings.json or ~/.loom/settings.json,
 * then .loom/settings.json and .loom/settings.local.json under cwd; later
 * files win; each with Claude Code's file of its level below it —
 * ~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json —
 * whose rule and hook lists add to Loom's: docs/compat.md) for the keys above ("model", "env" {NAME: value} applied with
 * setenv when unset, …). Values already set with loom_config_set win over
 * files. Missing files are fine; a malformed file is an error naming the
 * file, line and column, and a known key of the wrong type one naming the
 * file, the key and the type it must have. A key Loom does not know is a
 * warning (naming file, key and the nearest known key), one of the
 * session's warnings (docs/settings.md). */
int loom_config_load_settings(loom_config *cfg, loom_status *st);
void loom_config_free(loom_config *cfg);
/* Workspace trust (docs/permissions.md): the folder's own settings files
 * (.loom/settings.json and .loom/settings.local.json) count in full only
 * when the user trusts the folder — "trustedWorkspaces" in the user
 * settings, or LOOM_TRUST_WORKSPACE=1. Until then they may only tighten;
 * what they said that would loosen is dropped, one notice each (naming file
 * and key). Both answers are known after loom_config_load_settings; the
 * notices also become the session's warnings. */
bool loom_config_workspace_trusted(const loom_config *cfg);
size_t loom_config_notice_count(const loom_config *cfg);
const char *loom_config_notice(const loom_config *cfg, size_t i);
/* The folder settings were loaded for (symlinks resolved), and the user
 * settings file; NULL before loom_config_load_settings. */
const char *loom_config_workspace(const loom_config *cfg);
const char *loom_config_user_settings_path(const loom_config *cfg);
/* Adds the workspace to "trustedWorkspaces" in the user settings file
 * (written atomically, other keys kept). It counts from the next
 * loom_config_load_settings on a new config. 0, or -1 with st set. */
int loom_config_trust_workspace(const loom_config *cfg, loom_status *st);

/* ---- MCP servers' configuration (`loom mcp`, docs/mcp.md) ---------------- */

/* Every MCP server the config (after loom_config_load_settings) gives a
 * session, as JSON text (caller frees): {"servers": [{"name", "scope"
 * (user|project|local|cli), "transport" (stdio|http|sse), "command",
 * "args", "env", "cwd", "url", "headers" (${VAR} expanded), "timeout_ms",
 * "connect_timeout_ms", "alwaysLoad", "instructions", "needs_approval",
 * "disabled", "error" (absent: none), "source" (the file, or
 * "--mcp-config")}], "warnings": [text]}, in configuration order; the
 * options mcp_config and strict_mcp_config count. NULL with st set when a
 * file is not JSON or an mcp_config value is neither a file nor JSON. */
char *loom_mcp_list_json(const loom_config *cfg, loom_status *st);
/* Writes server name (entry_json: one server entry, {"command", "args", …}
 * or {"type": "http", "url", …}) to scope's file: "user" (the user
 * settings), "project" (.mcp.json) or "local" (.loom/settings.local.json;
 * NULL means local), atomically, other keys kept. An existing name is an
 * error unless replace. 0, or -1 with st set (a bad entry: config_invalid
 * with the reason). */
int loom_mcp_add(const loom_config *cfg, const char *scope, const char *name,
                 const char *entry_json, bool replace, loom_status *st);
/* Removes name from scope_or_null's file, or (NULL) from the one scope
 * holding it; held by two: an error naming both. 0, or -1 with st set
 * (resource_not_found when no file holds it). */
int loom_mcp_remove(const loom_config *cfg, const char *scope_or_null, const char *name,
                    loom_status *st);

/* Every configuration file Loom looked at for the config's workspace (after
 * loom_config_load_settings), as JSON text (caller frees): {"files":
 * [{"path", "kind" (settings|mcp|memory), "level" (user|project|local),
 * "origin" (loom|claude), "state" (loaded | partial: only some of it counts
 * | skipped), "why"? (partial and skipped: untrusted workspace, compat off,
 * not JSON, a secret path…)}], "compat_claude": bool, "trusted": bool,
 * "warnings": [text] (the settings schema's), "notices": [text] (what an
 * untrusted workspace's files said that was dropped)} —
 * files that do not exist are not listed. Memory files are those the
 * workspace's instructions would load (without the sandbox's denyRead
 * list, which an agent adds: loom_agent_sources_json). What `loom doctor`
 * lists (docs/compat.md). NULL when cfg is NULL or not loaded. */
char *loom_config_sources_json(const loom_config *cfg);

/* ---- plugins (docs/plugins.md) ------------------------------------------ */

/* Plugins live under $LOOM_HOME/plugins (installed.json, the copies,
 * known_marketplaces.json); which are enabled is "enabledPlugins" of the
 * user settings ({"name@marketplace": true}; the project's settings may
 * switch one off, and on only in a trusted workspace). Every call works on
 * the config's user settings file and Loom home, after
 * loom_config_load_settings; none needs an agent, and a change counts from
 * the next agent made (the next start). All return 0, or -1 with st set
 * (resource_not_found for an unknown plugin or marketplace, config_invalid
 * for a bad manifest — naming the file and the problem). */
/* {"plugins": [{"name", "id" ("name@marketplace"), "version"?,
 * "description"?, "marketplace"?, "root", "enabled", "commands", "agents",
 * "skills", "hooks", "mcp_servers", "output_styles" (counts), "error"?}],
 * "marketplaces": [{"name", "source", "kind" (directory|git), "root",
 * "plugins": [{"name", "description"?}] or "error"}], "warnings": [text]}
 * (caller frees); NULL with st set. */
char *loom_plugin_list_json(const loom_config *cfg, loom_status *st);
/* Adds a marketplace: a local folder (relative: to the workspace; recorded
 * where it is) or a git repository (https://, file://, git@…, a path
 * ending in .git, or GitHub's owner/repo; cloned with git clone --depth 1)
 * holding .loom-plugin/marketplace.json or .claude-plugin/marketplace.json.
 * Adding the same source again refreshes it. *name_out (caller frees; may
 * be NULL) gets its name. */
int loom_plugin_marketplace_add(const loom_config *cfg, const char *source, char **name_out,
                                loom_status *st);
/* Forgets a marketplace (and its clone); plugins installed from it stay. */
int loom_plugin_marketplace_remove(const loom_config *cfg, const char *name, loom_status *st);
/* Installs "plugin@marketplace", "plugin" (the one marketplace holding it)
 * or a plugin folder's path (holding a '/'; relative: to the workspace):
 * the folder is checked (plugin_read), copied — a link leaving it refused —
 * recorded, and enabled. Installing again replaces the copy. */
int loom_plugin_install(const loom_config *cfg, const char *spec, loom_status *st);
/* name: "name@marketplace", or a name only one installed plugin has. */
int loom_plugin_set_enabled(const loom_config *cfg, const char *name, bool enabled,
                            loom_status *st);
/* Deletes the copy, its record and its enabledPlugins key. */
int loom_plugin_remove(const loom_config *cfg, const char *name, loom_status *st);

/* ---- agent ------------------------------------------------------------- */

typedef struct loom_agent loom_agent;

/* Resolves the provider (flags > LOOM_* > ANTHROPIC_* / OPENAI_* > defaults),
 * registers the built-in tools and builds the system prompt. The config is
 * copied; it may be freed afterwards. */
loom_agent *loom_agent_new(const loom_config *cfg, loom_status *st);
const char *loom_agent_model(const loom_agent *agent);
const char *loom_agent_provider(const loom_agent *agent);
/* The status_line option (settings "statusLine", Claude Code's: {"type":
 * "command", "command", "padding"?}) as JSON text, or NULL when unset
 * (caller frees). An untrusted workspace's own settings never set it: it
 * is a command (docs/permissions.md). The REPL runs it for its footer
 * (docs/repl.md). */
char *loom_agent_status_line_json(const loom_agent *agent);
/* The agents the Agent tool can spawn, built-in roles first, then the agent
 * files (docs/agents.md): [{name, source ("built-in" or the file),
 * description, model?, tools?, background, isolation?}], then the files'
 * warnings as {"warnings": [text]}: the document is {"agents": […],
 * "warnings": […]} (caller frees). NULL with st set when agents are off. */
char *loom_agent_agents_catalog_json(loom_agent *agent, loom_status *st);
/* The agent's extensions (docs/skills.md, docs/commands.md): {"skills":
 * [{name, description, source, scope (user|project|plugin), plugin?,
 * user_invocable, model_invocable, argument_hint?, allowed_tools?,
 * files}], "commands": [{name, description, source, scope, plugin?,
 * argument_hint?, model_invocable}], "output_styles": [{name, description,
 * source, active}], "plugins": [{name, enabled, root}], "warnings": [text]
 * (a malformed file: its path and the problem), "notices": [text] (folders
 * skipped in an untrusted workspace)} (caller frees). For /help, Tab
 * completion, /skills and `loom doctor`. */
char *loom_agent_extensions_json(loom_agent *agent);
/* The agent's configuration files as loom_config_sources_json lists them,
 * with the memory files the agent actually loaded (and skipped) into its
 * system prompt, and "sandbox": {"enabled", "error"?} — whether its
 * commands run sandboxed (caller frees). For `/status` and `loom doctor`.
 * NULL when agent is NULL. */
char *loom_agent_sources_json(loom_agent *agent);
/* Sets one key of the workspace's local settings, .loom/settings.local.json
 * under the agent's working directory: value_json is the value as JSON
 * text ("\"explanatory\"", "true"), NULL removes the key. The schema
 * checks the value first (a wrong type is refused, naming the key); the
 * file is written atomically with its other keys kept, and a file that is
 * not a settings object is left as it is. It counts for agents made
 * afterwards (/output-style reopens the agent). 0, or -1 with st set. */
int loom_agent_set_local_setting(loom_agent *agent, const char *key, const char *value_json,
                                 loom_status *st);
/* The agent's effective settings, key by key, as JSON text (caller frees):
 * {"settings": [{"key", "value" (JSON), "layer" (local | project | user |
 * "command line": a flag or the environment, which win over files),
 * "overrides"?: [the lower layers that also set it]}], "files": {"user",
 * "project", "local": [the settings files loaded for that layer]}} — a
 * layer's Claude Code and Loom files merged as they were loaded. For
 * /config. NULL when agent is NULL. */
char *loom_agent_settings_json(loom_agent *agent);
/* The agent's model as loom_model_info_json gives it, with the price the
 * agent's runs use and "price_source": "table" (the dated table),
 * "settings: models.<id>.price" (that settings entry) or "settings:
 * price_input_per_mtok, price_output_per_mtok" (the flat prices, for every
 * model); no "price" when none is known. For /cost. NULL for NULL. */
char *loom_agent_model_info_json(loom_agent *agent);
void loom_agent_free(loom_agent *agent);

/* ---- session ----------------------------------------------------------- */

typedef struct loom_session loom_session;

loom_session *loom_session_new(loom_agent *agent, loom_status *st);
/* Opens the session with that id (or unique id prefix, or file path).
 * NULL with session_corrupt when a hole in the file would make the next
 * request start after it (docs/session-format.md; the environment's
 * LOOM_ACCEPT_BROKEN_SESSION=1 opens it anyway, with a warning). */
loom_session *loom_session_resume(loom_agent *agent, const char *id, loom_status *st);
/* Where a session's records live when the JSONL file is a node's working
 * copy only (loom serve on PostgreSQL: docs/server-store.md). append
 * stores n records, each exactly its JSONL line without the '\n', as
 * records first_seq … (0-based positions) of session_id, all or none;
 * 0, or -1 with *err a malloc'd message (or NULL) — the record is then
 * appended nowhere and the run that wrote it fails. load returns every
 * record of session_id as JSONL (each line and its '\n', in seq order;
 * malloc'd, *len bytes; "" when there are none), or NULL with *err. The
 * struct and its ctx must outlive the sessions made with it. */
typedef struct loom_session_rows {
    void *ctx;
    int (*append)(void *ctx, const char *session_id, size_t first_seq,
                  const char *const *lines, size_t n, char **err);
    char *(*load)(void *ctx, const char *session_id, size_t *len, char **err);
} loom_session_rows;
/* loom_session_new whose records go to rows first (the new session-meta
 * record too), then to its file. */
loom_session *loom_session_new_rows(loom_agent *agent, const loom_session_rows *rows,
                                    loom_status *st);
/* Opens session id from its rows: the JSONL file in this node's session
 * folder is rewritten from them (whatever a copy there held before), then
 * opened as loom_session_resume does, and later records go to rows first.
 * resource_not_found when rows hold none of it. */
loom_session *loom_session_resume_rows(loom_agent *agent, const char *id,
                                       const loom_session_rows *rows, loom_status *st);
/* Opens the most recent session of the working directory (as resume). */
loom_session *loom_session_continue(loom_agent *agent, loom_status *st);
/* A new session holding a copy of this one (fresh ids, forkedFrom). */
loom_session *loom_session_fork(loom_session *session, loom_status *st);
const char *loom_session_id(const loom_session *session);
const char *loom_session_path(const loom_session *session);
/* Warnings from loading (a torn last line dropped, a bad line skipped),
 * then the settings files' warnings (unknown keys), then the
 * workspace-trust notices of the agent's config. */
size_t loom_session_warning_count(const loom_session *session);
const char *loom_session_warning(const loom_session *session, size_t i);
/* Undoes the last n user turns: files changed by tools since then are
 * restored from their snapshots, and the conversation continues from before
 * those turns (nothing is deleted from the file). *report (caller frees)
 * says what was restored. */
int loom_session_rewind(loom_session *session, int n_turns, char **report, loom_status *st);
/* Usage totals of the session so far, as JSON (caller frees). */
char *loom_session_usage_json(loom_session *session);
/* The sessions of the agent's working directory, newest first, as a JSON
 * array (caller frees): [{"id", "title", "created", "modified" (ISO 8601),
 * "first_prompt", "messages" (user prompts and assistant replies with
 * text), "path"}]; a field with no value is absent. Sessions with no prompt
 * yet are left out, except keep_id's (may be NULL: the current one). The
 * title is the session's title record (the first prompt's first line, cut
 * to 60 characters, docs/session-format.md), else its first prompt's. */
char *loom_sessions_json(loom_agent *agent, const char *keep_id);
/* `loom stats`: tokens by type, cost, runs, model calls, tool calls and
 * their failure rate over every session file under $LOOM_HOME/projects
 * (sub-agent sidechains included), grouped by by ("day" when NULL,
 * "model", "project", "agent"), records before since (YYYY-MM-DD, may be
 * NULL) left out. JSON (caller frees) as docs/cli.md "loom stats" shows;
 * cost_usd null where no call has a known price. Bad lines are counted in
 * "unreadable", never fatal. NULL (invalid_request) for a bad by or since. */
char *loom_stats_json(const char *by, const char *since, loom_status *st);
/* `loom evolve` (docs/evolve.md): self-evolution's proposals, audit and
 * metrics for the project of cwd (its repository root; NULL: the current
 * directory). verb: "review" (the proposals waiting), "show", "accept",
 * "reject", "edited" (the proposal id's file was changed: check it and
 * record it), "audit", "stats". id: a proposal ("skill/<name>",
 * "constraint/<name>", "agent/<name>" or a bare name), for the four that
 * need one. JSON text (caller frees) or NULL with st saying why. */
char *loom_evolve_json(const char *cwd, const char *verb, const char *id, loom_status *st);
/* The same over one session file and its sub-agents' sidechains (/cost's
 * per-model breakdown); by NULL: "model". */
char *loom_stats_file_json(const char *path, const char *by, loom_status *st);
/* The same over a `loom serve` store: the runs the token may see, read
 * through GET <server_url>/usage page by page (docs/cli.md "loom stats
 * --server"); token may be NULL (a server without tokens). Each run counts
 * once, with the server's own cost (null: unknown). NULL with the reason
 * (invalid_request for a bad by or since, network / the HTTP status / a
 * page that is not a /usage page otherwise). */
char *loom_stats_server_json(const char *server_url, const char *token, const char *by,
                             const char *since, loom_status *st);
/* The conversation along the session's active chain, across compactions,
 * as a JSON array (caller frees), oldest first: {"kind": "user", "text",
 * "images"?: N} for a prompt the person typed, {"kind": "assistant",
 * "text"}, {"kind": "tool_call", "name", "input" (the arguments' JSON
 * text), "call_id"}, {"kind": "tool_result", "text", "is_error", "call_id",
 * "not_started"?: true (the call was stopped before it ran: a cancel, or
 * loom_run_options' tool_gate)}, {"kind": "summary", "text"} for a
 * compaction's summary. Tool results' images and notes that
 * never drive a run are left out. For /export and the recent turns shown
 * on resume. */
char *loom_session_conversation_json(loom_session *session);
/* The same for a session given as its JSONL text (len bytes; a session's
 * rows as loom_session_rows.load returns them); name is what warnings call
 * it (NULL: "<buffer>"). Damage is tolerated as on open. NULL for NULL. */
char *loom_conversation_json_of_jsonl(const char *jsonl, size_t len, const char *name);

/* MCP servers (docs/mcp.md). A session starts its servers connecting in the
 * background when it is made. */
/* Every configured server: [{name, scope, transport, state ("connecting",
 * "connected", "failed", "needs-approval", "disabled"), error?, tools,
 * resources, prompts, protocolVersion?, serverInfo?, instructions, source}]
 * (caller frees). */
char *loom_session_mcp_status_json(loom_session *session);
/* The names of the tools the session's next request offers the model:
 * the built-ins (with Agent and SendMessage when sub-agents are on), then
 * KnowledgeQuestion and SearchKnowledge when a knowledge source is set, then
 * the MCP servers' "mcp__server__tool" after the start-up wait a first
 * request makes (docs/mcp.md) — ["Bash", "Read", …] (caller frees). For
 * stream-json's system init line. */
char *loom_session_tools_json(loom_session *session);
/* The session's external knowledge (docs/knowledge.md): {sources: [the
 * registry's sources], active_questions, evidence_packs, citations} — the
 * knowledge surface of its working memory. For the REPL's /knowledge
 * (caller frees). NULL for NULL. */
char *loom_session_knowledge_json(loom_session *session);
/* The built-in tools of the session's agent (those loom_session_tools_json
 * names first, without the MCP servers'), each as a client of Loom's tools
 * needs it (caller frees): [{"name", "description", "input_schema" (the
 * JSON Schema object), "read_only" (never changes anything), "local_state_only"
 * (changes only Loom's own state: the plan, working memory), "sends_out"
 * (sends data off the machine), "concurrency_safe"}], in the registry's
 * order. For `loom mcp serve` (docs/mcp-server.md). NULL for NULL. */
char *loom_session_tool_specs_json(loom_session *session);
/* Runs one call of a built-in tool through the session's governed pipeline
 * (DESIGN.md §3.4: schema, validation, risk, PreToolUse hooks, rules and
 * the session's permission mode, execution, audit, PostToolUse hooks), as
 * a model's call in a run would, but outside any run: no model is asked and
 * nothing is added to the conversation. input_json is the call's input, a
 * JSON object's text. A call that would ask a person is denied unless the
 * config's interactive is set (it then waits for an answer no one can give
 * through this function: keep interactive off). Takes the session's run slot
 * for its duration (invalid_state_transition while a run is in progress).
 * Returns JSON text (caller frees): {"text" (what a model would read),
 * "is_error", "failed_step"? (the pipeline step that refused:
 * "find_tool", "validate_schema", "decide", …), "image"?: {"media_type", "data" (base64)}} — a
 * denial or a failed call is such a result, not an error. NULL with st
 * set: invalid_request for a NULL argument or an input that is not a JSON
 * object. */
char *loom_session_call_tool(loom_session *session, const char *name, const char *input_json,
                             loom_status *st);
/* Waits up to timeout_ms for servers still connecting; 1 when none is. */
int loom_session_mcp_wait(loom_session *session, long timeout_ms);
/* Connects a server again (/mcp's reconnect), waiting for the outcome. */
int loom_session_mcp_reconnect(loom_session *session, const char *server, loom_status *st);
/* Approves a project (.mcp.json) server: it starts, and the approval is
 * kept in the local settings (enabledMcpjsonServers). */
int loom_session_mcp_approve(loom_session *session, const char *server, loom_status *st);
/* The servers' prompts, the slash commands `/mcp__server__prompt`:
 * [{server, name, command, description, arguments}] (caller frees). */
char *loom_session_mcp_prompts_json(loom_session *session);

/* Context engineering (docs/context.md). Call these between runs, like
 * every session function. */
/* Compacts the context now (/compact): a model-written summary replaces the
 * history (PreCompact/PostCompact hooks fire with trigger "manual");
 * instructions (may be NULL) steer it. Returns 1 when compacted, 0 when
 * skipped — nothing new since the last compaction, or a hook blocked it —
 * and -1 on error. *report (caller frees; may be NULL) is JSON:
 * {"compacted", "message", "tokens_before", "tokens_after"}, the tokens
 * being the conversation's (C_history) as estimated before and after. */
int loom_session_compact(loom_session *session, const char *instructions, char **report,
                         loom_status *st);
/* What the next request would hold, as JSON (caller frees): {"window",
 * "tokens", "rho", "source" (api-usage | api-scaled | local-estimate),
 * "partitions": {"system", "memory", "extensions", "tools", "history",
 * "working"} in tokens, "next_step": {"name", "threshold", "at_tokens"} or
 * null, "memory_files": [{"path", "kind"}], "extensions": [{"name"
 * (skills | mcp_instructions | active_skills), "tokens", "budget"?}]}
 * (docs/extensions.md: the extensions part of the system prompt). */
char *loom_session_context_json(loom_session *session);
/* The event surface of the session's working memory, as JSON (caller
 * frees): [{"event_id", "source", "summary", "urgency", "state",
 * "disposition"?, "note"?, "detected_ms"}], oldest first. */
char *loom_session_events_json(loom_session *session);
/* What memory did in this session's runs (docs/memory.md), as JSON (caller
 * frees): {"recalled": [{"run", "ts", "items": [{"path", "kind" (memory |
 * pattern | failure), "score", "why", "terms", "age_days"}]}] (the runs
 * that recalled something, oldest first), "extraction": the last run's
 * extraction report ({"status", "reason"?, "written", "merged", "replaced",
 * "dropped"}) or null}. For the REPL's /memory. */
char *loom_session_memory_json(loom_session *session);
/* The project memory of the folder cwd (NULL: the working directory) is in
 * (docs/memory.md), as JSON (caller frees): {"root", "memory_dir",
 * "exists", "entries": [{"path", "kind" (memory | pattern | failure),
 * "name", "description", "type", "created"?, "updated"?, "source_session"?,
 * "age_days"}], newest first, "skipped": [text] (files that are not
 * entries, with why), "recalls": the last `recalls` lines of
 * .loom/mf/recall.jsonl, oldest first}. For `loom memory`. */
char *loom_memory_json(const char *cwd, int recalls, loom_status *st);
/* Sub-agents (docs/agents.md). Call these between runs or while a run
 * works (they take the session's agent lock, not the run's). */
/* Every sub-agent of the session, running or ended, oldest first:
 * [{agent_id, name?, agent_type, model, depth, state ("new", "running",
 * "idle" — its run ended and SendMessage can resume it —, "failed",
 * "cancelled"), background, usage, cost_usd?, tokens, tool? (the one it
 * runs now), elapsed_ms, turns, tool_uses, transcript?, worktree?: {path,
 * branch, changed, merged}, result? (its last answer)}] (caller frees).
 * NULL with st set when agents are off for the session's agent. */
char *loom_session_agents_json(loom_session *session, loom_status *st);
/* Stops a sub-agent and every agent it spawned (/agents stop). 0; 1 when it
 * had already ended; -1 with st set (resource_not_found for an unknown id). */
int loom_session_agent_stop(loom_session *session, const char *agent_id, loom_status *st);
/* Merges back the finished worktree agents' branches whose changes are not
 * merged yet (/agents merge): {merged: [{agent_id, branch, files, stat}],
 * conflicts: [{agent_id, branch, files}], skipped: […]} (caller frees).
 * NULL with st set when there is nothing to merge or cwd is not a git
 * repository; a conflict touches nothing. */
char *loom_session_agents_merge(loom_session *session, loom_status *st);
/* The REPL's `#`: appends "- line" to AGENTS.md in the working directory
 * (created when missing) and reloads the memory for the next request. */
int loom_session_remember(loom_session *session, const char *line, loom_status *st);
/* The permission mode the session's tool calls are decided in
 * (docs/permissions.md §4): default, acceptEdits, plan, auto, dontAsk,
 * bypassPermissions, fullAccess or delegate. It starts as the config's
 * permission_mode. Setting it takes effect from the next tool call of the
 * next run: call it between runs, like every session function (a run reads
 * the mode on its own thread at each tool call). Entering plan remembers the
 * mode it replaced (not when already in plan); setting another mode while in
 * plan simply takes that mode. An unknown name: invalid_request, with the
 * modes listed in the message; a mode the settings disable
 * (disableBypassPermissionsMode, disableAutoMode — docs/permissions.md §11):
 * invalid_request saying which file disabled it. */
int loom_session_set_permission_mode(loom_session *session, const char *mode, loom_status *st);
/* The mode now in force (a static string). */
const char *loom_session_permission_mode(const loom_session *session);
/* Leaves plan mode, restoring the mode in force when plan was entered
 * (default for a session that started in plan) — seed 001 §14.1. Outside
 * plan mode it changes nothing and fails with invalid_state_transition. */
int loom_session_leave_plan(loom_session *session, loom_status *st);
/* The mode the session file last noted (every switch, and each run's start
 * and end, append a "permission-mode" record), put back in force: for a
 * resumed session whose surface did not name a mode anew. 1: restored; 0:
 * nothing to restore (none noted, or the same); 2: not restored, note (cap
 * bytes) says why — bypassPermissions and fullAccess are never carried over
 * (a mode that skips the questions is chosen at each start), nor a mode the
 * managed settings disable. */
int loom_session_restore_permission_mode(loom_session *session, char *note, size_t cap,
                                         loom_status *st);
void loom_session_free(loom_session *session);

/* ---- run --------------------------------------------------------------- */

/* loom_run_state (its values and loom_run_state_name) is in loom_protocol.h. */
typedef struct loom_event {
    const char *type;   /* "token.delta", "tool.started", … */
    const char *json;   /* the whole event, one line of JSON */
    /* token.delta only (NULL otherwise): the delta and its channel ("text" or
     * "reasoning"), so a renderer need not parse the JSON of every token. */
    const char *text;
    const char *channel;
    loom_event_type kind; /* type as a number (LOOM_EV_TOKEN_DELTA, …) */
} loom_event;

typedef void (*loom_event_fn)(void *ctx, const loom_event *ev);
/* Asked on the run's thread when the model calls AskUserQuestion;
 * questions_json is the tool input. Return a malloc'd answer, or NULL. */
typedef char *(*loom_ask_fn)(void *ctx, const char *questions_json);

/* Asked, on a thread of Loom's, when an MCP server sends
 * elicitation/create during the run (no Elicitation hook answered it).
 * request_json is the request's params ({mode: "form"|"url", message,
 * requestedSchema | url, …}). Return a malloc'd JSON result,
 * {"action": "accept", "content": {…}} / {"action": "decline"} /
 * {"action": "cancel"}; NULL declines. Fields the answer leaves out take
 * the schema's defaults. */
typedef char *(*loom_elicit_fn)(void *ctx, const char *server, const char *request_json);

/* ---- the driver's I/O port ------------------------------------------------
 *
 * A driver that owns the files and the terminal the person sees (an editor
 * speaking ACP) can stand in for the run's file and process access: the
 * Read, Write and Edit tools then read and write texts through read_text
 * and write_text (the editor's buffers, unsaved changes included), and the
 * Bash tool runs its command through run_command (the editor's terminal).
 * The port is used only AFTER the tool call was decided: permissions,
 * hooks, rules and the risk classifier judge the call exactly as without
 * it, and a denied call never reaches the port (not even for a read: the
 * tools' own validation asks the driver nothing). Read-before-write and the
 * stale-file check compare the texts the port returns (docs/acp.md).
 *
 * What stays local whatever the port offers: a Bash command under an
 * enabled sandbox (it runs confined on this machine, since the driver's
 * terminal is outside the sandbox), background commands
 * (run_in_background), images Read shows as images, the Glob and Grep
 * tools, and sub-agents (their runs have no port).
 *
 * read_text and write_text go together: the files are the driver's only
 * when both are set. Each callback may be NULL (that access stays local;
 * neither file callback: Loom's own files), is called on a
 * thread of the run, and must not call back into the run. Strings handed
 * back are malloc'd and become Loom's; on failure a callback returns
 * NULL / -1 with *error set to a malloc'd message (or NULL), which the
 * model sees in the tool's error result. */
typedef struct loom_io_command {
    const char *command;     /* the command line, with the meaning of `bash -c command` */
    const char *cwd;         /* where it runs (absolute) */
    long timeout_ms;         /* kill it after this long (> 0), and report timed_out */
    const char *call_id;     /* the Bash call's id: its tool.* events' call_id, so the
                                driver can show its terminal with that call */
    size_t output_limit;     /* bytes of output worth keeping (the newest ones) */
    /* Poll it (every 100 ms or so) while the command runs: true once the
     * run was cancelled; then kill the command and report cancelled. */
    bool (*stop_requested)(void *stop_ctx);
    void *stop_ctx;
} loom_io_command;

typedef struct loom_io_outcome {
    char *output;            /* what the command printed (malloc'd UTF-8; may be NULL) */
    bool truncated;          /* output lost its beginning to output_limit */
    int exit_code;           /* its exit status, or -1 when it has none (a signal) */
    char *signal;            /* the signal that ended it ("SIGKILL"; malloc'd), or NULL */
    bool timed_out;          /* killed for passing timeout_ms */
    bool cancelled;          /* killed for stop_requested */
} loom_io_outcome;

typedef struct loom_io_port {
    void *ctx;
    /* The whole text of path (absolute) as the driver holds it: *len gets
     * its length in bytes. */
    char *(*read_text)(void *ctx, const char *path, size_t *len, char **error);
    /* Replaces the whole text of path (creating the file when it is new).
     * 0, or -1 with *error set. */
    int (*write_text)(void *ctx, const char *path, const char *text, size_t len, char **error);
    /* Runs cmd to its end (or its kill) and fills out. 0, or -1 with
     * *error set when the command could not be run at all. */
    int (*run_command)(void *ctx, const loom_io_command *cmd, loom_io_outcome *out,
                       char **error);
} loom_io_port;

/* ---- guardrails and interceptors ------------------------------------------
 *
 * A guardrail judges a text and may stop the run: an input guardrail the
 * goal, before the model sees it (after the UserPromptSubmit hooks); an
 * output guardrail the text of each model reply, before it is shown or
 * recorded — while one is registered, a reply's text arrives as a single
 * token.delta once it passed, not piece by piece. check returns true to
 * stop the run and may set *reason to a malloc'd reason (Loom frees it).
 * The run then ends blocked_by_policy with stop reason guardrail
 * (LOOM_STOP_GUARDRAIL), error run_blocked_by_policy ("the output
 * guardrail NAME stopped the run: REASON") and a guardrail.tripped event
 * {stage, guardrail, reason, source: "api"}; a reply that tripped is never
 * shown and never recorded. Registered guardrails run in order, before the
 * InputGuardrail / OutputGuardrail hooks of settings (docs/hooks.md); the
 * first that trips wins. Called on the run's thread; must not call back
 * into the run. */
#define LOOM_GUARDRAIL_INPUT 0
#define LOOM_GUARDRAIL_OUTPUT 1
typedef struct loom_guardrail {
    const char *name;         /* named in the error and the event */
    int stage;                /* LOOM_GUARDRAIL_INPUT or LOOM_GUARDRAIL_OUTPUT */
    void *ctx;
    bool (*check)(void *ctx, const char *text, char **reason);
} loom_guardrail;

/* An interceptor around each model call of a turn (the first send and
 * each resend after a too-long refusal; not the helper calls compaction
 * and the permission classifier make). Requests pass the interceptors in
 * order, after the loop's own "tail" interceptor (the queued reminders and
 * the working memory); replies in reverse order (docs/context.md,
 * "Interceptors"). Either callback may be NULL.
 *
 * on_request sees {"turn", "attempt", "model", "messages" (a count),
 * "last_text" (the last text block of the last user message)} and may
 * return a malloc'd text, which is added to the request's tail as a
 * <system-reminder data-role="interceptor"> block (NULL: no change).
 * on_reply sees {"turn", "attempt", "text", "stop_reason"} of a reply that
 * arrived whole and may return a malloc'd text that replaces the reply's
 * text before Loom records it and acts on it (NULL: no change); text
 * already streamed as token.delta was shown as it came. Loom frees what
 * they return. Called on the run's thread; must not call back into the
 * run. */
typedef struct loom_interceptor {
    const char *name;
    void *ctx;
    char *(*on_request)(void *ctx, const char *request_json);
    char *(*on_reply)(void *ctx, const char *reply_json);
} loom_interceptor;

typedef struct loom_run_options {
    loom_event_fn on_event;   /* may be NULL */
    void *event_ctx;
    bool queue_events;        /* also keep events for loom_run_next_event */
    loom_ask_fn ask_user;     /* NULL: no user can be asked (headless) */
    void *ask_ctx;
    loom_elicit_fn elicit;    /* NULL: elicitations are declined (headless) */
    void *elicit_ctx;
    /* NULL: files and commands are Loom's own (the default). Borrowed: it
     * must outlive the run. */
    const loom_io_port *io;
    /* Guardrails and interceptors (above), in order; borrowed: they must
     * outlive the run. */
    const loom_guardrail *guardrails;
    size_t n_guardrails;
    const loom_interceptor *interceptors;
    size_t n_interceptors;
    /* Asked on the tool's thread right before each tool call of the run
     * (not its sub-agents') starts executing, after every permission step
     * allowed it: 0 lets it run; anything else means it must not, and the
     * call's result is "Not run: <*why>" (why: a malloc'd reason, or NULL),
     * an error marked notStarted (providerData.toolResult.rawResponse) so
     * a later reader of the session knows it never ran. For a driver whose
     * right to act can lapse (loom serve's lease of a run). NULL: none. */
    int (*tool_gate)(void *ctx, const char *call_id, const char *tool, char **why);
    void *gate_ctx;
} loom_run_options;

typedef struct loom_run loom_run;

/* Starts a run for goal on its own thread. opts may be NULL. */
loom_run *loom_run_start(loom_session *session, const char *goal, const loom_run_options *opts,
                         loom_status *st);
/* Waits up to timeout_ms (-1: forever) for the next queued event. Returns 1
 * with *ev set (free with loom_event_free), 0 on timeout, -1 when the run
 * has ended and every event was taken. Needs queue_events. */
int loom_run_next_event(loom_run *run, loom_event **ev, int timeout_ms);
void loom_event_free(loom_event *ev);
/* Asks the run to stop: the model stream or running tool is interrupted,
 * "Interrupted by user" is recorded, the run ends as cancelled. */
void loom_run_cancel(loom_run *run);
/* Hands an external signal ("SIGINT", "SIGTERM", "SIGUSR1", … or any name
 * of 1–31 characters [A-Za-z0-9_.-]) to the run's heartbeat, which turns
 * it into an external_signal event (docs/heartbeat.md): SIGINT and SIGTERM
 * are critical and end the run resumable with the event as the reason
 * ("interrupt" in the result); others are pending events for the model.
 * Async-signal-safe: call it from a signal handler. -1 when the run has no
 * heartbeat taking signals (then cancel, or ignore, as before). */
int loom_run_signal(loom_run *run, const char *name);
loom_run_state loom_run_state_now(const loom_run *run);
/* Waits for the run to end and returns its final state. */
loom_run_state loom_run_wait(loom_run *run);
/* After the end: {"state","result","stop_reason","num_turns","usage",
 * "cost_usd","error":{code,message}?} as JSON text (owned by the run). */
const char *loom_run_result_json(const loom_run *run);
/* After the end: why the run stopped (the result's stop_reason as a
 * number); LOOM_STOP_NONE while it is still going. */
loom_stop_reason loom_run_stop_reason(const loom_run *run);
/* Answers a pending approval (an approval.requested event's approval_id;
 * the event says when it expires — the option approval_timeout_seconds —
 * and an expired one is resolved as a denial, approval.resolved's status
 * "expired"):
 * decision is "allow" (once), "allow_always" (also writes an allow rule to
 * .loom/settings.local.json) or "deny"; reason (may be NULL) goes back to
 * the model with a denial. Unknown id: resource_not_found; already
 * answered: invalid_state_transition; expired: run_approval_expired. */
int loom_run_answer(loom_run *run, const char *approval_id, const char *decision,
                    const char *reason, loom_status *st);
/* Asks the run to stop at its next turn boundary (after the tool calls in
 * hand have finished; a pending approval stays pending and is waited for
 * no longer): the run ends in state paused, stop_reason "paused", error
 * run_resumable, the conversation whole on disk, so a next run on the
 * session (loom_run_start, or loom_run_continue) goes on from it. 0, or -1
 * with st set (invalid_state_transition when it has already ended). */
int loom_run_pause(loom_run *run, loom_status *st);
/* Starts a run that carries the session's last goal further without a new
 * one of the person's: the run after a pause, a resumable stop or a crash
 * (a runtime's resume). note (may be NULL: "Continue from where you
 * left off.") is the message the model reads; it is recorded in the
 * session as a resume note, not as a prompt the person typed (it gives no
 * title and is not offered by /resume's list). As loom_run_start
 * otherwise; resource_not_found when the session has no goal yet. */
loom_run *loom_run_continue(loom_session *session, const char *note,
                            const loom_run_options *opts, loom_status *st);
/* The approvals of the run still waiting for an answer, oldest first, as a
 * JSON array (caller frees) of {approval_id, run_id, kind
 * ("tool_execution"), status ("pending"), question, context: {tool, input,
 * reason, always}, created_at, expires_at} (ISO 8601). */
char *loom_run_pending_approvals_json(loom_run *run);
/* The run's file changes as a unified diff (caller frees; "" when it
 * changed none): for each file its Write, Edit or NotebookEdit calls
 * changed, the content before the run's first change (from the session's
 * file history) against the content now, with `--- a/PATH` / `+++ b/PATH`
 * headers, PATH relative to the working directory when inside it
 * (`/dev/null` for a file created or deleted). A Bash command's changes
 * are not tracked and not in it. NULL for NULL. */
char *loom_run_patch(const loom_run *run);
/* The evidence packs the run's SearchKnowledge calls produced
 * (docs/knowledge.md), each with its citation objects:
 * [{evidence_pack_id, question_id, summary, key_facts, conflicts,
 * citation_ids, citations: [{citation_id, source, uri, retrieved_at,
 * trust_tier, quotable, stale, summary?}], confidence, freshness, …}]
 * (caller frees). Read after the run ended and before the session's next
 * run. NULL for NULL. */
char *loom_run_evidence_packs_json(const loom_run *run);
/* loom_run_answer with "allow" or "deny". */
int loom_run_approve(loom_run *run, const char *approval_id, bool allow, const char *reason,
                     loom_status *st);
/* Waits for the run if still going, then frees it. */
void loom_run_free(loom_run *run);

/* ---- the sandbox on its own (`loom sandbox`) ------------------------- */

/* Confines the calling process, and everything it later starts, with the
 * sandbox policy the agent's commands get at cwd (the "sandbox" block of
 * the settings files, docs/sandbox.md; an untrusted folder's own files may
 * only tighten it), turned on whatever "enabled" says, plus: the network
 * when allow_network, and n_writable more writable paths (relative ones
 * resolved against cwd). Meant to be followed by exec of the command.
 * notice (may be NULL) receives each thing the settings said that was left
 * out, before anything is applied.
 * Returns 0 when confined; 1 when this kernel cannot sandbox and the
 * settings say to run unsandboxed ("onUnsupported": "warn") — nothing was
 * applied, *why_unsupported (not NULL) says why; -1 with st set when the
 * settings are bad (a "config" error naming the file), or the sandbox
 * cannot be applied, or it is unsupported and the settings refuse to run
 * without it (both "run_blocked_by_capability"; *why_unsupported is set in
 * the last case). The why_unsupported string is static. */
/* Whether this kernel can sandbox commands: the Landlock ABI it offers
 * (≥ 1), or 0 with *why (not NULL; a static string) saying what is
 * missing. For `loom doctor`. */
int loom_sandbox_probe(const char **why);
typedef void (*loom_notice_fn)(void *ctx, const char *text);
int loom_sandbox_confine_self(const char *cwd, bool allow_network, const char *const *writable,
                              size_t n_writable, loom_notice_fn notice, void *notice_ctx,
                              const char **why_unsupported, loom_status *st);

#ifdef __cplusplus
}
#endif

#endif

/* config.h — which MCP servers a session has, from the files a user
 * already keeps.
 *
 * Sources, later ones winning by server name:
 *   user     ~/.loom/settings.json "mcpServers"
 *   project  <project>/.mcp.json "mcpServers" (Claude Code's file)
 *   local    <project>/.loom/settings.local.json "mcpServers"
 *   plugin   each enabled plugin's servers, named "plugin:<plugin>:<server>"
 *            (mcp_config_inputs.plugin_servers)
 *   cli      --mcp-config FILE|JSON (repeatable); with --strict-mcp-config
 *            these are the only servers.
 * An entry: {"type": "stdio"|"http"|"sse" (default stdio when "command"
 * is given, http when "url" is), "command", "args", "env", "cwd", "url",
 * "headers", "timeout" (ms), "alwaysLoad", "instructions", "disabled"}.
 * ${VAR} and ${VAR:-default} are expanded in command, args, env values,
 * cwd, url and header values; an unset ${VAR} without default is an error
 * for that server (named, with the file), not for the others.
 *
 * Project servers are a repository's words: they start only once the user
 * approved them — "enableAllProjectMcpServers": true, or the name in
 * "enabledMcpjsonServers" — and never when named in
 * "disabledMcpjsonServers". Those keys count from the user and local
 * settings, and from the project's own settings only when the workspace is
 * trusted (a repository cannot approve itself). A repository can commit
 * .loom/settings.local.json too (policy/trust.h): in an untrusted
 * workspace that file's servers wait for approval like .mcp.json's, and
 * callers pass the trust-filtered documents (api_mcp_config_inputs), in
 * which the local file's approval keys are already gone.
 *
 * Pure: reads files and the environment, starts nothing. Not thread-safe
 * per set; distinct sets are independent.
 */
#ifndef LOOM_EXT_MCP_CONFIG_H
#define LOOM_EXT_MCP_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef enum {
    MCP_SCOPE_USER, MCP_SCOPE_PROJECT, MCP_SCOPE_LOCAL, MCP_SCOPE_CLI,
    MCP_SCOPE_PLUGIN,   /* an enabled plugin's server: "plugin:<plugin>:<server>" */
} mcp_scope;
typedef enum { MCP_KIND_STDIO, MCP_KIND_HTTP, MCP_KIND_SSE } mcp_kind;

/* The default per-request timeout when an entry gives none (Claude Code's
 * MCP_TOOL_TIMEOUT is unbounded by default; a hung server must not hang a
 * run for ever). Overridden by the environment MCP_TOOL_TIMEOUT (ms). */
#define MCP_DEFAULT_CALL_TIMEOUT_MS (10L * 60 * 1000)
/* Connect + handshake; environment MCP_TIMEOUT (ms) overrides. */
#define MCP_DEFAULT_CONNECT_TIMEOUT_MS 30000L

typedef struct mcp_server_config {
    char *name;
    mcp_scope scope;
    mcp_kind kind;
    char *command;      /* stdio */
    char **args;        /* NULL-terminated (never NULL for stdio) */
    json_t *env;        /* {name: value}, expanded (may be NULL) */
    char *cwd;          /* may be NULL */
    char *url;          /* http, sse */
    json_t *headers;    /* {name: value}, expanded (may be NULL) */
    long timeout_ms;    /* per request; MCP_DEFAULT_CALL_TIMEOUT_MS when not given */
    long connect_timeout_ms;
    bool always_load;   /* its tools are never deferred */
    char *instructions; /* the entry's own instructions (seed 000 row 5.4a), may be NULL */
    char *source;       /* the file (or "--mcp-config") it came from */
    bool needs_approval; /* a project server the user has not approved: not started */
    bool disabled;      /* "disabled": true or in disabledMcpjsonServers: not started */
    char *error;        /* a bad entry (bad type, unset ${VAR}): not started; why */
} mcp_server_config;

typedef struct mcp_config_set {
    mcp_server_config *servers;
    size_t n;
    json_t *warnings;   /* array of strings (unknown keys, …) */
} mcp_config_set;

typedef struct mcp_config_inputs {
    const char *project_dir;          /* where .mcp.json and .loom/ are (may be NULL) */
    const char *user_settings_path;   /* ~/.loom/settings.json (NULL: loom_home()'s) */
    const json_t *settings[3];        /* user, project, local settings documents (may be NULL):
                                         for the approval keys */
    bool trusted;                     /* the workspace is trusted */
    const char *const *cli_configs;   /* --mcp-config values (file paths or JSON texts) */
    size_t n_cli;
    bool strict;                      /* --strict-mcp-config */
    /* The enabled plugins' servers (borrowed; may be NULL): an array of
     * {"plugin": name, "servers": {name: entry}, "source": the plugin's
     * folder}. Each becomes "plugin:<plugin>:<server>" (its tools
     * mcp__plugin_<plugin>_<server>__<tool>), after the user's servers.
     * They start only in a trusted workspace; in an untrusted one they wait
     * for approval (their name in enabledMcpjsonServers of the user settings
     * — a local file's keys are trust-filtered away there —, or the REPL's
     * question) with a warning saying why. --strict-mcp-config
     * leaves them out. */
    const json_t *plugin_servers;
} mcp_config_inputs;

/* Loads every source. 0 with out filled (a bad entry is kept with error
 * set, so `loom mcp list` and /mcp can show it); -1 with err set only for a
 * file that exists but is not JSON, or a --mcp-config that is neither a
 * readable file nor JSON (the user asked for it: a clear error). */
int mcp_config_load(const mcp_config_inputs *in, mcp_config_set *out, loom_error *err);
void mcp_config_set_free(mcp_config_set *s);
const mcp_server_config *mcp_config_find(const mcp_config_set *s, const char *name);
/* A deep copy of one entry (for a connection of its own). */
void mcp_server_config_copy(mcp_server_config *dst, const mcp_server_config *src);
void mcp_server_config_free(mcp_server_config *c);

/* Expands ${VAR} and ${VAR:-default} in s. Returns a malloc'd string, or
 * NULL with *missing set to the first unset variable's name (malloc'd). */
char *mcp_expand_env(const char *s, char **missing);

const char *mcp_scope_name(mcp_scope s);   /* "user", "project", "local", "cli", "plugin" */
const char *mcp_kind_name(mcp_kind k);     /* "stdio", "http", "sse" */

/* Editing the files (`loom mcp add|add-json|remove`). scope is user (the
 * user settings file), project (.mcp.json) or local
 * (.loom/settings.local.json). add: entry is validated first (the same
 * rules as loading, ${VAR} left unexpanded); an existing name is replaced
 * only when replace is set. The file is rewritten atomically, other keys
 * kept. 0, or -1 with err set. */
int mcp_config_add(const mcp_config_inputs *in, mcp_scope scope, const char *name,
                   const json_t *entry, bool replace, loom_error *err);
/* Removes name from scope (when scope_given) or from whichever single
 * scope holds it (two holding it: an error naming both). */
int mcp_config_remove(const mcp_config_inputs *in, bool scope_given, mcp_scope scope,
                      const char *name, loom_error *err);
/* Records approval of a project server in the local settings'
 * enabledMcpjsonServers (the REPL's prompt). */
int mcp_config_approve(const mcp_config_inputs *in, const char *name, loom_error *err);

#endif

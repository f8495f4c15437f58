/* internal.h — the structures behind loom.h's opaque handles, shared by the
 * files of src/api/ only. */
#ifndef LOOM_API_INTERNAL_H
#define LOOM_API_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "base/cancel.h"
#include "base/error.h"
#include "loom.h"
#include "context/memory.h"
#include "context/control.h"
#include "policy/secrets.h"
#include "heartbeat/config.h"
#include "agents/agents.h"
#include "ext/plugins/plugins.h"
#include "runtime/loop.h"
#include "session/transcript.h"
#include "tools/registry.h"
#include "provider/models.h"
#include "provider/provider.h"
#include "telemetry/otel_config.h"
#include "telemetry/otlp_exporter.h"
#include "telemetry/tracer.h"

struct loom_config {
    json_t *values;   /* key → string, as given to loom_config_set */
    json_t *files[3]; /* the user, project and local settings documents (or NULL);
                       * project and local filtered by trust_filter when untrusted */
    json_t *notices;  /* trust notices: what untrusted files said that was dropped */
    json_t *warnings; /* the settings schema's warnings (base/settings.h), or NULL */
    json_t *sources;  /* the settings files found (base/settings.h's list, trust marked) */
    bool trusted;     /* the workspace's own settings count in full */
    char *workspace;  /* the cwd the files were read for, symlinks resolved */
    char *user_path;  /* the user settings file */
};

struct loom_agent {
    json_t *values;           /* the config it was made from (copy) */
    json_t *files[3];         /* settings documents: user, project, local (or NULL) */
    provider_config provider;
    char *fallback_model;
    tool_registry *tools;
    struct tool_def *web_search; /* WebSearch when the user configured it (api/web_search.c) */
    char *cwd;
    char *system_static;
    char *system_dynamic;
    memory_report memory;     /* the instruction files system_dynamic holds */
    loop_params params;       /* points into the fields above */
    heartbeat_config heartbeat; /* the "heartbeat" settings block (enabled false: off) */
    bool interactive;
    json_t *notices;          /* the config's trust notices (array of strings) */
    json_t *warnings;         /* the config's settings warnings (array of strings) */
    json_t *sources;          /* the config's settings files found (api/sources.c) */
    bool trusted;             /* the config's workspace trust (config.c decided it) */
    /* The command sandbox (resolve_sandbox in agent.c), copied into each
     * session's governance; NULL with sandbox_error set when the sandbox
     * settings are invalid. */
    struct sandbox_policy *sandbox;
    char *sandbox_error;
    /* Sub-agents (agents/): the catalog of roles and agent files, and the
     * "agents" settings (enabled false: no Agent tool, no spawn tree). */
    agent_catalog *agents_catalog;
    agents_config agents;
    /* Telemetry (api/telemetry.c): the OTEL_* settings, the exporter every
     * run of the agent shares (NULL when no signal is on) and the
     * variables' warnings, shown at each run's start. */
    otel_config otel;
    otlp_exporter *otel_exporter;
    json_t *otel_warnings;
    /* Extensions (api/extensions.c): the installed plugins, the roots of the
     * enabled ones, the skill, command and output-style catalogs, and the
     * folders skipped in an untrusted workspace (strings). */
    plugin_set plugins;
    ext_plugin_root *plugin_roots;
    size_t n_plugin_roots;
    struct skill_catalog *skills;
    struct command_catalog *commands;
    struct style_set *styles;
    char *output_style;       /* the active output style's name; NULL: default */
    json_t *ext_notices;
    bool compat_claude;       /* Claude Code's files count (api_compat_claude) */
};

typedef struct file_state file_state;
typedef struct file_history file_history;
typedef struct task_registry task_registry;
typedef struct todo_list todo_list;

struct loom_session {
    loom_agent *agent;
    transcript *t;
    file_state *files;
    file_history *history;
    task_registry *tasks;
    todo_list *todos;
    struct task_list *task_list; /* TaskCreate and kin: <session>.tasks.json, the tree's */
    struct working *working;   /* C_working: goal, dashboard, plan, surfaces */
    char *mf_dir;              /* M_f: <session>.mf/ beside the session file */
    context_state context;     /* context control: pressure, edits, compaction; runs borrow it */
    struct governance *gov;    /* rules, hooks, mode, approvals, audit */
    struct helper_router *helpers; /* helper model calls (provider/helper.h); gov borrows it */
    int mode_recorded;         /* the mode the transcript last noted (default: none noted) */
    int plan_recorded;         /* and its prePlanMode (-1: none) */
    bool mode_noted;           /* the transcript holds a permission-mode record */
    msg_usage usage;          /* totals of the runs made through this handle */
    pthread_mutex_t lock;      /* guards usage */
    atomic_bool run_active;    /* a run is in progress (loom_run_start .. its end) */
    struct api_mcp *mcp;       /* its MCP servers and tool set (api/mcp.c); NULL: none */
    struct agents_session *agents; /* its sub-agents (agents/agents.h); NULL: agents off */
    struct api_ext *ext;       /* skills in use, the tool-set port (api/extensions.c) */
    struct api_memory *memory; /* recall and extraction (api/memory.c); NULL until a run */
    struct api_worktree *worktree; /* EnterWorktree's (api/worktree.c); NULL: never entered */
};

/* The loop_io fields every use of the session shares (transcript,
 * governance, C_working, M_f, the context state); the rest zeroed. */
void api_session_io(loom_session *s, loop_io *io);
/* The session's parts a tool call reaches through tool_ctx: the task
 * list, the permission mode, the MCP servers' tools (api/web_search.c). */
void api_session_tool_ports(loom_session *s, struct tool_ctx *tctx);
/* EnterWorktree / ExitWorktree (api/worktree.c): attach gives a run's
 * shared tool context the ports and, inside a worktree, its directory;
 * detach at the run's end; free with the session. */
void api_worktree_attach(loom_session *s, tool_ctx *tctx);
void api_worktree_detach(loom_session *s);
void api_worktree_free(loom_session *s);
/* Settles the helper calls made outside a run (loom_tool_call's
 * classifier): session and audit records, their tokens in the session's
 * usage. */
void api_session_settle_helpers(loom_session *s, const char *run_id);
/* Settles the helper calls a run made after its loop (memory extraction)
 * into its result: tokens and cost, before the session adds them up. */
void api_session_settle_run_tail(loom_session *s, const char *run_id, loop_result *res);
/* Adds u to the session's usage totals (under its lock). */
void api_session_add_usage(loom_session *s, const msg_usage *u);
/* Writes the session's title record from goal's first line unless the
 * session has a title already (docs/session-format.md, "Titles"). */
void api_session_title(loom_session *s, const char *goal);
/* The permission mode in the transcript (api/permissions.c):
 * api_permission_mode_load reads the last permission-mode record into
 * s->mode_recorded (at open); api_permission_mode_record appends one when the
 * mode in force differs from it (a run's start and end, a mode switch). */
void api_permission_mode_load(loom_session *s);
void api_permission_mode_record(loom_session *s);
/* Whether the session holds a user goal a run can be continued from. */
bool api_session_has_goal(loom_session *s);
/* The library run's id and session (for the run's other files). */
const char *api_run_id(const loom_run *r);
loom_session *api_run_session(const loom_run *r);
/* The entry check of a loom_* function (Lua's api_check, but an error, not
 * an abort: loom.h promises callers an error for a NULL argument): when arg
 * is NULL, st gets invalid_request naming the function and the argument,
 * and the function returns ret. */
#define API_CHECK_ARG(st, arg, ret)                                                            \
    do {                                                                                       \
        if (!(arg)) {                                                                          \
            api_status_set((st), LOOM_ERR_INVALID_REQUEST, "%s: %s is NULL", __func__, #arg);  \
            return ret;                                                                        \
        }                                                                                      \
    } while (0)

/* Fills st from an internal error (st may be NULL). */
void api_status_from(loom_status *st, const loom_error *err);
void api_status_ok(loom_status *st);
int api_status_set(loom_status *st, loom_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The agent's sandbox denyRead list for the secret checks (buf filled), or
 * NULL when it has no sandbox. */
const secrets_deny *api_agent_deny(const loom_agent *a, secrets_deny *buf);
/* Output styles (styles.c). The static system prompt in the active style:
 * the option output_style (settings "outputStyle") found in a->styles
 * (api_ext_load loaded them); an unknown name is a session warning naming
 * it, and the default is used. Sets a->output_style (the style's own
 * spelling; NULL: default). Caller frees. */
char *api_styles_static(loom_agent *a);
/* Appends text to the agent's warnings (the sessions' warnings). */
void api_agent_warn(loom_agent *a, const char *text);

/* The options of loom_config (options.c): one entry per key loom.h lists. */
typedef enum {
    API_OPT_TEXT,     /* any string */
    API_OPT_WHOLE,    /* a whole number from min to max */
    API_OPT_NUMBER,   /* a non-negative number */
    API_OPT_BOOL,     /* true|false (also 1|0, yes|no) */
    API_OPT_PROVIDER, /* anthropic | openai | openai-responses | replay */
    API_OPT_MODE,     /* a permission mode's name */
    API_OPT_AMOUNT,   /* a token amount: 500k, 1.5m, 200000 (a leading + allowed) */
    API_OPT_JSON,     /* a JSON text (compaction: its thresholds are checked too) */
    API_OPT_THINKING, /* a thinking budget: true|false, a whole number, {"budget_tokens": N} */
    API_OPT_EFFORT,   /* a reasoning effort: low | medium | high */
} api_option_kind;

/* Extended thinking's budget bounds. The floor is the API's ("Must be
 * ≥1024 and less than max_tokens": @anthropic-ai/sdk 1.15.0,
 * src/resources/messages/messages.ts, ThinkingConfigEnabled.budget_tokens).
 * The default, for "thinking": true and --thinking without a number, is
 * Claude Code's ("Claude can use up to 31,999 tokens from your output budget
 * for internal reasoning": code.claude.com/docs/en/common-workflows, "Use
 * extended thinking"); the codec lowers it under a smaller max_tokens. */
#define API_THINKING_MIN 1024
#define API_THINKING_MAX 1000000
#define API_THINKING_DEFAULT 31999

typedef struct api_option {
    const char *key;
    api_option_kind kind;
    long min, max; /* API_OPT_WHOLE */
} api_option;

/* The option named key, or NULL for an unknown key. */
const api_option *api_option_find(const char *key);
/* The i-th option of the table, NULL past the end (for tests and docs). */
const api_option *api_option_at(size_t i);
/* 0 when value suits o; else -1 with st set (config_invalid) naming the key
 * and what it takes. */
int api_option_check(const api_option *o, const char *value, loom_status *st);
/* values[key] parsed into *out (untouched when absent): 0, or -1 with st set
 * as api_option_check. key must be a table entry of that kind. */
int api_option_long(const json_t *values, const char *key, long *out, loom_status *st);
int api_option_double(const json_t *values, const char *key, double *out, loom_status *st);
int api_option_bool(const json_t *values, const char *key, bool *out, loom_status *st);
/* A "thinking" value as a budget in tokens (0 = off); -1 with st set when
 * it is none of the forms loom.h lists. */
int api_thinking_budget(const char *value, int *out, loom_status *st);
/* The "agents" settings: defaults, then the settings files' "agents"
 * block (a bool, or {enabled, maxDepth, maxRunning, maxTurns, inheritMode,
 * merge}) and "runtime.max_depth", local winning, then the "agents"
 * option and LOOM_AGENTS. 0, or -1 with st set on a bad value. */
int api_agents_config(const json_t *values, json_t *const files[3], agents_config *out,
                      loom_status *st);
/* Whether Claude Code's files count in full (.claude settings, CLAUDE.md,
 * .claude/skills, commands, agents): the "compat_claude" value
 * (loom_config_load_settings records its decision there), else
 * LOOM_COMPAT_CLAUDE, else the user settings' "compat": {"claude"}, else
 * true (base/settings.h settings_compat_claude). Off, a .claude file's
 * deny and ask rules still apply. */
bool api_compat_claude(const json_t *values, json_t *const files[3]);
/* The config value for key, or NULL. */
const char *api_value(const json_t *values, const char *key);
/* Loom's home (LOOM_HOME, else ~/.loom) is, or can be made, a writable
 * folder: 0, or -1 with st naming LOOM_HOME and the path (home.c). */
int api_home_check(loom_status *st);
/* A model's price for an agent (ctx): its "models".<id>."price" settings
 * entry, else the dated table's (agent.c; loop_params.price_for). */
bool api_agent_price(void *ctx, const char *model, model_price *out);
/* The settings' "models".<name>."price" entries checked (model_prices.c):
 * -1 with st naming the file and key of the first bad one. */
int api_check_model_prices(json_t *const files[3], const char *cwd, loom_status *st);

/* The session's MCP servers (api/mcp.c). open: reads the configuration and
 * starts the servers connecting (nothing when none is configured; -1 with
 * err set when a --mcp-config value cannot be read); close:
 * ends them all. run_begin fills io's tool-set port and takes the run's
 * elicitation handler; run_end drops it. prepare_goal turns
 * `/mcp__server__prompt args` into the prompt's text and appends what
 * `@server:uri` mentions name (malloc'd; NULL with err set when the prompt
 * command cannot be served). status: the servers' states (new reference). */
int api_mcp_open(loom_session *s, loom_error *err);
void api_mcp_close(loom_session *s);
void api_mcp_run_begin(loom_session *s, loop_io *io, const loom_run_options *opts);
void api_mcp_run_end(loom_session *s);
char *api_mcp_prepare_goal(loom_session *s, const char *goal, loom_error *err);
json_t *api_mcp_status(loom_session *s);
/* The session's MCP manager (sub-agents clone it), or NULL. */
struct mcp_manager *api_mcp_manager(loom_session *s);
/* tool_ctx.mcp_call over the session ctx's servers: tools/call of tool on
 * server (args stolen); the result, or NULL with why set. Any thread. */
json_t *api_mcp_tool_call(void *ctx, const char *server, const char *tool, json_t *args,
                          const loom_cancel *cancel, loom_str *why);
/* Waits, once per session, for the servers still connecting (up to
 * LOOM_MCP_STARTUP_WAIT_MS, default 2 s): the run's start event then says
 * how they are. */
void api_mcp_startup_wait(loom_session *s);
/* Sampling (api/mcp_sampling.c): whether the user's settings turned it on,
 * and one request served by the agent's model (NULL with *why set). */
bool api_mcp_sampling_enabled(const loom_agent *a);
json_t *api_mcp_sample(loom_session *s, const char *server, const json_t *params, char **why);


/* Extensions (api/extensions.c). load: plugins, then the skill, command
 * and style catalogs for the agent (warnings join a->warnings); -1 with st
 * only when out of memory. open/close: the session's skill state.
 * run_begin wraps io's tool-set port (after MCP's, before the agents') so
 * every run sees the Skill tool and the one extensions part of the system
 * prompt; run_end clears the run's grants and returns the skills report
 * (new reference). prepare_goal: "/name args" naming a command or a
 * user-invocable skill becomes its prompt (else api_mcp_prepare_goal's
 * answer); a plain goal gets its @file mentions attached and the images it
 * names by path read (both as Read calls through the pipeline, so deny
 * rules hold: ext/commands' command_expand_mentions), the images put in
 * *images (a new array of {mediaType, data}, or NULL); NULL with err when
 * it cannot be served. *model: the command's
 * or skill's model for this run (a full id; an alias such as "sonnet" is
 * not resolved and is reported as a warning), else NULL. observe_call: a
 * tool.started payload, for the report. context_parts: [{name, tokens,
 * budget?}] for loom_session_context_json. */
int api_ext_load(loom_agent *a, loom_status *st);
/* Adds WebSearch to a->tools when the user's settings name a search
 * service; a bad "webSearch" block is an error naming it. 0 or -1. */
int api_web_search_add(loom_agent *a, loom_status *st);
void api_ext_free_agent(loom_agent *a);
void api_ext_open(loom_session *s);
void api_ext_close(loom_session *s);
void api_ext_run_begin(loom_session *s, loop_io *io, tool_ctx *tctx);
/* answer: the run's final text, for the citation check. */
json_t *api_ext_run_end(loom_session *s, const char *answer);
/* Memory (api/memory.c, ext/memory/): recall at run start — the block
 * goes to the tail of the run's first request through io's tool-set port,
 * which it wraps (call after api_ext_run_begin); goal is what the person
 * typed, NULL for a resume note (no recall). run_end: extraction (when
 * enabled), a report for the run's result or NULL; its helper call's
 * usage is added to res. close: at the session's end. */
void api_memory_run_begin(loom_session *s, loop_io *io, const char *goal, const char *run_id);
json_t *api_memory_run_end(loom_session *s, loop_io *io, loop_result *res);
void api_memory_close(loom_session *s);
/* The session's knowledge (ext/knowledge), NULL when no source is set. */
struct knowledge_session *api_ext_knowledge(loom_session *s);
char *api_ext_prepare_goal(loom_session *s, const char *goal, tool_ctx *tctx, const char **model,
                           json_t **images, loom_error *err);
void api_ext_observe_call(loom_session *s, const json_t *started);
json_t *api_ext_context_parts(loom_session *s);
/* The extensions part as last composed (NULL: empty); between runs only. */
const char *api_ext_text(loom_session *s);

/* Self-evolution (evolve.c, ext/evolve/): NULL when the "evolve" settings
 * leave it off (goal: what the person typed; NULL for a resume note).
 * run_end distills the run, frees the state and sets the summary as the
 * run result's "evolve" (nothing for a NULL state). */
typedef struct api_evolve api_evolve;
api_evolve *api_evolve_run_begin(loom_session *s, const char *run_id, const char *goal);
void api_evolve_run_end(api_evolve *ev, const loop_result *res, json_t *result);

/* MCP configuration inputs (mcp_config.c) from a config's or an agent's
 * values ("mcp_config", "strict_mcp_config"), settings documents (the
 * trust-filtered ones: user, project, local), trust, workspace and user
 * settings file (NULL: loom_home()'s). in->cli_configs is allocated: free
 * with api_mcp_config_inputs_free. 0, or -1 with st set (a bad value). */
struct mcp_config_inputs;
int api_mcp_config_inputs(const json_t *values, json_t *const files[3], bool trusted,
                          const char *workspace, const char *user_path,
                          struct mcp_config_inputs *in, loom_status *st);
void api_mcp_config_inputs_free(struct mcp_config_inputs *in);

/* Plugins (api/plugins.c). After api_ext_load: in an untrusted workspace,
 * one warning per enabled plugin whose MCP servers will wait for approval
 * (its hooks are warned about by governance, per session). */
void api_plugins_warn_untrusted(loom_agent *a);
/* The same from settings documents (a config's): 0, or -1 with err when
 * the installed list cannot be read. Free with plugin_set_free. */
int api_plugins_read(const json_t *user, const json_t *project, bool trusted, plugin_set *out,
                     loom_error *err);
/* The enabled plugins' hooks as governance_settings.plugin_hooks wants
 * them, and their MCP servers as mcp_config_inputs.plugin_servers wants
 * them (new references; NULL when there are none). */
json_t *api_plugin_hooks(const plugin_set *s);
json_t *api_plugin_servers(const plugin_set *s);

/* ---- telemetry.c: OpenTelemetry traces and metrics of runs ---- */

void api_telemetry_agent_init(loom_agent *a);
void api_telemetry_agent_free(loom_agent *a);
/* The run's tracer (NULL when traces and metrics are off); the variables'
 * warnings are emitted through emit first. */
otel_tracer *api_telemetry_run_begin(loom_agent *a);
/* Ends the run's spans, flushes the exporter (bounded) and adds
 * "telemetry": {spans_exported, spans_dropped, metrics_exported,
 * metrics_dropped, last_error?} to result. */
void api_telemetry_run_end(loom_agent *a, otel_tracer *t, json_t *result);

#endif

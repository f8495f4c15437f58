/* governance.h — everything that decides whether a tool call may run, put
 * together for one session: the mode, the settings rules, the hooks, the
 * risk classifier, approvals, the audit log and the command sandbox policy.
 *
 * The tool pipeline (governance/pipeline.c) asks it one question per call, in
 * its fixed steps; this module owns the state those steps need and the
 * settings they come from (docs/permissions.md). */
#ifndef LOOM_GOVERNANCE_GOVERNANCE_H
#define LOOM_GOVERNANCE_GOVERNANCE_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "hooks/registry.h"
#include "hooks/run.h"
#include "policy/approvals.h"
#include "policy/audit.h"
#include "policy/decision.h"
#include "policy/rules.h"

typedef struct governance_settings {
    /* The three settings files' documents (borrowed; NULL when absent). */
    const json_t *user, *project, *local;
    const char *const *cli_allow;   /* --allowedTools, NULL-terminated (may be NULL) */
    const char *const *cli_deny;    /* --disallowedTools */
    const char *const *cli_ask;     /* the option ask_tools: rules that always ask */
    int64_t approval_timeout_ms;    /* how long an approval waits (0: the default) */
    int64_t tool_deadline_ms;       /* the option max_tool_seconds: caps every call (0: none) */
    const char *mode;               /* --permission-mode / settings; NULL: default */
    const char *const *add_dirs;    /* --add-dir, NULL-terminated (may be NULL) */
    bool interactive;               /* a person can answer approvals */
    /* Whether project and local hooks may run. The integrator passes the
     * answer it filtered the documents with (policy/trust.h), so the two
     * never disagree; GOVERNANCE_TRUST_DECIDE (0) decides here from the
     * user document and the environment. */
    enum { GOVERNANCE_TRUST_DECIDE, GOVERNANCE_TRUSTED, GOVERNANCE_UNTRUSTED } trust;
    /* The command sandbox of the session (copied; NULL: none), or, when the
     * sandbox settings are invalid, why (copied): commands are then refused,
     * never run unsandboxed. */
    const struct sandbox_policy *sandbox;
    const char *sandbox_error;
    /* The enabled plugins' hooks (borrowed; may be NULL): an array of
     * {"plugin": name, "hooks": {Event: [groups]}}, ${CLAUDE_PLUGIN_ROOT}
     * already expanded (ext/plugins). They need the same trust as the
     * project's hooks: untrusted, they are loaded but skipped, with a
     * warning naming the plugin; a malformed one is a warning too, and
     * that plugin's hooks are left out. */
    const json_t *plugin_hooks;
} governance_settings;

typedef struct governance {
    perm_mode_state mode;
    perm_rules *rules;
    hook_registry *hooks;
    approval_registry *approvals;
    int64_t approval_timeout_ms;    /* 0: APPROVAL_DEFAULT_TIMEOUT_MS */
    int64_t tool_deadline_ms;       /* caps each call's deadline (0: the tool's own) */
    audit_log *audit;               /* NULL when it could not be opened (warned) */
    bool interactive;
    bool trusted;                   /* project/local hooks may run */
    bool session_started;           /* SessionStart has fired */
    /* auto mode's model classifier (policy/model_classifier.h); NULL: none,
     * so auto mode asks — or denies headless — what rules cannot settle. */
    const struct provider_config *classifier;
    /* The session's helper model calls (provider/helper.h): the classifier
     * and prompt hooks go through it. Borrowed (the session owns it; a
     * sub-agent's governance borrows its parent's); NULL: calls go straight
     * to the classifier's provider and prompt hooks are skipped. */
    struct helper_router *helpers;
    /* `type: "agent"` hooks: run by the agents layer (agents/hook_agent.c),
     * which sets this port on a session's governance for the length of a
     * run. NULL: agent hooks are skipped with a notice. Inside a sub-agent
     * they are always skipped, so an agent hook's own sub-agent never
     * starts another. */
    hook_llm_fn agent_hook;
    void *agent_hook_ctx;
    /* The session's own command sandbox (sandbox/sandbox_policy.h): NULL
     * when disabled; sandbox_error set when its settings are invalid. The
     * session's tool calls get it through tool_ctx. */
    struct sandbox_policy *sandbox;
    char *sandbox_error;
    struct sandbox_prep *hook_sandbox; /* sandbox.hooks: command hooks run confined */
    char *cwd;
    char *session_id;
    char *transcript_path;
    char *local_settings_path;      /* where "allow always" rules are written */
    /* Directories that count as the workspace for reading, besides cwd:
     * permissions.additionalDirectories of every settings file and --add-dir,
     * absolute with their symlinks resolved. */
    char **additional_dirs;
    size_t n_additional_dirs;
    char **warnings;                /* for the surface, oldest first */
    size_t n_warnings;
    /* A sub-agent's governance (governance_child): the parent's rules,
     * hooks, approvals, audit and classifier are borrowed, not owned, and
     * outlive it. NULL for a session's own. */
    const struct governance *parent;
    /* What the sub-agent's role and file allow on top of the rules: a tool
     * must match tool_allow when it is set, and must not match tool_deny
     * (rule strings as in settings: "Bash(git:*)", "mcp__github__*"). */
    perm_rules *tool_allow, *tool_deny;
    char *tool_allow_text;          /* the tools list as given ("Read, Bash(git:*)"), for errors */
    bool role_read_only;            /* Explore, Plan: only read-only and local-state tools run */
    hook_registry *scoped_hooks;    /* the agent file's own hooks, fired after the session's */
    /* Hook payloads fired inside a sub-agent carry these (Claude Code's
     * agent_id, agent_type); NULL for the main agent. */
    char *agent_id, *agent_type, *agent_name;
    /* What an active skill or a custom command pre-approved for the rest
     * of the run (allowed-tools): allow rules only, consulted when no
     * settings rule decided, so deny and ask rules still win. NULL: none.
     * Changed only on the run's thread (the Skill tool runs alone). */
    perm_rules *run_grants;
    json_t *run_grant_by;           /* rule text → who granted it */
    /* The running run's trace context for hooks (TRACEPARENT,
     * docs/telemetry.md): the traceparent of the span call_id runs in (the
     * run's span when NULL or unknown). Set on a session's governance for
     * the length of a run; sub-agents use their root's. NULL: none. */
    bool (*traceparent)(void *ctx, const char *call_id, char buf[56]);
    void *traceparent_ctx;
} governance;

/* What a sub-agent's governance differs in (agents/runner.c). */
typedef struct governance_child_opts {
    perm_mode mode;                 /* already capped at the parent's by the caller */
    const char *cwd;                /* NULL: the parent's (a worktree agent: its worktree) */
    const char *session_id;         /* the sub-agent's own (its sidechain) */
    const char *transcript_path;
    const char *agent_id, *agent_type, *agent_name;
    const char *const *tools;       /* allow list, NULL-terminated; NULL: every tool */
    const char *const *disallowed;  /* deny list; NULL: none */
    bool role_read_only;
    const json_t *hooks;            /* the agent file's "hooks" block (settings shape); NULL: none */
    /* The sandbox policy the child runs under (a worktree agent's, with its
     * worktree as the writable root; copied); NULL: the parent's copy. */
    const struct sandbox_policy *sandbox;
} governance_child_opts;

/* A sub-agent's governance: rules, hooks, approvals, audit, classifier and
 * the hooks' sandbox borrowed from parent (which must outlive it); mode,
 * sandbox copy, cwd, ids, allow/deny lists and the agent file's hooks its
 * own; the additional read directories copied. interactive and trusted are
 * the parent's. NULL with err set on a bad entry in tools, disallowed or
 * hooks, naming it ("agent Explore: tools[1]: …").
 *
 * Inside a sub-agent the session-level events (SessionStart, SessionEnd,
 * UserPromptSubmit, Stop, StopFailure, FinalStop) fire nothing: a
 * sub-agent's start and end are SubagentStart and SubagentStop, which
 * agents/ fires, as in Claude Code. For the same reason an agent file's
 * Stop hooks are loaded as SubagentStop hooks. */
governance *governance_child(governance *parent, const governance_child_opts *o,
                             loom_error *err);

/* The hooks that fire for ev under g: the session's and, in a sub-agent,
 * its own (0 for the session-level events there). What callers test
 * before building a payload, instead of hook_registry_count(g->hooks, …),
 * which misses a sub-agent's own. */
size_t governance_hook_count(governance *g, hook_event ev);

/* perm_decision.source when a sub-agent's own limits refused a call. */
#define GOVERNANCE_SRC_AGENT "agent"

/* A sub-agent's own limits on one call, on top of the rules and the mode:
 * the role (read-only roles run only read-only and local-state tools), the
 * agent's tools list and its disallowedTools. They only ever deny. tool is
 * the name the call used and name the tool's own (they differ for an
 * alias; a list entry may name either). NULL when the call goes on to the
 * decision (always for a session's own governance); else the step that
 * refused, "role" or "agent_tools", with a reason the model can act on in
 * why. */
const char *governance_agent_gate(const governance *g, const char *tool, const char *name,
                                  bool read_only, bool local_state_only, const json_t *input,
                                  const char *cwd, char *why, size_t cap);

/* Builds the session's governance. The workspace is trusted as s->trust
 * says, or (GOVERNANCE_TRUST_DECIDE) when the user settings list it under
 * "trustedWorkspaces" or LOOM_TRUST_WORKSPACE=1 (trust_workspace_trusted):
 * until then project and local hooks are loaded but skipped with a notice.
 * NULL with err on a malformed rule or hook (naming the file and entry). */
governance *governance_new(const char *cwd, const char *session_id, const char *transcript_path,
                           const governance_settings *s, loom_error *err);
void governance_free(governance *g);

/* "Allow always": appends rule to permissions.allow of
 * .loom/settings.local.json (created if absent) and to the live rules. */
int governance_allow_always(governance *g, const char *rule, loom_error *err);

/* Pre-approves rules (allow-rule strings, NULL-terminated) for the rest of
 * the run: by names who granted them ("skill pdf-tools", "command
 * /review"), shown as the deciding rule ("Bash(git add:*) (skill
 * pdf-tools)"). A malformed rule is skipped with a warning on g. In a
 * sub-agent the grant is its own. */
void governance_grant_run(governance *g, const char *const *rules, const char *by);
/* Run end: the grants lapse. */
void governance_grants_clear(governance *g);
/* Step 7's fallback when no settings rule decided: whether a run grant
 * allows the call; *m is then the grant, its text naming who granted it. */
bool governance_grant_allows(const governance *g, const char *tool, const json_t *input,
                             const char *cwd, rule_match *m);

/* The hook payload common part for an event (new reference); inside a
 * sub-agent it carries agent_id and agent_type too (Claude Code's names). */
json_t *governance_payload(const governance *g, hook_event ev);
/* Fires ev with the common payload plus extra (stolen; may be NULL),
 * confined by the sandbox when sandbox.hooks is set; in a sub-agent the
 * agent file's hooks then fire too, and the two answers are merged
 * (hook_outcome_merge). The caller frees the outcome (hook_outcome_free). */
hook_outcome governance_fire(governance *g, hook_event ev, json_t *extra,
                             const loom_cancel *cancel);
/* Adds a directory that counts as the workspace for reading (resolved
 * against cwd; "~/" is the home directory; one that does not resolve is
 * ignored): --add-dir, additionalDirectories, and the session's own
 * directory, where oversized tool results are spilled for the model to
 * Read. */
void governance_add_read_dir(governance *g, const char *dir);

#endif

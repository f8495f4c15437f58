/* child.c — a sub-agent's governance (governance.h, governance_child) and
 * the limits its role and agent file put on each call
 * (governance_agent_gate, step 8 of the pipeline).
 *
 * Owns: what governance_child allocates for the child — its cwd, ids,
 * sandbox copy, read directories, allow/deny lists and the agent file's
 * hook registry. The rules, hooks, approvals, audit, classifier and hooks'
 * sandbox stay the parent's, so a rule added by "allow always" in a child
 * holds for the whole session, and an approval a child asks for sits where
 * the session's surfaces look (the root run's id is the caller's to pass
 * in tool_ctx.run_id). governance_free (governance.c) frees only the owned
 * part when g->parent is set.
 *
 * Threading: governance_child runs on the thread that spawns the agent;
 * governance_agent_gate only reads and may run on tool-pool threads. */
#include "governance/governance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "sandbox/sandbox.h"

/* One tools / disallowedTools list into a rule set (NULL list: none).
 * The entries are permission-rule texts, so `Bash(git:*)` and
 * `mcp__github__*` mean what they mean in settings. */
static int load_list(perm_rules **out, const char *const *list, perm_verdict v,
                     const char *key, const char *agent, loom_error *err)
{
    if (!list)
        return 0;
    *out = perm_rules_new();
    for (size_t i = 0; list[i]; i++)
        if (perm_rules_add(*out, v, list[i], RULE_SRC_PROJECT, err) != 0) {
            loom_error_prefix(err, "agent %s: %s[%zu]", agent, key, i);
            return -(int)err->code;
        }
    return 0;
}

static char *join_list(const char *const *list)
{
    loom_str s = LOOM_STR_INIT;
    for (size_t i = 0; list && list[i]; i++)
        str_printf(&s, "%s%s", i ? ", " : "", list[i]);
    return str_steal(&s);
}

/* The agent file's hooks block, in the settings shape. Its Stop hooks
 * become SubagentStop hooks: a sub-agent's end is SubagentStop (Claude
 * Code converts them the same way). */
static int load_hooks(governance *g, const json_t *hooks, const char *agent, loom_error *err)
{
    if (!hooks || json_is_null(hooks))
        return 0;
    if (!json_is_object(hooks))
        return loom_error_set(err, LOOM_ERR_CONFIG, "agent %s: hooks must be an object keyed "
                              "by event name", agent);
    json_t *copy = json_deep_copy(hooks);
    json_t *stop = json_object_get(copy, "Stop");
    if (stop) {
        json_t *sub = json_object_get(copy, "SubagentStop");
        if (!json_is_array(stop) || (sub && !json_is_array(sub))) {
            json_decref(copy);
            return loom_error_set(err, LOOM_ERR_CONFIG, "agent %s: hooks.%s must be an array",
                                  agent, json_is_array(stop) ? "SubagentStop" : "Stop");
        }
        if (!sub) {
            sub = json_array();
            json_object_set_new(copy, "SubagentStop", sub);
        }
        json_array_extend(sub, stop);
        json_object_del(copy, "Stop");
    }
    g->scoped_hooks = hook_registry_new();
    /* The catalog loads an untrusted workspace's agent files not at all;
     * the parent's trust is the fail-closed answer for the rest. */
    int rc = hook_registry_load(g->scoped_hooks, copy, HOOK_SRC_AGENT, g->trusted, err);
    json_decref(copy);
    if (rc != 0) {
        loom_error_prefix(err, "agent %s", agent);
        return rc;
    }
    for (size_t i = 0; i < hook_registry_warning_count(g->scoped_hooks); i++) {
        loom_str w = LOOM_STR_INIT;
        str_printf(&w, "agent %s: %s", agent, hook_registry_warning(g->scoped_hooks, i));
        g->warnings = xrealloc(g->warnings, (g->n_warnings + 1) * sizeof *g->warnings);
        g->warnings[g->n_warnings++] = str_steal(&w);
    }
    return 0;
}

static void copy_sandbox(governance *g, const governance *parent, const governance_child_opts *o)
{
    /* Invalid sandbox settings stay invalid in every child: its commands
     * are refused too, never run unsandboxed. */
    if (parent->sandbox_error)
        g->sandbox_error = xstrdup(parent->sandbox_error);
    const sandbox_policy *from = o->sandbox ? o->sandbox : parent->sandbox;
    if (from) {
        g->sandbox = xcalloc(1, sizeof *g->sandbox);
        sandbox_policy_copy(g->sandbox, from);
    }
}

governance *governance_child(governance *parent, const governance_child_opts *o,
                             loom_error *err)
{
    if (!parent || !o) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "governance_child: no parent or options");
        return NULL;
    }
    governance *g = xcalloc(1, sizeof *g);
    g->parent = parent;
    g->rules = parent->rules;
    g->hooks = parent->hooks;
    g->approvals = parent->approvals;
    g->approval_timeout_ms = parent->approval_timeout_ms;
    g->tool_deadline_ms = parent->tool_deadline_ms;
    g->audit = parent->audit;
    g->classifier = parent->classifier;
    g->helpers = parent->helpers;
    g->hook_sandbox = parent->hook_sandbox;
    g->interactive = parent->interactive;
    g->trusted = parent->trusted;
    g->session_started = true; /* SessionStart is the session's, not the child's */
    perm_mode_init(&g->mode, o->mode);
    copy_sandbox(g, parent, o);
    g->cwd = xstrdup(o->cwd ? o->cwd : parent->cwd);
    g->session_id = xstrdup(o->session_id ? o->session_id : parent->session_id);
    const char *tp = o->transcript_path ? o->transcript_path : parent->transcript_path;
    g->transcript_path = tp ? xstrdup(tp) : NULL;
    g->local_settings_path = parent->local_settings_path ? xstrdup(parent->local_settings_path)
                                                         : NULL;
    /* Copied, not borrowed: the parent may still add one (and realloc). */
    if (parent->n_additional_dirs) {
        g->additional_dirs = xcalloc(parent->n_additional_dirs, sizeof *g->additional_dirs);
        for (size_t i = 0; i < parent->n_additional_dirs; i++)
            g->additional_dirs[i] = xstrdup(parent->additional_dirs[i]);
        g->n_additional_dirs = parent->n_additional_dirs;
    }
    g->agent_id = o->agent_id ? xstrdup(o->agent_id) : NULL;
    g->agent_type = o->agent_type ? xstrdup(o->agent_type) : NULL;
    g->agent_name = o->agent_name ? xstrdup(o->agent_name) : NULL;
    g->role_read_only = o->role_read_only;
    const char *agent = o->agent_type ? o->agent_type : o->agent_name ? o->agent_name : "?";
    if (load_list(&g->tool_allow, o->tools, PERM_ALLOW, "tools", agent, err) != 0 ||
        load_list(&g->tool_deny, o->disallowed, PERM_DENY, "disallowedTools", agent, err) != 0 ||
        load_hooks(g, o->hooks, agent, err) != 0) {
        governance_free(g);
        return NULL;
    }
    if (o->tools)
        g->tool_allow_text = join_list(o->tools);
    return g;
}

/* The deny list names the call (by the name it used or the tool's own). */
static bool denied(const perm_rules *r, const char *tool, const char *name, const json_t *input,
                   const char *cwd, rule_match *m)
{
    *m = perm_rules_check(r, tool, input, cwd);
    if (m->verdict == PERM_DENY)
        return true;
    if (name && strcmp(name, tool) != 0) {
        *m = perm_rules_check(r, name, input, cwd);
        return m->verdict == PERM_DENY;
    }
    return false;
}

/* The allow list covers the call: a bare entry ("Bash", "mcp__github")
 * covers the whole tool, checked with no input so that a command the rule
 * engine would not let a settings allow cover (a write outside the
 * session) still counts; a narrow one ("Bash(git:*)", "Edit(src/<glob>)")
 * must cover this input. */
static bool allowed_one(const perm_rules *r, const char *t, const json_t *input, const char *cwd)
{
    return perm_rules_check(r, t, NULL, cwd).verdict == PERM_ALLOW ||
           perm_rules_check(r, t, input, cwd).verdict == PERM_ALLOW;
}

const char *governance_agent_gate(const governance *g, const char *tool, const char *name,
                                  bool read_only, bool local_state_only, const json_t *input,
                                  const char *cwd, char *why, size_t cap)
{
    if (!g || !tool)
        return NULL;
    char who[160];
    const char *type = g->agent_type ? g->agent_type : g->agent_name;
    if (type)
        snprintf(who, sizeof who, "the %.120s agent", type);
    else
        snprintf(who, sizeof who, "this sub-agent");
    if (g->role_read_only && !read_only && !local_state_only) {
        snprintf(why, cap, "%s is read-only: %s is not available to it. Use the "
                 "read-only tools (Read, Glob, Grep), and put what should change in your "
                 "report instead", who, tool);
        return "role";
    }
    rule_match m;
    if (g->tool_deny && denied(g->tool_deny, tool, name, input, cwd, &m)) {
        snprintf(why, cap, "%s may not use %s for this: its disallowedTools has %s",
                 who, tool, m.rule);
        return "agent_tools";
    }
    if (g->tool_allow && !allowed_one(g->tool_allow, tool, input, cwd) &&
        !(name && strcmp(name, tool) != 0 && allowed_one(g->tool_allow, name, input, cwd))) {
        snprintf(why, cap, "%s is not available to %s for this call: its tools are "
                 "%s", tool, who, g->tool_allow_text && *g->tool_allow_text ? g->tool_allow_text
                                                                           : "none");
        return "agent_tools";
    }
    return NULL;
}

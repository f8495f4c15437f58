/* governance.c — loading the session's permission rules, hooks, mode,
 * approvals and audit log from the settings files, and firing hooks with
 * the common payload (a sub-agent's governance is made in child.c; this
 * file frees both kinds and fires for both).
 *
 * Threading: built and freed on one thread; governance_fire and
 * governance_hook_count may run on tool-pool threads at once (the hook
 * registries lock themselves). */
#include "governance/governance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"
#include "hooks/judge.h"
#include "sandbox/sandbox.h"
#include "policy/trust.h"

static void warn(governance *g, const char *fmt, const char *a, const char *b)
{
    char msg[1200];
    snprintf(msg, sizeof msg, fmt, a, b);
    g->warnings = xrealloc(g->warnings, (g->n_warnings + 1) * sizeof *g->warnings);
    g->warnings[g->n_warnings++] = xstrdup(msg);
}

static int add_list(governance *g, const json_t *perms, const char *key, perm_verdict v,
                    rule_source src, const char *file, loom_error *err)
{
    const json_t *list = json_get_arr(perms, key);
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r) {
        if (!json_is_string(r))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s: permissions.%s[%zu] must be a string",
                                  file, key, i);
        if (perm_rules_add(g->rules, v, json_string_value(r), src, err) != 0) {
            loom_error_prefix(err, "%s: permissions.%s[%zu]", file, key, i);
            return -(int)err->code;
        }
    }
    return 0;
}

static int add_rules(governance *g, const json_t *doc, rule_source src, const char *file,
                     loom_error *err)
{
    const json_t *perms = json_get_obj(doc, "permissions");
    if (!perms)
        return 0;
    if (add_list(g, perms, "allow", PERM_ALLOW, src, file, err) ||
        add_list(g, perms, "ask", PERM_ASK, src, file, err) ||
        add_list(g, perms, "deny", PERM_DENY, src, file, err))
        return -(int)err->code;
    return 0;
}

/* One more directory that reads may reach without asking ("~/" is $HOME,
 * a relative path is taken against cwd). */
void governance_add_read_dir(governance *g, const char *dir)
{
    if (!dir || !*dir)
        return;
    loom_str s = LOOM_STR_INIT;
    const char *home = getenv("HOME");
    if (dir[0] == '~' && (dir[1] == '/' || !dir[1]) && home && *home)
        str_printf(&s, "%s%s", home, dir + 1);
    else
        str_puts(&s, dir);
    char *real = perm_resolve_path(s.ptr, g->cwd);
    str_free(&s);
    if (!real)
        return;
    g->additional_dirs = xrealloc(g->additional_dirs,
                                  (g->n_additional_dirs + 1) * sizeof *g->additional_dirs);
    g->additional_dirs[g->n_additional_dirs++] = real;
}

/* permissions.additionalDirectories: an array of path strings. */
static int add_dirs(governance *g, const json_t *doc, const char *file, loom_error *err)
{
    const json_t *perms = json_get_obj(doc, "permissions");
    const json_t *v = perms ? json_object_get(perms, "additionalDirectories") : NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: permissions.additionalDirectories must be an array of paths",
                              file);
    size_t i;
    json_t *d;
    json_array_foreach(v, i, d) {
        if (!json_is_string(d))
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "%s: permissions.additionalDirectories[%zu] must be a string",
                                  file, i);
        governance_add_read_dir(g, json_string_value(d));
    }
    return 0;
}

/* Each plugin's hooks, as trusted as the project's own. A plugin whose
 * hooks do not load is a warning, never a session that cannot start. */
static void load_plugin_hooks(governance *g, const json_t *list)
{
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        const char *name = json_get_str(item, "plugin", "?");
        const json_t *hooks = json_get_obj(item, "hooks");
        if (!hooks || json_object_size(hooks) == 0)
            continue;
        loom_error herr;
        if (hook_registry_load(g->hooks, hooks, HOOK_SRC_PLUGIN, g->trusted, &herr) != 0)
            warn(g, "plugin %s: its hooks were not loaded: %s", name, herr.message);
        else if (!g->trusted)
            warn(g, "plugin %s: its hooks will not run: the workspace is not trusted (%s)",
                 name, "trust it to run them: see \"Trust\" in docs/hooks.md");
    }
}

governance *governance_new(const char *cwd, const char *session_id, const char *transcript_path,
                           const governance_settings *s, loom_error *err)
{
    governance *g = xcalloc(1, sizeof *g);
    g->cwd = xstrdup(cwd);
    g->session_id = xstrdup(session_id);
    g->transcript_path = xstrdup(transcript_path);
    g->interactive = s->interactive;
    g->rules = perm_rules_new();
    g->hooks = hook_registry_new();
    g->approvals = approval_registry_new();
    perm_mode mode = MODE_DEFAULT;
    if (s->mode && perm_mode_parse(s->mode, &mode) != 0) {
        loom_error_set(err, LOOM_ERR_CONFIG, "permission mode \"%s\" is not one of default, "
                       "acceptEdits, plan, auto, dontAsk, bypassPermissions, fullAccess, delegate",
                       s->mode);
        goto fail;
    }
    perm_mode_init(&g->mode, mode);
    g->trusted = s->trust == GOVERNANCE_TRUST_DECIDE ? trust_workspace_trusted(s->user, cwd)
                                                     : s->trust == GOVERNANCE_TRUSTED;

    const struct {
        const json_t *doc;
        rule_source rsrc;
        hook_source hsrc;
        const char *name;
    } files[] = {
        {s->user, RULE_SRC_USER, HOOK_SRC_USER, "user settings"},
        /* Each layer's document is Loom's file merged over Claude Code's
         * (api/config.c, which named a bad .claude rule itself). */
        {s->project, RULE_SRC_PROJECT, HOOK_SRC_PROJECT,
         "project settings (.loom/settings.json, .claude/settings.json)"},
        {s->local, RULE_SRC_LOCAL, HOOK_SRC_LOCAL,
         "local settings (.loom/settings.local.json, .claude/settings.local.json)"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (!files[i].doc)
            continue;
        if (add_rules(g, files[i].doc, files[i].rsrc, files[i].name, err) != 0 ||
            add_dirs(g, files[i].doc, files[i].name, err) != 0)
            goto fail;
        const json_t *hooks = json_get_obj(files[i].doc, "hooks");
        bool trusted = files[i].hsrc == HOOK_SRC_USER || g->trusted;
        if (hooks && hook_registry_load(g->hooks, hooks, files[i].hsrc, trusted, err) != 0) {
            loom_error_prefix(err, "%s", files[i].name);
            goto fail;
        }
    }
    load_plugin_hooks(g, s->plugin_hooks);
    for (size_t i = 0; s->add_dirs && s->add_dirs[i]; i++)
        governance_add_read_dir(g, s->add_dirs[i]);
    for (size_t i = 0; s->cli_allow && s->cli_allow[i]; i++)
        if (perm_rules_add(g->rules, PERM_ALLOW, s->cli_allow[i], RULE_SRC_CLI, err) != 0) {
            loom_error_prefix(err, "--allowedTools");
            goto fail;
        }
    for (size_t i = 0; s->cli_deny && s->cli_deny[i]; i++)
        if (perm_rules_add(g->rules, PERM_DENY, s->cli_deny[i], RULE_SRC_CLI, err) != 0) {
            loom_error_prefix(err, "--disallowedTools");
            goto fail;
        }
    for (size_t i = 0; s->cli_ask && s->cli_ask[i]; i++)
        if (perm_rules_add(g->rules, PERM_ASK, s->cli_ask[i], RULE_SRC_CLI, err) != 0) {
            loom_error_prefix(err, "ask_tools");
            goto fail;
        }
    g->approval_timeout_ms = s->approval_timeout_ms;
    g->tool_deadline_ms = s->tool_deadline_ms;
    for (size_t i = 0; i < hook_registry_warning_count(g->hooks); i++)
        warn(g, "%s%s", hook_registry_warning(g->hooks, i), "");

    /* seed 000 Q5: every decision is kept, one JSONL record each. */
    char *home = loom_home();
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/audit/%s.jsonl", home, session_id);
    free(home);
    loom_error aerr;
    g->audit = audit_open(path.ptr, &aerr);
    if (!g->audit)
        warn(g, "the audit log could not be opened: %s%s", aerr.message, "");
    str_free(&path);
    /* sandbox.hooks: prepared once, entered in each hook's child. */
    if (s->sandbox_error) {
        g->sandbox_error = xstrdup(s->sandbox_error);
    } else if (s->sandbox && s->sandbox->enabled) {
        g->sandbox = xcalloc(1, sizeof *g->sandbox);
        sandbox_policy_copy(g->sandbox, s->sandbox);
    }
    const sandbox_policy *sb = g->sandbox;
    if (sb && sb->enabled && sb->confine_hooks && sandbox_supported() > 0) {
        char msg[256];
        if (sandbox_prepare(sb, &g->hook_sandbox, msg, sizeof msg) != 0)
            warn(g, "hooks cannot be sandboxed: %s%s", msg, "");
    }
    g->local_settings_path = settings_layer_path(SETTINGS_LOCAL, cwd);
    return g;
fail:
    governance_free(g);
    return NULL;
}

void governance_free(governance *g)
{
    if (!g)
        return;
    if (!g->parent) {
        /* A sub-agent's rules, hooks, approvals, audit and hooks' sandbox
         * are its parent's (governance_child). */
        perm_rules_free(g->rules);
        hook_registry_free(g->hooks);
        approval_registry_free(g->approvals);
        sandbox_prep_free(g->hook_sandbox);
        if (g->audit)
            audit_close(g->audit);
    }
    perm_rules_free(g->tool_allow);
    perm_rules_free(g->tool_deny);
    perm_rules_free(g->run_grants);
    json_decref(g->run_grant_by);
    free(g->tool_allow_text);
    hook_registry_free(g->scoped_hooks);
    free(g->agent_id);
    free(g->agent_type);
    free(g->agent_name);
    if (g->sandbox) {
        sandbox_policy_free(g->sandbox);
        free(g->sandbox);
    }
    free(g->sandbox_error);
    for (size_t i = 0; i < g->n_warnings; i++)
        free(g->warnings[i]);
    free(g->warnings);
    free(g->cwd);
    free(g->session_id);
    free(g->transcript_path);
    free(g->local_settings_path);
    for (size_t i = 0; i < g->n_additional_dirs; i++)
        free(g->additional_dirs[i]);
    free(g->additional_dirs);
    free(g);
}

void governance_grant_run(governance *g, const char *const *rules, const char *by)
{
    if (!g || !rules)
        return;
    if (!g->run_grants) {
        g->run_grants = perm_rules_new();
        g->run_grant_by = json_object();
    }
    for (size_t i = 0; rules[i]; i++) {
        loom_error err;
        if (perm_rules_add(g->run_grants, PERM_ALLOW, rules[i], RULE_SRC_CLI, &err) != 0) {
            warn(g, "%s: allowed-tools: %s", by ? by : "grant", err.message);
            continue;
        }
        json_object_set_new(g->run_grant_by, rules[i], json_string(by ? by : "grant"));
    }
}

void governance_grants_clear(governance *g)
{
    if (!g)
        return;
    perm_rules_free(g->run_grants);
    json_decref(g->run_grant_by);
    g->run_grants = NULL;
    g->run_grant_by = NULL;
}

bool governance_grant_allows(const governance *g, const char *tool, const json_t *input,
                             const char *cwd, rule_match *m)
{
    if (!g || !g->run_grants)
        return false;
    rule_match r = perm_rules_check(g->run_grants, tool, input, cwd);
    if (r.verdict != PERM_ALLOW)
        return false;
    /* The first granted rule named in the match says who granted it. */
    const char *by = NULL, *key;
    json_t *v;
    json_object_foreach(g->run_grant_by, key, v) {
        if (strstr(r.rule, key)) {
            by = json_string_value(v);
            break;
        }
    }
    char text[sizeof r.rule];
    snprintf(text, sizeof text, "%.180s (%.60s)", r.rule, by ? by : "grant");
    snprintf(r.rule, sizeof r.rule, "%s", text);
    *m = r;
    return true;
}

int governance_allow_always(governance *g, const char *rule, loom_error *err)
{
    if (perm_rules_add(g->rules, PERM_ALLOW, rule, RULE_SRC_LOCAL, err) != 0)
        return -(int)err->code;
    /* A file that cannot be read as settings is left as it is: rewriting
     * it would lose what it held. */
    json_t *doc = NULL;
    if (settings_read(g->local_settings_path, &doc, err) != 0)
        return -(int)err->code;
    if (!doc)
        doc = json_object();
    json_t *perms = json_get_obj(doc, "permissions");
    if (!perms) {
        perms = json_object();
        json_object_set_new(doc, "permissions", perms);
    }
    json_t *allow = json_get_arr(perms, "allow");
    if (!allow) {
        allow = json_array();
        json_object_set_new(perms, "allow", allow);
    }
    json_array_append_new(allow, json_string(rule));
    char *out = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    /* The settings file's own directory: a sub-agent in a worktree has
     * another cwd, and the rule belongs to the session's project. */
    loom_str dir = LOOM_STR_INIT;
    const char *slash = strrchr(g->local_settings_path, '/');
    if (slash && slash > g->local_settings_path)
        str_append(&dir, g->local_settings_path, (size_t)(slash - g->local_settings_path));
    else
        str_printf(&dir, "%s/.loom", g->cwd);
    int rc = file_mkdirs(dir.ptr, 0755, err);
    str_free(&dir);
    if (rc == 0)
        rc = file_write_atomic(g->local_settings_path, out, strlen(out), 0644, err);
    free(out);
    return rc;
}

json_t *governance_payload(const governance *g, hook_event ev)
{
    json_t *p = json_pack("{s:s,s:s?,s:s,s:s,s:s}", "session_id", g->session_id,
                          "transcript_path", g->transcript_path, "cwd", g->cwd,
                          "hook_event_name", hook_event_name(ev), "permission_mode",
                          perm_mode_name(g->mode.mode));
    /* Claude Code's fields: a hook can tell a sub-agent's call from the
     * main agent's. */
    if (g->agent_id)
        json_object_set_new(p, "agent_id", json_string(g->agent_id));
    if (g->agent_type)
        json_object_set_new(p, "agent_type", json_string(g->agent_type));
    return p;
}

/* The events that belong to the session, not to a sub-agent inside it
 * (governance.h): a sub-agent's start and end have their own. */
static bool session_level(hook_event ev)
{
    return ev == HOOK_SESSION_START || ev == HOOK_SESSION_END || ev == HOOK_USER_PROMPT_SUBMIT ||
           ev == HOOK_STOP || ev == HOOK_STOP_FAILURE || ev == HOOK_FINAL_STOP;
}

size_t governance_hook_count(governance *g, hook_event ev)
{
    if (!g)
        return 0;
    if (g->parent && session_level(ev))
        return 0;
    return hook_registry_count(g->hooks, ev) +
           (g->scoped_hooks ? hook_registry_count(g->scoped_hooks, ev) : 0);
}

hook_outcome governance_fire(governance *g, hook_event ev, json_t *extra,
                             const loom_cancel *cancel)
{
    if (g->parent && session_level(ev)) {
        json_decref(extra);
        hook_outcome none;
        memset(&none, 0, sizeof none);
        none.event = ev;
        return none;
    }
    json_t *payload = governance_payload(g, ev);
    if (extra) {
        json_object_update(payload, extra);
        json_decref(extra);
    }
    hook_run_opts opts = {.project_dir = g->cwd, .cancel = cancel,
                          .trust_hint = "run loom here interactively and answer the trust "
                                        "question, or add this directory to \"trustedWorkspaces\" in "
                                        "~/.loom/settings.json (or set LOOM_TRUST_WORKSPACE=1)"};
    const governance *root = g;
    while (root->parent)
        root = root->parent;
    char tp[56];
    if (root->traceparent &&
        root->traceparent(root->traceparent_ctx, json_string_value(json_object_get(payload, "tool_use_id")), tp))
        opts.traceparent = tp;
    /* Prompt hooks are helper calls of the session's router, their tokens
     * this governance's run's. */
    hook_judge_ctx judge = {.helpers = g->helpers, .owner = g};
    if (g->helpers) {
        opts.run_prompt = hook_judge_prompt;
        opts.prompt_ctx = &judge;
    }
    if (!g->parent && g->agent_hook) {
        opts.run_agent = g->agent_hook;
        opts.agent_ctx = g->agent_hook_ctx;
    }
    if (g->hook_sandbox) {
        opts.child_setup = sandbox_child_setup;
        opts.child_ctx = g->hook_sandbox;
        opts.supervise = sandbox_supervise;
    }
    hook_outcome o = hooks_run(g->hooks, ev, payload, &opts);
    /* The agent file's own hooks run after the session's, as if listed
     * after them (docs/hooks.md "Hooks in sub-agents"). */
    if (g->scoped_hooks && hook_registry_count(g->scoped_hooks, ev) > 0 && !o.cancelled &&
        !cancel_requested(cancel)) {
        hook_outcome mine = hooks_run(g->scoped_hooks, ev, payload, &opts);
        hook_outcome_merge(&o, &mine);
    }
    json_decref(payload);
    return o;
}

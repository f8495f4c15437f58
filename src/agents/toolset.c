/* toolset.c — a sub-agent's tool registry (toolset.h): the parent's tools
 * filtered by role and agent file, its own MCP connections' tools, and
 * StructuredOutput.
 *
 * Owns nothing past the build: the registry borrows the tool_defs (the
 * built-ins are static, MCP tools live as long as the child's manager,
 * StructuredOutput as long as the child's resources). Threading: see
 * toolset.h.
 */
#include "agents/toolset.h"

#include <string.h>

#include "base/glob.h"
#include "ext/mcp/manager.h"

/* The tool-name part of a rule string: "Bash(git:*)" → "Bash". */
static size_t rule_name_len(const char *rule)
{
    const char *paren = strchr(rule, '(');
    return paren ? (size_t)(paren - rule) : strlen(rule);
}

bool agent_toolset_rule_names(const char *const *rules, const char *name)
{
    for (size_t i = 0; rules && rules[i]; i++) {
        size_t n = rule_name_len(rules[i]);
        char buf[256];
        if (n == 0 || n >= sizeof buf)
            continue;
        memcpy(buf, rules[i], n);
        buf[n] = '\0';
        /* "Task" in an agent file means Agent (Claude Code's old name). */
        const char *pat = !strcmp(buf, "Task") ? "Agent" : buf;
        if (glob_star_match(pat, name, true))
            return true;
    }
    return false;
}

/* A disallowed rule removes the tool only when it names the whole tool:
 * "Bash(rm:*)" leaves Bash declared and is the pipeline's to enforce. */
static bool denies_whole(const char *const *rules, const char *name)
{
    for (size_t i = 0; rules && rules[i]; i++) {
        if (strchr(rules[i], '('))
            continue;
        const char *one[] = {rules[i], NULL};
        if (agent_toolset_rule_names(one, name))
            return true;
    }
    return false;
}

bool agent_toolset_allows(const agent_toolset_opts *o, const tool_def *def)
{
    if (!strcmp(def->name, "StructuredOutput") || !strcmp(def->name, "Publish"))
        return false; /* the child's own come from extra and publish */
    /* The session's own moves: a child would only be refused them
     * (tool_ctx.mode and the worktree ports are NULL in a child). */
    if (!strcmp(def->name, "ExitPlanMode") || !strcmp(def->name, "EnterWorktree") ||
        !strcmp(def->name, "ExitWorktree"))
        return false;
    if (o->read_only) {
        if (!strcmp(def->name, "Agent") || !strcmp(def->name, "SendMessage"))
            return false;
        if (!def->read_only && !def->local_state_only)
            return false;
        if (def->sends_out)
            return false;
    }
    if (!o->def)
        return true;
    if (o->def->tools && !agent_toolset_rule_names((const char *const *)o->def->tools, def->name))
        return false;
    if (denies_whole((const char *const *)o->def->disallowed, def->name))
        return false;
    return true;
}

/* Publish passes the role filter (it writes only the bus, the way a
 * sub-agent reports); a custom agent file's tools list must name it. */
static bool agent_toolset_allows_extra(const agent_toolset_opts *o)
{
    if (!o->def || o->def->role != AGENT_ROLE_CUSTOM)
        return true;
    if (o->def->tools && !agent_toolset_rule_names((const char *const *)o->def->tools, "Publish"))
        return false;
    return !denies_whole((const char *const *)o->def->disallowed, "Publish");
}

static bool is_mcp_tool(const tool_def *d)
{
    /* The parent's MCP tools belong to its connections; the child gets
     * its own (mcp_manager_toolset below) with the same names. */
    return d->impl != NULL && strcmp(d->name, "StructuredOutput") != 0;
}

tool_registry *agent_toolset_build(const agent_toolset_opts *o, loom_str *instructions,
                                   loom_error *err)
{
    tool_registry *reg = tool_registry_new();
    size_t n = tool_registry_count(o->parent);
    for (size_t i = 0; i < n; i++) {
        const tool_def *d = tool_registry_at(o->parent, i);
        if (is_mcp_tool(d) || !agent_toolset_allows(o, d))
            continue;
        if (tool_registry_add(reg, d, err) != 0)
            goto fail;
    }
    if (o->mcp) {
        tool_registry *tmp = tool_registry_new();
        loom_str ext = LOOM_STR_INIT;
        mcp_toolset_opts mo = {.window_tokens = o->window_tokens,
                               .defer_share = 0,
                               .builtin_tokens = tool_registry_tokens(reg)};
        int rc = mcp_manager_toolset(o->mcp, tmp, &ext, &mo, err);
        for (size_t i = 0; rc == 0 && i < tool_registry_count(tmp); i++) {
            const tool_def *d = tool_registry_at(tmp, i);
            if (agent_toolset_allows(o, d) && !tool_registry_find(reg, d->name))
                rc = tool_registry_add(reg, d, err);
        }
        if (rc == 0 && instructions && ext.len)
            str_puts(instructions, str_cstr(&ext));
        str_free(&ext);
        tool_registry_free(tmp);
        if (rc != 0)
            goto fail;
    }
    if (o->publish && agent_toolset_allows_extra(o) &&
        tool_registry_add(reg, o->publish, err) != 0)
        goto fail;
    if (o->extra && tool_registry_add(reg, o->extra, err) != 0)
        goto fail;
    return reg;
fail:
    tool_registry_free(reg);
    return NULL;
}

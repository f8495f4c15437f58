/* manager_toolset.c — the tool set a session's MCP servers add (see
 * manager.h): one snapshot of every server's tools and instructions, in
 * first-seen order, deferral behind ToolSearch past a share of the window,
 * and the deferred tools ToolSearch found, appended after the stable ones.
 * Runs on the run's thread at a turn boundary; takes the manager's lock
 * around what it reads of the slots.
 */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "ext/mcp/manager_internal.h"
#include "ext/mcp/mcp_tool.h"
#include "ext/mcp/resources.h"
#include "ext/mcp/tool_search.h"

/* Instructions past this many bytes are cut (a server's words enter every
 * request; seed 000 row 5.4 wants them, not without bound). */
#define MCP_INSTRUCTIONS_CAP 4096

/* --- the tool set ------------------------------------------------------------- */

static void keep_tool(mcp_manager *m, mcp_tool *t)
{
    if (m->n_made == m->cap_made) {
        m->cap_made = m->cap_made ? m->cap_made * 2 : 32;
        m->made = xrealloc(m->made, m->cap_made * sizeof *m->made);
    }
    m->made[m->n_made++] = t;
}

static void keep_def(mcp_manager *m, tool_def *d, void (*release)(tool_def *))
{
    if (m->n_defs == m->cap_defs) {
        m->cap_defs = m->cap_defs ? m->cap_defs * 2 : 8;
        m->defs = xrealloc(m->defs, m->cap_defs * sizeof *m->defs);
    }
    m->defs[m->n_defs++] = (made_def){d, release};
}

static size_t order_index(json_t *order, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(order, i, v)
        if (!strcmp(json_string_value(v), name))
            return i;
    json_array_append_new(order, json_string(name));
    return json_array_size(order) - 1;
}


typedef struct ranked {
    mcp_tool *t;
    size_t pos;
} ranked;

static int by_pos(const void *a, const void *b)
{
    size_t x = ((const ranked *)a)->pos, y = ((const ranked *)b)->pos;
    return x < y ? -1 : x > y;
}

/* Under mu: the Loom tools of s's current list, made once per list. */
static void make_slot_tools(mcp_manager *m, slot *s)
{
    free(s->tools);
    s->tools = xcalloc(json_array_size(s->tools_json) + 1, sizeof *s->tools);
    s->n_tools = 0;
    size_t k;
    json_t *tj;
    json_array_foreach(s->tools_json, k, tj) {
        loom_error terr;
        mcp_tool *t = mcp_tool_new(m, s->cfg.name, tj, s->cfg.always_load, &terr);
        if (!t) {
            LOG_W("mcp", "%s", terr.message);
            continue;
        }
        keep_tool(m, t);
        s->tools[s->n_tools++] = t;
    }
    json_decref(s->tools_from);
    s->tools_from = json_incref(s->tools_json);
}

/* Lists again the tools of every slot that said they changed. Run thread. */
static void relist_dirty(mcp_manager *m)
{
    for (size_t i = 0; i < m->n; i++) {
        slot *s = &m->slots[i];
        pthread_mutex_lock(&m->mu);
        conn *c = s->tools_dirty && s->c && s->state == MCP_STATE_CONNECTED ? s->c : NULL;
        if (c)
            c->refs++;
        s->tools_dirty = false;
        pthread_mutex_unlock(&m->mu);
        if (!c)
            continue;
        loom_error err;
        json_t *tools = mcp_client_list_all(c->client, "tools/list", "tools", 0,
                                            s->cfg.connect_timeout_ms, &err);
        manager_conn_put(m, c);
        pthread_mutex_lock(&m->mu);
        if (tools) {
            json_decref(s->tools_json);
            s->tools_json = tools;
        } else {
            LOG_W("mcp", "server %s: listing its changed tools failed: %s", s->cfg.name,
                  err.message);
        }
        pthread_mutex_unlock(&m->mu);
    }
}

static void append_instructions(loom_str *out, const char *server, const char *text)
{
    if (!text || !*text)
        return;
    size_t n = strlen(text);
    bool cut = n > MCP_INSTRUCTIONS_CAP;
    if (cut) {
        n = MCP_INSTRUCTIONS_CAP;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
    }
    /* Said to be the server's: the words come from outside, not from the
     * user or from Loom. */
    str_printf(out,
               "%s## MCP server %s\nInstructions the MCP server \"%s\" gives for its tools "
               "(mcp__%s__*):\n%.*s%s\n",
               out->len ? "\n" : "", server, server, server, (int)n, text,
               cut ? "\n[instructions cut]" : "");
}

int mcp_manager_toolset(mcp_manager *m, tool_registry *reg, loom_str *instructions,
                        const mcp_toolset_opts *o, loom_error *err)
{
    if (!m)
        return 0;
    relist_dirty(m);
    /* One snapshot of every server: its tools and its instructions. */
    ranked *all = NULL;
    size_t n_all = 0, cap = 0;
    bool *has_tools = xcalloc(m->n ? m->n : 1, sizeof *has_tools);
    char **ins = xcalloc(m->n ? m->n : 1, sizeof *ins);
    bool any_resources = false;
    int64_t mcp_tokens = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        slot *s = &m->slots[i];
        if (!s->tools_json || !s->ever_connected)
            continue;
        if (s->c) {
            const char *text = mcp_client_instructions(s->c->client);
            ins[i] = text ? xstrdup(text) : NULL;
            if (s->n_resources > 0 || json_object_get(mcp_client_capabilities(s->c->client),
                                                      "resources"))
                any_resources = true;
        }
        if (!ins[i] && s->cfg.instructions)
            ins[i] = xstrdup(s->cfg.instructions);
        if (s->tools_from != s->tools_json)
            make_slot_tools(m, s);
        for (size_t k = 0; k < s->n_tools; k++) {
            mcp_tool *t = s->tools[k];
            if (n_all == cap) {
                cap = cap ? cap * 2 : 64;
                all = xrealloc(all, cap * sizeof *all);
            }
            all[n_all++] = (ranked){t, order_index(m->order, t->loom_name)};
            mcp_tokens += t->tokens;
        }
    }
    pthread_mutex_unlock(&m->mu);
    if (n_all > 1) /* all is NULL when no server has tools yet */
        qsort(all, n_all, sizeof *all, by_pos);
    bool defer = o && tool_search_should_defer(mcp_tokens, o->builtin_tokens, o->window_tokens,
                                               o->defer_share);
    free(m->current);
    free(m->deferred_now);
    m->current = xcalloc(n_all ? n_all : 1, sizeof *m->current);
    m->deferred_now = xcalloc(n_all ? n_all : 1, sizeof *m->deferred_now);
    m->n_current = n_all;
    int rc = 0;
    size_t n_deferred = 0;
    /* Pass 1: the stable tools, in their first-seen order. */
    for (size_t i = 0; i < n_all; i++) {
        mcp_tool *t = all[i].t;
        m->current[i] = t;
        m->deferred_now[i] = defer && !t->always_load;
        if (m->deferred_now[i]) {
            n_deferred++;
            continue;
        }
        if (tool_registry_find(reg, t->loom_name))
            continue; /* two servers' names normalized alike: the first wins */
        if (tool_registry_add(reg, &t->def, err) != 0) {
            LOG_W("mcp", "%s", err->message);
            loom_error_clear(err);
        }
    }
    /* Which servers' tools are in view: declared, or listed by name. */
    for (size_t i = 0; i < n_all; i++)
        for (size_t k = 0; k < m->n; k++)
            if (!strcmp(m->slots[k].cfg.name, all[i].t->server))
                has_tools[k] = true;
    if (n_deferred) {
        /* Its description lists every deferred tool, found ones too: finding
         * one must not change this declaration (the cached prefix). */
        tool_def *ts = tool_search_new(m);
        keep_def(m, ts, tool_search_free);
        if (tool_registry_add(reg, ts, err) != 0)
            rc = -1;
    }
    if (rc == 0 && any_resources) {
        tool_def *list = mcp_resources_list_tool_new(m);
        tool_def *read = mcp_resources_read_tool_new(m);
        keep_def(m, list, mcp_resources_tool_free);
        keep_def(m, read, mcp_resources_tool_free);
        if (tool_registry_add(reg, list, err) != 0 || tool_registry_add(reg, read, err) != 0)
            rc = -1;
    }
    /* Pass 2: deferred tools ToolSearch found, after everything stable, in
     * the order they were found. */
    size_t fi;
    json_t *fv;
    json_array_foreach(m->found, fi, fv) {
        for (size_t i = 0; i < n_all && rc == 0; i++) {
            mcp_tool *t = all[i].t;
            if (!m->deferred_now[i] || strcmp(t->loom_name, json_string_value(fv)) ||
                tool_registry_find(reg, t->loom_name))
                continue;
            if (tool_registry_add(reg, &t->def, err) != 0) {
                LOG_W("mcp", "%s", err->message);
                loom_error_clear(err);
            }
        }
    }
    for (size_t k = 0; k < m->n; k++) {
        if (has_tools[k] && instructions)
            append_instructions(instructions, m->slots[k].cfg.name, ins[k]);
        free(ins[k]);
    }
    free(ins);
    free(has_tools);
    free(all);
    return rc;
}

const mcp_tool **mcp_manager_deferred(mcp_manager *m, size_t *n)
{
    *n = 0;
    if (!m)
        return NULL;
    pthread_mutex_lock(&m->mu);
    const mcp_tool **out = xcalloc(m->n_current ? m->n_current : 1, sizeof *out);
    for (size_t i = 0; i < m->n_current; i++)
        if (m->deferred_now[i])
            out[(*n)++] = m->current[i];
    pthread_mutex_unlock(&m->mu);
    return out;
}

void mcp_manager_load_deferred(mcp_manager *m, const char *const *names, size_t n)
{
    bool added = false;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t k = 0; k < m->n_current && !known; k++)
            known = m->deferred_now[k] && !strcmp(m->current[k]->loom_name, names[i]);
        if (known && !manager_name_in(m->found, names[i])) {
            json_array_append_new(m->found, json_string(names[i]));
            added = true;
        }
    }
    pthread_mutex_unlock(&m->mu);
    if (added)
        manager_bump(m);
}

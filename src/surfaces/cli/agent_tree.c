/* agent_tree.c — the running sub-agents of a run, as lines under the
 * spinner, and the one-line summary an ended agent leaves (see
 * agent_tree.h). Names and tools come from the model and agent files:
 * every line is cut and made terminal-safe by term_put_clipped. */
#include "surfaces/cli/agent_tree.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/cli/spinner.h"
#include "surfaces/cli/term_out.h"

/* Nodes shown at most: a wide fan-out would push the spinner off screen;
 * the rest are counted on one more line. */
#define TREE_LINES_MAX 8

typedef struct tree_node {
    char *id;
    char *name;        /* the agent's name, its description, or its type */
    char *type;        /* agent_type */
    char *tool;        /* current tool, or NULL */
    int depth;         /* 1: a child of the main run */
    long long tokens;
    int64_t started_ms; /* on the view's clock; agent.progress corrects it */
} tree_node;

struct agent_tree {
    tree_node *nodes;  /* in spawn order */
    size_t n, cap;
};

agent_tree *agent_tree_new(void)
{
    return xcalloc(1, sizeof(agent_tree));
}

static void node_clear(tree_node *n)
{
    free(n->id);
    free(n->name);
    free(n->type);
    free(n->tool);
}

void agent_tree_free(agent_tree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        node_clear(&t->nodes[i]);
    free(t->nodes);
    free(t);
}

static tree_node *find(const agent_tree *t, const char *id)
{
    for (size_t i = 0; id && i < t->n; i++)
        if (!strcmp(t->nodes[i].id, id))
            return &t->nodes[i];
    return NULL;
}

static const char *nonempty(const json_t *o, const char *key)
{
    const char *s = json_get_str(o, key, NULL);
    return s && *s ? s : NULL;
}

/* What a person calls the agent: its name, else what it was asked to do,
 * else its type. */
static const char *display_name(const json_t *p)
{
    const char *s = nonempty(p, "name");
    if (!s)
        s = nonempty(p, "description");
    if (!s)
        s = nonempty(p, "agent_type");
    return s ? s : "agent";
}

void agent_tree_spawned(agent_tree *t, const json_t *p, int64_t now_ms)
{
    const char *id = nonempty(p, "agent_id");
    if (!t || !id)
        return;
    tree_node *n = find(t, id);
    if (!n) {
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 8;
            t->nodes = xrealloc(t->nodes, t->cap * sizeof *t->nodes);
        }
        n = &t->nodes[t->n++];
        memset(n, 0, sizeof *n);
        n->id = xstrdup(id);
        n->started_ms = now_ms;
    }
    free(n->name);
    free(n->type);
    n->name = xstrdup(display_name(p));
    n->type = xstrdup(json_get_str(p, "agent_type", ""));
    int64_t depth = json_get_int(p, "depth", 1);
    n->depth = depth < 1 ? 1 : depth > 16 ? 16 : (int)depth;
}

void agent_tree_progress(agent_tree *t, const json_t *p, int64_t now_ms)
{
    tree_node *n = t ? find(t, json_get_str(p, "agent_id", NULL)) : NULL;
    if (!n)
        return;
    const char *tool = nonempty(p, "tool");
    free(n->tool);
    n->tool = tool ? xstrdup(tool) : NULL;
    n->tokens = json_get_int(p, "tokens", n->tokens);
    /* Progress comes at most every 250 ms and only when the agent moves:
     * its elapsed time sets the clock, which then ticks on its own. */
    if (json_is_integer(json_object_get(p, "elapsed_ms")))
        n->started_ms = now_ms - json_get_int(p, "elapsed_ms", 0);
}

void agent_tree_tool(agent_tree *t, const char *agent_id, const char *tool)
{
    tree_node *n = t ? find(t, agent_id) : NULL;
    if (!n)
        return;
    free(n->tool);
    n->tool = tool && *tool ? xstrdup(tool) : NULL;
}

long long agent_tree_usage_tokens(const json_t *u)
{
    return (long long)(json_get_int(u, "inputTokens", 0) + json_get_int(u, "outputTokens", 0) +
                       json_get_int(u, "cacheReadTokens", 0) +
                       json_get_int(u, "cacheCreationTokens", 0));
}

static void put_seconds(loom_str *s, int64_t ms, bool tenths)
{
    if (ms < 0)
        ms = 0;
    if (ms >= 60000)
        str_printf(s, "%lldm %02llds", (long long)(ms / 60000), (long long)(ms / 1000 % 60));
    else if (tenths)
        str_printf(s, "%.1fs", (double)ms / 1000.0);
    else
        str_printf(s, "%llds", (long long)(ms / 1000));
}

bool agent_tree_completed(agent_tree *t, const json_t *p, loom_str *summary)
{
    const char *id = json_get_str(p, "agent_id", NULL);
    tree_node *n = t ? find(t, id) : NULL;
    const char *state = json_get_str(p, "state", "completed");
    bool ok = !strcmp(state, "completed");
    loom_str line = LOOM_STR_INIT;
    str_printf(&line, "%s %s", ok ? "\xe2\x9c\x93" : "\xe2\x9c\x97", /* ✓ ✗ */
               n ? n->name : display_name(p));
    const char *type = n ? n->type : json_get_str(p, "agent_type", "");
    if (*type && strcmp(type, n ? n->name : display_name(p)) != 0)
        str_printf(&line, " (%s)", type);
    str_printf(&line, " %s", state);
    const char *stop = json_get_str(p, "stop_reason", "");
    if (!ok && *stop && strcmp(stop, "none") != 0)
        str_printf(&line, " (%s)", stop);
    long long uses = (long long)json_get_int(p, "tool_uses", 0);
    str_printf(&line, " \xc2\xb7 %lld tool use%s", uses, uses == 1 ? "" : "s");
    char count[32];
    spinner_format_count(agent_tree_usage_tokens(json_get_obj(p, "usage")), count, sizeof count);
    str_printf(&line, " \xc2\xb7 %s tokens \xc2\xb7 ", count);
    put_seconds(&line, json_get_int(p, "duration_ms", 0), true);
    term_put_clipped(summary, line.ptr, line.len, 0);
    str_free(&line);
    if (!n)
        return false;
    size_t at = (size_t)(n - t->nodes);
    node_clear(n);
    memmove(&t->nodes[at], &t->nodes[at + 1], (t->n - at - 1) * sizeof *t->nodes);
    t->n--;
    return true;
}

size_t agent_tree_count(const agent_tree *t)
{
    return t ? t->n : 0;
}

const char *agent_tree_name(const agent_tree *t, const char *agent_id)
{
    const tree_node *n = t ? find(t, agent_id) : NULL;
    return n ? n->name : NULL;
}

void agent_tree_render(const agent_tree *t, int64_t now_ms, int cols, loom_str *out)
{
    if (!t || !t->n)
        return;
    size_t shown = t->n > TREE_LINES_MAX ? TREE_LINES_MAX - 1 : t->n;
    for (size_t i = 0; i < shown; i++) {
        const tree_node *n = &t->nodes[i];
        loom_str line = LOOM_STR_INIT;
        for (int d = 0; d < n->depth; d++)
            str_puts(&line, "  ");
        str_printf(&line, "\xe2\x8e\xbf %s", n->name); /* ⎿ */
        if (*n->type && strcmp(n->type, n->name) != 0)
            str_printf(&line, " (%s)", n->type);
        if (n->tool)
            str_printf(&line, " \xc2\xb7 %s", n->tool);
        char count[32];
        spinner_format_count(n->tokens, count, sizeof count);
        str_printf(&line, " \xc2\xb7 %s tokens \xc2\xb7 ", count);
        put_seconds(&line, now_ms - n->started_ms, false);
        if (i)
            str_putc(out, '\n');
        term_put_clipped(out, line.ptr, line.len, cols);
        str_free(&line);
    }
    if (shown < t->n)
        str_printf(out, "\n  \xe2\x80\xa6 and %zu more agents (/agents lists them)", t->n - shown);
}

const char *agent_tree_event_agent(const loom_event *ev, const json_t *doc)
{
    if (!ev || ev->kind == LOOM_EV_AGENT_SPAWNED || ev->kind == LOOM_EV_AGENT_COMPLETED ||
        ev->kind == LOOM_EV_AGENT_PROGRESS)
        return NULL;
    return nonempty(json_get_obj(doc, "payload"), "agent_id");
}

bool agent_tree_token_from_agent(const loom_event *ev)
{
    /* Inside the delta's text a quote is escaped: "agent_id" with both
     * quotes bare is a key of the payload. */
    if (!ev || !ev->json || !strstr(ev->json, "\"agent_id\""))
        return false;
    loom_error ignore;
    json_t *doc = json_parse(ev->json, strlen(ev->json), "event", &ignore);
    bool from = nonempty(json_get_obj(doc, "payload"), "agent_id") != NULL;
    json_decref(doc);
    return from;
}

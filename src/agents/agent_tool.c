/* agent_tool.c — the Agent tool (alias Task): the model delegates a task to
 * a sub-agent, in the foreground (the call returns its answer) or in the
 * background (agents/background.c; the call returns at once).
 *
 * Owns the Agent tool_defs it makes (one per catalog description text,
 * kept for the process's life: registries borrow them). Threading: the
 * tool is concurrency-safe: the Agent calls of one reply run together on
 * the pipeline's pool, each on its own thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agents.h"
#include "agents/runner.h"
#include "agents/tree.h"
#include "base/json.h"
#include "base/str.h"

static const char AGENT_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"description\":{\"type\":\"string\",\"description\":\"A short (3-5 word) description of "
    "the task\"},"
    "\"prompt\":{\"type\":\"string\",\"description\":\"The task for the agent to perform\"},"
    "\"subagent_type\":{\"type\":\"string\",\"description\":\"The type of agent to use "
    "(default general-purpose)\"},"
    "\"model\":{\"type\":\"string\",\"description\":\"A model for this agent; default: the "
    "agent type's, else yours\"},"
    "\"run_in_background\":{\"type\":\"boolean\",\"description\":\"Run it in the background; "
    "you are told when it ends\"},"
    "\"name\":{\"type\":\"string\",\"description\":\"A name to address it by (SendMessage)\"},"
    "\"isolation\":{\"type\":\"string\",\"enum\":[\"worktree\"],\"description\":\"worktree: "
    "work in a git worktree of its own\"},"
    "\"output_schema\":{\"type\":\"object\",\"description\":\"A JSON Schema its answer must "
    "match\"},"
    "\"share\":{\"type\":\"object\",\"properties\":{\"tokens\":{\"type\":\"integer\","
    "\"minimum\":0},\"usd\":{\"type\":\"number\",\"minimum\":0}},\"additionalProperties\":false,"
    "\"description\":\"The part of the budget reserved for it\"}},"
    "\"required\":[\"prompt\"],\"additionalProperties\":false}";

static const char *const AGENT_ALIASES[] = {"Task", NULL};

static const char *str_of(const json_t *in, const char *key)
{
    return json_string_value(json_object_get(in, key));
}

static int run_agent(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    spawn_node *parent = ctx->spawn;
    if (!parent)
        return tool_error(out, "Agent: sub-agents are not available in this run");
    const json_t *share = json_object_get(input, "share");
    const char *iso = str_of(input, "isolation");
    agent_request req = {
        .description = str_of(input, "description"),
        .prompt = str_of(input, "prompt"),
        .subagent_type = str_of(input, "subagent_type"),
        .model = str_of(input, "model"),
        .name = str_of(input, "name"),
        .background = json_is_true(json_object_get(input, "run_in_background")),
        .isolation_worktree = iso && !strcmp(iso, "worktree"),
        .output_schema = json_object_get(input, "output_schema"),
        .share_tokens = json_integer_value(json_object_get(share, "tokens")),
        .share_usd = json_number_value(json_object_get(share, "usd")),
        .input = input,
    };
    if (!req.prompt || !*req.prompt)
        return tool_error(out, "Agent: \"prompt\" must say what the agent is to do");
    spawn_node *child = NULL;
    loom_error err;
    loom_error_clear(&err);
    int rc = agent_prepare(parent, ctx, &req, &child, out, &err);
    if (rc == AGENT_PREP_HANDOFF) {
        agent_handoff_result(parent, parent->session->config.max_depth, req.prompt, out);
        return 0;
    }
    if (rc == AGENT_PREP_REFUSED)
        return 0;
    if (rc != AGENT_PREP_OK)
        return tool_error(out, "Agent: could not start the agent: %s", err.message);
    const char *prompt = child->res->prompt;
    if (child->background) {
        if (agent_bg_start(child, prompt, ctx, out) != 0) {
            agent_release(child);
            spawn_node_set_state(child, SPAWN_FAILED);
        }
        return 0;
    }
    agent_outcome o;
    agent_execute(child, NULL, &o);
    agent_outcome_result(child, prompt, &o, out);
    agent_outcome_free(&o);
    agent_release(child);
    return 0;
}

/* The description names the agents the catalog offers. */
static char *describe(const agent_catalog *cat)
{
    loom_str d = LOOM_STR_INIT;
    str_puts(&d,
             "Launch a sub-agent to handle a task on its own: it works with its own context "
             "and tools and returns one final message (its answer). Give it a complete, "
             "self-contained prompt. Do not spawn one for what a few tool calls of your own "
             "do (one file, one search). Several Agent calls in one reply run in parallel. Set "
             "run_in_background to go on while it works (you are told when it ends; TaskOutput "
             "reads it). Agent types:\n- general-purpose: any multi-step task (all tools)\n");
    size_t n = cat ? agent_catalog_count(cat) : 0;
    for (size_t i = 0; i < n; i++) {
        const agent_def *a = agent_catalog_at(cat, i);
        if (!a || !a->name || !strcmp(a->name, "general-purpose"))
            continue;
        const char *desc = a->description ? a->description : "";
        size_t len = strcspn(desc, "\n");
        if (len > 300)
            len = 300;
        str_printf(&d, "- %s: %.*s\n", a->name, (int)len, desc);
    }
    if (d.len && d.ptr[d.len - 1] == '\n')
        d.ptr[--d.len] = '\0';
    return str_steal(&d);
}

typedef struct agent_def_cache {
    tool_def def;
    struct agent_def_cache *next;
} agent_def_cache;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static agent_def_cache *cache;

/* One tool_def per description text: registries borrow the def, and a
 * REPL session rebuilds its tool set often with the same catalog. */
static const tool_def *agent_def_for(const agent_catalog *cat)
{
    char *desc = describe(cat);
    pthread_mutex_lock(&cache_mu);
    for (agent_def_cache *c = cache; c; c = c->next)
        if (!strcmp(c->def.description, desc)) {
            pthread_mutex_unlock(&cache_mu);
            free(desc);
            return &c->def;
        }
    agent_def_cache *c = xcalloc(1, sizeof *c);
    c->def = (tool_def){
        .name = "Agent",
        .description = desc,
        .input_schema = AGENT_SCHEMA,
        .read_only = false,
        .concurrency_safe = true,
        .run = run_agent,
        /* Never asks (Claude Code's Agent neither): spawning changes
         * nothing by itself, and every tool the child calls goes through
         * the child's own governance. A settings deny still denies it. */
        .local_state_only = true,
        .aliases = AGENT_ALIASES,
    };
    c->next = cache;
    cache = c;
    pthread_mutex_unlock(&cache_mu);
    return &c->def;
}

int agents_add_tools(tool_registry *reg, const agent_catalog *cat, loom_error *err)
{
    if (tool_registry_add(reg, agent_def_for(cat), err) != 0)
        return -1;
    if (tool_registry_add(reg, &tool_send_message, err) != 0)
        return -1;
    return 0;
}

/* runner.c — one sub-agent's lifecycle (runner.h): prepare (limits,
 * SubagentStart, resources), execute (a loop run; again later = resume),
 * release (the single cleanup, in a fixed order).
 *
 * Owns each child's agent_resources (node->res) from prepare until
 * agents_session_free; release frees what they hold and keeps the struct so
 * a resume can build them again. Threading: see runner.h; a node's res is
 * used by one thread at a time (its state says which).
 */
#include "agents/runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/bus.h"
#include "agents/runner_internal.h"
#include "agents/structured.h"
#include "agents/toolset.h"
#include "ext/skills/skills.h"
#include "agents/worktree.h"
#include "base/clock.h"
#include "base/event.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "context/plan.h"
#include "context/working.h"
#include "ext/mcp/manager.h"
#include "governance/governance.h"
#include "governance/pipeline.h"
#include "hooks/run.h"
#include "policy/approvals.h"
#include "provider/models.h"
#include "session/record.h"
#include "tools/file_state.h"
#include "tools/tasks.h"


/* How long a child waits for its MCP servers before its first request. */
#define RUNNER_MCP_WAIT_MS 2000L
/* The largest share, in tokens or micro-dollars ($1e9): more than any
 * budget, small enough that the pool's sums never overflow. */
#define AGENT_SHARE_MAX ((int64_t)1000000000000000)
/* SubagentStop "block" answers taken per execute. */
#define RUNNER_MAX_STOP_BLOCKS 3

/* ---- events ---------------------------------------------------------------- */

static void tag_payload(spawn_node *n, json_t *payload)
{
    if (!json_is_object(payload) || json_object_get(payload, "agent_id"))
        return; /* a grandchild's event keeps the id of the agent it came from */
    json_object_set_new(payload, "agent_id", json_string(n->id));
    json_object_set_new(payload, "agent_name", json_string(spawn_node_label(n)));
}

static void progress(spawn_node *n, const char *tool)
{
    int64_t now = clock_wall_ms();
    int64_t last = atomic_load(&n->last_progress_ms);
    if (now - last < 250 || !atomic_compare_exchange_strong(&n->last_progress_ms, &last, now))
        return;
    agent_resources *r = n->res;
    if (!r || !r->parent_io_emit)
        return;
    json_t *p = event_agent_progress(n->id, n->name, tool, spawn_usage_tokens(&n->tree),
                                     now - n->started_ms);
    r->parent_io_emit(r->parent_io_ctx, LOOM_EV_AGENT_PROGRESS, LOOM_VIS_USER, n->id, p);
}

/* The child's loop events: counted (tool uses, current tool), tagged with
 * the agent and handed to the parent's sink; token deltas stay inside (a
 * surface streaming the parent's answer must not print the child's). */
static void forward_io_emit(void *ctx, loom_event_type type, loom_visibility vis,
                            const char *corr, json_t *payload)
{
    spawn_node *n = ctx;
    agent_resources *r = n->res;
    if (type == LOOM_EV_TOOL_STARTED && !json_object_get(payload, "agent_id")) {
        const char *tool = json_string_value(json_object_get(payload, "tool"));
        atomic_fetch_add(&n->tool_uses, 1);
        spawn_node_set_tool(n, tool);
        if (tool && !strcmp(tool, "Bash"))
            spawn_node_note_command(
                n, json_string_value(json_object_get(json_object_get(payload, "input"), "command")));
        progress(n, tool);
    } else if ((type == LOOM_EV_TOOL_FINISHED || type == LOOM_EV_TOOL_FAILED) &&
               !json_object_get(payload, "agent_id")) {
        spawn_node_set_tool(n, NULL);
    } else if (type == LOOM_EV_MODEL_COMPLETED) {
        progress(n, NULL);
    }
    if (type == LOOM_EV_TOKEN_DELTA || !r || !r->parent_io_emit) {
        json_decref(payload);
        return;
    }
    tag_payload(n, payload);
    r->parent_io_emit(r->parent_io_ctx, type, vis, corr, payload);
}

/* An approval a background agent asks for after the run that started it
 * ended: its approval.requested would be dropped (no run's sink to show it
 * to a person), and the agent would wait out the approval's whole timeout
 * for nobody. It is denied now, with the reason, never allowed. */
static void deny_unseen_approval(spawn_node *n, const json_t *payload)
{
    agents_session *s = n->session;
    pthread_mutex_lock(&s->env_mu);
    bool attached = s->env_set;
    pthread_mutex_unlock(&s->env_mu);
    const char *id = json_string_value(json_object_get(payload, "approval_id"));
    governance *g = n->res ? n->res->gov : NULL;
    if (attached || !id || !g || !g->approvals)
        return;
    loom_error err;
    loom_error_clear(&err);
    approval_resolve(g->approvals, id, false, false,
                     "no one can answer it: the run that started this background agent has "
                     "ended; ask again from a run, or report what you need in your answer",
                     &err);
}

void agent_forward_emit(void *ctx, loom_event_type type, json_t *payload)
{
    spawn_node *n = ctx;
    agent_resources *r = n->res;
    if (type == LOOM_EV_APPROVAL_REQUESTED && !json_object_get(payload, "agent_id"))
        deny_unseen_approval(n, payload);
    if (!r || !r->parent_emit) {
        json_decref(payload);
        return;
    }
    tag_payload(n, payload);
    r->parent_emit(r->parent_emit_ctx, type, payload);
}

/* ---- the root run's sinks, through the session ---------------------------- */

/* A child of a root reaches the run's event sinks and its person through
 * the session, never directly: a background child outlives the run that
 * started it, and after detach its events are dropped (until a next run
 * attaches: the session owns the agent). */
static bool env_enter(agents_session *s, agents_run_env *copy)
{
    pthread_mutex_lock(&s->env_mu);
    bool ok = s->env_set;
    if (ok) {
        *copy = s->env;
        s->env_users++;
    }
    pthread_mutex_unlock(&s->env_mu);
    return ok;
}

static void env_leave(agents_session *s)
{
    pthread_mutex_lock(&s->env_mu);
    if (--s->env_users == 0)
        pthread_cond_broadcast(&s->env_cv);
    pthread_mutex_unlock(&s->env_mu);
}

static void session_io_emit(void *ctx, loom_event_type type, loom_visibility vis,
                            const char *corr, json_t *payload)
{
    agents_session *s = ctx;
    agents_run_env e;
    if (!env_enter(s, &e)) {
        json_decref(payload);
        return;
    }
    if (e.io && e.io->emit)
        e.io->emit(e.io->emit_ctx, type, vis, corr, payload);
    else
        json_decref(payload);
    env_leave(s);
}

static void session_emit(void *ctx, loom_event_type type, json_t *payload)
{
    agents_session *s = ctx;
    agents_run_env e;
    if (!env_enter(s, &e)) {
        json_decref(payload);
        return;
    }
    if (e.tctx && e.tctx->emit)
        e.tctx->emit(e.tctx->emit_ctx, type, payload);
    else
        json_decref(payload);
    env_leave(s);
}

static char *session_ask(void *ctx, const json_t *questions)
{
    agents_session *s = ctx;
    agents_run_env e;
    if (!env_enter(s, &e))
        return NULL;
    char *answer = e.tctx && e.tctx->ask_user ? e.tctx->ask_user(e.tctx->ask_ctx, questions)
                                              : NULL;
    env_leave(s);
    return answer;
}

/* ---- resolving what runs ----------------------------------------------------- */

/* Whether mode a allows nothing that mode b would not (docs/permissions.md
 * §4). The modes are not a line: acceptEdits allows edits auto sends to
 * its classifier, auto allows what its classifier passes that acceptEdits
 * would ask about, and dontAsk denies every ask default would put to a
 * person. So: plan ≤ dontAsk ≤ default = delegate ≤ {acceptEdits, auto}
 * ≤ bypassPermissions ≤ fullAccess, with acceptEdits and auto apart. */
static bool mode_within(perm_mode a, perm_mode b)
{
    if (a == b || a == MODE_PLAN)
        return true;
    switch (b) {
    case MODE_PLAN: return false;
    case MODE_DONT_ASK: return false; /* only plan and dontAsk itself */
    case MODE_DEFAULT:
    case MODE_DELEGATE: return a == MODE_DONT_ASK || a == MODE_DEFAULT || a == MODE_DELEGATE;
    case MODE_ACCEPT_EDITS:
    case MODE_AUTO: return mode_within(a, MODE_DEFAULT);
    case MODE_BYPASS: return a != MODE_FULL_ACCESS;
    case MODE_FULL_ACCESS: return true;
    }
    return false;
}

/* The child's mode: never more permissive than the parent's (an agent
 * file's mode that is not within the parent's gives the parent's); a
 * parent in plan gives plan. */
perm_mode agent_child_mode(perm_mode parent, const agent_def *def, bool inherit)
{
    if (parent == MODE_PLAN)
        return MODE_PLAN;
    if (def && def->mode_set && mode_within(def->mode, parent))
        return def->mode;
    return inherit || !mode_within(MODE_DEFAULT, parent) ? parent : MODE_DEFAULT;
}

/* The model: the request's, else the def's, else the parent's. A family
 * alias (sonnet, opus, haiku) runs on the id it stands for
 * (provider/models.c) when that id is served by the parent's vendor;
 * otherwise on the parent's model: guessing across vendors could name a
 * model the endpoint does not serve. */
static const char *resolve_model(const char *req, const agent_def *def, const char *parent)
{
    const char *m = req && *req ? req : def && def->model && *def->model ? def->model : NULL;
    if (!m || !strcmp(m, "inherit"))
        return parent;
    if (models_is_alias(m)) {
        const char *id = models_resolve(m), *vendor = models_vendor(id), *now = models_vendor(parent);
        return vendor && now && !strcmp(vendor, now) ? id : parent;
    }
    return m;
}

/* The parent's loop params: the root run's (env), or the parent agent's. */
static const loop_params *parent_params(spawn_node *parent)
{
    if (parent->res)
        return &parent->res->params;
    return parent->session->env_set ? parent->session->env.params : NULL;
}

const tool_registry *agent_parent_tools(spawn_node *parent)
{
    const loop_params *p = parent_params(parent);
    if (parent->res && parent->res->live_tools)
        return parent->res->live_tools;
    if (!parent->res) {
        /* A main run: the tool set its loop has now (MCP tools in it). */
        agents_session *s = parent->session;
        pthread_mutex_lock(&s->env_mu);
        const tool_registry *live = s->env_set ? s->live_tools : NULL;
        pthread_mutex_unlock(&s->env_mu);
        if (live)
            return live;
    }
    return p ? p->tools : NULL;
}

/* The instructions the parent's requests carry after the dynamic system
 * part (its MCP servers'), copied into *out: a fork's system prompt is the
 * parent's byte for byte. */
static void parent_instructions(spawn_node *parent, loom_str *out)
{
    str_clear(out);
    if (parent->res) {
        str_append(out, parent->res->instructions.ptr ? parent->res->instructions.ptr : "",
                   parent->res->instructions.len);
        return;
    }
    agents_session *s = parent->session;
    pthread_mutex_lock(&s->env_mu);
    if (s->env_set && s->live_ext)
        str_puts(out, s->live_ext);
    pthread_mutex_unlock(&s->env_mu);
}

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : dflt;
}

/* ---- the sidechain ------------------------------------------------------------- */

static transcript *open_sidechain(spawn_node *n, const char *cwd, const provider_config *pc,
                                  const char *parent_session, loom_error *err)
{
    agents_session *s = n->session;
    if (n->transcript_path)
        return transcript_open(n->transcript_path, err);
    loom_str dir = LOOM_STR_INIT, path = LOOM_STR_INIT;
    str_printf(&dir, "%s/subagents", s->mf_dir ? s->mf_dir : ".loom-agents");
    str_printf(&path, "%s/%s.jsonl", str_cstr(&dir), n->id);
    transcript *t = NULL;
    if (file_mkdirs(str_cstr(&dir), 0700, err) == 0) {
        json_t *meta = record_session_meta(cwd, provider_kind_name(pc->kind), n->model);
        json_object_set_new(meta, "sessionId", json_string(n->id));
        json_object_set_new(meta, "isSidechain", json_true());
        json_set_str(meta, "parentSessionId", parent_session);
        json_set_str(meta, "parentToolCallId", n->parent_call_id);
        json_object_set_new(meta, "agentId", json_string(n->id));
        json_set_str(meta, "agentType", n->type);
        agent_resources *r = n->res;
        int rc;
        if (n->def && n->def->role == AGENT_ROLE_FORK && r->origin_t) {
            json_object_set_new(meta, "forkedFrom", json_string(parent_session));
            rc = agent_fork_sidechain(n, r->origin_t, meta, str_cstr(&path), err);
        } else {
            char *line = record_dump_line(meta);
            loom_str text = LOOM_STR_INIT;
            str_puts(&text, line);
            str_putc(&text, '\n');
            free(line);
            rc = file_write_atomic(str_cstr(&path), text.ptr, text.len, 0600, err);
            str_free(&text);
        }
        json_decref(meta);
        if (rc == 0)
            t = transcript_open(str_cstr(&path), err);
    }
    if (t)
        n->transcript_path = str_steal(&path);
    str_free(&path);
    str_free(&dir);
    return t;
}

/* ---- resources ------------------------------------------------------------------ */

static bool toolset_refresh(void *ctx, const tool_registry **tools, const char **ext)
{
    agent_resources *r = ctx;
    if (r->toolset_given)
        return false;
    r->toolset_given = true;
    *tools = r->params.tools;
    *ext = r->instructions.len ? str_cstr(&r->instructions) : NULL;
    return true;
}

static char *toolset_notes(void *ctx)
{
    agent_resources *r = ctx;
    return r->mcp ? mcp_manager_take_updates(r->mcp) : NULL;
}

/* Builds what the child holds while it runs; on failure everything built
 * so far is released by the caller's agent_release. */
static int resources_init(spawn_node *n, loom_error *err)
{
    agent_resources *r = n->res;
    agents_session *s = n->session;
    const agent_def *def = n->def;
    bool fork = def && def->role == AGENT_ROLE_FORK;
    r->files = r->origin_files ? file_state_clone(r->origin_files) : file_state_new();
    r->tasks = task_registry_new();
    r->todos = todo_list_new();
    r->working = working_new(r->todos);
    if (r->origin_mcp && !fork) {
        r->mcp = mcp_manager_clone(r->origin_mcp);
        if (r->mcp)
            mcp_manager_wait(r->mcp, NULL, RUNNER_MCP_WAIT_MS);
    }
    const char *cwd = r->tctx.cwd ? r->tctx.cwd : s->cwd;
    if (r->origin_gov) {
        governance_child_opts go = {
            .mode = agent_child_mode(r->origin_gov->mode.mode, def, s->config.inherit_mode),
            .cwd = n->worktree_path,
            .session_id = n->id,
            .transcript_path = n->transcript_path,
            .agent_id = n->id,
            .agent_type = n->type,
            .agent_name = n->name,
            .tools = def ? (const char *const *)def->tools : NULL,
            .disallowed = def ? (const char *const *)def->disallowed : NULL,
            .role_read_only = def && def->read_only,
            .hooks = def ? def->hooks : NULL,
            .sandbox = r->wt_policy,
        };
        r->gov = governance_child(r->origin_gov, &go, err);
        if (!r->gov)
            return -1;
    }
    r->t = open_sidechain(n, cwd, r->params.provider, r->parent_session, err);
    if (!r->t)
        return -1;
    if (r->gov) {
        free(r->gov->transcript_path);
        r->gov->transcript_path = xstrdup(n->transcript_path);
    }
    if (fork) {
        r->params.tools = r->origin_tools;
        parent_instructions(n->parent, &r->instructions);
    } else {
        if (n->output_schema && !r->structured) {
            r->structured = structured_tool_new(n->output_schema, err);
            if (!r->structured)
                return -1;
        }
        agent_toolset_opts to = {
            .parent = r->origin_tools,
            .def = def,
            .read_only = def && def->read_only,
            .mcp = r->mcp,
            .window_tokens = r->params.provider ? r->params.provider->context_window : 0,
            .extra = r->structured,
            .publish = s->bus ? &tool_publish : NULL,
        };
        str_clear(&r->instructions);
        r->tools = agent_toolset_build(&to, &r->instructions, err);
        if (!r->tools)
            return -1;
        r->params.tools = r->tools;
    }
    r->live_tools = r->params.tools;

    tool_ctx *t = &r->tctx;
    t->cwd = n->worktree_path ? n->worktree_path : cwd;
    t->session_id = n->id;
    t->cancel = &n->cancel;
    t->files = r->files;
    t->tasks = r->tasks;
    t->todos = r->todos;
    t->working = r->working;
    t->heartbeat = NULL;
    t->record = NULL;
    t->record_ctx = NULL;
    t->gov = r->gov;
    t->sandbox = r->gov ? r->gov->sandbox : t->sandbox;
    t->sandbox_error = r->gov ? r->gov->sandbox_error : t->sandbox_error;
    t->run_id = n->run_id;
    t->emit = agent_forward_emit;
    t->emit_ctx = n;
    t->spawn = n;
    t->self = NULL;
    t->call_id = NULL;

    loop_io *io = &r->io;
    memset(io, 0, sizeof *io);
    io->t = r->t;
    io->tools = t;
    io->cancel = &n->cancel;
    io->emit = forward_io_emit;
    io->emit_ctx = n;
    /* Lifecycle hooks (UserPromptSubmit, Stop) are the main agent's: a
     * sub-agent's start and end fire SubagentStart/SubagentStop here. */
    io->gov = NULL;
    io->working = r->working;
    io->model = r->origin_model;
    r->toolset_given = false;
    io->toolset = (loop_toolset_port){.ctx = r, .refresh = toolset_refresh,
                                      .take_notes = toolset_notes};
    io->tree = spawn_node_tree_port(n);
    r->live = true;
    return 0;
}

void agent_release(spawn_node *n)
{
    if (!n || !n->res)
        return;
    agent_resources *r = n->res;
    if (r->live) {
        /* Its children stop first; background ones are external tasks of
         * its registry, which stops and releases them. */
        spawn_node_cancel_subtree(n, CANCEL_RUN);
        task_registry_free(r->tasks);
        r->tasks = NULL;
        mcp_manager_free(r->mcp);
        r->mcp = NULL;
        working_free(r->working);
        r->working = NULL;
        todo_list_free(r->todos);
        r->todos = NULL;
        governance_free(r->gov);
        r->gov = NULL;
        if (r->t) {
            loom_error ignore;
            transcript_sync(r->t, &ignore);
            transcript_free(r->t);
            r->t = NULL;
        }
        tool_registry_free(r->tools);
        r->tools = NULL;
        r->live_tools = NULL;
        file_state_free(r->files);
        r->files = NULL;
        agent_finish_worktree(n);
        r->live = false;
        /* A release after a cancel leaves the node resumable again. */
        atomic_store(&n->cancel, CANCEL_NONE);
    }
    if (r->counted) {
        spawn_pool_end_run(n);
        r->counted = false;
    }
    if (r->reserved) {
        spawn_pool_unreserve(n);
        r->reserved = false;
    }
}

void agent_resources_free(spawn_node *n)
{
    if (!n || !n->res)
        return;
    agent_release(n);
    agent_resources *r = n->res;
    structured_tool_free(r->structured);
    str_free(&r->instructions);
    free(r->prompt);
    free(r->system_static);
    free(r->parent_session);
    free(r->cwd);
    free(r);
    n->res = NULL;
}

/* ---- prepare -------------------------------------------------------------------- */

/* SubagentStart: fired with the parent's governance before the child runs.
 * A block refuses the spawn; updatedInput is re-checked as the Agent call
 * and replaces the request's fields (*updated: new reference, or NULL). */
static int fire_start(spawn_node *n, tool_ctx *pctx, const agent_request *req, json_t **updated,
                      tool_result *out)
{
    *updated = NULL;
    governance *g = pctx->gov;
    if (!g)
        return 0;
    json_t *extra = json_pack("{s:s,s:s?,s:s?,s:s?}", "agent_id", n->id, "agent_type", n->type,
                              "prompt", req->prompt, "description", req->description);
    if (n->name)
        json_object_set_new(extra, "agent_name", json_string(n->name));
    hook_outcome o = governance_fire(g, HOOK_SUBAGENT_START, extra, pctx->cancel);
    int rc = 0;
    if (o.blocked || o.stop) {
        tool_error(out, "Agent: a SubagentStart hook refused to start %s: %s", n->id,
                   o.block_reason ? o.block_reason : o.stop_reason ? o.stop_reason : "no reason");
        rc = -1;
    } else if (json_is_object(o.updated_input)) {
        loom_str why = LOOM_STR_INIT;
        const tool_registry *reg = agent_parent_tools(n->parent);
        if (reg && pipeline_recheck_input(reg, "Agent", o.updated_input, pctx, &why) != 0) {
            tool_error(out, "Agent: the input a SubagentStart hook rewrote is refused: %s",
                       str_cstr(&why));
            rc = -1;
        } else {
            *updated = json_incref(o.updated_input);
        }
        str_free(&why);
    }
    hook_outcome_free(&o);
    return rc;
}

/* The system prompt of a child: its def's prompt (a role's text or a file's
 * body); the parent's for a fork. Then the skills the agent file lists
 * (Claude Code's "skills" field), each as an activation would put it: the
 * sub-agent starts with them instead of finding them. A name no skill has
 * is said in the prompt's place, not silently dropped. */
static char *child_system(const agents_session *s, const agent_def *def, const loop_params *pp)
{
    loom_str out = LOOM_STR_INIT;
    if (!def || def->role == AGENT_ROLE_FORK || !def->prompt || !*def->prompt)
        str_puts(&out, pp->system_static ? pp->system_static : "");
    else
        str_puts(&out, def->prompt);
    for (size_t i = 0; def && def->skills && def->skills[i]; i++) {
        const skill_def *k = s->skills ? skill_catalog_find(s->skills, def->skills[i]) : NULL;
        str_puts(&out, i == 0 ? "\n\n# Skills loaded for this agent\n\n" : "\n\n");
        if (k)
            skill_render(k, NULL, &out);
        else
            str_printf(&out, "(The skill %s this agent lists is not installed.)",
                       def->skills[i]);
    }
    return str_steal(&out);
}

static int prepare_resources(spawn_node *n, spawn_node *parent, tool_ctx *pctx,
                             const agent_request *req, const char *prompt, loom_error *err)
{
    agents_session *s = n->session;
    const loop_params *pp = parent_params(parent);
    agent_resources *r = xcalloc(1, sizeof *r);
    n->res = r;
    r->params = *pp;
    r->origin_tools = agent_parent_tools(parent);
    r->params.tools = r->origin_tools;
    bool fork = n->def && n->def->role == AGENT_ROLE_FORK;
    /* The model: a copy of the provider config with only the model swapped
     * (the strings stay the parent's; r->provider is never freed deeply). */
    r->provider = *pp->provider;
    const char *model = fork ? pp->provider->model
                             : resolve_model(req->model, n->def, pp->provider->model);
    n->model = xstrdup(model);
    r->provider.model = n->model;
    r->params.provider = &r->provider;
    if (!fork) {
        r->system_static = child_system(s, n->def, pp);
        r->params.system_static = r->system_static;
        r->params.max_turns = n->def && n->def->max_turns > 0 ? n->def->max_turns
                                                              : s->config.max_turns;
    }
    /* The tree's pool holds the caps; the child's own loop has none. */
    r->params.max_tokens_total = 0;
    r->params.max_usd = 0;
    r->prompt = xstrdup(prompt);
    r->tctx = *pctx;
    /* A sub-agent's files and commands are Loom's own (docs/acp.md): it may
     * work in a worktree no driver's buffers belong to, and its calls are
     * not the driver's to show. */
    r->tctx.io = NULL;
    /* Plan mode is the session's: a child presents its plan as its answer
     * (ExitPlanMode refuses). The task list stays the tree's one. */
    r->tctx.mode = NULL;
    /* The session's directory is not a child's to move (a child that
     * wants one has isolation: "worktree"). */
    r->tctx.worktree_enter = NULL;
    r->tctx.worktree_exit = NULL;
    r->cwd = xstrdup(pctx->cwd);
    r->tctx.cwd = r->cwd;
    r->origin_files = pctx->files;
    r->origin_gov = pctx->gov;
    r->parent_session = xstrdup(pctx->session_id);
    if (parent->res) {
        r->origin_mcp = parent->res->mcp ? parent->res->mcp : parent->res->origin_mcp;
        r->origin_model = parent->res->io.model;
        r->origin_t = parent->res->t;
        r->parent_io_emit = forward_io_emit;
        r->parent_io_ctx = parent;
    } else if (s->env_set) {
        r->origin_mcp = s->env.mcp;
        r->origin_model = s->env.io->model;
        r->origin_t = s->env.io->t;
        r->parent_io_emit = session_io_emit;
        r->parent_io_ctx = s;
    }
    if (parent->parent) {
        r->parent_emit = pctx->emit;
        r->parent_emit_ctx = pctx->emit_ctx;
    } else {
        r->parent_emit = session_emit;
        r->parent_emit_ctx = s;
        r->tctx.ask_user = pctx->ask_user ? session_ask : NULL;
        r->tctx.ask_ctx = s;
    }
    if (agent_start_worktree(n, req, err) != 0)
        return -1;
    return resources_init(n, err);
}

/* A spawn refused after its node was made: the slot and share given back,
 * the name free for another try, the node left FAILED. */
static int prep_refused(spawn_node *n, bool counted, bool reserved)
{
    if (reserved)
        spawn_pool_unreserve(n);
    if (counted)
        spawn_pool_end_run(n);
    pthread_mutex_lock(&n->session->mu);
    free(n->name);
    n->name = NULL;
    pthread_mutex_unlock(&n->session->mu);
    spawn_node_set_state(n, SPAWN_FAILED);
    return AGENT_PREP_REFUSED;
}

int agent_prepare(spawn_node *parent, tool_ctx *pctx, const agent_request *req0,
                  spawn_node **child, tool_result *out, loom_error *err)
{
    *child = NULL;
    agents_session *s = parent->session;
    const agents_config *cfg = &s->config;
    if (!parent_params(parent)) {
        tool_error(out, "Agent: this run cannot spawn sub-agents (no run is attached)");
        return AGENT_PREP_REFUSED;
    }
    if (parent->depth >= cfg->max_depth)
        return AGENT_PREP_HANDOFF;
    agent_request req = *req0;
    const char *type = req.subagent_type && *req.subagent_type ? req.subagent_type
                                                               : "general-purpose";
    const agent_def *def = s->catalog ? agent_catalog_find(s->catalog, type) : NULL;
    if (!def && strcmp(type, "general-purpose") != 0) {
        tool_error(out,
                   "Agent: no agent type \"%s\": use one the Agent tool's description lists "
                   "(general-purpose, Explore, Plan, …)",
                   type);
        return AGENT_PREP_REFUSED;
    }
    spawn_node *n = spawn_node_new_child(parent, def ? def->name : type, req.name,
                                         req.description, err);
    if (!n) {
        tool_error(out, "%s", err->message);
        return AGENT_PREP_REFUSED;
    }
    n->def = def;
    n->parent_call_id = xstrdup(pctx->call_id);
    /* The limits first: SubagentStart fires only for an agent that starts. */
    if (spawn_pool_begin_run(n, cfg->max_running) != 0) {
        tool_error(out,
                   "Agent: %d sub-agents already run, the most at once (agents.maxRunning): "
                   "wait for one to end, or do this step yourself",
                   cfg->max_running);
        return prep_refused(n, false, false);
    }
    /* A share is the model's number: NaN or below zero is refused (the
     * schema says minimum 0, an embedder's request may not); one past any
     * budget is cut to AGENT_SHARE_MAX before the cast, which would be
     * undefined, and before the pool adds it up. */
    if (isnan(req.share_usd) || req.share_usd < 0 || req.share_tokens < 0) {
        tool_error(out, "Agent: \"share\" must be {\"tokens\": a whole number >= 0, "
                        "\"usd\": a number >= 0}");
        return prep_refused(n, true, false);
    }
    if (req.share_tokens > AGENT_SHARE_MAX)
        req.share_tokens = AGENT_SHARE_MAX;
    double micro_d = req.share_usd * 1e6 + 0.5;
    int64_t micro = micro_d >= (double)AGENT_SHARE_MAX ? AGENT_SHARE_MAX : (int64_t)micro_d;
    char *why = NULL;
    if (spawn_pool_reserve(n, req.share_tokens, micro, &why) != 0) {
        tool_error(out, "%s", why);
        free(why);
        return prep_refused(n, true, false);
    }
    json_t *updated = NULL;
    if (fire_start(n, pctx, &req, &updated, out) != 0)
        return prep_refused(n, true, true);
    if (updated) {
        /* The rewritten input decides: prompt, type and model again. */
        req.prompt = str_or(updated, "prompt", req.prompt);
        req.model = str_or(updated, "model", req.model);
        /* A hook may put the agent in a worktree, never take it out of
         * one the model asked for; a schema it gives replaces the call's. */
        const char *iso = str_or(updated, "isolation", NULL);
        if (iso && !strcmp(iso, "worktree"))
            req.isolation_worktree = true;
        if (json_is_object(json_object_get(updated, "output_schema")))
            req.output_schema = json_object_get(updated, "output_schema");
        const char *t2 = str_or(updated, "subagent_type", NULL);
        if (t2 && s->catalog && agent_catalog_find(s->catalog, t2)) {
            n->def = def = agent_catalog_find(s->catalog, t2);
            free(n->type);
            n->type = xstrdup(def->name);
        }
    }
    const json_t *schema = req.output_schema ? req.output_schema : def ? def->output_schema : NULL;
    n->output_schema = schema ? json_deep_copy(schema) : NULL;
    n->background = req.background || (def && def->background);
    int prc = prepare_resources(n, parent, pctx, &req, req.prompt, err);
    n->res->counted = true;
    n->res->reserved = true;
    json_decref(updated);
    if (prc != 0) {
        agent_release(n);
        prep_refused(n, false, false);
        return -1;
    }
    agent_resources *r = n->res;
    if (r->parent_io_emit)
        r->parent_io_emit(r->parent_io_ctx, LOOM_EV_AGENT_SPAWNED, LOOM_VIS_USER, pctx->call_id,
                          event_agent_spawned(n->id, n->name, n->type, n->model, n->depth,
                                              pctx->call_id, n->background, n->description,
                                              n->worktree_path, n->worktree_branch));
    *child = n;
    return AGENT_PREP_OK;
}

/* ---- execute ---------------------------------------------------------------------- */

/* SubagentStop: the reason to go on when a hook blocks the stop (malloc'd),
 * else NULL. */
static char *fire_stop(spawn_node *n, const char *last, bool active)
{
    agent_resources *r = n->res;
    governance *g = r->origin_gov;
    if (!g)
        return NULL;
    json_t *extra = json_pack("{s:s,s:s?,s:s?,s:s?,s:b}", "agent_id", n->id, "agent_type",
                              n->type, "agent_transcript_path", n->transcript_path,
                              "last_assistant_message", last, "stop_hook_active", active);
    hook_outcome o = governance_fire(g, HOOK_SUBAGENT_STOP, extra, &n->cancel);
    char *reason = NULL;
    if (o.blocked)
        reason = xstrdup(o.block_reason && *o.block_reason ? o.block_reason
                                                           : "A SubagentStop hook asks you to go on.");
    hook_outcome_free(&o);
    return reason;
}

static bool stop_is_partial(loom_stop_reason s)
{
    return s == LOOM_STOP_MAX_TURNS || s == LOOM_STOP_BUDGET_SHARE || s == LOOM_STOP_TOKEN_BUDGET ||
           s == LOOM_STOP_USD_BUDGET || s == LOOM_STOP_MAX_TOKENS;
}

/* The end of an execute, on the bus as agents/<id> (seed 000 row 4.7), so
 * the parent's heartbeat sees it like any other finding. */
static void publish_completion(spawn_node *n, const agent_outcome *o)
{
    mf_bus *b = n->session->bus;
    if (!b)
        return;
    char topic[64], summary[300];
    snprintf(topic, sizeof topic, "agents/%s", n->id);
    const char *text = o->final_text ? o->final_text : "";
    int len = (int)strcspn(text, "\n");
    snprintf(summary, sizeof summary, "%s %s: %.*s", n->id,
             o->state == LOOM_RUN_COMPLETED ? "finished" : "stopped", len > 200 ? 200 : len,
             text);
    json_t *payload = json_pack("{s:s,s:s,s:s,s:s}", "agent_id", n->id, "agent_type",
                                n->type ? n->type : "", "stop_reason",
                                loom_stop_reason_name(o->stop_reason), "result", text);
    mf_bus_event ev = {.topic = topic, .source = n->id, .summary = summary, .delta_h = 1.0,
                       .urgency = "low", .payload = payload};
    loom_error err;
    loom_error_clear(&err);
    mf_bus_publish(b, &ev, NULL, &err);
    json_decref(payload);
}

int agent_execute(spawn_node *n, const char *prompt, agent_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->cost_usd = -1;
    int64_t t0 = clock_wall_ms();
    agent_resources *r = n->res;
    if (!r) {
        out->state = LOOM_RUN_FAILED;
        out->error = xstrdup("the agent holds no resources (it was never prepared)");
        return -1;
    }
    if (!r->live && r->want_worktree) {
        /* Its worktree and the policy confining it to it ended with its
         * last run (or were never made): a resume would run it in the
         * parent's tree under the parent's sandbox. */
        out->state = LOOM_RUN_FAILED;
        loom_str e = LOOM_STR_INIT;
        if (n->worktree_branch)
            str_printf(&e, "agent %s ran in a worktree of its own, which ended with its run "
                           "(its work, if any, is on branch %s): start a new agent instead",
                       n->id, n->worktree_branch);
        else
            str_printf(&e, "agent %s was to run in a worktree of its own, which could not be "
                           "made: start a new agent instead", n->id);
        out->error = str_steal(&e);
        return -1;
    }
    if (!r->live) {
        loom_error err;
        loom_error_clear(&err);
        if (resources_init(n, &err) != 0) {
            out->state = LOOM_RUN_FAILED;
            out->error = xstrdup(err.message);
            agent_release(n);
            spawn_node_set_state(n, SPAWN_FAILED);
            return -1;
        }
    }
    if (!r->counted && spawn_pool_begin_run(n, 0) == 0)
        r->counted = true;
    spawn_node_set_state(n, SPAWN_RUNNING);
    n->ended_ms = 0;
    int turns0 = atomic_load(&n->turns), tools0 = atomic_load(&n->tool_uses);
    char *goal = xstrdup(prompt ? prompt : r->prompt);
    loop_result lr;
    memset(&lr, 0, sizeof lr);
    for (int blocks = 0;; blocks++) {
        loop_result_free(&lr);
        memset(&lr, 0, sizeof lr);
        loop_run(&r->params, &r->io, goal, &lr);
        free(goal);
        goal = NULL;
        if (lr.state != LOOM_RUN_COMPLETED || blocks >= RUNNER_MAX_STOP_BLOCKS)
            break;
        goal = fire_stop(n, lr.final_text, blocks > 0);
        if (!goal)
            break;
    }
    out->state = lr.state;
    out->stop_reason = lr.stop_reason;
    out->partial = lr.state != LOOM_RUN_COMPLETED && stop_is_partial(lr.stop_reason);
    out->structured = n->structured ? json_incref(n->structured) : NULL;
    if (out->structured)
        out->final_text = json_dumps(out->structured, JSON_COMPACT | JSON_ENSURE_ASCII);
    else
        out->final_text = xstrdup(lr.final_text ? lr.final_text : "");
    if (lr.state == LOOM_RUN_FAILED && lr.err.message[0])
        out->error = xstrdup(lr.err.message);
    out->turns = atomic_load(&n->turns) - turns0;
    out->tool_uses = atomic_load(&n->tool_uses) - tools0;
    spawn_node_usage(n, true, &out->usage, &out->cost_usd);
    out->duration_ms = clock_wall_ms() - t0;
    loop_result_free(&lr);

    spawn_state st = out->state == LOOM_RUN_CANCELLED || out->stop_reason == LOOM_STOP_CANCELLED
                         ? SPAWN_CANCELLED
                     : out->state == LOOM_RUN_COMPLETED || out->partial ? SPAWN_IDLE
                                                                         : SPAWN_FAILED;
    n->ended_ms = clock_wall_ms();
    spawn_node_set_tool(n, NULL);
    json_t *raw = agent_outcome_raw(n, r->prompt, out);
    pthread_mutex_lock(&n->session->mu);
    free(n->last_text);
    n->last_text = xstrdup(out->final_text);
    json_decref(n->last_raw);
    n->last_raw = raw;
    pthread_mutex_unlock(&n->session->mu);
    if (r->parent_io_emit) {
        msg_usage own;
        double usd;
        spawn_node_usage(n, true, &own, &usd);
        r->parent_io_emit(r->parent_io_ctx, LOOM_EV_AGENT_COMPLETED, LOOM_VIS_USER, n->id,
                          event_agent_completed(n->id, n->name, n->type, out->state,
                                                out->stop_reason, out->turns, out->tool_uses,
                                                out->duration_ms, msg_usage_to_json(&own), usd,
                                                out->final_text, agent_worktree_json(n)));
    }
    publish_completion(n, out);
    spawn_node_set_state(n, st);
    return 0;
}

void agent_outcome_free(agent_outcome *o)
{
    if (!o)
        return;
    free(o->final_text);
    free(o->error);
    json_decref(o->structured);
    memset(o, 0, sizeof *o);
}

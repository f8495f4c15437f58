/* extensions.c — the agent's extensions put to use: plugins, skills,
 * custom commands and output styles are loaded once per agent; per session
 * this file owns the tool-set port every run goes through (the built-ins,
 * Agent, MCP's tools and the Skill tool) and the one place extensions speak
 * to the model: the "extensions" part after the dynamic system prompt
 * (docs/extensions.md, "What the model sees"), in this order, each with its
 * budget —
 *   # Skills          the catalog: names and descriptions only (skills.h's
 *                     share of the window)
 *   ## MCP server …   each server's instructions (ext/mcp: capped per server)
 *   # Active skills   bodies of skills whose activation a compaction
 *                     summarized away
 * It also turns a goal "/name args" into a custom command's or a skill's
 * prompt before the run's first request, and reports the run's skills.
 *
 * Threads: load/free on the caller's; the port, goal preparation and the
 * report on the run's thread; api_ext_observe_call from any thread that
 * emits tool.started (a batch's pool, a fork): the skill session has its
 * own lock (ext/skills/session.c). */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/event.h"
#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "context/tokens.h"
#include "ext/commands/commands.h"
#include "ext/knowledge/knowledge.h"
#include "ext/plugins/plugins.h"
#include "ext/skills/skills.h"
#include "ext/sources.h"
#include "ext/styles/styles.h"
#include "governance/governance.h"
#include "provider/models.h"
#include "session/transcript.h"

struct api_ext {
    loom_session *s;
    skill_session *skills;
    knowledge_session *knowledge;   /* NULL: no knowledge source configured */
    pthread_mutex_t mu;             /* text, current, parts: the run thread against
                                       context_parts; taken before the skill
                                       session's own lock, never after */
    loop_toolset_port inner;        /* MCP's port, or zeroed (then the agent's tools) */
    const tool_registry *base;      /* what inner last gave (or the agent's tools) */
    tool_registry *current;         /* base + Skill */
    tool_registry **old;            /* earlier sets: a fork may still hold one */
    size_t n_old;
    const tool_def *skill_tool;     /* the Skill def current was built with */
    char *mcp_text;                 /* inner's extension text, copied */
    loom_str text;                  /* the composed extensions part */
    bool fresh_run;                 /* the run has not been given a set yet */
    bool offered;                   /* skill.offered emitted this run */
    tool_ctx *tctx;                 /* the run's context (emit), NULL between runs */
    int64_t parts[3];               /* tokens of skills, mcp, active */
};

/* --- the agent: loading ----------------------------------------------- */

static void warn_agent(loom_agent *a, const char *text)
{
    json_array_append_new(a->warnings, json_string(text));
}

int api_ext_load(loom_agent *a, loom_status *st)
{
    /* a->warnings may be the config's array: write to our own copy. */
    json_t *own = json_copy(a->warnings);
    json_decref(a->warnings);
    a->warnings = own;
    a->ext_notices = json_array();
    a->compat_claude = api_compat_claude(a->values, a->files);
    loom_error err;
    loom_error_clear(&err);
    plugins_opts po = {.user_settings = a->files[0], .project_settings = a->files[1],
                       .trusted = a->trusted};
    if (plugins_load(&po, &a->plugins, &err) != 0) {
        /* The installed list is unreadable: no plugin counts, said once. */
        char msg[1200];
        snprintf(msg, sizeof msg, "plugins: %s", err.message);
        warn_agent(a, msg);
        memset(&a->plugins, 0, sizeof a->plugins);
    }
    for (size_t i = 0; i < json_array_size(a->plugins.warnings); i++)
        warn_agent(a, json_string_value(json_array_get(a->plugins.warnings, i)));
    size_t np = 0;
    a->plugin_roots = plugins_roots(&a->plugins, &np);
    a->n_plugin_roots = np;
    ext_source_opts o = {.cwd = a->cwd, .trusted = a->trusted, .user_settings = a->files[0],
                         .claude_compat = a->compat_claude,
                         .plugins = a->plugin_roots, .n_plugins = np};
    a->skills = skill_catalog_load(&o, &err);
    a->commands = command_catalog_load(&o, &err);
    a->styles = style_set_load(&o, &err);
    if (!a->skills || !a->commands || !a->styles) {
        api_status_from(st, &err);
        return -1;
    }
    for (size_t i = 0; i < skill_catalog_warning_count(a->skills); i++)
        warn_agent(a, skill_catalog_warning(a->skills, i));
    for (size_t i = 0; i < command_catalog_warning_count(a->commands); i++)
        warn_agent(a, command_catalog_warning(a->commands, i));
    for (size_t i = 0; i < style_set_warning_count(a->styles); i++)
        warn_agent(a, style_set_warning(a->styles, i));
    return 0;
}

void api_ext_free_agent(loom_agent *a)
{
    skill_catalog_free(a->skills);
    command_catalog_free(a->commands);
    style_set_free(a->styles);
    free(a->plugin_roots);
    plugin_set_free(&a->plugins);
    json_decref(a->ext_notices);
}

/* --- the session ----------------------------------------------------- */

void api_ext_open(loom_session *s)
{
    loom_agent *a = s->agent;
    struct api_ext *x = xcalloc(1, sizeof *x);
    x->s = s;
    pthread_mutex_init(&x->mu, NULL);
    skill_session_opts o = {.skills = a->skills, .commands = a->commands,
                            .window_tokens = a->provider.context_window};
    x->skills = skill_session_new(&o);
    json_t *warnings = json_array();
    knowledge_opts ko = {.cwd = a->cwd, .trusted = a->trusted, .pack_dir = s->mf_dir};
    x->knowledge = knowledge_session_new(&ko, warnings);
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w) api_agent_warn(a, json_string_value(w));
    json_decref(warnings);
    s->ext = x;
}

void api_ext_close(loom_session *s)
{
    struct api_ext *x = s->ext;
    if (!x)
        return;
    skill_session_free(x->skills);
    knowledge_session_free(x->knowledge);
    tool_registry_free(x->current);
    for (size_t i = 0; i < x->n_old; i++)
        tool_registry_free(x->old[i]);
    free(x->old);
    free(x->mcp_text);
    str_free(&x->text);
    pthread_mutex_destroy(&x->mu);
    free(x);
    s->ext = NULL;
}

/* Whether the tool call call_id is still in the conversation the next
 * request is built from. */
static bool call_present(void *ctx, const char *call_id)
{
    transcript *t = ctx;
    json_t **chain = NULL;
    size_t n = 0;
    bool found = false;
    if (transcript_active(t, &chain, &n) != 0)
        return true; /* unknown: assume it is, so nothing is injected twice */
    for (size_t i = n; i-- > 0 && !found;) {
        const char *id = json_string_value(json_object_get(chain[i], "callId"));
        found = id && !strcmp(id, call_id);
    }
    free(chain);
    return found;
}

/* The extensions part, composed anew; true when it changed. */
static bool compose(struct api_ext *x)
{
    loom_str next = LOOM_STR_INIT;
    size_t offered = 0;
    int64_t tok = 0;
    skill_session_catalog_text(x->skills, &next, &tok, &offered);
    x->parts[0] = tok;
    size_t at = next.len;
    if (x->mcp_text && *x->mcp_text)
        str_printf(&next, "%s%s", next.len ? "\n" : "", x->mcp_text);
    x->parts[1] = tokens_estimate_text(next.ptr ? next.ptr + at : "", next.len - at);
    at = next.len;
    loom_str active = LOOM_STR_INIT;
    skill_session_active_text(x->skills, call_present, x->s->t, &active);
    if (active.len)
        str_printf(&next, "%s%s", next.len ? "\n" : "", active.ptr);
    str_free(&active);
    x->parts[2] = tokens_estimate_text(next.ptr ? next.ptr + at : "", next.len - at);
    bool changed = next.len != x->text.len ||
                   (next.len && memcmp(next.ptr, x->text.ptr, next.len) != 0);
    /* The loop holds the text it was last given: only a change replaces it
     * (and the loop is then given the new one). */
    if (changed) {
        str_free(&x->text);
        x->text = next;
    } else {
        str_free(&next);
    }
    return changed;
}

/* Builds current from base plus the Skill tool. */
static void rebuild(struct api_ext *x)
{
    tool_registry *reg = tool_registry_new();
    loom_error err;
    loom_error_clear(&err);
    for (size_t i = 0, n = tool_registry_count(x->base); i < n; i++)
        if (tool_registry_add(reg, tool_registry_at(x->base, i), &err) != 0)
            LOG_W("ext", "tool set: %s", err.message);
    x->skill_tool = skill_session_tool(x->skills);
    if (x->skill_tool && !tool_registry_find(reg, x->skill_tool->name) &&
        tool_registry_add(reg, x->skill_tool, &err) != 0)
        LOG_W("ext", "tool set: Skill: %s", err.message);
    /* The knowledge tools, when a source is configured (docs/knowledge.md). */
    const tool_def *kt[2] = {knowledge_question_tool(x->knowledge),
                             knowledge_search_tool(x->knowledge)};
    for (int i = 0; i < 2; i++)
        if (kt[i] && !tool_registry_find(reg, kt[i]->name) && tool_registry_add(reg, kt[i], &err) != 0)
            LOG_W("ext", "tool set: %s: %s", kt[i]->name, err.message);
    if (x->current) {
        x->old = xrealloc(x->old, (x->n_old + 1) * sizeof *x->old);
        x->old[x->n_old++] = x->current;
    }
    x->current = reg;
    skill_session_set_registry(x->skills, reg);
}

static bool ext_refresh(void *ctx, const tool_registry **tools, const char **ext)
{
    struct api_ext *x = ctx;
    bool base_changed = false;
    if (x->inner.refresh) {
        const tool_registry *t = NULL;
        const char *e = NULL;
        if (x->inner.refresh(x->inner.ctx, &t, &e)) {
            base_changed = t != x->base;
            x->base = t;
            free(x->mcp_text);
            x->mcp_text = e ? xstrdup(e) : NULL;
        }
    } else if (!x->base) {
        x->base = x->s->agent->tools;
        base_changed = true;
    }
    pthread_mutex_lock(&x->mu);
    bool text_changed = compose(x);
    bool tool_changed = skill_session_tool(x->skills) != x->skill_tool;
    if (base_changed || tool_changed || !x->current)
        rebuild(x);
    pthread_mutex_unlock(&x->mu);
    if (x->tctx && x->tctx->emit && !x->offered) {
        x->offered = true;
        x->tctx->emit(x->tctx->emit_ctx, LOOM_EV_SKILL_OFFERED,
                      skill_session_offer_json(x->skills));
    }
    if (!(base_changed || tool_changed || text_changed || x->fresh_run))
        return false;
    x->fresh_run = false;
    *tools = x->current;
    *ext = x->text.len ? x->text.ptr : NULL;
    return true;
}

static char *ext_take_notes(void *ctx)
{
    struct api_ext *x = ctx;
    return x->inner.take_notes ? x->inner.take_notes(x->inner.ctx) : NULL;
}

void api_ext_run_begin(loom_session *s, loop_io *io, tool_ctx *tctx)
{
    struct api_ext *x = s->ext;
    if (!x)
        return;
    x->inner = io->toolset;
    x->tctx = tctx;
    x->fresh_run = true;
    x->offered = false;
    if (!x->inner.refresh)
        x->base = s->agent->tools;
    skill_session_run_begin(x->skills);
    knowledge_session_run_begin(x->knowledge);
    io->toolset = (loop_toolset_port){.ctx = x, .refresh = ext_refresh,
                                      .take_notes = ext_take_notes};
}

/* seed 000 §10.7: an answer that uses evidence a source requires citing
 * must carry its citation ids; a missing one is a warning.emitted and a
 * line of the audit log (decision "none", source "knowledge"). */
static void check_citations(loom_session *s, struct api_ext *x, const char *answer)
{
    json_t *warnings = json_array();
    if (!knowledge_check_answer(x->knowledge, answer, warnings)) {
        json_decref(warnings);
        return;
    }
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w) {
        const char *msg = json_string_value(json_object_get(w, "message"));
        if (x->tctx && x->tctx->emit) {
            json_t *ev = event_warning("citation_missing", msg);
            json_object_set(ev, "evidence_pack_id", json_object_get(w, "evidence_pack_id"));
            json_object_set(ev, "citations", json_object_get(w, "citations"));
            x->tctx->emit(x->tctx->emit_ctx, LOOM_EV_WARNING_EMITTED, ev);
        }
        if (s->gov && s->gov->audit) {
            perm_decision d = {.verdict = PERM_NONE, .source = "knowledge",
                               .row = "citation_policy.require_citation_for"};
            snprintf(d.reason, sizeof d.reason, "%s", msg);
            audit_entry e = {.session_id = s->gov->session_id,
                             .run_id = x->tctx ? x->tctx->run_id : NULL,
                             .tool = "citation_check", .mode = s->gov->mode.mode, .decision = &d};
            audit_record(s->gov->audit, &e);
        }
    }
    json_decref(warnings);
}

json_t *api_ext_run_end(loom_session *s, const char *answer)
{
    struct api_ext *x = s->ext;
    if (!x)
        return NULL;
    if (x->knowledge)
        check_citations(s, x, answer);
    governance_grants_clear(s->gov);
    json_t *report = skill_session_run_report(x->skills);
    x->tctx = NULL;
    x->inner = (loop_toolset_port){0};
    return report;
}

void api_ext_observe_call(loom_session *s, const json_t *started)
{
    struct api_ext *x = s->ext;
    if (!x)
        return;
    skill_session_observe_call(x->skills, json_string_value(json_object_get(started, "tool")),
                               json_object_get(started, "input"), s->agent->cwd);
}

/* The run's tool set now (the port's, built on demand). */
static const tool_registry *tools_now(struct api_ext *x)
{
    const tool_registry *t = NULL;
    const char *e = NULL;
    bool fresh = x->fresh_run;
    if (ext_refresh(x, &t, &e))
        x->fresh_run = fresh; /* the loop still gets its first set */
    return x->current;
}

/* A frontmatter model for this run: an id counts; an alias of the model
 * table (sonnet, opus, haiku, …) counts as its id; "inherit" leaves the
 * agent's, and so, with a warning, does an alias of another vendor or a
 * bare word the table does not know. */
static const char *run_model(const char *want, const char *who, const char *current,
                             tool_ctx *tctx)
{
    if (!want || !*want || !strcmp(want, "inherit"))
        return NULL;
    /* An alias becomes its id (provider/models.c) when that id goes to the
     * same vendor's API as the session's model; sent elsewhere it could only
     * be refused. Any other name with a '-', '/' or '.' is an id. */
    const char *id = models_resolve(want);
    const char *vendor = models_vendor(id), *now = models_vendor(current);
    if (models_is_alias(want) && vendor && now && !strcmp(vendor, now))
        return id;
    if (!models_is_alias(want) && (strchr(want, '-') || strchr(want, '/') || strchr(want, '.')))
        return want;
    if (tctx->emit) {
        char msg[300];
        if (models_is_alias(want))
            snprintf(msg, sizeof msg, "%s: model \"%.60s\" stands for %s, served by %s's API, "
                     "not the session's; the session's model is used", who, want, id,
                     vendor ? vendor : "another");
        else
            snprintf(msg, sizeof msg, "%s: model \"%.60s\" is not an alias Loom knows (see "
                     "/model); the session's model is used", who, want);
        tctx->emit(tctx->emit_ctx, LOOM_EV_WARNING_EMITTED, event_warning("extension", msg));
    }
    return NULL;
}

/* Whether a plain prompt may name an attachment: an '@' or an image
 * file's extension somewhere in it (the cheap test before any work). */
static bool may_attach(const char *goal)
{
    if (strchr(goal, '@'))
        return true;
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".gif", ".webp",
                                       ".PNG", ".JPG", ".JPEG", ".GIF", ".WEBP"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (strstr(goal, exts[i]))
            return true;
    return false;
}

/* A plain prompt with its @files and images (commands.h's
 * command_expand_mentions). */
static char *prepare_plain(struct api_ext *x, const char *goal, tool_ctx *tctx, json_t **images,
                           loom_error *err)
{
    json_t *imgs = json_array();
    loom_str text = LOOM_STR_INIT;
    char *out = NULL;
    if (command_expand_mentions(goal, tools_now(x), tctx, &text, imgs, err) == 0)
        out = str_steal(&text);
    str_free(&text);
    if (out && json_array_size(imgs))
        *images = json_incref(imgs);
    json_decref(imgs);
    return out;
}

char *api_ext_prepare_goal(loom_session *s, const char *goal, tool_ctx *tctx, const char **model,
                           json_t **images, loom_error *err)
{
    struct api_ext *x = s->ext;
    *model = NULL;
    *images = NULL;
    char *name = NULL;
    const char *args = NULL;
    if (x && goal && goal[0] != '/' && may_attach(goal)) {
        char *files = prepare_plain(x, goal, tctx, images, err);
        if (!files || !strchr(goal, '@'))
            return files;
        /* @server:uri mentions too: MCP reads them from the prompt as typed
         * (never from a file's text) and appends the resources after it. */
        char *mcp = api_mcp_prepare_goal(s, goal, err);
        if (!mcp) {
            free(files);
            json_decref(*images);
            *images = NULL;
            return NULL;
        }
        size_t gl = strlen(goal);
        if (strncmp(mcp, goal, gl) == 0 && mcp[gl]) {
            loom_str both = LOOM_STR_INIT;
            str_printf(&both, "%s%s", files, mcp + gl);
            free(files);
            files = str_steal(&both);
        }
        free(mcp);
        return files;
    }
    if (!x || !goal || !command_split(goal, &name, &args))
        return api_mcp_prepare_goal(s, goal, err);
    loom_agent *a = s->agent;
    /* A skill and a command of the same name: the skill wins, as in the
     * catalog the model sees (Claude Code's rule). */
    const skill_def *k = skill_catalog_find(a->skills, name);
    if (k && !k->user_invocable)
        k = NULL;
    const command_def *c = k ? NULL : command_catalog_find(a->commands, name);
    char *out = NULL;
    if (c) {
        loom_str text = LOOM_STR_INIT;
        if (command_expand(c, args, tools_now(x), tctx, &text, err) == 0) {
            out = str_steal(&text);
            *model = run_model(c->model, c->path, a->provider.model, tctx);
        }
        str_free(&text);
    } else if (k) {
        tools_now(x);
        skill_activation act;
        if (skill_session_activate(x->skills, name, args, "user", NULL, tctx, &act, err) == 0) {
            out = xstrdup(act.text.ptr ? act.text.ptr : "");
            *model = run_model(k->model, k->path, a->provider.model, tctx);
            if (act.event && tctx->emit) {
                tctx->emit(tctx->emit_ctx, LOOM_EV_SKILL_ACTIVATED, act.event);
                act.event = NULL;
            }
        }
        skill_activation_free(&act);
    } else {
        free(name);
        return api_mcp_prepare_goal(s, goal, err);
    }
    free(name);
    return out;
}

/* --- reports ---------------------------------------------------------- */

const char *api_ext_text(loom_session *s)
{
    struct api_ext *x = s->ext;
    return x && x->text.len ? x->text.ptr : NULL;
}

json_t *api_ext_context_parts(loom_session *s)
{
    struct api_ext *x = s->ext;
    json_t *arr = json_array();
    if (!x)
        return arr;
    int64_t window = s->agent->provider.context_window;
    int64_t budget = (int64_t)(window * SKILL_CATALOG_SHARE);
    if (budget < SKILL_CATALOG_FLOOR_TOKENS)
        budget = SKILL_CATALOG_FLOOR_TOKENS;
    pthread_mutex_lock(&x->mu);
    if (!atomic_load(&s->run_active))
        compose(x); /* between runs: what the next request would carry */
    json_array_append_new(arr, json_pack("{s:s,s:I,s:I}", "name", "skills", "tokens",
                                         (json_int_t)x->parts[0], "budget", (json_int_t)budget));
    json_array_append_new(arr, json_pack("{s:s,s:I}", "name", "mcp_instructions", "tokens",
                                         (json_int_t)x->parts[1]));
    json_array_append_new(arr, json_pack("{s:s,s:I}", "name", "active_skills", "tokens",
                                         (json_int_t)x->parts[2]));
    pthread_mutex_unlock(&x->mu);
    return arr;
}

static json_t *rules_array(char *const *v)
{
    json_t *arr = json_array();
    for (size_t i = 0; v && v[i]; i++)
        json_array_append_new(arr, json_string(v[i]));
    return arr;
}

char *loom_agent_extensions_json(loom_agent *a)
{
    if (!a)
        return NULL;
    json_t *skills = json_array(), *commands = json_array(), *styles = json_array(),
           *plugins = json_array(), *warnings = json_array();
    for (size_t i = 0, n = skill_catalog_count(a->skills); i < n; i++) {
        const skill_def *d = skill_catalog_at(a->skills, i);
        char **files = skill_files(d);
        size_t nf = 0;
        while (files && files[nf])
            free(files[nf++]);
        free(files);
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b,s:b,s:I}", "name", d->name, "description",
                              d->description ? d->description : "", "source", d->path,
                              "scope", ext_scope_name(d->scope), "user_invocable",
                              d->user_invocable, "model_invocable",
                              !d->disable_model_invocation, "files", (json_int_t)nf);
        if (d->plugin)
            json_set_str(o, "plugin", d->plugin);
        if (d->argument_hint)
            json_set_str(o, "argument_hint", d->argument_hint);
        if (d->allowed_tools)
            json_object_set_new(o, "allowed_tools", rules_array(d->allowed_tools));
        json_array_append_new(skills, o);
    }
    for (size_t i = 0, n = command_catalog_count(a->commands); i < n; i++) {
        const command_def *c = command_catalog_at(a->commands, i);
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", c->name, "description",
                              c->description ? c->description : "", "source", c->path, "scope",
                              ext_scope_name(c->scope), "model_invocable",
                              !c->disable_model_invocation && c->description);
        if (c->plugin)
            json_set_str(o, "plugin", c->plugin);
        if (c->argument_hint)
            json_set_str(o, "argument_hint", c->argument_hint);
        json_array_append_new(commands, o);
    }
    const char *active = a->output_style ? a->output_style : "default";
    for (size_t i = 0, n = style_set_count(a->styles); i < n; i++) {
        const output_style *y = style_set_at(a->styles, i);
        json_array_append_new(styles, json_pack("{s:s,s:s,s:s,s:b}", "name", y->name,
                                                "description",
                                                y->description ? y->description : "", "source",
                                                y->source ? y->source : "built-in", "active",
                                                strcasecmp(y->name, active) == 0));
    }
    for (size_t i = 0; i < a->plugins.n; i++) {
        const plugin *p = &a->plugins.v[i];
        json_t *o = json_pack("{s:s,s:b,s:s}", "name", p->name ? p->name : "", "enabled",
                              p->enabled, "root", p->root ? p->root : "");
        if (p->error)
            json_set_str(o, "error", p->error);
        json_array_append_new(plugins, o);
    }
    for (size_t i = 0; i < skill_catalog_warning_count(a->skills); i++)
        json_array_append_new(warnings, json_string(skill_catalog_warning(a->skills, i)));
    for (size_t i = 0; i < command_catalog_warning_count(a->commands); i++)
        json_array_append_new(warnings, json_string(command_catalog_warning(a->commands, i)));
    for (size_t i = 0; i < style_set_warning_count(a->styles); i++)
        json_array_append_new(warnings, json_string(style_set_warning(a->styles, i)));
    for (size_t i = 0; i < json_array_size(a->plugins.warnings); i++)
        json_array_append(warnings, json_array_get(a->plugins.warnings, i));
    json_t *doc = json_pack("{s:o,s:o,s:o,s:o,s:o,s:O}", "skills", skills, "commands", commands,
                            "output_styles", styles, "plugins", plugins, "warnings", warnings,
                            "notices", a->ext_notices ? a->ext_notices : json_array());
    char *text = json_dump_compact(doc);
    json_decref(doc);
    return text;
}

struct knowledge_session *api_ext_knowledge(loom_session *s)
{
    return s && s->ext ? ((struct api_ext *)s->ext)->knowledge : NULL;
}

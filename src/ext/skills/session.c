/* session.c — one session's skills (skills.h): what the catalog offers the
 * model now (skills whose paths have been touched included), the "# Skills"
 * text within its budget, the Skill tool of that offer, activations (the
 * text that enters the context, once per skill; allowed-tools granted;
 * context: fork run through the Agent tool), the "# Active skills" text
 * that keeps an activated skill alive across compaction, and the per-run
 * report of offered / activated / used (seed 000 M4).
 *
 * Owns its offer, its tool defs (every generation: a registry may still
 * point at an older one until the tool set is rebuilt, so they are freed
 * with the session), its activations. The catalogs are borrowed.
 * Threading: every public function takes the session's lock (a fork runs
 * the parent's Skill tool on its own thread); see struct skill_session. */
#include "ext/skills/skills_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/glob.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "context/tokens.h"
#include "governance/governance.h"
#include "governance/pipeline.h"
#include "policy/rule.h"

/* One skill that entered the context (kept for # Active skills). */
typedef struct active_skill {
    char *name;
    char *call_id;      /* the Skill call (or the record) that carried it; NULL: none to ask */
    char *text;
} active_skill;

/* One activation of the current run (for the report). */
typedef struct run_activation {
    char *name;
    char *via;
    bool used;
    const skill_def *skill;     /* NULL for a command */
    const command_def *command;
    bool has_files;             /* the skill's folder holds more than SKILL.md */
} run_activation;

struct skill_session {
    /* Every public function holds it: a fork (agents/) runs the parent's
     * Skill tool on its own thread while the parent's run composes its
     * extensions part. Released around the long calls an activation
     * makes (a command's !`cmd`, a fork's sub-agent), whose events come
     * back here through tool.started. */
    pthread_mutex_t mu;
    skill_session_opts o;
    const tool_registry *reg;
    bool *triggered;            /* per catalog skill: a file matching its paths was touched */
    /* The offer as last computed. */
    char **listed;              /* names in the catalog text (the tool's enum) */
    size_t nlisted, navailable;
    bool truncated, built;
    int64_t tokens;
    loom_str text;
    /* The Skill tool, every generation; cur is the last. */
    tool_def **defs;
    size_t ndefs;
    char *cur_key;
    active_skill *active;
    size_t nactive;
    /* The run. */
    char **run_offered;
    size_t nrun_offered;
    run_activation *acts;
    size_t nacts;
};

static void strv_clear(char ***v, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free((*v)[i]);
    free(*v);
    *v = NULL;
    *n = 0;
}

static void strv_add(char ***v, size_t *n, const char *s)
{
    *v = xrealloc(*v, (*n + 1) * sizeof(char *));
    (*v)[(*n)++] = xstrdup(s);
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

skill_session *skill_session_new(const skill_session_opts *o)
{
    skill_session *ss = xcalloc(1, sizeof *ss);
    pthread_mutex_init(&ss->mu, NULL);
    if (o)
        ss->o = *o;
    size_t n = skill_catalog_count(ss->o.skills);
    ss->triggered = xcalloc(n ? n : 1, sizeof(bool));
    return ss;
}

static void acts_clear(skill_session *ss)
{
    for (size_t i = 0; i < ss->nacts; i++) {
        free(ss->acts[i].name);
        free(ss->acts[i].via);
    }
    free(ss->acts);
    ss->acts = NULL;
    ss->nacts = 0;
}

void skill_session_free(skill_session *ss)
{
    if (!ss)
        return;
    free(ss->triggered);
    strv_clear(&ss->listed, &ss->nlisted);
    str_free(&ss->text);
    for (size_t i = 0; i < ss->ndefs; i++)
        skill_tool_free(ss->defs[i]);
    free(ss->defs);
    free(ss->cur_key);
    for (size_t i = 0; i < ss->nactive; i++) {
        free(ss->active[i].name);
        free(ss->active[i].call_id);
        free(ss->active[i].text);
    }
    free(ss->active);
    strv_clear(&ss->run_offered, &ss->nrun_offered);
    acts_clear(ss);
    pthread_mutex_destroy(&ss->mu);
    free(ss);
}

static void set_registry_locked(skill_session *ss, const tool_registry *reg)
{
    if (ss)
        ss->reg = reg;
}

/* ---- the offer ---------------------------------------------------------------- */

static bool skill_offered(const skill_session *ss, size_t i)
{
    const skill_def *d = skill_catalog_at(ss->o.skills, i);
    return d && !d->disable_model_invocation && (!d->paths || ss->triggered[i]);
}

static bool command_offered(const skill_session *ss, const command_def *c)
{
    return c && c->description && c->description[0] && !c->disable_model_invocation &&
           !skill_catalog_find(ss->o.skills, c->name);
}

static int64_t budget_tokens(const skill_session *ss)
{
    int64_t b = (int64_t)((double)ss->o.window_tokens * SKILL_CATALOG_SHARE);
    return b < SKILL_CATALOG_FLOOR_TOKENS ? SKILL_CATALOG_FLOOR_TOKENS : b;
}

/* "- name: description" on one line (line breaks in the description become
 * blanks: a description cannot add lines of its own to the prompt). */
static void put_line(loom_str *out, const char *name, const char *desc)
{
    str_printf(out, "- %s: ", name);
    for (const char *p = desc; *p; p++)
        str_putc(out, (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p);
    str_putc(out, '\n');
}

static void try_list(skill_session *ss, const char *name, const char *desc, int64_t budget)
{
    ss->navailable++;
    if (ss->truncated)
        return;
    loom_str line = LOOM_STR_INIT;
    put_line(&line, name, desc);
    int64_t t = tokens_estimate_text(line.ptr, line.len);
    /* Room is kept for the closing count line. */
    if (ss->tokens + t + 24 > budget) {
        ss->truncated = true;
    } else {
        str_append(&ss->text, line.ptr, line.len);
        ss->tokens += t;
        strv_add(&ss->listed, &ss->nlisted, name);
    }
    str_free(&line);
}

static const char catalog_head[] =
    "# Skills\n\n"
    "Skills are instructions (and scripts and reference files) for kinds of task. Only their "
    "names and descriptions are listed here. When a task matches a description, call the Skill "
    "tool with that name to load the instructions before starting; do not load skills the task "
    "does not need.\n\n";

/* Recomputes the offer, its text and (when the names changed) the tool. */
static void refresh(skill_session *ss)
{
    strv_clear(&ss->listed, &ss->nlisted);
    str_clear(&ss->text);
    ss->navailable = 0;
    ss->truncated = false;
    int64_t budget = budget_tokens(ss);
    str_puts(&ss->text, catalog_head);
    ss->tokens = tokens_estimate_cstr(catalog_head);
    size_t n = skill_catalog_count(ss->o.skills);
    for (size_t i = 0; i < n; i++)
        if (skill_offered(ss, i)) {
            const skill_def *d = skill_catalog_at(ss->o.skills, i);
            try_list(ss, d->name, d->description, budget);
        }
    size_t nc = command_catalog_count(ss->o.commands);
    for (size_t i = 0; i < nc; i++) {
        const command_def *c = command_catalog_at(ss->o.commands, i);
        if (command_offered(ss, c))
            try_list(ss, c->name, c->description, budget);
    }
    if (ss->truncated) {
        loom_str tail = LOOM_STR_INIT;
        str_printf(&tail, "- (%zu more not listed: this list is capped at %lld tokens)\n",
                   ss->navailable - ss->nlisted, (long long)budget);
        ss->tokens += tokens_estimate_text(tail.ptr, tail.len);
        str_append(&ss->text, tail.ptr, tail.len);
        str_free(&tail);
    }
    if (ss->nlisted == 0) {
        str_clear(&ss->text);
        ss->tokens = 0;
    }
    ss->built = true;

    loom_str key = LOOM_STR_INIT;
    for (size_t i = 0; i < ss->nlisted; i++)
        str_printf(&key, "%s\n", ss->listed[i]);
    if (ss->nlisted && (!ss->cur_key || strcmp(ss->cur_key, str_cstr(&key)) != 0)) {
        tool_def *d = skill_tool_build(ss, (const char *const *)ss->listed, ss->nlisted);
        ss->defs = xrealloc(ss->defs, (ss->ndefs + 1) * sizeof *ss->defs);
        ss->defs[ss->ndefs++] = d;
        free(ss->cur_key);
        ss->cur_key = str_steal(&key);
    }
    if (!ss->nlisted) {
        free(ss->cur_key);
        ss->cur_key = NULL;
    }
    str_free(&key);
}

static const tool_def *tool_locked(skill_session *ss)
{
    if (!ss)
        return NULL;
    if (!ss->built)
        refresh(ss);
    return ss->cur_key && ss->ndefs ? ss->defs[ss->ndefs - 1] : NULL;
}

static void catalog_text_locked(skill_session *ss, loom_str *out, int64_t *tokens, size_t *offered)
{
    if (tokens)
        *tokens = 0;
    if (offered)
        *offered = 0;
    if (!ss)
        return;
    refresh(ss);
    if (out)
        if (ss->text.len)
            str_append(out, ss->text.ptr, ss->text.len);
    if (tokens)
        *tokens = ss->tokens;
    if (offered)
        *offered = ss->nlisted;
    for (size_t i = 0; i < ss->nlisted; i++)
        if (!strv_has(ss->run_offered, ss->nrun_offered, ss->listed[i]))
            strv_add(&ss->run_offered, &ss->nrun_offered, ss->listed[i]);
}

static json_t *offer_json_locked(skill_session *ss)
{
    json_t *names = json_array();
    if (ss && !ss->built)
        refresh(ss);
    for (size_t i = 0; ss && i < ss->nlisted; i++)
        json_array_append_new(names, json_string(ss->listed[i]));
    return json_pack("{s:o, s:I, s:b, s:I, s:I}", "skills", names, "tokens",
                     (json_int_t)(ss ? ss->tokens : 0), "truncated", ss && ss->truncated, "listed",
                     (json_int_t)(ss ? ss->nlisted : 0), "available",
                     (json_int_t)(ss ? ss->navailable : 0));
}

/* ---- active skills ------------------------------------------------------------ */

static const active_skill *find_active(const skill_session *ss, const char *name)
{
    for (size_t i = 0; i < ss->nactive; i++)
        if (strcmp(ss->active[i].name, name) == 0)
            return &ss->active[i];
    return NULL;
}

static void active_text_locked(skill_session *ss, bool (*present)(void *ctx, const char *call_id),
                               void *ctx, loom_str *out)
{
    if (!ss || !out)
        return;
    bool head = false;
    for (size_t i = 0; i < ss->nactive; i++) {
        const active_skill *a = &ss->active[i];
        /* Without an id there is nothing to ask: the text is taken as
         * still in the conversation (skills.h, skill_session_activate). */
        if (!a->call_id || (present && present(ctx, a->call_id)))
            continue;
        if (!head) {
            str_puts(out, "# Active skills\n\n"
                          "These skills were loaded earlier in this session; the conversation "
                          "where they were loaded has since been summarized, and their "
                          "instructions still apply.\n\n");
            head = true;
        } else {
            str_puts(out, "\n\n");
        }
        str_puts(out, a->text);
    }
}

/* ---- activation ----------------------------------------------------------------- */

void skill_activation_free(skill_activation *a)
{
    if (!a)
        return;
    str_free(&a->text);
    json_decref(a->event);
    a->event = NULL;
}

static int fail(loom_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(loom_error *err, const char *fmt, ...)
{
    loom_str s = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "%s", str_cstr(&s));
    str_free(&s);
    return -1;
}

/* A value inside an attribute: no quote, no angle bracket of its own. */
static void put_attr(loom_str *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"')
            str_puts(out, "&quot;");
        else if (*s == '<')
            str_puts(out, "&lt;");
        else if (*s == '>')
            str_puts(out, "&gt;");
        else if (*s == '&')
            str_puts(out, "&amp;");
        else
            str_putc(out, *s);
    }
}

/* The text a skill puts into the context (skills.h, docs/skills.md). */
static void skill_text(const skill_def *d, const char *args, loom_str *out, bool *has_files)
{
    const skill_entry *e = (const skill_entry *)d;
    str_puts(out, "<skill name=\"");
    put_attr(out, d->name);
    str_puts(out, "\" dir=\"");
    put_attr(out, d->dir);
    str_puts(out, "\">\n");
    char *body = command_substitute(e->body, args ? args : "");
    if (!body)
        body = xstrdup(e->body);
    size_t len = strlen(body);
    if (len > SKILL_BODY_CAP) {
        size_t cut = SKILL_BODY_CAP;
        while (cut > 0 && ((unsigned char)body[cut] & 0xC0) == 0x80)
            cut--;
        str_append(out, body, cut);
        str_printf(out, "\n\n[The skill's instructions are cut here: %zu of %zu bytes. Read the "
                        "rest from %s if the task needs it.]",
                   cut, len, d->path);
    } else {
        str_append(out, body, len);
    }
    free(body); /* command_substitute appended the arguments when the body names none */
    str_printf(out, "\n\nBase directory for this skill: %s\n", d->dir);
    char **files = skill_files(d);
    size_t nf = 0;
    while (files[nf])
        nf++;
    *has_files = nf > 0;
    if (nf) {
        str_puts(out, "\nFiles in this skill's folder (relative to the base directory; read one "
                      "with Read, or run a script, when the instructions call for it):\n");
        for (size_t i = 0; i < nf; i++)
            str_printf(out, "- %s\n", files[i]);
        if (nf >= SKILL_FILES_MAX)
            str_printf(out, "(only the first %d are listed)\n", SKILL_FILES_MAX);
    }
    strv_free(files);
    str_puts(out, "</skill>");
}

static json_t *event_payload(const char *name, const char *via, const char *source,
                             ext_scope scope, const char *plugin, char *const *rules,
                             const loom_str *text)
{
    json_t *ev = json_pack("{s:s, s:s, s:s, s:s, s:I}", "name", name, "via", via, "source",
                           source, "scope", ext_scope_name(scope), "tokens",
                           (json_int_t)tokens_estimate_text(text->ptr, text->len));
    if (plugin)
        json_object_set_new(ev, "plugin", json_string(plugin));
    if (rules && rules[0]) {
        json_t *a = json_array();
        for (size_t i = 0; rules[i]; i++)
            json_array_append_new(a, json_string(rules[i]));
        json_object_set_new(ev, "allowed_tools", a);
    }
    return ev;
}

static void add_run_activation(skill_session *ss, const char *name, const char *via,
                               const skill_def *d, const command_def *c, bool has_files,
                               bool used)
{
    ss->acts = xrealloc(ss->acts, (ss->nacts + 1) * sizeof *ss->acts);
    ss->acts[ss->nacts++] = (run_activation){
        .name = xstrdup(name), .via = xstrdup(via), .used = used, .skill = d, .command = c,
        .has_files = has_files};
}

/* context: fork — the text runs as a sub-agent's task through the Agent
 * tool (and so through the pipeline: the Agent tool's rules apply). */
static int run_forked(skill_session *ss, const skill_def *d, const char *call_id, tool_ctx *ctx,
                      loom_str *text, loom_error *err)
{
    if (!ss->reg || !tool_registry_find(ss->reg, "Agent") || !ctx)
        return fail(err, "the skill %s runs in a sub-agent (context: fork), and this run cannot "
                         "start one (no Agent tool)",
                    d->name);
    loom_str desc = LOOM_STR_INIT;
    str_printf(&desc, "skill %s", d->name);
    json_t *input = json_pack("{s:s, s:s, s:s}", "description", str_cstr(&desc), "prompt",
                              str_cstr(text), "subagent_type",
                              d->agent ? d->agent : "general-purpose");
    if (d->model)
        json_object_set_new(input, "model", json_string(d->model));
    str_free(&desc);
    tool_call call = {.id = call_id ? call_id : "skill-fork", .name = "Agent", .input = input};
    tool_outcome oc;
    const tool_registry *reg = ss->reg;
    pthread_mutex_unlock(&ss->mu); /* the sub-agent's calls come back through observe */
    tool_call_run(reg, &call, ctx, &oc);
    pthread_mutex_lock(&ss->mu);
    json_decref(input);
    int rc = 0;
    if (oc.result.is_error) {
        rc = fail(err, "the skill %s (context: fork) failed in its sub-agent: %s", d->name,
                  str_cstr(&oc.result.text));
    } else {
        str_clear(text);
        str_printf(text, "The skill %s ran in a sub-agent (context: fork). Its result:\n\n",
                   d->name);
        str_append(text, oc.result.text.ptr ? oc.result.text.ptr : "", oc.result.text.len);
    }
    tool_outcome_free(&oc);
    return rc;
}

/* The skill's allowed-tools for the rest of the run. */
static void grant(const skill_def *d, tool_ctx *ctx)
{
    if (!d->allowed_tools || !ctx || !ctx->gov)
        return;
    loom_str by = LOOM_STR_INIT;
    str_printf(&by, "skill %s", d->name);
    governance_grant_run(ctx->gov, (const char *const *)d->allowed_tools, str_cstr(&by));
    str_free(&by);
}

static int activate_command(skill_session *ss, const command_def *c, const char *args,
                            const char *via, tool_ctx *ctx, skill_activation *out, loom_error *err)
{
    bool by_tool = strcmp(via, "tool") == 0;
    if (by_tool && !command_offered(ss, c))
        return fail(err, "the command /%s is not one the model may run (it has no description, "
                         "or disable-model-invocation is set)",
                    c->name);
    const tool_registry *reg = ss->reg;
    pthread_mutex_unlock(&ss->mu); /* its !`cmd` calls come back through observe */
    int rc = command_expand(c, args ? args : "", reg, ctx, &out->text, err);
    pthread_mutex_lock(&ss->mu);
    if (rc != 0)
        return -1;
    out->command = c;
    out->event = event_payload(c->name, via, "command", c->scope, c->plugin, c->allowed_tools,
                               &out->text);
    add_run_activation(ss, c->name, via, NULL, c, false, false);
    return 0;
}

static int activate_locked(skill_session *ss, const char *name, const char *args, const char *via,
                           const char *call_id, tool_ctx *ctx, skill_activation *out,
                           loom_error *err)
{
    memset(out, 0, sizeof *out);
    if (!ss || !name)
        return fail(err, "no skill named");
    if (!via)
        via = "tool";
    if (name[0] == '/')
        name++;
    bool by_tool = strcmp(via, "tool") == 0;
    const skill_def *d = skill_catalog_find(ss->o.skills, name);
    if (!d) {
        const command_def *c = command_catalog_find(ss->o.commands, name);
        if (c)
            return activate_command(ss, c, args, via, ctx, out, err);
        return fail(err, "no skill named \"%.*s\"%s", (int)strnlen(name, 128), name,
                    by_tool ? " (the skills are listed under # Skills)" : "");
    }
    if (by_tool && d->disable_model_invocation)
        return fail(err, "the skill %s is run only by the person (/%s): disable-model-invocation "
                         "is set",
                    d->name, d->name);
    if (!by_tool && !d->user_invocable)
        return fail(err, "the skill %s is not user-invocable (user-invocable: false): only the "
                         "model loads it when a task calls for it",
                    d->name);
    out->skill = d;
    if (!d->context_fork && find_active(ss, d->name)) {
        /* Grants lapse at run end while the skill stays active in the
         * session: asking for it again in a later run grants them anew. */
        grant(d, ctx);
        out->already_active = true;
        str_printf(&out->text, "The skill %s is already active: its instructions are in the "
                               "context above. Follow them; there is no need to load it again.",
                   d->name);
        return 0;
    }
    bool has_files = false;
    skill_text(d, args, &out->text, &has_files);
    if (d->context_fork) {
        if (run_forked(ss, d, call_id, ctx, &out->text, err) != 0) {
            str_free(&out->text);
            out->skill = NULL;
            return -1;
        }
        /* The body went to the sub-agent, not into this context: nothing to
         * keep across compaction, and the run did use it. */
        out->event = event_payload(d->name, via, "skill", d->scope, d->plugin, d->allowed_tools,
                                   &out->text);
        json_object_set_new(out->event, "fork", json_true());
        add_run_activation(ss, d->name, via, d, NULL, has_files, true);
        return 0;
    }
    /* The bundled files are the model's to read like the workspace's (the
     * rules still decide: a deny rule or a secret path holds). */
    if (ctx && ctx->gov)
        governance_add_read_dir(ctx->gov, d->dir);
    grant(d, ctx);
    ss->active = xrealloc(ss->active, (ss->nactive + 1) * sizeof *ss->active);
    ss->active[ss->nactive++] = (active_skill){
        .name = xstrdup(d->name), .call_id = xstrdup(call_id), .text = xstrdup(str_cstr(&out->text))};
    out->event = event_payload(d->name, via, "skill", d->scope, d->plugin, d->allowed_tools,
                               &out->text);
    add_run_activation(ss, d->name, via, d, NULL, has_files, false);
    return 0;
}

/* ---- the run report --------------------------------------------------------------- */

static void run_begin_locked(skill_session *ss)
{
    if (!ss)
        return;
    strv_clear(&ss->run_offered, &ss->nrun_offered);
    acts_clear(ss);
}

/* The file a call touches, absolute and folded; NULL when none. */
static char *call_path(const json_t *input, const char *cwd)
{
    static const char *const keys[] = {"file_path", "notebook_path", "path"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *p = json_get_str(input, keys[i], NULL);
        if (p && *p)
            return path_make_absolute(p, cwd && cwd[0] == '/' ? cwd : "/");
    }
    return NULL;
}

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return path && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool rules_match(char *const *rules, const char *tool, const json_t *input,
                        const char *cwd)
{
    for (size_t i = 0; rules && rules[i]; i++) {
        loom_error e = {0};
        perm_rule *r = rule_parse(rules[i], 0, &e);
        bool m = r && rule_matches(r, tool, input, cwd, NULL);
        rule_free(r);
        if (m)
            return true;
    }
    return false;
}

static void trigger_paths(skill_session *ss, const char *abs, const char *cwd)
{
    if (!abs)
        return;
    const char *rel = abs;
    if (cwd && under(abs, cwd) && abs[strlen(cwd)] == '/')
        rel = abs + strlen(cwd) + 1;
    size_t n = skill_catalog_count(ss->o.skills);
    for (size_t i = 0; i < n; i++) {
        const skill_def *d = skill_catalog_at(ss->o.skills, i);
        if (!d->paths || ss->triggered[i])
            continue;
        for (size_t k = 0; d->paths[k]; k++)
            if (glob_path_match(d->paths[k], rel) || glob_path_match(d->paths[k], abs)) {
                ss->triggered[i] = true;
                break;
            }
    }
}

static void observe_call_locked(skill_session *ss, const char *tool, const json_t *input,
                                const char *cwd)
{
    if (!ss || !tool || strcmp(tool, "Skill") == 0)
        return;
    char *abs = call_path(input, cwd);
    trigger_paths(ss, abs, cwd);
    const char *command = json_get_str(input, "command", NULL);
    for (size_t i = 0; i < ss->nacts; i++) {
        run_activation *a = &ss->acts[i];
        if (a->used)
            continue;
        char *const *rules = a->skill ? a->skill->allowed_tools : a->command->allowed_tools;
        const char *dir = a->skill ? a->skill->dir : NULL;
        if (rules && rules_match(rules, tool, input, cwd))
            a->used = true;
        else if (dir && (under(abs, dir) || (command && strstr(command, dir))))
            a->used = true;
        else if (!rules && !a->has_files)
            a->used = true; /* instructions only: any call that followed acted on them */
    }
    free(abs);
}

static json_t *run_report_locked(skill_session *ss)
{
    json_t *offered = json_array(), *acts = json_array();
    size_t used = 0;
    for (size_t i = 0; ss && i < ss->nrun_offered; i++)
        json_array_append_new(offered, json_string(ss->run_offered[i]));
    for (size_t i = 0; ss && i < ss->nacts; i++) {
        json_array_append_new(acts, json_pack("{s:s, s:s, s:b}", "name", ss->acts[i].name, "via",
                                              ss->acts[i].via, "used", ss->acts[i].used));
        used += ss->acts[i].used;
    }
    return json_pack("{s:o, s:o, s:I, s:I, s:I}", "offered", offered, "activated", acts,
                     "offered_count", (json_int_t)(ss ? ss->nrun_offered : 0), "activated_count",
                     (json_int_t)(ss ? ss->nacts : 0), "used_count", (json_int_t)used);
}

void skill_render(const skill_def *d, const char *args, loom_str *out)
{
    bool has_files = false;
    if (d && out)
        skill_text(d, args, out, &has_files);
}

/* ---- the public face: each under the session's lock ---------------------------- */

void skill_session_set_registry(skill_session *ss, const tool_registry *reg)
{
    if (!ss)
        return;
    pthread_mutex_lock(&ss->mu);
    set_registry_locked(ss, reg);
    pthread_mutex_unlock(&ss->mu);
}

const tool_def *skill_session_tool(skill_session *ss)
{
    if (ss)
        pthread_mutex_lock(&ss->mu);
    const tool_def * r = tool_locked(ss);
    if (ss)
        pthread_mutex_unlock(&ss->mu);
    return r;
}

void skill_session_catalog_text(skill_session *ss, loom_str *out, int64_t *tokens, size_t *offered)
{
    if (!ss)
        return;
    pthread_mutex_lock(&ss->mu);
    catalog_text_locked(ss, out, tokens, offered);
    pthread_mutex_unlock(&ss->mu);
}

json_t *skill_session_offer_json(skill_session *ss)
{
    if (ss)
        pthread_mutex_lock(&ss->mu);
    json_t * r = offer_json_locked(ss);
    if (ss)
        pthread_mutex_unlock(&ss->mu);
    return r;
}

void skill_session_active_text(skill_session *ss, bool (*present)(void *ctx, const char *call_id),
                               void *ctx, loom_str *out)
{
    if (!ss)
        return;
    pthread_mutex_lock(&ss->mu);
    active_text_locked(ss, present, ctx, out);
    pthread_mutex_unlock(&ss->mu);
}

int skill_session_activate(skill_session *ss, const char *name, const char *args, const char *via,
                           const char *call_id, tool_ctx *ctx, skill_activation *out,
                           loom_error *err)
{
    if (ss)
        pthread_mutex_lock(&ss->mu);
    int r = activate_locked(ss, name, args, via, call_id, ctx, out, err);
    if (ss)
        pthread_mutex_unlock(&ss->mu);
    return r;
}

void skill_session_run_begin(skill_session *ss)
{
    if (!ss)
        return;
    pthread_mutex_lock(&ss->mu);
    run_begin_locked(ss);
    pthread_mutex_unlock(&ss->mu);
}

void skill_session_observe_call(skill_session *ss, const char *tool, const json_t *input,
                                const char *cwd)
{
    if (!ss)
        return;
    pthread_mutex_lock(&ss->mu);
    observe_call_locked(ss, tool, input, cwd);
    pthread_mutex_unlock(&ss->mu);
}

json_t *skill_session_run_report(skill_session *ss)
{
    if (ss)
        pthread_mutex_lock(&ss->mu);
    json_t *r = run_report_locked(ss);
    if (ss)
        pthread_mutex_unlock(&ss->mu);
    return r;
}

/* catalog.c — the agents a run can spawn (catalog.h): one agent file parsed
 * into an agent_def, and the catalog of the built-in roles (roles.c) plus
 * every agent file of the sources, later ones winning by name.
 *
 * The format is Claude Code's: Markdown with YAML frontmatter (read by
 * base/frontmatter.c), whose body is the prompt. Unknown keys are ignored
 * without a word, as Claude Code does, so files written for it load here;
 * a known key with a bad value is a warning "<file>: key '<k>': <why>" and
 * the key is dropped. Dropping fails closed where dropping would widen
 * what the agent may do: a bad `tools` or `disallowedTools` value leaves
 * the agent no tools at all rather than every tool. Tool entries are rule
 * strings of the one rule engine (policy/rule.h), checked here so a typo is
 * reported where it was written, not at spawn time.
 *
 * The catalog owns its custom defs and its warnings; the built-in rows are
 * static (roles.c) and only pointed at. Built by one thread, read-only
 * afterwards: any thread may read it. */
#include "agents/catalog.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"
#include "base/warn_list.h"
#include "policy/rule.h"
#include "tools/schema.h"

/* The most turns an agent file may ask for; beyond is surely a typo. */
#define AGENT_MAX_TURNS_CAP 10000
/* Longest model name or id taken from a file. */
#define AGENT_MODEL_MAX 128

/* ---- small helpers ------------------------------------------------------------ */

/* An empty, NULL-terminated list (not NULL: "none", where NULL means "all"). */
static char **strv_empty(void)
{
    return xcalloc(1, sizeof(char *));
}

static bool valid_name(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!isalnum((unsigned char)s[n]) && s[n] != '-' && s[n] != '_')
            return false;
    return n >= 1 && n <= 64;
}

/* ---- list keys: tools, disallowedTools, skills --------------------------------- */

/* A list given as "a, b" or as a YAML sequence of strings. NULL with why set
 * when v is neither. */
static char **read_list(const json_t *v, loom_str *why)
{
    char **out = frontmatter_list(v, 0, why);
    if (!out && !json_is_array(v))
        str_puts(why, "expected a list or a comma-separated string");
    return out;
}

/* Keeps the entries that are rules the engine can read; reports the others
 * in why. Returns how many were dropped. A lone "*" anywhere means every
 * tool: *all is set. */
static size_t keep_valid_rules(char **list, bool *all, loom_str *why)
{
    size_t dropped = 0, w = 0;
    *all = false;
    for (size_t r = 0; list[r]; r++) {
        if (strcmp(list[r], "*") == 0) {
            *all = true;
            free(list[r]);
            continue;
        }
        loom_error e = {0};
        perm_rule *rule = rule_parse(list[r], 0, &e);
        if (rule) {
            rule_free(rule);
            list[w++] = list[r];
            continue;
        }
        str_printf(why, "%s%s", dropped ? "; " : "", e.message);
        dropped++;
        free(list[r]);
    }
    list[w] = NULL;
    return dropped;
}

/* ---- the keys ----------------------------------------------------------------- */

/* Each handler reads one known key's value into d: 0, or -1 with why
 * saying what is wrong (the caller warns and the key is dropped). */
typedef int (*key_reader)(agent_def *d, const json_t *v, loom_str *why);

static int read_tools(agent_def *d, const json_t *v, loom_str *why)
{
    char **list = read_list(v, why);
    bool all = false;
    if (!list) {
        d->tools = strv_empty();
        str_puts(why, "; the agent gets no tools until this is fixed");
        return -1;
    }
    size_t dropped = keep_valid_rules(list, &all, why);
    if (all && !dropped) {
        strv_free(list);
        d->tools = NULL;
        return 0;
    }
    d->tools = list;
    if (dropped) {
        str_puts(why, all ? "; dropped, the others are kept ('*' does not widen a list with a bad entry)"
                          : "; dropped, the others are kept");
        return -1;
    }
    return 0;
}

static int read_disallowed(agent_def *d, const json_t *v, loom_str *why)
{
    char **list = read_list(v, why);
    bool all = false;
    size_t dropped = list ? keep_valid_rules(list, &all, why) : 0;
    if (!list || dropped || all) {
        /* '*' denies every tool; a deny list that cannot be applied as
         * written must not end up allowing more than the author meant.
         * Either way the agent gets no tools. */
        bool deny_all = list && all && !dropped;
        strv_free(list);
        strv_free(d->tools);
        d->tools = strv_empty();
        if (deny_all)
            return 0;
        str_puts(why, "; the agent gets no tools until this is fixed");
        return -1;
    }
    d->disallowed = list;
    return 0;
}

static int read_skills(agent_def *d, const json_t *v, loom_str *why)
{
    char **list = read_list(v, why);
    if (!list)
        return -1;
    if (!list[0]) {
        strv_free(list);
        return 0;
    }
    d->skills = list;
    return 0;
}

static int read_model(agent_def *d, const json_t *v, loom_str *why)
{
    const char *m = json_string_value(v);
    if (!m || !*m) {
        str_puts(why, "expected a model name (inherit, sonnet, opus, haiku or a model id)");
        return -1;
    }
    if (strlen(m) > AGENT_MODEL_MAX) {
        str_printf(why, "longer than %d characters", AGENT_MODEL_MAX);
        return -1;
    }
    for (const char *p = m; *p; p++)
        if ((unsigned char)*p <= ' ') {
            str_puts(why, "a model name holds no blanks or control characters");
            return -1;
        }
    d->model = xstrdup(m);
    return 0;
}

static int read_mode(agent_def *d, const json_t *v, loom_str *why)
{
    const char *m = json_string_value(v);
    perm_mode mode;
    if (m && perm_mode_parse(m, &mode) == 0) {
        d->mode = mode;
        d->mode_set = true;
        return 0;
    }
    str_puts(why, m ? "unknown mode '" : "expected a mode name");
    if (m) {
        str_append(why, m, strnlen(m, 64));
        str_puts(why, "'");
    }
    str_puts(why, " (one of");
    for (int i = MODE_DEFAULT; i <= MODE_DELEGATE; i++)
        str_printf(why, "%s %s", i == MODE_DEFAULT ? "" : ",", perm_mode_name((perm_mode)i));
    str_puts(why, ")");
    return -1;
}

static int read_max_turns(agent_def *d, const json_t *v, loom_str *why)
{
    long long n = -1;
    if (json_is_integer(v)) {
        n = json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end = NULL;
        errno = 0;
        n = strtoll(s, &end, 10);
        if (end == s || *end || errno)
            n = -1;
    }
    if (n < 1 || n > AGENT_MAX_TURNS_CAP) {
        str_printf(why, "expected a whole number from 1 to %d", AGENT_MAX_TURNS_CAP);
        return -1;
    }
    d->max_turns = (int)n;
    return 0;
}

static int read_mcp_servers(agent_def *d, const json_t *v, loom_str *why)
{
    if (json_is_array(v)) {
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item) if (!json_is_string(item) && !json_is_object(item)) {
            str_printf(why, "item %zu is neither a server name nor a server definition", i + 1);
            return -1;
        }
    } else if (!json_is_object(v)) {
        str_puts(why, "expected a list of server names or a mapping of server definitions");
        return -1;
    }
    d->mcp_servers = json_deep_copy(v);
    return 0;
}

static int read_hooks(agent_def *d, const json_t *v, loom_str *why)
{
    if (!json_is_object(v)) {
        str_puts(why, "expected a mapping of hook events (the settings' hooks shape)");
        return -1;
    }
    d->hooks = json_deep_copy(v);
    return 0;
}

static int read_isolation(agent_def *d, const json_t *v, loom_str *why)
{
    const char *s = json_string_value(v);
    if (!s || strcmp(s, "worktree") != 0) {
        str_puts(why, "the one isolation known is 'worktree'");
        return -1;
    }
    d->isolation_worktree = true;
    return 0;
}

static int read_background(agent_def *d, const json_t *v, loom_str *why)
{
    const char *s = json_string_value(v);
    if (json_is_boolean(v))
        d->background = json_is_true(v);
    else if (s && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0))
        d->background = strcmp(s, "true") == 0;
    else {
        str_puts(why, "expected true or false");
        return -1;
    }
    return 0;
}

static int read_output_schema(agent_def *d, const json_t *v, loom_str *why)
{
    loom_error e = {0};
    json_t *schema = NULL;
    if (json_is_string(v)) {
        schema = schema_parse(json_string_value(v), &e);
    } else if (json_is_object(v)) {
        if (schema_check(v, &e) == 0)
            schema = json_deep_copy(v);
    } else {
        str_puts(why, "expected a JSON Schema (a mapping, or JSON text)");
        return -1;
    }
    if (!schema || !json_is_object(schema)) {
        str_puts(why, schema ? "expected a JSON Schema object" : e.message);
        json_decref(schema);
        return -1;
    }
    json_decref(d->output_schema);
    d->output_schema = schema;
    return 0;
}

/* The keys Loom reads, in the order they are applied (disallowedTools after
 * tools: a bad deny list clears the tools). Every other key is ignored. */
static const struct {
    const char *key;
    key_reader read;
} agent_keys[] = {
    {"tools", read_tools},
    {"disallowedTools", read_disallowed},
    {"model", read_model},
    {"permissionMode", read_mode},
    {"maxTurns", read_max_turns},
    {"skills", read_skills},
    {"mcpServers", read_mcp_servers},
    {"hooks", read_hooks},
    {"isolation", read_isolation},
    {"background", read_background},
    {"outputSchema", read_output_schema},
    {"output_schema", read_output_schema}, /* later: wins over outputSchema */
};

/* ---- one file ----------------------------------------------------------------- */

static agent_def *def_fail(agent_def *d, json_t *fm, loom_error *err, const char *path, const char *key,
                           const char *why)
{
    agent_def_free(d);
    json_decref(fm);
    loom_error_set(err, LOOM_ERR_CONFIG, "%s: key '%s': %s", path, key, why);
    return NULL;
}

agent_def *agent_def_parse(const char *path, const char *text,
                           void (*warn)(void *ctx, const char *msg), void *warn_ctx, loom_error *err)
{
    if (!path)
        path = "(agent file)";
    loom_error fe = {0};
    const char *body = NULL;
    json_t *fm = frontmatter_parse(text, &body, &fe);
    if (!fm) {
        if (fe.code == FRONTMATTER_ERR_NONE)
            loom_error_set(err, LOOM_ERR_CONFIG,
                           "%s: no frontmatter (an agent file opens with a --- block holding name and "
                           "description)", path);
        else
            loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, fe.message);
        return NULL;
    }
    agent_def *d = xcalloc(1, sizeof *d);
    d->role = AGENT_ROLE_CUSTOM;
    d->source = xstrdup(path);
    const json_t *name = json_object_get(fm, "name");
    if (!name || json_is_null(name))
        return def_fail(d, fm, err, path, "name", "missing (every agent file names its agent)");
    if (!json_is_string(name) || !valid_name(json_string_value(name)))
        return def_fail(d, fm, err, path, "name", "1 to 64 letters, digits, '-' or '_'");
    d->name = xstrdup(json_string_value(name));
    const json_t *desc = json_object_get(fm, "description");
    const char *ds = json_string_value(desc);
    if (!ds || !*ds)
        return def_fail(d, fm, err, path, "description",
                        desc && !json_is_null(desc) ? "expected text saying when to use the agent"
                                                    : "missing (it tells the model when to use the agent)");
    d->description = xstrdup(ds);
    d->prompt = frontmatter_body_trim(body);
    loom_str why = LOOM_STR_INIT;
    for (size_t i = 0; i < sizeof agent_keys / sizeof agent_keys[0]; i++) {
        const json_t *v = json_object_get(fm, agent_keys[i].key);
        if (!v || json_is_null(v))
            continue; /* an empty key reads as not given */
        str_clear(&why);
        if (agent_keys[i].read(d, v, &why) != 0 && warn) {
            loom_str msg = LOOM_STR_INIT;
            str_printf(&msg, "%s: key '%s': %s", path, agent_keys[i].key, str_cstr(&why));
            warn(warn_ctx, str_cstr(&msg));
            str_free(&msg);
        }
    }
    str_free(&why);
    if (!d->prompt[0] && warn) {
        loom_str msg = LOOM_STR_INIT;
        str_printf(&msg, "%s: the body (the agent's prompt) is empty", path);
        warn(warn_ctx, str_cstr(&msg));
        str_free(&msg);
    }
    json_decref(fm);
    return d;
}

void agent_def_free(agent_def *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->description);
    free(d->prompt);
    free(d->model);
    strv_free(d->tools);
    strv_free(d->disallowed);
    strv_free(d->skills);
    json_decref(d->mcp_servers);
    json_decref(d->hooks);
    json_decref(d->output_schema);
    free(d->source);
    free(d);
}

/* ---- the catalog ---------------------------------------------------------------- */

struct agent_catalog {
    const agent_def **defs;  /* roles first (their slots fixed), then customs */
    bool *owned;             /* defs[i] is a custom def to free */
    size_t n, nroles;
    warn_list warnings;
    char **dirs_read;        /* real paths already loaded (cwd may be the home) */
    size_t ndirs;
};

static void cat_push(agent_catalog *c, const agent_def *d, bool owned)
{
    c->defs = xrealloc(c->defs, (c->n + 1) * sizeof *c->defs);
    c->owned = xrealloc(c->owned, (c->n + 1) * sizeof *c->owned);
    c->defs[c->n] = d;
    c->owned[c->n++] = owned;
}

/* A later source wins by name. A replaced agent keeps its place, so the
 * roles stay first; replacing a role is allowed (Claude Code lets project
 * agents override built-ins) but never silent. */
static void cat_add(agent_catalog *c, agent_def *d)
{
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->defs[i]->name, d->name) != 0)
            continue;
        if (c->defs[i]->role != AGENT_ROLE_CUSTOM)
            warn_list_addf(&c->warnings, "%s: overrides the built-in agent %s", d->source, d->name);
        if (c->owned[i])
            agent_def_free((agent_def *)c->defs[i]);
        c->defs[i] = d;
        c->owned[i] = true;
        return;
    }
    cat_push(c, d, true);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Has this folder (by real path) been read already? Marks it read. */
static bool seen_dir(agent_catalog *c, const char *dir)
{
    char *real = realpath(dir, NULL);
    if (!real)
        return false;
    for (size_t i = 0; i < c->ndirs; i++)
        if (strcmp(c->dirs_read[i], real) == 0) {
            free(real);
            return true;
        }
    c->dirs_read = xrealloc(c->dirs_read, (c->ndirs + 1) * sizeof(char *));
    c->dirs_read[c->ndirs++] = real;
    return false;
}

/* Every <dir>/<name>.md, in name order (the later of two files naming the same
 * agent wins, the same rule as between sources). A missing folder is no
 * source, not a fault. plugin: the plugin the folder belongs to, whose
 * name prefixes its agents' ("tools:reviewer"); NULL for none. */
static void load_dir(agent_catalog *c, const char *dir, const char *plugin)
{
    DIR *dh = opendir(dir);
    if (!dh) {
        if (errno != ENOENT && errno != ENOTDIR)
            warn_list_addf(&c->warnings, "%s: cannot be read: %s", dir, strerror(errno));
        return;
    }
    if (seen_dir(c, dir)) {
        closedir(dh);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 3, ".md") != 0)
            continue;
        names = xrealloc(names, (n + 1) * sizeof(char *));
        names[n++] = xstrdup(e->d_name);
    }
    closedir(dh);
    if (n)
        qsort(names, n, sizeof(char *), name_cmp);
    for (size_t i = 0; i < n; i++) {
        char *path = path_join(dir, names[i]);
        loom_str why = LOOM_STR_INIT;
        char *text = file_read_text(path, FRONTMATTER_MAX_BYTES, 0, &why);
        if (!text) {
            warn_list_addf(&c->warnings, "%s: %s; skipped", path, str_cstr(&why));
        } else {
            loom_error perr = {0};
            agent_def *d = agent_def_parse(path, text, warn_list_sink, &c->warnings, &perr);
            if (d && plugin) {
                loom_str full = LOOM_STR_INIT;
                str_printf(&full, "%s:%s", plugin, d->name);
                free(d->name);
                d->name = str_steal(&full);
            }
            if (d)
                cat_add(c, d);
            else
                warn_list_addf(&c->warnings, "%s; skipped", perr.message);
        }
        free(text);
        str_free(&why);
        free(path);
        free(names[i]);
    }
    free(names);
}

static int custom_cmp(const void *a, const void *b)
{
    return strcmp((*(agent_def *const *)a)->name, (*(agent_def *const *)b)->name);
}

agent_catalog *agent_catalog_load(const agent_catalog_opts *o, loom_error *err)
{
    agent_catalog_opts none = {0};
    if (!o)
        o = &none;
    agent_catalog *c = xcalloc(1, sizeof *c);
    size_t nroles = 0;
    const agent_def *roles = agent_roles_builtin(&nroles);
    for (size_t i = 0; i < nroles; i++)
        cat_push(c, &roles[i], false);
    c->nroles = nroles;

    ext_source_opts so = {.cwd = o->cwd, .home = o->home, .user_home = o->user_home,
                          .trusted = o->trusted, .user_settings = o->user_settings,
                          .claude_compat = !o->claude_off,
                          .plugins = o->plugins, .n_plugins = o->n_plugins};
    ext_dirs dirs;
    json_t *notices = json_array();
    ext_dirs_for("agents", &so, &dirs, notices);
    warn_list_add_strings(&c->warnings, notices);
    json_decref(notices);
    for (size_t i = 0; i < dirs.n; i++)
        load_dir(c, dirs.v[i].path, dirs.v[i].plugin);
    ext_dirs_free(&dirs);

    /* The customs after the roles, by name (the owned flags move with them:
     * every def past the roles' slots is a custom one). */
    if (c->n > c->nroles)
        qsort(c->defs + c->nroles, c->n - c->nroles, sizeof *c->defs, custom_cmp);
    (void)err;
    return c;
}

void agent_catalog_free(agent_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->owned[i])
            agent_def_free((agent_def *)c->defs[i]);
    free(c->defs);
    free(c->owned);
    warn_list_free(&c->warnings);
    for (size_t i = 0; i < c->ndirs; i++)
        free(c->dirs_read[i]);
    free(c->dirs_read);
    free(c);
}

const agent_def *agent_catalog_find(const agent_catalog *c, const char *name)
{
    if (!c || !name)
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->defs[i]->name, name) == 0)
            return c->defs[i];
    for (size_t i = 0; i < c->n; i++)
        if (strcasecmp(c->defs[i]->name, name) == 0)
            return c->defs[i];
    return NULL;
}

size_t agent_catalog_count(const agent_catalog *c)
{
    return c ? c->n : 0;
}

const agent_def *agent_catalog_at(const agent_catalog *c, size_t i)
{
    return c && i < c->n ? c->defs[i] : NULL;
}

size_t agent_catalog_warning_count(const agent_catalog *c)
{
    return c ? warn_list_count(&c->warnings) : 0;
}

const char *agent_catalog_warning(const agent_catalog *c, size_t i)
{
    return c ? warn_list_at(&c->warnings, i) : NULL;
}

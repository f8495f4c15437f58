/* skill_def.c — one SKILL.md read into a skill_entry (skills_internal.h):
 * the Agent Skills frontmatter (name, description, license,
 * compatibility, metadata, allowed-tools) and Claude Code's
 * (disable-model-invocation, user-invocable, context, agent, model,
 * argument-hint, paths), then the body.
 *
 * The file is untrusted (it may come from any repository). A skill the
 * model cannot be told about truthfully — no frontmatter, a bad or missing
 * name, a name that is not its folder's, a missing or over-long
 * description — is refused with "PATH: problem". An optional key with a
 * bad value is a warning and the key is dropped; dropping never widens
 * anything (a bad allowed-tools entry pre-approves nothing, a bad
 * user-invocable leaves the default). Unknown keys are accepted without a
 * word so files written for newer tools still load.
 *
 * The entry owns every string in it. No state; any thread. */
#include "ext/skills/skills_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/str.h"
#include "policy/rule.h"

/* Longest agent, model or argument-hint value taken from a file. */
#define SKILL_SHORT_MAX 256
/* Most allowed-tools entries or paths globs one skill may carry. */
#define SKILL_LIST_MAX 64

bool skill_name_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > SKILL_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
        if (c == '-' && s[i + 1] == '-')
            return false;
    }
    return true;
}

/* ---- list values ---------------------------------------------------------- */

/* A string or a YAML list of strings, split at blanks and commas outside
 * parentheses: "Read Grep Bash(git diff *)" (the Agent Skills form) and
 * "Read, Bash(git add:*)" (Claude Code's) alike. NULL with why set when v
 * is neither or holds too many entries. */
static char **read_list(const json_t *v, loom_str *why)
{
    char **out = frontmatter_list(v, FRONTMATTER_LIST_BLANKS, why);
    if (!out) {
        if (!json_is_array(v))
            str_puts(why, "expected a space- or comma-separated string or a list");
        return NULL;
    }
    size_t n = 0;
    while (out[n])
        n++;
    if (n > SKILL_LIST_MAX) {
        str_printf(why, "more than %d entries", SKILL_LIST_MAX);
        strv_free(out);
        return NULL;
    }
    return out;
}

/* ---- key readers ------------------------------------------------------------ */

typedef int (*key_reader)(skill_def *d, const json_t *v, loom_str *why);

static int read_bool(const json_t *v, bool *out, loom_str *why)
{
    const char *s = json_string_value(v);
    if (json_is_boolean(v))
        *out = json_is_true(v);
    else if (s && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0))
        *out = strcmp(s, "true") == 0;
    else {
        str_puts(why, "expected true or false");
        return -1;
    }
    return 0;
}

/* A short one-line text (no control characters), or -1. */
static int read_short(const json_t *v, char **out, size_t max, loom_str *why)
{
    const char *s = json_string_value(v);
    if (!s || !*s) {
        str_puts(why, "expected text");
        return -1;
    }
    if (strlen(s) > max) {
        str_printf(why, "longer than %zu characters", max);
        return -1;
    }
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < ' ') {
            str_puts(why, "holds a control character or a line break");
            return -1;
        }
    free(*out);
    *out = xstrdup(s);
    return 0;
}

static int read_license(skill_def *d, const json_t *v, loom_str *why)
{
    return read_short(v, &d->license, SKILL_SHORT_MAX, why);
}

static int read_compatibility(skill_def *d, const json_t *v, loom_str *why)
{
    const char *s = json_string_value(v);
    if (!s) {
        str_puts(why, "expected text");
        return -1;
    }
    if (strlen(s) > SKILL_COMPATIBILITY_MAX) {
        str_printf(why, "longer than %d characters", SKILL_COMPATIBILITY_MAX);
        return -1;
    }
    d->compatibility = xstrdup(s);
    return 0;
}

static int read_metadata(skill_def *d, const json_t *v, loom_str *why)
{
    if (!json_is_object(v)) {
        str_puts(why, "expected a mapping");
        return -1;
    }
    d->metadata = json_deep_copy(v);
    return 0;
}

/* Each entry must be a rule the engine reads; the others are dropped and
 * named (an allow list that loses an entry approves less, never more). */
static int read_allowed_tools(skill_def *d, const json_t *v, loom_str *why)
{
    char **list = read_list(v, why);
    if (!list)
        return -1;
    size_t w = 0, dropped = 0;
    for (size_t r = 0; list[r]; r++) {
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
    if (w == 0) {
        free(list);
        list = NULL;
    }
    d->allowed_tools = list;
    if (dropped) {
        str_puts(why, "; dropped, the others are kept");
        return -1;
    }
    return 0;
}

static int read_disable_model(skill_def *d, const json_t *v, loom_str *why)
{
    return read_bool(v, &d->disable_model_invocation, why);
}

static int read_user_invocable(skill_def *d, const json_t *v, loom_str *why)
{
    return read_bool(v, &d->user_invocable, why);
}

static int read_context(skill_def *d, const json_t *v, loom_str *why)
{
    const char *s = json_string_value(v);
    if (s && (strcmp(s, "fork") == 0 || strcmp(s, "inherit") == 0)) {
        d->context_fork = strcmp(s, "fork") == 0;
        return 0;
    }
    str_puts(why, "expected fork or inherit");
    return -1;
}

static int read_agent(skill_def *d, const json_t *v, loom_str *why)
{
    return read_short(v, &d->agent, SKILL_SHORT_MAX, why);
}

static int read_model(skill_def *d, const json_t *v, loom_str *why)
{
    return read_short(v, &d->model, SKILL_SHORT_MAX, why);
}

static int read_argument_hint(skill_def *d, const json_t *v, loom_str *why)
{
    return read_short(v, &d->argument_hint, SKILL_SHORT_MAX, why);
}

static int read_paths(skill_def *d, const json_t *v, loom_str *why)
{
    char **list = read_list(v, why);
    if (!list)
        return -1;
    if (!list[0]) {
        free(list);
        return 0;
    }
    d->paths = list;
    return 0;
}

/* The optional keys; every other key is accepted silently. */
static const struct {
    const char *key;
    key_reader read;
} skill_keys[] = {
    {"license", read_license},
    {"compatibility", read_compatibility},
    {"metadata", read_metadata},
    {"allowed-tools", read_allowed_tools},
    {"disable-model-invocation", read_disable_model},
    {"user-invocable", read_user_invocable},
    {"context", read_context},
    {"agent", read_agent},
    {"model", read_model},
    {"argument-hint", read_argument_hint},
    {"paths", read_paths},
};

/* ---- one file ----------------------------------------------------------------- */

void skill_entry_free(skill_entry *e)
{
    if (!e)
        return;
    skill_def *d = &e->def;
    free(d->name);
    free(d->description);
    free(d->dir);
    free(d->path);
    free(d->license);
    free(d->compatibility);
    json_decref(d->metadata);
    strv_free(d->allowed_tools);
    free(d->agent);
    free(d->model);
    free(d->argument_hint);
    strv_free(d->paths);
    free(d->plugin);
    free(e->body);
    free(e);
}

static skill_entry *refuse(skill_entry *e, json_t *fm, loom_error *err, const char *path,
                           const char *why)
{
    skill_entry_free(e);
    json_decref(fm);
    loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, why);
    return NULL;
}

/* The directory part of path ("." when none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

skill_entry *skill_entry_parse(const char *path, const char *folder, const char *text,
                               void (*warn)(void *ctx, const char *msg), void *warn_ctx,
                               loom_error *err)
{
    if (!path)
        path = "SKILL.md";
    if (!text)
        text = "";
    loom_error fe = {0};
    const char *body = NULL;
    json_t *fm = frontmatter_parse(text, &body, &fe);
    if (!fm) {
        if (fe.code == FRONTMATTER_ERR_NONE)
            loom_error_set(err, LOOM_ERR_CONFIG,
                           "%s: no frontmatter (SKILL.md opens with a --- block holding name and "
                           "description)",
                           path);
        else
            loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, fe.message);
        return NULL;
    }
    skill_entry *e = xcalloc(1, sizeof *e);
    skill_def *d = &e->def;
    d->user_invocable = true;
    d->path = xstrdup(path);
    d->dir = dir_of(path);

    const json_t *name = json_object_get(fm, "name");
    json_t *from_folder = NULL;
    if ((!name || json_is_null(name)) && folder && skill_name_valid(folder)) {
        /* Claude Code names a skill without "name" after its folder; the
         * Agent Skills rule (name equals the folder's) holds either way. */
        name = from_folder = json_string(folder);
        json_object_set_new(fm, "name", from_folder);
    }
    if (!name || json_is_null(name))
        return refuse(e, fm, err, path, "key 'name': missing (a skill names itself, as its folder)");
    if (!json_is_string(name) || !skill_name_valid(json_string_value(name)))
        return refuse(e, fm, err, path,
                      "key 'name': 1 to 64 lowercase letters, digits and hyphens, with no "
                      "hyphen first, last or doubled");
    const char *ns = json_string_value(name);
    if (folder && strcmp(ns, folder) != 0) {
        loom_str why = LOOM_STR_INIT;
        str_printf(&why, "key 'name': '%s' is not the folder's name '%.*s'", ns,
                   (int)strnlen(folder, SKILL_NAME_MAX * 2), folder);
        skill_entry *r = refuse(e, fm, err, path, str_cstr(&why));
        str_free(&why);
        return r;
    }
    d->name = xstrdup(ns);

    const json_t *desc = json_object_get(fm, "description");
    const char *ds = json_string_value(desc);
    size_t dlen = ds ? strlen(ds) : 0;
    const char *p = ds;
    while (p && isspace((unsigned char)*p))
        p++;
    if (!ds || !*p)
        return refuse(e, fm, err, path,
                      desc && !json_is_null(desc)
                          ? "key 'description': expected text saying what the skill does and when to use it"
                          : "key 'description': missing (it is all the model sees of the skill)");
    if (dlen > SKILL_DESCRIPTION_MAX) {
        loom_str why = LOOM_STR_INIT;
        str_printf(&why, "key 'description': %zu characters, more than %d", dlen,
                   SKILL_DESCRIPTION_MAX);
        skill_entry *r = refuse(e, fm, err, path, str_cstr(&why));
        str_free(&why);
        return r;
    }
    d->description = xstrdup(ds);

    loom_str why = LOOM_STR_INIT;
    for (size_t i = 0; i < sizeof skill_keys / sizeof skill_keys[0]; i++) {
        const json_t *v = json_object_get(fm, skill_keys[i].key);
        if (!v || json_is_null(v))
            continue; /* an empty key reads as not given */
        str_clear(&why);
        if (skill_keys[i].read(d, v, &why) != 0 && warn) {
            loom_str msg = LOOM_STR_INIT;
            str_printf(&msg, "%s: key '%s': %s", path, skill_keys[i].key, str_cstr(&why));
            warn(warn_ctx, str_cstr(&msg));
            str_free(&msg);
        }
    }
    str_free(&why);
    e->body = frontmatter_body_trim(body ? body : "");
    if (!e->body[0] && warn) {
        loom_str msg = LOOM_STR_INIT;
        str_printf(&msg, "%s: the body (the skill's instructions) is empty", path);
        warn(warn_ctx, str_cstr(&msg));
        str_free(&msg);
    }
    json_decref(fm);
    return e;
}

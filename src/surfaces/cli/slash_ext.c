/* slash_ext.c — the extensions in the REPL (slash_ext.h): /help's custom
 * commands and skills, /skills, the check that routes "/name args" to the
 * run (the library expands it: command_expand, skill activation), and the
 * names for Tab. Only loom.h's JSON documents are read; the text in them
 * comes from files in the repository, so it is printed through term_printf
 * (terminal-safe) and cut to the line. Main thread only. */
#include "surfaces/cli/slash_ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

/* The agent's extensions document, or NULL when there is none. */
static json_t *ext_doc(slash_host *r)
{
    char *text = r->agent ? loom_agent_extensions_json(r->agent) : NULL;
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), "extensions", &ignore) : NULL;
    free(text);
    return doc;
}

static bool user_invocable(const json_t *skill)
{
    return json_get_bool(skill, "user_invocable", true);
}

/* Where an extension came from, as /help and /skills say it: "project",
 * "user", "plugin NAME". */
static void scope_text(const json_t *e, char *buf, size_t size)
{
    const char *scope = json_get_str(e, "scope", "");
    const char *plugin = json_get_str(e, "plugin", NULL);
    if (plugin)
        snprintf(buf, size, "plugin %s", plugin);
    else
        snprintf(buf, size, "%s", scope);
}

/* One row: "  /name hint" in a column, then the description cut to the
 * line and the scope. */
static void help_row(slash_host *r, const json_t *e)
{
    const char *name = json_get_str(e, "name", "?");
    const char *hint = json_get_str(e, "argument_hint", NULL);
    const char *desc = json_get_str(e, "description", "");
    char scope[96];
    scope_text(e, scope, sizeof scope);
    loom_str usage = LOOM_STR_INIT;
    str_printf(&usage, "/%s%s%s", name, hint && *hint ? " " : "", hint ? hint : "");
    loom_str cut = LOOM_STR_INIT;
    term_put_clipped(&cut, str_cstr(&usage), usage.len, 40);
    term_printf(&r->out, TONE_PLAIN, "  %-19s ", str_cstr(&cut));
    int room = term_columns() - 24 - (int)strlen(scope) - 3;
    if (cut.len > 20)
        room -= (int)cut.len - 20;
    str_clear(&cut);
    term_put_clipped(&cut, desc, strlen(desc), room < 10 ? 10 : room);
    term_printf(&r->out, TONE_DIM, "%s%s(%s)\n", str_cstr(&cut), cut.len ? " " : "", scope);
    str_free(&cut);
    str_free(&usage);
}

void slash_ext_help(slash_host *r)
{
    json_t *doc = ext_doc(r);
    const json_t *cmds = json_get_arr(doc, "commands");
    if (json_array_size(cmds)) {
        term_printf(&r->out, TONE_BOLD, "Custom commands\n");
        size_t i;
        json_t *c;
        json_array_foreach(cmds, i, c) help_row(r, c);
    }
    const json_t *skills = json_get_arr(doc, "skills");
    size_t shown = 0, i;
    json_t *s;
    json_array_foreach(skills, i, s) {
        if (!user_invocable(s))
            continue;
        if (!shown++)
            term_printf(&r->out, TONE_BOLD, "Skills\n");
        help_row(r, s);
    }
    json_decref(doc);
}

/* Why the model is not offered a skill, or NULL when it is. The library
 * may say ("offered": false, "why"); otherwise the skill's own fields. */
static const char *not_offered_why(const json_t *s)
{
    const json_t *offered = json_object_get(s, "offered");
    if (json_is_boolean(offered))
        return json_is_true(offered) ? NULL : json_get_str(s, "why", "not offered");
    if (!json_get_bool(s, "model_invocable", true))
        return "disable-model-invocation: only by /name";
    return NULL;
}

void slash_skills(slash_host *r, const char *args)
{
    (void)args;
    json_t *doc = ext_doc(r);
    if (!doc) {
        term_printf(&r->out, TONE_YELLOW, "The extensions could not be read.\n");
        return;
    }
    const json_t *skills = json_get_arr(doc, "skills");
    size_t n = json_array_size(skills), i;
    json_t *s;
    if (!n) {
        term_printf(&r->out, TONE_PLAIN, "No skills.\n");
        term_printf(&r->out, TONE_DIM, "A skill is a folder with a SKILL.md in .loom/skills/, "
                    "~/.loom/skills/, .claude/skills/ or a plugin (docs/skills.md)\n");
    } else {
        term_printf(&r->out, TONE_BOLD, "Skills (%zu)\n", n);
    }
    int room = term_columns() - 4;
    json_array_foreach(skills, i, s) {
        const char *why = not_offered_why(s);
        term_printf(&r->out, why ? TONE_PLAIN : TONE_BOLD, "%s %s", why ? " " : "\xe2\x97\x8f",
                    json_get_str(s, "name", "?"));
        const char *hint = json_get_str(s, "argument_hint", NULL);
        term_printf(&r->out, TONE_DIM, "%s%s\n", hint ? " " : "", hint ? hint : "");
        const char *desc = json_get_str(s, "description", "");
        loom_str cut = LOOM_STR_INIT;
        term_put_clipped(&cut, desc, strlen(desc), room);
        if (cut.len)
            term_printf(&r->out, TONE_PLAIN, "    %s\n", str_cstr(&cut));
        str_free(&cut);
        char scope[96];
        scope_text(s, scope, sizeof scope);
        term_printf(&r->out, TONE_DIM, "    %s%s \xc2\xb7 %s \xc2\xb7 %s\n",
                    why ? "not offered to the model: " : "offered to the model",
                    why ? why : "", user_invocable(s) ? "/name works" : "the model only",
                    scope);
        term_printf(&r->out, TONE_DIM, "    %s\n", json_get_str(s, "source", ""));
    }
    if (n)
        term_printf(&r->out, TONE_DIM, "\xe2\x97\x8f offered: the model sees its name and "
                    "description, and loads the rest when the task calls for it\n");
    const char *lists[] = {"warnings", "notices"};
    for (size_t k = 0; k < 2; k++) {
        const json_t *w = json_get_arr(doc, lists[k]);
        if (!json_array_size(w))
            continue;
        term_printf(&r->out, TONE_BOLD, "%s\n", k == 0 ? "Warnings" : "Skipped");
        json_t *t;
        json_array_foreach(w, i, t) term_printf(&r->out, TONE_YELLOW, "  %s\n",
                                               json_is_string(t) ? json_string_value(t) : "?");
    }
    json_decref(doc);
}

/* Does the array hold an entry named name[0..len) (a skill: one a person
 * may invoke)? */
static bool named_in(const json_t *list, const char *name, size_t len, bool skills)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        const char *n = json_get_str(e, "name", "");
        if (strlen(n) == len && !strncmp(n, name, len) && (!skills || user_invocable(e)))
            return true;
    }
    return false;
}

bool slash_ext_is_invocable(slash_host *r, const char *line)
{
    if (line[0] != '/' || line[1] == '/')
        return false;
    const char *name = line + 1;
    size_t len = strcspn(name, " \t\n");
    if (!len)
        return false;
    json_t *doc = ext_doc(r);
    bool found = named_in(json_get_arr(doc, "commands"), name, len, false) ||
                 named_in(json_get_arr(doc, "skills"), name, len, true);
    json_decref(doc);
    return found;
}

static void push(char ***v, size_t *n, const char *s)
{
    if (!s || !*s)
        return;
    *v = xrealloc(*v, (*n + 2) * sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
    (*v)[*n] = NULL;
}

char **slash_ext_names(slash_host *r)
{
    char **v = xcalloc(1, sizeof *v);
    size_t n = 0, i;
    json_t *e;
    json_t *doc = ext_doc(r);
    json_array_foreach(json_get_arr(doc, "commands"), i, e) push(&v, &n, json_get_str(e, "name", NULL));
    json_array_foreach(json_get_arr(doc, "skills"), i, e) {
        if (user_invocable(e))
            push(&v, &n, json_get_str(e, "name", NULL));
    }
    json_decref(doc);
    char *text = r->session ? loom_session_mcp_prompts_json(r->session) : NULL;
    loom_error ignore;
    json_t *prompts = text ? json_parse(text, strlen(text), "prompts", &ignore) : NULL;
    free(text);
    json_array_foreach(prompts, i, e) {
        const char *cmd = json_get_str(e, "command", NULL);
        push(&v, &n, cmd && cmd[0] == '/' ? cmd + 1 : cmd);
    }
    json_decref(prompts);
    return v;
}

/* command_def.c — one custom command file read into a command_def
 * (commands_internal.h): the optional YAML frontmatter (base/frontmatter.c)
 * and the body that is the prompt, and the name a file's place in its
 * folder gives it.
 *
 * The keys are Claude Code's: description, argument-hint, allowed-tools,
 * model, disable-model-invocation. Unknown keys are ignored without a word
 * (files written for Claude Code, or a newer Loom, still load); a known key
 * of the wrong type is a warning naming the file and the key, and the key
 * is dropped — for allowed-tools that means no grant, never a wider one.
 * Frontmatter that is not YAML skips the command with a warning.
 *
 * Two spellings Claude Code's own documentation uses are not strict YAML:
 * `argument-hint: [pr-number] [priority]` (a flow sequence followed by
 * more text) and a plain value holding ": " (`description: Fix: the
 * thing`). When the strict read fails, such lines are read once more with
 * the value taken as quoted text; anything else stays an error.
 *
 * The file's text is untrusted (a repository's): every refusal is a
 * message, never a crash. No state; any thread. */
#include "ext/commands/commands_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/frontmatter.h"
#include "base/utf8.h"
#include "policy/rule.h"

#define COMMAND_MODEL_MAX 128

static void warnf(void (*warn)(void *, const char *), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warnf(void (*warn)(void *, const char *), void *ctx, const char *fmt, ...)
{
    if (!warn)
        return;
    loom_str s = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    warn(ctx, str_cstr(&s));
    str_free(&s);
}

/* ---- allowed-tools --------------------------------------------------------------- */

/* The rules of v (a string or a list of strings), each checked by the rule
 * engine; a bad one is named in a warning and dropped. -1 when v is of
 * neither shape (the caller warns and grants nothing). */
static int read_allowed_tools(command_def *d, const json_t *v, const char *path,
                              void (*warn)(void *, const char *), void *wctx)
{
    /* "Bash(git add:*), Read Grep": Claude Code writes commas, the Agent
     * Skills format blanks. */
    char **list = frontmatter_list(v, FRONTMATTER_LIST_BLANKS, NULL);
    if (!list)
        return -1;
    size_t w = 0;
    for (size_t i = 0; list[i]; i++) {
        loom_error e = {0};
        perm_rule *r = rule_parse(list[i], 0, &e);
        if (r) {
            rule_free(r);
            list[w++] = list[i];
            continue;
        }
        warnf(warn, wctx, "%s: key 'allowed-tools': %s; that entry grants nothing", path, e.message);
        free(list[i]);
    }
    if (!w) {
        free(list);
        return 0;
    }
    list[w] = NULL;
    d->allowed_tools = list;
    return 0;
}

/* ---- the other keys -------------------------------------------------------------- */

static bool read_bool(const json_t *v, bool *out)
{
    const char *s = json_string_value(v);
    if (json_is_boolean(v))
        *out = json_is_true(v);
    else if (s && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0))
        *out = strcmp(s, "true") == 0;
    else
        return false;
    return true;
}

/* A flow sequence of scalars (`argument-hint: [file]` is YAML for the list
 * ["file"]) written back as the text it was. NULL when v is another shape. */
static char *hint_text(const json_t *v)
{
    if (json_is_string(v))
        return xstrdup(json_string_value(v));
    if (!json_is_array(v))
        return NULL;
    loom_str s = LOOM_STR_INIT;
    str_putc(&s, '[');
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item) {
        if (i)
            str_puts(&s, ", ");
        if (json_is_string(item))
            str_puts(&s, json_string_value(item));
        else if (json_is_integer(item))
            str_printf(&s, "%lld", (long long)json_integer_value(item));
        else {
            str_free(&s);
            return NULL;
        }
    }
    str_putc(&s, ']');
    return str_steal(&s);
}

static bool model_ok(const char *m)
{
    size_t n = strlen(m);
    if (!n || n > COMMAND_MODEL_MAX)
        return false;
    for (const char *p = m; *p; p++)
        if ((unsigned char)*p <= ' ')
            return false;
    return true;
}

static void read_keys(command_def *d, const json_t *fm, const char *path,
                      void (*warn)(void *, const char *), void *wctx)
{
    const json_t *v;
    if ((v = json_object_get(fm, "description")) && !json_is_null(v)) {
        if (json_is_string(v))
            d->description = xstrdup(json_string_value(v));
        else
            warnf(warn, wctx, "%s: key 'description': must be a string", path);
    }
    if ((v = json_object_get(fm, "argument-hint")) && !json_is_null(v)) {
        d->argument_hint = hint_text(v);
        if (!d->argument_hint)
            warnf(warn, wctx, "%s: key 'argument-hint': must be a string", path);
    }
    if ((v = json_object_get(fm, "allowed-tools")) && !json_is_null(v) &&
        read_allowed_tools(d, v, path, warn, wctx) != 0)
        warnf(warn, wctx,
              "%s: key 'allowed-tools': must be a string or a list of strings; nothing is "
              "pre-approved", path);
    if ((v = json_object_get(fm, "model")) && !json_is_null(v)) {
        if (!json_is_string(v))
            warnf(warn, wctx, "%s: key 'model': must be a string", path);
        else if (!model_ok(json_string_value(v)))
            warnf(warn, wctx,
                  "%s: key 'model': a model name of 1 to %d characters, no blanks or control "
                  "characters", path, COMMAND_MODEL_MAX);
        else
            d->model = xstrdup(json_string_value(v));
    }
    if ((v = json_object_get(fm, "disable-model-invocation")) && !json_is_null(v) &&
        !read_bool(v, &d->disable_model_invocation))
        warnf(warn, wctx, "%s: key 'disable-model-invocation': must be true or false", path);
}

/* ---- the lenient second read --------------------------------------------------- */

/* Is this frontmatter line "key: value" at the top level, with a value that
 * strict YAML refuses but Claude Code's files use? *vstart gets the value. */
static bool needs_quoting(const char *line, size_t len, const char **vstart, size_t *vlen)
{
    size_t k = 0;
    while (k < len && (isalnum((unsigned char)line[k]) || line[k] == '-' || line[k] == '_'))
        k++;
    if (k == 0 || k + 1 >= len || line[k] != ':' || (line[k + 1] != ' ' && line[k + 1] != '\t'))
        return false;
    const char *v = line + k + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    if (v == end || *v == '\'' || *v == '"' || *v == '|' || *v == '>' || *v == '{')
        return false;
    bool hint = k == strlen("argument-hint") && strncmp(line, "argument-hint", k) == 0;
    if (*v == '[' && !hint)
        return false;
    if (*v != '[' && !memmem(v, (size_t)(end - v), ": ", 2))
        return false;
    *vstart = v;
    *vlen = (size_t)(end - v);
    return true;
}

/* A copy of text with the lines needs_quoting names single-quoted, or NULL
 * when there is none (or no frontmatter block to look in). */
static char *quote_loose_values(const char *text)
{
    const char *p = text;
    if (strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    if (strncmp(p, "---", 3) != 0)
        return NULL;
    loom_str out = LOOM_STR_INIT;
    bool changed = false, first = true;
    str_append(&out, text, (size_t)(p - text));
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *v = NULL;
        size_t vlen = 0;
        bool closing = !first && len >= 3 && strncmp(p, "---", 3) == 0;
        if (!first && !closing && needs_quoting(p, len, &v, &vlen)) {
            str_append(&out, p, (size_t)(v - p));
            str_putc(&out, '\'');
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] == '\'')
                    str_putc(&out, '\'');
                str_putc(&out, v[i]);
            }
            str_putc(&out, '\'');
            if (len && p[len - 1] == '\r')
                str_putc(&out, '\r');
            changed = true;
        } else {
            str_append(&out, p, len);
        }
        first = false;
        p += len;
        if (*p == '\n') {
            str_putc(&out, '\n');
            p++;
        }
        if (closing) {
            str_puts(&out, p);
            break;
        }
    }
    if (!changed) {
        str_free(&out);
        return NULL;
    }
    return str_steal(&out);
}

/* ---- one file ------------------------------------------------------------------ */

/* The body's first non-empty line, trimmed, a Markdown heading's '#'s
 * dropped, cut at COMMAND_DESC_FROM_BODY characters. */
static char *desc_from_body(const char *body)
{
    const char *p = body;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p != '\n')
            break;
        p++;
    }
    while (*p == '#')
        p++;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *end = p;
    size_t chars = 0;
    while (*end && *end != '\n' && chars < COMMAND_DESC_FROM_BODY) {
        size_t k = utf8_seq_len((const unsigned char *)end, strnlen(end, 4));
        end += k ? k : 1;
        chars++;
    }
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    char *d = utf8_sanitize(p, (size_t)(end - p), NULL);
    return d;
}

command_def *command_def_parse(const char *path, const char *name, const char *text,
                               void (*warn)(void *ctx, const char *msg), void *warn_ctx,
                               loom_error *err)
{
    if (!path)
        path = "(command file)";
    if (!text)
        text = "";
    loom_error fe = {0};
    const char *body = text;
    char *retry = NULL;
    json_t *fm = frontmatter_parse(text, &body, &fe);
    if (!fm && fe.code != FRONTMATTER_ERR_NONE && (retry = quote_loose_values(text)) != NULL) {
        loom_error fe2 = {0};
        fm = frontmatter_parse(retry, &body, &fe2);
    }
    if (!fm && fe.code != FRONTMATTER_ERR_NONE) {
        free(retry);
        loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, fe.message);
        return NULL;
    }
    command_def *d = xcalloc(1, sizeof *d);
    d->name = xstrdup(name ? name : "");
    d->path = xstrdup(path);
    d->body = xstrdup(body);
    free(retry);
    if (fm)
        read_keys(d, fm, path, warn, warn_ctx);
    json_decref(fm);
    if (!d->description || !d->description[0]) {
        free(d->description);
        d->description = desc_from_body(d->body);
    }
    return d;
}

void command_def_free(command_def *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->description);
    free(d->argument_hint);
    strv_free(d->allowed_tools);
    free(d->model);
    free(d->path);
    free(d->body);
    free(d->plugin);
    free(d);
}

/* ---- names ------------------------------------------------------------------------ */

static bool part_ok(const char *s, size_t n)
{
    if (n == 0 || n > 64 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

char *command_name_for(const char *rel, const char *plugin, loom_str *why)
{
    size_t len = rel ? strlen(rel) : 0;
    if (len < 4 || strcmp(rel + len - 3, ".md") != 0) {
        if (why)
            str_puts(why, "not a .md file");
        return NULL;
    }
    len -= 3;
    loom_str name = LOOM_STR_INIT;
    if (plugin && *plugin) {
        if (!part_ok(plugin, strlen(plugin))) {
            if (why)
                str_printf(why, "the plugin name '%.64s' is not one a command can carry", plugin);
            return NULL;
        }
        str_puts(&name, plugin);
        str_putc(&name, ':');
    }
    const char *p = rel, *end = rel + len;
    while (p < end) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *q = slash ? slash : end;
        if (!part_ok(p, (size_t)(q - p))) {
            if (why)
                str_printf(why,
                           "'%.*s' is not a command name (1 to 64 letters, digits, '-', '_' or '.', "
                           "not starting with '.')",
                           (int)(q - p > 64 ? 64 : q - p), p);
            str_free(&name);
            return NULL;
        }
        str_append(&name, p, (size_t)(q - p));
        if (slash)
            str_putc(&name, ':');
        p = slash ? slash + 1 : end;
    }
    return str_steal(&name);
}

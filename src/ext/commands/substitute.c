/* substitute.c — the text side of a slash command: telling "/name args"
 * apart from a goal that merely starts with a slash, splitting the
 * arguments like a shell, and putting them into a command's (or a
 * skill's) body. Pure: nothing here runs a command or reads a file, so
 * the skills module uses the same rules (docs/commands.md).
 *
 * Placeholders, as Claude Code's commands have them:
 *   $ARGUMENTS      the arguments as typed (quotes kept)
 *   $1 … $9         the n-th word, quotes removed; "" when there are fewer
 *                   ($10 is $1 followed by "0": one digit only)
 *   $ARGUMENTS[n]   the word at 0-based n (Claude Code's skill spelling)
 * Inside a !`cmd` (command_substitute_part with shell) each value is one
 * single-quoted shell word, so what the person typed stays an argument.
 * A body that uses none of them and is given arguments gets them appended
 * as a last paragraph "ARGUMENTS: …", so what the person typed is never
 * dropped without a trace (Claude Code does the same).
 *
 * No state; any thread. */
#include "ext/commands/commands_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The characters of a command's name as typed: the file-name parts
 * command_name_for accepts and ':' between them. */
static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == ':';
}

bool command_split(const char *line, char **name, const char **args)
{
    if (name)
        *name = NULL;
    if (args)
        *args = "";
    if (!line || line[0] != '/')
        return false;
    const char *p = line + 1;
    while (name_char(*p))
        p++;
    size_t n = (size_t)(p - line - 1);
    /* "/", "/ x", "//x" and a path such as "/etc/passwd is empty" are not
     * commands: a name ends at a blank or the end of the line. */
    if (n == 0 || n > 200 || (*p && !isspace((unsigned char)*p)))
        return false;
    while (isspace((unsigned char)*p))
        p++;
    if (name)
        *name = xstrndup(line + 1, n);
    if (args)
        *args = p;
    return true;
}

char **command_words(const char *args, size_t *n_out)
{
    char **v = xcalloc(1, sizeof(char *));
    size_t n = 0;
    const char *p = args ? args : "";
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        loom_str w = LOOM_STR_INIT;
        while (*p && !isspace((unsigned char)*p)) {
            if (*p == '\'') {
                /* Everything up to the next quote, as is; an unclosed quote
                 * runs to the end (lenient: these are a person's words). */
                const char *q = strchr(p + 1, '\'');
                size_t len = q ? (size_t)(q - p - 1) : strlen(p + 1);
                str_append(&w, p + 1, len);
                p += 1 + len + (q ? 1 : 0);
            } else if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\' || p[1] == '$' || p[1] == '`'))
                        p++;
                    str_putc(&w, *p++);
                }
                if (*p == '"')
                    p++;
            } else if (*p == '\\' && p[1]) {
                str_putc(&w, p[1]);
                p += 2;
            } else {
                str_putc(&w, *p++);
            }
        }
        v = xrealloc(v, (n + 2) * sizeof(char *));
        v[n++] = str_steal(&w);
        v[n] = NULL;
    }
    if (n_out)
        *n_out = n;
    return v;
}

void command_words_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

/* value as one shell word: single-quoted, a ' inside as '\'' (so an
 * argument can never become an operator, a redirection or a !`cmd`). */
static void put_value(loom_str *out, const char *v, size_t n, bool shell)
{
    if (!shell) {
        str_append(out, v, n);
        return;
    }
    str_putc(out, '\'');
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\'')
            str_puts(out, "'\\''");
        else
            str_putc(out, v[i]);
    }
    str_putc(out, '\'');
}

char *command_substitute_part(const char *body, const char *args, bool shell, bool *used_out)
{
    if (!body)
        body = "";
    if (!args)
        args = "";
    /* $ARGUMENTS is the text as typed, without the blanks around it. */
    const char *a0 = args, *a1 = args + strlen(args);
    while (a0 < a1 && isspace((unsigned char)*a0))
        a0++;
    while (a1 > a0 && isspace((unsigned char)a1[-1]))
        a1--;
    size_t nwords = 0;
    char **words = command_words(args, &nwords);
    loom_str out = LOOM_STR_INIT;
    bool used = false;
    static const char kw[] = "ARGUMENTS";
    const size_t kwlen = sizeof kw - 1;
    for (const char *p = body; *p;) {
        if (*p != '$') {
            const char *q = strchr(p, '$');
            size_t len = q ? (size_t)(q - p) : strlen(p);
            str_append(&out, p, len);
            p += len;
            continue;
        }
        if (p[1] >= '1' && p[1] <= '9') {
            size_t i = (size_t)(p[1] - '1');
            put_value(&out, i < nwords ? words[i] : "", i < nwords ? strlen(words[i]) : 0,
                      shell);
            used = true;
            p += 2;
        } else if (strncmp(p + 1, kw, kwlen) == 0) {
            const char *q = p + 1 + kwlen;
            size_t idx = 0, digits = 0;
            if (*q == '[') {
                const char *d = q + 1;
                while (isdigit((unsigned char)*d) && digits < 6)
                    idx = idx * 10 + (size_t)(*d++ - '0'), digits++;
                if (digits && *d == ']') {
                    put_value(&out, idx < nwords ? words[idx] : "",
                              idx < nwords ? strlen(words[idx]) : 0, shell);
                    used = true;
                    p = d + 1;
                    continue;
                }
            }
            put_value(&out, a0, (size_t)(a1 - a0), shell);
            used = true;
            p = q;
        } else {
            str_putc(&out, '$');
            p++;
        }
    }
    if (used_out)
        *used_out = *used_out || used;
    command_words_free(words);
    return str_steal(&out);
}

void command_append_arguments(loom_str *out, const char *args)
{
    const char *a0 = args ? args : "", *a1 = a0 + strlen(a0);
    while (a0 < a1 && isspace((unsigned char)*a0))
        a0++;
    while (a1 > a0 && isspace((unsigned char)a1[-1]))
        a1--;
    if (a1 == a0)
        return;
    while (out->len && isspace((unsigned char)out->ptr[out->len - 1]))
        str_truncate(out, out->len - 1);
    if (out->len)
        str_puts(out, "\n\n");
    str_puts(out, "ARGUMENTS: ");
    str_append(out, a0, (size_t)(a1 - a0));
}

char *command_substitute(const char *body, const char *args)
{
    bool used = false;
    loom_str out = LOOM_STR_INIT;
    char *text = command_substitute_part(body, args, false, &used);
    str_puts(&out, text);
    free(text);
    if (!used)
        command_append_arguments(&out, args);
    return str_steal(&out);
}

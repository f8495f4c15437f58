/* slash_export.c — /export: the conversation as a markdown file
 * (slash_export.h). */
#include "surfaces/cli/slash_export.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"

/* A tool call's input and result are shown cut to this many bytes. */
#define EXPORT_INPUT_MAX 160
#define EXPORT_RESULT_MAX 120

/* s cut to max bytes (not inside a UTF-8 character), one line, with "…". */
static void put_cut(loom_str *out, const char *s, size_t max)
{
    size_t n = strcspn(s, "\n");
    bool cut = s[n] != '\0';
    if (n > max) {
        n = max;
        while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
        cut = true;
    }
    for (size_t i = 0; i < n; i++)
        str_putc(out, s[i] == '`' ? '\'' : s[i]); /* stays inside its code span */
    if (cut)
        str_puts(out, "\xe2\x80\xa6");
}

void slash_export_markdown(const char *conversation_json, const char *title, const char *id,
                           loom_str *out)
{
    loom_error ignore;
    json_t *arr = json_parse(conversation_json ? conversation_json : "[]",
                             conversation_json ? strlen(conversation_json) : 2, "conversation",
                             &ignore);
    str_printf(out, "# %s\n\n", title && *title ? title : "Loom session");
    str_printf(out, "Session `%s`\n", id ? id : "?");
    const char *last = "";
    size_t k;
    json_t *e;
    json_array_foreach(arr, k, e) {
        const char *kind = json_get_str(e, "kind", "");
        const char *text = json_get_str(e, "text", "");
        if (!strcmp(kind, "user") || !strcmp(kind, "assistant") || !strcmp(kind, "summary")) {
            const char *head = !strcmp(kind, "user")        ? "User"
                               : !strcmp(kind, "assistant") ? "Assistant"
                                                            : "Summary of the earlier conversation";
            /* Consecutive texts of one side stay under one heading. */
            if (strcmp(last, kind) != 0)
                str_printf(out, "\n## %s\n", head);
            str_printf(out, "\n%s\n", text);
            long long images = json_get_int(e, "images", 0);
            if (images)
                str_printf(out, "\n*(%lld image%s attached)*\n", images, images == 1 ? "" : "s");
            last = kind;
        } else if (!strcmp(kind, "tool_call")) {
            if (strcmp(last, "assistant") != 0 && strcmp(last, "tool") != 0)
                str_puts(out, "\n## Assistant\n");
            if (strcmp(last, "tool") != 0)
                str_putc(out, '\n');
            str_printf(out, "- **%s** `", json_get_str(e, "name", "?"));
            put_cut(out, json_get_str(e, "input", "{}"), EXPORT_INPUT_MAX);
            str_puts(out, "`\n");
            last = "tool";
        } else if (!strcmp(kind, "tool_result")) {
            bool err = json_get_bool(e, "is_error", false);
            str_printf(out, "  - %s `", err ? "error:" : "\xe2\x86\x92");
            while (*text == '\n' || *text == ' ')
                text++;
            put_cut(out, text, EXPORT_RESULT_MAX);
            str_puts(out, "`\n");
            last = "tool";
        }
    }
    json_decref(arr);
}

/* The session's title, from the listing (NULL when it has none yet). */
static char *session_title(slash_host *r)
{
    char *list = loom_sessions_json(r->agent, loom_session_id(r->session));
    loom_error ignore;
    json_t *arr = list ? json_parse(list, strlen(list), "sessions", &ignore) : NULL;
    char *title = NULL;
    size_t k;
    json_t *o;
    json_array_foreach(arr, k, o)
        if (!title && !strcmp(json_get_str(o, "id", ""), loom_session_id(r->session)) &&
            json_get_str(o, "title", NULL))
            title = xstrdup(json_get_str(o, "title", NULL));
    json_decref(arr);
    free(list);
    return title;
}

void slash_export(slash_host *r, const char *args)
{
    /* "FILE !", "! FILE", "FILE!" or just "!": the "!" overwrites. */
    loom_str file = LOOM_STR_INIT;
    bool force = false;
    for (const char *p = args; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, " \t");
        if (n == 1 && *p == '!') {
            force = true;
        } else if (n) {
            if (file.len)
                str_putc(&file, ' '); /* a name with blanks, unquoted */
            str_append(&file, p, n);
        }
        p += n;
    }
    if (file.len > 1 && file.ptr[file.len - 1] == '!') {
        force = true;
        str_truncate(&file, file.len - 1);
    }
    if (!file.len)
        str_printf(&file, "loom-%s.md", loom_session_id(r->session));
    char *path = path_make_absolute(str_cstr(&file), r->cwd);
    str_free(&file);
    struct stat sb;
    if (!path) {
        term_printf(&r->out, TONE_RED, "/export: cannot make a path of that name\n");
        return;
    }
    if (!force && stat(path, &sb) == 0) {
        term_printf(&r->out, TONE_RED, "/export: %s exists; /export %s%s! replaces it\n", path,
                    args, *args ? " " : "");
        free(path);
        return;
    }
    char *conv = loom_session_conversation_json(r->session);
    char *title = session_title(r);
    loom_str md = LOOM_STR_INIT;
    slash_export_markdown(conv, title, loom_session_id(r->session), &md);
    loom_error err;
    if (file_write_atomic(path, md.ptr, md.len, 0644, &err) != 0)
        term_printf(&r->out, TONE_RED, "/export: %s\n", err.message);
    else
        term_printf(&r->out, TONE_GREEN, "Exported the conversation to %s\n", path);
    str_free(&md);
    free(title);
    free(conv);
    free(path);
}

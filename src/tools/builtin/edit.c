/* edit.c — the Edit tool: replaces an exact string in a file.
 *
 * The string must occur exactly once unless replace_all is set, so an edit
 * never lands somewhere the model did not mean. Same guards as Write: the
 * file must have been read and be unchanged since (file_state.h), it is
 * backed up before the change (file_history.h) and replaced atomically with
 * its mode kept. An empty old_string creates a new file (or fills an empty
 * one), as in Claude Code.
 *
 * Line endings: Read shows a CRLF file with plain LF lines, so the model's
 * strings carry LF. In a file that is mostly CRLF, bare LFs in old_string
 * and new_string become CRLF before matching, so the match succeeds and the
 * file keeps one line-ending style. If the converted string is not found
 * the strings are tried as given (a file with mixed endings).
 *
 * With a driver's port (tools/tool_io.h) the edit is made on the driver's
 * text (an editor's buffer, which may differ from the disk) and written
 * back through it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/json.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/file_commit.h"
#include "session/file_history.h"
#include "tools/file_state.h"
#include "tools/tool_io.h"

#define EDIT_SNIPPET_CONTEXT 4     /* lines shown around the change */
#define EDIT_SNIPPET_MAX_LINES 40

static const char edit_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"Path of the file to change: "
    "absolute, or relative to the working directory.\"},"
    "\"old_string\":{\"type\":\"string\",\"description\":\"The exact text to replace, "
    "including its whitespace and indentation.\"},"
    "\"new_string\":{\"type\":\"string\",\"description\":\"The text to put in its place (must "
    "differ from old_string).\"},"
    "\"replace_all\":{\"type\":\"boolean\",\"default\":false,\"description\":\"Replace every "
    "occurrence instead of requiring exactly one.\"}},"
    "\"required\":[\"file_path\",\"old_string\",\"new_string\"],"
    "\"additionalProperties\":false}";

static const char edit_description[] =
    "Replaces exact text in a file. Read the file first in this session; the edit is refused "
    "if it changed since. old_string must match the file exactly (whitespace and indentation "
    "as shown after the tab of Read's line-number prefix, which is not part of the file) and "
    "must occur only once, unless replace_all is true; add surrounding lines to make it "
    "unique. replace_all suits renaming a variable throughout a file. An empty old_string "
    "creates a new file with new_string as its content.";

typedef struct edit_plan {
    char *path;
    bool exists;
    int mode;            /* -1 for a new file */
    loom_str content;    /* the file after the edit */
    size_t n_replaced;
    size_t change_at;    /* byte offset of the first replacement in content */
    size_t change_len;   /* its length */
    char *before;        /* the file before the edit (NULL for a new file) */
    size_t before_len;
} edit_plan;

static void plan_free(edit_plan *p)
{
    free(p->path);
    free(p->before);
    str_free(&p->content);
    memset(p, 0, sizeof *p);
}

/* Bare LFs become CRLF. */
static void to_crlf(loom_str *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
            str_putc(out, '\r');
        str_putc(out, s[i]);
    }
}

/* Mostly CRLF: more CRLF line ends than bare LF ones. */
static bool uses_crlf(const char *s, size_t n)
{
    size_t crlf = 0, lf = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n')
            (i > 0 && s[i - 1] == '\r') ? crlf++ : lf++;
    return crlf > lf;
}

static size_t count_matches(const char *hay, size_t hn, const char *needle, size_t nn)
{
    size_t count = 0;
    for (const char *p = hay, *end = hay + hn;
         (p = memmem(p, (size_t)(end - p), needle, nn)) != NULL; p += nn)
        count++;
    return count;
}

/* Non-overlapping, left to right; all of them, or only the first. */
static void replace(edit_plan *p, const char *hay, size_t hn, const char *old, size_t on,
                    const char *neu, size_t nn, bool all)
{
    const char *pos = hay, *end = hay + hn, *m;
    while ((m = memmem(pos, (size_t)(end - pos), old, on)) != NULL) {
        str_append(&p->content, pos, (size_t)(m - pos));
        if (p->n_replaced == 0) {
            p->change_at = p->content.len;
            p->change_len = nn;
        }
        str_append(&p->content, neu, nn);
        p->n_replaced++;
        pos = m + on;
        if (!all)
            break;
    }
    str_append(&p->content, pos, (size_t)(end - pos));
}

/* With a driver's port (tools/tool_io.h) the driver's text is the file:
 * the edit is made on it, after the stale check against what the model
 * read. -1: refused (why set); 0: settled without a text (a new file's
 * content set, or validating, which asks the driver nothing); 1: *data and
 * *len hold the current text to edit. */
static int edit_driver_text(const tool_ctx *ctx, const char *path, edit_plan *p, size_t on,
                            const char *neu, size_t nn, bool validating, char **data,
                            size_t *len, loom_str *why)
{
    loom_str now = LOOM_STR_INIT;
    bool exists = false;
    p->mode = -1;
    if (file_driver_current(ctx, "Edit", path, &exists, validating ? NULL : &now, why) != 0) {
        str_free(&now);
        return -1;
    }
    if (!exists) {
        if (on != 0) {
            str_printf(why, "File does not exist: %s. (Current working directory: %s)", path,
                       ctx->cwd ? ctx->cwd : "?");
            return -1;
        }
        str_append(&p->content, neu, nn);
        p->n_replaced = 1;
        p->change_len = nn;
        return 0;
    }
    p->exists = true;
    if (validating) {
        str_free(&now);
        return 0;
    }
    *len = now.len;
    *data = str_steal(&now);
    return 1;
}

/* Works out the edit without writing anything. 0 = go ahead; else 1 with a
 * message in why the model can act on. */
static int edit_plan_make(const json_t *input, const tool_ctx *ctx, edit_plan *p,
                          bool validating, loom_str *why)
{
    memset(p, 0, sizeof *p);
    const char *arg = json_get_str(input, "file_path", NULL);
    json_t *jold = json_object_get(input, "old_string");
    json_t *jnew = json_object_get(input, "new_string");
    if (!arg || !*arg || !json_is_string(jold) || !json_is_string(jnew)) {
        str_puts(why, "file_path, old_string and new_string are required (strings).");
        return 1;
    }
    const char *old = json_string_value(jold), *neu = json_string_value(jnew);
    size_t on = json_string_length(jold), nn = json_string_length(jnew);
    bool all = json_get_bool(input, "replace_all", false);
    if (on == nn && memcmp(old, neu, on) == 0) {
        str_puts(why, "No changes to make: old_string and new_string are exactly the same.");
        return 1;
    }

    char *path = tool_resolve_path(ctx, arg);
    struct stat st;
    int rc = 1;
    char *data = NULL;
    size_t len = 0;
    loom_str o2 = LOOM_STR_INIT, n2 = LOOM_STR_INIT;
    if (TOOL_IO_FILES(ctx->io)) {
        int d = edit_driver_text(ctx, path, p, on, neu, nn, validating, &data, &len, why);
        if (d <= 0) {
            rc = d < 0 ? 1 : 0;
            goto out;
        }
        goto edit_text;
    }
    if (stat(path, &st) != 0) {
        int e = errno;
        if (e != ENOENT) {
            str_printf(why, "Cannot edit %s: %s", path, strerror(e));
        } else if (on == 0) {
            /* An empty old_string on a missing file: create it. */
            p->mode = -1;
            str_append(&p->content, neu, nn);
            p->n_replaced = 1;
            p->change_len = nn;
            rc = 0;
        } else {
            str_printf(why, "File does not exist: %s. (Current working directory: %s)", path,
                       ctx->cwd ? ctx->cwd : "?");
        }
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        str_printf(why, "%s is a directory; Edit needs the path of a file.", path);
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        str_printf(why, "%s is not a regular file; Edit only changes files.", path);
        goto out;
    }
    char *real = realpath(path, NULL);
    if (real) {
        free(path);
        path = real;
    }
    if (file_state_check(ctx->files, path, why) != 0)
        goto out;
    loom_error err;
    loom_error_clear(&err);
    if (file_read_all(path, &data, &len, &err) != 0) {
        str_printf(why, "Cannot read %s: %s", path, err.message);
        goto out;
    }
    p->exists = true;
    p->mode = (int)(st.st_mode & 07777);

edit_text:
    if (on == 0) {
        if (len != 0) {
            str_printf(why, "Cannot create %s: the file already exists and is not empty. To "
                            "change it, give the text to replace in old_string.", path);
            goto out;
        }
        str_append(&p->content, neu, nn);
        p->n_replaced = 1;
        p->change_len = nn;
        rc = 0;
        goto out;
    }

    size_t count = 0;
    if (uses_crlf(data, len)) {
        to_crlf(&o2, old, on);
        to_crlf(&n2, neu, nn);
        count = count_matches(data, len, o2.ptr, o2.len);
        if (count) {
            old = o2.ptr, on = o2.len;
            neu = str_cstr(&n2), nn = n2.len;
        }
    }
    if (!count)
        count = count_matches(data, len, old, on);
    if (count == 0) {
        str_printf(why, "String to replace not found in %s. old_string must match the file "
                        "exactly, including whitespace and indentation (the line-number "
                        "prefix and tab that Read shows are not part of the file). Read the "
                        "file again to see its current text.", path);
        goto out;
    }
    if (count > 1 && !all) {
        str_printf(why, "Found %zu matches of the string to replace, but replace_all is false. "
                        "To replace all occurrences, set replace_all to true. To replace only "
                        "one occurrence, please provide more context to uniquely identify the "
                        "instance.", count);
        goto out;
    }
    replace(p, data, len, old, on, neu, nn, all);
    rc = 0;
out:
    str_free(&o2);
    str_free(&n2);
    if (rc == 0) {
        p->before = data; /* the result's structuredPatch is diffed against it */
        p->before_len = len;
        data = NULL;
    }
    free(data);
    if (rc == 0)
        p->path = path;
    else
        free(path);
    return rc;
}

static int edit_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    edit_plan p;
    int rc = edit_plan_make(input, ctx, &p, true, why);
    plan_free(&p);
    return rc;
}

/* Appends one snippet line; bytes that are not valid UTF-8 (the file's, not
 * the model's) become '?' so the result stays a valid JSON string. */
static void snippet_line(loom_str *out, size_t no, const char *s, size_t n)
{
    if (n > 0 && s[n - 1] == '\r')
        n--;
    str_printf(out, "%6zu\t", no);
    json_t *probe = json_stringn(s, n);
    if (probe) {
        str_append(out, s, n);
        json_decref(probe);
    } else {
        for (size_t i = 0; i < n; i++)
            str_putc(out, (unsigned char)s[i] < 0x80 ? s[i] : '?');
    }
    str_putc(out, '\n');
}

/* A few numbered lines around the first change, as Read would show them. */
static void snippet(loom_str *out, const edit_plan *p)
{
    const char *s = str_cstr(&p->content);
    size_t n = p->content.len;
    size_t first = 1, last;
    for (size_t i = 0; i < p->change_at && i < n; i++)
        first += s[i] == '\n';
    last = first;
    for (size_t i = p->change_at; i < p->change_at + p->change_len && i < n; i++)
        last += s[i] == '\n';
    size_t from = first > EDIT_SNIPPET_CONTEXT ? first - EDIT_SNIPPET_CONTEXT : 1;
    size_t to = last + EDIT_SNIPPET_CONTEXT;
    if (to - from + 1 > EDIT_SNIPPET_MAX_LINES)
        to = from + EDIT_SNIPPET_MAX_LINES - 1;
    size_t line = 1, start = 0;
    for (size_t i = 0; i <= n && line <= to; i++) {
        if (i == n || s[i] == '\n') {
            if (line >= from && !(i == n && i == start))
                snippet_line(out, line, s + start, i - start);
            line++;
            start = i + 1;
        }
    }
}

static int edit_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    edit_plan p;
    loom_str why = LOOM_STR_INIT;
    if (edit_plan_make(input, ctx, &p, false, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
        str_free(&why);
        return 0;
    }
    str_free(&why);
    if (file_commit(ctx, p.path, p.exists, str_cstr(&p.content), p.content.len, p.mode, out) == 0) {
        if (!p.exists) {
            str_printf(&out->text, "File created successfully at: %s", p.path);
        } else {
            str_printf(&out->text, "The file %s has been updated.", p.path);
            if (p.n_replaced > 1)
                str_printf(&out->text, " All %zu occurrences were replaced.", p.n_replaced);
            str_puts(&out->text, " Here is the result of running `cat -n` on a snippet of the "
                                 "edited file:\n");
            snippet(&out->text, &p);
        }
        out->raw = json_pack("{s:s, s:s, s:I}", "type", p.exists ? "update" : "create",
                             "filePath", p.path, "replacements", (json_int_t)p.n_replaced);
        tool_raw_patch(out->raw, p.before, p.before_len, str_cstr(&p.content), p.content.len);
    }
    plan_free(&p);
    return 0;
}

const tool_def tool_edit = {
    .name = "Edit",
    .description = edit_description,
    .input_schema = edit_schema,
    .read_only = false,
    .concurrency_safe = false,
    .validate = edit_validate,
    .run = edit_run,
};

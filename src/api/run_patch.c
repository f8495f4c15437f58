/* run_patch.c — loom_run_patch: a run's file changes as one unified diff.
 *
 * The session's file history holds each file as it was before its first
 * write in a message (session/file_history.h). The run's id is a UUIDv7
 * taken before its goal was recorded, so "changed since the run's id" is
 * exactly the files the run's Write/Edit/NotebookEdit calls changed; each
 * is diffed, before against now, with base/diff. Reads files; call it
 * after the run (or between its steps: it takes the history's lock only). */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/diff.h"
#include "base/fileio.h"
#include "base/str.h"
#include "session/file_history.h"

/* seed 000 §11's patch artifact is for review: files past this are named
 * with a note instead of their text. */
#define PATCH_MAX_FILE_BYTES (8u << 20)

static bool read_whole(const char *path, char **data, size_t *n)
{
    loom_error err;
    *data = NULL;
    *n = 0;
    return path && file_read_all(path, data, n, &err) == 0;
}

/* The name a patch gives the file: relative to cwd when inside it. */
static const char *patch_name(const char *path, const char *cwd)
{
    size_t n = cwd ? strlen(cwd) : 0;
    if (n && !strncmp(path, cwd, n) && path[n] == '/')
        return path + n + 1;
    return path[0] == '/' ? path + 1 : path;
}

static void diff_one(loom_str *out, const char *name, const char *a, size_t an, bool a_exists,
                     const char *b, size_t bn, bool b_exists)
{
    if (an > PATCH_MAX_FILE_BYTES || bn > PATCH_MAX_FILE_BYTES) {
        str_printf(out, "# %s: changed, too big for the patch (over %u MiB)\n", name,
                   PATCH_MAX_FILE_BYTES >> 20);
        return;
    }
    diff_result d;
    diff_texts(a, an, b, bn, 3, &d);
    if (d.n_hunks > 0) {
        str_printf(out, "diff --git a/%s b/%s\n", name, name);
        if (!a_exists)
            str_puts(out, "new file mode 100644\n");
        if (!b_exists)
            str_puts(out, "deleted file mode 100644\n");
        str_printf(out, "--- %s%s\n+++ %s%s\n", a_exists ? "a/" : "", a_exists ? name : "/dev/null",
                   b_exists ? "b/" : "", b_exists ? name : "/dev/null");
        diff_unified_text(&d, diff_count_lines(a, an), an == 0 || a[an - 1] == '\n',
                          diff_count_lines(b, bn), bn == 0 || b[bn - 1] == '\n', out);
    }
    diff_result_free(&d);
}

char *loom_run_patch(const loom_run *r)
{
    if (!r)
        return NULL;
    loom_session *s = api_run_session(r);
    json_t *files = file_history_changed_since(s->history, api_run_id(r));
    loom_str out = LOOM_STR_INIT;
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *path = json_string_value(json_object_get(f, "path"));
        bool existed = json_is_true(json_object_get(f, "existed"));
        char *a = NULL, *b = NULL;
        size_t an = 0, bn = 0;
        if (existed && !read_whole(json_string_value(json_object_get(f, "backup")), &a, &an)) {
            str_printf(&out, "# %s: changed, its earlier content could not be read\n",
                       patch_name(path, s->agent->cwd));
            continue;
        }
        bool exists = read_whole(path, &b, &bn);
        if (existed || exists)
            diff_one(&out, patch_name(path, s->agent->cwd), a ? a : "", an, existed, b ? b : "",
                     bn, exists);
        free(a);
        free(b);
    }
    json_decref(files);
    char *text = str_steal(&out);
    return text ? text : xstrdup("");
}

/* diff_view.c — see diff_view.h. The approval's diff reads the file (at
 * most DIFF_VIEW_MAX_FILE bytes) and applies the call's edit to a copy the
 * way the tool would (first occurrence, or every one with replace_all);
 * when the text to replace is not in the file (the tool will refuse), the
 * diff is old_string against new_string alone. Every line shown passes
 * term_put_clipped: the file's and the model's text cannot restyle the
 * terminal. Main thread. */
#include "surfaces/cli/diff_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/diff.h"
#include "base/fileio.h"

/* Context lines around each change, as `diff -u` and Claude Code show. */
#define DIFF_VIEW_CONTEXT 3

static char *read_bounded(const char *path, size_t *len)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > DIFF_VIEW_MAX_FILE)
        return NULL;
    char *data = NULL;
    loom_error ignore;
    if (file_read_all(path, &data, len, &ignore) != 0)
        return NULL;
    return data;
}

/* s with the first (or every) `old` replaced by `neu`; false when old is
 * not in s (or is empty). */
static bool replace_in(loom_str *s, const char *old, size_t on, const char *neu, size_t nn,
                       bool all)
{
    if (!on)
        return false;
    loom_str r = LOOM_STR_INIT;
    str_puts(&r, "");
    bool found = false;
    size_t i = 0;
    while (i + on <= s->len) {
        const char *hit = NULL;
        for (size_t k = i; k + on <= s->len; k++)
            if (s->ptr[k] == old[0] && !memcmp(s->ptr + k, old, on)) {
                hit = s->ptr + k;
                break;
            }
        if (!hit)
            break;
        size_t at = (size_t)(hit - s->ptr);
        str_append(&r, s->ptr + i, at - i);
        str_append(&r, neu, nn);
        i = at + on;
        found = true;
        if (!all)
            break;
    }
    if (found) {
        str_append(&r, s->ptr + i, s->len - i);
        str_free(s);
        *s = r;
    } else {
        str_free(&r);
    }
    return found;
}

static json_t *patch_of(const char *a, size_t an, const char *b, size_t bn)
{
    diff_result d;
    diff_texts(a, an, b, bn, DIFF_VIEW_CONTEXT, &d);
    json_t *p = diff_structured_patch(&d, 0);
    diff_result_free(&d);
    return p;
}

json_t *diff_view_patch_for(const char *tool, const json_t *input, const char *cwd,
                            bool *in_file)
{
    if (in_file)
        *in_file = true;
    const char *file = json_get_str(input, "file_path", NULL);
    if (!tool || !file || !*file)
        return NULL;
    loom_str path = LOOM_STR_INIT;
    if (file[0] != '/' && cwd)
        str_printf(&path, "%s/%s", cwd, file);
    else
        str_puts(&path, file);
    size_t len = 0;
    char *before = read_bounded(str_cstr(&path), &len);
    str_free(&path);
    json_t *patch = NULL;
    if (!strcmp(tool, "Write")) {
        const json_t *c = json_object_get(input, "content");
        if (json_is_string(c))
            patch = patch_of(before, before ? len : 0, json_string_value(c), json_string_length(c));
    } else if (!strcmp(tool, "Edit") || !strcmp(tool, "MultiEdit")) {
        json_t *one = NULL;
        const json_t *edits = json_get_arr(input, "edits");
        if (!strcmp(tool, "Edit")) {
            one = json_array();
            json_array_append(one, (json_t *)input);
            edits = one;
        }
        loom_str after = LOOM_STR_INIT;
        str_append(&after, before ? before : "", before ? len : 0);
        bool applied = before != NULL && json_array_size(edits) > 0;
        loom_str olds = LOOM_STR_INIT, news = LOOM_STR_INIT;
        size_t i;
        json_t *e;
        json_array_foreach(edits, i, e) {
            const json_t *o = json_object_get(e, "old_string"), *n = json_object_get(e, "new_string");
            if (!json_is_string(o) || !json_is_string(n)) {
                applied = false;
                break;
            }
            str_append(&olds, json_string_value(o), json_string_length(o));
            str_append(&news, json_string_value(n), json_string_length(n));
            if (applied && !replace_in(&after, json_string_value(o), json_string_length(o),
                                       json_string_value(n), json_string_length(n),
                                       json_get_bool(e, "replace_all", false)))
                applied = false;
        }
        if (applied)
            patch = patch_of(before, len, after.ptr, after.len);
        else if (!before && json_array_size(edits) == 1 && !olds.len)
            patch = patch_of(NULL, 0, news.ptr, news.len); /* a new file */
        else if (olds.len || news.len) {
            patch = patch_of(olds.ptr, olds.len, news.ptr, news.len);
            if (in_file)
                *in_file = false;
        }
        str_free(&after);
        str_free(&olds);
        str_free(&news);
        json_decref(one);
    }
    free(before);
    if (patch && json_array_size(patch) == 0) {
        json_decref(patch);
        patch = NULL;
    }
    return patch;
}

void diff_view_counts(const json_t *patch, long *added, long *removed)
{
    *added = *removed = 0;
    size_t h;
    json_t *hunk;
    json_array_foreach(patch, h, hunk) {
        size_t i;
        json_t *l;
        json_array_foreach(json_get_arr(hunk, "lines"), i, l) {
            const char *s = json_string_value(l);
            *added += s && *s == '+';
            *removed += s && *s == '-';
        }
    }
}

void diff_view_render(const term_out *t, loom_str *out, const json_t *patch, const char *indent,
                      int cols, size_t max_lines, size_t *hidden)
{
    /* The widest line number sets the column. */
    long widest = 1;
    size_t total = 0;
    size_t h;
    json_t *hunk;
    json_array_foreach(patch, h, hunk) {
        long o = json_get_int(hunk, "oldStart", 0) + json_get_int(hunk, "oldLines", 0);
        long n = json_get_int(hunk, "newStart", 0) + json_get_int(hunk, "newLines", 0);
        if (o > widest)
            widest = o;
        if (n > widest)
            widest = n;
        total += json_array_size(json_get_arr(hunk, "lines"));
    }
    int w = snprintf(NULL, 0, "%ld", widest);
    int room = cols - (int)strlen(indent) - w - 3;
    size_t shown = 0;
    loom_str line = LOOM_STR_INIT;
    json_array_foreach(patch, h, hunk) {
        if (max_lines && shown >= max_lines)
            break;
        if (h > 0) {
            str_puts(out, indent);
            char gap[16];
            snprintf(gap, sizeof gap, "%*s\xe2\x8b\xae", w, ""); /* ⋮ */
            term_put_tone(t, out, TONE_DIM, gap, strlen(gap));
            str_putc(out, '\n');
        }
        long old_no = json_get_int(hunk, "oldStart", 1), new_no = json_get_int(hunk, "newStart", 1);
        if (!json_get_int(hunk, "oldLines", 0))
            old_no++;
        if (!json_get_int(hunk, "newLines", 0))
            new_no++;
        size_t i;
        json_t *l;
        json_array_foreach(json_get_arr(hunk, "lines"), i, l) {
            if (max_lines && shown >= max_lines)
                break;
            const char *s = json_string_value(l);
            if (!s || !*s)
                continue;
            char op = *s;
            long no = op == '-' ? old_no++ : new_no++;
            if (op == ' ')
                old_no++;
            char num[32];
            snprintf(num, sizeof num, "%*ld ", w, no);
            str_puts(out, indent);
            term_put_tone(t, out, TONE_DIM, num, strlen(num));
            str_clear(&line);
            str_putc(&line, op == '-' || op == '+' ? op : ' ');
            str_putc(&line, ' ');
            term_put_clipped(&line, s + 1, strlen(s + 1), room > 8 ? room : 8);
            term_put_tone(t, out, op == '-' ? TONE_RED : op == '+' ? TONE_GREEN : TONE_PLAIN,
                          line.ptr, line.len);
            str_putc(out, '\n');
            shown++;
        }
    }
    str_free(&line);
    if (hidden)
        *hidden = total > shown ? total - shown : 0;
}

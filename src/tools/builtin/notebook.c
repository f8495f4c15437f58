/* notebook.c — Jupyter notebooks for Read and NotebookEdit (notebook.h).
 *
 * A notebook is kept as the JSON it was read as, so an edit changes only
 * the cell it names: metadata, other cells and their outputs, and key order
 * survive (jansson keeps insertion order). The nbformat rules followed:
 * a cell's "source" is a string or a list of lines that each keep their
 * newline; code cells carry "outputs" and "execution_count", markdown and
 * raw cells neither; cell ids exist from nbformat 4.5 on.
 */
#include "tools/builtin/notebook.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#define NOTEBOOK_OUTPUT_MAX 4000 /* bytes of one output shown to the model */

bool notebook_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 6 && strcasecmp(path + n - 6, ".ipynb") == 0;
}

static json_t *cells_of(const json_t *nb)
{
    return json_object_get(nb, "cells");
}

json_t *notebook_parse(const char *path, const char *text, size_t len, loom_str *why)
{
    json_error_t e;
    json_t *nb = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!nb) {
        str_printf(why, "%s is not a valid notebook: its JSON is broken at line %d, column %d "
                        "(%s).", path, e.line, e.column, e.text);
        return NULL;
    }
    const char *bad = NULL;
    json_t *cells = cells_of(nb);
    json_t *major = json_object_get(nb, "nbformat");
    if (!json_is_object(nb))
        bad = "the file is not a JSON object";
    else if (!json_is_array(cells))
        bad = "it has no \"cells\" array";
    else if (json_is_integer(major) && json_integer_value(major) < 4)
        bad = "it is nbformat 3 or older (only nbformat 4 is supported; convert it with "
              "`jupyter nbconvert --to notebook`)";
    size_t i;
    json_t *c;
    if (!bad)
        json_array_foreach(cells, i, c)
        {
            const json_t *src = json_object_get(c, "source");
            if (!json_is_object(c) || !json_is_string(json_object_get(c, "cell_type")) ||
                (src && !json_is_string(src) && !json_is_array(src))) {
                str_printf(why, "%s is not a valid notebook: cell %zu is not an object with a "
                                "cell_type and a source.", path, i);
                json_decref(nb);
                return NULL;
            }
        }
    if (bad) {
        str_printf(why, "%s is not a valid notebook: %s.", path, bad);
        json_decref(nb);
        return NULL;
    }
    return nb;
}

/* A string or a list of strings, as one text (nbformat's "multiline
 * string"); anything else is nothing. */
static void multiline(const json_t *v, loom_str *out)
{
    if (json_is_string(v)) {
        str_append(out, json_string_value(v), json_string_length(v));
        return;
    }
    size_t i;
    json_t *s;
    json_array_foreach(v, i, s) if (json_is_string(s))
        str_append(out, json_string_value(s), json_string_length(s));
}

/* "cell-N": how the model names a cell that has no id. */
static char *index_id(size_t i)
{
    char buf[32];
    snprintf(buf, sizeof buf, "cell-%zu", i);
    return xstrdup(buf);
}

char *notebook_cell_id(const json_t *nb, size_t i)
{
    const json_t *id = json_object_get(json_array_get(cells_of(nb), i), "id");
    if (json_is_string(id) && json_string_length(id))
        return xstrdup(json_string_value(id));
    return index_id(i);
}

/* Drops terminal escapes (tracebacks are coloured with ESC[...m). */
static void plain(const char *s, size_t n, loom_str *out)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\x1b' && i + 1 < n && s[i + 1] == '[') {
            i += 2;
            while (i < n && !(s[i] >= '@' && s[i] <= '~'))
                i++;
            continue;
        }
        str_putc(out, s[i]);
    }
}

static void output_text(const json_t *o, loom_str *out)
{
    const char *type = json_get_str(o, "output_type", "");
    loom_str t = LOOM_STR_INIT;
    if (!strcmp(type, "stream")) {
        multiline(json_object_get(o, "text"), &t);
    } else if (!strcmp(type, "error")) {
        str_printf(&t, "%s: %s\n", json_get_str(o, "ename", "Error"), json_get_str(o, "evalue", ""));
        size_t i;
        json_t *line;
        json_array_foreach(json_object_get(o, "traceback"), i, line) if (json_is_string(line))
        {
            str_append(&t, json_string_value(line), json_string_length(line));
            str_putc(&t, '\n');
        }
    } else {
        /* execute_result, display_data: the text form, and the rest named. */
        const json_t *data = json_object_get(o, "data");
        multiline(json_object_get(data, "text/plain"), &t);
        const char *mime;
        json_t *v;
        json_object_foreach((json_t *)data, mime, v)
        {
            if (!strcmp(mime, "text/plain"))
                continue;
            loom_str body = LOOM_STR_INIT;
            multiline(v, &body);
            str_printf(&t, "%s[%s output, %zu bytes, not shown]", t.len ? "\n" : "", mime, body.len);
            str_free(&body);
        }
    }
    loom_str clean = LOOM_STR_INIT;
    plain(t.ptr ? t.ptr : "", t.len, &clean);
    str_free(&t);
    if (clean.len > NOTEBOOK_OUTPUT_MAX) {
        size_t keep = NOTEBOOK_OUTPUT_MAX;
        while (keep > 0 && ((unsigned char)clean.ptr[keep] & 0xC0) == 0x80)
            keep--; /* not inside a UTF-8 sequence */
        str_printf(out, "<output type=\"%s\">\n%.*s\n[… %zu more bytes of this output]\n</output>\n",
                   type, (int)keep, clean.ptr, clean.len - keep);
    } else {
        str_printf(out, "<output type=\"%s\">\n%s%s</output>\n", type, str_cstr(&clean),
                   clean.len && clean.ptr[clean.len - 1] != '\n' ? "\n" : "");
    }
    str_free(&clean);
}

static const char *language(const json_t *nb)
{
    const json_t *md = json_object_get(nb, "metadata");
    const char *l = json_get_str(json_object_get(md, "language_info"), "name", NULL);
    return l ? l : json_get_str(json_object_get(md, "kernelspec"), "language", "unknown");
}

void notebook_render(const json_t *nb, const char *path, size_t max, loom_str *out)
{
    const json_t *cells = cells_of(nb);
    size_t n = json_array_size(cells);
    str_printf(out, "Notebook %s: %zu cell%s, language %s.\n", path, n, n == 1 ? "" : "s",
               language(nb));
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(cells, i);
        loom_str one = LOOM_STR_INIT;
        char *id = notebook_cell_id(nb, i);
        const char *type = json_get_str(c, "cell_type", "code");
        const json_t *count = json_object_get(c, "execution_count");
        str_printf(&one, "<cell id=\"%s\" type=\"%s\"", id, type);
        if (json_is_integer(count))
            str_printf(&one, " execution_count=\"%lld\"", (long long)json_integer_value(count));
        str_puts(&one, ">\n");
        loom_str src = LOOM_STR_INIT;
        multiline(json_object_get(c, "source"), &src);
        str_append(&one, src.ptr ? src.ptr : "", src.len);
        if (src.len && src.ptr[src.len - 1] != '\n')
            str_putc(&one, '\n');
        str_free(&src);
        str_puts(&one, "</cell>\n");
        size_t k;
        json_t *o;
        json_array_foreach(json_object_get(c, "outputs"), k, o) if (json_is_object(o))
            output_text(o, &one);
        free(id);
        if (out->len + one.len > max) {
            str_printf(out, "[… %zu more cells not shown: the notebook is larger than Read "
                            "shows at once]\n", n - i);
            str_free(&one);
            return;
        }
        str_append(out, one.ptr, one.len);
        str_free(&one);
    }
}

/* The index of the cell the model names: its id, or "cell-N". -1 when none. */
static long find_cell(const json_t *nb, const char *cell_id)
{
    const json_t *cells = cells_of(nb);
    size_t i;
    json_t *c;
    json_array_foreach(cells, i, c)
    {
        const char *id = json_get_str(c, "id", NULL);
        if (id && !strcmp(id, cell_id))
            return (long)i;
    }
    if (strncmp(cell_id, "cell-", 5) != 0 || !isdigit((unsigned char)cell_id[5]))
        return -1;
    char *end;
    unsigned long k = strtoul(cell_id + 5, &end, 10);
    return *end == '\0' && k < json_array_size(cells) ? (long)k : -1;
}

/* nbformat's list form: every line keeps its newline, the last may lack one. */
static json_t *source_lines(const char *text)
{
    json_t *a = json_array();
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        p += n;
    }
    return a;
}

/* Ids are needed from nbformat 4.5 on (or when the other cells have them). */
static bool wants_ids(const json_t *nb)
{
    if (json_get_int(nb, "nbformat", 4) > 4 || json_get_int(nb, "nbformat_minor", 0) >= 5)
        return true;
    size_t i;
    json_t *c;
    json_array_foreach(cells_of(nb), i, c) if (json_object_get(c, "id")) return true;
    return false;
}

static char *fresh_id(const json_t *nb)
{
    for (;;) {
        unsigned char r[4] = {0};
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            r[0] = (unsigned char)rand(); /* an id only needs to be unique here */
        char id[16];
        snprintf(id, sizeof id, "%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
        if (find_cell(nb, id) < 0)
            return xstrdup(id);
    }
}

/* Sets the cell's type and source, and the keys that go with the type.
 * type may be the cell's own string: it is compared before it is replaced. */
static void shape_cell(json_t *c, const char *type, const char *source)
{
    json_t *old = json_object_get(c, "source");
    bool code = !strcmp(type, "code");
    json_object_set_new(c, "cell_type", json_string(code ? "code" : type));
    json_object_set_new(c, "source", json_is_string(old) ? json_string(source) : source_lines(source));
    if (!json_object_get(c, "metadata"))
        json_object_set_new(c, "metadata", json_object());
    if (code) {
        json_object_set_new(c, "execution_count", json_null());
        json_object_set_new(c, "outputs", json_array());
    } else {
        json_object_del(c, "execution_count");
        json_object_del(c, "outputs");
    }
}

int notebook_edit(json_t *nb, const char *mode, const char *cell_id, const char *cell_type,
                  const char *source, char **touched, loom_str *why)
{
    *touched = NULL;
    json_t *cells = cells_of(nb);
    mode = mode ? mode : "replace";
    if (cell_type && strcmp(cell_type, "code") != 0 && strcmp(cell_type, "markdown") != 0) {
        str_printf(why, "cell_type must be \"code\" or \"markdown\", not \"%s\".", cell_type);
        return 1;
    }
    long at = -1;
    if (cell_id) {
        at = find_cell(nb, cell_id);
        if (at < 0) {
            str_printf(why, "The notebook has no cell \"%s\" (it has %zu cells; use an id Read "
                            "shows, or cell-N for the N-th cell counting from 0).",
                       cell_id, json_array_size(cells));
            return 1;
        }
    }
    if (!strcmp(mode, "insert")) {
        if (!cell_type) {
            str_puts(why, "cell_type is required to insert a cell: \"code\" or \"markdown\".");
            return 1;
        }
        json_t *c = json_object();
        if (wants_ids(nb)) {
            *touched = fresh_id(nb);
            json_object_set_new(c, "id", json_string(*touched));
        }
        json_object_set_new(c, "source", source_lines(""));
        shape_cell(c, cell_type, source);
        size_t pos = (size_t)(at + 1);
        json_array_insert_new(cells, pos, c);
        if (!*touched)
            *touched = index_id(pos);
        return 0;
    }
    if (strcmp(mode, "replace") != 0 && strcmp(mode, "delete") != 0) {
        str_printf(why, "edit_mode must be \"replace\", \"insert\" or \"delete\", not \"%s\".", mode);
        return 1;
    }
    if (at < 0) {
        str_printf(why, "cell_id is required to %s a cell.", mode);
        return 1;
    }
    *touched = notebook_cell_id(nb, (size_t)at);
    if (!strcmp(mode, "delete")) {
        json_array_remove(cells, (size_t)at);
        return 0;
    }
    json_t *c = json_array_get(cells, (size_t)at);
    shape_cell(c, cell_type ? cell_type : json_get_str(c, "cell_type", "code"), source);
    return 0;
}

char *notebook_dump(const json_t *nb, size_t *len)
{
    char *s = json_dumps(nb, JSON_INDENT(1));
    loom_str out = LOOM_STR_INIT;
    str_puts(&out, s ? s : "{}");
    str_putc(&out, '\n');
    free(s);
    *len = out.len;
    return str_steal(&out);
}

/* entry.c — memory entry files and the MEMORY.md index (see entry.h).
 * Threading: none; the caller serializes writes to one directory. */
#include "ext/memory/entry.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/json.h"
#include "base/path.h"

const char *memory_entry_kind_name(memory_entry_kind k)
{
    switch (k) {
    case MEMORY_ENTRY_MEMORY: return "memory";
    case MEMORY_ENTRY_PATTERN: return "pattern";
    case MEMORY_ENTRY_FAILURE: return "failure";
    }
    return "memory";
}

bool memory_type_valid(const char *type)
{
    static const char *const types[] = {"user", "feedback", "project", "reference"};
    for (size_t i = 0; type && i < 4; i++)
        if (!strcmp(type, types[i]))
            return true;
    return false;
}

void memory_entry_clear(memory_entry *e)
{
    free(e->path);
    free(e->slug);
    free(e->name);
    free(e->description);
    free(e->type);
    free(e->created);
    free(e->updated);
    free(e->source_session);
    free(e->body);
    memset(e, 0, sizeof *e);
}

/* A frontmatter value as one line of text: strings as they are, numbers
 * and arrays (E1's "sessions") as compact JSON. */
static char *fm_text(const json_t *fm, const char *key)
{
    const json_t *v = json_object_get(fm, key);
    if (!v || json_is_null(v))
        return NULL;
    if (json_is_string(v))
        return json_string_length(v) ? xstrdup(json_string_value(v)) : NULL;
    if (json_is_object(v))
        return NULL;
    return json_dump_compact(v);
}

int memory_entry_parse(const char *text, size_t len, memory_entry *e, loom_str *why)
{
    memset(e, 0, sizeof *e);
    if (strlen(text) != len) {
        str_puts(why, "it holds a NUL byte");
        return -1;
    }
    const char *body = NULL;
    loom_error err;
    loom_error_clear(&err);
    json_t *fm = frontmatter_parse(text, &body, &err);
    if (!fm) {
        str_printf(why, "%s", err.code == FRONTMATTER_ERR_NONE ? "it has no frontmatter"
                                                               : err.message);
        return -1;
    }
    e->name = fm_text(fm, "name");
    e->description = fm_text(fm, "description");
    /* E1 files say kind, memories say type. */
    e->type = fm_text(fm, json_object_get(fm, "kind") ? "kind" : "type");
    e->created = fm_text(fm, json_object_get(fm, "first_seen") ? "first_seen" : "created");
    e->updated = fm_text(fm, json_object_get(fm, "last_seen") ? "last_seen" : "updated");
    e->source_session = fm_text(fm, json_object_get(fm, "sessions") ? "sessions"
                                                                   : "source_session");
    json_decref(fm);
    e->body = frontmatter_body_trim(body);
    if (!e->name || !e->description) {
        str_puts(why, "its frontmatter has no name or no description");
        memory_entry_clear(e);
        return -1;
    }
    if (strchr(e->name, '\n') || strchr(e->description, '\n')) {
        str_puts(why, "its name or description spans lines");
        memory_entry_clear(e);
        return -1;
    }
    return 0;
}

void memory_entries_free(memory_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memory_entry_clear(&v[i]);
    free(v);
}

int memory_read_regular(const char *path, size_t max, char **text, size_t *len)
{
    struct stat st;
    *text = NULL;
    *len = 0;
    if (lstat(path, &st) != 0)
        return 1;
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max)
        return -1;
    return file_read_all(path, text, len, NULL) == 0 ? 0 : -1;
}

bool memory_path_within(const char *p, const char *root)
{
    size_t n = root ? strlen(root) : 0;
    while (n > 1 && root[n - 1] == '/')
        n--;
    return p && n && !strncmp(p, root, n) && (p[n] == '\0' || p[n] == '/' || n == 1);
}

static bool ends_with_md(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".md");
}

void memory_entries_load(const char *dir, memory_entry_kind kind, memory_entry **v, size_t *n,
                         loom_str *skipped)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    size_t seen = 0;
    while ((de = readdir(d)) && seen < MEMORY_ENTRIES_MAX) {
        if (de->d_name[0] == '.' || !ends_with_md(de->d_name) ||
            !strcmp(de->d_name, "MEMORY.md"))
            continue;
        seen++;
        char *path = path_join(dir, de->d_name);
        struct stat st;
        /* lstat: a symlinked entry could name any file on the machine. */
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MEMORY_ENTRY_FILE_MAX) {
            if (skipped)
                str_printf(skipped, "%s: not a regular file under %d bytes\n", path,
                           MEMORY_ENTRY_FILE_MAX);
            free(path);
            continue;
        }
        char *text = NULL;
        size_t len = 0;
        memory_entry e;
        loom_str why = LOOM_STR_INIT;
        if (file_read_all(path, &text, &len, NULL) != 0 ||
            memory_entry_parse(text, len, &e, &why) != 0) {
            if (skipped)
                str_printf(skipped, "%s: %s\n", path, why.len ? why.ptr : "unreadable");
            str_free(&why);
            free(text);
            free(path);
            continue;
        }
        str_free(&why);
        free(text);
        e.path = path;
        e.slug = xstrndup(de->d_name, strlen(de->d_name) - 3);
        e.kind = kind;
        e.mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        *v = xrealloc(*v, (*n + 1) * sizeof **v);
        (*v)[(*n)++] = e;
    }
    closedir(d);
}

static void put_field(loom_str *out, const char *key, const char *value)
{
    if (!value)
        return;
    str_printf(out, "%s: ", key);
    json_put_string(out, value, strlen(value));
    str_putc(out, '\n');
}

char *memory_entry_render(const memory_entry *e)
{
    loom_str out = LOOM_STR_INIT;
    str_puts(&out, "---\n");
    put_field(&out, "name", e->name);
    put_field(&out, "description", e->description);
    put_field(&out, "type", e->type);
    put_field(&out, "created", e->created);
    put_field(&out, "updated", e->updated);
    put_field(&out, "source_session", e->source_session);
    str_puts(&out, "---\n\n");
    str_puts(&out, e->body ? e->body : "");
    if (!out.len || out.ptr[out.len - 1] != '\n')
        str_putc(&out, '\n');
    return str_steal(&out);
}

void memory_slugify(const char *name, char out[MEMORY_SLUG_MAX + 1])
{
    size_t n = 0;
    bool dash = false;
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++) {
        unsigned char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!word) {
            dash = n > 0;
            continue;
        }
        if (dash && n + 1 < MEMORY_SLUG_MAX)
            out[n++] = '-';
        dash = false;
        if (n >= MEMORY_SLUG_MAX)
            break;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    if (!n)
        snprintf(out, MEMORY_SLUG_MAX + 1, "memory");
}

bool memory_slug_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (!n || n > MEMORY_SLUG_MAX || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

char *memory_index_line(const memory_entry *e)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "- [%s](%s.md) — %s", e->name, e->slug, e->description);
    if (s.len > MEMORY_INDEX_LINE_MAX) {
        size_t cut = MEMORY_INDEX_LINE_MAX - 3; /* room for "…" (3 bytes) */
        while (cut > 0 && ((unsigned char)s.ptr[cut] & 0xC0) == 0x80)
            cut--;
        str_truncate(&s, cut);
        str_puts(&s, "…");
    }
    for (size_t i = 0; i < s.len; i++)
        if (s.ptr[i] == '\n' || s.ptr[i] == '\r')
            s.ptr[i] = ' ';
    return str_steal(&s);
}

/* The line points at slug's file: "(slug.md)" in it. */
static bool line_names(const char *line, size_t len, const char *slug)
{
    if (!slug)
        return false;
    char pat[MEMORY_SLUG_MAX + 8];
    snprintf(pat, sizeof pat, "(%s.md)", slug);
    size_t pl = strlen(pat);
    for (size_t i = 0; i + pl <= len; i++)
        if (!memcmp(line + i, pat, pl))
            return true;
    return false;
}

int memory_index_update(const char *dir, const char *remove, const memory_entry *add,
                        loom_error *err)
{
    char *path = path_join(dir, "MEMORY.md");
    char *old = NULL;
    size_t len = 0;
    if (memory_read_regular(path, 4 * 1024 * 1024, &old, &len) < 0) {
        loom_error_set(err, LOOM_ERR_IO, "%s is not a regular file: the index is not updated",
                       path);
        free(path);
        return -1;
    }
    loom_str out = LOOM_STR_INIT;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(old + pos, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - (old + pos)) : len - pos;
        if (!line_names(old + pos, ll, remove) && !line_names(old + pos, ll, add ? add->slug : NULL)) {
            str_append(&out, old + pos, ll);
            str_putc(&out, '\n');
        }
        pos += ll + (nl ? 1 : 0);
    }
    if (add) {
        char *line = memory_index_line(add);
        str_puts(&out, line);
        str_putc(&out, '\n');
        free(line);
    }
    int rc = file_write_atomic(path, out.ptr ? out.ptr : "", out.len, 0644, err);
    str_free(&out);
    free(old);
    free(path);
    return rc;
}

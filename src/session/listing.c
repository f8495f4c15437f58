/* listing.c — sessions described for a person: titles, first prompts,
 * counts (listing.h). Reads files line by line; never writes. */
#include "session/listing.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "session/record.h"
#include "session/store.h"

/* A line longer than this is a tool result or an image, never a prompt
 * worth listing; it is skipped without parsing. */
#define LISTING_LINE_MAX (1024 * 1024)

char *session_title_from_prompt(const char *prompt)
{
    if (!prompt)
        return NULL;
    const char *p = prompt;
    /* A REPL `!cmd`'s output the prompt carries is not what it is about. */
    for (;;) {
        p += strspn(p, " \t\r\n");
        const char *end = strncmp(p, "<bash-input>", 12) ? NULL : strstr(p, "</bash-stderr>");
        if (!end)
            break;
        p = end + strlen("</bash-stderr>");
    }
    /* The first line with something visible on it. */
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p != '\n')
            break;
        p++;
    }
    size_t len = strcspn(p, "\n");
    loom_str t = LOOM_STR_INIT;
    size_t chars = 0, last_break = 0, last_break_chars = 0;
    bool cut = false, blank = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f) {
            if (c == '\t')
                blank = true;
            continue; /* control bytes never reach a terminal line */
        }
        if (c == ' ') {
            blank = true;
            continue;
        }
        if ((c & 0xc0) == 0x80) { /* a continuation byte: part of the last character */
            if (t.len)
                str_putc(&t, (char)c);
            continue;
        }
        if (blank && t.len) {
            if (chars + 1 >= SESSION_TITLE_MAX) {
                cut = true;
                break;
            }
            last_break = t.len;
            last_break_chars = chars;
            str_putc(&t, ' ');
            chars++;
        }
        blank = false;
        if (chars >= SESSION_TITLE_MAX) {
            cut = true;
            break;
        }
        str_putc(&t, (char)c);
        chars++;
    }
    if (cut) {
        /* Back to the last word boundary when one is near enough. */
        if (last_break && last_break_chars >= SESSION_TITLE_MAX / 2)
            t.len = last_break;
        else {
            /* Drop characters until one fits the ellipsis. */
            while (t.len && chars >= SESSION_TITLE_MAX) {
                do
                    t.len--;
                while (t.len && ((unsigned char)t.ptr[t.len] & 0xc0) == 0x80);
                chars--;
            }
        }
        t.ptr[t.len] = '\0';
        str_puts(&t, "\xe2\x80\xa6");
    }
    if (!t.len) {
        str_free(&t);
        return NULL;
    }
    return str_steal(&t);
}

/* The prompt's text: the text blocks of a user message joined. */
static char *prompt_text(const json_t *rec)
{
    loom_str s = LOOM_STR_INIT;
    size_t k;
    json_t *b;
    json_array_foreach(json_get_arr(rec, "content"), k, b) {
        const char *t = json_get_str(b, "text", NULL);
        if (t && *t)
            str_printf(&s, "%s%s", s.len ? "\n" : "", t);
    }
    if (!s.len) {
        str_free(&s);
        return NULL;
    }
    return str_steal(&s);
}

static bool has_text(const json_t *rec)
{
    size_t k;
    json_t *b;
    json_array_foreach(json_get_arr(rec, "content"), k, b) {
        const char *t = json_get_str(b, "text", NULL);
        if (t && *t)
            return true;
    }
    return false;
}

typedef struct scan {
    char *first;
    char *custom_own, *title_own, *created;
    long long messages;
} scan;

static void keep(char **slot, const char *value)
{
    free(*slot);
    *slot = value ? xstrdup(value) : NULL;
}

static void scan_line(scan *s, const char *line, size_t n)
{
    if (n == 0 || n > LISTING_LINE_MAX || line[0] != '{')
        return;
    json_error_t jerr;
    json_t *rec = json_loadb(line, n, JSON_DISABLE_EOF_CHECK, &jerr);
    if (!json_is_object(rec)) {
        json_decref(rec);
        return;
    }
    const char *type = json_get_str(rec, "type", "");
    if (!s->created) {
        const char *at = json_get_str(rec, "createdAt", NULL);
        if (!at || strcmp(type, RECORD_SESSION_META) != 0)
            at = json_get_str(rec, "timestamp", NULL);
        if (at)
            keep(&s->created, at);
    }
    if (!strcmp(type, RECORD_MESSAGE) && !record_skip_run(rec)) {
        const char *role = json_get_str(rec, "role", "");
        if (!strcmp(role, "user") && has_text(rec) && !record_resume_note(rec)) {
            s->messages++;
            if (!s->first)
                s->first = prompt_text(rec);
        } else if (!strcmp(role, "assistant") && has_text(rec)) {
            s->messages++;
        }
    } else if (!strcmp(type, RECORD_CUSTOM_TITLE)) {
        const char *t = json_get_str(rec, "customTitle", json_get_str(rec, "title", NULL));
        if (t && *t)
            keep(&s->custom_own, t);
    } else if (!strcmp(type, RECORD_TITLE) || !strcmp(type, RECORD_AI_TITLE)) {
        const char *t = json_get_str(rec, "title", json_get_str(rec, "aiTitle", NULL));
        if (t && *t)
            keep(&s->title_own, t);
    }
    json_decref(rec);
}

json_t *session_describe_text(const char *id, const char *path, const char *text, size_t len)
{
    scan s = {0};
    size_t lines = 0;
    for (size_t at = 0; at < len && lines < LISTING_SCAN_LINES; lines++) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        scan_line(&s, text + at, n);
        at += n + 1;
    }
    json_t *o = json_object();
    json_set_str(o, "id", id);
    /* A title is shown on one terminal line: it is made one here too. */
    char *title = session_title_from_prompt(s.custom_own   ? s.custom_own
                                            : s.title_own ? s.title_own
                                                          : s.first);
    if (title)
        json_set_str(o, "title", title);
    free(title);
    if (s.created) {
        json_set_str(o, "created", s.created);
        json_set_str(o, "modified", s.created);
    }
    if (s.first)
        json_set_str(o, "first_prompt", s.first);
    json_object_set_new(o, "messages", json_integer(s.messages));
    if (path)
        json_set_str(o, "path", path);
    free(s.first);
    free(s.custom_own);
    free(s.title_own);
    free(s.created);
    return o;
}

json_t *session_describe(const char *path)
{
    /* A session that is mostly tool output can be large: what a list
     * shows is in its first LISTING_READ_MAX bytes. */
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat fst;
    size_t cap = fstat(fileno(f), &fst) == 0 && fst.st_size >= 0 &&
                         (unsigned long long)fst.st_size < LISTING_READ_MAX
                     ? (size_t)fst.st_size
                     : LISTING_READ_MAX;
    char *data = xmalloc(cap + 1);
    size_t len = fread(data, 1, cap, f);
    fclose(f);
    data[len] = '\0';
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t blen = strlen(base);
    char *id = xstrndup(base, blen > 6 && !strcmp(base + blen - 6, ".jsonl") ? blen - 6 : blen);
    json_t *o = session_describe_text(id, path, data, len);
    free(id);
    free(data);
    struct stat st;
    if (stat(path, &st) == 0) {
        char iso[32];
        clock_iso8601((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000, iso);
        json_set_str(o, "modified", iso);
        json_object_set_new(o, "_mtime_ns",
                            json_integer((json_int_t)st.st_mtim.tv_sec * 1000000000 +
                                         st.st_mtim.tv_nsec));
    }
    return o;
}

static int newest_first(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    long long tx = json_get_int(x, "_mtime_ns", 0), ty = json_get_int(y, "_mtime_ns", 0);
    if (tx != ty)
        return tx < ty ? 1 : -1;
    /* UUIDv7 ids sort by creation time. */
    return strcmp(json_get_str(y, "id", ""), json_get_str(x, "id", ""));
}

json_t *session_list(const char *cwd, const char *keep_id)
{
    char *dir = store_project_dir(cwd);
    json_t **items = NULL;
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len <= 6 || strcmp(e->d_name + len - 6, ".jsonl") != 0)
            continue;
        char *path = path_join(dir, e->d_name);
        struct stat st;
        json_t *o = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? session_describe(path) : NULL;
        free(path);
        if (!o)
            continue;
        bool kept = keep_id && !strcmp(json_get_str(o, "id", ""), keep_id);
        if (!json_object_get(o, "first_prompt") && !kept) {
            json_decref(o);
            continue;
        }
        items = xrealloc(items, (n + 1) * sizeof *items);
        items[n++] = o;
    }
    if (d)
        closedir(d);
    if (n)
        qsort(items, n, sizeof *items, newest_first);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_object_del(items[i], "_mtime_ns");
        json_array_append_new(arr, items[i]);
    }
    free(items);
    free(dir);
    return arr;
}

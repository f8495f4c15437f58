/* entry.c — one M_f entry file (a pattern or a failure): its frontmatter
 * read and written, and one run's observation added to it.
 *
 * The format is a contract with the memory recall (ext/memory/, which
 * reads these files) and with docs/evolve.md: change neither alone. One
 * file per signature: the name is the signature's slug, so the same
 * signature always lands in the same file. The files are untrusted on
 * read (a person or a repository may have written them): every problem is
 * an error naming the file and the field. No state; any thread (callers
 * hold the M_f lock around observe). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "base/utf8.h"
#include "ext/evolve/evolve_internal.h"

#define MF_SESSIONS_MAX 1000 /* a list longer than this keeps its newest */

void mf_entry_free(mf_entry *e)
{
    if (!e)
        return;
    free(e->name);
    free(e->description);
    free(e->kind);
    free(e->signature);
    strv_free(e->sessions);
    free(e->first_seen);
    free(e->last_seen);
    free(e->body);
    memset(e, 0, sizeof *e);
}

static int need_str(const json_t *fm, const char *key, const char *path, char **out,
                    loom_error *err)
{
    const json_t *v = json_object_get(fm, key);
    if (!json_is_string(v) || !json_string_length(v))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: frontmatter %s must be a non-empty string",
                              path, key);
    if (strlen(json_string_value(v)) != json_string_length(v))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: frontmatter %s holds a NUL byte", path,
                              key);
    *out = xstrdup(json_string_value(v));
    return 0;
}

int mf_entry_parse(const char *text, const char *path, mf_entry *e, loom_error *err)
{
    memset(e, 0, sizeof *e);
    const char *body = NULL;
    loom_error ferr;
    loom_error_clear(&ferr);
    json_t *fm = frontmatter_parse(text, &body, &ferr);
    if (!fm)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, ferr.message);
    int rc = 0;
    static const char *const keys[] = {"name", "description", "kind", "signature", "first_seen",
                                       "last_seen"};
    char **slots[] = {&e->name, &e->description, &e->kind, &e->signature, &e->first_seen,
                      &e->last_seen};
    for (size_t i = 0; i < sizeof keys / sizeof *keys && rc == 0; i++)
        rc = need_str(fm, keys[i], path, slots[i], err);
    if (rc == 0 && strcmp(e->kind, "pattern") != 0 && strcmp(e->kind, "failure") != 0)
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "%s: frontmatter kind must be pattern or failure, not \"%.40s\"", path,
                            e->kind);
    if (rc == 0 && strchr(e->description, '\n'))
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: frontmatter description must be one line",
                            path);
    const json_t *seen = json_object_get(fm, "seen");
    /* Capped: the file is untrusted, and seen + 1 of a huge one overflows. */
    if (rc == 0 && (!json_is_integer(seen) || json_integer_value(seen) < 1 ||
                    json_integer_value(seen) > MF_SEEN_MAX))
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "%s: frontmatter seen must be an integer from 1 to %d", path,
                            MF_SEEN_MAX);
    if (rc == 0)
        e->seen = json_integer_value(seen);
    const json_t *ss = json_object_get(fm, "sessions");
    if (rc == 0 && !json_is_array(ss))
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: frontmatter sessions must be a list", path);
    if (rc == 0) {
        size_t n = json_array_size(ss), from = n > MF_SESSIONS_MAX ? n - MF_SESSIONS_MAX : 0;
        e->sessions = xcalloc(n - from + 1, sizeof *e->sessions);
        for (size_t i = from, k = 0; i < n; i++) {
            const json_t *s = json_array_get(ss, i);
            if (!json_is_string(s) || !json_string_length(s) ||
                strlen(json_string_value(s)) != json_string_length(s)) {
                rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                    "%s: frontmatter sessions item %zu must be a string", path,
                                    i + 1);
                break;
            }
            e->sessions[k++] = xstrdup(json_string_value(s));
        }
    }
    json_decref(fm);
    if (rc != 0) {
        mf_entry_free(e);
        return rc;
    }
    e->body = xstrdup(body ? body : "");
    return 0;
}

/* value as a YAML double-quoted scalar: every character outside YAML's
 * printable set (controls, DEL, C1, U+FFFE/U+FFFF) and '"' and '\\'
 * escaped, and the line breaks U+2028/U+2029 that YAML would fold,
 * invalid UTF-8 replaced by U+FFFD — so what is written always
 * reads back as the same string (the fuzz target checks it). */
static void put_yaml_string(loom_str *s, const char *value)
{
    size_t left;
    char *v = utf8_sanitize(value ? value : "", strlen(value ? value : ""), &left);
    str_putc(s, '"');
    for (const unsigned char *p = (const unsigned char *)v; left;) {
        size_t n = utf8_seq_len(p, left);
        unsigned cp = *p;
        if (n == 2)
            cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        else if (n == 3)
            cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
        if (cp == '"' || cp == '\\')
            str_printf(s, "\\%c", (char)cp);
        else if (cp == '\n')
            str_puts(s, "\\n");
        else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
            str_printf(s, "\\x%02X", cp);
        else if (cp == 0xFFFE || cp == 0xFFFF || cp == 0x2028 || cp == 0x2029)
            /* not printable, or a YAML line break (folded inside quotes) */
            str_printf(s, "\\u%04X", cp);
        else
            str_append(s, p, n ? n : 1);
        left -= n ? n : 1;
        p += n ? n : 1;
    }
    str_putc(s, '"');
    free(v);
}

static void put_q(loom_str *s, const char *key, const char *value)
{
    str_printf(s, "%s: ", key);
    put_yaml_string(s, value);
    str_putc(s, '\n');
}

char *mf_entry_render(const mf_entry *e)
{
    loom_str s = {0};
    str_puts(&s, "---\n");
    put_q(&s, "name", e->name);
    put_q(&s, "description", e->description);
    str_printf(&s, "kind: %s\n", e->kind);
    put_q(&s, "signature", e->signature);
    str_printf(&s, "seen: %lld\n", e->seen);
    str_puts(&s, "sessions: [");
    for (size_t i = 0; e->sessions && e->sessions[i]; i++) {
        if (i)
            str_puts(&s, ", ");
        put_yaml_string(&s, e->sessions[i]);
    }
    str_puts(&s, "]\n");
    put_q(&s, "first_seen", e->first_seen);
    put_q(&s, "last_seen", e->last_seen);
    str_puts(&s, "---\n");
    /* The body holds tool output: made valid UTF-8 like the rest. */
    size_t n;
    char *body = utf8_sanitize(e->body ? e->body : "", strlen(e->body ? e->body : ""), &n);
    str_append(&s, body, n);
    free(body);
    return str_steal(&s);
}

char *mf_slug(const char *signature, size_t max_words_len)
{
    loom_str s = {0};
    bool dash = false;
    for (const char *p = signature; *p && s.len < max_words_len; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && s.len)
                str_putc(&s, '-');
            str_putc(&s, c);
            dash = false;
        } else {
            dash = true;
        }
    }
    uint64_t h = hash_fnv1a64(0, signature, strlen(signature));
    str_printf(&s, "%s%08x", s.len ? "-" : "", (unsigned)(h & 0xffffffffu));
    return str_steal(&s);
}

/* The evidence lines ("- …") under "## Evidence" of an old body. */
static json_t *evidence_lines(const char *body)
{
    json_t *out = json_array();
    const char *p = body ? strstr(body, "\n## Evidence\n") : NULL;
    if (!p)
        return out;
    p += strlen("\n## Evidence\n");
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > 2 && p[0] == '-' && p[1] == ' ') {
            char *line = xstrndup(p + 2, n - 2);
            json_array_append_new(out, json_string(line));
            free(line);
        }
        p += n + (nl ? 1 : 0);
    }
    return out;
}

static char *body_of(const mf_observation *o, const json_t *lines)
{
    loom_str s = {0};
    str_printf(&s, "\n# %s\n\n%s\n\n## Evidence\n", o->name, o->summary);
    size_t n = json_array_size(lines), from = n > MF_EVIDENCE_KEEP ? n - MF_EVIDENCE_KEEP : 0;
    for (size_t i = from; i < n; i++)
        str_printf(&s, "- %s\n", json_string_value(json_array_get(lines, i)));
    return str_steal(&s);
}

/* A line of the body may not start a frontmatter block or a heading of its own. */
static char *one_line(const char *text)
{
    char *t = xstrdup(text ? text : "");
    for (char *p = t; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    return t;
}

int mf_entry_observe(const char *dir, const mf_observation *o, mf_entry *out, char **path_out,
                     loom_error *err)
{
    if (file_mkdirs(dir, 0755, err) != 0)
        return -LOOM_ERR_IO;
    char *slug = mf_slug(o->signature, 48);
    char now[32];
    evolve_now(now);
    char *evidence = one_line(o->evidence);
    int rc = 0;
    for (int attempt = 1; attempt < 50; attempt++) {
        char name[160];
        if (attempt == 1)
            snprintf(name, sizeof name, "%s.md", slug);
        else
            snprintf(name, sizeof name, "%s-%d.md", slug, attempt);
        char *path = path_join(dir, name);
        mf_entry e;
        memset(&e, 0, sizeof e);
        bool fresh = !file_exists(path);
        if (!fresh) {
            loom_str why = {0};
            char *text = file_read_text(path, MF_ENTRY_MAX_BYTES, FILE_TEXT_NOFOLLOW, &why);
            loom_error perr;
            loom_error_clear(&perr);
            if (!text || mf_entry_parse(text, path, &e, &perr) != 0) {
                /* A file of ours that does not read is replaced: it holds
                 * nothing the next runs could use. */
                fresh = true;
            } else if (strcmp(e.signature, o->signature) != 0 || strcmp(e.kind, o->kind) != 0) {
                free(text);
                str_free(&why);
                mf_entry_free(&e);
                free(path);
                continue;
            }
            free(text);
            str_free(&why);
        }
        json_t *lines = fresh ? json_array() : evidence_lines(e.body);
        json_array_append_new(lines, json_string(evidence));
        if (fresh) {
            mf_entry_free(&e);
            e.kind = xstrdup(o->kind);
            e.signature = xstrdup(o->signature);
            e.first_seen = xstrdup(now);
            e.sessions = xcalloc(1, sizeof *e.sessions);
        }
        free(e.name);
        e.name = one_line(o->name);
        free(e.description);
        e.description = one_line(o->description);
        e.seen = fresh ? 1 : e.seen + 1;
        free(e.last_seen);
        e.last_seen = xstrdup(now);
        bool have = false;
        size_t ns = 0;
        for (; e.sessions[ns]; ns++)
            have = have || strcmp(e.sessions[ns], o->session_id) == 0;
        if (!have && ns >= MF_SESSIONS_KEEP) {
            /* The newest only: an ever longer list would pass the file's
             * read cap, and an entry that no longer reads starts over at
             * seen 1. */
            size_t drop = ns - MF_SESSIONS_KEEP + 1;
            for (size_t k = 0; k < drop; k++)
                free(e.sessions[k]);
            memmove(e.sessions, e.sessions + drop, (ns - drop + 1) * sizeof *e.sessions);
            ns -= drop;
        }
        if (!have) {
            e.sessions = xrealloc(e.sessions, (ns + 2) * sizeof *e.sessions);
            e.sessions[ns] = xstrdup(o->session_id);
            e.sessions[ns + 1] = NULL;
        }
        free(e.body);
        e.body = body_of(o, lines);
        json_decref(lines);
        char *text = mf_entry_render(&e);
        rc = file_write_atomic(path, text, strlen(text), 0644, err);
        free(text);
        if (rc == 0 && out)
            *out = e;
        else
            mf_entry_free(&e);
        if (rc == 0 && path_out)
            *path_out = path;
        else
            free(path);
        break;
    }
    free(evidence);
    free(slug);
    return rc;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *mf_entry_list(const char *dir, json_t *warnings)
{
    json_t *out = json_array();
    DIR *dh = opendir(dir);
    if (!dh)
        return out;
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL && n < 10000) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 4 || strcmp(de->d_name + len - 3, ".md") != 0)
            continue;
        names = xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = xstrdup(de->d_name);
    }
    closedir(dh);
    if (n)
        qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        char *path = path_join(dir, names[i]);
        loom_str why = {0};
        char *text = file_read_text(path, MF_ENTRY_MAX_BYTES, FILE_TEXT_NOFOLLOW | FILE_TEXT_NO_NUL,
                                    &why);
        mf_entry e;
        loom_error err;
        loom_error_clear(&err);
        if (!text) {
            if (warnings)
                json_array_append_new(warnings,
                                      json_sprintf("%s: %s", path, str_cstr(&why)));
        } else if (mf_entry_parse(text, path, &e, &err) != 0) {
            if (warnings)
                json_array_append_new(warnings, json_string(err.message));
        } else {
            json_t *sess = json_array();
            for (size_t k = 0; e.sessions[k]; k++)
                json_array_append_new(sess, json_string(e.sessions[k]));
            json_array_append_new(
                out, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:o,s:s,s:s,s:s}", "path", path, "name",
                               e.name, "description", e.description, "kind", e.kind, "signature",
                               e.signature, "seen", (json_int_t)e.seen, "sessions", sess,
                               "first_seen", e.first_seen, "last_seen", e.last_seen, "body",
                               e.body));
            mf_entry_free(&e);
        }
        free(text);
        str_free(&why);
        free(path);
        free(names[i]);
    }
    free(names);
    return out;
}

/* apply.c — the write rules (see apply.h). Threading: the caller's. */
#include "ext/memory/apply.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"
#include "ext/memory/entry.h"
#include "policy/secret_scan.h"

static void today(int64_t now_ms, char out[16])
{
    time_t t = (time_t)(now_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 16, "%Y-%m-%d", &tm);
}

static memory_entry *find_slug(memory_entry *v, size_t n, const char *slug)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].slug && !strcmp(v[i].slug, slug))
            return &v[i];
    return NULL;
}

/* Bodies equal but for case and blanks: the same fact said again. */
static bool same_text(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    for (;;) {
        while (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r' || *a == '.')
            a++;
        while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r' || *b == '.')
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (ca != cb)
            return false;
        a++, b++;
    }
}

/* The kind of the first credential in the op's text, or NULL; *in_name:
 * it is in the name, which the report then withholds. */
static const char *secret_in(const memory_op *op, bool *in_name)
{
    const char *parts[] = {op->name, op->description, op->body, op->target};
    for (size_t i = 0; i < 4; i++) {
        secret_hit hit;
        if (parts[i] && secret_scan(parts[i], strlen(parts[i]), &hit, 1) > 0) {
            *in_name = i == 0 || i == 3;
            return hit.kind;
        }
    }
    return NULL;
}

static int write_entry(const char *dir, memory_entry *e, loom_str *why)
{
    char file[MEMORY_SLUG_MAX + 8];
    snprintf(file, sizeof file, "%s.md", e->slug);
    char *path = path_join(dir, file);
    char *text = memory_entry_render(e);
    loom_error err;
    loom_error_clear(&err);
    int rc = file_write_atomic(path, text, strlen(text), 0644, &err);
    if (rc == 0)
        rc = memory_index_update(dir, NULL, e, &err);
    if (rc != 0)
        str_printf(why, "%s", err.message);
    free(text);
    free(path);
    return rc == 0 ? 0 : -1;
}

/* A slug for name that no other file in dir has. */
static void fresh_slug(const char *dir, const char *name, char out[MEMORY_SLUG_MAX + 1])
{
    char base[MEMORY_SLUG_MAX + 1];
    memory_slugify(name, base);
    snprintf(out, MEMORY_SLUG_MAX + 1, "%s", base);
    for (int k = 2; k < 100; k++) {
        char file[MEMORY_SLUG_MAX + 8];
        snprintf(file, sizeof file, "%s.md", out);
        char *p = path_join(dir, file);
        bool taken = access(p, F_OK) == 0;
        free(p);
        if (!taken)
            return;
        char sfx[8];
        int sl = snprintf(sfx, sizeof sfx, "-%d", k);
        size_t keep = strlen(base);
        if (keep + (size_t)sl > MEMORY_SLUG_MAX)
            keep = MEMORY_SLUG_MAX - (size_t)sl;
        snprintf(out, MEMORY_SLUG_MAX + 1, "%.*s%s", (int)keep, base, sfx);
    }
}

static int merge_into(const char *dir, memory_entry *old, const char *date, json_t *report,
                      loom_str *why)
{
    free(old->updated);
    old->updated = xstrdup(date);
    if (write_entry(dir, old, why) != 0)
        return -1;
    json_array_append_new(json_object_get(report, "merged"), json_string(old->slug));
    return 0;
}

/* The note a replacement leaves: what it replaced, and when. */
static char *replaced_body(const memory_op *op, const memory_entry *old, const char *date,
                           const char *session)
{
    loom_str b = LOOM_STR_INIT;
    str_puts(&b, op->body);
    str_printf(&b, "\n\nReplaces `%s` on %s (session %s), which said: %s", old->slug, date,
               session, old->description);
    if (old->created)
        str_printf(&b, " (recorded %s)", old->created);
    str_putc(&b, '\n');
    return str_steal(&b);
}

static int apply_one(const char *dir, const memory_op *op, memory_entry *v, size_t n,
                     const char *session, const char *date, json_t *report, loom_str *why)
{
    memory_entry *old = op->target ? find_slug(v, n, op->target) : NULL;
    if (op->target && !old) { /* an earlier replacement of this reply removed it */
        str_printf(why, "the entry \"%s\" is gone", op->target);
        return -1;
    }
    if (op->op == MEMORY_OP_MERGE)
        return merge_into(dir, old, date, report, why);
    if (op->op == MEMORY_OP_ADD) {
        char slug[MEMORY_SLUG_MAX + 1];
        memory_slugify(op->name, slug);
        memory_entry *dup = find_slug(v, n, slug);
        for (size_t i = 0; !dup && i < n; i++)
            if (same_text(v[i].body, op->body))
                dup = &v[i];
        if (dup)
            return merge_into(dir, dup, date, report, why);
    }
    memory_entry e = {0};
    char slug[MEMORY_SLUG_MAX + 1];
    fresh_slug(dir, op->name, slug);
    if (old && !strcmp(old->slug, slug))
        snprintf(slug, sizeof slug, "%s", old->slug); /* a replacement may keep the name */
    e.slug = xstrdup(slug);
    e.name = xstrdup(op->name);
    e.description = xstrdup(op->description);
    e.type = xstrdup(op->type);
    e.created = xstrdup(date);
    e.updated = xstrdup(date);
    e.source_session = xstrdup(session);
    e.body = old ? replaced_body(op, old, date, session) : xstrdup(op->body);
    int rc = write_entry(dir, &e, why);
    if (rc == 0 && old) {
        if (strcmp(old->slug, e.slug) != 0) {
            loom_error err;
            unlink(old->path);
            memory_index_update(dir, old->slug, NULL, &err);
        }
        json_array_append_new(json_object_get(report, "replaced"),
                              json_pack("{s:s,s:s}", "slug", e.slug, "replaced", old->slug));
    } else if (rc == 0) {
        json_array_append_new(json_object_get(report, "written"), json_string(e.slug));
    }
    memory_entry_clear(&e);
    return rc;
}

static int apply_locked(const char *dir, const memory_reply *reply, const char *session_id,
                        int64_t now_ms, json_t *report, loom_str *why);

int memory_apply(const char *dir, const memory_reply *reply, const char *session_id,
                 int64_t now_ms, json_t *report, loom_str *why)
{
    /* Two sessions of the project may end at once: each reads the
     * entries and MEMORY.md, then writes them back. Under one flock of
     * <dir>/.lock (a dot file: never an entry) neither loses the other's
     * index line or entry. Unlocked when it cannot be had: a lost index
     * line beats a lost extraction. */
    char *lp = path_join(dir, ".lock");
    int lock = file_lock(lp);
    free(lp);
    int rc = apply_locked(dir, reply, session_id, now_ms, report, why);
    file_unlock(lock);
    return rc;
}

static int apply_locked(const char *dir, const memory_reply *reply, const char *session_id,
                        int64_t now_ms, json_t *report, loom_str *why)
{
    static const char *const lists[] = {"written", "merged", "replaced", "dropped"};
    for (size_t i = 0; i < 4; i++)
        if (!json_object_get(report, lists[i]))
            json_object_set_new(report, lists[i], json_array());
    /* The index first: one that is a symlink is never followed, and
     * nothing is written beside an index that cannot be kept. */
    char *index = path_join(dir, "MEMORY.md");
    char *itext = NULL;
    size_t ilen = 0;
    int irc = memory_read_regular(index, 4 * 1024 * 1024, &itext, &ilen);
    free(itext);
    if (irc < 0) {
        str_printf(why, "%s is not a regular file (a symlink?): nothing was written", index);
        free(index);
        return -1;
    }
    free(index);
    memory_entry *v = NULL;
    size_t n = 0;
    memory_entries_load(dir, MEMORY_ENTRY_MEMORY, &v, &n, NULL);
    /* Every target first: a reply that names what is not there is wrong
     * about the memory as a whole, so none of it is written. */
    for (size_t i = 0; i < reply->n; i++) {
        if (reply->ops[i].target && !find_slug(v, n, reply->ops[i].target)) {
            str_printf(why, "memories[%zu].target \"%s\" is no entry of %s", i,
                       reply->ops[i].target, dir);
            memory_entries_free(v, n);
            return -1;
        }
    }
    char date[16];
    today(now_ms, date);
    int rc = 0;
    for (size_t i = 0; i < reply->n && rc == 0; i++) {
        const memory_op *op = &reply->ops[i];
        bool in_name = false;
        const char *kind = secret_in(op, &in_name);
        if (kind) {
            char msg[160];
            snprintf(msg, sizeof msg, "it holds a credential (%s); memories never store secrets",
                     kind);
            json_array_append_new(json_object_get(report, "dropped"),
                                  json_pack("{s:s,s:s}", "name",
                                            in_name ? "[withheld]"
                                                    : op->name ? op->name : op->target,
                                            "why", msg));
            continue;
        }
        rc = apply_one(dir, op, v, n, session_id, date, report, why);
        /* The folder changed: the next op sees what this one wrote. */
        memory_entries_free(v, n);
        v = NULL;
        n = 0;
        memory_entries_load(dir, MEMORY_ENTRY_MEMORY, &v, &n, NULL);
    }
    memory_entries_free(v, n);
    return rc;
}

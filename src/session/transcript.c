/* transcript.c — the session file: loading with damage tolerance, appending
 * one whole line at a time, walking the tree, fork and edit-and-resend.
 *
 * Records live in memory as slots in file order (transcript_priv.h): the
 * tree's fields, found by id through the table in transcript_slots.c, and
 * the record itself, parsed up front for a buffer or a damaged file, or on
 * first use for a file opened through its index (transcript_open.c). The
 * file is only appended to after the open; the one exception is the repair
 * of a torn final line, truncated away before the first append (see
 * repair_tail).
 *
 * A hole in the middle of the file (a line garbled or deleted) leaves a
 * record whose parent is not there, and a walk from the leaf would stop at
 * it: the history before the hole would silently vanish from the next
 * request. The loader reconnects such an orphan to the record just before
 * it when that is unambiguous (see repair_gaps) — in memory only, the file
 * keeps its bytes — and transcript_check refuses a session whose active
 * chain still breaks, so a surface never sends a truncated history.
 */
#include "session/transcript.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "session/record.h"
#include "session/session_index.h"
#include "session/transcript_priv.h"

/* A damaged file can hold a warning per line; keeping them all would let a
 * garbage file cost memory in proportion to its size for no reader's gain. */
#define MAX_WARNINGS 100
/* Damaged lines remembered by number, to explain a gap; past this the
 * file is mostly garbage and a gap is described without them. */
#define MAX_BAD_LINES 1000
#define warn tr_warn

/* Warnings quote ids and bytes from the file, which anyone may have
 * written: control characters become '?' so a warning cannot drive the
 * terminal it is printed on, and a huge id cannot make a huge warning. */
#define WARNING_MAX_BYTES 1000

static void clean_text(loom_str *s)
{
    if (s->len > WARNING_MAX_BYTES) {
        size_t cut = WARNING_MAX_BYTES;
        while (cut > 0 && ((unsigned char)s->ptr[cut] & 0xC0) == 0x80)
            cut--;
        s->len = cut;
        s->ptr[cut] = '\0';
        str_puts(s, "…");
    }
    for (size_t i = 0; i < s->len; i++)
        if ((unsigned char)s->ptr[i] < 0x20 || s->ptr[i] == 0x7f)
            s->ptr[i] = '?';
}

void tr_warn(transcript *t, const char *fmt, ...)
{
    loom_str s = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    clean_text(&s);
    /* The same walk runs before every model call; one broken edge should
     * read as one warning, not one per turn. */
    for (size_t i = 0; i < t->n_warnings; i++) {
        if (strcmp(t->warnings[i], str_cstr(&s)) == 0) {
            str_free(&s);
            return;
        }
    }
    if (t->n_warnings >= MAX_WARNINGS) {
        t->suppressed++;
        str_free(&s);
        return;
    }
    LOG_W("session", "%s", str_cstr(&s));
    t->warnings = xrealloc(t->warnings, (t->n_warnings + 1) * sizeof *t->warnings);
    t->warnings[t->n_warnings++] = str_steal(&s);
}

transcript *tr_alloc(const char *name)
{
    transcript *t = xcalloc(1, sizeof *t);
    t->name = xstrdup(name ? name : "<buffer>");
    t->relink = json_object();
    t->unrepaired = json_object();
    t->conflicts = json_object();
    t->fd = -1;
    t->src_fd = -1;
    t->idx_fd = -1;
    return t;
}

void transcript_free(transcript *t)
{
    if (!t)
        return;
    if (t->fd >= 0)
        close(t->fd);
    if (t->src_fd >= 0)
        close(t->src_fd);
    if (t->idx_fd >= 0)
        close(t->idx_fd);
    for (size_t i = 0; i < t->n; i++)
        json_decref(t->slots[i].rec);
    free(t->slots);
    free(t->table);
    for (size_t i = 0; i < t->arena.n_chunks; i++)
        free(t->arena.chunks[i]);
    free(t->arena.chunks);
    free(t->idx_buf);
    free(t->idx_path);
    free(t->bad);
    json_decref(t->relink);
    json_decref(t->unrepaired);
    json_decref(t->conflicts);
    for (size_t i = 0; i < t->n_warnings; i++)
        free(t->warnings[i]);
    free(t->warnings);
    free(t->leaf);
    free(t->session_id);
    free(t->name);
    free(t->path);
    free(t);
}

#define lookup tr_lookup
#define set_leaf tr_set_leaf
#define REC(t, i) tr_rec((t), (i))

/* Takes a reference to rec (whose id is known to be new). */
static void push_record(transcript *t, json_t *rec)
{
    size_t i = tr_push_slot(t, record_type(rec), record_id(rec), record_parent_id(rec),
                            record_logical_parent_id(rec));
    t->slots[i].rec = json_incref(rec);
}


static bool blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

static void note_bad(transcript *t, size_t line, const char *why)
{
    if (t->n_bad >= MAX_BAD_LINES)
        return;
    if (!t->bad)
        t->bad = xmalloc(MAX_BAD_LINES * sizeof *t->bad);
    t->bad[t->n_bad++] = (bad_line){line, why};
}

/* One line of the file; unterminated when it is the last and lacks '\n'. */
static void load_line(transcript *t, const char *p, size_t n, size_t line_no,
                      bool unterminated)
{
    if (blank(p, n))
        return;
    loom_error jerr;
    loom_error_clear(&jerr);
    json_t *rec = json_parse(p, n, "record", &jerr);
    if (!rec) {
        if (unterminated) {
            /* A line the writer never finished: the crash this format is
             * designed to survive, so it is expected, not corruption. */
            t->torn = true;
            warn(t, "dropped a torn final line (%zu bytes) in %s", n, t->name);
        } else {
            warn(t, "%s:%zu: skipped a line that is not JSON (%s)", t->name, line_no,
                 jerr.message);
            note_bad(t, line_no, "not JSON");
        }
        return;
    }
    const char *why = NULL;
    if (!json_is_object(rec))
        why = "not a JSON object";
    else if (!record_type(rec))
        why = "no string \"type\"";
    else if (!record_id(rec) || !*record_id(rec))
        why = "no string \"id\"";
    else if (lookup(t, record_id(rec)) >= 0)
        why = "its id repeats an earlier record";
    if (why) {
        ssize_t first = json_is_object(rec) ? lookup(t, record_id(rec)) : -1;
        if (first >= 0 && json_equal(rec, REC(t, (size_t)first))) {
            /* A line written twice: nothing is lost by skipping the copy. */
            why = "it repeats an earlier record exactly";
        } else if (first >= 0) {
            /* Two records, one id: whatever names it is ambiguous. */
            if (!json_object_get(t->conflicts, record_id(rec)))
                json_object_set_new(t->conflicts, record_id(rec),
                                    json_integer((json_int_t)line_no));
            why = "its id repeats an earlier record with other content";
        }
        if (first < 0)
            note_bad(t, line_no, why);
        else if (json_object_get(t->conflicts, record_id(rec)))
            note_bad(t, line_no, "a repeated id");
        if (json_is_object(rec) && record_id(rec) && *record_id(rec))
            warn(t, "%s:%zu: skipped record %s: %s", t->name, line_no, record_id(rec), why);
        else
            warn(t, "%s:%zu: skipped a line: %s", t->name, line_no, why);
        json_decref(rec);
        return;
    }
    if (!t->session_id && json_get_str(rec, "sessionId", NULL))
        t->session_id = xstrdup(json_get_str(rec, "sessionId", NULL));
    push_record(t, rec);
    json_decref(rec);
}

/* ---- holes in the chain ------------------------------------------------- */

/* The link a walk follows: parentId, or logicalParentId across a summary. */
static const char *slot_edge(const rec_slot *sl)
{
    return sl->parent ? sl->parent : sl->lparent;
}

/* The first damaged line after line a and before line b, or NULL. */
static const bad_line *bad_between(const transcript *t, size_t a, size_t b)
{
    size_t lo = 0, hi = t->n_bad;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->bad[mid].line <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n_bad && t->bad[lo].line < b ? &t->bad[lo] : NULL;
}

/* "line 7 is damaged: not JSON" or "a line is missing" — what most likely
 * took the record before line b away. */
static void describe_hole(const transcript *t, size_t a, size_t b, char *out, size_t cap)
{
    const bad_line *bl = bad_between(t, a, b);
    if (bl)
        snprintf(out, cap, "line %zu is damaged: %s", bl->line, bl->why);
    else
        snprintf(out, cap, "a line is missing");
}

/* An orphan is a conversation record whose parent is not in the file. It is
 * reconnected to q, the conversation record just before it in file order,
 * only when nothing else could have been meant: q has no child of its own
 * (it was the end of the chain the lost record continued) and q is not
 * newer than the orphan. Anything else stays a gap that transcript_check
 * reports. Runs once, at load, in file order, so the result is the same on
 * every load of the same bytes. */
static void repair_gaps(transcript *t)
{
    json_t *children = NULL; /* id -> number of records naming it */
    for (size_t i = 0; i < t->n; i++) {
        const rec_slot *sl = &t->slots[i];
        const char *parent = slot_edge(sl);
        if (!parent || !record_is_conversation(sl->type) || lookup(t, parent) >= 0)
            continue;
        if (!children) {
            children = json_object();
            for (size_t k = 0; k < t->n; k++) {
                const char *ids[2] = {t->slots[k].parent, t->slots[k].lparent};
                for (int m = 0; m < 2; m++)
                    if (ids[m] && lookup(t, ids[m]) >= 0)
                        json_object_set_new(children, ids[m],
                                            json_integer(json_get_int(children, ids[m], 0) + 1));
            }
        }
        ssize_t q = (ssize_t)i - 1;
        while (q >= 0 && !record_is_conversation(t->slots[q].type))
            q--;
        const char *why = NULL;
        const char *tq = q >= 0 ? json_get_str(REC(t, (size_t)q), "timestamp", NULL) : NULL;
        const char *ti = json_get_str(REC(t, i), "timestamp", NULL);
        if (q < 0)
            why = "no conversation record comes before it";
        else if (json_get_int(children, t->slots[q].id, 0) > 0)
            why = "the record before it already continues elsewhere";
        else if (!tq || !ti)
            why = "a timestamp is missing, so the order cannot be confirmed";
        else if (strcmp(tq, ti) > 0)
            why = "the record before it is newer";
        char hole[120];
        describe_hole(t, q >= 0 ? t->slots[q].line : 0, sl->line, hole, sizeof hole);
        if (why) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s; %s", hole, why);
            json_object_set_new(t->unrepaired, sl->id, json_string(msg));
            if (strcmp(sl->type, RECORD_SUMMARY) == 0 && !sl->parent)
                /* The model context ends at the summary, so it is whole;
                 * only a walk back across it (rewind) stops short. */
                warn(t,
                     "session %s line %zu: summary %s continues from %s, which is not in the "
                     "file (%s); the model context is intact, but the turns before the summary "
                     "cannot be rewound to",
                     t->name, sl->line, sl->id, parent, msg);
            continue;
        }
        const char *qid = t->slots[q].id;
        json_object_set_new(t->relink, sl->id, json_string(qid));
        json_object_set_new(children, qid, json_integer(1));
        warn(t,
             "session %s line %zu: record %s names parent %s, which is not in the file (%s); "
             "reconnected it to line %zu, the record before it (in memory; the file is "
             "unchanged)",
             t->name, sl->line, sl->id, parent, hole, t->slots[q].line);
    }
    json_decref(children);
}

/* The parent a walk goes to from slot i: its own, or the reconnected one;
 * -1 at a root, -2 at a gap (*missing then names the absent parent). */
static ssize_t walk_parent(const transcript *t, size_t i, const char **missing)
{
    const char *parent = slot_edge(&t->slots[i]);
    *missing = parent;
    if (!parent)
        return -1;
    ssize_t p = lookup(t, parent);
    if (p >= 0)
        return p;
    p = lookup(t, json_get_str(t->relink, t->slots[i].id, NULL));
    return p >= 0 ? p : -2;
}

void tr_finish_load(transcript *t)
{
    repair_gaps(t);
    if (t->suppressed) {
        /* Room was kept for this line by counting, so it always fits. */
        size_t s = t->suppressed;
        t->suppressed = 0;
        t->warnings = xrealloc(t->warnings, (t->n_warnings + 1) * sizeof *t->warnings);
        loom_str m = LOOM_STR_INIT;
        str_printf(&m, "%zu more warnings about %s not shown", s, t->name);
        t->warnings[t->n_warnings++] = str_steal(&m);
    }
}

transcript *transcript_parse(const char *buf, size_t len, const char *name)
{
    transcript *t = tr_alloc(name);
    if (!buf)
        len = 0;
    size_t pos = 0, line_no = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        line_no++;
        t->cur_line = line_no;
        load_line(t, buf + pos, end - pos, line_no, nl == NULL);
        if (nl) {
            t->good_len = end + 1;
            pos = end + 1;
        } else {
            pos = len;
        }
    }
    t->cur_line = 0;
    t->need_newline = len > 0 && buf[len - 1] != '\n' && !t->torn;
    t->loaded_len = len;
    tr_finish_load(t);
    return t;
}

/* "dir/<id>.jsonl" → "<id>". */
char *tr_id_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 6 && strcmp(base + n - 6, ".jsonl") == 0)
        n -= 6;
    return xstrndup(base, n);
}

transcript *tr_open_whole(const char *path, loom_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    if (file_read_all(path, &buf, &len, err) != 0) {
        loom_error_prefix(err, "opening session %s: ", path);
        return NULL;
    }
    transcript *t = transcript_parse(buf, len, path);
    free(buf);
    t->path = xstrdup(path);
    free(t->session_id);
    t->session_id = tr_id_from_path(path);
    return t;
}

const char *transcript_session_id(const transcript *t)
{
    return t ? t->session_id : NULL;
}

const char *transcript_path(const transcript *t)
{
    return t ? t->path : NULL;
}

size_t transcript_count(const transcript *t)
{
    return t ? t->n : 0;
}

json_t *transcript_record(const transcript *t, size_t i)
{
    return t && i < t->n ? REC(t, i) : NULL;
}

const char *transcript_record_type(const transcript *t, size_t i)
{
    return t && i < t->n ? t->slots[i].type : NULL;
}

json_t *transcript_find(const transcript *t, const char *id)
{
    ssize_t i = t ? lookup(t, id) : -1;
    return i >= 0 ? REC(t, (size_t)i) : NULL;
}

json_t *transcript_meta(const transcript *t)
{
    for (size_t i = 0; t && i < t->n; i++) {
        if (strcmp(t->slots[i].type, RECORD_SESSION_META) == 0)
            return REC(t, i);
    }
    return NULL;
}

const char *transcript_leaf(const transcript *t)
{
    return t ? t->leaf : NULL;
}

int transcript_set_leaf(transcript *t, const char *id, loom_error *err)
{
    if (!id) {
        set_leaf(t, NULL); /* before the first turn: an empty conversation */
        return 0;
    }
    json_t *rec = transcript_find(t, id);
    if (!rec)
        return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                              "no record %s in session %s", id ? id : "(null)",
                              t && t->session_id ? t->session_id : "?");
    if (!record_is_conversation(record_type(rec)))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "record %s is a %s, not a conversation record", id,
                              record_type(rec));
    set_leaf(t, id);
    return 0;
}

const char *const *transcript_warnings(const transcript *t, size_t *n)
{
    *n = t ? t->n_warnings : 0;
    return t ? (const char *const *)t->warnings : NULL;
}

size_t transcript_n_warnings(const transcript *t)
{
    return t ? t->n_warnings : 0;
}

const char *transcript_warning(const transcript *t, size_t i)
{
    return t && i < t->n_warnings ? t->warnings[i] : NULL;
}

/* ---- appending ---------------------------------------------------------- */

static int fsync_dir(const char *dir, loom_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return loom_error_set(err, LOOM_ERR_IO, "opening %s: %s", dir, strerror(errno));
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL)  /* some filesystems cannot sync directories */
        return loom_error_set(err, LOOM_ERR_IO, "syncing %s: %s", dir, strerror(e));
    return 0;
}

static int open_for_append(transcript *t, loom_error *err)
{
    if (t->fd >= 0)
        return 0;
    if (!t->path)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "session %s has no file to append to", t->name);
    t->fd = open(t->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (t->fd < 0)
        return loom_error_set(err, LOOM_ERR_IO, "opening session %s for append: %s", t->path,
                              strerror(errno));
    return 0;
}

/* Before the first append after a torn tail: cut the file back to its last
 * whole line, so the new record starts on a line of its own and the partial
 * one is gone rather than reported again on every load. Truncation (rather
 * than only writing a '\n' first) keeps the file clean. If the file changed
 * size since it was read, someone else wrote to it and the bytes past our
 * view are not ours to cut: then a '\n' first is the safe repair. */
static int repair_tail(transcript *t, loom_error *err)
{
    if (!t->torn)
        return 0;
    struct stat st;
    if (fstat(t->fd, &st) != 0)
        return loom_error_set(err, LOOM_ERR_IO, "stat %s: %s", t->path, strerror(errno));
    if ((size_t)st.st_size == t->loaded_len) {
        if (ftruncate(t->fd, (off_t)t->good_len) != 0)
            return loom_error_set(err, LOOM_ERR_IO, "truncating the torn line of %s: %s",
                                  t->path, strerror(errno));
        LOG_I("session", "truncated %s to %zu bytes to drop a torn final line", t->path,
              t->good_len);
        t->loaded_len = t->good_len;
    } else {
        t->need_newline = true;
    }
    t->torn = false;
    return 0;
}

/* Fills the fields the caller left out; see transcript_append. */
static void complete_record(transcript *t, json_t *rec, const char *type)
{
    if (!record_id(rec) || !*record_id(rec)) {
        char id[UUID_STR_LEN];
        uuid_v7(id);
        json_object_set_new(rec, "id", json_string(id));
    }
    if (!json_is_string(json_object_get(rec, "timestamp"))) {
        char ts[32];
        clock_iso8601(clock_wall_ms(), ts);
        json_object_set_new(rec, "timestamp", json_string(ts));
    }
    if (!json_object_get(rec, "sessionId"))
        json_set_str(rec, "sessionId", t->session_id);
    bool summary = strcmp(type, RECORD_SUMMARY) == 0;
    /* The leaf is always a record of the file: the next one chains to it. */
    assert(!t->leaf || lookup(t, t->leaf) >= 0);
    if (!json_object_get(rec, "parentId")) {
        bool chain = record_is_conversation(type) && !summary && t->leaf;
        json_object_set_new(rec, "parentId", chain ? json_string(t->leaf) : json_null());
    }
    if (summary && !json_object_get(rec, "logicalParentId") && t->leaf)
        json_set_str(rec, "logicalParentId", t->leaf);
}

int transcript_append(transcript *t, json_t *rec, loom_error *err)
{
    if (!t)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "append to a NULL transcript");
    const char *type = record_type(rec);
    if (!json_is_object(rec) || !type)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "a session record must be a JSON object with a string \"type\"");
    int rc = open_for_append(t, err);
    if (rc)
        return rc;
    complete_record(t, rec, type);
    if (lookup(t, record_id(rec)) >= 0)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "record id %s is already in session %s", record_id(rec),
                              t->session_id);
    if ((rc = repair_tail(t, err)) != 0)
        return rc;

    char *line = record_dump_line(rec);
    if (!line)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "record %s cannot be serialized",
                              record_id(rec));
    /* The rows first: a record they refused (a fenced worker) is nowhere. */
    if (t->rows.append) {
        const char *one = line;
        if ((rc = t->rows.append(t->rows.ctx, t->session_id, t->n, &one, 1, err)) != 0) {
            free(line);
            return rc;
        }
    }
    loom_str buf = LOOM_STR_INIT;
    if (t->need_newline)
        str_putc(&buf, '\n');
    str_puts(&buf, line);
    str_putc(&buf, '\n');
    free(line);

    struct stat st;
    off_t before = fstat(t->fd, &st) == 0 ? st.st_size : -1;
    if (file_write_full(t->fd, buf.ptr, buf.len) != 0) {
        int e = errno;
        /* A short write (disk full) may have left half a line from us: take
         * it back so the file holds only whole records. If even that fails,
         * remember the tail as torn so the next append retries the cut. */
        if (before < 0 || ftruncate(t->fd, before) != 0) {
            if (before >= 0 && fstat(t->fd, &st) == 0) {
                t->torn = true;
                t->good_len = (size_t)before;
                t->loaded_len = (size_t)st.st_size;
            }
        } else {
            t->loaded_len = (size_t)before;
        }
        str_free(&buf);
        return loom_error_set(err, LOOM_ERR_IO, "appending to session %s: %s", t->path,
                              strerror(e));
    }
    size_t line_off = (before >= 0 ? (size_t)before : t->loaded_len) + (t->need_newline ? 1 : 0);
    t->loaded_len = (before >= 0 ? (size_t)before : t->loaded_len) + buf.len;
    t->need_newline = false;
    t->dirty = true;
    push_record(t, rec);
    if (t->idx_fd >= 0) {
        rec_slot *sl = &t->slots[t->n - 1];
        sl->off = line_off;
        sl->len = (uint32_t)(t->loaded_len - line_off - 1);
        sl->hash = session_index_hash(buf.ptr + (buf.len - 1 - sl->len), sl->len);
        tr_index_append(t, t->n - 1, t->n);
    }
    str_free(&buf);
    /* What Loom appends links only to records already in the file (a
     * parsed file may have gaps; a written one never makes them). */
    assert(!record_parent_id(rec) || lookup(t, record_parent_id(rec)) >= 0);
    assert(!record_logical_parent_id(rec) || lookup(t, record_logical_parent_id(rec)) >= 0);
    return 0;
}

int transcript_set_rows(transcript *t, const transcript_rows *rows, bool with_existing,
                        loom_error *err)
{
    if (!t)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "rows for a NULL transcript");
    if (!rows || !rows->append) {
        memset(&t->rows, 0, sizeof t->rows);
        return 0;
    }
    if (with_existing && t->n > 0) {
        char **lines = xcalloc(t->n, sizeof *lines);
        for (size_t i = 0; i < t->n; i++)
            lines[i] = record_dump_line(tr_rec(t, i));
        int rc = rows->append(rows->ctx, t->session_id, 0, (const char *const *)lines, t->n, err);
        for (size_t i = 0; i < t->n; i++)
            free(lines[i]);
        free(lines);
        if (rc)
            return rc;
    }
    t->rows = *rows;
    return 0;
}

int transcript_append_new(transcript *t, json_t *rec, loom_error *err)
{
    int rc = transcript_append(t, rec, err);
    json_decref(rec);
    return rc;
}

int transcript_sync(transcript *t, loom_error *err)
{
    if (!t || t->fd < 0 || !t->dirty)
        return 0;
    if (fdatasync(t->fd) != 0)
        return loom_error_set(err, LOOM_ERR_IO, "syncing session %s: %s", t->path,
                              strerror(errno));
    t->dirty = false;
    return 0;
}

/* dir/<id>.jsonl, the file of session id. */
static char *session_file(const char *dir, const char *id)
{
    loom_str name = LOOM_STR_INIT;
    str_printf(&name, "%s.jsonl", id);
    char *path = path_join(dir, name.ptr);
    str_free(&name);
    return path;
}

transcript *transcript_create(const char *dir, const char *cwd, const char *provider,
                              const char *model, loom_error *err)
{
    if (file_mkdirs(dir, 0700, err) != 0)
        return NULL;
    char id[UUID_STR_LEN];
    uuid_v7(id);
    char *path = session_file(dir, id);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        loom_error_set(err, LOOM_ERR_IO, "creating session %s: %s", path, strerror(errno));
        free(path);
        return NULL;
    }
    transcript *t = tr_alloc(path);
    t->path = path;
    t->session_id = xstrdup(id);
    t->fd = fd;
    tr_index_start(t);
    /* The meta record and the directory entry are synced now: a session
     * that exists at all should be findable after a crash. */
    if (transcript_append_new(t, record_session_meta(cwd, provider, model), err) != 0 ||
        transcript_sync(t, err) != 0 || fsync_dir(dir, err) != 0) {
        unlink(path);
        if (t->idx_path)
            unlink(t->idx_path);
        transcript_free(t);
        return NULL;
    }
    return t;
}

/* ---- walking the tree --------------------------------------------------- */

int transcript_chain(transcript *t, const char *leaf_id, bool for_context, json_t ***out,
                     size_t *n, loom_error *err)
{
    *out = NULL;
    *n = 0;
    const char *start = leaf_id ? leaf_id : t->leaf;
    if (!start)
        return 0;
    ssize_t cur = lookup(t, start);
    if (cur < 0)
        return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no record %s in session %s",
                              start, t->session_id ? t->session_id : t->name);
    /* One mark per record bounds the walk by the record count, so a cycle
     * written by a buggy or hostile file ends it instead of hanging. */
    bool *seen = xcalloc(t->n, 1);
    size_t *path = xmalloc(t->n * sizeof *path);
    size_t len = 0;
    for (;;) {
        if (seen[cur]) {
            warn(t, "the session tree of %s has a cycle at record %s; the chain stops there",
                 t->name, t->slots[cur].id);
            break;
        }
        seen[cur] = true;
        assert(len < t->n); /* one visit per record: the marks bound the walk */
        path[len++] = (size_t)cur;
        const rec_slot *sl = &t->slots[cur];
        bool summary = strcmp(sl->type, RECORD_SUMMARY) == 0;
        if (for_context && summary)
            break;  /* the summary stands in for everything before it */
        const char *parent;
        ssize_t p = walk_parent(t, (size_t)cur, &parent);
        if (p == -1)
            break;
        if (p < 0) {
            warn(t, "record %s in %s names parent %s, which is not in the session; the chain "
                    "starts after the gap",
                 sl->id, t->name, parent);
            break;
        }
        cur = p;
    }
    free(seen);
    if (len) {
        *out = xmalloc(len * sizeof **out);
        for (size_t i = 0; i < len; i++)
            (*out)[i] = REC(t, path[len - 1 - i]);
    }
    *n = len;
    free(path);
    return 0;
}

int transcript_active(transcript *t, json_t ***out, size_t *n)
{
    return transcript_chain(t, NULL, true, out, n, NULL);
}

/* "file:N" for a loaded record, "record ID" for one appended since. */
static void where_of(const transcript *t, size_t i, char *out, size_t cap)
{
    if (t->slots[i].line)
        snprintf(out, cap, "%s line %zu", t->name, t->slots[i].line);
    else
        snprintf(out, cap, "%s record %s", t->name, t->slots[i].id);
}

#define CHECK_HOW_TO_GO_ON \
    "; the file is left as it is. To go on with only the part after the damage, set " \
    "LOOM_ACCEPT_BROKEN_SESSION=1; or start a new session"

int transcript_check(transcript *t, bool accept, loom_error *err)
{
    const char *start = t ? t->leaf : NULL;
    ssize_t cur = start ? lookup(t, start) : -1;
    if (cur < 0)
        return 0;
    bool *seen = xcalloc(t->n, 1);
    loom_str msg = LOOM_STR_INIT;
    char where[600];
    ssize_t prev = -1;
    for (;;) {
        const rec_slot *sl = &t->slots[cur];
        if (seen[cur]) {
            /* Name the record whose link closes the loop. */
            where_of(t, (size_t)prev, where, sizeof where);
            str_printf(&msg,
                       "session %s: record %.80s names parent %.80s, which leads back to it (the "
                       "parent links form a cycle), so the start of the conversation cannot be "
                       "found",
                       where, t->slots[prev].id, sl->id);
            break;
        }
        where_of(t, (size_t)cur, where, sizeof where);
        seen[cur] = true;
        json_t *dup = json_object_get(t->conflicts, sl->id);
        if (dup) {
            str_printf(&msg,
                       "session %s: record %.80s appears again at line %lld with other content, "
                       "so which one the conversation continues from is ambiguous",
                       where, sl->id, (long long)json_integer_value(dup));
            break;
        }
        if (strcmp(sl->type, RECORD_SUMMARY) == 0)
            break; /* the summary stands in for everything before it */
        const char *missing;
        ssize_t p = walk_parent(t, (size_t)cur, &missing);
        if (p == -1)
            break;
        if (p == -2) {
            const char *why = json_get_str(t->unrepaired, sl->id, "a line is missing");
            str_printf(&msg,
                       "session %s: record %.80s names parent %.80s, which is not in the file (%s); "
                       "continuing would send the model a history without the turns before it",
                       where, sl->id, missing, why);
            break;
        }
        prev = cur;
        cur = p;
    }
    free(seen);
    if (!msg.len)
        return 0;
    if (accept) {
        warn(t, "%s; continuing with the history after it (LOOM_ACCEPT_BROKEN_SESSION)",
             str_cstr(&msg));
        str_free(&msg);
        return 0;
    }
    clean_text(&msg);
    str_puts(&msg, CHECK_HOW_TO_GO_ON);
    int rc = loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "%s", str_cstr(&msg));
    str_free(&msg);
    return rc;
}

/* ---- fork and resend ---------------------------------------------------- */

/* Replaces obj[key] by its image in idmap when it names a mapped id. */
static void remap(json_t *obj, const char *key, const json_t *idmap)
{
    const char *old = json_get_str(obj, key, NULL);
    json_t *neu = old ? json_object_get(idmap, old) : NULL;
    if (neu)
        json_object_set(obj, key, neu);
}

transcript *transcript_fork(transcript *t, const char *new_dir, loom_error *err)
{
    if (file_mkdirs(new_dir, 0700, err) != 0)
        return NULL;
    char id[UUID_STR_LEN];
    uuid_v7(id);
    char *path = session_file(new_dir, id);
    transcript *f = tr_alloc(path);
    f->session_id = xstrdup(id);

    json_t *src_meta = transcript_meta(t);
    json_t *meta = record_session_meta(json_get_str(src_meta, "cwd", NULL),
                                       json_get_str(src_meta, "provider", NULL),
                                       json_get_str(src_meta, "model", NULL));
    json_set_str(meta, "forkedFrom", t->session_id);
    char now[32];
    clock_iso8601(clock_wall_ms(), now);
    json_set_str(meta, "forkedAt", now);
    json_set_str(meta, "sessionId", id);

    /* Ids first, so a parent that appears after its child in the file (an
     * edited file, not one Loom wrote) is still remapped. */
    json_t *idmap = json_object();
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->slots[i].type, RECORD_SESSION_META) == 0)
            continue;
        char nid[UUID_STR_LEN];
        uuid_v7(nid);
        json_object_set_new_nocheck(idmap, t->slots[i].id, json_string(nid));
    }

    loom_str buf = LOOM_STR_INIT;
    push_record(f, meta);
    char *line = record_dump_line(meta);
    str_puts(&buf, line);
    str_putc(&buf, '\n');
    free(line);
    json_decref(meta);
    for (size_t i = 0; i < t->n; i++) {
        json_t *src = REC(t, i);
        const char *type = record_type(src);
        if (strcmp(type, RECORD_SESSION_META) == 0)
            continue;
        json_t *c = json_deep_copy(src);
        json_object_set(c, "id", json_object_get(idmap, record_id(src)));
        json_set_str(c, "sessionId", id);
        remap(c, "parentId", idmap);
        remap(c, "logicalParentId", idmap);
        remap(c, "editedUserItemId", idmap);
        if (strcmp(type, RECORD_FILE_HISTORY_SNAPSHOT) == 0) {
            remap(c, "messageId", idmap);
            remap(json_get_obj(c, "snapshot"), "messageId", idmap);
        }
        push_record(f, c);
        line = record_dump_line(c);
        str_puts(&buf, line);
        str_putc(&buf, '\n');
        free(line);
        json_decref(c);
    }
    const char *leaf = t->leaf ? json_get_str(idmap, t->leaf, NULL) : NULL;
    if (leaf)
        set_leaf(f, leaf);
    json_decref(idmap);

    f->loaded_len = f->good_len = buf.len;
    int rc = file_write_atomic(path, buf.ptr ? buf.ptr : "", buf.len, 0600, err);
    str_free(&buf);
    if (rc != 0) {
        loom_error_prefix(err, "forking session %s: ", t->session_id ? t->session_id : "?");
        free(path);
        transcript_free(f);
        return NULL;
    }
    f->path = path;
    return f;
}

json_t *transcript_resend(transcript *t, const char *edited_user_id, const char *new_text,
                          loom_error *err)
{
    json_t *edited = transcript_find(t, edited_user_id);
    if (!edited || !record_is_user_message(edited)) {
        loom_error_set(err, edited ? LOOM_ERR_INVALID_REQUEST : LOOM_ERR_RESOURCE_NOT_FOUND,
                       "%s is not a user message of session %s",
                       edited_user_id ? edited_user_id : "(null)",
                       t->session_id ? t->session_id : t->name);
        return NULL;
    }
    char *parent = xstrdup(record_parent_id(edited));
    json_t *result = NULL;
    if (transcript_append_new(t, record_resend_fork_notice(parent, edited_user_id), err) == 0) {
        json_t *msg = record_user_text(new_text);
        json_object_set_new(msg, "parentId", parent ? json_string(parent) : json_null());
        if (transcript_append(t, msg, err) == 0)
            result = msg;
        json_decref(msg);  /* the transcript holds its own reference */
    }
    free(parent);
    return result;
}

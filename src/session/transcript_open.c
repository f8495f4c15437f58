/* transcript_open.c — opening a session file through its index
 * (session_index.h), so a resume reads the few lines it sends instead of
 * parsing the whole file.
 *
 * The index is checked against the file before it is used: its entries
 * must tile the file from byte 0 with no gap, the first and the last line
 * they name must hash as recorded, the file must be the one indexed (device
 * and inode: an editor's save replaces it) and not modified in place since
 * (mtime newer while the size is the same). A line read later is checked
 * against its hash too, so an edit none of this sees is reported, never
 * sent as something else. Lines
 * past the last entry — appended by another writer, or by a process that
 * stopped between the line and its entry — are scanned and indexed. Any
 * failed check means a rebuild: one streaming pass over the file that
 * parses a line at a time and keeps only the slots, with a log line naming
 * the reason. A file with any damage (a line that is not a record, a
 * repeated id, a blank or torn line) is loaded whole the old way, with its
 * warnings, and gets no index: the damage rules live in transcript.c only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "session/record.h"
#include "session/session_index.h"
#include "session/transcript_priv.h"

/* The streaming pass reads the file this much at a time. */
#define SCAN_CHUNK (1024 * 1024)

static void encode_slots(const transcript *t, size_t from, size_t to, loom_str *out)
{
    for (size_t i = from; i < to; i++) {
        const rec_slot *sl = &t->slots[i];
        session_index_entry e = {.off = sl->off, .len = sl->len, .hash = sl->hash,
                                 .type = sl->type, .id = sl->id, .parent = sl->parent,
                                 .lparent = sl->lparent};
        session_index_encode(out, &e);
    }
}

static void drop_index(transcript *t, const char *why)
{
    LOG_W("session", "index %s: %s; removed it (the next open rebuilds it)", t->idx_path, why);
    if (t->idx_fd >= 0)
        close(t->idx_fd);
    t->idx_fd = -1;
    unlink(t->idx_path);
}

void tr_index_start(transcript *t)
{
    if (!t->path)
        return;
    if (!t->idx_path)
        t->idx_path = session_index_path(t->path);
    struct stat st;
    if (stat(t->path, &st) != 0) {
        LOG_W("session", "cannot index %s: %s", t->path, strerror(errno));
        return;
    }
    loom_str s = LOOM_STR_INIT;
    session_index_encode_header(&s, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
    encode_slots(t, 0, t->n, &s);
    loom_error err;
    if (file_write_atomic(t->idx_path, s.ptr, s.len, 0600, &err) != 0) {
        LOG_W("session", "cannot write the index of %s: %s", t->path, err.message);
    } else {
        t->idx_fd = open(t->idx_path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (t->idx_fd < 0)
            LOG_W("session", "cannot open %s for append: %s", t->idx_path, strerror(errno));
    }
    str_free(&s);
}

void tr_index_append(transcript *t, size_t from, size_t to)
{
    if (t->idx_fd < 0 || from >= to)
        return;
    loom_str s = LOOM_STR_INIT;
    encode_slots(t, from, to, &s);
    if (file_write_full(t->idx_fd, s.ptr, s.len) != 0)
        drop_index(t, strerror(errno));
    str_free(&s);
}

/* One line of the streaming pass; -1 when it is not a clean record. */
static int scan_line(transcript *t, const char *p, size_t n, uint64_t off, const char **why)
{
    json_t *rec = n <= UINT32_MAX ? json_parse_fast(p, n, 0, NULL) : NULL;
    if (!rec || !json_is_object(rec) || !record_type(rec) || !record_id(rec) ||
        !*record_id(rec) || tr_lookup(t, record_id(rec)) >= 0) {
        *why = "a line that is not a record of its own";
        json_decref(rec);
        return -1;
    }
    t->cur_line = t->n + 1; /* a clean file has one record a line */
    size_t i = tr_push_slot(t, record_type(rec), record_id(rec), record_parent_id(rec),
                            record_logical_parent_id(rec));
    t->cur_line = 0;
    t->slots[i].off = off;
    t->slots[i].len = (uint32_t)n;
    t->slots[i].hash = session_index_hash(p, n);
    json_decref(rec);
    return 0;
}

/* The streaming pass over [from, size) of the file, a line at a time; the
 * memory it needs is a chunk or the longest line. 0, or -1 at the first
 * line that is not a clean record (*why says what). */
static int scan(transcript *t, uint64_t from, uint64_t size, const char **why)
{
    loom_str buf = LOOM_STR_INIT;
    uint64_t buf_off = from; /* the file offset of buf.ptr[0] */
    size_t start = 0;        /* the first byte of buf not scanned into a slot */
    size_t look = 0;         /* where the search for '\n' resumes */
    int rc = 0;
    for (;;) {
        const char *nl = buf.len > look ? memchr(buf.ptr + look, '\n', buf.len - look) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - buf.ptr) - start;
            if (n == 0) {
                *why = "a blank line";
                rc = -1;
                break;
            }
            if ((rc = scan_line(t, buf.ptr + start, n, buf_off + start, why)) != 0)
                break;
            start += n + 1;
            look = start;
            continue;
        }
        /* Keep only the unfinished line before reading on. */
        if (start)
            str_consume(&buf, start);
        buf_off += start;
        look = buf.len;
        start = 0;
        uint64_t at = buf_off + buf.len;
        if (at >= size) {
            if (buf.len) {
                *why = "a last line without its '\\n'";
                rc = -1;
            }
            break;
        }
        size_t want = size - at < SCAN_CHUNK ? (size_t)(size - at) : SCAN_CHUNK;
        str_reserve(&buf, want + 1);
        ssize_t got = pread(t->src_fd, buf.ptr + buf.len, want, (off_t)at);
        if (got <= 0) {
            *why = got < 0 ? strerror(errno) : "the file got shorter while it was read";
            rc = -1;
            break;
        }
        buf.len += (size_t)got;
        buf.ptr[buf.len] = '\0';
    }
    str_free(&buf);
    return rc;
}

/* Whether the line slot i names is still there with the bytes it had. */
static bool line_intact(const transcript *t, size_t i)
{
    const rec_slot *sl = &t->slots[i];
    char *p = xmalloc((size_t)sl->len + 1);
    bool ok = pread(t->src_fd, p, (size_t)sl->len + 1, (off_t)sl->off) == (ssize_t)sl->len + 1 &&
              p[sl->len] == '\n' && session_index_hash(p, sl->len) == sl->hash;
    free(p);
    return ok;
}

/* Fills t's slots from the index. 1 when it holds and covers *covered
 * bytes of the file; 0 when there is none; -1 when it cannot be used (err
 * says why). t must be fresh; on -1 its slots are garbage. */
static int load_index(transcript *t, const struct stat *st, uint64_t *covered, loom_error *err)
{
    struct stat ist;
    if (stat(t->idx_path, &ist) != 0)
        return 0;
    char *buf = NULL;
    size_t len = 0;
    if (file_read_all(t->idx_path, &buf, &len, err) != 0)
        return -1;
    t->idx_buf = buf;
    session_index_entry *e = NULL;
    size_t n = 0;
    uint64_t dev, ino;
    if (session_index_parse(buf, len, &dev, &ino, &e, &n, err) != 0)
        return -1;
    const char *why = NULL;
    if (dev != (uint64_t)st->st_dev || ino != (uint64_t)st->st_ino)
        why = "it was written for another file of that name (the session file was replaced)";
    uint64_t end = 0;
    for (size_t i = 0; i < n && !why; i++) {
        if (e[i].off != end)
            why = "its entries do not follow each other in the file";
        else if (tr_lookup(t, e[i].id) >= 0)
            why = "an id repeats";
        else if ((uint64_t)e[i].len + 1 > (uint64_t)st->st_size - end)
            why = "it names lines past the end of the session file";
        if (why)
            break;
        t->cur_line = i + 1;
        size_t k = tr_push_slot_borrowed(t, e[i].type, e[i].id, e[i].parent, e[i].lparent);
        t->slots[k].off = e[i].off;
        t->slots[k].len = e[i].len;
        t->slots[k].hash = e[i].hash;
        end = e[i].off + e[i].len + 1;
    }
    t->cur_line = 0;
    free(e);
    if (!why && !n)
        why = "it has no entries";
    if (!why && (!line_intact(t, 0) || !line_intact(t, t->n - 1)))
        why = "a line it names no longer has the bytes it had";
    if (!why && (uint64_t)st->st_size == end &&
        (st->st_mtim.tv_sec > ist.st_mtim.tv_sec ||
         (st->st_mtim.tv_sec == ist.st_mtim.tv_sec && st->st_mtim.tv_nsec > ist.st_mtim.tv_nsec)))
        why = "the session file was modified after it";
    if (why) {
        loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "%s", why);
        return -1;
    }
    *covered = end;
    return 1;
}

/* Reads what the next request is made of — the active chain, read anyway
 * to send it, and the records after the leaf (usually a few: a title,
 * metrics), which decide that the leaf is the last conversation record —
 * and tells whether each line is the record its index entry says. With
 * that, no index, however wrong, changes what the model is sent. */
static bool chain_matches(transcript *t)
{
    json_t **chain = NULL;
    size_t n = 0;
    ssize_t leaf = tr_lookup(t, transcript_leaf(t));
    for (size_t i = (size_t)(leaf + 1); i < t->n && !t->misread; i++)
        tr_rec(t, i);
    if (leaf >= 0)
        tr_rec(t, (size_t)leaf);
    if (!t->misread)
        transcript_chain(t, NULL, true, &chain, &n, NULL);
    free(chain);
    return !t->misread;
}

static transcript *fresh(const char *path, int fd)
{
    transcript *t = tr_alloc(path);
    t->path = xstrdup(path);
    t->session_id = tr_id_from_path(path);
    t->idx_path = session_index_path(path);
    t->src_fd = fd;
    return t;
}

/* The slots of the whole file by the streaming pass, in a fresh transcript;
 * NULL when the file has damage (*why says what), fd closed then. */
static transcript *rebuild(const char *path, int fd, const struct stat *st, const char **why)
{
    transcript *t = fresh(path, fd);
    if (scan(t, 0, (uint64_t)st->st_size, why) != 0) {
        transcript_free(t); /* closes fd */
        return NULL;
    }
    return t;
}

/* A transcript built from a stale or mistaken index is dropped, keeping fd. */
static void discard(transcript *t)
{
    t->src_fd = -1;
    transcript_free(t);
}

transcript *transcript_open(const char *path, loom_error *err)
{
    /* LOOM_SESSION_INDEX=0: the whole load, for comparing the two ways
     * (bench/resume.sh, e2e.session_index) or when an index is unwanted. */
    const char *use = getenv("LOOM_SESSION_INDEX");
    if (use && strcmp(use, "0") == 0)
        return tr_open_whole(path, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        /* The whole read says what is wrong the way it always did. */
        return tr_open_whole(path, err);
    }
    char *idx_path = session_index_path(path);
    transcript *t = fresh(path, fd);
    uint64_t covered = 0;
    loom_error why_index;
    loom_error_clear(&why_index);
    int r = load_index(t, &st, &covered, &why_index);
    size_t known = t->n;
    const char *why = NULL;
    if (r > 0 && scan(t, covered, (uint64_t)st.st_size, &why) != 0) {
        /* Damage past the index: the whole load has the rules for it. */
        transcript_free(t);
        t = NULL;
    } else if (r > 0 && !chain_matches(t)) {
        /* The index's tree disagrees with the lines the next request is
         * made of (read now anyway): the file is the truth. */
        LOG_W("session", "index %s does not match the lines of %s; rebuilding it", idx_path,
              path);
        discard(t);
        r = 0;
        t = rebuild(path, fd, &st, &why);
    } else if (r <= 0) {
        if (r < 0)
            LOG_W("session", "index %s cannot be used: %s; rebuilding it from the session file",
                  idx_path, why_index.message);
        discard(t);
        t = rebuild(path, fd, &st, &why);
    }
    if (!t) {
        LOG_I("session", "%s has %s; loading it whole, without an index", path, why);
        unlink(idx_path);
        free(idx_path);
        return tr_open_whole(path, err);
    }
    free(idx_path);
    t->loaded_len = t->good_len = (size_t)st.st_size;
    tr_finish_load(t);
    if (r <= 0) {
        LOG_I("session", "indexed %s: %zu records (built %s)", path, t->n, t->idx_path);
        tr_index_start(t);
    } else {
        LOG_I("session", "opened %s through its index: %zu records, %zu of them past the index",
              path, t->n, t->n - known);
        t->idx_fd = open(t->idx_path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (t->idx_fd < 0)
            LOG_W("session", "cannot open %s for append: %s", t->idx_path, strerror(errno));
        tr_index_append(t, known, t->n);
    }
    return t;
}

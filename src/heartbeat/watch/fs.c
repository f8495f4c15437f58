/* watch_fs.c — the filesystem watch source: inotify says where to look, a
 * content hash says whether anything really changed.
 *
 * At creation every configured path is walked (directories recursively,
 * without following symlinks, skipping the ignore patterns) and each regular
 * file's size, mtime and content hash — per HB_BLOCK block, see hash.h — is
 * the baseline. inotify watches every directory; a path that is a file, or
 * does not exist yet, is covered by a watch on its parent with events
 * filtered to that path. inotify events only mark paths dirty: the poll
 * re-reads each dirty path and compares it with its baseline, so a touch or
 * a rewrite with the same bytes is no event, a burst of writes to one file
 * is one event, and a temporary file created and removed between two ticks
 * is nothing at all.
 *
 * Without inotify (or past the kernel's watch limit) every poll walks the
 * trees and re-hashes files whose size or mtime moved; on a queue overflow
 * one such walk runs. The agent's own writes come in through own_write and
 * re-baseline the file silently when its content is the announced one.
 */
#include "heartbeat/watch/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/path.h"
#include "base/str.h"
#include "heartbeat/hash.h"
#include "heartbeat/map.h"

#define FS_MASK                                                                              \
    (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM |       \
     IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
#define FS_MAX_DEPTH 64
/* An announced own write that never showed up stops counting after this. */
#define FS_OWN_NOTE_TTL_MS 60000
#define FS_CHUNK (16 * HB_BLOCK)

typedef struct fs_file {
    int64_t size;
    int64_t mtime_ns;
    uint64_t hash;
    uint32_t nblocks;
    uint64_t *blocks;     /* per-block hashes; NULL when not hashed by content */
} fs_file;

typedef struct own_note {
    bool has_hash;
    uint64_t hash;
    int64_t at_ms;
} own_note;

typedef struct fs_watch {
    char **roots;         /* the configured paths, absolute */
    size_t n_roots;
    char **ignore;
    size_t n_ignore;
    bool method_hash;
    long long max_hash_bytes;
    size_t max_files;
    event_urgency act_urgency, idle_urgency;
    double weight;
    char *cwd;
    char *exclude;        /* never reported (the journal); NULL: none */

    int ifd;              /* inotify descriptor, -1 without */
    bool walk_every_poll; /* no inotify, or the watch limit was hit */
    bool need_walk;       /* the event queue overflowed */
    bool over_limit_logged;
    hb_map wd_path;       /* "wd" → char* directory */
    hb_map dir_wd;        /* directory → (intptr_t) wd */
    hb_map files;         /* path → fs_file* (the baseline) */
    hb_map dirty;         /* path → NULL: look at these in this poll */
    hb_map own;           /* path → own_note* */
    int problems;         /* in the current poll */
    unsigned char *buf;   /* FS_CHUNK bytes for reading files */
} fs_watch;

static void fs_file_free(void *p)
{
    fs_file *f = p;
    if (f) {
        free(f->blocks);
        free(f);
    }
}

/* ---- scope ---- */

/* The root containing path (path itself or below it), or NULL. */
static const char *root_of(const fs_watch *fw, const char *path)
{
    const char *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < fw->n_roots; i++) {
        const char *r = fw->roots[i];
        size_t n = strlen(r);
        bool under = !strncmp(path, r, n) &&
                     (path[n] == '\0' || path[n] == '/' || (n == 1 && r[0] == '/'));
        if (under && n >= best_len) {
            best = r;
            best_len = n;
        }
    }
    return best;
}

/* True when a component of path below its root matches an ignore pattern.
 * The root itself is never ignored: the user named it. */
static bool ignored(const fs_watch *fw, const char *path)
{
    const char *r = root_of(fw, path);
    if (!r)
        return true;
    const char *p = path + strlen(r);
    char comp[256];
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && n < sizeof comp) {
            memcpy(comp, p, n);
            comp[n] = '\0';
            for (size_t i = 0; i < fw->n_ignore; i++)
                if (fnmatch(fw->ignore[i], comp, 0) == 0)
                    return true;
        }
        p += n;
    }
    return false;
}

static bool in_scope(const fs_watch *fw, const char *path)
{
    if (fw->exclude && !strcmp(path, fw->exclude))
        return false;
    return root_of(fw, path) && !ignored(fw, path);
}

/* ---- reading a file ---- */

/* Reads path into a new fs_file. NULL when it is not a regular file (or is
 * gone); *problem set when it exists but could not be read. */
static fs_file *read_file_state(fs_watch *fw, const char *path, bool *problem)
{
    *problem = false;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
            *problem = true;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    fs_file *f = xcalloc(1, sizeof *f);
    f->size = st.st_size;
    f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    if (!fw->method_hash || st.st_size > fw->max_hash_bytes) {
        uint64_t id[2] = {(uint64_t)f->size, (uint64_t)f->mtime_ns};
        /* Seeded with "mtime", so it never equals a content hash. */
        f->hash = hb_hash64(id, sizeof id, 0x6d74696d65);
        close(fd);
        return f;
    }
    size_t cap = (size_t)(st.st_size / HB_BLOCK) + 1;
    f->blocks = xmalloc(cap * sizeof *f->blocks);
    hb_content c;
    hb_content_init(&c);
    /* Read in large chunks (fewer syscalls), hash in HB_BLOCK blocks: a
     * chunk is always filled completely except at end of file, so block
     * boundaries are the file's. */
    if (!fw->buf)
        fw->buf = xmalloc(FS_CHUNK);
    unsigned char *buf = fw->buf;
    uint64_t total = 0;
    bool eof = false;
    while (!eof) {
        size_t got = 0;
        while (got < FS_CHUNK) {
            ssize_t r = read(fd, buf + got, FS_CHUNK - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                *problem = true;
                close(fd);
                fs_file_free(f);
                return NULL;
            }
            if (r == 0) {
                eof = true;
                break;
            }
            got += (size_t)r;
        }
        for (size_t off = 0; off < got; off += HB_BLOCK) {
            size_t n = got - off < HB_BLOCK ? got - off : HB_BLOCK;
            if (f->nblocks == cap) {   /* the file grew while we read it */
                cap *= 2;
                f->blocks = xrealloc(f->blocks, cap * sizeof *f->blocks);
            }
            f->blocks[f->nblocks++] = hb_content_block(&c, buf + off, n);
        }
        total += got;
    }
    close(fd);
    f->size = (int64_t)total;
    f->hash = hb_content_finish(&c, total);
    return f;
}

/* ---- inotify bookkeeping ---- */

static void watch_dir(fs_watch *fw, const char *dir)
{
    if (fw->ifd < 0 || hb_map_has(&fw->dir_wd, dir))
        return;
    int wd = inotify_add_watch(fw->ifd, dir, FS_MASK);
    if (wd < 0) {
        if (errno == ENOSPC || errno == ENOMEM) {
            /* Past fs.inotify.max_user_watches: fall back to walking. */
            fw->walk_every_poll = true;
            if (!fw->over_limit_logged)
                LOG_W("heartbeat", "inotify watch limit reached at %s; the filesystem source "
                      "walks its trees every tick instead", dir);
            fw->over_limit_logged = true;
        } else if (errno != ENOENT && errno != ENOTDIR) {
            fw->problems++;
        }
        return;
    }
    char key[24];
    snprintf(key, sizeof key, "%d", wd);
    free(hb_map_put(&fw->wd_path, key, xstrdup(dir)));
    hb_map_put(&fw->dir_wd, dir, (void *)(intptr_t)wd);
}

/* Watches the directory holding path ("/" for a top-level entry), so a
 * root that does not exist (yet, or any more) is seen when it appears. */
static void watch_parent(fs_watch *fw, const char *path)
{
    char *parent = xstrdup(path);
    char *slash = strrchr(parent, '/');
    if (slash == parent)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    watch_dir(fw, parent);
    free(parent);
}

static void forget_wd(fs_watch *fw, int wd)
{
    char key[24];
    snprintf(key, sizeof key, "%d", wd);
    char *dir = hb_map_del(&fw->wd_path, key);
    if (dir) {
        if ((intptr_t)hb_map_get(&fw->dir_wd, dir) == wd)
            hb_map_del(&fw->dir_wd, dir);
        free(dir);
    }
}

static bool has_prefix_dir(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* Every baseline file at or under dir becomes dirty; watches below dir are
 * dropped (the directory moved away or was removed). */
typedef struct prefix_ctx {
    fs_watch *fw;
    const char *dir;
    int *wds;
    size_t n;
} prefix_ctx;

static void mark_prefix_file(void *ctx, const char *key, void *value)
{
    prefix_ctx *pc = ctx;
    if (has_prefix_dir(key, pc->dir))
        hb_map_put(&pc->fw->dirty, key, NULL);
}

static void collect_prefix_wd(void *ctx, const char *key, void *value)
{
    prefix_ctx *pc = ctx;
    if (has_prefix_dir(key, pc->dir))
        pc->wds[pc->n++] = (int)(intptr_t)value;
}

static void dir_gone(fs_watch *fw, const char *dir)
{
    prefix_ctx pc = {fw, dir, NULL, 0};
    hb_map_each(&fw->files, mark_prefix_file, &pc);
    pc.wds = xmalloc((fw->dir_wd.count + 1) * sizeof *pc.wds);
    hb_map_each(&fw->dir_wd, collect_prefix_wd, &pc);
    for (size_t i = 0; i < pc.n; i++) {
        inotify_rm_watch(fw->ifd, pc.wds[i]);   /* EINVAL when already gone: fine */
        forget_wd(fw, pc.wds[i]);
    }
    free(pc.wds);
    /* A root that went with it is covered through its parent again, so its
     * re-creation is seen (as at start, when it did not exist). */
    for (size_t i = 0; i < fw->n_roots; i++) {
        if (!has_prefix_dir(fw->roots[i], dir))
            continue;
        watch_parent(fw, fw->roots[i]);
    }
}

/* ---- walking ---- */

typedef enum { WALK_BASELINE, WALK_DIRTY_NEW, WALK_RESCAN } walk_mode;

typedef struct walk_ctx {
    fs_watch *fw;
    walk_mode mode;
    hb_map *seen;          /* WALK_RESCAN: every regular file met */
} walk_ctx;

static void baseline_put(fs_watch *fw, const char *path, fs_file *f)
{
    fs_file *old = hb_map_get(&fw->files, path);
    if (!old && fw->files.count >= fw->max_files) {
        fs_file_free(f);
        fw->problems++;
        return;
    }
    hb_map_put(&fw->files, path, f);
    fs_file_free(old);
}

static void walk_file(walk_ctx *wc, const char *path, const struct stat *st)
{
    fs_watch *fw = wc->fw;
    if (fw->exclude && !strcmp(path, fw->exclude))
        return;
    switch (wc->mode) {
    case WALK_BASELINE: {
        bool problem;
        fs_file *f = read_file_state(fw, path, &problem);
        if (problem)
            fw->problems++;
        if (f)
            baseline_put(fw, path, f);
        break;
    }
    case WALK_DIRTY_NEW:
        hb_map_put(&fw->dirty, path, NULL);
        break;
    case WALK_RESCAN: {
        hb_map_put(wc->seen, path, NULL);
        fs_file *b = hb_map_get(&fw->files, path);
        int64_t mt = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
        if (!b || b->size != st->st_size || b->mtime_ns != mt)
            hb_map_put(&fw->dirty, path, NULL);
        break;
    }
    }
}

static void walk(walk_ctx *wc, const char *path, int depth)
{
    fs_watch *fw = wc->fw;
    struct stat st;
    if (lstat(path, &st) < 0)
        return;
    if (S_ISREG(st.st_mode)) {
        walk_file(wc, path, &st);
        return;
    }
    if (!S_ISDIR(st.st_mode) || depth > FS_MAX_DEPTH)
        return;
    watch_dir(fw, path);
    DIR *d = opendir(path);
    if (!d) {
        if (errno != ENOENT)
            fw->problems++;
        return;
    }
    struct dirent *e;
    loom_str child = LOOM_STR_INIT;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        str_clear(&child);
        str_printf(&child, "%s%s%s", path, strcmp(path, "/") ? "/" : "", e->d_name);
        if (ignored(fw, child.ptr))
            continue;
        walk(wc, child.ptr, depth + 1);
    }
    str_free(&child);
    closedir(d);
}

/* A root that is a file or missing is covered through its parent. */
static void cover_root(fs_watch *fw, walk_ctx *wc, const char *root)
{
    struct stat st;
    if (lstat(root, &st) == 0 && S_ISDIR(st.st_mode)) {
        walk(wc, root, 0);
        return;
    }
    watch_parent(fw, root);
    if (lstat(root, &st) == 0 && S_ISREG(st.st_mode))
        walk_file(wc, root, &st);
}

/* ---- the poll ---- */

typedef struct emit_ctx {
    fs_watch *fw;
    const watch_tick *t;
    watch_emit_fn emit;
    void *ctx;
    int emitted;
} emit_ctx;

static void fmt_hash(char out[17], const fs_file *f)
{
    if (f)
        snprintf(out, 17, "%016" PRIx64, f->hash);
    else
        snprintf(out, 17, "none");
}

static void emit_change(emit_ctx *ec, const char *path, const fs_file *old, const fs_file *now)
{
    fs_watch *fw = ec->fw;
    char ho[17], hn[17];
    fmt_hash(ho, old);
    fmt_hash(hn, now);
    loom_str fp = LOOM_STR_INIT, sum = LOOM_STR_INIT;
    str_printf(&fp, "fs:%s:%s:%s", path, ho, now ? hn : "deleted");
    const char *rel = watch_rel_path(path, fw->cwd);
    double magnitude = 1.0;
    if (!old) {
        str_printf(&sum, "%s created (%" PRId64 " bytes)", rel, now->size);
    } else if (!now) {
        str_printf(&sum, "%s deleted (was %" PRId64 " bytes)", rel, old->size);
    } else {
        /* gate.h: magnitude = 0.5 + 0.5 × the fraction of the file that
         * changed — blocks at the same offset that differ, or the size
         * change when the file is not hashed by content. */
        double frac;
        if (old->blocks && now->blocks) {
            uint32_t n = old->nblocks > now->nblocks ? old->nblocks : now->nblocks;
            uint32_t common = old->nblocks < now->nblocks ? old->nblocks : now->nblocks;
            uint32_t diff = n - common;
            for (uint32_t i = 0; i < common; i++)
                if (old->blocks[i] != now->blocks[i])
                    diff++;
            frac = n ? (double)diff / n : 1.0;
        } else {
            int64_t big = old->size > now->size ? old->size : now->size;
            int64_t d = old->size > now->size ? old->size - now->size : now->size - old->size;
            frac = big ? (double)d / (double)big : 0.0;
        }
        if (frac > 1)
            frac = 1;
        magnitude = 0.5 + 0.5 * frac;
        str_printf(&sum, "%s modified (%" PRId64 " → %" PRId64 " bytes, ~%d%% changed)", rel,
                   old->size, now->size, (int)(frac * 100 + 0.5));
    }
    hb_candidate c = {
        .source = "filesystem",
        .subject = path,
        .fingerprint = fp.ptr,
        .summary = sum.ptr,
        .urgency = ec->t->act_active ? fw->act_urgency : fw->idle_urgency,
        .magnitude = magnitude,
        .weight = fw->weight,
    };
    ec->emit(ec->ctx, &c);
    ec->emitted++;
    str_free(&fp);
    str_free(&sum);
}

/* Consumes an own-write note for path when it explains content `now`. */
static bool own_write_explains(fs_watch *fw, const char *path, const fs_file *now)
{
    own_note *n = hb_map_get(&fw->own, path);
    if (!n)
        return false;
    if (n->has_hash && (!now || now->hash != n->hash))
        return false;
    free(hb_map_del(&fw->own, path));
    return true;
}

static void look_at(emit_ctx *ec, const char *path)
{
    fs_watch *fw = ec->fw;
    if (!in_scope(fw, path))
        return;
    bool problem;
    fs_file *now = read_file_state(fw, path, &problem);
    if (problem)
        fw->problems++;
    fs_file *old = hb_map_get(&fw->files, path);
    if (!now && problem)
        return;   /* unreadable: keep the baseline, try again when it changes */
    if (!now) {
        if (old) {
            if (!own_write_explains(fw, path, NULL))
                emit_change(ec, path, old, NULL);
            fs_file_free(hb_map_del(&fw->files, path));
        }
        return;
    }
    if (old && old->hash == now->hash) {
        /* Same bytes (a touch, a rewrite with the same content). A pending
         * note without a hash is used up: the file is what the agent left. */
        own_note *n = hb_map_get(&fw->own, path);
        if (n && !n->has_hash)
            free(hb_map_del(&fw->own, path));
        baseline_put(fw, path, now);
        return;
    }
    if (!own_write_explains(fw, path, now))
        emit_change(ec, path, old, now);
    baseline_put(fw, path, now);
}

static void add_tree_dirty(fs_watch *fw, const char *dir)
{
    walk_ctx wc = {fw, WALK_DIRTY_NEW, NULL};
    walk(&wc, dir, 0);
}

static void drain_inotify(fs_watch *fw)
{
    /* Aligned for struct inotify_event. */
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    loom_str path = LOOM_STR_INIT;
    for (;;) {
        ssize_t len = read(fw->ifd, buf, sizeof buf);
        if (len < 0 && errno == EINTR)
            continue;
        if (len <= 0)
            break;
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) {
                fw->need_walk = true;
                continue;
            }
            char key[24];
            snprintf(key, sizeof key, "%d", ev->wd);
            const char *dir = hb_map_get(&fw->wd_path, key);
            if (!dir)
                continue;
            if (ev->mask & IN_IGNORED) {
                forget_wd(fw, ev->wd);
                continue;
            }
            if (!ev->len) {
                if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
                    char *d = xstrdup(dir);
                    dir_gone(fw, d);
                    free(d);
                }
                continue;
            }
            str_clear(&path);
            str_printf(&path, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", ev->name);
            if (!in_scope(fw, path.ptr))
                continue;
            if (ev->mask & IN_ISDIR) {
                if (ev->mask & (IN_CREATE | IN_MOVED_TO))
                    add_tree_dirty(fw, path.ptr);
                else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
                    dir_gone(fw, path.ptr);
            } else {
                hb_map_put(&fw->dirty, path.ptr, NULL);
            }
        }
    }
    str_free(&path);
}

typedef struct rescan_ctx {
    fs_watch *fw;
    hb_map *seen;
} rescan_ctx;

static void mark_missing(void *ctx, const char *key, void *value)
{
    rescan_ctx *rc = ctx;
    if (!hb_map_has(rc->seen, key))
        hb_map_put(&rc->fw->dirty, key, NULL);
}

static void rescan(fs_watch *fw)
{
    hb_map seen = HB_MAP_INIT;
    walk_ctx wc = {fw, WALK_RESCAN, &seen};
    for (size_t i = 0; i < fw->n_roots; i++)
        cover_root(fw, &wc, fw->roots[i]);
    rescan_ctx rc = {fw, &seen};
    hb_map_each(&fw->files, mark_missing, &rc);
    hb_map_free(&seen, NULL);
}

typedef struct expire_ctx {
    int64_t now_ms;
    const char **victims;
    size_t n;
} expire_ctx;

static void find_expired(void *ctx, const char *key, void *value)
{
    expire_ctx *ec = ctx;
    own_note *n = value;
    if (ec->now_ms - n->at_ms > FS_OWN_NOTE_TTL_MS)
        ec->victims[ec->n++] = key;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int fs_poll(void *ctx, const watch_tick *t, watch_emit_fn emit, void *emit_ctx_)
{
    fs_watch *fw = ctx;
    fw->problems = 0;
    if (fw->ifd >= 0)
        drain_inotify(fw);
    if (fw->walk_every_poll || fw->need_walk) {
        fw->need_walk = false;
        rescan(fw);
    }
    emit_ctx ec = {fw, t, emit, emit_ctx_, 0};
    if (fw->dirty.count) {
        size_t n;
        const char **keys = hb_map_keys(&fw->dirty, &n);
        /* Sorted, so one tick's events come out in a stable order. */
        qsort(keys, n, sizeof *keys, cmp_str);
        for (size_t i = 0; i < n; i++)
            look_at(&ec, keys[i]);
        free(keys);
        hb_map_free(&fw->dirty, NULL);
    }
    if (fw->own.count) {
        expire_ctx x = {t->now_ms, xmalloc(fw->own.count * sizeof(char *)), 0};
        hb_map_each(&fw->own, find_expired, &x);
        for (size_t i = 0; i < x.n; i++) {
            char *k = xstrdup(x.victims[i]);
            free(hb_map_del(&fw->own, k));
            free(k);
        }
        free(x.victims);
    }
    return fw->problems;
}

static void fs_own_write(void *ctx, const char *path, bool has_hash, uint64_t hash, int64_t now_ms)
{
    fs_watch *fw = ctx;
    if (!in_scope(fw, path))
        return;
    own_note *n = xcalloc(1, sizeof *n);
    n->has_hash = has_hash;
    n->hash = hash;
    n->at_ms = now_ms;
    free(hb_map_put(&fw->own, path, n));
    /* Without a hash the note means "whatever is there next": look at it in
     * this very poll so it cannot swallow a later change by someone else. */
    if (!has_hash)
        hb_map_put(&fw->dirty, path, NULL);
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void fs_free(void *ctx)
{
    fs_watch *fw = ctx;
    if (!fw)
        return;
    if (fw->ifd >= 0)
        close(fw->ifd);
    hb_map_free(&fw->wd_path, free);
    hb_map_free(&fw->dir_wd, NULL);
    hb_map_free(&fw->files, fs_file_free);
    hb_map_free(&fw->dirty, NULL);
    hb_map_free(&fw->own, free);
    free_strv(fw->roots, fw->n_roots);
    free_strv(fw->ignore, fw->n_ignore);
    free(fw->cwd);
    free(fw->exclude);
    free(fw->buf);
    free(fw);
}

/* ---- its settings block (watch_ops.parse / to_json) ---- */

static const char *const default_ignore[] = {
    ".git", ".hg", ".svn", ".loom", "node_modules", "__pycache__",
    "*.o", "*.a", "*.so", "*.pyc", "*.swp", "*.swx", "*~", ".#*", "4913",
    ".*.tmp.*", /* base/fileio's atomic-write temp files */
};

static const char *const fs_keys[] = {"type", "weight", "urgency", "paths", "method",
                                      "ignore", "max_hash_bytes", "max_files", NULL};

/* "urgency": one level, or {"act": level, "idle": level}. */
static int fs_parse_urgency(const json_t *u, const char *where, watch_config *w, loom_error *err)
{
    char sub[512];
    int rc;
    snprintf(sub, sizeof sub, "%s.urgency", where);
    if (json_is_object(u)) {
        static const char *const ukeys[] = {"act", "idle", NULL};
        if ((rc = hb_cfg_check_keys(u, ukeys, sub, err)) < 0)
            return rc;
        char sub2[600];
        json_t *a = json_object_get(u, "act"), *i = json_object_get(u, "idle");
        snprintf(sub2, sizeof sub2, "%s.act", sub);
        if (a && (rc = hb_cfg_urgency(a, sub2, &w->urgency, err)) < 0)
            return rc;
        snprintf(sub2, sizeof sub2, "%s.idle", sub);
        if (i && (rc = hb_cfg_urgency(i, sub2, &w->idle_urgency, err)) < 0)
            return rc;
        return 0;
    }
    if (!json_is_string(u))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: must be a level (\"low\", \"high\", \"critical\") or "
                              "{\"act\": level, \"idle\": level}", sub);
    if ((rc = hb_cfg_urgency(u, sub, &w->urgency, err)) < 0)
        return rc;
    w->idle_urgency = w->urgency;
    return 0;
}

static int fs_parse(const json_t *src, const char *where, const char *cwd, watch_config *w,
                    loom_error *err)
{
    int rc;
    w->urgency = EVENT_HIGH;
    w->idle_urgency = EVENT_LOW;
    json_t *u = json_object_get(src, "urgency");
    if (u && (rc = fs_parse_urgency(u, where, w, err)) < 0)
        return rc;
    if (!json_object_get(src, "paths"))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: missing \"paths\"", where);
    if ((rc = hb_cfg_strv(src, "paths", where, true, &w->paths, &w->n_paths, err)) < 0)
        return rc;
    hb_cfg_resolve_all(w->paths, w->n_paths, cwd);
    const char *method = "hash";
    if ((rc = hb_cfg_string(src, "method", where, &method, err)) < 0)
        return rc;
    if (strcmp(method, "hash") && strcmp(method, "mtime"))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s.method: \"%s\" is not a method (expected \"hash\" or "
                              "\"mtime\")", where, method);
    w->method_hash = !strcmp(method, "hash");
    char **extra = NULL;
    size_t n_extra = 0;
    if ((rc = hb_cfg_strv(src, "ignore", where, false, &extra, &n_extra, err)) < 0)
        return rc;
    size_t nd = sizeof default_ignore / sizeof *default_ignore;
    w->ignore = xcalloc(nd + n_extra, sizeof *w->ignore);
    for (size_t i = 0; i < nd; i++)
        w->ignore[w->n_ignore++] = xstrdup(default_ignore[i]);
    for (size_t i = 0; i < n_extra; i++)
        w->ignore[w->n_ignore++] = extra[i];
    free(extra);
    double d = (double)HB_DEFAULT_MAX_HASH_BYTES;
    if ((rc = hb_cfg_number(src, "max_hash_bytes", where, 0, 1e15, false, &d, err)) < 0)
        return rc;
    w->max_hash_bytes = (long long)d;
    d = HB_DEFAULT_MAX_FILES;
    if ((rc = hb_cfg_number(src, "max_files", where, 0, 1e9, true, &d, err)) < 0)
        return rc;
    w->max_files = (size_t)d;
    return 0;
}

static void fs_to_json(const watch_config *w, json_t *s)
{
    json_object_set_new(s, "urgency",
                        json_pack("{s:s, s:s}", "act", event_urgency_name(w->urgency), "idle",
                                  event_urgency_name(w->idle_urgency)));
    json_object_set_new(s, "paths", hb_cfg_strv_json(w->paths, w->n_paths));
    json_object_set_new(s, "method", json_string(w->method_hash ? "hash" : "mtime"));
    json_object_set_new(s, "ignore", hb_cfg_strv_json(w->ignore, w->n_ignore));
    json_object_set_new(s, "max_hash_bytes", json_integer(w->max_hash_bytes));
    json_object_set_new(s, "max_files", json_integer((json_int_t)w->max_files));
}

const watch_ops watch_fs_ops = {
    .poll = fs_poll,
    .fd = NULL,
    .own_write = fs_own_write,
    .free = fs_free,
    .name = "filesystem",
    .type = WATCH_FILESYSTEM,
    .keys = fs_keys,
    .default_weight = 1.0,
    .parse = fs_parse,
    .to_json = fs_to_json,
};

int watch_fs_new(const watch_config *c, const char *cwd, const char *exclude, watch_source *out,
                 loom_error *err)
{
    if (c->type != WATCH_FILESYSTEM || !c->n_paths)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "heartbeat: not a filesystem source");
    fs_watch *fw = xcalloc(1, sizeof *fw);
    fw->roots = xcalloc(c->n_paths, sizeof *fw->roots);
    for (size_t i = 0; i < c->n_paths; i++)
        fw->roots[i] = xstrdup(c->paths[i]);
    fw->n_roots = c->n_paths;
    fw->ignore = xcalloc(c->n_ignore ? c->n_ignore : 1, sizeof *fw->ignore);
    for (size_t i = 0; i < c->n_ignore; i++)
        fw->ignore[i] = xstrdup(c->ignore[i]);
    fw->n_ignore = c->n_ignore;
    fw->method_hash = c->method_hash;
    fw->max_hash_bytes = c->max_hash_bytes;
    fw->max_files = c->max_files ? c->max_files : HB_DEFAULT_MAX_FILES;
    fw->act_urgency = c->urgency;
    fw->idle_urgency = c->idle_urgency;
    fw->weight = c->weight;
    fw->cwd = xstrdup(cwd);
    fw->exclude = exclude ? path_fold(exclude) : NULL;
    fw->ifd = c->no_inotify ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (c->no_inotify) {
        fw->walk_every_poll = true;
    } else if (fw->ifd < 0) {
        LOG_W("heartbeat", "inotify unavailable (%s); the filesystem source walks its trees "
              "every tick", strerror(errno));
        fw->walk_every_poll = true;
    }
    walk_ctx wc = {fw, WALK_BASELINE, NULL};
    for (size_t i = 0; i < fw->n_roots; i++)
        cover_root(fw, &wc, fw->roots[i]);
    if (fw->files.count >= fw->max_files)
        LOG_W("heartbeat", "filesystem source: more than %zu files under its paths; the rest "
              "are not watched (raise max_files or add ignore patterns)", fw->max_files);
    out->ops = &watch_fs_ops;
    out->ctx = fw;
    out->type = WATCH_FILESYSTEM;
    return 0;
}

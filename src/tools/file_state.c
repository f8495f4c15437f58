/* file_state.c — the read cache behind read-before-write (see file_state.h).
 *
 * A chained hash table of canonical path -> (mtime, size, hash) under one
 * mutex. Lookups copy the entry out and release the lock before any file is
 * touched, so a slow disk never stalls a concurrent Read.
 */
#include "tools/file_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"

typedef struct fs_entry {
    struct fs_entry *next;
    char *path;
    int64_t mtime_ns;
    int64_t size;
    uint64_t hash;
} fs_entry;

struct file_state {
    pthread_mutex_t lock;
    fs_entry **buckets;
    size_t n_buckets;   /* a power of two */
    size_t n;
};

static uint64_t hash_str(const char *s)
{
    return hash_fnv1a64(HASH_FNV1A64_SEED, s, strlen(s));
}

static int64_t mtime_ns(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* The key of a path: the target of symlinks when the file exists, so
 * reading through a link and writing through the real name agree. */
static char *canonical(const char *path)
{
    char *r = realpath(path, NULL);
    return r ? r : xstrdup(path);
}

file_state *file_state_new(void)
{
    file_state *fs = xcalloc(1, sizeof *fs);
    pthread_mutex_init(&fs->lock, NULL);
    fs->n_buckets = 64;
    fs->buckets = xcalloc(fs->n_buckets, sizeof *fs->buckets);
    return fs;
}

void file_state_free(file_state *fs)
{
    if (!fs)
        return;
    for (size_t i = 0; i < fs->n_buckets; i++) {
        fs_entry *e = fs->buckets[i];
        while (e) {
            fs_entry *next = e->next;
            free(e->path);
            free(e);
            e = next;
        }
    }
    free(fs->buckets);
    pthread_mutex_destroy(&fs->lock);
    free(fs);
}

file_state *file_state_clone(const file_state *src)
{
    file_state *fs = xcalloc(1, sizeof *fs);
    pthread_mutex_init(&fs->lock, NULL);
    pthread_mutex_lock((pthread_mutex_t *)&src->lock); /* the source may be in use elsewhere */
    fs->n_buckets = src->n_buckets;
    fs->buckets = xcalloc(fs->n_buckets, sizeof *fs->buckets);
    fs->n = src->n;
    for (size_t i = 0; i < src->n_buckets; i++) {
        /* Same bucket count, so each chain copies into its own bucket. */
        fs_entry **tail = &fs->buckets[i];
        for (const fs_entry *e = src->buckets[i]; e; e = e->next) {
            fs_entry *c = xmalloc(sizeof *c);
            *c = *e;
            c->path = xstrdup(e->path);
            c->next = NULL;
            *tail = c;
            tail = &c->next;
        }
    }
    pthread_mutex_unlock((pthread_mutex_t *)&src->lock);
    return fs;
}

/* Caller holds the lock. */
static fs_entry *find_locked(file_state *fs, const char *key)
{
    for (fs_entry *e = fs->buckets[hash_str(key) & (fs->n_buckets - 1)]; e; e = e->next)
        if (strcmp(e->path, key) == 0)
            return e;
    return NULL;
}

static void grow_locked(file_state *fs)
{
    size_t nb = fs->n_buckets * 2;
    fs_entry **b = xcalloc(nb, sizeof *b);
    for (size_t i = 0; i < fs->n_buckets; i++) {
        fs_entry *e = fs->buckets[i];
        while (e) {
            fs_entry *next = e->next;
            size_t j = hash_str(e->path) & (nb - 1);
            e->next = b[j];
            b[j] = e;
            e = next;
        }
    }
    free(fs->buckets);
    fs->buckets = b;
    fs->n_buckets = nb;
}

void file_state_note(file_state *fs, const char *abs_path, const struct stat *st, uint64_t hash)
{
    if (!fs)
        return;
    char *key = canonical(abs_path);
    pthread_mutex_lock(&fs->lock);
    fs_entry *e = find_locked(fs, key);
    if (e) {
        free(key);
    } else {
        if (fs->n >= fs->n_buckets)
            grow_locked(fs);
        e = xcalloc(1, sizeof *e);
        e->path = key;
        size_t j = hash_str(key) & (fs->n_buckets - 1);
        e->next = fs->buckets[j];
        fs->buckets[j] = e;
        fs->n++;
    }
    e->mtime_ns = mtime_ns(st);
    e->size = (int64_t)st->st_size;
    e->hash = hash;
    pthread_mutex_unlock(&fs->lock);
}

/* A driver's text has no mtime: this one never equals a file's, so a disk
 * check of its entry always compares content. */
#define TEXT_MTIME INT64_MIN

void file_state_note_text(file_state *fs, const char *abs_path, const void *text, size_t len)
{
    struct stat st = {0};
    st.st_size = (off_t)len;
    file_state_note(fs, abs_path, &st, hash_fnv1a64(HASH_FNV1A64_SEED, text, len));
    if (!fs)
        return;
    char *key = canonical(abs_path);
    pthread_mutex_lock(&fs->lock);
    fs_entry *e = find_locked(fs, key);
    if (e)
        e->mtime_ns = TEXT_MTIME;
    pthread_mutex_unlock(&fs->lock);
    free(key);
}

/* A copy of abs_path's entry; false when it has none. */
static bool entry_of(file_state *fs, const char *abs_path, fs_entry *out)
{
    if (!fs)
        return false;
    char *key = canonical(abs_path);
    pthread_mutex_lock(&fs->lock);
    fs_entry *e = find_locked(fs, key);
    if (e)
        *out = *e;
    pthread_mutex_unlock(&fs->lock);
    free(key);
    return e != NULL;
}

bool file_state_known(file_state *fs, const char *abs_path)
{
    fs_entry seen;
    return entry_of(fs, abs_path, &seen);
}

/* Hashes the file's content now; 0 on success. */
static int hash_file(const char *path, uint64_t *out, int *err_no)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *err_no = errno;
        return -1;
    }
    uint64_t h = FILE_STATE_HASH_SEED;
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            *err_no = errno;
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        h = hash_fnv1a64(h, buf, (size_t)n);
    }
    close(fd);
    *out = h;
    return 0;
}

static int refuse(loom_str *why, const char *msg)
{
    if (why) {
        str_clear(why);
        str_puts(why, msg);
    }
    return 1;
}

int file_state_check(file_state *fs, const char *abs_path, loom_str *why)
{
    if (!fs)
        return refuse(why, FILE_STATE_NOT_READ);
    char *key = canonical(abs_path);
    pthread_mutex_lock(&fs->lock);
    fs_entry *e = find_locked(fs, key);
    fs_entry seen = e ? *e : (fs_entry){0};
    pthread_mutex_unlock(&fs->lock);
    free(key);
    if (!e)
        return refuse(why, FILE_STATE_NOT_READ);

    struct stat st;
    if (stat(abs_path, &st) != 0)
        return refuse(why, FILE_STATE_MODIFIED);  /* deleted or made unreachable since */
    if ((int64_t)st.st_size != seen.size)
        return refuse(why, FILE_STATE_MODIFIED);
    if (mtime_ns(&st) == seen.mtime_ns)
        return 0;
    /* Same size, new mtime: only the content can tell. Without a hash from
     * the read we cannot prove it unchanged, so we do not guess. */
    if (seen.hash == FILE_STATE_NO_HASH)
        return refuse(why, FILE_STATE_MODIFIED);
    uint64_t now;
    int e_no = 0;
    if (hash_file(abs_path, &now, &e_no) != 0) {
        if (why) {
            str_clear(why);
            str_printf(why, "Cannot read %s to check it is unchanged: %s", abs_path,
                       strerror(e_no));
        }
        return 1;
    }
    if (now != seen.hash)
        return refuse(why, FILE_STATE_MODIFIED);
    /* Unchanged content under a new mtime: remember the new mtime so the
     * next check is cheap again. */
    file_state_note(fs, abs_path, &st, now);
    return 0;
}

int file_state_write(file_state *fs, const char *abs_path, const void *data, size_t len,
                     int mode, loom_error *err)
{
    struct stat st;
    int rc = file_replace(abs_path, data, len, mode, &st, err);
    if (rc != 0)
        return rc;
    file_state_note(fs, abs_path, &st, hash_fnv1a64(HASH_FNV1A64_SEED, data, len));
    return 0;
}


int file_state_check_text(file_state *fs, const char *abs_path, const void *text, size_t len,
                          loom_str *why)
{
    fs_entry seen;
    if (!entry_of(fs, abs_path, &seen))
        return refuse(why, FILE_STATE_NOT_READ);
    if (seen.size != (int64_t)len || seen.hash == FILE_STATE_NO_HASH ||
        seen.hash != hash_fnv1a64(HASH_FNV1A64_SEED, text, len))
        return refuse(why, FILE_STATE_MODIFIED);
    return 0;
}

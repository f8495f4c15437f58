/* fileio.c — whole-file reads, crash-safe replacement and mkdir -p.
 *
 * Everything Loom persists (sessions, config, state) is written through
 * file_write_atomic so a crash or full disk leaves the old file intact.
 * file_read_text is the one reader of small untrusted text files (agent,
 * command, skill and style files, a repository's .git/config). No state;
 * any thread. */
#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"

static loom_error_code code_for_errno(int e)
{
    return e == ENOENT ? LOOM_ERR_RESOURCE_NOT_FOUND : LOOM_ERR_IO;
}

int file_read_fd(int fd, size_t max, loom_str *out)
{
    size_t start = out->len;
    for (;;) {
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        str_append(out, buf, (size_t)n);
        if (out->len - start > max)
            return 1;
    }
}

int file_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            /* write() returning 0 for a nonzero length means no progress will
             * ever be made; do not spin. */
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int file_read_all(const char *path, char **out, size_t *len, loom_error *err)
{
    *out = NULL;
    if (len)
        *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return loom_error_set(err, code_for_errno(e), "cannot open %s: %s", path, strerror(e));
    }
    /* Read to EOF rather than trusting st_size: files under /proc report 0,
     * and a file may grow while we read it. The size is only a first guess. */
    struct stat st;
    size_t guess = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        guess = (size_t)st.st_size;
    loom_str buf = LOOM_STR_INIT;
    str_reserve(&buf, guess + 1);
    for (;;) {
        if (buf.cap - buf.len < 4096)
            str_reserve(&buf, buf.cap);
        ssize_t n = read(fd, buf.ptr + buf.len, buf.cap - buf.len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            str_free(&buf);
            return loom_error_set(err, LOOM_ERR_IO, "cannot read %s: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        buf.len += (size_t)n;
    }
    close(fd);
    buf.ptr[buf.len] = '\0';
    if (len)
        *len = buf.len;
    *out = str_steal(&buf);
    return 0;
}

char *file_read_text(const char *path, size_t cap, unsigned flags, loom_str *why)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
                            (flags & FILE_TEXT_NOFOLLOW ? O_NOFOLLOW : 0));
    if (fd < 0) {
        if (why)
            str_printf(why, "cannot be read: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (why)
            str_puts(why, "not a regular file");
    } else if ((unsigned long long)st.st_size > cap) {
        if (why)
            str_printf(why, "larger than %zu KiB", cap / 1024);
    } else {
        size_t want = (size_t)st.st_size, len = 0;
        text = xmalloc(want + 1);
        while (len < want) { /* a file that shrank since the fstat ends early */
            ssize_t r = read(fd, text + len, want - len);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                if (why)
                    str_printf(why, "cannot be read: %s", strerror(errno));
                free(text);
                text = NULL;
                break;
            }
            if (r == 0)
                break;
            len += (size_t)r;
        }
        if (text) {
            text[len] = '\0';
            if ((flags & FILE_TEXT_NO_NUL) && strlen(text) != len) {
                if (why)
                    str_puts(why, "holds a NUL byte (not a text file)");
                free(text);
                text = NULL;
            }
        }
    }
    close(fd);
    return text;
}

/* Splits path into its directory ("." when there is none) and base name. */
static void split_path(const char *path, char **dir, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        *dir = xstrdup(".");
        *base = path;
    } else if (slash == path) {
        *dir = xstrdup("/");
        *base = slash + 1;
    } else {
        *dir = xstrndup(path, (size_t)(slash - path));
        *base = slash + 1;
    }
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    /* Some filesystems cannot fsync a directory at all; the rename is then as
     * durable as that filesystem allows, which is not our error to report. */
    if (rc < 0 && (errno == EINVAL || errno == ENOTSUP))
        rc = 0;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int file_write_atomic(const char *path, const void *data, size_t len, int mode,
                      loom_error *err)
{
    char *dir;
    const char *base;
    split_path(path, &dir, &base);
    if (!*base) {
        free(dir);
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "cannot write %s: path names a directory", path);
    }

    /* The temp file sits beside the target because rename() is atomic only
     * within one filesystem. pid + random keep concurrent writers (threads or
     * processes) from sharing a temp file; O_EXCL catches the rest. */
    loom_str tmp = LOOM_STR_INIT;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        uint32_t r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            r = (uint32_t)rand() ^ (uint32_t)attempt;
        str_clear(&tmp);
        str_printf(&tmp, "%s/.%s.tmp.%ld.%08x", dir, base, (long)getpid(), (unsigned)r);
        fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        int rc = loom_error_set(err, code_for_errno(e), "cannot write %s: creating %s: %s",
                                path, str_cstr(&tmp), strerror(e));
        str_free(&tmp);
        free(dir);
        return rc;
    }

    const char *step = "writing";
    if (file_write_full(fd, data, len) < 0)
        goto fail;
    step = "syncing";
    if (fsync(fd) < 0)
        goto fail;
    /* close() can report a deferred write error (NFS); it must be checked. */
    step = "closing";
    int c = close(fd);
    fd = -1;
    if (c < 0)
        goto fail;
    step = "renaming";
    if (rename(tmp.ptr, path) < 0)
        goto fail;
    str_free(&tmp);
    if (fsync_dir(dir) < 0) {
        int e = errno;
        int rc = loom_error_set(err, LOOM_ERR_IO, "cannot write %s: syncing directory %s: %s",
                                path, dir, strerror(e));
        free(dir);
        return rc;
    }
    free(dir);
    return 0;

fail:;
    int e = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp.ptr);
    int rc = loom_error_set(err, LOOM_ERR_IO, "cannot write %s: %s temp file: %s", path, step,
                            strerror(e));
    str_free(&tmp);
    free(dir);
    return rc;
}

int file_mkdirs(const char *path, int mode, loom_error *err)
{
    if (!path || !*path)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "cannot create directory: empty path");
    char *buf = xstrdup(path);
    size_t n = strlen(buf);
    /* Walk each prefix ending before a '/', then the whole path. Existing
     * components are fine as long as they are directories. */
    for (size_t i = 1; i <= n; i++) {
        if (i < n && buf[i] != '/')
            continue;
        if (i < n && buf[i - 1] == '/')
            continue; /* "a//b": the empty component is not a directory */
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, (mode_t)mode) < 0) {
            int e = errno;
            struct stat st;
            if (e == EEXIST && stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
                /* already there */
            } else {
                if (e == EEXIST)
                    e = ENOTDIR;
                int rc = loom_error_set(err, LOOM_ERR_IO, "cannot create directory %s: %s", buf,
                                        strerror(e));
                free(buf);
                return rc;
            }
        }
        buf[i] = saved;
    }
    free(buf);
    return 0;
}

bool file_exists(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0;
}

int file_replace(const char *path, const void *data, size_t len, int mode, struct stat *st,
                 loom_error *err)
{
    int rc = file_write_atomic(path, data, len, mode < 0 ? 0666 : mode, err);
    if (rc != 0)
        return rc;
    struct stat mine;
    if (!st)
        st = &mine;
    if (stat(path, st) != 0) {
        int e = errno;
        return loom_error_set(err, LOOM_ERR_IO, "wrote %s but cannot stat it: %s", path,
                              strerror(e));
    }
    /* The temp file was created through the umask; an overwrite must keep
     * the file's own mode, bit for bit. */
    if (mode >= 0 && (st->st_mode & 07777) != ((mode_t)mode & 07777)) {
        if (chmod(path, (mode_t)mode & 07777) != 0) {
            int e = errno;
            return loom_error_set(err, LOOM_ERR_IO, "wrote %s but cannot set its mode %o: %s",
                                  path, (unsigned)mode & 07777, strerror(e));
        }
        if (stat(path, st) != 0) {
            int e = errno;
            return loom_error_set(err, LOOM_ERR_IO, "wrote %s but cannot stat it: %s", path,
                                  strerror(e));
        }
    }
    return 0;
}

int file_lock(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void file_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last fd releases the flock */
}

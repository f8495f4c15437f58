/* jsonl.c — appending JSON Lines (see jsonl.h). Stateless: every call works
 * on the caller's descriptor; safe from any thread. */
#include "base/jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"

int jsonl_open(const char *path, const char *what, loom_error *err)
{
    if (!path || !*path)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "%s: no path given", what);
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *dir = xstrndup(path, (size_t)(slash - path));
        int rc = file_mkdirs(dir, 0700, err);
        free(dir);
        if (rc < 0) {
            loom_error_prefix(err, "%s %s", what, path);
            return rc;
        }
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return loom_error_set(err, LOOM_ERR_IO, "%s %s: %s", what, path, strerror(errno));
    return fd;
}

int jsonl_append(int fd, const json_t *record, loom_error *err)
{
    char *text = record ? json_dump_compact(record) : NULL;
    if (!text)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "record is not serialisable");
    loom_str line = LOOM_STR_INIT;
    str_puts(&line, text);
    str_putc(&line, '\n');
    free(text);
    size_t done = 0;
    int e = 0;
    while (done < line.len) {
        ssize_t w = write(fd, line.ptr + done, line.len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e = w < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)w;
    }
    str_free(&line);
    if (!e)
        return 0;
    /* A torn line: end it, so the next record starts clean and only this
     * one is lost. */
    if (done > 0)
        (void)!write(fd, "\n", 1);
    return loom_error_set(err, LOOM_ERR_IO, "%s", strerror(e));
}

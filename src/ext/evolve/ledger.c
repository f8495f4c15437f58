/* ledger.c — the plumbing under M_f: where its files are, the lock two
 * processes take around a read-modify-write, the JSONL ledgers
 * (mf/runs.jsonl, mf/review.jsonl, mf/constraint_hits.jsonl,
 * mf/recall.jsonl) appended to and read back, and the word lists the
 * metrics and the task classes compare. Ledgers are untrusted on read: a line that
 * is not a JSON object is skipped and counted, never fatal. No state; any
 * thread. */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/jsonl.h"
#include "base/path.h"
#include "base/str.h"
#include "ext/evolve/evolve_internal.h"

#define LEDGER_MAX_BYTES (8u * 1024 * 1024)

char *evolve_path(const char *root, const char *rel)
{
    return path_join(root, rel);
}

char *evolve_root(const char *cwd)
{
    char *r = path_repo_root(cwd);
    return r ? r : xstrdup(cwd);
}

bool evolve_path_inside(const char *root, const char *path)
{
    char *r = realpath(root, NULL);
    char *p = xstrdup(path);
    char *real = NULL;
    /* What does not exist yet will be made under its nearest existing
     * folder: that folder decides. */
    while (r && !(real = realpath(p, NULL))) {
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
            break;
        *slash = '\0';
    }
    size_t n = r ? strlen(r) : 0;
    bool ok = r && real && strncmp(real, r, n) == 0 && (real[n] == '/' || !real[n]);
    free(real);
    free(p);
    free(r);
    return ok;
}

bool evolve_root_contained(const char *root)
{
    /* Every folder M_f and the proposals write into, and the ones a
     * proposal is accepted into: a repository could ship any of them as a
     * symlink to elsewhere (~/.loom/skills, say). */
    static const char *const dirs[] = {
        ".loom/mf/patterns",   ".loom/mf/failures",   ".loom/skills/proposed",
        ".loom/agents/proposed", ".loom/constraints/proposed", NULL};
    bool ok = true;
    for (size_t i = 0; ok && dirs[i]; i++) {
        char *d = path_join(root, dirs[i]);
        ok = evolve_path_inside(root, d);
        free(d);
    }
    return ok;
}

void evolve_now(char out[32])
{
    clock_iso8601(clock_wall_ms(), out);
}

int evolve_lock(const char *root)
{
    char *dir = evolve_path(root, ".loom/mf");
    loom_error err;
    if (file_mkdirs(dir, 0755, &err) != 0) {
        free(dir);
        return -1;
    }
    char *path = path_join(dir, ".lock");
    free(dir);
    int fd = file_lock(path);
    free(path);
    return fd;
}

void evolve_unlock(int fd)
{
    file_unlock(fd);
}

int evolve_ledger_append(const char *root, const char *rel, json_t *obj, loom_error *err)
{
    if (!json_object_get(obj, "ts")) {
        char now[32];
        evolve_now(now);
        json_object_set_new(obj, "ts", json_string(now));
    }
    char *path = evolve_path(root, rel);
    /* A repository may ship the ledger as a symlink (to ~/.bashrc, say):
     * appending through it would write outside the project. */
    int fd = evolve_path_inside(root, path)
                 ? jsonl_open(path, rel, err)
                 : loom_error_set(err, LOOM_ERR_PROJECT_SCOPE_DENIED,
                                  "%s leads outside the project: not written", path);
    free(path);
    if (fd < 0)
        return fd;
    int rc = jsonl_append(fd, obj, err);
    close(fd);
    return rc;
}

json_t *evolve_jsonl_parse(const char *text, size_t len, size_t *bad)
{
    json_t *out = json_array();
    size_t nbad = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t k = 0;
        while (k < n && isspace((unsigned char)p[k]))
            k++;
        if (k < n) {
            json_error_t je;
            json_t *v = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
            if (json_is_object(v))
                json_array_append_new(out, v);
            else {
                json_decref(v);
                nbad++;
            }
        }
        p += n + (nl ? 1 : 0);
    }
    if (bad)
        *bad = nbad;
    return out;
}

/* The newest LEDGER_MAX_BYTES of the ledger, from its first whole line on
 * (NULL when it cannot be read: absent, a symlink, not a regular file). A
 * ledger only grows: reading nothing once it passes the cap would forget
 * every hit, run and decision at once. */
static char *ledger_tail(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    off_t from = st.st_size > (off_t)LEDGER_MAX_BYTES ? st.st_size - (off_t)LEDGER_MAX_BYTES : 0;
    char *buf = xmalloc(LEDGER_MAX_BYTES + 1);
    ssize_t got = pread(fd, buf, LEDGER_MAX_BYTES, from);
    close(fd);
    if (got < 0) {
        free(buf);
        return NULL;
    }
    size_t start = 0;
    if (from > 0) { /* the first line is cut: skip it */
        while (start < (size_t)got && buf[start] != '\n')
            start++;
        start += start < (size_t)got;
    }
    *len = (size_t)got - start;
    memmove(buf, buf + start, *len);
    buf[*len] = '\0';
    return buf;
}

json_t *evolve_ledger_read(const char *root, const char *rel, size_t *bad)
{
    if (bad)
        *bad = 0;
    char *path = evolve_path(root, rel);
    size_t len = 0;
    char *text = ledger_tail(path, &len);
    free(path);
    if (!text)
        return json_array();
    json_t *out = evolve_jsonl_parse(text, len, bad);
    free(text);
    return out;
}

/* Words that say nothing about a task. */
static const char *const stop_words[] = {
    "the", "and", "for", "with", "that", "this", "from", "into", "then", "than", "there", "their",
    "please", "can", "you", "your", "our", "are", "was", "were", "will", "would", "should",
    "could", "what", "when", "where", "which", "who", "how", "why", "all", "any", "some", "not",
    "but", "about", "over", "under", "again", "also", "just", "make", "use", "using", "run",
    "runs", "it's", "its", "let", "lets", "get", "got", "has", "have", "had", "out", "via",
    "bash", "read", "edit", "write", "exit", "error", "steps", "step", "worked", "fails", "seen",
    NULL,
};

static bool is_stop(const char *w)
{
    for (size_t i = 0; stop_words[i]; i++)
        if (!strcmp(w, stop_words[i]))
            return true;
    return false;
}

json_t *evolve_words(const char *text)
{
    json_t *seen = json_object(), *out = json_array();
    const char *p = text ? text : "";
    while (*p && json_array_size(out) < 200) {
        while (*p && !(isalnum((unsigned char)*p) || *p == '_'))
            p++;
        const char *s = p;
        while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.'))
            p++;
        size_t n = (size_t)(p - s);
        while (n && (s[n - 1] == '.' || s[n - 1] == '-'))
            n--;
        if (n < 3 || n > 40)
            continue;
        char w[48];
        for (size_t i = 0; i < n; i++)
            w[i] = (char)tolower((unsigned char)s[i]);
        w[n] = '\0';
        if (is_stop(w) || json_object_get(seen, w))
            continue;
        json_object_set_new(seen, w, json_true());
        json_array_append_new(out, json_string(w));
    }
    json_decref(seen);
    return out;
}

char *evolve_task_class(const char *goal)
{
    json_t *w = evolve_words(goal);
    loom_str s = {0};
    for (size_t i = 0; i < json_array_size(w) && i < 2; i++) {
        if (i)
            str_putc(&s, '-');
        for (const char *c = json_string_value(json_array_get(w, i)); *c; c++)
            str_putc(&s, isalnum((unsigned char)*c) ? *c : '-');
    }
    json_decref(w);
    return s.len ? str_steal(&s) : xstrdup("");
}

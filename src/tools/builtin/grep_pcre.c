/* grep_pcre.c — the Grep tool's own engine: walks the file set of walk.h
 * and matches each file with PCRE2 (JIT when available), filling the same
 * per-file records as the ripgrep engine (grep_engine.h). Used when rg is
 * not on PATH or LOOM_GREP_ENGINE=pcre2. Owns nothing past one call;
 * reentrant.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/path.h"
#include "base/str.h"
#include "tools/builtin/grep_engine.h"
#include "tools/builtin/walk.h"

typedef struct {
    const grep_query *q;
    pcre2_code *code;
    pcre2_match_data *md;
    gresults *res;
    bool cancelled;
} pcre_engine;

/* Start offsets of every line; a final '\n' does not begin another line. */
static size_t index_lines(const char *buf, size_t len, size_t **starts_out)
{
    size_t n = 0, cap = 64;
    size_t *starts = xmalloc(cap * sizeof *starts);
    for (size_t pos = 0; pos < len;) {
        if (n == cap) {
            cap *= 2;
            starts = xrealloc(starts, cap * sizeof *starts);
        }
        starts[n++] = pos;
        const char *nl = memchr(buf + pos, '\n', len - pos);
        pos = nl ? (size_t)(nl - buf) + 1 : len;
    }
    *starts_out = starts;
    return n;
}

static size_t line_end(const char *buf, size_t len, const size_t *starts, size_t n, size_t i)
{
    size_t end = i + 1 < n ? starts[i + 1] - 1 : len;
    if (i + 1 == n && end > starts[i] && buf[end - 1] == '\n')
        end--;
    return end;
}

static size_t line_of(const size_t *starts, size_t n, size_t off)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int pmatch(pcre_engine *e, const char *s, size_t len, size_t from)
{
    return pcre2_match(e->code, (PCRE2_SPTR)s, len, from, 0, e->md, NULL);
}

/* Marks the matching lines in mark[]; returns how many. */
static size_t find_matches(pcre_engine *e, const char *buf, size_t len, const size_t *starts,
                           size_t n, char *mark, bool first_only)
{
    size_t found = 0;
    size_t pos = 0;
    while (pos <= len && n > 0) {
        if (pmatch(e, buf, len, pos) < 0)
            break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(e->md);
        size_t ms = ov[0], me = ov[1];
        if (ms >= len && (len == 0 || buf[len - 1] == '\n'))
            break; /* an empty match after the last line */
        size_t li = line_of(starts, n, ms);
        if (e->q->multiline) {
            size_t last = line_of(starts, n, me > ms ? me - 1 : ms);
            for (size_t k = li; k <= last; k++) {
                if (!mark[k]) {
                    mark[k] = 1;
                    found++;
                }
            }
            if (first_only)
                return found;
            pos = me > ms ? me : ms + 1;
            while (pos < len && ((unsigned char)buf[pos] & 0xC0) == 0x80)
                pos++;
            continue;
        }
        /* Line mode: the whole-buffer search only finds the next candidate
         * line quickly; the line must match on its own (so \s or [^x]
         * cannot reach into the next line, as in rg). */
        size_t ls = starts[li], le = line_end(buf, len, starts, n, li);
        if (pmatch(e, buf + ls, le - ls, 0) >= 0) {
            mark[li] = 1;
            found++;
            if (first_only)
                return found;
        }
        if (li + 1 >= n)
            break;
        pos = starts[li + 1];
    }
    return found;
}

static void search_buffer(pcre_engine *e, const char *rel, const struct timespec *mtime,
                          const char *buf, size_t len)
{
    const grep_query *q = e->q;
    /* Cheap rejection first: most files do not match at all. */
    if (pmatch(e, buf, len, 0) < 0)
        return;
    size_t *starts;
    size_t n = index_lines(buf, len, &starts);
    char *mark = xcalloc(n ? n : 1, 1);
    size_t found = find_matches(e, buf, len, starts, n, mark, q->mode == MODE_FILES);
    if (found) {
        gfile *f = grep_results_add(e->res, rel, strlen(rel));
        f->mtime = *mtime;
        if (q->mode == MODE_COUNT || q->mode == MODE_FILES) {
            f->nmatch = found;
        } else {
            /* Context windows via a difference array: O(lines), however
             * many matches and however wide the context. */
            long before = q->before, after = q->after;
            long *diff = xcalloc(n + 1, sizeof *diff);
            for (size_t i = 0; i < n; i++) {
                if (!mark[i])
                    continue;
                size_t from = (long)i > before ? i - (size_t)before : 0;
                size_t to = i + (size_t)after + 1 < n ? i + (size_t)after + 1 : n;
                diff[from]++;
                diff[to]--;
            }
            long show = 0;
            for (size_t i = 0; i < n; i++) {
                show += diff[i];
                if (show > 0) {
                    size_t le = line_end(buf, len, starts, n, i);
                    grep_file_add_line(f, (long)i + 1, mark[i], buf + starts[i], le - starts[i]);
                }
            }
            free(diff);
        }
    }
    free(mark);
    free(starts);
}

/* Reads at most cap bytes of a regular file without ever blocking: the open
 * is non-blocking (a path swapped for a FIFO since the walk's lstat must not
 * hang the call) and fstat confirms a regular file before anything is read;
 * a read that would block (/proc/kmsg) ends the file. The cancel flag is
 * seen between chunks. 0 with *buf (malloc'd, NUL-terminated) on success. */
int grep_slurp(const char *path, size_t cap, const loom_cancel *cancel, char **buf,
                      size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    loom_str b = LOOM_STR_INIT;
    size_t guess = st.st_size > 0 && (size_t)st.st_size < cap ? (size_t)st.st_size : 0;
    str_reserve(&b, (guess < ((size_t)64 << 20) ? guess : 0) + 4096);
    int rc = 0;
    while (b.len < cap) {
        if (cancel_requested(cancel)) {
            rc = -1;
            break;
        }
        if (b.cap - b.len < 4096)
            str_reserve(&b, b.cap);
        size_t want = b.cap - b.len - 1;
        if (want > cap - b.len)
            want = cap - b.len;
        ssize_t n = read(fd, b.ptr + b.len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
            break;
        }
        if (n == 0)
            break;
        b.len += (size_t)n;
        b.ptr[b.len] = '\0';
    }
    close(fd);
    if (rc != 0) {
        str_free(&b);
        return -1;
    }
    *len = b.len;
    *buf = str_steal(&b);
    return 0;
}

static void search_file(pcre_engine *e, const char *abs, const char *rel,
                        const struct timespec *mtime, bool skip_binary)
{
    char *buf;
    size_t len;
    if (grep_slurp(abs, e->q->file_cap, e->q->cancel, &buf, &len) != 0)
        return;
    /* Binary files are skipped, as rg skips them when walking (a NUL byte
     * marks them); a file named explicitly is searched anyway. */
    if (!skip_binary || !memchr(buf, '\0', len))
        search_buffer(e, rel, mtime, buf, len);
    free(buf);
}

static int pcre_visit(void *ud, const walk_entry *we)
{
    pcre_engine *e = ud;
    if (cancel_requested(e->q->cancel)) {
        e->cancelled = true;
        return WALK_STOP;
    }
    if (secrets_fence_hit(&e->q->fence, we->path))
        return WALK_SKIP;
    if (we->is_dir || !S_ISREG(we->st->st_mode))
        return WALK_CONTINUE; /* links are not followed, as rg does by default */
    search_file(e, we->path, we->rel, &we->st->st_mtim, true);
    return WALK_CONTINUE;
}

/* rg refuses a pattern that names a line end outside multiline mode (it
 * could never match a single line); say so the same way rather than
 * silently finding nothing. */
static bool names_newline(const char *pattern)
{
    for (const char *p = pattern; *p; p++) {
        if (*p == '\n')
            return true;
        if (*p == '\\') {
            if (p[1] == 'n')
                return true;
            if (p[1])
                p++;
        }
    }
    return false;
}

int grep_run_pcre2(const grep_query *q, gresults *res, loom_str *errmsg)
{
    if (!q->multiline && names_newline(q->pattern)) {
        str_puts(errmsg, "the literal \"\\n\" is not allowed in a regex; set multiline to "
                         "true to match across lines");
        return -1;
    }
    uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_MATCH_INVALID_UTF;
    if (q->icase)
        opts |= PCRE2_CASELESS;
    if (q->multiline)
        opts |= PCRE2_DOTALL;
    int ec;
    PCRE2_SIZE eoff;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)q->pattern, PCRE2_ZERO_TERMINATED, opts, &ec,
                                     &eoff, NULL);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        str_printf(errmsg, "Invalid regular expression: %s (at offset %zu)", (char *)msg,
                   (size_t)eoff);
        return -1;
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* an optimisation: failure is fine */
    pcre_engine e = {q, code, pcre2_match_data_create_from_pattern(code, NULL), res, false};

    int rc = 0;
    if (q->single) {
        char *abs = path_join(q->root, q->single);
        struct stat st;
        if (stat(abs, &st) == 0)
            search_file(&e, abs, q->single, &st.st_mtim, false);
        free(abs);
    } else {
        walk_opts wo = {.root = q->root,
                        .globs = (const char *const *)q->globs,
                        .type = q->type,
                        .cancel = q->cancel,
                        .visit = pcre_visit,
                        .ud = &e};
        loom_error err;
        loom_error_clear(&err);
        if (walk_tree(&wo, &err) < 0) {
            if (err.code == LOOM_ERR_RUN_CANCELLED)
                e.cancelled = true;
            else
                str_puts(errmsg, err.message);
            rc = -1;
        }
    }
    if (e.cancelled) {
        str_clear(errmsg);
        str_puts(errmsg, "Grep was interrupted");
        rc = -2;
    }
    pcre2_match_data_free(e.md);
    pcre2_code_free(code);
    return rc;
}

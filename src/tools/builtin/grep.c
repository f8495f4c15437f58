/* grep.c — the Grep tool: regular-expression search over the file set of
 * walk.h, with two engines that produce the same answer.
 *
 * ripgrep, when `rg` is on PATH, does the searching; it runs with flags that
 * make it pick exactly the files walk.c picks (see walk.h) and reports in
 * its JSON form (file list with --files-with-matches --null). The PCRE2
 * engine (no rg, or LOOM_GREP_ENGINE=pcre2) walks and matches itself. Both
 * fill the same per-file records and one formatter turns them into text, so
 * the two outputs are identical by construction rather than by parsing
 * rg's `path:line:text`, which is ambiguous when paths hold ':' or '-'.
 *
 * Output (Claude Code's shapes): files_with_matches → "Found N files" and
 * the paths, newest first; content → "path:line:text" for matches,
 * "path-line-text" for context, "--" between non-adjacent groups; count →
 * "path:N" (N = matching lines) and a total. Content and count list files
 * in path order. Paths are absolute. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/glob.h"
#include "base/json.h"
#include "base/proc.h"
#include "policy/secrets.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/walk.h"

/* rg --max-columns 500, Claude Code's setting: longer lines are replaced by
 * a note (they are minified code or data, useless to the model). */
#define GREP_MAX_COLUMNS 500
/* The most text the tool returns; beyond it the model is told to narrow. */
#define GREP_MAX_OUTPUT_BYTES 60000
/* Context lines asked for beyond this are pointless and costly. */
#define GREP_MAX_CONTEXT 1000
/* rg's JSON is several times the size of the matches it describes. */
#define GREP_RG_CAPTURE_CAP ((size_t)64 << 20)
/* The most of one file the PCRE2 engine reads. Under /proc, /sys and /dev a
 * "file" may never end (/proc/kcore reports terabytes), so there the cap is
 * small; elsewhere it only guards memory. */
#define GREP_FILE_CAP ((size_t)1 << 30)
#define GREP_PSEUDO_FILE_CAP ((size_t)1 << 20)

static const char GREP_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"The regular expression to search "
    "for\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"File or directory to search in (default: "
    "the working directory)\"},"
    "\"glob\":{\"type\":\"string\",\"description\":\"Glob to filter files, e.g. \\\"*.js\\\" or "
    "\\\"*.{ts,tsx}\\\" (rg --glob)\"},"
    "\"type\":{\"type\":\"string\",\"description\":\"File type to search (rg --type): js, py, "
    "rust, go, java, c, cpp, …\"},"
    "\"output_mode\":{\"type\":\"string\",\"enum\":[\"content\",\"files_with_matches\","
    "\"count\"],\"description\":\"content: matching lines; files_with_matches: file paths "
    "(default); count: matches per file\"},"
    "\"-i\":{\"type\":\"boolean\",\"description\":\"Case-insensitive search\"},"
    "\"-n\":{\"type\":\"boolean\",\"description\":\"Show line numbers (content mode; default "
    "true)\"},"
    "\"-A\":{\"type\":\"number\",\"description\":\"Lines of context after each match (content "
    "mode)\"},"
    "\"-B\":{\"type\":\"number\",\"description\":\"Lines of context before each match "
    "(content mode)\"},"
    "\"-C\":{\"type\":\"number\",\"description\":\"Lines of context before and after each "
    "match (content mode)\"},"
    "\"multiline\":{\"type\":\"boolean\",\"description\":\"Let patterns span lines; . matches "
    "newlines (rg -U --multiline-dotall)\"},"
    "\"head_limit\":{\"type\":\"number\",\"description\":\"Show only the first N lines or "
    "entries (like | head -N)\"},"
    "\"offset\":{\"type\":\"number\",\"description\":\"Skip the first N lines or entries "
    "before applying head_limit\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}";

static const char GREP_DESCRIPTION[] =
    "Searches file contents with a regular expression (ripgrep syntax), built on ripgrep.\n"
    "- Use it instead of running grep or rg through Bash.\n"
    "- Filter files with glob (\"*.js\", \"**/*.{ts,tsx}\") or type (\"py\", \"rust\").\n"
    "- output_mode: files_with_matches (default; paths, newest first), content (matching "
    "lines, with -A/-B/-C context and -n line numbers), count (matching lines per file).\n"
    "- Literal braces and other regex metacharacters need escaping (interface\\{\\}).\n"
    "- Patterns match within one line unless multiline is true.\n"
    "- .gitignore'd files and .git are skipped; hidden files are searched; binary files are "
    "skipped.";

typedef enum { MODE_FILES, MODE_CONTENT, MODE_COUNT } grep_mode;

typedef struct {
    long no;        /* 1-based */
    bool match;
    char *text;     /* without the line's '\n' */
    size_t len;
} gline;

typedef struct {
    char *rel;      /* relative to the search root */
    struct timespec mtime;
    gline *lines;
    size_t n, cap;
    size_t nmatch;  /* matching lines */
} gfile;

typedef struct {
    gfile *files;
    size_t n, cap;
    bool input_truncated; /* the engine's output was cut: results incomplete */
} gresults;

typedef struct {
    const char *pattern;
    char *root;          /* absolute directory the search runs in */
    char *single;        /* the file's name in root when path named a file */
    char **globs;        /* NULL-terminated, or NULL */
    const char *type;
    grep_mode mode;
    bool icase, line_numbers, multiline;
    long before, after;
    long head_limit;     /* 0 = none */
    long offset;
    const loom_cancel *cancel;
    long timeout_ms;
    size_t file_cap;     /* bytes read of one file at most (GREP_*FILE_CAP) */
    secrets_fence fence; /* credential stores beneath root: never searched */
} grep_query;

/* ---- results ----------------------------------------------------------------- */

static gfile *results_add(gresults *res, const char *rel, size_t rel_len)
{
    if (res->n == res->cap) {
        res->cap = res->cap ? res->cap * 2 : 16;
        res->files = xrealloc(res->files, res->cap * sizeof *res->files);
    }
    gfile *f = &res->files[res->n++];
    memset(f, 0, sizeof *f);
    while (rel_len >= 2 && rel[0] == '.' && rel[1] == '/') {
        rel += 2;
        rel_len -= 2;
    }
    f->rel = xstrndup(rel, rel_len);
    return f;
}

/* Adds a line in order; a line number seen already just gains the match
 * flag (rg never repeats one, but a multiline match may touch a context
 * line's neighbour). */
static void file_add_line(gfile *f, long no, bool match, const char *text, size_t len)
{
    for (size_t i = f->n; i-- > 0 && f->lines[i].no >= no;) {
        if (f->lines[i].no == no) {
            if (match && !f->lines[i].match) {
                f->lines[i].match = true;
                f->nmatch++;
            }
            return;
        }
    }
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 16;
        f->lines = xrealloc(f->lines, f->cap * sizeof *f->lines);
    }
    f->lines[f->n++] = (gline){no, match, xstrndup(text, len), len};
    if (match)
        f->nmatch++;
}

static void results_free(gresults *res)
{
    for (size_t i = 0; i < res->n; i++) {
        gfile *f = &res->files[i];
        for (size_t k = 0; k < f->n; k++)
            free(f->lines[k].text);
        free(f->lines);
        free(f->rel);
    }
    free(res->files);
    memset(res, 0, sizeof *res);
}

/* ---- the PCRE2 engine ------------------------------------------------------------ */

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
        gfile *f = results_add(e->res, rel, strlen(rel));
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
                    file_add_line(f, (long)i + 1, mark[i], buf + starts[i], le - starts[i]);
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
static int grep_slurp(const char *path, size_t cap, const loom_cancel *cancel, char **buf,
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

static int run_pcre2(const grep_query *q, gresults *res, loom_str *errmsg)
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
        char *abs = xmalloc(strlen(q->root) + strlen(q->single) + 2);
        sprintf(abs, "%s/%s", strcmp(q->root, "/") == 0 ? "" : q->root, q->single);
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

/* ---- the ripgrep engine ------------------------------------------------------------- */

static char *find_in_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        loom_str cand = LOOM_STR_INIT;
        if (n == 0)
            str_putc(&cand, '.');
        else
            str_append(&cand, path, n);
        str_printf(&cand, "/%s", name);
        struct stat st;
        if (stat(cand.ptr, &st) == 0 && S_ISREG(st.st_mode) && access(cand.ptr, X_OK) == 0)
            return str_steal(&cand);
        str_free(&cand);
        path += n;
        if (*path == ':')
            path++;
    }
    return NULL;
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static void b64_decode(const char *in, loom_str *out)
{
    unsigned acc = 0;
    int bits = 0;
    for (; *in; in++) {
        int v = b64val((unsigned char)*in);
        if (v < 0)
            continue; /* padding */
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            str_putc(out, (char)((acc >> bits) & 0xFF));
        }
    }
}

/* rg writes {"text": "..."} for UTF-8 and {"bytes": "<base64>"} otherwise. */
static bool rg_data(const json_t *obj, loom_str *out)
{
    const char *text = json_get_str(obj, "text", NULL);
    if (text) {
        json_t *t = json_object_get(obj, "text");
        str_append(out, text, json_string_length(t));
        return true;
    }
    const char *bytes = json_get_str(obj, "bytes", NULL);
    if (bytes) {
        b64_decode(bytes, out);
        return true;
    }
    return false;
}

static void rg_parse_json(const char *data, size_t len, gresults *res)
{
    gfile *cur = NULL;
    loom_str path = LOOM_STR_INIT, text = LOOM_STR_INIT;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        json_t *msg = json_parse_fast(data + pos, end - pos, 0, NULL);
        pos = end + 1;
        if (!msg)
            continue; /* a line cut by the capture cap */
        const char *type = json_get_str(msg, "type", "");
        json_t *d = json_get_obj(msg, "data");
        bool is_match = strcmp(type, "match") == 0;
        if (d && (is_match || strcmp(type, "context") == 0)) {
            str_clear(&path);
            str_clear(&text);
            if (rg_data(json_get_obj(d, "path"), &path) &&
                rg_data(json_get_obj(d, "lines"), &text)) {
                const char *rel = path.ptr;
                size_t rel_len = path.len;
                while (rel_len >= 2 && rel[0] == '.' && rel[1] == '/')
                    rel += 2, rel_len -= 2;
                if (!cur || strlen(cur->rel) != rel_len || memcmp(cur->rel, rel, rel_len) != 0)
                    cur = results_add(res, rel, rel_len);
                long no = (long)json_get_int(d, "line_number", 0);
                /* A multiline match arrives as one message holding every
                 * line it touches. */
                const char *tp = str_cstr(&text);
                size_t tl = text.len;
                if (tl && tp[tl - 1] == '\n')
                    tl--;
                for (size_t i = 0;;) {
                    const char *lnl = memchr(tp + i, '\n', tl - i);
                    size_t le = lnl ? (size_t)(lnl - tp) : tl;
                    file_add_line(cur, no++, is_match, tp + i, le - i);
                    if (!lnl)
                        break;
                    i = le + 1;
                }
            }
        }
        json_decref(msg);
    }
    str_free(&path);
    str_free(&text);
}

static int run_rg(const char *rg, const grep_query *q, gresults *res, loom_str *errmsg)
{
    const char *argv[64 + 2 * 64];
    size_t n = 0;
    char before[32], after[32];
    argv[n++] = rg;
    argv[n++] = "--no-config";
    /* The file set of walk.h: hidden files in, .gitignore files (root,
     * nested, parents) even outside a git repository, no other ignore
     * sources, .git out. */
    argv[n++] = "--hidden";
    argv[n++] = "--no-require-git";
    argv[n++] = "--no-ignore-dot";
    argv[n++] = "--no-ignore-exclude";
    argv[n++] = "--no-ignore-global";
    argv[n++] = "--color=never";
    if (q->mode == MODE_FILES) {
        argv[n++] = "--files-with-matches";
        argv[n++] = "--null";
    } else {
        argv[n++] = "--json";
    }
    if (q->icase)
        argv[n++] = "--ignore-case";
    if (q->multiline) {
        argv[n++] = "--multiline";
        argv[n++] = "--multiline-dotall";
    }
    if (q->mode == MODE_CONTENT && q->before > 0) {
        snprintf(before, sizeof before, "%ld", q->before);
        argv[n++] = "--before-context";
        argv[n++] = before;
    }
    if (q->mode == MODE_CONTENT && q->after > 0) {
        snprintf(after, sizeof after, "%ld", q->after);
        argv[n++] = "--after-context";
        argv[n++] = after;
    }
    for (char **g = q->globs; g && *g && n < 100; g++) {
        argv[n++] = "--glob";
        argv[n++] = *g;
    }
    /* Last, so no user glob can re-include it: the last match wins. */
    argv[n++] = "--glob";
    argv[n++] = "!.git";
    if (q->type) {
        argv[n++] = "--type";
        argv[n++] = q->type;
    }
    argv[n++] = "--regexp";
    argv[n++] = q->pattern;
    argv[n++] = "--";
    argv[n++] = q->single ? q->single : ".";
    argv[n] = NULL;

    proc_spec spec = {.argv = argv,
                      .cwd = q->root,
                      .timeout_ms = q->timeout_ms,
                      .capture_cap = GREP_RG_CAPTURE_CAP,
                      .cancel = q->cancel};
    proc_result r;
    loom_error err;
    loom_error_clear(&err);
    if (proc_run(&spec, &r, &err) < 0) {
        if (r.cancelled) {
            str_puts(errmsg, "Grep was interrupted");
            return -2;
        }
        str_printf(errmsg, "could not run ripgrep: %s", err.message);
        return -1;
    }
    int rc = 0;
    if (r.cancelled) {
        str_puts(errmsg, "Grep was interrupted");
        rc = -2;
    } else if (r.timed_out) {
        str_printf(errmsg, "Grep timed out after %ld ms", q->timeout_ms);
        rc = -1;
    } else if (r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) {
        if (q->mode == MODE_FILES) {
            for (size_t pos = 0; pos < r.out_len;) {
                const char *z = memchr(r.out + pos, '\0', r.out_len - pos);
                size_t end = z ? (size_t)(z - r.out) : r.out_len;
                if (end > pos)
                    results_add(res, r.out + pos, end - pos);
                pos = end + 1;
            }
        } else {
            rg_parse_json(r.out, r.out_len, res);
        }
        res->input_truncated = r.out_dropped > 0;
        /* 2 with results: some files could not be read (the walker skips
         * those silently too). 2 without: the search itself failed. */
        if (r.exit_code == 2 && res->n == 0) {
            size_t el = r.err_len;
            while (el && r.err[el - 1] == '\n')
                el--;
            str_append(errmsg, r.err, el);
            rc = -1;
        }
    } else {
        str_printf(errmsg, "ripgrep failed (exit %d): %s", r.exit_code, r.err);
        rc = -1;
    }
    proc_result_free(&r);
    if (rc == 0 && q->mode == MODE_FILES) {
        for (size_t i = 0; i < res->n; i++) {
            loom_str abs = LOOM_STR_INIT;
            str_printf(&abs, "%s/%s", q->root, res->files[i].rel);
            struct stat st;
            if (stat(abs.ptr, &st) == 0)
                res->files[i].mtime = st.st_mtim;
            str_free(&abs);
        }
    }
    return rc;
}

/* ---- formatting ------------------------------------------------------------------------ */

static int by_path(const void *a, const void *b)
{
    return strcmp(((const gfile *)a)->rel, ((const gfile *)b)->rel);
}

static int by_mtime(const void *a, const void *b)
{
    const gfile *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
    return strcmp(x->rel, y->rel);
}

/* Collects output lines, applying offset and head_limit as `tail -n +K |
 * head -N` would. */
typedef struct {
    loom_str text;
    long offset, limit;
    size_t total;   /* lines produced before offset/limit */
    size_t shown;
} line_sink;

static loom_str *sink_begin(line_sink *s)
{
    size_t idx = s->total++;
    if ((long)idx < s->offset)
        return NULL;
    if (s->limit > 0 && (long)s->shown >= s->limit)
        return NULL;
    if (s->shown++)
        str_putc(&s->text, '\n');
    return &s->text;
}

static void abs_path(loom_str *s, const char *root, const char *rel)
{
    str_puts(s, root);
    if (!(root[0] == '/' && root[1] == '\0'))
        str_putc(s, '/');
    str_puts(s, rel);
}

static void format_results(const grep_query *q, gresults *res, tool_result *out,
                           const char *engine)
{
    line_sink sink = {LOOM_STR_INIT, q->offset, q->head_limit, 0, 0};
    size_t total_matches = 0;
    for (size_t i = 0; i < res->n; i++)
        total_matches += res->files[i].nmatch;
    size_t nfiles = res->n;

    if (q->mode == MODE_FILES) {
        if (res->n)
            qsort(res->files, res->n, sizeof *res->files, by_mtime);
        for (size_t i = 0; i < res->n; i++) {
            loom_str *s = sink_begin(&sink);
            if (s)
                abs_path(s, q->root, res->files[i].rel);
        }
    } else {
        if (res->n)
            qsort(res->files, res->n, sizeof *res->files, by_path);
        bool context = q->mode == MODE_CONTENT && (q->before > 0 || q->after > 0);
        bool any = false;
        for (size_t i = 0; i < res->n; i++) {
            gfile *f = &res->files[i];
            if (q->mode == MODE_COUNT) {
                loom_str *s = sink_begin(&sink);
                if (s) {
                    abs_path(s, q->root, f->rel);
                    str_printf(s, ":%zu", f->nmatch);
                }
                continue;
            }
            long prev = -1;
            for (size_t k = 0; k < f->n; k++) {
                gline *l = &f->lines[k];
                /* rg's separator: between groups that are not adjacent,
                 * within a file or across files, only when context is on. */
                if (context && any && (prev < 0 || l->no != prev + 1)) {
                    loom_str *s = sink_begin(&sink);
                    if (s)
                        str_puts(s, "--");
                }
                any = true;
                prev = l->no;
                loom_str *s = sink_begin(&sink);
                if (!s)
                    continue;
                char sep = l->match ? ':' : '-';
                abs_path(s, q->root, f->rel);
                if (q->line_numbers)
                    str_printf(s, "%c%ld%c", sep, l->no, sep);
                else
                    str_putc(s, sep);
                if (l->len > GREP_MAX_COLUMNS)
                    str_puts(s, l->match ? "[Omitted long matching line]"
                                         : "[Omitted long context line]");
                else
                    str_append(s, l->text, l->len);
            }
        }
    }

    loom_str *t = &out->text;
    if (res->n == 0) {
        str_puts(t, "No matches found");
    } else {
        if (q->mode == MODE_FILES)
            str_printf(t, "Found %zu file%s\n", nfiles, nfiles == 1 ? "" : "s");
        /* The byte cap cuts at a line end and says how much is missing. */
        size_t keep = sink.text.len;
        size_t dropped_lines = 0;
        if (keep > GREP_MAX_OUTPUT_BYTES) {
            keep = GREP_MAX_OUTPUT_BYTES;
            while (keep > 0 && sink.text.ptr[keep] != '\n')
                keep--;
            for (size_t i = keep; i < sink.text.len; i++)
                dropped_lines += sink.text.ptr[i] == '\n';
        }
        str_append(t, sink.text.ptr, keep);
        if (dropped_lines)
            str_printf(t, "\n\n[Output truncated: %zu more lines not shown. Narrow the search "
                          "with path, glob, type or head_limit.]",
                       dropped_lines);
        else if (sink.shown < sink.total)
            str_printf(t, "\n\n[Showing %zu of %zu %s (offset %ld, head_limit %ld)]", sink.shown,
                       sink.total, q->mode == MODE_CONTENT ? "lines" : "entries", q->offset,
                       q->head_limit);
        if (q->mode == MODE_COUNT)
            str_printf(t, "\n\nFound %zu matching line%s across %zu file%s.", total_matches,
                       total_matches == 1 ? "" : "s", nfiles, nfiles == 1 ? "" : "s");
        if (res->input_truncated)
            str_puts(t, "\n[The search produced more output than Loom keeps; results are "
                        "incomplete.]");
    }
    str_free(&sink.text);
    out->raw = json_pack("{s:s, s:s, s:I, s:I, s:b}", "engine", engine, "mode",
                         q->mode == MODE_FILES     ? "files_with_matches"
                         : q->mode == MODE_CONTENT ? "content"
                                                   : "count",
                         "numFiles", (json_int_t)nfiles, "numLines", (json_int_t)sink.total,
                         "truncated", sink.shown < sink.total || res->input_truncated);
    /* Matching lines are only counted where lines are searched to the end. */
    if (q->mode != MODE_FILES)
        json_object_set_new(out->raw, "numMatches", json_integer((json_int_t)total_matches));
}

static bool is_binary(const char *path, size_t cap, const loom_cancel *cancel)
{
    char *buf;
    size_t len;
    if (grep_slurp(path, cap, cancel, &buf, &len) != 0)
        return false;
    bool bin = memchr(buf, '\0', len) != NULL;
    free(buf);
    return bin;
}

/* ---- input -------------------------------------------------------------------------------- */

/* A non-negative number from input: true and *out set when present and
 * valid (reals are accepted: models send 3.0). */
static bool get_count(const json_t *input, const char *key, long *out, loom_str *why)
{
    json_t *v = json_object_get(input, key);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v) || json_number_value(v) < 0) {
        str_printf(why, "%s must be a non-negative number", key);
        return false;
    }
    double d = json_number_value(v);
    *out = d > 1e9 ? 1000000000L : (long)d;
    return true;
}

/* Claude Code's reading of the glob parameter: whitespace separates globs,
 * and a comma does too unless the glob uses braces. */
static char **split_globs(const char *glob)
{
    char **list = NULL;
    size_t n = 0;
    const char *p = glob;
    while (*p) {
        p += strspn(p, " \t\r\n");
        size_t len = strcspn(p, " \t\r\n");
        if (!len)
            break;
        char *tok = xstrndup(p, len);
        p += len;
        bool braces = strchr(tok, '{') && strchr(tok, '}');
        char *save = NULL;
        for (char *piece = braces ? tok : strtok_r(tok, ",", &save); piece;
             piece = braces ? NULL : strtok_r(NULL, ",", &save)) {
            list = xrealloc(list, (n + 2) * sizeof *list);
            list[n++] = xstrdup(piece);
            list[n] = NULL;
        }
        free(tok);
    }
    return list;
}

static int grep_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    grep_query q;
    memset(&q, 0, sizeof q);
    q.cancel = ctx->cancel;
    q.timeout_ms = ctx->timeout_ms;
    q.pattern = json_string_value(json_object_get(input, "pattern"));
    if (!q.pattern || !*q.pattern)
        return tool_error(out, "Invalid input: pattern is required and must be a non-empty "
                               "string");
    const char *mode = json_get_str(input, "output_mode", "files_with_matches");
    if (strcmp(mode, "files_with_matches") == 0)
        q.mode = MODE_FILES;
    else if (strcmp(mode, "content") == 0)
        q.mode = MODE_CONTENT;
    else if (strcmp(mode, "count") == 0)
        q.mode = MODE_COUNT;
    else
        return tool_error(out, "Invalid input: output_mode must be \"content\", "
                               "\"files_with_matches\" or \"count\", not \"%s\"", mode);
    q.icase = json_get_bool(input, "-i", false);
    q.line_numbers = json_get_bool(input, "-n", true);
    q.multiline = json_get_bool(input, "multiline", false);
    long c = 0, a = -1, b = -1;
    loom_str why = LOOM_STR_INIT;
    if (!get_count(input, "-C", &c, &why) || !get_count(input, "-A", &a, &why) ||
        !get_count(input, "-B", &b, &why) || !get_count(input, "head_limit", &q.head_limit, &why) ||
        !get_count(input, "offset", &q.offset, &why)) {
        tool_error(out, "Invalid input: %s", why.ptr);
        str_free(&why);
        return 0;
    }
    /* -A and -B override -C for their side, as in rg. */
    q.after = a >= 0 ? a : c;
    q.before = b >= 0 ? b : c;
    if (q.after > GREP_MAX_CONTEXT)
        q.after = GREP_MAX_CONTEXT;
    if (q.before > GREP_MAX_CONTEXT)
        q.before = GREP_MAX_CONTEXT;
    q.type = json_get_str(input, "type", NULL);
    if (q.type && !*q.type)
        q.type = NULL;
    const char *glob = json_get_str(input, "glob", NULL);
    if (glob && *glob)
        q.globs = split_globs(glob);

    const char *path = json_get_str(input, "path", NULL);
    char *target = tool_resolve_path(ctx, path && *path ? path : ".");
    struct stat st;
    int rc = 0;
    loom_str errmsg = LOOM_STR_INIT;
    const char *engine = "pcre2";
    gresults res = {0};
    if (stat(target, &st) != 0) {
        tool_error(out, "Path does not exist: %s", target);
        goto done;
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
        /* Opening a FIFO blocks until a writer comes, a device may never end. */
        tool_error(out, "%s is not a regular file or directory (a FIFO, device or socket); "
                        "Grep only searches files.", target);
        goto done;
    }
    /* Inside /proc, /sys or /dev files may block or never end: read little
     * of each, non-blocking, on the PCRE2 engine (rg opens them blocking). */
    bool pseudo = walk_pseudo_fs(target);
    q.file_cap = pseudo ? GREP_PSEUDO_FILE_CAP : GREP_FILE_CAP;
    if (S_ISDIR(st.st_mode)) {
        q.root = xstrdup(target);
    } else {
        char *slash = strrchr(target, '/');
        q.single = xstrdup(slash + 1);
        q.root = slash == target ? xstrdup("/") : xstrndup(target, (size_t)(slash - target));
    }

    if (q.single && is_binary(target, q.file_cap, q.cancel)) {
        /* A binary file named explicitly: whether it matches is all that can
         * usefully be said (rg's own wording), the same on both engines. */
        q.mode = MODE_FILES;
        rc = run_pcre2(&q, &res, &errmsg);
        if (rc < 0)
            tool_error(out, "%s", str_cstr(&errmsg));
        else if (res.n)
            str_printf(&out->text, "Binary file %s matches", target);
        else
            str_puts(&out->text, "No matches found");
        if (rc == 0)
            out->raw = json_pack("{s:b, s:I}", "binary", 1, "numFiles", (json_int_t)res.n);
        goto done;
    }

    const char *want = getenv("LOOM_GREP_ENGINE");
    char *rg = NULL;
    /* The PCRE2 walk skips /proc, /sys and /dev from "/"; rg would not. A
     * root above a credential store (a search of ~) runs on the own engine
     * too, whose walk skips the stores; rg is not told about them. */
    secrets_fence_init(&q.fence, q.root);
    bool own_walk = pseudo || strcmp(q.root, "/") == 0 || q.fence.n > 0;
    if ((!want || strcmp(want, "pcre2") != 0) && !own_walk)
        rg = find_in_path("rg");
    if (want && strcmp(want, "rg") == 0 && !rg && !own_walk) {
        tool_error(out, "LOOM_GREP_ENGINE=rg but rg is not on PATH");
        goto done;
    }
    if (rg) {
        engine = "rg";
        rc = run_rg(rg, &q, &res, &errmsg);
        free(rg);
    } else {
        /* rg rejects an unknown type; so does the fallback, in rg's words. */
        if (q.type && !walk_type_known(q.type)) {
            tool_error(out, "unrecognized file type: %s", q.type);
            goto done;
        }
        rc = run_pcre2(&q, &res, &errmsg);
    }
    if (rc < 0)
        tool_error(out, "%s", str_cstr(&errmsg));
    else
        format_results(&q, &res, out, engine);

done:
    results_free(&res);
    str_free(&errmsg);
    str_free(&why);
    glob_free_list(q.globs);
    secrets_fence_free(&q.fence);
    free(q.root);
    free(q.single);
    free(target);
    return 0;
}

const tool_def tool_grep = {
    .name = "Grep",
    .description = GREP_DESCRIPTION,
    .input_schema = GREP_SCHEMA,
    .read_only = true,
    .concurrency_safe = true,
    .validate = NULL,
    .run = grep_run,
};

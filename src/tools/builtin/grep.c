/* grep.c — the Grep tool: regular-expression search over the file set of
 * walk.h, with two engines that produce the same answer.
 *
 * ripgrep, when `rg` is on PATH, does the searching (grep_rg.c); it runs
 * with flags that make it pick exactly the files walk.c picks (see walk.h)
 * and reports in its JSON form. The PCRE2 engine (grep_pcre.c; no rg, or
 * LOOM_GREP_ENGINE=pcre2) walks and matches itself. Both
 * fill the same per-file records and one formatter turns them into text, so
 * the two outputs are identical by construction rather than by parsing
 * rg's `path:line:text`, which is ambiguous when paths hold ':' or '-'.
 *
 * Output (Claude Code's shapes): files_with_matches → "Found N files" and
 * the paths, newest first; content → "path:line:text" for matches,
 * "path-line-text" for context, "--" between non-adjacent groups; count →
 * "path:N" (N = matching lines) and a total. Content and count list files
 * in path order. Paths are absolute. */
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
#include "base/path.h"
#include "base/proc.h"
#include "policy/secrets.h"
#include "sandbox/sandbox_policy.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/grep_engine.h"
#include "tools/builtin/walk.h"

/* rg --max-columns 500, Claude Code's setting: longer lines are replaced by
 * a note (they are minified code or data, useless to the model). */
#define GREP_MAX_COLUMNS 500
/* The most text the tool returns; beyond it the model is told to narrow. */
#define GREP_MAX_OUTPUT_BYTES 60000
/* Context lines asked for beyond this are pointless and costly. */
#define GREP_MAX_CONTEXT 1000
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

gfile *grep_results_add(gresults *res, const char *rel, size_t rel_len)
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
void grep_file_add_line(gfile *f, long no, bool match, const char *text, size_t len)
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

void grep_results_free(gresults *res)
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
    char *p = path_join(root, rel);
    str_puts(s, p);
    free(p);
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
        rc = grep_run_pcre2(&q, &res, &errmsg);
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
    secrets_deny deny;
    secrets_fence_init(&q.fence, q.root, sandbox_secrets_deny(ctx->sandbox, &deny));
    bool own_walk = pseudo || strcmp(q.root, "/") == 0 || q.fence.n > 0;
    if ((!want || strcmp(want, "pcre2") != 0) && !own_walk)
        rg = grep_find_in_path("rg");
    if (want && strcmp(want, "rg") == 0 && !rg && !own_walk) {
        tool_error(out, "LOOM_GREP_ENGINE=rg but rg is not on PATH");
        goto done;
    }
    if (rg) {
        engine = "rg";
        rc = grep_run_rg(rg, &q, &res, &errmsg);
        free(rg);
    } else {
        /* rg rejects an unknown type; so does the fallback, in rg's words. */
        if (q.type && !walk_type_known(q.type)) {
            tool_error(out, "unrecognized file type: %s", q.type);
            goto done;
        }
        rc = grep_run_pcre2(&q, &res, &errmsg);
    }
    if (rc < 0)
        tool_error(out, "%s", str_cstr(&errmsg));
    else
        format_results(&q, &res, out, engine);

done:
    grep_results_free(&res);
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

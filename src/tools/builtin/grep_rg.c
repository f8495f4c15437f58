/* grep_rg.c — the Grep tool's ripgrep engine: runs `rg` with flags that
 * make it pick exactly the files walk.c picks (see walk.h) and reads its
 * JSON output (file lists with --files-with-matches --null) into the
 * per-file records the formatter reads (grep_engine.h). Owns nothing past
 * one call; reentrant.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/path.h"
#include "base/proc.h"
#include "base/str.h"
#include "tools/builtin/grep_engine.h"
#include "tools/builtin/walk.h"

/* rg's JSON is several times the size of the matches it describes. */
#define GREP_RG_CAPTURE_CAP ((size_t)64 << 20)

char *grep_find_in_path(const char *name)
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
                    cur = grep_results_add(res, rel, rel_len);
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
                    grep_file_add_line(cur, no++, is_match, tp + i, le - i);
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

int grep_run_rg(const char *rg, const grep_query *q, gresults *res, loom_str *errmsg)
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
    /* As walk.c: sub-agents' worktrees are copies of the tree. */
    argv[n++] = "--glob";
    argv[n++] = "!**/.loom/worktrees";
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
                    grep_results_add(res, r.out + pos, end - pos);
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
            char *abs = path_join(q->root, res->files[i].rel);
            struct stat st;
            if (stat(abs, &st) == 0)
                res->files[i].mtime = st.st_mtim;
            free(abs);
        }
    }
    return rc;
}

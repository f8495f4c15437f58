/* glob.c — the Glob tool: files whose path relative to a directory matches a
 * pattern (** * ? [...] {a,b}), newest first, over the file set of walk.h
 * (.gitignore honoured, .git skipped, hidden files included). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/glob.h"
#include "base/json.h"
#include "policy/secrets.h"
#include "sandbox/sandbox_policy.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/walk.h"

/* Claude Code's cap; the note tells the model how to narrow down. */
#define GLOB_MAX_RESULTS 100

static const char GLOB_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"The glob pattern to match files "
    "against, e.g. \\\"**/*.c\\\" or \\\"src/**/*.{h,c}\\\"\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"The directory to search in (default: the "
    "working directory)\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}";

static const char GLOB_DESCRIPTION[] =
    "Finds files by name pattern, fast in any codebase size.\n"
    "- Patterns: ** (any number of directories), * and ? (within one path component), [abc], "
    "{a,b}; matched against the path relative to `path`, so \"*.c\" only matches at the top "
    "and \"**/*.c\" at any depth.\n"
    "- Returns absolute paths, most recently modified first, at most 100.\n"
    "- Files ignored by .gitignore and the .git directory are skipped.";

typedef struct {
    char *path;
    struct timespec mtime;
} glob_hit;

typedef struct {
    char **patterns;   /* brace-expanded, relative to the walk root */
    glob_hit *hits;
    size_t n, cap;
    secrets_fence fence; /* credential stores beneath the root: never listed */
} glob_state;

/* Copies the component at *s (up to '/' or the end) into buf and moves *s
 * past it; false when it does not fit. */
static bool next_component(const char **s, char *buf, size_t size)
{
    size_t len = strcspn(*s, "/");
    if (len >= size)
        return false;
    memcpy(buf, *s, len);
    buf[len] = '\0';
    *s += len;
    if (**s == '/')
        (*s)++;
    return true;
}

/* Could some pattern match a path below directory rel? Walking the
 * components of both side by side rules a directory out as soon as a
 * literal or wildcard component fails, which spares most of a tree for
 * patterns like src/x/<name>.c or <name>.c (top level only). */
static bool may_contain(char **patterns, const char *rel)
{
    for (char **p = patterns; *p; p++) {
        const char *pat = *p, *r = rel;
        bool possible = true;
        while (*r) {
            char pc[256], rc[256];
            if (!*pat) {
                possible = false; /* the pattern is shorter than the path */
                break;
            }
            if (!next_component(&pat, pc, sizeof pc) || !next_component(&r, rc, sizeof rc))
                return true; /* too long to judge here: let the walk decide */
            if (strcmp(pc, "**") == 0)
                return true;
            if (!glob_path_match(pc, rc)) {
                possible = false;
                break;
            }
        }
        if (possible && (*r || *pat))
            return true;
    }
    return false;
}

static int glob_visit(void *ud, const walk_entry *e)
{
    glob_state *g = ud;
    if (secrets_fence_hit(&g->fence, e->path))
        return WALK_SKIP;
    if (e->is_dir)
        return may_contain(g->patterns, e->rel) ? WALK_CONTINUE : WALK_SKIP;
    struct stat st = *e->st;
    /* A link is listed when it leads to a file; it is never walked into. */
    if (S_ISLNK(st.st_mode) && (stat(e->path, &st) != 0 || S_ISDIR(st.st_mode)))
        return WALK_CONTINUE;
    if (!S_ISREG(st.st_mode))
        return WALK_CONTINUE;
    for (char **p = g->patterns; *p; p++) {
        if (glob_path_match(*p, e->rel)) {
            if (g->n == g->cap) {
                g->cap = g->cap ? g->cap * 2 : 64;
                g->hits = xrealloc(g->hits, g->cap * sizeof *g->hits);
            }
            g->hits[g->n].path = xstrdup(e->path);
            g->hits[g->n].mtime = st.st_mtim;
            g->n++;
            break;
        }
    }
    return WALK_CONTINUE;
}

static int newest_first(const void *a, const void *b)
{
    const glob_hit *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
    return strcmp(x->path, y->path);
}

/* Splits the literal leading directories off the pattern (src/x/ from
 * src/x/<glob>, /abs/dir/ from an absolute pattern, ../ from ../<glob>):
 * they become part of the
 * directory to walk, so an absolute or ".." pattern works and the walk
 * starts as deep as it can. */
static void split_literal_prefix(const char *pattern, loom_str *prefix, const char **rest)
{
    const char *p = pattern;
    const char *last_ok = pattern;
    for (;;) {
        const char *slash = strchr(p, '/');
        if (!slash)
            break;
        size_t len = (size_t)(slash - p);
        char comp[1024];
        if (len >= sizeof comp)
            break;
        memcpy(comp, p, len);
        comp[len] = '\0';
        /* .git stays out even when named: the walk never enters it. */
        if (glob_has_magic(comp) || strcmp(comp, ".git") == 0)
            break;
        p = slash + 1;
        last_ok = p;
    }
    str_append(prefix, pattern, (size_t)(last_ok - pattern));
    *rest = last_ok;
}

static int glob_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const char *pattern = json_string_value(json_object_get(input, "pattern"));
    if (!pattern || !*pattern)
        return tool_error(out, "Invalid input: pattern is required and must be a non-empty "
                               "string");
    const char *path = json_string_value(json_object_get(input, "path"));
    if (json_object_get(input, "path") && !json_is_null(json_object_get(input, "path")) && !path)
        return tool_error(out, "Invalid input: path must be a string");
    int64_t t0 = clock_mono_ms();

    char *base = tool_resolve_path(ctx, path && *path ? path : ".");
    struct stat st;
    if (stat(base, &st) != 0) {
        tool_error(out, "Directory does not exist: %s", base);
        free(base);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        tool_error(out, "Path is not a directory: %s", base);
        free(base);
        return 0;
    }

    while (pattern[0] == '.' && pattern[1] == '/')
        pattern += 2;
    loom_str prefix = LOOM_STR_INIT;
    const char *rest;
    split_literal_prefix(pattern, &prefix, &rest);
    char *root = base;
    if (prefix.len) {
        /* tool_resolve_path keeps an absolute prefix and joins a relative
         * one to the context's cwd; the pattern is relative to base. */
        tool_ctx sub = *ctx;
        sub.cwd = base;
        root = tool_resolve_path(&sub, prefix.ptr);
        free(base);
        base = NULL;
    }
    str_free(&prefix);
    if (!*rest)
        rest = "*";

    glob_state g = {0};
    g.patterns = glob_expand_braces(rest);
    secrets_deny deny;
    secrets_fence_init(&g.fence, root, sandbox_secrets_deny(ctx->sandbox, &deny));
    walk_opts wo = {.root = root, .cancel = ctx->cancel, .visit = glob_visit, .ud = &g};
    loom_error err;
    loom_error_clear(&err);
    int rc = 0;
    if (stat(root, &st) == 0 && S_ISDIR(st.st_mode))
        rc = walk_tree(&wo, &err);

    if (rc < 0) {
        if (err.code == LOOM_ERR_RUN_CANCELLED)
            tool_error(out, "Glob was interrupted");
        else
            tool_error(out, "Glob failed: %s", err.message);
    } else if (g.n == 0) {
        str_puts(&out->text, "No files found");
    } else {
        qsort(g.hits, g.n, sizeof *g.hits, newest_first);
        size_t shown = g.n < GLOB_MAX_RESULTS ? g.n : GLOB_MAX_RESULTS;
        for (size_t i = 0; i < shown; i++) {
            if (i)
                str_putc(&out->text, '\n');
            str_puts(&out->text, g.hits[i].path);
        }
        if (g.n > shown)
            str_puts(&out->text, "\n(Results are truncated. Consider using a more specific "
                                 "path or pattern.)");
    }
    if (rc == 0)
        out->raw = json_pack("{s:I, s:b, s:I}", "numFiles", (json_int_t)g.n, "truncated",
                             g.n > GLOB_MAX_RESULTS, "durationMs",
                             (json_int_t)(clock_mono_ms() - t0));
    for (size_t i = 0; i < g.n; i++)
        free(g.hits[i].path);
    free(g.hits);
    glob_free_list(g.patterns);
    secrets_fence_free(&g.fence);
    if (base != root)
        free(base);
    free(root);
    return 0;
}

const tool_def tool_glob = {
    .name = "Glob",
    .description = GLOB_DESCRIPTION,
    .input_schema = GLOB_SCHEMA,
    .read_only = true,
    .concurrency_safe = true,
    .validate = NULL,
    .run = glob_run,
};

/* memory.c — finds, expands and caps the instructions and memory files that
 * go into the dynamic system prompt (see memory.h for the rules).
 *
 * Nothing that is a secret path (policy/secrets.h: ~/.ssh, ~/.aws, …, as
 * written or through a symlink) is ever read into the block: an
 * instructions file, an @import or a memory index that names one, or is a
 * symlink to one, becomes a note instead. A repository's AGENTS.md saying
 * `@~/.ssh/id_rsa` would otherwise put the key into every request, with no
 * tool call for anyone to see. Threading: no state; one call, one thread. */
#include "context/memory.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/settings.h"
#include "base/path.h"
#include "base/str.h"
#include "context/memory_sanitize.h"
#include "policy/secrets.h"

/* A long memory directory is still only a list of paths, but an unbounded
 * one could eat the whole budget. */
#define MEMORY_LIST_MAX 200

typedef struct render_ctx {
    const secrets_deny *deny; /* the sandbox's denyRead list (may be NULL) */
    memory_report rep;
    char **loaded;  /* realpaths already in the block: a file appears once */
    size_t nloaded;
    const char *stack[MEMORY_IMPORT_DEPTH + 2];  /* files being expanded, for cycles */
    size_t depth;
    /* An untrusted folder's files (and what they import) may not reach
     * outside the repository: an @import is a read nobody is asked about. */
    bool confined;        /* expanding a project file of an untrusted folder */
    bool trusted;         /* the folder's settings are trusted */
    bool claude;          /* Claude Code's CLAUDE.md files count (compat) */
    const char *root;     /* the repository (or cwd), resolved */
} render_ctx;

/* A path under /proc, /sys or /dev (as written or resolved): not a file
 * but a view of the machine — /proc/self/environ holds the API keys Loom
 * was started with. */
static bool is_pseudo(const char *path, char *why, size_t cap)
{
    static const char *const roots[] = {"/proc", "/sys", "/dev"};
    char *rp = realpath(path, NULL);
    const char *forms[2] = {path, rp};
    bool hit = false;
    for (int f = 0; f < 2 && !hit; f++)
        for (size_t i = 0; forms[f] && i < 3 && !hit; i++) {
            size_t n = strlen(roots[i]);
            if (!strncmp(forms[f], roots[i], n) && (forms[f][n] == '/' || !forms[f][n])) {
                hit = true;
                snprintf(why, cap, "%s is in %s, not a file of instructions", path, roots[i]);
            }
        }
    free(rp);
    return hit;
}

/* p (resolved) is root or lies beneath it. */
static bool path_under(const char *p, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 1 && root[0] == '/')
        return true;
    return !strncmp(p, root, n) && (p[n] == '\0' || p[n] == '/');
}

/* A project file of an untrusted folder reaching rp outside the
 * repository: why gets the note. */
static bool escapes_repo(const render_ctx *c, const char *rp, char *why, size_t cap)
{
    if (!c->confined || !c->root || path_under(rp, c->root))
        return false;
    snprintf(why, cap, "%s is outside the repository, and this folder is not trusted (trust it "
                       "to import files from elsewhere)", rp);
    return true;
}

/* path is a secret path (as written or resolved) or a pseudo-file: why
 * gets the store. */
static bool is_secret(const render_ctx *c, const char *path, char *why, size_t cap)
{
    return secrets_path_is_secret(path, "/", c->deny, why, cap) || is_pseudo(path, why, cap);
}

const char *memory_kind_name(memory_kind kind)
{
    switch (kind) {
    case MEMORY_USER: return "user";
    case MEMORY_PROJECT: return "project";
    case MEMORY_IMPORT: return "import";
    case MEMORY_INDEX: return "memory_index";
    }
    return "unknown";
}

void memory_report_free(memory_report *rep)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->count; i++) {
        free(rep->files[i].path);
        free(rep->files[i].why);
    }
    for (size_t i = 0; i < rep->nskipped; i++) {
        free(rep->skipped[i].path);
        free(rep->skipped[i].why);
    }
    free(rep->files);
    free(rep->skipped);
    memset(rep, 0, sizeof *rep);
}

/* The longest prefix of at most cap bytes that does not end inside a UTF-8
 * sequence: a split character would make the request body invalid JSON. */
static size_t utf8_cut(const char *s, size_t len, size_t cap)
{
    if (len <= cap)
        return len;
    size_t n = cap;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* realpath, or a copy of the path when it cannot be resolved. */
static char *resolve(const char *path)
{
    char *rp = realpath(path, NULL);
    return rp ? rp : xstrdup(path);
}

static bool was_loaded(const render_ctx *c, const char *rp)
{
    for (size_t i = 0; i < c->nloaded; i++)
        if (strcmp(c->loaded[i], rp) == 0)
            return true;
    return false;
}

static void note_loaded(render_ctx *c, const char *rp, memory_kind kind)
{
    c->loaded = xrealloc(c->loaded, (c->nloaded + 1) * sizeof *c->loaded);
    c->loaded[c->nloaded++] = xstrdup(rp);
    c->rep.files = xrealloc(c->rep.files, (c->rep.count + 1) * sizeof *c->rep.files);
    c->rep.files[c->rep.count].path = xstrdup(rp);
    c->rep.files[c->rep.count].kind = kind;
    c->rep.files[c->rep.count].why = NULL;
    c->rep.count++;
}

/* An instructions file found and left out, for the report. */
static void note_skipped(render_ctx *c, const char *path, memory_kind kind, const char *why)
{
    c->rep.skipped = xrealloc(c->rep.skipped, (c->rep.nskipped + 1) * sizeof *c->rep.skipped);
    c->rep.skipped[c->rep.nskipped].path = xstrdup(path);
    c->rep.skipped[c->rep.nskipped].kind = kind;
    c->rep.skipped[c->rep.nskipped].why = xstrdup(why);
    c->rep.nskipped++;
}

/* Reads a file capped at cap bytes; *cut tells whether it was longer. */
static char *read_capped(const char *path, size_t cap, size_t *len, bool *cut)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;  /* a directory named AGENTS.md is not instructions */
    char *text = NULL;
    size_t n = 0;
    if (file_read_all(path, &text, &n, NULL) != 0)
        return NULL;
    size_t keep = utf8_cut(text, n, cap);
    *cut = keep < n;
    text[keep] = '\0';
    *len = keep;
    return text;
}

/* `@path` on a line of its own (surrounding blanks allowed): returns the
 * path token in a new string, or NULL when the line is anything else. */
static char *import_target(const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= len || line[i] != '@')
        return NULL;
    size_t start = ++i;
    while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
        i++;
    size_t end = i;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    if (end == start || i != len)
        return NULL;
    return xstrndup(line + start, end - start);
}

/* A fence line opens or closes a code block; imports inside are examples. */
static bool is_fence(const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && i < 3 && line[i] == ' ')
        i++;
    return len - i >= 3 && (strncmp(line + i, "```", 3) == 0 || strncmp(line + i, "~~~", 3) == 0);
}

/* Relative to the importing file's directory; "~/" is the user's home. */
static char *import_path(const char *importer, const char *target)
{
    loom_str p = LOOM_STR_INIT;
    if (strncmp(target, "~/", 2) == 0) {
        const char *home = getenv("HOME");
        str_printf(&p, "%s/%s", home ? home : "", target + 2);
    } else if (target[0] == '/') {
        str_puts(&p, target);
    } else {
        const char *slash = strrchr(importer, '/');
        if (slash)
            str_append(&p, importer, (size_t)(slash - importer) + 1);
        str_puts(&p, target);
    }
    return str_steal(&p);
}

static void expand(render_ctx *c, loom_str *out, const char *path, const char *text, size_t len);

static void include_import(render_ctx *c, loom_str *out, const char *importer, const char *target)
{
    if (c->depth > MEMORY_IMPORT_DEPTH) {
        str_printf(out, "[@%s not imported: imports nest deeper than %d levels]\n", target,
                   MEMORY_IMPORT_DEPTH);
        return;
    }
    char *path = import_path(importer, target);
    char *rp = realpath(path, NULL);
    if (!rp) {
        str_printf(out, "[@%s not imported: %s not found]\n", target, path);
        free(path);
        return;
    }
    char why[512];
    if (is_secret(c, path, why, sizeof why) || is_secret(c, rp, why, sizeof why)) {
        str_printf(out, "[@%s not imported: %s; secret files never enter the prompt]\n", target,
                   why);
        free(path);
        free(rp);
        return;
    }
    free(path);
    if (escapes_repo(c, rp, why, sizeof why)) {
        str_printf(out, "[@%s not imported: %s]\n", target, why);
        free(rp);
        return;
    }
    for (size_t i = 0; i < c->depth; i++) {
        if (strcmp(c->stack[i], rp) == 0) {
            str_printf(out, "[@%s not imported: import cycle back to %s]\n", target, rp);
            free(rp);
            return;
        }
    }
    size_t len = 0;
    bool cut = false;
    char *text = read_capped(rp, MEMORY_FILE_CAP, &len, &cut);
    if (!text) {
        str_printf(out, "[@%s not imported: %s cannot be read]\n", target, rp);
        free(rp);
        return;
    }
    if (!was_loaded(c, rp))
        note_loaded(c, rp, MEMORY_IMPORT);
    expand(c, out, rp, text, len);
    if (cut) {
        str_puts(out, "[… truncated]\n");
        c->rep.truncated = true;
    }
    free(text);
    free(rp);
}

/* Copies text to out line by line, replacing import lines by the imported
 * file. path is the file's resolved path, pushed for cycle detection. */
static void expand(render_ctx *c, loom_str *out, const char *path, const char *text, size_t len)
{
    c->stack[c->depth++] = path;
    bool fenced = false;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - (text + pos)) : len - pos;
        const char *line = text + pos;
        char *target = NULL;
        if (is_fence(line, line_len))
            fenced = !fenced;
        else if (!fenced)
            target = import_target(line, line_len);
        if (target) {
            include_import(c, out, path, target);
            free(target);
        } else {
            str_append(out, line, line_len);
            str_putc(out, '\n');
        }
        pos += line_len + (nl ? 1 : 0);
    }
    c->depth--;
}

/* One top-level instructions file under its heading (nothing when absent). */
static void add_file(render_ctx *c, loom_str *out, const char *title, const char *path,
                     memory_kind kind)
{
    char why[PATH_MAX + 160];
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return; /* a directory named AGENTS.md is not instructions */
    const char *base = strrchr(path, '/');
    if (!c->claude && strcmp(base ? base + 1 : path, "CLAUDE.md") == 0) {
        note_skipped(c, path, kind, "compat.claude is off: only AGENTS.md files load");
        return;
    }
    if (is_secret(c, path, why, sizeof why)) {
        str_printf(out, "\n# %s (%s)\n[not loaded: %s; secret files never enter the prompt]\n",
                   title, path, why);
        note_skipped(c, path, kind, why);
        return;
    }
    size_t len = 0;
    bool cut = false;
    char *text = read_capped(path, MEMORY_FILE_CAP, &len, &cut);
    if (!text) {
        note_skipped(c, path, kind, "it cannot be read");
        return;
    }
    char *rp = resolve(path);
    c->confined = kind == MEMORY_PROJECT && !c->trusted;
    if (escapes_repo(c, rp, why, sizeof why)) {
        /* An AGENTS.md that is a symlink to a file elsewhere. */
        str_printf(out, "\n# %s (%s)\n[not loaded: %s]\n", title, path, why);
        note_skipped(c, path, kind, why);
    } else if (was_loaded(c, rp)) {
        snprintf(why, sizeof why, "the same file as %s, loaded once", rp);
        note_skipped(c, path, kind, why);
    } else {
        note_loaded(c, rp, kind);
        str_printf(out, "\n# %s (%s)\n", title, path);
        expand(c, out, rp, text, len);
        if (cut) {
            str_puts(out, "[… truncated]\n");
            c->rep.truncated = true;
        }
    }
    c->confined = false;
    free(rp);
    free(text);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A memory directory: its index resident, its other files listed by path
 * so the model can Read the one an index entry points to. */
static void add_memory_dir(render_ctx *c, loom_str *out, const char *dir)
{
    char *rp = realpath(dir, NULL);
    if (!rp)
        return;
    DIR *d = opendir(rp);
    if (!d) {
        free(rp);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "MEMORY.md") == 0)
            continue;
        loom_str p = LOOM_STR_INIT;
        str_printf(&p, "%s/%s", rp, e->d_name);
        struct stat st;
        if (stat(p.ptr, &st) == 0 && S_ISREG(st.st_mode)) {
            names = xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = str_steal(&p);
        } else {
            str_free(&p);
        }
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str);

    loom_str index_path = LOOM_STR_INIT;
    str_printf(&index_path, "%s/MEMORY.md", rp);
    size_t len = 0;
    bool cut = false;
    char why[512];
    char *index = NULL;
    bool secret_index = is_secret(c, index_path.ptr, why, sizeof why);
    if (!secret_index)
        index = read_capped(index_path.ptr, MEMORY_INDEX_CAP, &len, &cut);
    if (index || n > 0) {
        str_printf(out, "\n# Memory (%s)\n", rp);
        str_puts(out, "MEMORY.md is the index of this memory and is always loaded. The other "
                      "files are loaded on demand: Read one when its index entry matters to "
                      "the task.\n");
    }
    if (index) {
        note_loaded(c, index_path.ptr, MEMORY_INDEX);
        str_printf(out, "\n## Index (%s)\n", index_path.ptr);
        /* An index is memory, not instructions: untrusted, sanitized
         * (seed 001 §11.5) so no line of it passes as a harness tag. */
        char *clean = memory_sanitize(index, len, NULL);
        size_t clen = strlen(clean);
        str_append(out, clean, clen);
        if (clen > 0 && clean[clen - 1] != '\n')
            str_putc(out, '\n');
        free(clean);
        if (cut) {
            /* seed 001 §11.4: an over-long index is the model's to tidy. */
            str_printf(out, "[… truncated: MEMORY.md is over %d chars; consolidate it so the "
                            "whole index fits]\n", MEMORY_INDEX_CAP);
            c->rep.truncated = true;
        }
        free(index);
    } else if (secret_index && access(index_path.ptr, F_OK) == 0) {
        str_printf(out, "\n## Index (%s)\n[not loaded: %s; secret files never enter the "
                        "prompt]\n", index_path.ptr, why);
    }
    if (n > 0) {
        str_puts(out, "\n## Memory files (not loaded)\n");
        for (size_t i = 0; i < n; i++) {
            if (i < MEMORY_LIST_MAX) {
                /* A file name is the repository's text too: no tag, no
                 * line break of its own (names[i] is rp/name). */
                const char *base = names[i] + strlen(rp) + 1;
                char *clean = memory_sanitize(base, strlen(base), NULL);
                for (char *q = clean; *q; q++)
                    if ((unsigned char)*q < 0x20 || *q == 0x7f)
                        *q = '?';
                str_printf(out, "- %s/%s\n", rp, clean);
                free(clean);
            }
            free(names[i]);
        }
        if (n > MEMORY_LIST_MAX)
            str_printf(out, "- … and %zu more in %s\n", n - MEMORY_LIST_MAX, rp);
    }
    free(names);
    str_free(&index_path);
    free(rp);
}

char *memory_render(const char *cwd, bool trusted, bool claude, const secrets_deny *deny,
                    memory_report *rep)
{
    render_ctx c = {0};
    c.trusted = trusted;
    c.claude = claude;
    c.deny = deny;
    char *home = loom_home();
    char *dir = resolve(cwd);
    char *root = path_repo_root(dir);
    loom_str instr = LOOM_STR_INIT;
    loom_str path = LOOM_STR_INIT;

    /* Each level: Claude Code's file, then Loom's (the later, the more
     * specific: the same order as the settings files). */
    char *claude_home = settings_claude_home();
    str_printf(&path, "%s/CLAUDE.md", claude_home);
    free(claude_home);
    add_file(&c, &instr, "User instructions", path.ptr, MEMORY_USER);
    str_clear(&path);
    str_printf(&path, "%s/AGENTS.md", home);
    add_file(&c, &instr, "User instructions", path.ptr, MEMORY_USER);

    /* Outermost first, so the closer a file is to cwd the later (and more
     * specific) its word: collect cwd and its ancestors up to the root. */
    const char *top = root ? root : dir;
    c.root = top;
    char **chain = NULL;
    size_t nchain = 0;
    char *cur = xstrdup(dir);
    for (;;) {
        chain = xrealloc(chain, (nchain + 1) * sizeof *chain);
        chain[nchain++] = xstrdup(cur);
        char *slash = strrchr(cur, '/');
        if (strcmp(cur, top) == 0 || !slash || strcmp(cur, "/") == 0)
            break;
        if (slash == cur)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    free(cur);
    for (size_t i = nchain; i-- > 0;) {
        const char *d = strcmp(chain[i], "/") == 0 ? "" : chain[i];
        static const char *const names[] = {"CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md"};
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            str_clear(&path);
            str_printf(&path, "%s/%s", d, names[k]);
            add_file(&c, &instr, "Project instructions", path.ptr, MEMORY_PROJECT);
        }
        free(chain[i]);
    }
    free(chain);

    /* The memory section is rendered first into its own buffer so the
     * resident index survives however long the instructions are. */
    loom_str mem = LOOM_STR_INIT;
    str_clear(&path);
    str_printf(&path, "%s/memory", home);
    add_memory_dir(&c, &mem, path.ptr);
    char *seen_mem = realpath(path.ptr, NULL);
    str_clear(&path);
    str_printf(&path, "%s/.loom/memory", strcmp(top, "/") == 0 ? "" : top);
    char *proj_mem = realpath(path.ptr, NULL);
    if (proj_mem && (!seen_mem || strcmp(proj_mem, seen_mem) != 0)) {
        char why[PATH_MAX + 128];
        c.confined = !trusted;
        if (escapes_repo(&c, proj_mem, why, sizeof why))
            str_printf(&mem, "\n# Memory (%s)\n[not loaded: %s]\n", path.ptr, why);
        else
            add_memory_dir(&c, &mem, proj_mem);
        c.confined = false;
    }
    free(proj_mem);
    free(seen_mem);

    size_t mem_len = mem.len < MEMORY_TOTAL_CAP / 2 ? mem.len : MEMORY_TOTAL_CAP / 2;
    size_t budget = MEMORY_TOTAL_CAP - mem_len;
    loom_str out = LOOM_STR_INIT;
    const char *ip = str_cstr(&instr);
    /* Room for the truncation note, so the block as a whole stays in the cap. */
    size_t keep = utf8_cut(ip, instr.len, instr.len > budget ? budget - 64 : budget);
    str_append(&out, ip, keep);
    if (keep < instr.len) {
        str_printf(&out, "\n[… truncated: instructions exceed %d chars]\n", MEMORY_TOTAL_CAP);
        c.rep.truncated = true;
    }
    const char *mp = str_cstr(&mem);
    keep = utf8_cut(mp, mem.len, mem_len);
    str_append(&out, mp, keep);
    if (keep < mem.len) {
        str_puts(&out, "\n[… truncated]\n");
        c.rep.truncated = true;
    }

    str_free(&instr);
    str_free(&mem);
    str_free(&path);
    for (size_t i = 0; i < c.nloaded; i++)
        free(c.loaded[i]);
    free(c.loaded);
    free(root);
    free(dir);
    free(home);
    if (rep)
        *rep = c.rep;
    else
        memory_report_free(&c.rep);
    return str_steal(&out);
}

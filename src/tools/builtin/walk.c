/* walk.c — directory walking with .gitignore, ripgrep-style --glob and
 * --type filters (see walk.h for the rules); patterns are base/glob's. It
 * owns the ignore-file stack of one walk and nothing else. */
#include "tools/builtin/walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/glob.h"
#include "base/str.h"

/* ---- ignore rules --------------------------------------------------------- */

typedef struct {
    char *pat;
    bool negate;    /* '!': re-include (gitignore) / exclude (override) */
    bool dir_only;  /* trailing '/' */
    bool anchored;  /* had a '/' before the end: relative to the base */
} ign_rule;

typedef struct {
    char *base;       /* absolute directory the rules are relative to */
    size_t base_len;
    ign_rule *rules;
    size_t n, cap;
    bool has_include; /* override lists: some rule without '!' */
} ign_list;

enum { MATCH_NONE, MATCH_IGNORE, MATCH_WHITELIST };

/* Parses one gitignore line into a rule; false for blanks and comments. */
static bool parse_rule(const char *line, size_t len, ign_rule *r)
{
    if (len && line[len - 1] == '\r')
        len--;
    /* Trailing spaces go unless escaped. */
    while (len && line[len - 1] == ' ' && !(len >= 2 && line[len - 2] == '\\'))
        len--;
    if (len == 0 || line[0] == '#')
        return false;
    memset(r, 0, sizeof *r);
    if (line[0] == '!') {
        r->negate = true;
        line++;
        len--;
    } else if (line[0] == '\\' && len >= 2 && (line[1] == '!' || line[1] == '#')) {
        line++;
        len--;
    }
    if (len && line[len - 1] == '/') {
        r->dir_only = true;
        len--;
    }
    if (len == 0)
        return false;
    const char *slash = memchr(line, '/', len);
    r->anchored = slash != NULL;
    if (line[0] == '/') {
        line++;
        len--;
    }
    r->pat = xstrndup(line, len);
    return true;
}

static void ign_add(ign_list *l, const ign_rule *r)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->rules = xrealloc(l->rules, l->cap * sizeof *l->rules);
    }
    l->rules[l->n++] = *r;
    if (!r->negate)
        l->has_include = true;
}

static void ign_free(ign_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->rules[i].pat);
    free(l->rules);
    free(l->base);
    free(l);
}

static ign_list *ign_new(const char *base)
{
    ign_list *l = xcalloc(1, sizeof *l);
    l->base = xstrdup(base);
    l->base_len = strlen(base);
    return l;
}

/* Loads dir/.gitignore; NULL when there is none (or it is empty). */
static ign_list *ign_load(const char *dir)
{
    loom_str path = LOOM_STR_INIT;
    str_puts(&path, dir);
    if (path.len == 0 || path.ptr[path.len - 1] != '/')
        str_putc(&path, '/');
    str_puts(&path, ".gitignore");
    struct stat st;
    char *data = NULL;
    size_t len = 0;
    if (stat(path.ptr, &st) != 0 || !S_ISREG(st.st_mode) ||
        file_read_all(path.ptr, &data, &len, NULL) != 0) {
        str_free(&path);
        return NULL;
    }
    str_free(&path);
    ign_list *l = ign_new(dir);
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - data) : len;
        ign_rule r;
        if (parse_rule(data + i, end - i, &r))
            ign_add(l, &r);
        i = end + 1;
    }
    free(data);
    if (l->n == 0) {
        ign_free(l);
        return NULL;
    }
    return l;
}

static bool rule_matches(const ign_rule *r, const char *rel, bool is_dir)
{
    if (r->dir_only && !is_dir)
        return false;
    if (r->anchored)
        return glob_path_match(r->pat, rel);
    const char *base = strrchr(rel, '/');
    return glob_path_match(r->pat, base ? base + 1 : rel);
}

/* The path of abs relative to l->base, or NULL when abs is not below it. */
static const char *rel_to(const ign_list *l, const char *abs)
{
    if (l->base_len == 1 && l->base[0] == '/')
        return abs + 1;
    if (strncmp(abs, l->base, l->base_len) != 0 || abs[l->base_len] != '/')
        return NULL;
    return abs + l->base_len + 1;
}

/* Last matching line of one file decides. */
static int ign_match(const ign_list *l, const char *abs, bool is_dir, bool inverted)
{
    const char *rel = rel_to(l, abs);
    if (!rel || !*rel)
        return MATCH_NONE;
    for (size_t i = l->n; i-- > 0;) {
        const ign_rule *r = &l->rules[i];
        if (rule_matches(r, rel, is_dir)) {
            bool ignore = inverted ? r->negate : !r->negate;
            return ignore ? MATCH_IGNORE : MATCH_WHITELIST;
        }
    }
    return MATCH_NONE;
}

/* ---- file types (a subset of ripgrep's built-in table) -------------------- */

typedef struct {
    const char *name;
    const char *globs; /* space-separated basename globs */
} file_type;

static const file_type FILE_TYPES[] = {
    {"c", "*.[chH] *.[chH].in *.cats"},
    {"cmake", "*.cmake CMakeLists.txt"},
    {"config", "*.cfg *.conf *.config *.ini"},
    {"cpp", "*.[ChH] *.[ChH].in *.[ch]pp *.[ch]pp.in *.[ch]xx *.[ch]xx.in *.cc *.cc.in "
            "*.hh *.hh.in *.inl"},
    {"csharp", "*.cs"},
    {"css", "*.css *.scss"},
    {"csv", "*.csv"},
    {"dart", "*.dart"},
    {"docker", "*Dockerfile*"},
    {"elixir", "*.eex *.ex *.exs"},
    {"go", "*.go"},
    {"haskell", "*.c2hs *.cpphs *.hs *.hsc *.lhs"},
    {"html", "*.ejs *.htm *.html"},
    {"java", "*.java *.jsp *.jspx *.properties"},
    {"js", "*.js *.jsx *.vue"},
    {"json", "*.json composer.lock"},
    {"jsonl", "*.jsonl"},
    {"kotlin", "*.kt *.kts"},
    {"lua", "*.lua"},
    {"make", "*.mak *.mk [Gg][Nn][Uu]makefile [Gg][Nn][Uu]makefile.am [Gg][Nn][Uu]makefile.in "
             "[Mm]akefile [Mm]akefile.am [Mm]akefile.in"},
    {"markdown", "*.markdown *.md *.mdown *.mkdn"},
    {"md", "*.markdown *.md *.mdown *.mkdn"},
    {"objc", "*.h *.m"},
    {"perl", "*.PL *.perl *.pl *.plh *.plx *.pm *.t"},
    {"php", "*.php *.php3 *.php4 *.php5 *.phtml"},
    {"py", "*.py"},
    {"r", "*.R *.Rmd *.Rnw *.r"},
    {"ruby", "*.gemspec *.rb *.rbw .irbrc Gemfile Rakefile config.ru"},
    {"rust", "*.rs"},
    {"scala", "*.sbt *.scala"},
    {"sh", "*.bash *.bashrc *.csh *.cshrc *.ksh *.kshrc *.sh *.tcsh *.zsh .bash_login "
           ".bash_logout .bash_profile .bashrc .cshrc .kshrc .login .logout .profile "
           ".tcshrc .zlogin .zlogout .zprofile .zshenv .zshrc bash_login bash_logout "
           "bash_profile bashrc profile zlogin zlogout zprofile zshenv zshrc"},
    {"sql", "*.psql *.sql"},
    {"swift", "*.swift"},
    {"tf", "*.tf"},
    {"toml", "*.toml Cargo.lock"},
    {"ts", "*.ts *.tsx"},
    {"txt", "*.txt"},
    {"xml", "*.dtd *.rng *.sch *.xhtml *.xjb *.xml *.xml.dist *.xsd *.xsl *.xslt"},
    {"yaml", "*.yaml *.yml"},
    {"zig", "*.zig"},
};

static const file_type *find_type(const char *name)
{
    for (size_t i = 0; i < sizeof FILE_TYPES / sizeof FILE_TYPES[0]; i++) {
        if (strcmp(FILE_TYPES[i].name, name) == 0)
            return &FILE_TYPES[i];
    }
    return NULL;
}

bool walk_type_known(const char *type)
{
    return type && find_type(type) != NULL;
}

static bool type_matches(const file_type *t, const char *name)
{
    const char *p = t->globs;
    char glob[64];
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n > 0 && n < sizeof glob) {
            memcpy(glob, p, n);
            glob[n] = '\0';
            if (glob_path_match(glob, name))
                return true;
        }
        p += n;
        while (*p == ' ')
            p++;
    }
    return false;
}

/* ---- pseudo filesystems ------------------------------------------------------ */

/* statfs magic numbers (linux/magic.h), spelled out so no kernel header is needed. */
#define WALK_PROC_MAGIC 0x9fa0
#define WALK_SYSFS_MAGIC 0x62656572

static bool under(const char *abs, const char *top)
{
    size_t n = strlen(top);
    return strncmp(abs, top, n) == 0 && (abs[n] == '\0' || abs[n] == '/');
}

bool walk_pseudo_fs(const char *abs)
{
    if (under(abs, "/proc") || under(abs, "/sys") || under(abs, "/dev"))
        return true;
    /* A procfs or sysfs mounted somewhere else (a container's /proc bind
     * mount, a chroot's) is just as endless. */
    struct statfs sf;
    return statfs(abs, &sf) == 0 &&
           ((unsigned long)sf.f_type == WALK_PROC_MAGIC ||
            (unsigned long)sf.f_type == WALK_SYSFS_MAGIC);
}

/* ---- the walk -------------------------------------------------------------- */

#define WALK_MAX_DEPTH 256

typedef struct {
    const walk_opts *o;
    ign_list *overrides;     /* NULL when no --glob */
    const file_type *type;
    ign_list **stack;        /* ancestors' and visited dirs' .gitignore, shallow first */
    size_t depth, cap;
    loom_str abs;            /* path being built */
    size_t root_len;
    bool cancelled;
    bool stopped;
    bool root_pseudo;        /* the walk root is itself in /proc, /sys or /dev */
} walker;

static void stack_push(walker *w, ign_list *l)
{
    if (w->depth == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 16;
        w->stack = xrealloc(w->stack, w->cap * sizeof *w->stack);
    }
    w->stack[w->depth++] = l;
}

/* ripgrep's order: an override match decides alone; then the ignore files
 * (deepest first); then the type, which only ever filters files. */
static bool excluded(walker *w, const char *abs, bool is_dir, const char *name)
{
    if (w->overrides) {
        int m = ign_match(w->overrides, abs, is_dir, true);
        if (m == MATCH_NONE && w->overrides->has_include && !is_dir)
            m = MATCH_IGNORE;
        if (m != MATCH_NONE)
            return m == MATCH_IGNORE;
    }
    for (size_t i = w->depth; i-- > 0;) {
        if (!w->stack[i])
            continue;
        int m = ign_match(w->stack[i], abs, is_dir, false);
        if (m == MATCH_IGNORE)
            return true;
        if (m == MATCH_WHITELIST)
            break;
    }
    if (w->type && !is_dir && !type_matches(w->type, name))
        return true;
    return false;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk_dir(walker *w, unsigned level)
{
    if (level > WALK_MAX_DEPTH)
        return;
    if (cancel_requested(w->o->cancel)) {
        w->cancelled = w->stopped = true;
        return;
    }
    DIR *d = opendir(w->abs.ptr);
    if (!d)
        return;
    /* Read the names first: the directory stays open for as short a time as
     * possible (deep trees would otherwise hold one fd per level) and the
     * order is deterministic. */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    /* .loom/worktrees/ holds sub-agents' checkouts (agents/worktree.h):
     * copies of the tree, which a search must not report twice. */
    const char *base = strrchr(w->abs.ptr, '/');
    bool in_loom = base && strcmp(base, "/.loom") == 0;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0 || strcmp(nm, ".git") == 0)
            continue;
        if (in_loom && strcmp(nm, "worktrees") == 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n++] = xstrdup(nm);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_names);

    ign_list *own = ign_load(w->abs.ptr);
    stack_push(w, own);

    size_t dir_len = w->abs.len;
    for (size_t i = 0; i < n && !w->stopped; i++) {
        if (cancel_requested(w->o->cancel)) { /* a directory may hold millions */
            w->cancelled = w->stopped = true;
            break;
        }
        w->abs.len = dir_len;
        if (dir_len == 0 || w->abs.ptr[dir_len - 1] != '/')
            str_putc(&w->abs, '/');
        else
            w->abs.ptr[w->abs.len] = '\0';
        str_puts(&w->abs, names[i]);
        struct stat st;
        if (lstat(w->abs.ptr, &st) != 0)
            continue;
        bool is_dir = S_ISDIR(st.st_mode);
        /* FIFOs, devices and sockets are not files to search or list: opening
         * one can block for ever (a FIFO without a writer) or never end
         * (/dev/zero). Links are reported (the tools decide), never followed. */
        if (!is_dir && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
            continue;
        /* /proc, /sys and /dev are endless or blocking trees (/proc/kmsg,
         * /proc/<pid>/task/...): a walk from above never enters them; a walk
         * rooted inside one searches it, with the tools' per-file caps. */
        if (is_dir && !w->root_pseudo && walk_pseudo_fs(w->abs.ptr))
            continue;
        if (excluded(w, w->abs.ptr, is_dir, names[i]))
            continue;
        const char *rel = w->abs.ptr + w->root_len;
        while (*rel == '/')
            rel++;
        walk_entry e = {w->abs.ptr, rel, names[i], &st, is_dir};
        int r = w->o->visit(w->o->ud, &e);
        if (r == WALK_STOP) {
            w->stopped = true;
            break;
        }
        if (is_dir && r == WALK_CONTINUE)
            walk_dir(w, level + 1);
    }
    w->abs.len = dir_len;
    w->abs.ptr[dir_len] = '\0';

    w->depth--;
    ign_free(own);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int walk_tree(const walk_opts *o, loom_error *err)
{
    walker w;
    memset(&w, 0, sizeof w);
    w.o = o;
    if (o->type) {
        w.type = find_type(o->type);
        if (!w.type)
            return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "unrecognized file type: %s",
                                  o->type);
    }
    struct stat st;
    if (stat(o->root, &st) != 0)
        return loom_error_set(err, LOOM_ERR_IO, "cannot read directory %s: %s", o->root,
                              strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return loom_error_set(err, LOOM_ERR_IO, "%s is not a directory", o->root);

    if (o->globs && o->globs[0]) {
        w.overrides = ign_new(o->root);
        for (const char *const *g = o->globs; *g; g++) {
            bool neg = (*g)[0] == '!';
            char **alts = glob_expand_braces(*g + (neg ? 1 : 0));
            for (char **a = alts; *a; a++) {
                loom_str line = LOOM_STR_INIT;
                if (neg)
                    str_putc(&line, '!');
                str_puts(&line, *a);
                ign_rule r;
                if (parse_rule(line.ptr, line.len, &r))
                    ign_add(w.overrides, &r);
                str_free(&line);
            }
            glob_free_list(alts);
        }
    }

    /* The ancestors' .gitignore files, from "/" down to the root's parent. */
    str_puts(&w.abs, o->root);
    while (w.abs.len > 1 && w.abs.ptr[w.abs.len - 1] == '/')
        w.abs.ptr[--w.abs.len] = '\0';
    w.root_len = w.abs.len;
    w.root_pseudo = walk_pseudo_fs(w.abs.ptr);
    for (size_t i = 0; i < w.root_len; i++) {
        size_t dlen = i == 0 ? 1 : i;
        if (w.abs.ptr[i] != '/' || dlen >= w.root_len)
            continue;
        char *dir = xstrndup(w.abs.ptr, dlen);
        stack_push(&w, ign_load(dir));
        free(dir);
    }

    walk_dir(&w, 0);

    for (size_t i = 0; i < w.depth; i++)
        ign_free(w.stack[i]);
    free(w.stack);
    ign_free(w.overrides);
    str_free(&w.abs);
    if (w.cancelled)
        return loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "cancelled");
    return 0;
}

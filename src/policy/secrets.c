/* secrets.c — the credential-store list and the checks over it (secrets.h).
 *
 * Matching is generous on purpose: a path counts as secret when either its
 * lexical form or its resolved form lies beneath either form of a store, so
 * neither a symlink to ~/.ssh/id_rsa in the workspace nor a ~/.ssh that is
 * itself a symlink elsewhere walks around the list. A miss would let a key
 * out; a false hit only costs a question. Threading: no state. */
#include "policy/secrets.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/path.h"
#include "base/str.h"
#include "base/utf8.h"
#include "shell/bash_parse.h"
#include "policy/rules.h"

/* Credential stores, relative to $HOME: keys, cloud and cluster
 * credentials, registry and package-index tokens, password files. */
static const char *const SECRETS_DEFAULT[] = {
    ".ssh",           ".aws",   ".gnupg", ".config/gcloud", ".azure", ".kube",
    ".docker/config.json", ".netrc", ".npmrc", ".pypirc",
    ".git-credentials", ".config/gh/hosts.yml", ".password-store",
    /* The rest of the credential files the risk classifier's "credentials"
     * class names (docs/permissions-rules.md): a file a Bash write to which
     * is a tamper is a file no tool reads unseen either. */
    ".config/git/credentials", ".vault-token", ".pgpass", ".my.cnf",
    ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
};

#define NSECRETS (sizeof SECRETS_DEFAULT / sizeof *SECRETS_DEFAULT)

const char *secrets_default_at(size_t i)
{
    return i < NSECRETS ? SECRETS_DEFAULT[i] : NULL;
}

size_t secrets_default_count(void)
{
    return NSECRETS;
}

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && h[0] == '/')
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* p is root or lies beneath it. */
static bool under(const char *p, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 1 && root[0] == '/')
        return p[0] == '/';
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Absolute and folded, "~/" expanded; NULL without a usable base. */
static char *lexical(const char *path, const char *cwd)
{
    loom_str s = LOOM_STR_INIT;
    const char *home = home_dir();
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0')) {
        if (!home)
            return NULL;
        str_puts(&s, home);
        str_putc(&s, '/');
        str_puts(&s, path + 1);
    } else if (path[0] == '/') {
        str_puts(&s, path);
    } else {
        char buf[PATH_MAX];
        const char *base = cwd && cwd[0] == '/' ? cwd : getcwd(buf, sizeof buf);
        if (!base) {
            str_free(&s);
            return NULL;
        }
        str_puts(&s, base);
        str_putc(&s, '/');
        str_puts(&s, path);
    }
    char *r = path_fold(s.ptr);
    str_free(&s);
    return r;
}

/* Bytes of s to print so that at most max are shown and no UTF-8 sequence
 * is cut (the reason travels to the model as JSON text). */
static int clip(const char *s, size_t max)
{
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t k = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (k == 0)
            k = 1; /* the model's JSON was valid; be safe anyway */
        if (i + k > max)
            break;
        i += k;
    }
    return (int)i;
}

/* The stores under $HOME as written and with their symlinks resolved,
 * built once per check (a Bash command checks many words). */
typedef struct stores {
    char *lex[NSECRETS];
    char *res[NSECRETS];   /* NULL when unresolvable */
    size_t n;              /* 0 without a home directory */
    const secrets_deny *deny; /* the sandbox's denyRead list, or NULL */
} stores;

static void stores_init(stores *st, const secrets_deny *deny)
{
    memset(st, 0, sizeof *st);
    st->deny = deny;
    const char *home = home_dir();
    if (!home)
        return;
    for (size_t i = 0; i < NSECRETS; i++) {
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "%s/%s", home, SECRETS_DEFAULT[i]);
        st->res[i] = perm_resolve_path(s.ptr, "/");
        st->lex[i] = path_fold(s.ptr);
        str_free(&s);
    }
    st->n = NSECRETS;
}

static void stores_free(stores *st)
{
    for (size_t i = 0; i < st->n; i++) {
        free(st->lex[i]);
        free(st->res[i]);
    }
    st->n = 0;
}

static bool secret_in(const stores *st, const char *path, const char *cwd, char *why,
                      size_t cap)
{
    if (!path || !*path)
        return false;
    char *lex = lexical(path, cwd);
    if (!lex)
        return false;
    char *res = perm_resolve_path(lex, "/");
    /* A symlink loop leaves the target unknowable: fail closed. */
    if (!res) {
        if (why)
            snprintf(why, cap, "%.*s (its symlinks cannot be resolved)", clip(path, 200), path);
        free(lex);
        return true;
    }
    const char *forms[2] = {lex, res};
    bool hit = false;
    for (size_t i = 0; i < st->n && !hit; i++)
        for (int f = 0; f < 2 && !hit; f++)
            if (under(forms[f], st->lex[i]) || (st->res[i] && under(forms[f], st->res[i]))) {
                hit = true;
                if (why)
                    snprintf(why, cap, "%.*s is under ~/%s, a credential store", clip(path, 300),
                             path, SECRETS_DEFAULT[i]);
            }
    if (!hit) {
        /* The sandbox's configured denyRead list binds every tool too. */
        const secrets_deny *d = st->deny;
        if (d && (d->read_denied(d->ctx, lex) || d->read_denied(d->ctx, res))) {
            hit = true;
            if (why)
                snprintf(why, cap, "%.*s is in the sandbox's denyRead list", clip(path, 300), path);
        }
    }
    free(lex);
    free(res);
    return hit;
}

bool secrets_path_is_secret(const char *path, const char *cwd, const secrets_deny *deny,
                            char *why, size_t cap)
{
    stores st;
    stores_init(&st, deny);
    bool hit = secret_in(&st, path, cwd, why, cap);
    stores_free(&st);
    return hit;
}

static bool holds(const stores *st, const char *dir)
{
    for (size_t i = 0; i < st->n; i++)
        if (under(st->lex[i], dir) || (st->res[i] && under(st->res[i], dir)))
            return true;
    for (size_t i = 0; st->deny && i < st->deny->n; i++)
        if (under(st->deny->paths[i], dir))
            return true;
    return false;
}

bool secrets_dir_holds_secret(const char *dir, const secrets_deny *deny)
{
    if (!dir)
        return false;
    stores st;
    stores_init(&st, deny);
    bool hit = holds(&st, dir);
    stores_free(&st);
    return hit;
}

static void fence_add(secrets_fence *f, const char *p, const char *dir)
{
    if (!p || !under(p, dir))
        return;
    char *folded = path_fold(p);
    p = folded;
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i], p)) {
            free(folded);
            return;
        }
    f->v = xrealloc(f->v, (f->n + 1) * sizeof *f->v);
    f->v[f->n++] = folded;
}

/* p lies beneath the resolved root rdir; the walk spells it beneath the
 * root as given (dir), which may run through a symlink ("ws/h" → $HOME):
 * add that spelling too, or "ws/h/.ssh/id_rsa" would pass the fence. */
static void fence_add_rebased(secrets_fence *f, const char *p, const char *rdir, const char *dir)
{
    if (!p || !rdir || !under(p, rdir))
        return;
    size_t n = strlen(rdir);
    while (n > 1 && rdir[n - 1] == '/')
        n--;
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", dir, p + (n == 1 ? 1 : n));
    fence_add(f, s.ptr, dir);
    str_free(&s);
}

void secrets_fence_init(secrets_fence *f, const char *dir, const secrets_deny *deny)
{
    f->v = NULL;
    f->n = 0;
    if (!dir)
        return;
    stores st;
    stores_init(&st, deny);
    /* The walk spells entries from its root as given; take the root both
     * as given and resolved. */
    char *rdir = perm_resolve_path(dir, "/");
    const char *roots[2] = {dir, rdir};
    for (int r = 0; r < 2; r++) {
        if (!roots[r])
            continue;
        for (size_t i = 0; i < st.n; i++) {
            fence_add(f, st.lex[i], roots[r]);
            fence_add(f, st.res[i], roots[r]);
        }
        for (size_t i = 0; deny && i < deny->n; i++)
            fence_add(f, deny->paths[i], roots[r]);
    }
    if (rdir && strcmp(rdir, dir) != 0) {
        for (size_t i = 0; i < st.n; i++) {
            fence_add_rebased(f, st.lex[i], rdir, dir);
            fence_add_rebased(f, st.res[i], rdir, dir);
        }
        for (size_t i = 0; deny && i < deny->n; i++)
            fence_add_rebased(f, deny->paths[i], rdir, dir);
    }
    free(rdir);
    stores_free(&st);
}

bool secrets_fence_hit(const secrets_fence *f, const char *path)
{
    if (!path || f->n == 0)
        return false;
    /* The walk may spell "root//x" or "root/./x"; the fence is folded. */
    char *folded = NULL;
    const char *p = path;
    if (path[0] == '/' && (strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../")))
        p = folded = path_fold(path);
    bool hit = false;
    for (size_t i = 0; i < f->n && !hit; i++)
        hit = under(p, f->v[i]) || under(path, f->v[i]);
    free(folded);
    return hit;
}

void secrets_fence_free(secrets_fence *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i]);
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

/* The literal leading directories of a glob pattern ("src/x/" of
 * "src/x/<glob>"), or the whole pattern when it has no magic. */
static size_t literal_prefix(const char *pattern)
{
    size_t magic = strcspn(pattern, "*?[{\\");
    if (!pattern[magic])
        return magic;
    size_t cut = 0;
    for (size_t i = 0; i < magic; i++)
        if (pattern[i] == '/')
            cut = i + 1;
    return cut;
}

static bool check(const stores *st, const char *path, const char *cwd, char *why, size_t cap)
{
    return path && *path && secret_in(st, path, cwd, why, cap);
}

/* A Bash word with $HOME / ${HOME} / ~ at its start spelled out; "--x=PATH"
 * gives PATH. Caller frees. */
static char *word_path(const char *w, unsigned flags)
{
    const char *eq = strchr(w, '=');
    if (w[0] == '-' && eq)
        w = eq + 1;
    const char *home = home_dir();
    const char *rest = NULL;
    if (!strncmp(w, "$HOME", 5) && (w[5] == '/' || !w[5]))
        rest = w + 5;
    else if (!strncmp(w, "${HOME}", 7) && (w[7] == '/' || !w[7]))
        rest = w + 7;
    else if (w[0] == '~' && (w[1] == '/' || !w[1]) && ((flags & BASH_WORD_TILDE) || w == eq + 1))
        rest = w + 1;
    if (!rest)
        return xstrdup(w);
    if (!home)
        return NULL;
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s%s", home, rest);
    return str_steal(&s);
}

static bool bash_word_secret(const stores *st, const char *w, unsigned flags, const char *cwd,
                             char *why, size_t cap)
{
    char *p = word_path(w, flags);
    if (!p)
        return false;
    bool hit = false;
    if (flags & BASH_WORD_GLOB) {
        /* `cat ~/.ss*` may expand to a key: a glob whose literal part is a
         * directory holding a store counts as touching it. */
        size_t n = literal_prefix(p);
        char *dir = xstrndup(p, n);
        char *lex = lexical(*dir ? dir : ".", cwd);
        char *res = lex ? perm_resolve_path(lex, "/") : NULL;
        hit = check(st, dir, cwd, why, cap) ||
              (res && holds(st, res) &&
               (why ? (snprintf(why, cap, "%.*s may expand into a credential store",
                                clip(w, 300), w),
                       1)
                    : 1));
        free(res);
        free(lex);
        free(dir);
    } else {
        hit = check(st, p, cwd, why, cap);
    }
    free(p);
    return hit;
}

static bool bash_touches(const stores *st, const char *cmd, const char *cwd, char *why,
                         size_t cap)
{
    if (!cmd)
        return false;
    bash_cmds *cs = bash_parse(cmd);
    bool hit = false;
    for (size_t i = 0; i < bash_cmds_count(cs) && !hit; i++) {
        const bash_cmd *c = bash_cmds_at(cs, i);
        for (size_t a = 0; a < c->argc && !hit; a++)
            hit = bash_word_secret(st, c->argv[a], c->argv_flags[a], cwd, why, cap);
        for (size_t r = 0; r < c->nredir && !hit; r++) {
            const bash_redir *rd = &c->redir[r];
            if (rd->kind != BASH_REDIR_DUP && rd->kind != BASH_REDIR_HEREDOC &&
                rd->kind != BASH_REDIR_HERESTRING)
                hit = bash_word_secret(st, rd->target, rd->target_flags, cwd, why, cap);
        }
    }
    bash_cmds_free(cs);
    return hit;
}

/* secrets_call_touches with the stores built. */
static bool call_touches(const stores *st, const char *tool, const json_t *input,
                         const char *cwd, char *why, size_t cap)
{
    if (!strcmp(tool, "Bash")) {
        /* A command the sandbox confines has denyRead enforced by the
         * kernel, which sees every path the command really opens; the word
         * scan is for commands that run unconfined. */
        if (st->deny && st->deny->confines_commands &&
            !json_is_true(json_object_get(input, "dangerouslyDisableSandbox")))
            return false;
        return bash_touches(st, json_string_value(json_object_get(input, "command")), cwd, why,
                            cap);
    }
    static const char *const keys[] = {"file_path", "notebook_path", "path"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (check(st, json_string_value(json_object_get(input, keys[k])), cwd, why, cap))
            return true;
    if (!strcmp(tool, "Glob")) {
        const char *pattern = json_string_value(json_object_get(input, "pattern"));
        const char *base = json_string_value(json_object_get(input, "path"));
        if (!pattern)
            return false;
        size_t n = literal_prefix(pattern);
        loom_str p = LOOM_STR_INIT;
        if (pattern[0] == '/' || (pattern[0] == '~' && pattern[1] == '/'))
            str_append(&p, pattern, n);
        else
            str_printf(&p, "%s/%.*s", base && *base ? base : ".", (int)n, pattern);
        bool hit = check(st, p.ptr, cwd, why, cap);
        str_free(&p);
        return hit;
    }
    return false;
}

bool secrets_call_touches(const char *tool, const json_t *input, const char *cwd,
                          const secrets_deny *deny, char *why, size_t cap)
{
    if (!tool || !json_is_object(input))
        return false;
    stores st;
    stores_init(&st, deny);
    bool hit = call_touches(&st, tool, input, cwd, why, cap);
    stores_free(&st);
    return hit;
}

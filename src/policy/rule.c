/* rule.c — one permission rule: parsing `Tool(spec)` once, and matching it
 * against a call of a tool other than a Bash command (rule_bash.c has
 * those): tool names and their families, file paths in every form they
 * resolve to, web domains, MCP names, other tools' specifiers.
 *
 * The asymmetry that runs through the engine: a deny or ask rule is matched
 * generously (every spelling of the command, the lexical and the resolved
 * path, through wrappers), an allow rule strictly (the command as written
 * including its assignments, the path only as it really resolves). A miss
 * on the generous side would let a call through; a miss on the strict side
 * only costs a question. A rule on its own (rule_parse) reads as deny.
 *
 * Pure apart from reading the filesystem (lstat, readlink); any thread. */
#include "policy/rule.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/glob.h"
#include "base/path.h"
#include "base/str.h"
#include "policy/rule_internal.h"

/* Symlinks followed while resolving one path; Linux gives up at 40 too. */
#define RESOLVE_MAX_HOPS 40

/* ---- small helpers --------------------------------------------------- */

const char *const RULE_READ_TOOLS[] = {"Read", "Glob", "Grep", "LS", "NotebookRead", NULL};
const char *const RULE_EDIT_TOOLS[] = {"Edit", "Write", "MultiEdit", "NotebookEdit", NULL};

bool rule_in_set(const char *const *set, const char *s)
{
    for (; *set; set++)
        if (!strcmp(*set, s))
            return true;
    return false;
}

path_family rule_family_of(const char *tool)
{
    if (!strcmp(tool, "Read") || !strcmp(tool, "NotebookRead"))
        return FAM_READ;
    if (rule_in_set(RULE_EDIT_TOOLS, tool))
        return FAM_EDIT;
    return FAM_SELF;
}

/* Does a rule written for rule_tool apply to a call of tool? Read rules
 * cover every reading tool and Edit/Write rules every writing tool, so a
 * deny cannot be walked around by picking a sibling tool. */
static bool tool_applies(const perm_rule *r, const char *tool)
{
    if (!strcmp(r->tool, tool))
        return true;
    switch (rule_family_of(r->tool)) {
    case FAM_READ: return rule_in_set(RULE_READ_TOOLS, tool);
    case FAM_EDIT: return rule_in_set(RULE_EDIT_TOOLS, tool);
    case FAM_SELF: return false;
    }
    return false;
}

const char *rule_home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
}

/* ---- paths ----------------------------------------------------------- */

/* Follows the symlinks of an absolute path component by component, the
 * way the kernel does: ".." after a symlink climbs from its target. Once a
 * component does not exist, the rest is taken as written. */
char *rule_resolve_physical(const char *abs)
{
    loom_str out = LOOM_STR_INIT;   /* "" stands for "/" */
    char *rest = xstrdup(abs);
    size_t pos = 0;
    int hops = 0;
    bool exists = true;
    char *result = NULL;
    for (;;) {
        while (rest[pos] == '/')
            pos++;
        if (!rest[pos])
            break;
        size_t st = pos;
        while (rest[pos] && rest[pos] != '/')
            pos++;
        size_t len = pos - st;
        if (len == 1 && rest[st] == '.')
            continue;
        if (len == 2 && rest[st] == '.' && rest[st + 1] == '.') {
            while (out.len > 0 && out.ptr[out.len - 1] != '/')
                out.len--;
            if (out.len > 0)
                out.len--;
            if (out.ptr)
                out.ptr[out.len] = '\0';
            continue;
        }
        size_t before = out.len;
        str_putc(&out, '/');
        str_append(&out, rest + st, len);
        if (out.len > 4 * PATH_MAX)
            goto fail;
        if (!exists)
            continue;
        struct stat sb;
        if (lstat(out.ptr, &sb) != 0) {
            exists = false;
            continue;
        }
        if (!S_ISLNK(sb.st_mode))
            continue;
        if (++hops > RESOLVE_MAX_HOPS)
            goto fail;
        char target[PATH_MAX];
        ssize_t tl = readlink(out.ptr, target, sizeof target - 1);
        if (tl <= 0) {
            exists = false;
            continue;
        }
        target[tl] = '\0';
        loom_str next = LOOM_STR_INIT;
        str_puts(&next, target);
        str_putc(&next, '/');
        str_puts(&next, rest + pos);
        free(rest);
        rest = str_steal(&next);
        pos = 0;
        out.len = target[0] == '/' ? 0 : before;
        if (out.ptr)
            out.ptr[out.len] = '\0';
    }
    result = out.len ? xstrdup(out.ptr) : xstrdup("/");
fail:
    str_free(&out);
    free(rest);
    return result;
}

char *perm_resolve_path(const char *path, const char *cwd)
{
    if (!path)
        return NULL;
    char *abs = path_join(cwd, path);
    char *folded = path_fold(abs);
    char *res = rule_resolve_physical(folded);
    free(abs);
    free(folded);
    return res;
}

bool rule_has_glob(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
            return true;
    return false;
}


/* The rule's pattern as an absolute path, as written (folded) and with the
 * literal directories before the first wildcard resolved through symlinks.
 * false when its anchor (home) is unknown. */
bool rule_patterns(const perm_rule *r, const char *cwd, const char *root, char **lexical,
                   char **resolved)
{
    const char *base = "/";
    if (r->anc == AN_ROOT && root && *root) {
        base = root;
    } else if (r->anc == AN_HOME) {
        base = rule_home_dir();
        if (!base)
            return false;
    } else if (r->anc == AN_CWD) {
        base = cwd;
    }
    loom_str full = LOOM_STR_INIT;
    str_puts(&full, base);
    str_putc(&full, '/');
    if (r->anywhere)
        str_puts(&full, "**/");
    str_puts(&full, r->pattern);
    *lexical = path_fold(str_cstr(&full));
    str_free(&full);

    /* Split at the first segment with a wildcard; resolve what is before. */
    const char *lx = *lexical;
    size_t cut = 0;
    for (const char *s = lx; *s;) {
        while (*s == '/')
            s++;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (!len || rule_has_glob(s, len))
            break;
        cut = (size_t)(s - lx) + len;
        s += len;
    }
    char *prefix = xstrndup(lx, cut ? cut : 1);
    char *rp = rule_resolve_physical(prefix);
    free(prefix);
    if (!rp) {
        *resolved = xstrdup(lx);
        return true;
    }
    loom_str res = LOOM_STR_INIT;
    str_puts(&res, rp);
    str_puts(&res, lx + cut);
    free(rp);
    *resolved = path_fold(str_cstr(&res));
    str_free(&res);
    return true;
}

void rule_path_forms_make(rule_path_forms *f, const char *path, const char *cwd)
{
    char *abs = path_join(cwd, path);
    f->lexical = path_fold(abs);
    f->resolved = rule_resolve_physical(f->lexical);
    f->physical = rule_resolve_physical(abs);
    free(abs);
}

void rule_path_forms_free(rule_path_forms *f)
{
    free(f->lexical);
    free(f->resolved);
    free(f->physical);
}

/* strict (allow): every way the path resolves must fall under the rule as
 * resolved. Otherwise (deny, ask): any form under any form of the rule. */
bool rule_patterns_match(const char *lx, const char *rs, const rule_path_forms *f, bool strict)
{
    if (strict)
        return f->resolved && f->physical && glob_path_covers(rs, f->resolved) &&
               glob_path_covers(rs, f->physical);
    const char *forms[3] = {f->lexical, f->resolved, f->physical};
    for (int k = 0; k < 3; k++)
        if (forms[k] && (glob_path_covers(lx, forms[k]) || glob_path_covers(rs, forms[k])))
            return true;
    return false;
}

bool rule_path_matches(const perm_rule *r, const rule_path_forms *f, const char *cwd, const char *root,
                       bool strict)
{
    char *lx, *rs;
    if (!rule_patterns(r, cwd, root, &lx, &rs))
        return false;
    bool m = rule_patterns_match(lx, rs, f, strict);
    free(lx);
    free(rs);
    return m;
}

/* ---- web domains ----------------------------------------------------- */

/* The host of an http(s)-style URL, lowercased; NULL when the URL is not
 * plain enough to be sure which host a client would contact. */
char *rule_url_host(const char *url)
{
    const char *s = strstr(url, "://");
    if (!s)
        return NULL;
    for (const char *c = url; c < s; c++)
        if (!isalnum((unsigned char)*c) && *c != '+' && *c != '-' && *c != '.')
            return NULL;
    s += 3;
    size_t alen = strcspn(s, "/?#");
    const char *at = NULL;
    for (size_t i = 0; i < alen; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == '\\' || c == '%' || c >= 0x7f)
            return NULL;
        if (c == '@')
            at = s + i;
    }
    const char *h = at ? at + 1 : s;
    size_t hl = alen - (size_t)(h - s);
    if (hl && h[0] == '[') {
        const char *close = memchr(h, ']', hl);
        if (!close)
            return NULL;
        hl = (size_t)(close - h) + 1;
    } else {
        const char *colon = memchr(h, ':', hl);
        if (colon)
            hl = (size_t)(colon - h);
    }
    while (hl && h[hl - 1] == '.')
        hl--;
    if (!hl)
        return NULL;
    char *host = xstrndup(h, hl);
    for (char *c = host; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return host;
}

static bool domain_matches(const perm_rule *r, const char *host)
{
    size_t hl = strlen(host), dl = strlen(r->domain);
    if (!r->sub_only && !strcmp(host, r->domain))
        return true;
    return hl > dl && host[hl - dl - 1] == '.' && !strcmp(host + hl - dl, r->domain);
}

/* ---- parsing ------------------------------------------------------------ */

int rule_bad(loom_error *err, const char *text, const char *why)
{
    return loom_error_set(err, LOOM_ERR_CONFIG, "permission rule \"%s\": %s", text, why);
}

static bool valid_tool_name(const char *s, size_t n)
{
    if (!n || !isalpha((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!isalnum((unsigned char)c) && c != '_' && c != '-' && c != '.')
            return (c == '*' && i == n - 1 && n > 7 && !strncmp(s, "mcp__", 5) &&
                    s[n - 2] == '_' && s[n - 3] == '_');
    }
    return true;
}

static int parse_path_spec(perm_rule *r, const char *spec, const char *text, loom_error *err)
{
    const char *p = spec;
    bool dot_anchored = false;
    if (p[0] == '~') {
        if (p[1] && p[1] != '/')
            return rule_bad(err, text, "only ~ and ~/ are understood, not ~user");
        r->anc = AN_HOME;
        p++;
    } else if (p[0] == '/') {
        /* //x is absolute. /x is relative to the caller's root: Claude
         * Code reads it as relative to the settings file, which a rule set
         * does not know (there it is absolute too); a hook condition
         * anchors it at the project. */
        r->anc = p[1] == '/' ? AN_ABS : AN_ROOT;
    } else {
        r->anc = AN_CWD;
        if (p[0] == '.' && (p[1] == '/' || !p[1])) {
            p++;
            dot_anchored = true;
        }
    }
    while (*p == '/')
        p++;
    size_t n = strlen(p);
    while (n && p[n - 1] == '/')
        n--;
    r->pattern = xstrndup(p, n);
    /* gitignore: a pattern without a slash matches at any depth below the
     * directory; "./name" is anchored to it. */
    r->anywhere = r->anc == AN_CWD && !dot_anchored && n && !memchr(p, '/', n) &&
                  strcmp(r->pattern, "..");
    (void)text;
    (void)err;
    return 0;
}

static int parse_domain_spec(perm_rule *r, const char *spec, const char *text, loom_error *err)
{
    if (strncmp(spec, "domain:", 7))
        return rule_bad(err, text, "WebFetch rules take domain:HOST, e.g. WebFetch(domain:example.com)");
    const char *d = spec + 7;
    if (!strncmp(d, "*.", 2)) {
        r->sub_only = true;
        d += 2;
    }
    if (!*d)
        return rule_bad(err, text, "the domain is empty");
    for (const char *c = d; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' && *c != '_')
            return rule_bad(err, text, "a domain is a host name such as example.com (no scheme, port "
                                  "or path)");
    r->domain = xstrdup(d);
    for (char *c = r->domain; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return 0;
}

bool rule_is_path_tool(const char *t)
{
    return rule_in_set(RULE_READ_TOOLS, t) || rule_in_set(RULE_EDIT_TOOLS, t);
}

void rule_free(perm_rule *r)
{
    if (!r)
        return;
    free(r->text);
    free(r->tool);
    for (size_t k = 0; k < r->nwords; k++)
        free(r->words[k]);
    free(r->words);
    free(r->glob);
    free(r->pattern);
    free(r->domain);
    free(r->spec);
    free(r);
}

/* A hook condition's tool-name wildcard: letters, digits, _ - . and '*'. */
static bool name_glob(const char *s, size_t n)
{
    bool star = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*')
            star = true;
        else if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
            return false;
    }
    return star;
}

/* The specifier decides the kind: none (or "*") is the whole tool. */
static int parse_kind(perm_rule *r, const char *spec, loom_error *err)
{
    const char *text = r->text;
    if (!strncmp(r->tool, "mcp__", 5)) {
        if (spec)
            return rule_bad(err, text, "MCP rules take no (specifier): use mcp__server or "
                                  "mcp__server__tool");
        const char *rest = r->tool + 5;
        const char *sep = strstr(rest, "__");
        if (!*rest || rest[0] == '_')
            return rule_bad(err, text, "the MCP server name is missing");
        if (!sep || !strcmp(sep, "__*")) {
            r->kind = RK_MCP_SERVER;
            if (sep)
                r->tool[sep - r->tool] = '\0';
        } else {
            r->kind = RK_TOOL;
        }
        return 0;
    }
    if (!spec || !strcmp(spec, "*")) {
        r->kind = RK_TOOL;
        return 0;
    }
    if (!strcmp(r->tool, "Bash")) {
        r->kind = RK_BASH;
        return rule_bash_parse_spec(r, spec, text, err);
    }
    if (rule_is_path_tool(r->tool)) {
        r->kind = RK_PATH;
        r->fam = rule_family_of(r->tool);
        return parse_path_spec(r, spec, text, err);
    }
    if (!strcmp(r->tool, "WebFetch")) {
        r->kind = RK_DOMAIN;
        return parse_domain_spec(r, spec, text, err);
    }
    r->kind = RK_GENERIC;
    r->spec = xstrdup(spec);
    return 0;
}

perm_rule *rule_parse(const char *text_in, unsigned flags, loom_error *err)
{
    if (!text_in) {
        loom_error_set(err, LOOM_ERR_CONFIG, "permission rule: missing text");
        return NULL;
    }
    size_t n = strlen(text_in);
    const char *s = text_in;
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (!n) {
        rule_bad(err, text_in, "the rule is empty");
        return NULL;
    }
    perm_rule *r = xcalloc(1, sizeof *r);
    r->verdict = PERM_DENY;
    r->source = RULE_SRC_USER;
    r->text = xstrndup(s, n);
    const char *text = r->text;
    const char *paren = strchr(text, '(');
    size_t tn = paren ? (size_t)(paren - text) : n;
    int rc = 0;
    char *spec = NULL;
    if (!paren && (flags & RULE_PARSE_NAME_GLOB) && name_glob(text, tn)) {
        r->tool = xstrndup(text, tn);
        r->kind = RK_NAME_GLOB;
        return r;
    }
    if (!valid_tool_name(text, tn)) {
        rc = rule_bad(err, text, paren ? "the tool name before ( is not a valid name"
                                  : "not a tool name or Tool(specifier)");
        goto out;
    }
    r->tool = xstrndup(text, tn);
    if (paren) {
        if (text[n - 1] != ')') {
            rc = rule_bad(err, text, "missing ) at the end");
            goto out;
        }
        const char *a = paren + 1, *b = text + n - 1;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        spec = xstrndup(a, (size_t)(b - a));
        if (!*spec) {
            rc = rule_bad(err, text, "empty () — write the tool name alone to match all its calls");
            goto out;
        }
    }
    rc = parse_kind(r, spec, err);
out:
    free(spec);
    if (rc) {
        rule_free(r);
        return NULL;
    }
    return r;
}

/* ---- checking a call ------------------------------------------------- */

/* The path argument of a file tool; Glob/Grep/LS default to the cwd. */
const char *rule_tool_path(const char *tool, const json_t *input, const char *cwd)
{
    const char *p = NULL;
    if (!strcmp(tool, "NotebookEdit") || !strcmp(tool, "NotebookRead"))
        p = json_string_value(json_object_get(input, "notebook_path"));
    else if (!strcmp(tool, "Glob") || !strcmp(tool, "Grep") || !strcmp(tool, "LS"))
        p = json_string_value(json_object_get(input, "path"));
    else
        p = json_string_value(json_object_get(input, "file_path"));
    if (!p && (!strcmp(tool, "Glob") || !strcmp(tool, "Grep") || !strcmp(tool, "LS")))
        p = cwd;
    return p && *p ? p : NULL;
}

static bool generic_matches(const perm_rule *r, const json_t *input)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)input, key, v)
        if (json_is_string(v) && glob_star_match(r->spec, json_string_value(v), true))
            return true;
    return false;
}

/* Does rule r match a call of a non-Bash tool? strict for allow rules. */
bool rule_call_matches(const perm_rule *r, const char *tool, const json_t *input, const char *cwd,
                       const char *root, const rule_path_forms *pf, const char *host)
{
    switch (r->kind) {
    case RK_TOOL:
        return tool_applies(r, tool);
    case RK_MCP_SERVER: {
        size_t n = strlen(r->tool);
        return !strncmp(tool, r->tool, n) && tool[n] == '_' && tool[n + 1] == '_';
    }
    case RK_PATH:
        return tool_applies(r, tool) && pf && rule_path_matches(r, pf, cwd, root, r->verdict == PERM_ALLOW);
    case RK_DOMAIN:
        return !strcmp(tool, "WebFetch") && host && domain_matches(r, host);
    case RK_GENERIC:
        return !strcmp(r->tool, tool) && input && generic_matches(r, input);
    case RK_NAME_GLOB:
        return glob_star_match(r->tool, tool, true);
    case RK_BASH:
        return false;
    }
    return false;
}


/* ---- one rule against one call ------------------------------------------ */

bool rule_matches(const perm_rule *r, const char *tool, const json_t *input, const char *cwd,
                  const char *root)
{
    if (!r || !tool)
        return false;
    char cwdbuf[PATH_MAX];
    if (!cwd || !*cwd)
        cwd = getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/";
    const char *cmd = !strcmp(tool, "Bash") ? json_string_value(json_object_get(input, "command"))
                                            : NULL;
    if (cmd) {
        /* The list of one: the same check a rule set makes, so the perm_rule
         * meets the command through wrappers, and a path rule meets the
         * files it reads and writes. */
        perm_check_detail d;
        memset(&d, 0, sizeof d);
        rule_bash_check(&r, 1, cmd, cwd, root, &d);
        return d.match.verdict == r->verdict;
    }
    rule_path_forms pf = {0};
    const char *path = rule_is_path_tool(tool) ? rule_tool_path(tool, input, cwd) : NULL;
    if (path)
        rule_path_forms_make(&pf, path, cwd);
    char *host = NULL;
    if (!strcmp(tool, "WebFetch")) {
        const char *url = json_string_value(json_object_get(input, "url"));
        host = url ? rule_url_host(url) : NULL;
    }
    bool m = rule_call_matches(r, tool, input, cwd, root, path ? &pf : NULL, host);
    free(host);
    if (path)
        rule_path_forms_free(&pf);
    return m;
}

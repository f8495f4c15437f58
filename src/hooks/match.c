/* match.c — hook matchers and `if` conditions (see match.h for the syntax).
 *
 * Everything here is compiled at load time into small immutable structures;
 * testing allocates only PCRE2 match data, per call, so concurrent tool
 * threads can test the same hook without a lock. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "hooks/match.h"

#include <ctype.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "policy/rule.h"   /* the one rule engine: hooks -> policy, never back */

/* ---- regular expressions ------------------------------------------------ */

static pcre2_code *re_compile(const char *pat, size_t len, uint32_t extra, const char *what,
                              loom_error *err)
{
    int ec;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, len, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | extra,
                                   &ec, &off, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        loom_error_set(err, LOOM_ERR_CONFIG, "%s /%.*s/ is not a valid regular expression: %s (at offset %zu)",
                       what, (int)len, pat, (char *)msg, (size_t)off);
        return NULL;
    }
    return re;
}

/* Unanchored search, like RegExp.test: "Bash" inside "BashOutput" matches
 * a regex matcher; exact-name lists are handled without a regex. */
static bool re_search(const pcre2_code *re, const char *s, size_t len)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    int rc = pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

/* ---- matcher ------------------------------------------------------------ */

typedef enum { M_ALL, M_EXACT, M_REGEX } matcher_kind;

struct hook_matcher {
    matcher_kind kind;
    char **names; /* M_EXACT */
    size_t n_names;
    pcre2_code *re; /* M_REGEX */
};

static bool is_simple_matcher(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '|')
            return false;
    return true;
}

int hook_matcher_compile(const char *text, hook_matcher **out, loom_error *err)
{
    hook_matcher *m = xcalloc(1, sizeof *m);
    if (!text || !*text || strcmp(text, "*") == 0) {
        m->kind = M_ALL;
    } else if (is_simple_matcher(text)) {
        m->kind = M_EXACT;
        const char *p = text;
        while (*p) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            if (n) {
                m->names = xrealloc(m->names, (m->n_names + 1) * sizeof *m->names);
                m->names[m->n_names++] = xstrndup(p, n);
            }
            p += n + (bar ? 1 : 0);
        }
        if (!m->n_names) /* "|" alone: nothing to name, so everything */
            m->kind = M_ALL;
    } else {
        m->kind = M_REGEX;
        m->re = re_compile(text, strlen(text), 0, "matcher", err);
        if (!m->re) {
            free(m);
            return -LOOM_ERR_CONFIG;
        }
    }
    *out = m;
    return 0;
}

bool hook_matcher_test(const hook_matcher *m, const char *value)
{
    if (!value)
        value = "";
    switch (m->kind) {
    case M_ALL:
        return true;
    case M_EXACT:
        for (size_t i = 0; i < m->n_names; i++)
            if (strcmp(m->names[i], value) == 0)
                return true;
        return false;
    case M_REGEX:
        return re_search(m->re, value, strlen(value));
    }
    return false;
}

bool hook_matcher_is_all(const hook_matcher *m)
{
    return m->kind == M_ALL;
}

void hook_matcher_free(hook_matcher *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_names; i++)
        free(m->names[i]);
    free(m->names);
    if (m->re)
        pcre2_code_free(m->re);
    free(m);
}

/* ---- conditions --------------------------------------------------------- */

typedef enum { CT_TOOL, CT_RE, CT_NRE, CT_EQ, CT_NE } cterm_kind;

typedef struct {
    cterm_kind kind;
    perm_rule *rule;    /* CT_TOOL: the permission rule, read by policy/rule */
    char **path;   /* CT_RE…CT_NE: payload path, one segment each */
    size_t n_path;
    pcre2_code *re;
    json_t *value;
} cterm;

struct hook_cond {
    cterm *terms; /* any of them holding is enough */
    size_t n;
};

static void cterm_free(cterm *t)
{
    rule_free(t->rule);
    for (size_t i = 0; i < t->n_path; i++)
        free(t->path[i]);
    free(t->path);
    if (t->re)
        pcre2_code_free(t->re);
    json_decref(t->value);
}

void hook_cond_free(hook_cond *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        cterm_free(&c->terms[i]);
    free(c->terms);
    free(c);
}

static char *trim_dup(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return xstrndup(s, n);
}

static void path_push(cterm *t, char *seg)
{
    t->path = xrealloc(t->path, (t->n_path + 1) * sizeof *t->path);
    t->path[t->n_path++] = seg;
}

/* "/a/b~1c" (JSON pointer, RFC 6901) or "a.b.0". */
static int parse_path(cterm *t, const char *lhs, const char *cond, loom_error *err)
{
    if (!*lhs || strpbrk(lhs, " \t"))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "`if` condition \"%s\": \"%s\" is not a payload path (write "
                              "tool_input.command or /tool_input/command)",
                              cond, lhs);
    if (lhs[0] == '/') {
        const char *p = lhs + 1;
        for (;;) {
            const char *slash = strchr(p, '/');
            size_t n = slash ? (size_t)(slash - p) : strlen(p);
            loom_str seg = LOOM_STR_INIT;
            str_puts(&seg, "");
            for (size_t i = 0; i < n; i++) {
                if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
                    str_putc(&seg, p[i + 1] == '0' ? '~' : '/');
                    i++;
                } else {
                    str_putc(&seg, p[i]);
                }
            }
            path_push(t, str_steal(&seg));
            if (!slash)
                break;
            p = slash + 1;
        }
    } else {
        const char *p = lhs;
        for (;;) {
            const char *dot = strchr(p, '.');
            size_t n = dot ? (size_t)(dot - p) : strlen(p);
            if (!n)
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "`if` condition \"%s\": empty segment in path \"%s\"", cond, lhs);
            path_push(t, xstrndup(p, n));
            if (!dot)
                break;
            p = dot + 1;
        }
    }
    return 0;
}

static const json_t *path_lookup(const cterm *t, const json_t *v)
{
    for (size_t i = 0; i < t->n_path && v; i++) {
        const char *seg = t->path[i];
        if (json_is_object(v)) {
            v = json_object_get(v, seg);
        } else if (json_is_array(v) && *seg && strspn(seg, "0123456789") == strlen(seg)) {
            v = json_array_get(v, (size_t)strtoull(seg, NULL, 10));
        } else {
            return NULL;
        }
    }
    return v;
}

/* The regex operand: 'quoted', "quoted", /slashed/flags, or the bare rest. */
static int parse_regex_operand(cterm *t, const char *rhs, const char *cond, loom_error *err)
{
    size_t n = strlen(rhs);
    const char *body = rhs;
    size_t blen = n;
    uint32_t flags = 0;
    if (n >= 2 && (rhs[0] == '\'' || rhs[0] == '"') && rhs[n - 1] == rhs[0]) {
        body = rhs + 1;
        blen = n - 2;
    } else if (n >= 2 && rhs[0] == '/') {
        const char *close = strrchr(rhs, '/');
        if (close > rhs && strspn(close + 1, "imsx") == strlen(close + 1)) {
            body = rhs + 1;
            blen = (size_t)(close - body);
            for (const char *f = close + 1; *f; f++)
                flags |= *f == 'i' ? PCRE2_CASELESS
                         : *f == 'm' ? PCRE2_MULTILINE
                         : *f == 's' ? PCRE2_DOTALL
                                     : PCRE2_EXTENDED;
        }
    }
    if (!blen)
        return loom_error_set(err, LOOM_ERR_CONFIG, "`if` condition \"%s\": empty regular expression",
                              cond);
    t->re = re_compile(body, blen, flags, "`if` condition", err);
    return t->re ? 0 : -LOOM_ERR_CONFIG;
}

static void parse_value_operand(cterm *t, const char *rhs)
{
    size_t n = strlen(rhs);
    t->value = json_loads(rhs, JSON_DECODE_ANY, NULL);
    if (t->value)
        return;
    if (n >= 2 && rhs[0] == '\'' && rhs[n - 1] == '\'') {
        char *in = xstrndup(rhs + 1, n - 2);
        t->value = json_string(in);
        free(in);
        if (t->value)
            return;
    }
    /* A bare word ("git") compares as the string; jansson rejects strings
     * that are not UTF-8, and then nothing can be equal to it. */
    t->value = json_string(rhs);
    if (!t->value)
        t->value = json_null();
}

/* Finds the first operator outside quotes; returns its kind and position. */
static bool find_operator(const char *s, cterm_kind *kind, size_t *at, size_t *oplen)
{
    char q = 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        if (q) {
            if (c == '\\' && s[i + 1])
                i++;
            else if (c == q)
                q = 0;
            continue;
        }
        if (c == '\'' || c == '"') {
            q = c;
            continue;
        }
        static const struct {
            const char *op;
            cterm_kind kind;
        } ops[] = {{"=~", CT_RE}, {"!~", CT_NRE}, {"==", CT_EQ}, {"!=", CT_NE}, {" matches ", CT_RE}};
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            size_t l = strlen(ops[k].op);
            if (strncmp(s + i, ops[k].op, l) == 0) {
                *kind = ops[k].kind;
                *at = i;
                *oplen = l;
                return true;
            }
        }
    }
    return false;
}

/* Does the condition have the shape of a rule, "Name" or "Name(…)" with
 * the name made of [A-Za-z0-9_.*-]? Then the rule engine reads it (and
 * says what is wrong with it); otherwise it is an expression. */
static bool looks_like_rule(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    const char *name = s;
    while (isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.' || *s == '*')
        s++;
    if (s == name)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return true;
    if (*s != '(')
        return false;
    size_t rlen = strlen(s);
    while (rlen && isspace((unsigned char)s[rlen - 1]))
        rlen--;
    return rlen >= 2 && s[rlen - 1] == ')';
}

static int parse_term(cterm *t, const char *cond, loom_error *err)
{
    memset(t, 0, sizeof *t);
    cterm_kind kind;
    size_t at, oplen;
    /* A tool rule is tried first: its pattern may contain "==" or "=~"
     * (Bash(test "$a" == b)), which are then not operators. */
    if (looks_like_rule(cond)) {
        /* The permission-rule engine reads it: the condition holds exactly
         * when the same text in permissions.deny would deny the call —
         * through sudo/env/sh -c/$( ) wrapping, global options, commands
         * that only could be it, and path rules meeting a Bash command's
         * files. Only a bare tool name may also carry '*' wildcards. */
        loom_error rerr = {0};
        t->kind = CT_TOOL;
        t->rule = rule_parse(cond, RULE_PARSE_NAME_GLOB, &rerr);
        if (!t->rule)
            return loom_error_set(err, LOOM_ERR_CONFIG, "`if` condition \"%s\": %s", cond,
                                  rerr.message);
        return 0;
    }
    if (!find_operator(cond, &kind, &at, &oplen))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "`if` condition \"%s\" is not understood: write Tool(pattern) "
                              "(e.g. Bash(git push *)), path =~ regex or path == value",
                              cond);
    t->kind = kind;
    char *lhs = trim_dup(cond, at);
    char *rhs = trim_dup(cond + at + oplen, strlen(cond + at + oplen));
    int rc = parse_path(t, lhs, cond, err);
    if (rc == 0) {
        if (kind == CT_RE || kind == CT_NRE)
            rc = parse_regex_operand(t, rhs, cond, err);
        else
            parse_value_operand(t, rhs);
    }
    free(lhs);
    free(rhs);
    return rc;
}

int hook_cond_parse(const json_t *v, hook_cond **out, loom_error *err)
{
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_string(v) && !(json_is_array(v) && n))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "`if` must be a string or a non-empty array of strings");
    hook_cond *c = xcalloc(1, sizeof *c);
    c->terms = xcalloc(n, sizeof *c->terms);
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(item)) {
            hook_cond_free(c);
            return loom_error_set(err, LOOM_ERR_CONFIG, "`if`[%zu] must be a string", i);
        }
        int rc = parse_term(&c->terms[i], json_string_value(item), err);
        c->n = i + 1; /* so a failed term's parts are freed too */
        if (rc < 0) {
            hook_cond_free(c);
            return rc;
        }
    }
    *out = c;
    return 0;
}

/* ---- evaluating ----------------------------------------------------------- */

static bool tool_term_eval(const cterm *t, const json_t *payload, const char *project_dir)
{
    const char *tool = json_get_str(payload, "tool_name", NULL);
    if (!tool)
        return false;
    const json_t *in = json_get_obj(payload, "tool_input");
    const char *cwd = json_get_str(payload, "cwd", project_dir ? project_dir : "/");
    /* "/x" in a hook's rule is relative to the project, as Claude Code
     * reads it relative to the settings file (NULL: the payload's cwd). */
    return rule_matches(t->rule, tool, in, cwd, project_dir ? project_dir : cwd);
}

static bool re_term_eval(const cterm *t, const json_t *payload)
{
    const json_t *v = path_lookup(t, payload);
    if (!v || json_is_null(v))
        return false;
    if (json_is_string(v))
        return re_search(t->re, json_string_value(v), json_string_length(v));
    char *dump = json_dump_compact(v); /* numbers, booleans, objects as JSON text */
    bool ok = dump && re_search(t->re, dump, strlen(dump));
    free(dump);
    return ok;
}

static bool term_eval(const cterm *t, const json_t *payload, const char *project_dir)
{
    switch (t->kind) {
    case CT_TOOL:
        return tool_term_eval(t, payload, project_dir);
    case CT_RE:
        return re_term_eval(t, payload);
    case CT_NRE:
        return !re_term_eval(t, payload);
    case CT_EQ:
    case CT_NE: {
        const json_t *v = path_lookup(t, payload);
        bool eq = v ? json_equal((json_t *)v, t->value) : json_is_null(t->value);
        return t->kind == CT_EQ ? eq : !eq;
    }
    }
    return false;
}

bool hook_cond_eval(const hook_cond *c, const json_t *payload, const char *project_dir)
{
    for (size_t i = 0; i < c->n; i++)
        if (term_eval(&c->terms[i], payload, project_dir))
            return true;
    return false;
}

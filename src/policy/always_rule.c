/* always_rule.c — the grant behind "always" (always_rule.h): the parsed
 * command's parts each get the narrowest rule that covers them, and the
 * whole offer is proven against a scratch rule set before it is shown. */
#include "policy/always_rule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "shell/bash_parse.h"
#include "policy/risk.h"
#include "policy/rule.h"
#include "policy/rules.h"

#define SAVED_TO ".loom/settings.local.json"

/* Subcommands that only build, test or inspect, per tool: these get a
 * prefix rule (`Bash(git status:*)`), because their later arguments vary
 * from call to call and do not change what kind of thing runs. Anything
 * else — a subcommand not listed (git push, npm install, docker run), any
 * other program — is saved as the exact command. */
static const struct {
    const char *program;
    const char *const *subs;
} prefix_tools[] = {
    {"git", (const char *const[]){"status", "log", "diff", "show", "blame", "fetch", "add",
                                  "commit", "grep", "ls-files", "describe", "shortlog",
                                  "rev-parse", NULL}},
    {"npm", (const char *const[]){"test", "t", "build", "lint", "start", NULL}},
    {"pnpm", (const char *const[]){"test", "t", "build", "lint", "start", NULL}},
    {"yarn", (const char *const[]){"test", "build", "lint", "start", NULL}},
    {"bun", (const char *const[]){"test", NULL}},
    {"cargo", (const char *const[]){"build", "test", "check", "fmt", "clippy", "doc", "bench",
                                    NULL}},
    {"go", (const char *const[]){"build", "test", "vet", "fmt", NULL}},
    {"make", NULL}, /* any plain target: make test, make build */
};

/* Package managers whose `run SCRIPT` takes three words. */
static bool runs_scripts(const char *program)
{
    return !strcmp(program, "npm") || !strcmp(program, "pnpm") || !strcmp(program, "yarn") ||
           !strcmp(program, "bun");
}

/* A word that can stand in a prefix rule as is: no quoting, no rule syntax. */
static bool plain_word(const char *w)
{
    if (!*w || *w == '-')
        return false;
    for (const char *p = w; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '+' || c == '@'))
            return false;
    }
    return true;
}

/* How many leading words form the prefix of a harmless subcommand; 0: use
 * the exact command. */
static size_t prefix_words(const bash_cmd *c)
{
    if (c->argc < 2 || strchr(c->argv[0], '/') || !plain_word(c->argv[0]))
        return 0;
    for (size_t i = 0; i < sizeof prefix_tools / sizeof prefix_tools[0]; i++) {
        if (strcmp(prefix_tools[i].program, c->argv[0]) != 0)
            continue;
        const char *sub = c->argv[1];
        if (!plain_word(sub))
            return 0;
        if (runs_scripts(c->argv[0]) && (!strcmp(sub, "run") || !strcmp(sub, "run-script")))
            return c->argc >= 3 && plain_word(c->argv[2]) ? 3 : 0;
        if (!prefix_tools[i].subs)
            return 2;
        for (const char *const *s = prefix_tools[i].subs; *s; s++)
            if (!strcmp(*s, sub))
                return 2;
        return 0;
    }
    return 0;
}

/* Options after a harmless subcommand that make it run a program, load
 * configuration or write a file it names: `git fetch --upload-pack=X`,
 * `git grep -O X`, `git diff --output=F`, `go test -exec X`, `cargo test
 * --config K=V`, `make test CC=X`. A call that carries one is not the
 * harmless kind the prefix stands for, so it gets its exact rule. */
static bool changes_what_runs(const bash_cmd *c, size_t words)
{
    static const char *const OPTS[] = {
        "--upload-pack", "--receive-pack", "--exec", "-exec", "-toolexec", "--open-files-in-pager",
        "-O", "--output", "-o", "--ext-diff", "--textconv", "--exec-path", "--config", "-Z",
        "--config-env", "-c", "--template", "--git-dir", "--work-tree", "-C", "--manifest-path",
        "-f", "--file", "--makefile", "-e", "--environment-overrides", "--eval", "-I",
        "--include-dir", "--script-shell", "--prefix", "--userconfig", "--globalconfig",
        "--node-options", "--require", "--import", "--loader", NULL};
    for (size_t k = words; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (!strcmp(a, "--"))
            break;
        if (!strcmp(c->argv[0], "make") && strchr(a, '=') && a[0] != '-')
            return true;   /* make VAR=value overrides what the recipes run */
        if (a[0] != '-')
            continue;
        size_t n = strcspn(a, "=");
        for (size_t o = 0; OPTS[o]; o++) {
            size_t ol = strlen(OPTS[o]);
            if (n == ol && !strncmp(a, OPTS[o], n))
                return true;
            /* -oFILE, -Oless glued to a short option (git's and make's
             * getopt; go's single-dash long options are not clusters) */
            if (ol == 2 && a[1] != '-' && !strncmp(a, OPTS[o], 2) && a[2] &&
                (!strcmp(c->argv[0], "git") || !strcmp(c->argv[0], "make")))
                return true;
        }
    }
    return false;
}

static void none(always_offer *o, const char *why)
{
    for (size_t i = 0; i < o->n_rules; i++)
        free(o->rules[i]);
    free(o->rules);
    free(o->label);
    memset(o, 0, sizeof *o);
    o->kind = ALWAYS_NONE;
    snprintf(o->why_not, sizeof o->why_not, "%s", why);
}

static void add_rule(always_offer *o, char *rule)
{
    for (size_t i = 0; i < o->n_rules; i++)
        if (!strcmp(o->rules[i], rule)) {
            free(rule);
            return;
        }
    o->rules = xrealloc(o->rules, (o->n_rules + 1) * sizeof *o->rules);
    o->rules[o->n_rules++] = rule;
}

static bool word_is_literal(const char *w, unsigned flags)
{
    /* '*' is a wildcard in a Bash rule even where the shell reads it literally. */
    return !(flags & (BASH_WORD_EXPANDS | BASH_WORD_GLOB | BASH_WORD_TILDE)) && !strchr(w, '*');
}

static void derive_bash(const char *command, always_offer *o)
{
    bash_cmds *pc = bash_parse(command);
    size_t n = bash_cmds_count(pc);
    o->kind = ALWAYS_RULES;
    if (bash_cmds_uncertain(pc) || !n) {
        none(o, "the command could not be read for sure");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        if (c->flags & BASH_CMD_DERIVED)
            continue; /* run by a wrapper: its exact rule covers it */
        if (c->flags & (BASH_CMD_SUBST | BASH_CMD_FUNCTION)) {
            none(o, "the command runs a command substitution or defines a function");
            goto out;
        }
        if (!c->argc) {
            if (c->nassign) {
                none(o, "the command sets a variable on its own");
                goto out;
            }
            continue; /* a bare redirection needs no rule */
        }
        for (size_t k = 0; k < c->argc; k++)
            if (!word_is_literal(c->argv[k], c->argv_flags[k])) {
                none(o, "a word of the command changes at run time ($VAR, a glob, ~, *)");
                goto out;
            }
        for (size_t k = 0; k < c->nassign; k++)
            if (strpbrk(c->assign[k], "$`*")) {
                none(o, "an assignment of the command changes at run time");
                goto out;
            }
        bool wraps = false;
        for (size_t k = 0; k < n; k++)
            wraps |= bash_cmds_at(pc, k)->parent == (long)i;
        char *text = bash_cmd_text(c);
        risk_verdict risk = risk_classify_bash(text);
        size_t words = wraps || c->nassign || risk.level >= RISK_CONFIRM ? 0 : prefix_words(c);
        if (words && changes_what_runs(c, words))
            words = 0;
        loom_str rule = LOOM_STR_INIT;
        if (words) {
            str_puts(&rule, "Bash(");
            for (size_t k = 0; k < words; k++)
                str_printf(&rule, "%s%s", k ? " " : "", c->argv[k]);
            str_puts(&rule, ":*)");
        } else {
            str_printf(&rule, "Bash(%s)", text);
        }
        free(text);
        add_rule(o, str_steal(&rule));
    }
    if (!o->n_rules)
        none(o, "the command runs nothing a rule could name");
out:
    bash_cmds_free(pc);
}

/* The host of an http(s) URL as the rule engine reads it, for a domain
 * rule; NULL unless it is a plain DNS name or address (no IPv6 literal:
 * "domain:[::1]" is not a rule anyone should be offered). The proof in
 * prove() has the rule engine's own reading the last word. */
static char *web_host(const char *url)
{
    char *host = rule_url_host(url);
    for (char *p = host; p && *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.')) {
            free(host);
            return NULL;
        }
    return host;
}

static bool is_edit(const char *tool)
{
    return !strcmp(tool, "Write") || !strcmp(tool, "Edit") || !strcmp(tool, "MultiEdit") ||
           !strcmp(tool, "NotebookEdit");
}

static bool inside(const char *path, const char *cwd)
{
    if (!path || !cwd)
        return false;
    char *real = perm_resolve_path(path, cwd);
    char *root = perm_resolve_path(cwd, cwd);
    size_t n = root ? strlen(root) : 0;
    bool in = real && root && n && !strncmp(real, root, n) &&
              (real[n] == '/' || real[n] == '\0' || (n == 1 && root[0] == '/'));
    free(real);
    free(root);
    return in;
}

/* The offered rules, alone in a rule set, must parse and allow the call:
 * an offer the engine would read differently is no offer. */
static void prove(const char *tool, const json_t *input, const char *cwd, always_offer *o)
{
    perm_rules *rs = perm_rules_new();
    loom_error err;
    for (size_t i = 0; i < o->n_rules; i++)
        if (perm_rules_add(rs, PERM_ALLOW, o->rules[i], RULE_SRC_LOCAL, &err) != 0) {
            perm_rules_free(rs);
            none(o, "no permission rule can express this call");
            return;
        }
    rule_match m = perm_rules_check(rs, tool, input, cwd);
    perm_rules_free(rs);
    if (m.verdict != PERM_ALLOW)
        none(o, "no permission rule can express this call");
}

void always_offer_derive(const char *tool, const json_t *input, const char *cwd,
                         perm_mode mode, const char *row, always_offer *out)
{
    memset(out, 0, sizeof *out);
    out->kind = ALWAYS_NONE;
    /* Asked because someone wants a person every time: a settings or hook
     * ask, the tamper guard, the sandbox escape. An allow cannot change it. */
    if (row && strcmp(row, "default.ask") != 0 && strcmp(row, "risk.confirm") != 0 &&
        strcmp(row, "auto.undecided") != 0) {
        none(out, "this call asks every time (a rule, a hook or the tamper guard wants it)");
        return;
    }
    if (!tool || !json_is_object(input)) {
        none(out, "the call has no input to judge");
        return;
    }
    if (!strcmp(tool, "Bash")) {
        const char *cmd = json_string_value(json_object_get(input, "command"));
        if (!cmd || !*cmd) {
            none(out, "the call has no command");
            return;
        }
        derive_bash(cmd, out);
    } else if (is_edit(tool)) {
        const char *path = json_string_value(json_object_get(input, "file_path"));
        if (!path)
            path = json_string_value(json_object_get(input, "notebook_path"));
        if (!inside(path, cwd)) {
            none(out, "the file is outside the workspace");
        } else if (mode != MODE_DEFAULT) {
            none(out, "edits can be accepted for the session only from default mode");
        } else {
            out->kind = ALWAYS_SESSION_EDITS;
            loom_str l = LOOM_STR_INIT;
            str_printf(&l, "accept edits inside %s for this session (not saved)", cwd);
            out->label = str_steal(&l);
        }
        return;
    } else if (!strcmp(tool, "WebFetch")) {
        const char *url = json_string_value(json_object_get(input, "url"));
        char *host = url ? web_host(url) : NULL;
        if (!host) {
            none(out, "the URL's host is not plain enough for a domain rule");
            return;
        }
        loom_str r = LOOM_STR_INIT;
        str_printf(&r, "WebFetch(domain:%s)", host);
        free(host);
        out->kind = ALWAYS_RULES;
        add_rule(out, str_steal(&r));
    } else if (!strncmp(tool, "mcp__", 5)) {
        out->kind = ALWAYS_RULES;
        add_rule(out, xstrdup(tool));
    } else {
        none(out, "\"always\" is offered for Bash, file edits, WebFetch and MCP tools");
        return;
    }
    if (out->kind != ALWAYS_RULES)
        return;
    prove(tool, input, cwd, out);
    if (out->kind != ALWAYS_RULES)
        return;
    loom_str l = LOOM_STR_INIT;
    for (size_t i = 0; i < out->n_rules; i++)
        str_printf(&l, "%s%s", i ? ", " : "", out->rules[i]);
    out->label = str_steal(&l);
}

void always_offer_clear(always_offer *o)
{
    if (!o)
        return;
    none(o, "");
}

json_t *always_offer_json(const always_offer *o)
{
    if (!o)
        return json_null();
    if (o->kind == ALWAYS_NONE)
        return json_pack("{s:s,s:s}", "kind", "none", "why_not", o->why_not);
    json_t *rules = json_array();
    for (size_t i = 0; i < o->n_rules; i++)
        json_array_append_new(rules, json_string(o->rules[i]));
    return json_pack("{s:s,s:s,s:o,s:s?}", "kind",
                     o->kind == ALWAYS_RULES ? "rules" : "session_edits", "label",
                     o->label ? o->label : "", "rules", rules, "saved_to",
                     o->kind == ALWAYS_RULES ? SAVED_TO : NULL);
}

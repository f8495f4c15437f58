/* rule_internal.h — what the files of the rule engine share and nobody else
 * sees: the parsed form of a rule, the path forms a file call is matched in,
 * and the state of one Bash check.
 *
 *   rule.c        parse + match of one rule (tools, paths, domains, MCP)
 *   rule_bash.c   how Bash rules meet a parsed command (wrappers, options,
 *                 could-be), and the check of one command against a list
 *   rule_files.c  which files a Bash command reads and writes, against the
 *                 path rules of the list
 *   rules.c       rule sets: adding, precedence, the answer for one call
 *
 * Only policy/rule*.c include this header. Immutable data after parsing;
 * any thread. */
#ifndef LOOM_POLICY_RULE_INTERNAL_H
#define LOOM_POLICY_RULE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "policy/rule.h"
#include "policy/rules.h"
#include "shell/bash_parse.h"

/* Directories a compound command may have cd'd into that relative
 * redirections are checked against; past this they count as unknown. */
#define CD_MAX_DIRS 16

typedef enum { RK_TOOL, RK_BASH, RK_PATH, RK_DOMAIN, RK_MCP_SERVER, RK_GENERIC, RK_NAME_GLOB } rule_kind;
typedef enum { BM_EXACT, BM_PREFIX, BM_GLOB } bash_mode;
typedef enum { FAM_READ, FAM_EDIT, FAM_SELF } path_family;
/* AN_ROOT is "/x": the caller's root (a hook's project), else "/". */
typedef enum { AN_ABS, AN_ROOT, AN_HOME, AN_CWD } anchor;

struct perm_rule {
    /* How the rule reads: a deny or ask rule generously, an allow perm_rule
     * strictly. rule_parse gives PERM_DENY; a rule set sets its list's. */
    perm_verdict verdict;
    rule_source source;
    size_t order;
    char *text;
    char *tool;          /* as written: "Bash", "Edit", "mcp__srv", … */
    rule_kind kind;
    /* RK_BASH */
    bash_mode bmode;
    char **words;
    size_t nwords;
    char *glob;
    /* RK_PATH */
    path_family fam;
    anchor anc;
    char *pattern;       /* relative to the anchor, no leading '/' */
    bool anywhere;       /* no '/' in the pattern: any depth below the anchor */
    /* RK_DOMAIN */
    char *domain;
    bool sub_only;       /* "*.example.com": subdomains, not the domain */
    /* RK_GENERIC */
    char *spec;
};

/* ---- rule.c ------------------------------------------------------------- */

extern const char *const RULE_READ_TOOLS[];
extern const char *const RULE_EDIT_TOOLS[];

/* -LOOM_ERR_CONFIG with `permission rule "text": why` in err. */
int rule_bad(loom_error *err, const char *text, const char *why);
bool rule_in_set(const char *const *set, const char *s);
path_family rule_family_of(const char *tool);
const char *rule_home_dir(void);
/* The symlinks of an absolute path followed (rule.h: perm_resolve_path
 * without the folding); NULL on a loop. Caller frees. */
char *rule_resolve_physical(const char *abs);
bool rule_has_glob(const char *s, size_t n);

/* The rule's pattern as an absolute path, as written (folded) and with the
 * literal directories before the first wildcard resolved. false when its
 * anchor (home) is unknown. Both freed by the caller. */
bool rule_patterns(const perm_rule *r, const char *cwd, const char *root, char **lexical,
                   char **resolved);

/* The forms a file path takes: as the tools fold it, that resolved through
 * symlinks, and as the kernel resolves it unfolded (".." after a symlink).
 * The resolved forms are NULL when a symlink loop hides the answer. */
typedef struct rule_path_forms {
    char *lexical, *resolved, *physical;
} rule_path_forms;

void rule_path_forms_make(rule_path_forms *f, const char *path, const char *cwd);
void rule_path_forms_free(rule_path_forms *f);
/* strict (allow): every way the path resolves must fall under the rule as
 * resolved. Otherwise (deny, ask): any form under any form of the rule. */
bool rule_patterns_match(const char *lx, const char *rs, const rule_path_forms *f, bool strict);
bool rule_path_matches(const perm_rule *r, const rule_path_forms *f, const char *cwd, const char *root,
                       bool strict);

/* The path argument of a file tool's call; Glob/Grep/LS default to cwd. */
const char *rule_tool_path(const char *tool, const json_t *input, const char *cwd);
bool rule_is_path_tool(const char *tool);
/* Does r match a call of a tool that is not a Bash command? pf: the
 * call's path forms (NULL: no path), host: its URL's host (NULL: none). */
bool rule_call_matches(const perm_rule *r, const char *tool, const json_t *input, const char *cwd,
                       const char *root, const rule_path_forms *pf, const char *host);

/* ---- rules.c ------------------------------------------------------------ */

/* Of two matching rules, the one that names the answer: the higher source,
 * between equals the one added first. Either may be NULL. */
const perm_rule *rule_better(const perm_rule *a, const perm_rule *b);
void rule_set_match(rule_match *m, perm_verdict v, const perm_rule *r);

/* ---- rule_bash.c -------------------------------------------------------- */

/* A command's words in one spelling, and joined by spaces. */
typedef struct cmd_form {
    const char **w;
    size_t n;
    char *joined;
} cmd_form;

void rule_form_make(cmd_form *f, const bash_cmd *c, bool with_assign, bool basename0);
void rule_form_free(cmd_form *f);
/* Bash(spec) into r's Bash fields; text names the rule in errors. */
int rule_bash_parse_spec(perm_rule *r, const char *spec, const char *text, loom_error *err);
/* What the rules v[0..n) say about one Bash command (perm_rules_check's
 * answer for a call of Bash); root anchors "/x" path rules (NULL: "/"). */
void rule_bash_check(const perm_rule *const *v, size_t n, const char *command, const char *cwd,
                     const char *root, perm_check_detail *out);

/* ---- rule_files.c ------------------------------------------------------- */

/* Where relative redirections of a compound command may land: the session
 * directory and every literal directory a `cd` went to before them. */
typedef struct dirset {
    char *d[CD_MAX_DIRS];
    size_t n;
    bool unknown;   /* a cd to somewhere not known in advance */
} dirset;

typedef struct bash_state {
    const perm_rule *const *v;     /* the rules, n of them */
    size_t n;
    const char *cwd, *root;
    const perm_rule *deny, *ask;
    bool has_path_rules[2];   /* deny/ask path rules exist for READ / EDIT */
    char blocked[256];        /* why a file the command writes stops an allow */
    char outside[256];        /* a file it writes outside the workspace */
    char *cwd_real;           /* the workspace, resolved (NULL: unknown) */
    char deny_why[300], ask_why[300]; /* how the command could be the rule's */
    /* Each path rule's patterns, resolved once per check (index = rule). */
    signed char *pat_state;   /* 0 not yet, 1 ready, -1 unknown anchor */
    char **pat_lx, **pat_rs;
} bash_state;

/* A deny or ask rule of the family (READ or EDIT) that file access meets. */
bool rule_in_family(const perm_rule *r, path_family fam);
/* The files simple command c reads and writes, against the rules. */
void rule_files_check_cmd(bash_state *st, const dirset *ds, const bash_cmd *c);
/* Follows a cd/pushd of c in ds. */
void rule_files_track_cd(dirset *ds, const bash_cmd *c);
void rule_files_state_free(bash_state *st);

#endif

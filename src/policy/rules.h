/* rules.h — rule sets: the allow, ask and deny lists of the settings files
 * and of --allowedTools / --disallowedTools, and what a set of them says
 * about one tool call. Each rule is read by the one rule engine (rule.h).
 *
 * Rule forms (docs/permissions-rules.md has the full reference):
 *   Read                      the whole tool
 *   Bash(git status)          exactly that command
 *   Bash(npm run test:*)      commands whose words start with "npm run test"
 *   Bash(git * main)          '*' matches any run of characters
 *   Edit(src/<glob>)  Read(./secrets/<glob>)  Write(/abs/<glob>)  Read(~/x)
 *                             gitignore-style globs (*, **, ?, [set]) over
 *                             the resolved path
 *   WebFetch(domain:example.com)   that host and its subdomains
 *   mcp__server  mcp__server__*  mcp__server__tool
 *
 * Precedence is by verdict, never by source: a matching deny rule wins over
 * any ask or allow rule, an ask over any allow. The source only names the
 * deciding rule in the answer.
 *
 * A Bash command is checked part by part (bash_parse.h): denied if any
 * simple command is denied, else ask if any is ask, allowed only when every
 * part is allowed and the parse is certain. Otherwise the answer is
 * PERM_NONE ("no rule allows all of it"), and the caller falls back to the
 * mode's default — normally asking. Redirections count as file access:
 * `> path` is checked against Edit/Write deny and ask rules, `< path`
 * against Read deny and ask rules, and a command that writes outside the
 * session directory is not covered by a Bash(...) allow rule.
 *
 * Deny and ask rules fail closed: they are also matched with known
 * programs' global options dropped (program_options.h), against whatever
 * an expansion or an appended argument could make of the command, and —
 * when the parse is uncertain — as if the command could be any of them.
 * The deciding rule's text in match.rule is then followed by the reason in
 * parentheses ("Bash(git push:*) (git $x could be it: …)").
 */
#ifndef LOOM_POLICY_RULES_H
#define LOOM_POLICY_RULES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "policy/perm_types.h"
#include "policy/rule.h"
#include "shell/bash_parse.h"

typedef struct perm_rules perm_rules;

/* An empty rule set; never NULL. Free with perm_rules_free. */
perm_rules *perm_rules_new(void);
void perm_rules_free(perm_rules *r);

/* Adds one rule with the verdict of the list it came from (allow, ask or
 * deny; PERM_NONE is rejected). A malformed rule is not added: returns a
 * negative code and err says which rule and what is wrong with it. */
int perm_rules_add(perm_rules *r, perm_verdict verdict, const char *rule_text,
                   rule_source source, loom_error *err);
size_t perm_rules_count(const perm_rules *r);

/* What the rules say about a call of tool_name with input (the tool's JSON
 * arguments; may be NULL) in the session directory cwd (NULL: the process
 * directory).
 *   verdict DENY / ASK: match.rule is the deciding rule — among several,
 *     the one from the highest source (cli > local > project > user).
 *   verdict ALLOW: match.rule names the allow rule(s) that covered the
 *     call, joined by " + " when a compound command needed several.
 *   verdict NONE: nothing allows all of the call. match.rule is empty, or
 *     — for a Bash command only partly covered — the allow rules that
 *     covered some parts (see perm_rules_check_detail for which part not).
 * Pure: reads the filesystem (realpath) but changes nothing. */
rule_match perm_rules_check(const perm_rules *r, const char *tool_name, const json_t *input,
                            const char *cwd);

typedef struct perm_check_detail {
    rule_match match;       /* as perm_rules_check returns */
    bool partial;           /* NONE although some parts were allowed */
    bool uncertain;         /* the Bash command could not be parsed for sure */
    char uncovered[256];    /* the first part no allow rule covers, or why
                               the call could not be allowed ("" if none) */
} perm_check_detail;

void perm_rules_check_detail(const perm_rules *r, const char *tool_name, const json_t *input,
                             const char *cwd, perm_check_detail *out);

/* Files wrappers write through their own options, which the risk
 * classifier's write-target list does not cover: strace/ltrace -o FILE,
 * GNU time -o FILE, script's log file (and -O/-I/-T/-B), valgrind
 * --log-file=FILE. fn gets each path as written. */
void perm_wrapper_write_targets(const bash_cmd *c, void (*fn)(void *ctx, const char *path),
                                void *ctx);

#endif

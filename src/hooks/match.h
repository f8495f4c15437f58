/* match.h — deciding whether a hook applies to one event: the group's
 * `matcher` (tested against the event's match field) and the `if` condition
 * (tested against the whole payload).
 *
 * Both are compiled once, when settings are loaded, so a bad pattern is an
 * error at start-up naming the entry, not a silent miss at run time. Compiled
 * objects are immutable afterwards and safe to test from many threads.
 *
 * Matcher (Claude Code's rules): absent, "" or "*" matches everything; a
 * string of only letters, digits, '_' and '|' is a list of exact names
 * ("Edit|Write" matches Edit and Write, not NotebookEdit); anything else is a
 * regular expression searched for anywhere in the value, as JavaScript's
 * RegExp.test does ("mcp__.*", "Notebook.*"), compiled with PCRE2.
 *
 * `if` condition (docs/hooks.md "Conditions"): a string, or an array of
 * strings of which any may hold, each one of
 *   Tool / Tool(pattern)      a permission rule, read by the one rule
 *                             engine (policy/rule.h): it holds exactly when
 *                             the same text in permissions.deny would deny
 *                             the call (wrappers, global options, "could
 *                             be", path rules meeting a Bash command's
 *                             files). Two things only a hook has: "/x" is
 *                             relative to the project directory, and a bare
 *                             name may hold '*' wildcards (Notebook*).
 *                             hooks/ includes policy/rule.h; policy/
 *                             includes nothing of hooks/, so no cycle.
 *   path =~ regex             path !~ regex   (also: path matches 'regex')
 *   path == value             path != value   (value: JSON literal or a word)
 * where path is dotted (tool_input.command, edits.0.old_string) or a JSON
 * pointer (/tool_input/command).
 */
#ifndef LOOM_HOOKS_MATCH_H
#define LOOM_HOOKS_MATCH_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

typedef struct hook_matcher hook_matcher;
typedef struct hook_cond hook_cond;

/* text may be NULL (match all). On success *out is owned by the caller
 * (hook_matcher_free); on a bad regex returns -LOOM_ERR_CONFIG with err
 * saying what PCRE2 objected to and where. */
int hook_matcher_compile(const char *text, hook_matcher **out, loom_error *err);
/* value NULL is treated as "" (the payload lacked the field). */
bool hook_matcher_test(const hook_matcher *m, const char *value);
/* True when the matcher accepts every value. */
bool hook_matcher_is_all(const hook_matcher *m);
void hook_matcher_free(hook_matcher *m);

/* v is the `if` member: a string or an array of strings. On success *out is
 * owned by the caller (hook_cond_free). -LOOM_ERR_CONFIG with a message
 * quoting the condition when it cannot be parsed. */
int hook_cond_parse(const json_t *v, hook_cond **out, loom_error *err);
/* project_dir anchors rule paths written "/x" (NULL: the payload's cwd). */
bool hook_cond_eval(const hook_cond *c, const json_t *payload, const char *project_dir);
void hook_cond_free(hook_cond *c);

#endif

/* rule.h — one permission rule in Claude Code's syntax, parsed once, and
 * whether a tool call is one it names. The one rule engine: settings
 * permissions, --allowedTools / --disallowedTools (both through rules.h's
 * rule sets) and hook `if` conditions (hooks/match) all read rule texts
 * here, on top of shell/ (the Bash parser, program options) and base/glob.
 *
 * Rule forms (docs/permissions-rules.md has the full reference):
 *   Read  Bash  mcp__server  mcp__server__*  mcp__server__tool
 *   Bash(git status)  Bash(npm run test:*)  Bash(git * main)
 *   Edit(src/<glob>)  Read(./secrets/<glob>)  Write(//abs/<glob>)  Read(~/x)
 *   WebFetch(domain:example.com)  OtherTool('*'-pattern over its strings)
 *
 * A rule on its own reads the way a deny rule does (rules.h says how
 * generously: through wrappers, global options, every spelling of the
 * path, and whatever an expansion could make of a command). A Bash call
 * meets path rules too: Edit(.env) names `echo x > .env`.
 *
 * Immutable after parsing; rule_matches may run on many threads at once. */
#ifndef LOOM_POLICY_RULE_H
#define LOOM_POLICY_RULE_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

typedef struct perm_rule perm_rule;

/* Hook conditions also take a bare tool name with '*' wildcards
 * (Notebook*, mcp__*), which is not a permission rule. */
enum { RULE_PARSE_NAME_GLOB = 1u << 0 };

/* Parses one rule text (surrounding blanks ignored). NULL with err
 * (LOOM_ERR_CONFIG) saying which rule and what is wrong with it. Free with
 * rule_free. */
perm_rule *rule_parse(const char *text, unsigned flags, loom_error *err);
void rule_free(perm_rule *r);

/* Is the call of tool with input (its JSON arguments, may be NULL) in
 * directory cwd (NULL: the process directory) one that r names? root is
 * what a path rule written "/x" is relative to (a hook's project
 * directory; NULL: the filesystem root, as settings rules read it).
 * Reads the filesystem (symlinks) but changes nothing. */
bool rule_matches(const perm_rule *r, const char *tool, const json_t *input, const char *cwd,
                  const char *root);

/* The path a file operation on `path` really reaches, for rules and the
 * tamper guard: made absolute against cwd, "." and ".." folded the way the
 * file tools fold them, then every symlink that exists followed (also a
 * dangling one: writing through it creates its target). Components that do
 * not exist yet are kept as written. NULL when a symlink loop or an
 * over-long path makes the answer unknowable. Caller frees. */
char *perm_resolve_path(const char *path, const char *cwd);

/* The host of an http(s)-style URL as a domain rule reads it, lowercased
 * ("[::1]" kept in its brackets); NULL when the URL is not plain enough to
 * be sure which host a client would contact. Caller frees. */
char *rule_url_host(const char *url);

#endif

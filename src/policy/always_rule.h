/* always_rule.h — what answering "always" to an approval grants, decided
 * before the person is asked so the prompt can show it word for word.
 *
 * The grant is the narrowest one that covers the call (docs/permissions.md
 * §7.1):
 *   Bash      one allow rule per simple command of the line, saved to
 *             .loom/settings.local.json. The exact command (`Bash(rm -rf
 *             build)`) for everything, except a known harmless subcommand
 *             of a build or version-control tool, which gets a prefix
 *             (`Bash(npm run test:*)`, `Bash(git status:*)`, `Bash(make
 *             test:*)`). Wrappers (sudo, env, xargs, sh -c, timeout, …),
 *             commands the risk classifier wants confirmed, leading
 *             assignments: always the exact command. Nothing is offered
 *             when the parse is uncertain, a word expands at run time
 *             ($VAR, globs, $( )), or the rules could not express it.
 *   edits     (Write, Edit, MultiEdit, NotebookEdit) in default mode, of a
 *             file inside the workspace: acceptEdits for this session —
 *             nothing saved, nothing outside the workspace, and a risky
 *             edit (a shell start-up file) still asks.
 *   WebFetch  `WebFetch(domain:HOST)`.
 *   MCP tools the tool's name.
 *   otherwise nothing: "always" is not offered.
 * Only a question the mode or the risk classifier raised gets an offer: a
 * settings ask rule, a hook's ask or the tamper guard asks every time by
 * design, and an allow rule could not change that.
 *
 * Every rule offered is checked before it is offered: it parses, and a
 * rule set holding only the offered rules allows the very call.
 *
 * Threading: pure functions; reads the filesystem (path resolution). */
#ifndef LOOM_POLICY_ALWAYS_RULE_H
#define LOOM_POLICY_ALWAYS_RULE_H

#include <jansson.h>
#include <stddef.h>

#include "policy/perm_types.h"

typedef enum {
    ALWAYS_NONE,          /* "always" is not offered */
    ALWAYS_RULES,         /* allow rules saved to .loom/settings.local.json */
    ALWAYS_SESSION_EDITS, /* acceptEdits for the rest of this session */
} always_kind;

typedef struct always_offer {
    always_kind kind;
    char **rules;         /* ALWAYS_RULES: the rule texts, in command order */
    size_t n_rules;
    char *label;          /* what the prompt shows; NULL for ALWAYS_NONE */
    char why_not[200];    /* ALWAYS_NONE: why nothing is offered */
} always_offer;

/* Derives the offer for a call of tool with input, in the session
 * directory cwd, under mode, asked because of decision row `row` (the
 * perm_decision row id; NULL: treated as the mode's own question). out is
 * overwritten; release it with always_offer_clear. */
void always_offer_derive(const char *tool, const json_t *input, const char *cwd,
                         perm_mode mode, const char *row, always_offer *out);
void always_offer_clear(always_offer *o);

/* For approval.requested and the approval's context: {kind: "rules" |
 * "session_edits", label, rules: [...], saved_to: ".loom/settings.local.json"
 * | null}, or {kind: "none", why_not} when nothing is offered. New
 * reference. */
json_t *always_offer_json(const always_offer *o);

#endif

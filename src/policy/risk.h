/* risk.h — the rule-based risk classifier for tool calls (seed 000 §6.7,
 * §6.8; no model behind it).
 *
 * Advisory, like the seed's speculative classifier: it labels a call, it
 * never grants one. FORBIDDEN means "never, in any mode"; CONFIRM means a
 * person should confirm; SAFE is given only to commands that plainly read
 * and nothing else; everything else is UNKNOWN. rule_id names the rule
 * that fired (docs/permissions-rules.md lists them all), and reason says
 * why — with the safer form to use where there is one ("autofix").
 *
 * A compound command is as risky as its riskiest part; it is SAFE only
 * when every part is and the parse is certain.
 */
#ifndef LOOM_POLICY_RISK_H
#define LOOM_POLICY_RISK_H

#include <jansson.h>

#include "policy/bash_parse.h"
#include "policy/perm_types.h"

risk_verdict risk_classify_bash(const char *command);

/* Bash: the above on input.command. Read, Glob, Grep, LS: SAFE. Write,
 * Edit, MultiEdit, NotebookEdit: CONFIRM when the file is a shell start-up
 * file (~/.bashrc …), else UNKNOWN. Anything else: UNKNOWN. */
risk_verdict risk_classify_call(const char *tool, const json_t *input);

/* Calls fn for each path the simple command writes to, as far as these
 * rules know: output redirections (not /dev/null and friends), tee
 * operands, the destination of cp/mv/install/ln/rsync (and DEST/name of
 * each source, in case DEST is a directory), dd of=, files edited in place
 * by sed -i / perl -i, truncate operands. Paths are as written. */
void risk_write_targets(const bash_cmd *c, void (*fn)(void *ctx, const char *path), void *ctx);

#endif

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

#include "shell/bash_parse.h"
#include "policy/perm_types.h"

risk_verdict risk_classify_bash(const char *command);

/* Bash: the above on input.command. Read, Glob, Grep, LS: SAFE. Write,
 * Edit, MultiEdit, NotebookEdit: CONFIRM when the file is a shell start-up
 * file (~/.bashrc …), else UNKNOWN. Anything else: UNKNOWN. */
risk_verdict risk_classify_call(const char *tool, const json_t *input);

/* Calls fn for each path the simple command writes, deletes or changes
 * the metadata of, as far as these rules know the program (risk_writes.c;
 * docs/permissions-rules.md has the list): output redirections (not
 * /dev/null and friends); rm, unlink, rmdir, shred, truncate, touch,
 * mkdir, mktemp, chmod/chown/chgrp operands; tee operands; sort -o;
 * uniq's second operand; dd of=; the destination of cp/mv/install/ln/rsync
 * (and DEST/name of each source; -t DIR; mv's sources); sed -i / perl -i
 * files and sed w/W files; curl -o/-O/-D/-c, wget -O/-o and the names
 * they take from URLs; patch's file, -o, -r; tar -c -f FILE and tar -x
 * members under -C; unzip; gzip & co.; find -fprint*, -fls and the files
 * -delete or a changing -exec reach; git checkout/restore -- paths.
 * Words with unquoted braces are brace-expanded first ({.env,} → .env).
 * Where the program writes files the words do not name (tar -x without
 * members, patch without a file, find -delete, git clean -f), a glob
 * pseudo-target DIR + "/" + "*" stands for "any file there". Paths are as
 * written otherwise (globs and $vars unexpanded). */
void risk_write_targets(const bash_cmd *c, void (*fn)(void *ctx, const char *path), void *ctx);

/* For a program these rules do not know the writes of — not read-only,
 * not listed above, or listed but given something that hides its writes
 * (sed -f / sed e, curl -K, tar --to-command): calls fn for every word
 * that could name a file it writes: each operand, the value in --opt=VALUE
 * and -oVALUE, and quoted literals inside a word (python -c "open('.env',
 * 'w')"). Nothing for known programs. Brace-expanded like the above. */
void risk_unknown_write_candidates(const bash_cmd *c, void (*fn)(void *ctx, const char *path),
                                   void *ctx);

/* Could the write target (an absolute path that may hold the shell's
 * wildcards * ? [..], as in rm /p/.en*) name a file the path pattern
 * (absolute, gitignore-style with **) matches? The shell's rules for the
 * target (a leading '.' only by a literal '.'); where both hold wildcards
 * in one segment, an over-estimate. For checking glob targets against
 * deny rules: a yes means the rule applies. */
bool risk_target_could_match(const char *target, const char *pattern);

/* True for the plainly read-only programs (cat, grep, ls, find without
 * actions …), judged on the argv alone (redirections not counted). */
bool risk_cmd_reads_only(const bash_cmd *c);

#endif

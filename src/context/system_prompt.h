/* system_prompt.h — the system prompt, in two parts split at a boundary.
 *
 * The static part (identity, working rules, tool usage) is identical for
 * every request of every session, so providers can cache it; the dynamic
 * part (OS, shell, cwd, date, git summary, AGENTS.md) follows it and may
 * change. Seed 001 §7.1 / §9: whatever changes goes after what does not. */
#ifndef LOOM_CONTEXT_SYSTEM_PROMPT_H
#define LOOM_CONTEXT_SYSTEM_PROMPT_H

/* The built-in static part. Not to be freed. */
const char *system_prompt_static(void);
/* The dynamic part for a working directory; caller frees. Reads AGENTS.md
 * from ~/.loom/AGENTS.md and from cwd (and CLAUDE.md when there is no
 * AGENTS.md, so users' existing files work); the git branch comes from
 * .git/HEAD. */
char *system_prompt_dynamic(const char *cwd);

#endif

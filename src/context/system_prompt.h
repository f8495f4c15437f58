/* system_prompt.h — the system prompt, in two parts split at a boundary.
 *
 * The static part (identity, working rules, tool usage, and the output
 * style: docs/output-styles.md) is identical for every request of every
 * session with the same style, so providers can cache it; the dynamic
 * part (OS, shell, cwd, date, git summary, AGENTS.md) follows it and may
 * change. Seed 001 §7.1 / §9: whatever changes goes after what does not. */
#ifndef LOOM_CONTEXT_SYSTEM_PROMPT_H
#define LOOM_CONTEXT_SYSTEM_PROMPT_H

#include <stdbool.h>

#include "context/memory.h"

/* The built-in static part, with the default style. Not to be freed. */
const char *system_prompt_static(void);
/* The heading of an output style's section in the static part. */
#define SYSTEM_PROMPT_STYLE_HEADING "# Output style"
/* The static part with an output style's section (ext/styles/styles.h):
 * style_body NULL is the default, byte for byte system_prompt_static().
 * Otherwise the default's brevity goes, the coding rules stay only when
 * keep_coding, and the body follows under SYSTEM_PROMPT_STYLE_HEADING.
 * Caller frees. */
char *system_prompt_static_styled(const char *style_body, bool keep_coding);
/* The dynamic part for a working directory; caller frees. The environment
 * (cwd, OS, shell, date, git branch from .git/HEAD), then the instructions
 * and memory block of memory_render (context/memory.h; claude and deny as
 * there). */
char *system_prompt_dynamic(const char *cwd, bool trusted, bool claude, const secrets_deny *deny);
/* The same, also filling rep (may be NULL) with the instruction and memory
 * files loaded, for the InstructionsLoaded hook; release it with
 * memory_report_free. */
char *system_prompt_dynamic_report(const char *cwd, bool trusted, bool claude,
                                   const secrets_deny *deny, memory_report *rep);

#endif

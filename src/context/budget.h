/* budget.h — the user's token budget written into a prompt (seed 000:
 * token_budget, e.g. "+500k"; Claude Code's "+500k" shorthand). */
#ifndef LOOM_CONTEXT_BUDGET_H
#define LOOM_CONTEXT_BUDGET_H

#include <stdint.h>

/* The budget a prompt asks for: a word "+N", "+Nk" or "+Nm" (N may have a
 * decimal point; k = 1,000, m = 1,000,000) standing alone, at the start or
 * the end of the prompt; sentence punctuation after it is allowed ("+500k,
 * fix the tests", "fix the tests +500k."). 0 when there is none. */
int64_t budget_parse_prompt(const char *prompt);
/* "500k", "1.5m", "20000" → tokens; -1 when s is not one of those. */
int64_t budget_parse_amount(const char *s);

#endif

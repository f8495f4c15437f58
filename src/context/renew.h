/* renew.h — rebuilding the context from its decision premises (seed 000
 * dimension ①, the 7-step renew protocol).
 *
 * The loop snapshots C_working to M_f (working_save), then calls
 * renew_compress for step 5: every conversation item h of the history is
 * scored
 *     score(h) = K(h) · rel(h, goal) · e^(−λ·age(h))
 * where K = ∞ for the incompressible core — the goal, every message the user
 * wrote, and errors of the last RENEW_RECENT_ERROR_TURNS turns — and 1
 * otherwise (×1.5 for a tool result, seed 000 §12, ×1.2 for the model's own
 * stated decisions); rel is 0.1 + 0.9 × the share of the goal's words the
 * item mentions; age is in assistant turns. Items are kept by score until
 * the budget is spent and written out oldest first, each clipped. The loop
 * then appends the text as a summary record, reloads C_memory and resumes
 * with the original goal, which C_working carries at the tail of every
 * request. No model is called: renew is the hard floor that must work even
 * when the model cannot be asked. */
#ifndef LOOM_CONTEXT_RENEW_H
#define LOOM_CONTEXT_RENEW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define RENEW_DEFAULT_LAMBDA 0.1
#define RENEW_RECENT_ERROR_TURNS 10

typedef struct renew_stats {
    size_t items;      /* conversation items scored */
    size_t kept;       /* of which kept */
    size_t core;       /* kept because K = ∞ */
    int64_t tokens_before, tokens_after;
} renew_stats;

/* The compressed history for a renew at turn `turn`; caller frees. */
char *renew_compress(json_t *const *view, size_t n, const char *goal, int64_t budget_tokens,
                     double lambda, int turn, renew_stats *st);

#endif

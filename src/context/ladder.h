/* ladder.h — the compaction ladder's local steps and the view they edit.
 *
 * seed 000 dimension ① / seed 001 §8: at the start of each turn the loop
 * checks the pressure ρ and applies at most one step, chosen by the highest
 * threshold crossed (A < B < C < D, default 0.50 / 0.60 / 0.70 / 0.80 of
 * the window; ρ ≥ 1.0 forces renew):
 *   A snip      one oversized tool result or message → its head and tail,
 *               with a note saying how much was cut;
 *   B micro     older tool results cleared by call id (the call, its id and
 *               the result's place stay; the newest K results stay whole);
 *   C collapse  an inactive stretch of older turns folded into a short
 *               summary written locally (what was called, what came back,
 *               the user's words verbatim);
 *   D compact   a model-written summary (context/compact.h).
 * A step that would free nothing is skipped for the next lower one.
 *
 * A–C never touch what was recorded: each adds a "context-edit" record to
 * the session, and the model sees the active chain through those edits
 * (ladder_view). Edits are sticky — a result once cleared stays cleared — so
 * the request prefix stays byte-stable after the step, and a resumed
 * session sees the same context as before. */
#ifndef LOOM_CONTEXT_LADDER_H
#define LOOM_CONTEXT_LADDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "session/transcript.h"

#define RECORD_CONTEXT_EDIT "context-edit"

typedef struct ladder_config {
    double snip;              /* A: ρ from which single oversized items are snipped */
    double micro;             /* B */
    double collapse;          /* C */
    double compact;           /* D */
    int keep_results;         /* B keeps the newest K tool results whole */
    int keep_turns;           /* C never folds the newest K assistant turns */
    double snip_item_share;   /* A: an item over this share of the window is oversized */
} ladder_config;

typedef enum {
    LADDER_NONE,
    LADDER_SNIP,
    LADDER_MICRO,
    LADDER_COLLAPSE,
    LADDER_COMPACT,
    LADDER_RENEW,
} ladder_step;

/* 0.50 / 0.60 / 0.70 / 0.80, K = 3 results, 4 turns, 10 % of the window. */
void ladder_config_default(ladder_config *c);
/* Reads {"snip","micro","collapse","compact","keep_results","keep_turns"}
 * over the defaults; -1 with why when a value is out of range or the four
 * thresholds are not strictly increasing in (0, 1). */
int ladder_config_from_json(ladder_config *c, const json_t *obj, char *why, size_t why_len);
const char *ladder_step_name(ladder_step s);
/* The highest step whose threshold rho crosses (LADDER_RENEW at ≥ 1.0). */
ladder_step ladder_step_for(const ladder_config *c, double rho);

/* The edits recorded in a session, applied over its active chain. */
typedef struct ladder_edits {
    json_t *results;    /* callId → replacement output */
    json_t *messages;   /* record id → replacement text */
    json_t *collapses;  /* first record id → {"last": id, "text": …} */
    /* A stamp no other state of any edits has had: set anew by init and by
     * every edit added, so a view kept from before (history_keep.h) can
     * tell it is stale. */
    unsigned long stamp;
} ladder_edits;

void ladder_edits_init(ladder_edits *e);
void ladder_edits_free(ladder_edits *e);
/* Adds what one context-edit record says; other records are ignored. */
void ladder_edits_add(ladder_edits *e, const json_t *rec);
/* Rebuilds the edits from every context-edit record of t. */
void ladder_edits_load(ladder_edits *e, transcript *t);

/* The records the model sees: recs (root first) with the edits applied.
 * *out is a malloc'd array of records; the edited copies are owned by
 * *keep (a JSON array; decref it after use). */
void ladder_view(const ladder_edits *e, json_t *const *recs, size_t n, json_t ***out,
                 size_t *nout, json_t **keep);

/* One local step over the view (window in tokens). Returns a new
 * context-edit record to append (and to pass to ladder_edits_add), or NULL
 * when the step would free nothing. *saved_est gets the estimated tokens
 * it frees. */
json_t *ladder_snip(const ladder_config *c, json_t *const *view, size_t n, int64_t window,
                    int64_t *saved_est);
json_t *ladder_micro(const ladder_config *c, json_t *const *view, size_t n, int64_t *saved_est);
json_t *ladder_collapse(const ladder_config *c, json_t *const *view, size_t n,
                        int64_t *saved_est);

/* Estimated tokens of one conversation record as the model sees it. */
int64_t ladder_record_tokens(const json_t *rec);

#endif

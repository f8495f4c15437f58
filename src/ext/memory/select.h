/* select.h — the lexical memory selector (seed 001 §11.7, without the
 * model): which entries are worth putting in front of the model for this
 * goal.
 *
 * Not vector search. The goal is cut into terms (letters and digits, folded
 * to lower case, 3 bytes or more, common English words left out); an entry
 * scores 2 for each distinct goal term in its name, description or slug
 * and 1 for each other one in its body; a file the goal names (a term with
 * "/" or a dotted extension) that the entry mentions adds 3; recency adds
 * up to 0.5 (0.5 · 30 / (30 + age in days)). An entry is picked only when
 * its term and file part reaches MEMORY_SELECT_MIN: "if you are unsure if
 * a memory will be useful, do not include it" (§11.7) — a recency bonus
 * alone never injects anything. Highest score first; ties: newer first.
 *
 * No state; any thread. */
#ifndef LOOM_EXT_MEMORY_SELECT_H
#define LOOM_EXT_MEMORY_SELECT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ext/memory/entry.h"

#define MEMORY_SELECT_MIN 2.0

typedef struct memory_pick {
    size_t index;     /* into the entries given */
    double score;
    double relevance; /* the term and file part of score */
    int age_days;     /* from the file's mtime */
    json_t *terms;    /* the goal terms and files it matched (array of strings), owned */
} memory_pick;

/* Scores one entry against goal at now_ms (pick->index untouched). */
void memory_score(const memory_entry *e, const char *goal, int64_t now_ms, memory_pick *pick);

/* Picks at most max of the n entries (none whose path is in skip: the
 * ones already surfaced in this session) into out (room for max); returns
 * how many. Free each pick's terms with memory_picks_free. */
size_t memory_select(const memory_entry *v, size_t n, const char *goal, int64_t now_ms,
                     const json_t *skip, size_t max, memory_pick *out);
void memory_picks_free(memory_pick *p, size_t n);

/* "matched: deploy, staging; 3 days old" — for /memory and the recall
 * log. Caller frees. */
char *memory_pick_why(const memory_pick *p);

#endif

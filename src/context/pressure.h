/* pressure.h — token accounting: how full the context window is (ρ).
 *
 * seed 001 §8.2: prefer what the provider reported. After each reply the
 * loop records the input the provider counted for that request (input +
 * cache reads + cache writes) next to Loom's own estimate of the same
 * request. The next request is then reported + (its estimate − that
 * estimate): the provider's exact count plus an estimate of only what was
 * added since (the reply, trailing tool results, the new tail). When the
 * context shrank (a compaction) the difference is meaningless, so the
 * estimate is scaled by the ratio the provider last confirmed instead.
 * With no report at all, the local estimate stands alone. */
#ifndef LOOM_CONTEXT_PRESSURE_H
#define LOOM_CONTEXT_PRESSURE_H

#include <stdbool.h>
#include <stdint.h>

#include "message/message.h"

typedef struct pressure {
    int64_t window;          /* the model's context window in tokens */
    int64_t reported;        /* provider's input count for the last request (0: none) */
    int64_t reported_est;    /* Loom's estimate of that same request */
    int64_t generation;      /* bumped by each compaction: the difference rule no longer holds */
    int64_t reported_gen;
} pressure;

typedef enum {
    PRESSURE_API,        /* reported + estimate of what was added */
    PRESSURE_SCALED,     /* estimate × the last reported/estimated ratio */
    PRESSURE_LOCAL,      /* the local estimate alone */
} pressure_source;

/* Records the provider's count for the request whose local estimate was est. */
void pressure_report(pressure *p, const msg_usage *u, int64_t est);
/* The context changed shape (compaction, renew): differences stop applying. */
void pressure_reset_shape(pressure *p);
/* Tokens of a request whose local estimate is est. */
int64_t pressure_tokens(const pressure *p, int64_t est, pressure_source *src);
/* ρ = tokens / window (0 when the window is unknown). */
double pressure_rho(const pressure *p, int64_t tokens);
const char *pressure_source_name(pressure_source s);

#endif

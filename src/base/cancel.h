/* cancel.h — the atomic cancellation flag every blocking step polls
 * (curl progress callback, process runner, sleeps, the loop top).
 *
 * The flag carries a level. Any nonzero level stops the blocking step in
 * hand (a model stream, a command, a wait); what happens next depends on
 * who set it:
 *   CANCEL_RUN      the user (or an external SIGINT/SIGTERM) ends the run;
 *   CANCEL_ACT      the heartbeat asks the running Act to end gracefully
 *                   (a command gets SIGTERM, then SIGKILL after its grace);
 *   CANCEL_ACT_NOW  the heartbeat's veto: the Act stops at once (SIGKILL).
 * After an Act-level interruption the loop clears the flag and goes on to
 * Observe; a run-level one ends the run. A run cancel always wins. */
#ifndef LOOM_BASE_CANCEL_H
#define LOOM_BASE_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>

typedef atomic_int loom_cancel;

enum { CANCEL_NONE = 0, CANCEL_RUN = 1, CANCEL_ACT = 2, CANCEL_ACT_NOW = 3 };

/* Any level: stop what you are blocked in. */
static inline bool cancel_requested(const loom_cancel *c)
{
    return c && atomic_load_explicit(c, memory_order_relaxed) != 0;
}

static inline int cancel_level(const loom_cancel *c)
{
    return c ? atomic_load_explicit(c, memory_order_relaxed) : CANCEL_NONE;
}

/* The run is to end (not just the Act in hand). */
static inline bool cancel_run_requested(const loom_cancel *c)
{
    return cancel_level(c) == CANCEL_RUN;
}

/* Raises an Act-level interruption; never lowers a level or overrides a
 * run cancel. Async-signal-safe. */
static inline void cancel_interrupt_act(loom_cancel *c, int level)
{
    int cur = atomic_load(c);
    while ((cur == CANCEL_NONE || (cur == CANCEL_ACT && level == CANCEL_ACT_NOW)) &&
           !atomic_compare_exchange_weak(c, &cur, level))
        ;
}

/* Clears an Act-level interruption (the loop, entering Observe). Returns
 * the level cleared, CANCEL_NONE when there was none; a run cancel stays. */
static inline int cancel_clear_act(loom_cancel *c)
{
    int cur = atomic_load(c);
    while (cur >= CANCEL_ACT && !atomic_compare_exchange_weak(c, &cur, CANCEL_NONE))
        ;
    return cur >= CANCEL_ACT ? cur : CANCEL_NONE;
}

#endif

/* cancel.h — the atomic cancellation flag every blocking step polls
 * (curl progress callback, process runner, sleeps, the loop top). */
#ifndef LOOM_BASE_CANCEL_H
#define LOOM_BASE_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>

typedef atomic_int loom_cancel;

static inline bool cancel_requested(const loom_cancel *c)
{
    return c && atomic_load_explicit(c, memory_order_relaxed) != 0;
}

#endif

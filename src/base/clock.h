/* clock.h — wall and monotonic time, and sleeping. */
#ifndef LOOM_BASE_CLOCK_H
#define LOOM_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "base/cancel.h"

int64_t clock_wall_ms(void);        /* Unix epoch milliseconds */
int64_t clock_wall_us(void);        /* Unix epoch microseconds (traces) */
int64_t clock_mono_ns(void);        /* CLOCK_MONOTONIC nanoseconds */
int64_t clock_mono_ms(void);
/* *ts = now on clock (CLOCK_MONOTONIC for a condition variable made with
 * pthread_condattr_setclock, CLOCK_REALTIME for a default one) plus ms
 * milliseconds: the absolute time pthread_cond_timedwait takes. */
void clock_deadline(struct timespec *ts, clockid_t clock, long ms);
/* ISO 8601 UTC with milliseconds, e.g. "2026-11-30T08:28:04.123Z". */
void clock_iso8601(int64_t wall_ms, char out[32]);
/* Sleeps ms milliseconds unless *abort becomes nonzero (polled every 50 ms).
 * Returns 0 when the full time passed, -1 when aborted. abort may be NULL. */
int clock_sleep_ms(int64_t ms, const loom_cancel *abort);

#endif

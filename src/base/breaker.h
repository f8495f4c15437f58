/* breaker.h — a circuit breaker for calls that may keep failing (a helper
 * model that is down, or answers nonsense): after `threshold` failures in
 * a row it opens, and callers take their fallback without making the call;
 * after `cooldown` calls refused that way it lets one trial through
 * (half-open): a success closes it, a failure opens it again. Counted in
 * calls, not time, so a quiet session does not retry in the background and
 * behaviour is the same on a slow machine. Threading: every function may
 * be called from any thread (a mutex inside). */
#ifndef LOOM_BASE_BREAKER_H
#define LOOM_BASE_BREAKER_H

#include <pthread.h>
#include <stdbool.h>

typedef struct breaker {
    pthread_mutex_t mu;
    unsigned threshold;  /* failures in a row that open it (>= 1) */
    unsigned cooldown;   /* refused calls before a trial (>= 1) */
    unsigned failures;   /* in a row */
    unsigned refused;    /* since it opened */
    unsigned trips;      /* how many times it opened */
    bool open;
    bool trial;          /* a half-open trial is out */
} breaker;

void breaker_init(breaker *b, unsigned threshold, unsigned cooldown);
void breaker_destroy(breaker *b);
/* May the call be made now? false: take the fallback (counted towards the
 * cooldown). true while closed, and once per cooldown while open. */
bool breaker_allow(breaker *b);
/* The call's outcome. breaker_failure returns true when this failure
 * opened the breaker. */
void breaker_success(breaker *b);
bool breaker_failure(breaker *b);
bool breaker_is_open(breaker *b);
unsigned breaker_failures(breaker *b);

#endif

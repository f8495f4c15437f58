/* breaker.c — the circuit breaker of breaker.h. Threading: all state under
 * the breaker's mutex. */
#include "base/breaker.h"

void breaker_init(breaker *b, unsigned threshold, unsigned cooldown)
{
    pthread_mutex_init(&b->mu, NULL);
    b->threshold = threshold ? threshold : 1;
    b->cooldown = cooldown ? cooldown : 1;
    b->failures = b->refused = b->trips = 0;
    b->open = b->trial = false;
}

void breaker_destroy(breaker *b)
{
    pthread_mutex_destroy(&b->mu);
}

bool breaker_allow(breaker *b)
{
    pthread_mutex_lock(&b->mu);
    bool ok = true;
    if (b->open) {
        if (!b->trial && b->refused >= b->cooldown) {
            b->trial = true; /* one call goes through to see whether it recovered */
        } else {
            b->refused++;
            ok = false;
        }
    }
    pthread_mutex_unlock(&b->mu);
    return ok;
}

void breaker_success(breaker *b)
{
    pthread_mutex_lock(&b->mu);
    b->failures = 0;
    b->open = b->trial = false;
    b->refused = 0;
    pthread_mutex_unlock(&b->mu);
}

bool breaker_failure(breaker *b)
{
    pthread_mutex_lock(&b->mu);
    bool opened = false;
    b->failures++;
    if (b->open) {
        /* the trial failed: wait a whole cooldown again */
        b->trial = false;
        b->refused = 0;
    } else if (b->failures >= b->threshold) {
        b->open = opened = true;
        b->refused = 0;
        b->trips++;
    }
    pthread_mutex_unlock(&b->mu);
    return opened;
}

bool breaker_is_open(breaker *b)
{
    pthread_mutex_lock(&b->mu);
    bool o = b->open;
    pthread_mutex_unlock(&b->mu);
    return o;
}

unsigned breaker_failures(breaker *b)
{
    pthread_mutex_lock(&b->mu);
    unsigned n = b->failures;
    pthread_mutex_unlock(&b->mu);
    return n;
}

/* error.h — loom_error: a code from the seed's error set plus a human message.
 *
 * Codes describe what the failure means to the system (seed 000 §11,
 * L1996-2013), never the C failure underneath. They are defined, with
 * their fixed numbers and names, in include/loom_protocol.h (the one
 * definition, public because loom.h reports them to callers); this file
 * adds the error value that carries one through the library. Plain data;
 * an error belongs to the thread that fills it.
 */
#ifndef LOOM_BASE_ERROR_H
#define LOOM_BASE_ERROR_H

#include <stdbool.h>

#include "loom_protocol.h" /* the codes themselves, with their fixed numbers */

typedef struct loom_error {
    loom_error_code code;
    bool retryable;
    int http_status;         /* 0 when not an HTTP failure */
    double retry_after_s;    /* from Retry-After, < 0 when absent */
    char message[1024];
} loom_error;

/* Sets code and a printf-style message; returns -(int)code so callers can
 * `return loom_error_set(err, ...)`. err may be NULL. */
int loom_error_set(loom_error *err, loom_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void loom_error_clear(loom_error *err);
/* Prefixes the existing message with context ("loading session x: ..."). */
void loom_error_prefix(loom_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif

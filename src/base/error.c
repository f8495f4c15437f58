/* error.c — loom_error helpers (the codes' names are in base/protocol.c). */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int loom_error_set(loom_error *err, loom_error_code code, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        err->retryable = false;
        err->http_status = 0;
        err->retry_after_s = -1;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return -(int)code;
}

void loom_error_clear(loom_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->retry_after_s = -1;
}

void loom_error_prefix(loom_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[512], old[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    /* A message that no longer fits is cut at the end: the prefix and the
     * start of the cause are what a reader needs. Joined by hand because
     * snprintf here trips -Wformat-truncation at -O2. */
    size_t cap = sizeof err->message - 1, at = strnlen(prefix, cap);
    memcpy(err->message, prefix, at);
    for (const char *sep = ": "; *sep && at < cap; sep++)
        err->message[at++] = *sep;
    size_t n = strnlen(old, cap - at);
    memcpy(err->message + at, old, n);
    err->message[at + n] = '\0';
}

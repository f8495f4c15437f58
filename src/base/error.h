/* error.h — loom_error: a code from the seed's error set plus a human message.
 *
 * Codes describe what the failure means to the system (seed 000 §11,
 * L1996-2013), never the C failure underneath. The seed's set is extended
 * with model_* and session_* codes; codes are only ever added, never renamed.
 */
#ifndef LOOM_BASE_ERROR_H
#define LOOM_BASE_ERROR_H

#include <stdbool.h>

typedef enum {
    LOOM_OK = 0,
    /* request (seed 000) */
    LOOM_ERR_INVALID_REQUEST,
    LOOM_ERR_INVALID_STATE_TRANSITION,
    LOOM_ERR_RESOURCE_NOT_FOUND,
    /* run (seed 000) */
    LOOM_ERR_RUN_BLOCKED_BY_POLICY,
    LOOM_ERR_RUN_WAITING_APPROVAL,
    LOOM_ERR_RUN_APPROVAL_EXPIRED,
    LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY,
    LOOM_ERR_RUN_CANCELLED,
    LOOM_ERR_RUN_RESUMABLE,
    LOOM_ERR_RUN_NOT_RESUMABLE,
    /* execution / knowledge (seed 000) */
    LOOM_ERR_TOOL_EXECUTION_FAILED,
    LOOM_ERR_KNOWLEDGE_SOURCE_DENIED,
    LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE,
    LOOM_ERR_VERIFICATION_FAILED,
    /* model provider (Loom) */
    LOOM_ERR_MODEL_RATE_LIMITED,     /* 429 after the retries ran out */
    LOOM_ERR_MODEL_OVERLOADED,       /* 529 / overloaded_error after retries */
    LOOM_ERR_MODEL_UNAVAILABLE,      /* 5xx, connection reset, after retries */
    LOOM_ERR_MODEL_PROMPT_TOO_LONG,  /* 413 / prompt is too long: compact, retry */
    LOOM_ERR_MODEL_REQUEST_REJECTED, /* other 4xx: the provider's message */
    LOOM_ERR_MODEL_AUTH,             /* 401/403 */
    LOOM_ERR_MODEL_PROTOCOL,         /* malformed stream or body */
    LOOM_ERR_MODEL_TIMEOUT,          /* connect or idle timeout */
    /* local state (Loom) */
    LOOM_ERR_CONFIG,
    LOOM_ERR_SESSION_CORRUPT,
    LOOM_ERR_IO,
    LOOM_ERR_INTERNAL,
    LOOM_ERR__COUNT
} loom_code;

typedef struct loom_error {
    loom_code code;
    bool retryable;
    int http_status;         /* 0 when not an HTTP failure */
    double retry_after_s;    /* from Retry-After, < 0 when absent */
    char message[1024];
} loom_error;

/* Sets code and a printf-style message; returns -(int)code so callers can
 * `return loom_error_set(err, ...)`. err may be NULL. */
int loom_error_set(loom_error *err, loom_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void loom_error_clear(loom_error *err);
/* Prefixes the existing message with context ("loading session x: ..."). */
void loom_error_prefix(loom_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The stable snake_case name of a code, e.g. "tool_execution_failed". */
const char *loom_code_name(loom_code code);

#endif

/* error.c — loom_error helpers and the stable names of the error codes. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const code_names[LOOM_ERR__COUNT] = {
    [LOOM_OK] = "ok",
    [LOOM_ERR_INVALID_REQUEST] = "invalid_request",
    [LOOM_ERR_INVALID_STATE_TRANSITION] = "invalid_state_transition",
    [LOOM_ERR_RESOURCE_NOT_FOUND] = "resource_not_found",
    [LOOM_ERR_RUN_BLOCKED_BY_POLICY] = "run_blocked_by_policy",
    [LOOM_ERR_RUN_WAITING_APPROVAL] = "run_waiting_approval",
    [LOOM_ERR_RUN_APPROVAL_EXPIRED] = "run_approval_expired",
    [LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY] = "run_blocked_by_capability",
    [LOOM_ERR_RUN_CANCELLED] = "run_cancelled",
    [LOOM_ERR_RUN_RESUMABLE] = "run_resumable",
    [LOOM_ERR_RUN_NOT_RESUMABLE] = "run_not_resumable",
    [LOOM_ERR_TOOL_EXECUTION_FAILED] = "tool_execution_failed",
    [LOOM_ERR_KNOWLEDGE_SOURCE_DENIED] = "knowledge_source_denied",
    [LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE] = "knowledge_insufficient_evidence",
    [LOOM_ERR_VERIFICATION_FAILED] = "verification_failed",
    [LOOM_ERR_MODEL_RATE_LIMITED] = "model_rate_limited",
    [LOOM_ERR_MODEL_OVERLOADED] = "model_overloaded",
    [LOOM_ERR_MODEL_UNAVAILABLE] = "model_unavailable",
    [LOOM_ERR_MODEL_PROMPT_TOO_LONG] = "model_prompt_too_long",
    [LOOM_ERR_MODEL_REQUEST_REJECTED] = "model_request_rejected",
    [LOOM_ERR_MODEL_AUTH] = "model_auth_failed",
    [LOOM_ERR_MODEL_PROTOCOL] = "model_protocol_error",
    [LOOM_ERR_MODEL_TIMEOUT] = "model_timeout",
    [LOOM_ERR_CONFIG] = "config_invalid",
    [LOOM_ERR_SESSION_CORRUPT] = "session_corrupt",
    [LOOM_ERR_IO] = "io_failed",
    [LOOM_ERR_INTERNAL] = "internal_error",
};

int loom_error_set(loom_error *err, loom_code code, const char *fmt, ...)
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

const char *loom_code_name(loom_code code)
{
    if ((int)code < 0 || code >= LOOM_ERR__COUNT || !code_names[code])
        return "unknown_error";
    return code_names[code];
}

/* server_error.c — srv_error (server_error.h). No state; any thread. */
#include "surfaces/server/server_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom.h"

bool srv_code_retryable(loom_error_code code)
{
    switch (code) {
    case LOOM_ERR_TENANT_QUOTA_EXCEEDED:
    case LOOM_ERR_RUN_WAITING_APPROVAL:
    case LOOM_ERR_RUN_RESUMABLE:
    case LOOM_ERR_MODEL_RATE_LIMITED:
    case LOOM_ERR_MODEL_OVERLOADED:
    case LOOM_ERR_MODEL_UNAVAILABLE:
    case LOOM_ERR_MODEL_TIMEOUT:
        return true;
    default:
        return false;
    }
}

int srv_fail(srv_error *err, loom_error_code code, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->code = code;
    err->retryable = srv_code_retryable(code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

int srv_fail_status(srv_error *err, const loom_status *st)
{
    if (!err)
        return -1;
    loom_error_code code = st && st->code != LOOM_OK ? st->code : LOOM_ERR_INTERNAL;
    return srv_fail(err, code, "%s", st && st->message[0] ? st->message : "failed");
}

void srv_error_set_run(srv_error *err, const char *run_id)
{
    if (err)
        snprintf(err->run_id, sizeof err->run_id, "%s", run_id ? run_id : "");
}

void srv_error_set_details(srv_error *err, char *details_json)
{
    if (!err) {
        free(details_json);
        return;
    }
    free(err->details_json);
    err->details_json = details_json;
}

void srv_error_clear(srv_error *err)
{
    if (!err)
        return;
    free(err->details_json);
    memset(err, 0, sizeof *err);
}

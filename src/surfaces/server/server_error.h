/* server_error.h — the error every part of loom serve returns: a code of
 * loom_protocol.h (the seed's set plus the tenancy codes 27–31), a message
 * that says what and where, the run it concerns, and optional details.
 * The HTTP layer turns it into the seed's envelope
 * {error: {code, message, retryable, run_id, details}} with one status per
 * code (http/reply.c); nothing below it knows about HTTP.
 * A plain value, owned by whoever declared it; srv_error_clear frees the
 * details. Any thread. */
#ifndef LOOM_SERVER_ERROR_H
#define LOOM_SERVER_ERROR_H

#include <stdbool.h>

#include "loom_protocol.h"

typedef struct srv_error {
    loom_error_code code;  /* LOOM_OK when there is no error */
    bool retryable;
    char message[512];
    char run_id[64];       /* "" when the error concerns no run */
    char *details_json;    /* NULL, or a malloc'd JSON object text */
} srv_error;

/* Sets err (may be NULL) and returns -1, so a caller writes
 * `return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "run %s not found", id);`.
 * retryable is the code's default (tenant_quota_exceeded, run_waiting_approval
 * and the transient model_* codes); change err->retryable after when needed. */
int srv_fail(srv_error *err, loom_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copies a loom_status (a failed loom.h call) into err; returns -1. */
struct loom_status;
int srv_fail_status(srv_error *err, const struct loom_status *st);
void srv_error_set_run(srv_error *err, const char *run_id);
/* Takes ownership of details_json (a JSON object text, malloc'd). */
void srv_error_set_details(srv_error *err, char *details_json);
void srv_error_clear(srv_error *err);
/* The code's default retryability. */
bool srv_code_retryable(loom_error_code code);

#endif

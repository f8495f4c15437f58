/* intercept.h — the interceptor pipeline around each model call of a run
 * (seed 001 §2 socket ②, here per call rather than per run).
 *
 * Every call the loop makes for a turn (the first send and each resend
 * after a too-long refusal) goes through the chain: the request through
 * each interceptor's on_request in order, then the model, then the reply
 * (when one arrived whole) through each on_reply in reverse order, so the
 * first interceptor is the outermost: it sees the request last touched by
 * nobody and the reply as the others left it. The loop's own dynamic tail
 * (queued <system-reminder>s and C_working) is the first interceptor,
 * "tail" (runtime/loop.c); interceptors a driver registered through
 * loom_run_options (include/loom.h) and the debug one
 * (LOOM_DEBUG_INTERCEPTOR_LOG) come after it. Helper calls a harness
 * module makes for itself (compaction's summary, the permission
 * classifier) are not turns and do not pass the chain.
 *
 * on_request may change the request (add or edit blocks, lower
 * max_tokens); returning nonzero stops the call: the run fails with the
 * interceptor's err. on_reply may change the reply (its text, its stop
 * reason) before the loop records and acts on it; text already streamed
 * as token.delta was shown as it came. Threading: the run's thread only. */
#ifndef LOOM_RUNTIME_INTERCEPT_H
#define LOOM_RUNTIME_INTERCEPT_H

#include <stddef.h>

#include "base/error.h"
#include "message/message.h"

typedef struct intercept_call {
    int turn;               /* the run's turn, from 1 */
    int attempt;            /* 1 for the turn's first send, 2.. for resends */
    const char *model;
} intercept_call;

typedef struct loop_interceptor {
    const char *name;       /* for errors and logs; static or the owner's */
    void *ctx;
    /* May be NULL. 0, or nonzero with err set: the call is not made. */
    int (*on_request)(void *ctx, const intercept_call *call, msg_request *req, loom_error *err);
    /* May be NULL. */
    void (*on_reply)(void *ctx, const intercept_call *call, msg_response *resp);
} loop_interceptor;

typedef struct intercept_chain {
    loop_interceptor *v;
    size_t n, cap;
} intercept_chain;

void intercept_chain_add(intercept_chain *c, const loop_interceptor *ic);
/* Runs the request stage in order; stops at the first that refuses. */
int intercept_request(const intercept_chain *c, const intercept_call *call, msg_request *req,
                      loom_error *err);
/* Runs the reply stage in reverse order. */
void intercept_reply(const intercept_chain *c, const intercept_call *call, msg_response *resp);
void intercept_chain_free(intercept_chain *c);

/* The debug interceptor: with LOOM_DEBUG_INTERCEPTOR_LOG=FILE set, one
 * JSON line per request and per reply is appended to FILE ({"stage",
 * "turn", "attempt", "model", "messages", "last_text"} / {"stage",
 * "turn", "attempt", "text", "stop_reason"}), and with
 * LOOM_DEBUG_INTERCEPTOR_NOTE=TEXT that text is added to each request's
 * tail as a data-role="interceptor" reminder. Added to c when the log is
 * set; returns whether it was. For tests and for seeing what a run sends. */
bool intercept_add_debug(intercept_chain *c);

#endif

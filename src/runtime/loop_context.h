/* loop_context.h — the loop's side of the context port (DESIGN.md §1).
 *
 * The context module (context/control.h) knows nothing of runs, hooks or
 * events; the layer above hands it a context_env whose port turns what it
 * reports into the run's events, fires the session's lifecycle hooks and
 * adds the tokens it spends to a usage total. A run builds one over its
 * loop_io; the API builds one over the session's between runs (/compact,
 * /context) — the same port, so the two can never report differently.
 * Threading: the owner's thread (the run's, or the API caller's). */
#ifndef LOOM_RUNTIME_LOOP_CONTEXT_H
#define LOOM_RUNTIME_LOOP_CONTEXT_H

#include "context/control.h"
#include "runtime/loop.h"

typedef struct loop_context {
    loop_io *io;                /* events, hooks, transcript, C_working, M_f */
    msg_usage *usage;          /* where context work's tokens are added (NULL: dropped) */
    context_env env;            /* handed to every context_* call */
} loop_context;

/* Fills lc for p and io; its env reports through io (emit, governance's
 * hooks, the model port) and adds usage to *usage. lc must not move while
 * env is in use (the port points back at it). */
void loop_context_init(loop_context *lc, const loop_params *p, loop_io *io, msg_usage *usage);

/* The request for a turn in two parts (the tail goes on in the tail
 * interceptor, runtime/intercept.h): the body with the tools' declarations
 * (C_skill, which the context module only counts), then the tail; with
 * LOOM_CHECK_REQUEST_ENCODING the whole request is checked against one
 * made from the records. loop_context_request: both at once. */
int loop_context_body(loop_context *lc, context_state *cs, const loop_params *p,
                      const provider_config *cfg, msg_request *req, int64_t *body_est,
                      loom_error *err);
void loop_context_tail(loop_context *lc, context_state *cs, const loop_params *p,
                       const provider_config *cfg, const loom_str *tail, msg_request *req,
                       int64_t body_est, int64_t *est);
int loop_context_request(loop_context *lc, context_state *cs, const loop_params *p,
                         const provider_config *cfg, const loom_str *tail, msg_request *req,
                         int64_t *est, loom_error *err);

#endif

/* guard.h — loom.h's guardrails and interceptors (loom_run_options) as the
 * loop's (runtime/guardrail.h, runtime/intercept.h). One per run, on the
 * run function's stack; it borrows the options for the run. */
#ifndef LOOM_API_GUARD_H
#define LOOM_API_GUARD_H

#include "loom.h"
#include "runtime/loop.h"

typedef struct api_guard {
    struct loop_guardrail *guardrails;
    struct loop_interceptor *interceptors;
} api_guard;

/* Fills g from opts and points io at it. */
void api_guard_begin(api_guard *g, const loom_run_options *opts, loop_io *io);
void api_guard_end(api_guard *g);

#endif

/* run_state.h — the states a run moves through (DESIGN.md §3; seed 000 §11).
 * Same order and meaning as loom_run_state in loom.h. */
#ifndef LOOM_RUNTIME_RUN_STATE_H
#define LOOM_RUNTIME_RUN_STATE_H

typedef enum {
    RUN_QUEUED,
    RUN_RUNNING,
    RUN_WAITING_APPROVAL,
    RUN_WAITING_EXTERNAL,
    RUN_PAUSED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_CANCELLED,
    RUN_BLOCKED_BY_POLICY,
    RUN_BLOCKED_BY_CAPABILITY,
} run_state_kind;

const char *run_state_name(run_state_kind s);
/* True for completed, failed, cancelled and the blocked states. */
int run_state_is_final(run_state_kind s);

#endif

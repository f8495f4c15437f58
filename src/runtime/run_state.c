/* run_state.c — names of the run states. */
#include "runtime/run_state.h"

const char *run_state_name(run_state_kind s)
{
    switch (s) {
    case RUN_QUEUED: return "queued";
    case RUN_RUNNING: return "running";
    case RUN_WAITING_APPROVAL: return "waiting_approval";
    case RUN_WAITING_EXTERNAL: return "waiting_external";
    case RUN_PAUSED: return "paused";
    case RUN_COMPLETED: return "completed";
    case RUN_FAILED: return "failed";
    case RUN_CANCELLED: return "cancelled";
    case RUN_BLOCKED_BY_POLICY: return "blocked_by_policy";
    case RUN_BLOCKED_BY_CAPABILITY: return "blocked_by_capability";
    }
    return "unknown";
}

int run_state_is_final(run_state_kind s)
{
    return s == RUN_COMPLETED || s == RUN_FAILED || s == RUN_CANCELLED ||
           s == RUN_BLOCKED_BY_POLICY || s == RUN_BLOCKED_BY_CAPABILITY;
}

/* run_state.c — the run state machine of loom serve as data: which state
 * may follow which (common contract: queued → running ⇄ waiting_*; running
 * → paused → queued on :resume; completed, cancelled, blocked_* terminal;
 * failed terminal but resumable when its error is run_resumable, which the
 * caller checks). Everything not in the table is invalid_state_transition.
 * Pure data; any thread. */
#include <assert.h>

#include "surfaces/server/runs/service_int.h"

#define B(s) (1u << (s))

/* next[from]: the states from may move to. */
static const unsigned next[] = {
    /* blocked_* from queued: the profile needs a tool the server lacks, or
     * its policy denies outright, found before the run starts. */
    [LOOM_RUN_QUEUED] = B(LOOM_RUN_RUNNING) | B(LOOM_RUN_CANCELLED) | B(LOOM_RUN_FAILED) |
                        B(LOOM_RUN_BLOCKED_BY_POLICY) | B(LOOM_RUN_BLOCKED_BY_CAPABILITY),
    [LOOM_RUN_RUNNING] = B(LOOM_RUN_WAITING_APPROVAL) | B(LOOM_RUN_WAITING_EXTERNAL) |
                         B(LOOM_RUN_PAUSED) | B(LOOM_RUN_COMPLETED) | B(LOOM_RUN_FAILED) |
                         B(LOOM_RUN_CANCELLED) | B(LOOM_RUN_BLOCKED_BY_POLICY) |
                         B(LOOM_RUN_BLOCKED_BY_CAPABILITY),
    [LOOM_RUN_WAITING_APPROVAL] = B(LOOM_RUN_RUNNING) | B(LOOM_RUN_PAUSED) |
                                  B(LOOM_RUN_FAILED) | B(LOOM_RUN_CANCELLED),
    [LOOM_RUN_WAITING_EXTERNAL] = B(LOOM_RUN_RUNNING) | B(LOOM_RUN_PAUSED) |
                                  B(LOOM_RUN_FAILED) | B(LOOM_RUN_CANCELLED),
    [LOOM_RUN_PAUSED] = B(LOOM_RUN_QUEUED) | B(LOOM_RUN_CANCELLED),
    [LOOM_RUN_COMPLETED] = 0,
    [LOOM_RUN_FAILED] = B(LOOM_RUN_QUEUED), /* :resume of a run_resumable failure */
    [LOOM_RUN_CANCELLED] = 0,
    [LOOM_RUN_BLOCKED_BY_POLICY] = 0,
    [LOOM_RUN_BLOCKED_BY_CAPABILITY] = 0,
};

/* The seed's ten states, every one with a row. */
static_assert(sizeof next / sizeof next[0] == LOOM_RUN_STATE_END,
              "the transition table has one row per run state");
static_assert(LOOM_RUN_STATE_END == 10, "the seed names ten run states");

bool run_state_can(loom_run_state from, loom_run_state to)
{
    if ((unsigned)from >= LOOM_RUN_STATE_END || (unsigned)to >= LOOM_RUN_STATE_END)
        return false;
    return (next[from] & B(to)) != 0;
}

bool run_state_active(loom_run_state s)
{
    return s == LOOM_RUN_QUEUED || s == LOOM_RUN_RUNNING || s == LOOM_RUN_WAITING_APPROVAL ||
           s == LOOM_RUN_WAITING_EXTERNAL;
}

bool run_state_terminal(loom_run_state s)
{
    return s == LOOM_RUN_COMPLETED || s == LOOM_RUN_FAILED || s == LOOM_RUN_CANCELLED ||
           s == LOOM_RUN_BLOCKED_BY_POLICY || s == LOOM_RUN_BLOCKED_BY_CAPABILITY;
}

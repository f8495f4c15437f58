/* guardrail.h — input and output guardrails of a run (seed 001 §1.2: the
 * OpenAI Agents SDK's inputGuardrail / outputGuardrail the loop borrows).
 *
 * A guardrail judges a text and may stop the run with a reason: an input
 * guardrail the goal, before the model sees it (after the UserPromptSubmit
 * hooks); an output guardrail the text of each reply, before it is shown
 * or recorded. While any output guardrail is configured the reply's
 * token.delta text is held back until the reply passed, then sent as one
 * delta; a reply that trips is never shown and never recorded (a note
 * says it was withheld). A stop ends the run blocked_by_policy with stop
 * reason guardrail, error run_blocked_by_policy naming the stage, the
 * guardrail and its reason, and a guardrail.tripped event.
 *
 * Two sources, run in this order, the first trip wins: functions a driver
 * registered (loom_run_options.guardrails, include/loom.h, passed down as
 * loop_guardrail), then the hook events InputGuardrail / OutputGuardrail
 * from settings (a command hook reading {stage, text} that blocks with
 * exit 2 or {"decision": "block", "reason"}; docs/hooks.md). Threading:
 * the run's thread. */
#ifndef LOOM_RUNTIME_GUARDRAIL_H
#define LOOM_RUNTIME_GUARDRAIL_H

#include <stdbool.h>

typedef enum guardrail_stage { GUARDRAIL_INPUT = 0, GUARDRAIL_OUTPUT = 1 } guardrail_stage;

typedef struct loop_guardrail {
    const char *name;
    guardrail_stage stage;
    void *ctx;
    /* True to stop the run; *reason may get a malloc'd reason. */
    bool (*check)(void *ctx, guardrail_stage stage, const char *text, char **reason);
} loop_guardrail;

struct loop_state;

/* Whether the run has a guardrail of stage (either source). */
bool guardrail_any(struct loop_state *st, guardrail_stage stage);
/* Runs stage's guardrails over text; true when one tripped: the run's
 * outcome is then set (blocked_by_policy, stop guardrail) and the event
 * emitted. */
bool guardrail_check(struct loop_state *st, guardrail_stage stage, const char *text);

#endif

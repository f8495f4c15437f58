/* effort.h — effort levels and their provider dialects: one table.
 *
 * A helper call (helper.h) or a setting asks for an effort — none, low,
 * medium, high — and each provider spells it its own way: Anthropic as an
 * extended-thinking budget in tokens, OpenAI as `reasoning_effort` /
 * `reasoning.effort`. The model table (models.h) says which dialect a model
 * speaks; a model that reasons in neither gets nothing. Pure functions, no
 * state. */
#ifndef LOOM_PROVIDER_EFFORT_H
#define LOOM_PROVIDER_EFFORT_H

#include "provider/provider.h"

typedef enum helper_effort {
    HELPER_EFFORT_DEFAULT = 0, /* leave the configuration as it is */
    HELPER_EFFORT_NONE,        /* no thinking, no reasoning parameter */
    HELPER_EFFORT_LOW,
    HELPER_EFFORT_MEDIUM,
    HELPER_EFFORT_HIGH,
    HELPER_EFFORT_COUNT
} helper_effort;

const char *helper_effort_name(helper_effort e); /* "default", "none", "low", … */
int helper_effort_parse(const char *name, helper_effort *out); /* 0, or -1 */

/* The Anthropic thinking budget of e (0: off; DEFAULT: -1, unchanged). */
int helper_effort_thinking_budget(helper_effort e);
/* The OpenAI reasoning effort of e ("" for none: the parameter is left
 * out; NULL for DEFAULT: unchanged). */
const char *helper_effort_openai(helper_effort e);

/* Sets cfg's thinking_budget and reasoning_effort for e in the dialect of
 * cfg->model; DEFAULT changes nothing. */
void helper_effort_apply(helper_effort e, provider_config *cfg);

#endif

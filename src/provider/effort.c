/* effort.c — the effort dialect table (see effort.h). */
#include "provider/effort.h"

#include <string.h>

#include "provider/models.h"

/* One row per level: its name, Anthropic's thinking budget (the API's
 * minimum is 1024; 31999 is Claude Code's "think hard" budget, the one
 * `--thinking` uses), OpenAI's reasoning effort. */
static const struct {
    const char *name;
    int thinking_budget;
    const char *openai;
} levels[HELPER_EFFORT_COUNT] = {
    [HELPER_EFFORT_DEFAULT] = {"default", -1, NULL},
    [HELPER_EFFORT_NONE] = {"none", 0, ""},
    [HELPER_EFFORT_LOW] = {"low", 1024, "low"},
    [HELPER_EFFORT_MEDIUM] = {"medium", 8192, "medium"},
    [HELPER_EFFORT_HIGH] = {"high", 31999, "high"},
};

const char *helper_effort_name(helper_effort e)
{
    return e >= 0 && e < HELPER_EFFORT_COUNT ? levels[e].name : "default";
}

int helper_effort_parse(const char *name, helper_effort *out)
{
    for (int i = 0; name && i < HELPER_EFFORT_COUNT; i++)
        if (!strcmp(levels[i].name, name)) {
            *out = (helper_effort)i;
            return 0;
        }
    return -1;
}

int helper_effort_thinking_budget(helper_effort e)
{
    return e >= 0 && e < HELPER_EFFORT_COUNT ? levels[e].thinking_budget : -1;
}

const char *helper_effort_openai(helper_effort e)
{
    return e >= 0 && e < HELPER_EFFORT_COUNT ? levels[e].openai : NULL;
}

void helper_effort_apply(helper_effort e, provider_config *cfg)
{
    if (e <= HELPER_EFFORT_DEFAULT || e >= HELPER_EFFORT_COUNT)
        return;
    /* Whatever the main configuration asked for is not this call's. */
    cfg->thinking_budget = 0;
    cfg->reasoning_effort[0] = '\0';
    switch (model_reasoning(cfg->model)) {
    case MODEL_REASONING_BUDGET:
        cfg->thinking_budget = levels[e].thinking_budget;
        break;
    case MODEL_REASONING_EFFORT:
        strncpy(cfg->reasoning_effort, levels[e].openai, sizeof cfg->reasoning_effort - 1);
        break;
    case MODEL_REASONING_NONE:
        break;
    }
}

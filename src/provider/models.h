/* models.h — what Loom knows about a model by name: its context window and
 * maximum output, and how a request to it must be shaped (whether it takes
 * `temperature`, how it reasons, which field carries the output cap).
 *
 * One read-only data table (models.c), matched by name prefix; unknown models
 * get conservative defaults. Window and output cap can be overridden in
 * configuration. Pure functions over constant data: safe from any thread. */
#ifndef LOOM_PROVIDER_MODELS_H
#define LOOM_PROVIDER_MODELS_H

#include <stdbool.h>
#include <stdint.h>

/* How a model family reasons, and so what a request may ask of it. */
typedef enum model_reasoning_kind {
    MODEL_REASONING_NONE,   /* no reasoning parameter: send none */
    MODEL_REASONING_BUDGET, /* Anthropic `thinking: {type: enabled, budget_tokens}` */
    MODEL_REASONING_EFFORT, /* OpenAI `reasoning_effort` / `reasoning.effort` */
} model_reasoning_kind;

typedef struct model_info {
    int64_t context_window;
    int max_output_tokens;
    bool temperature;          /* the API accepts `temperature` for this family */
    model_reasoning_kind reasoning;
    int thinking_min_budget;   /* MODEL_REASONING_BUDGET: smallest budget_tokens */
    bool max_completion_tokens; /* OpenAI Chat: the cap must be max_completion_tokens */
} model_info;

model_info models_lookup(const char *model);

/* False for families whose API refuses or no longer lists `temperature`
 * (current Claude, gpt-5, o-series): a caller then leaves it out. */
bool model_accepts_temperature(const char *model);
model_reasoning_kind model_reasoning(const char *model);
/* "max_completion_tokens" or "max_tokens": the Chat Completions field for the
 * output cap that this model accepts. */
const char *model_max_tokens_field(const char *model);

/* The models Loom asks for when none is configured. */
#define MODELS_DEFAULT_ANTHROPIC "claude-sonnet-5-5"
#define MODELS_DEFAULT_OPENAI "gpt-4.1"

#endif

/* models.h — what Loom knows about a model by name: its context window and
 * maximum output, and how a request to it must be shaped (whether it takes
 * `temperature`, how it reasons, which field carries the output cap).
 *
 * Also the names people type for a model (aliases: sonnet, opus, haiku,
 * gpt-5, …) and what each model costs (a dated price table, USD per
 * million tokens).
 *
 * Read-only data tables (models.c): limits matched by name prefix, prices by
 * id (a dated snapshot or a [1m] suffix counts as its id); unknown models
 * get conservative defaults and no price. Window, output cap and prices can
 * be overridden in configuration. Pure functions over constant data: safe
 * from any thread. */
#ifndef LOOM_PROVIDER_MODELS_H
#define LOOM_PROVIDER_MODELS_H

#include <stdbool.h>
#include <stddef.h>
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

/* The day the alias and price tables were last checked against the
 * providers' published ids and prices (models.c names the sources). */
#define MODELS_TABLE_DATE "2026-12-02"

/* USD per million tokens. cache_write: a 5-minute cache write (Anthropic;
 * OpenAI charges none), cache_read: a cache hit / cached input. A second
 * tier (Haiku 5.5): a request whose prompt, input and cache tokens
 * together, is over long_above tokens pays the long_* prices for all its
 * tokens, output included; long_above 0: one tier. */
typedef struct model_price {
    double input, output, cache_write, cache_read;
    long long long_above;
    double long_input, long_output, long_cache_write, long_cache_read;
    /* A 1-hour cache write (Anthropic: 2× input; 0 where the provider
     * bills no writes), and the second tier's. */
    double cache_write_1h, long_cache_write_1h;
    /* The day this row's price was last checked against the provider's
     * page ("2026-12-02"); NULL for a price from settings. */
    const char *as_of;
} model_price;

/* A name a person types and the model id it stands for. provider:
 * "anthropic" or "openai", the API that serves the id. An OpenAI row whose
 * alias is its id (gpt-5) is listed so /model shows it, and resolves to
 * itself. */
typedef struct model_alias {
    const char *alias;
    const char *id;
    const char *provider;
} model_alias;

/* The id an alias stands for; any other name (an id, a model the table
 * does not know) comes back as given. NULL for NULL. */
const char *models_resolve(const char *name);
/* True when name is one of the table's aliases (not an id listed as itself). */
bool models_is_alias(const char *name);
/* The alias table, in the order /model lists it: i from 0 until NULL. */
const model_alias *models_alias_at(size_t i);
/* "anthropic" for claude-*, "openai" for gpt-* and the o-series, NULL for
 * a model of no known vendor: whether an alias's id can go to the endpoint
 * that serves a given model. */
const char *models_vendor(const char *model);
/* The published price of model (an id, not an alias); false when the table
 * has none (then *out is zeroed). */
bool models_price(const char *model, model_price *out);
/* USD for one request's tokens at price p (its second tier applied by the
 * prompt's size). input: uncached input tokens; cache_write_1h: the part of
 * cache_write cached for 1 hour (the rest pays the 5-minute price). */
double model_price_cost(const model_price *p, long long input, long long output,
                        long long cache_write, long long cache_read, long long cache_write_1h);

/* The models Loom asks for when none is configured. */
#define MODELS_DEFAULT_ANTHROPIC "claude-sonnet-5-5"
#define MODELS_DEFAULT_OPENAI "gpt-4.1"

#endif

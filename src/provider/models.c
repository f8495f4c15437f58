/* models.c — the built-in model table: per model family its context window,
 * maximum output, and request shaping (temperature, reasoning, which field
 * carries the output cap). Owns nothing but constant data; thread-safe.
 *
 * Matched by name prefix, first match wins, so a longer prefix sits above a
 * shorter one. Unknown models get 128k / 8k, which every current chat model
 * meets, so Loom never over-fills an unknown window by default (the reactive
 * compaction path corrects it when it is smaller); they are assumed to take
 * temperature and plain max_tokens, as OpenAI-compatible servers do.
 *
 * Checked 2026-12-01 against these sources (cited below by letter):
 *   [A] @anthropic-ai/sdk 1.15.0 (npm, published 2026-11-30):
 *       resources/messages/messages.d.ts — `Model` (the current names:
 *       claude-{fable,mythos,haiku,sonnet,opus}-5*, claude-opus-4-{5..8},
 *       claude-sonnet-4-6, claude-haiku-4-5); MessageCreateParams has no
 *       `temperature` field any more (deprecated in 0.125, CHANGELOG.md);
 *       ThinkingConfigEnabled.budget_tokens "Must be ≥1024 and less than
 *       max_tokens". internal/data/deprecated-models.js lists
 *       claude-opus-4-5 (EOL 2027-01-22); claude-sonnet-4-5, Loom's old
 *       default, is no longer in `Model`.
 *   [O] openai 6.49.0 (npm, published 2026-07-24): resources/shared.d.ts
 *       `ChatModel` (gpt-5.6-*, gpt-5.4 … gpt-5, gpt-4.1, o4-mini, o3, o1,
 *       gpt-4o …), `ReasoningEffort` ('none' … 'max');
 *       resources/chat/completions/completions.d.ts: `max_tokens` is
 *       "deprecated in favor of max_completion_tokens, and is not compatible
 *       with o-series models".
 *   [R] OpenAI's API error for gpt-5 / o-series given temperature ≠ 1:
 *       400 "unsupported_value" (issue 12's report; Codex never sends it).
 *   [W] Windows and output caps carried over from Loom's earlier table (the
 *       providers' model pages as of 2025). Families newer than that are not
 *       described by the SDK types; their figures below are the preceding
 *       generation's and are marked "assumed" — the Anthropic Models API
 *       (`max_input_tokens`, `max_tokens` in [A] resources/models.d.ts) is
 *       the live source, and configuration overrides both.
 */
#include "provider/models.h"

#include <string.h>

/* Field order: window, max output, temperature, reasoning, min thinking
 * budget, max_completion_tokens. */
#define CLAUDE(window, out) {window, out, false, MODEL_REASONING_BUDGET, 1024, false}
#define OAI_REASONING(window, out) {window, out, false, MODEL_REASONING_EFFORT, 0, true}
/* Non-reasoning OpenAI models still take the deprecated max_tokens [O], which
 * is what gateways that serve them under these names understand. */
#define OAI_PLAIN(window, out) {window, out, true, MODEL_REASONING_NONE, 0, false}
#define OTHER(window, out) {window, out, true, MODEL_REASONING_NONE, 0, false}

static const struct {
    const char *prefix;
    model_info info;
} table[] = {
    /* Anthropic: no temperature in [A] for any model; thinking budget ≥1024 [A]. */
    {"claude-opus-5", CLAUDE(200000, 64000)},   /* assumed [W] */
    {"claude-sonnet-5", CLAUDE(200000, 64000)}, /* assumed [W] */
    {"claude-haiku-5", CLAUDE(200000, 64000)},  /* assumed [W] */
    {"claude-fable-5", CLAUDE(200000, 64000)},  /* assumed [W] */
    {"claude-mythos", CLAUDE(200000, 64000)},   /* assumed [W] */
    {"claude-opus-4", CLAUDE(200000, 32000)},   /* [W] */
    {"claude-sonnet-4", CLAUDE(200000, 64000)}, /* [W] */
    {"claude-haiku-4", CLAUDE(200000, 64000)},  /* [W] */
    {"claude-3-7-sonnet", CLAUDE(200000, 64000)}, /* [W]; first with thinking */
    /* Claude 3.5 had no extended thinking [W]. */
    {"claude-3-5-haiku", {200000, 8192, false, MODEL_REASONING_NONE, 0, false}},
    {"claude-3-5-sonnet", {200000, 8192, false, MODEL_REASONING_NONE, 0, false}},
    {"claude", {200000, 8192, false, MODEL_REASONING_NONE, 0, false}},
    /* OpenAI reasoning models: effort [O], no temperature [R],
     * max_completion_tokens [O]. gpt-5 covers gpt-5.x. */
    {"gpt-5", OAI_REASONING(400000, 128000)},   /* [W] */
    {"o4-mini", OAI_REASONING(200000, 100000)}, /* [W] */
    {"o3", OAI_REASONING(200000, 100000)},      /* [W] */
    {"o1", OAI_REASONING(200000, 100000)},      /* [W] */
    /* OpenAI non-reasoning models: temperature 0–2 [O]. */
    {"gpt-4.1", OAI_PLAIN(1047576, 32768)}, /* [W] */
    {"gpt-4o", OAI_PLAIN(128000, 16384)},   /* [W] */
    /* Open-weight families behind OpenAI-compatible servers. */
    {"deepseek", OTHER(128000, 8192)},
    {"qwen", OTHER(131072, 8192)},
    {"llama", OTHER(131072, 8192)},
    {"replay", OTHER(200000, 8192)},
};

static const model_info unknown = OTHER(128000, 8192);

model_info models_lookup(const char *model)
{
    if (model)
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
            if (strncmp(model, table[i].prefix, strlen(table[i].prefix)) == 0)
                return table[i].info;
    return unknown;
}

bool model_accepts_temperature(const char *model)
{
    return models_lookup(model).temperature;
}

model_reasoning_kind model_reasoning(const char *model)
{
    return models_lookup(model).reasoning;
}

const char *model_max_tokens_field(const char *model)
{
    return models_lookup(model).max_completion_tokens ? "max_completion_tokens" : "max_tokens";
}

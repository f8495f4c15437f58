/* models.c — the built-in model tables: per model family its context window,
 * maximum output, and request shaping (temperature, reasoning, which field
 * carries the output cap); the aliases people type (sonnet → an id); the
 * dated price table. Owns nothing but constant data; thread-safe.
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

#include <ctype.h>
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

/* --- aliases and prices ------------------------------------------------------
 *
 * Checked 2026-12-02 (MODELS_TABLE_DATE) against:
 *   [P] platform.claude.com/docs, "Pricing" and the model overview pages
 *       (opus-5-5, sonnet-5-5, haiku-5-5, opus-5): ids, base input, 5-minute
 *       cache write, cache hit, output. Sonnet 5.5's cache hit was cut from
 *       $0.20 to $0.10 on 2026-10-07; Haiku 5.5 has a second tier above a
 *       100,000-token prompt.
 *   [C] Claude Code's floating aliases: sonnet → claude-sonnet-5-5,
 *       opus → claude-opus-5-5, haiku → claude-haiku-5-5 (first party, CLI
 *       2.1.284–2.1.293), fable → the newest Fable (claude-fable-5-1).
 *   [Q] developers.openai.com/api/docs/pricing (standard tier): input,
 *       cached input, output. OpenAI bills no cache writes.
 * Prices change: settings price_input_per_mtok / price_output_per_mtok
 * override the table (docs/providers.md). */

static const model_alias aliases[] = {
    {"sonnet", "claude-sonnet-5-5", "anthropic"}, /* [C] */
    {"opus", "claude-opus-5-5", "anthropic"},     /* [C] */
    {"haiku", "claude-haiku-5-5", "anthropic"},   /* [C] */
    {"fable", "claude-fable-5-1", "anthropic"},   /* [C] */
    /* OpenAI's names are ids already: listed so /model shows them. */
    {"gpt-5", "gpt-5", "openai"},
    {"gpt-5-mini", "gpt-5-mini", "openai"},
    {"gpt-5-nano", "gpt-5-nano", "openai"},
    {"o3", "o3", "openai"},
    {"o4-mini", "o4-mini", "openai"},
    {"gpt-4.1", "gpt-4.1", "openai"},
    {NULL, NULL, NULL},
};

/* input, output, 5m cache write, cache read [, tier threshold, its four],
 * then the row's "as of" day. The 1-hour cache write is Anthropic's 2×
 * the base input for every model [P] ("Pricing": 5m writes 1.25×, 1h
 * writes 2×, hits 0.1×), so it is derived: rows that bill no writes
 * (OpenAI) have none. */
#define PRICE(in, out, cw, cr) {in, out, cw, cr, 0, 0, 0, 0, 0, (cw) > 0 ? 2.0 * (in) : 0, 0, NULL}
#define PRICE2(in, out, cw, cr, above, lin, lout, lcw, lcr) \
    {in, out, cw, cr, above, lin, lout, lcw, lcr, 2.0 * (in), 2.0 * (lin), NULL}
static const struct {
    const char *id;
    model_price price;
    const char *as_of;
} prices[] = {
    {"claude-fable-5-1", PRICE(10, 50, 12.50, 0.25), "2026-12-02"},   /* [P] */
    {"claude-mythos-5-1", PRICE(10, 50, 12.50, 0.25), "2026-12-02"},  /* [P] */
    {"claude-fable-5", PRICE(10, 50, 12.50, 1), "2026-12-02"},        /* [P] */
    {"claude-mythos-5", PRICE(10, 50, 12.50, 1), "2026-12-02"},       /* [P] */
    {"claude-opus-5-5", PRICE(4, 20, 5, 0.20), "2026-12-02"},         /* [P] */
    {"claude-opus-5", PRICE(5, 25, 6.25, 0.50), "2026-12-02"},        /* [P] */
    {"claude-opus-4-8", PRICE(5, 25, 6.25, 0.50), "2026-12-02"},      /* [P] */
    {"claude-opus-4-7", PRICE(5, 25, 6.25, 0.50), "2026-12-02"},      /* [P] */
    {"claude-opus-4-6", PRICE(5, 25, 6.25, 0.50), "2026-12-02"},      /* [P] */
    {"claude-opus-4-5", PRICE(5, 25, 6.25, 0.50), "2026-12-02"},      /* [P] */
    {"claude-opus-4-1", PRICE(15, 75, 18.75, 1.50), "2026-12-02"},    /* [P] */
    {"claude-opus-4-0", PRICE(15, 75, 18.75, 1.50), "2026-12-02"},    /* [P] */
    {"claude-opus-4", PRICE(15, 75, 18.75, 1.50), "2026-12-02"},      /* [P] */
    {"claude-sonnet-5-5", PRICE(2, 10, 2.50, 0.10), "2026-12-02"}, /* [P] hit price since 2026-10-07 */
    {"claude-sonnet-5", PRICE(2, 10, 2.50, 0.20), "2026-12-02"},      /* [P] */
    {"claude-sonnet-4-6", PRICE(3, 15, 3.75, 0.30), "2026-12-02"},    /* [P] */
    {"claude-sonnet-4-5", PRICE(3, 15, 3.75, 0.30), "2026-12-02"},    /* [P] */
    {"claude-sonnet-4-0", PRICE(3, 15, 3.75, 0.30), "2026-12-02"},    /* [P] */
    {"claude-sonnet-4", PRICE(3, 15, 3.75, 0.30), "2026-12-02"},      /* [P] */
    {"claude-haiku-5-5", PRICE2(0.10, 0.50, 0.125, 0.01, 100000, 0.50, 2.50, 0.625, 0.05), "2026-12-02"}, /* [P] */
    {"claude-haiku-4-5", PRICE(1, 5, 1.25, 0.10), "2026-12-02"},      /* [P] */
    {"claude-3-5-haiku", PRICE(0.80, 4, 1, 0.08), "2026-12-02"},      /* [P] */
    {"gpt-5", PRICE(1.25, 10, 0, 0.125), "2026-12-02"},               /* [Q] */
    {"gpt-5-mini", PRICE(0.25, 2, 0, 0.025), "2026-12-02"},           /* [Q] */
    {"gpt-5-nano", PRICE(0.05, 0.40, 0, 0.005), "2026-12-02"},        /* [Q] */
    {"gpt-5.4", PRICE(2.50, 15, 0, 0.25), "2026-12-02"},              /* [Q] */
    {"gpt-5.4-mini", PRICE(0.75, 4.50, 0, 0.075), "2026-12-02"},      /* [Q] */
    {"o3", PRICE(2, 8, 0, 0.50), "2026-12-02"},                       /* [Q] */
    {"o4-mini", PRICE(1.10, 4.40, 0, 0.275), "2026-12-02"},           /* [Q] */
    {"gpt-4.1", PRICE(2, 8, 0, 0.50), "2026-12-02"},                  /* [Q] */
    {"gpt-4.1-mini", PRICE(0.40, 1.60, 0, 0.10), "2026-12-02"},       /* [Q] */
    {"gpt-4o", PRICE(2.50, 10, 0, 1.25), "2026-12-02"},               /* [Q] */
};

const char *models_resolve(const char *name)
{
    if (name)
        for (const model_alias *a = aliases; a->alias; a++)
            if (!strcmp(name, a->alias))
                return a->id;
    return name;
}

bool models_is_alias(const char *name)
{
    const char *id = models_resolve(name);
    return name && id != name && strcmp(id, name) != 0;
}

const model_alias *models_alias_at(size_t i)
{
    return i < sizeof aliases / sizeof aliases[0] - 1 ? &aliases[i] : NULL;
}

const char *models_vendor(const char *model)
{
    if (!model)
        return NULL;
    if (!strncmp(model, "claude", 6))
        return "anthropic";
    if (!strncmp(model, "gpt-", 4) || ((model[0] == 'o') && isdigit((unsigned char)model[1])))
        return "openai";
    return NULL;
}

/* What may follow an id and still name it: nothing, a dated snapshot
 * (-20251001, -2025-08-07), "[1m]" (the long-context request), "-latest". */
static bool id_suffix(const char *rest)
{
    if (!*rest || !strcmp(rest, "[1m]") || !strcmp(rest, "-latest"))
        return true;
    if (*rest != '-')
        return false;
    rest++;
    size_t digits = 0, dashes = 0;
    for (; *rest; rest++) {
        if (isdigit((unsigned char)*rest))
            digits++;
        else if (*rest == '-' && digits && dashes < 2)
            dashes++;
        else
            return false;
    }
    return digits == 8;
}

bool models_price(const char *model, model_price *out)
{
    memset(out, 0, sizeof *out);
    if (!model)
        return false;
    for (size_t i = 0; i < sizeof prices / sizeof prices[0]; i++) {
        size_t n = strlen(prices[i].id);
        if (!strncmp(model, prices[i].id, n) && id_suffix(model + n)) {
            *out = prices[i].price;
            out->as_of = prices[i].as_of;
            return true;
        }
    }
    return false;
}

double model_price_cost(const model_price *p, long long input, long long output,
                        long long cache_write, long long cache_read, long long cache_write_1h)
{
    bool long_tier = p->long_above > 0 && input + cache_write + cache_read > p->long_above;
    double in = long_tier ? p->long_input : p->input, out = long_tier ? p->long_output : p->output,
           cw = long_tier ? p->long_cache_write : p->cache_write,
           cr = long_tier ? p->long_cache_read : p->cache_read,
           cw1h = long_tier ? p->long_cache_write_1h : p->cache_write_1h;
    if (cache_write_1h < 0)
        cache_write_1h = 0;
    if (cache_write_1h > cache_write)
        cache_write_1h = cache_write;
    /* A row without a 1-hour price (a settings override) bills every write
     * at the 5-minute price it has. */
    if (cw1h <= 0)
        cw1h = cw;
    return ((double)input * in + (double)output * out +
            (double)(cache_write - cache_write_1h) * cw + (double)cache_write_1h * cw1h +
            (double)cache_read * cr) / 1e6;
}

/* models.c — the built-in model table (context window, max output tokens).
 *
 * Matched by name prefix, longest first wins by table order. Figures are the
 * providers' published limits; unknown models get 128k / 8k, which every
 * current chat model meets, so Loom never over-fills an unknown window by
 * default (the reactive compaction path corrects it when it is smaller). */
#include "provider/models.h"

#include <string.h>

static const struct {
    const char *prefix;
    model_info info;
} table[] = {
    {"claude-opus-4", {200000, 32000}},
    {"claude-sonnet-4", {200000, 64000}},
    {"claude-haiku-4", {200000, 64000}},
    {"claude-3-7-sonnet", {200000, 64000}},
    {"claude-3-5-haiku", {200000, 8192}},
    {"claude-3-5-sonnet", {200000, 8192}},
    {"claude", {200000, 8192}},
    {"gpt-5", {400000, 128000}},
    {"gpt-4.1", {1047576, 32768}},
    {"gpt-4o", {128000, 16384}},
    {"o4-mini", {200000, 100000}},
    {"o3", {200000, 100000}},
    {"o1", {200000, 100000}},
    {"deepseek", {128000, 8192}},
    {"qwen", {131072, 8192}},
    {"llama", {131072, 8192}},
    {"replay", {200000, 8192}},
};

model_info models_lookup(const char *model)
{
    if (model)
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
            if (strncmp(model, table[i].prefix, strlen(table[i].prefix)) == 0)
                return table[i].info;
    return (model_info){128000, 8192};
}

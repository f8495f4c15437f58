/* models.h — what Loom knows about a model by name: context window and
 * maximum output tokens. Unknown models get conservative defaults; both can
 * be overridden in configuration. */
#ifndef LOOM_PROVIDER_MODELS_H
#define LOOM_PROVIDER_MODELS_H

#include <stdint.h>

typedef struct model_info {
    int64_t context_window;
    int max_output_tokens;
} model_info;

model_info models_lookup(const char *model);

#endif

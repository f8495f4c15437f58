/* fuzz_model_names.c — any model name (from settings, a flag, an agent
 * file's or a command's model:) through the alias table, the price lookup
 * with its snapshot-suffix parser, the limits table and loom.h's JSON of
 * one model. Must never crash, leak or read past the name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loom.h"
#include "provider/models.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    if (!name)
        return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    const char *id = models_resolve(name);
    model_price p;
    if (models_price(id, &p))
        (void)model_price_cost(&p, (long long)size, 1, 2, 3, (long long)size / 2);
    (void)models_lookup(id);
    (void)models_vendor(id);
    (void)models_is_alias(name);
    char *json = loom_model_info_json(name); /* a name with invalid UTF-8: NULL is fine */
    free(json);
    free(name);
    return 0;
}

/* model_prices.c — the check of the settings' price overrides,
 * "models": {"<id or alias>": {"price": {"input", "output", "cache_write"?,
 * "cache_read"?}}} (USD per million tokens; api_agent_price in agent.c reads
 * them). A price that is not a number ≥ 0, or lacks input or output, would
 * otherwise be passed over silently and the table's (or no) price used, a
 * cost the user did not set: it is an error naming the file and the key,
 * found when the agent is made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/settings.h"

static const char *const price_keys[] = {"input", "output", "cache_write", "cache_read",
                                         "cache_write_1h", NULL};

static bool known_key(const char *key)
{
    for (const char *const *k = price_keys; *k; k++)
        if (!strcmp(key, *k))
            return true;
    return false;
}

/* The problem with one entry's price, written into why; false when none. */
static bool price_problem(const json_t *price, char *why, size_t n)
{
    if (!json_is_object(price)) {
        snprintf(why, n, "price: expected an object {\"input\", \"output\", \"cache_write\"?, "
                 "\"cache_read\"?} (USD per million tokens)");
        return true;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)price, key, v) {
        if (!known_key(key)) {
            snprintf(why, n, "price.%s: unknown field (input, output, cache_write, cache_read, cache_write_1h)",
                     key);
            return true;
        }
        if (!json_is_number(v) || json_number_value(v) < 0) {
            snprintf(why, n, "price.%s: expected a number >= 0 (USD per million tokens)", key);
            return true;
        }
    }
    for (int i = 0; i < 2; i++)
        if (!json_object_get(price, price_keys[i])) {
            snprintf(why, n, "price.%s: missing (input and output are both needed)",
                     price_keys[i]);
            return true;
        }
    return false;
}

int api_check_model_prices(json_t *const files[3], const char *cwd, loom_status *st)
{
    for (int layer = 0; layer < 3; layer++) {
        const char *model;
        const json_t *entry;
        json_object_foreach(json_object_get(files[layer], "models"), model, entry) {
            const json_t *price = json_object_get(entry, "price");
            char why[160];
            if (!price || !price_problem(price, why, sizeof why))
                continue;
            char *path = settings_layer_path((settings_layer)layer, cwd);
            api_status_set(st, LOOM_ERR_CONFIG, "%s: models.%s.%s", path, model, why);
            free(path);
            return -1;
        }
    }
    return 0;
}

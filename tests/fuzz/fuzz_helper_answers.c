/* fuzz_helper_answers.c — libFuzzer target for what helper calls read from
 * outside: a judge's answer text (hooks/judge.c's hook_judge_parse, which
 * prompt and agent hooks trust with nothing but ok/reason) and the
 * helperModels / modelTiers settings (provider/helper.c, a repository's
 * file once the workspace is trusted). The input is tried as both. A
 * verdict must be an object whose only keys are a boolean "ok" and a
 * string "reason"; a configuration either loads or names its file and key;
 * neither may crash or leak. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hooks/judge.h"
#include "provider/helper.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    json_t *v = hook_judge_parse(text);
    if (v) {
        const char *key;
        json_t *m;
        if (!json_is_boolean(json_object_get(v, "ok")))
            abort();
        json_object_foreach(v, key, m) {
            if (strcmp(key, "ok") && !(strcmp(key, "reason") == 0 && json_is_string(m)))
                abort();
        }
        json_decref(v);
    }
    json_t *doc = json_loadb(text, size, 0, NULL);
    if (json_is_object(doc)) {
        provider_config cfg = {.model = "claude-sonnet-5-5"};
        helper_router *r = helper_router_new(&cfg);
        const char *name = ".loom/settings.json";
        loom_error err;
        if (helper_router_configure(r, &doc, &name, 1, &err) != 0 &&
            !strstr(err.message, ".loom/settings.json"))
            abort();
        for (int p = 0; p < HELPER_PURPOSE_COUNT; p++)
            if (!helper_resolve(r, (helper_purpose)p, HELPER_TIER_DEFAULT, NULL, NULL))
                abort();
        helper_router_free(r);
    }
    json_decref(doc);
    free(text);
    return 0;
}

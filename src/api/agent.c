/* agent.c — loom_agent: a resolved provider, the tool registry and the
 * system prompt, made once and shared by the sessions and runs under it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/str.h"
#include "context/system_prompt.h"

static int parse_long(const json_t *values, const char *key, long min, long max, long *out,
                      loom_status *st)
{
    const char *v = api_value(values, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || end == v || n < min || n > max)
        return api_status_set(st, LOOM_ERR_CONFIG, "%s must be a whole number from %ld to %ld, not \"%s\"",
                              key, min, max, v);
    *out = n;
    return 0;
}

static int parse_double(const json_t *values, const char *key, double *out, loom_status *st)
{
    const char *v = api_value(values, key);
    if (!v)
        return 0;
    char *end;
    double d = strtod(v, &end);
    if (*end || end == v || d < 0)
        return api_status_set(st, LOOM_ERR_CONFIG, "%s must be a non-negative number, not \"%s\"",
                              key, v);
    *out = d;
    return 0;
}

static int parse_bool(const json_t *values, const char *key, bool *out, loom_status *st)
{
    const char *v = api_value(values, key);
    if (!v)
        return 0;
    if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes"))
        *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no"))
        *out = false;
    else
        return api_status_set(st, LOOM_ERR_CONFIG, "%s must be true or false, not \"%s\"", key, v);
    return 0;
}

loom_agent *loom_agent_new(const loom_config *cfg, loom_status *st)
{
    loom_agent *a = xcalloc(1, sizeof *a);
    a->values = json_deep_copy(cfg->values);
    for (int i = 0; i < 3; i++)
        a->files[i] = cfg->files[i] ? json_incref(cfg->files[i]) : NULL;
    provider_config_init(&a->provider);
    const json_t *v = a->values;
    loom_error err;
    loom_error_clear(&err);
    long max_turns = LOOP_DEFAULT_MAX_TURNS, max_retries = -1,
         threshold = LOOP_DEFAULT_REPEAT_THRESHOLD, max_tokens = 0;
    bool stream = true;
    double max_usd = 0, price_in = 0, price_out = 0;
    if (parse_long(v, "max_turns", 1, 1000000, &max_turns, st) ||
        parse_long(v, "max_retries", 0, 100, &max_retries, st) ||
        parse_long(v, "loop_threshold", 2, 1000, &threshold, st) ||
        parse_long(v, "max_tokens_total", 0, 1L << 40, &max_tokens, st) ||
        parse_bool(v, "stream", &stream, st) || parse_bool(v, "interactive", &a->interactive, st) ||
        parse_double(v, "max_usd", &max_usd, st) ||
        parse_double(v, "price_input_per_mtok", &price_in, st) ||
        parse_double(v, "price_output_per_mtok", &price_out, st))
        goto fail;
    const char *provider = api_value(v, "provider");
    if (provider && provider_kind_parse(provider, &a->provider.kind) != 0) {
        api_status_set(st, LOOM_ERR_CONFIG,
                       "provider \"%s\" is not one of anthropic, openai, openai-responses, replay",
                       provider);
        goto fail;
    }
    a->provider.model = xstrdup(api_value(v, "model"));
    a->provider.base_url = xstrdup(api_value(v, "base_url"));
    a->provider.api_key = xstrdup(api_value(v, "api_key"));
    a->provider.cassette = xstrdup(api_value(v, "cassette"));
    a->provider.max_retries = (int)max_retries;
    a->provider.stream = stream;
    if (provider_config_resolve(&a->provider, &err) != 0) {
        api_status_from(st, &err);
        goto fail;
    }
    a->fallback_model = xstrdup(api_value(v, "fallback_model"));

    char buf[4096];
    const char *cwd = api_value(v, "cwd");
    if (!cwd)
        cwd = getcwd(buf, sizeof buf) ? buf : "/";
    char *real = realpath(cwd, NULL);
    if (!real) {
        api_status_set(st, LOOM_ERR_CONFIG, "working directory %s: %s", cwd, strerror(errno));
        goto fail;
    }
    a->cwd = real;

    a->tools = tool_registry_new();
    if (tool_registry_add_builtins(a->tools, &err) != 0) {
        api_status_from(st, &err);
        goto fail;
    }
    loom_str sys = LOOM_STR_INIT;
    const char *custom = api_value(v, "system_prompt");
    str_puts(&sys, custom ? custom : system_prompt_static());
    const char *extra = api_value(v, "append_system_prompt");
    if (extra)
        str_printf(&sys, "\n%s\n", extra);
    a->system_static = str_steal(&sys);
    a->system_dynamic = system_prompt_dynamic_report(a->cwd, &a->memory);

    a->params = (loop_params){
        .provider = &a->provider,
        .fallback_model = a->fallback_model,
        .tools = a->tools,
        .system_static = a->system_static,
        .system_dynamic = a->system_dynamic,
        .memory = &a->memory,
        .max_turns = (int)max_turns,
        .repeat_threshold = (int)threshold,
        .max_tokens_total = max_tokens,
        .max_usd = max_usd,
        .price_input_per_mtok = price_in,
        .price_output_per_mtok = price_out,
    };
    api_status_ok(st);
    return a;
fail:
    loom_agent_free(a);
    return NULL;
}

const char *loom_agent_model(const loom_agent *a)
{
    return a->provider.model;
}

const char *loom_agent_provider(const loom_agent *a)
{
    return provider_kind_name(a->provider.kind);
}

void loom_agent_free(loom_agent *a)
{
    if (!a)
        return;
    json_decref(a->values);
    for (int i = 0; i < 3; i++)
        json_decref(a->files[i]);
    provider_config_free(&a->provider);
    free(a->fallback_model);
    tool_registry_free(a->tools);
    free(a->cwd);
    free(a->system_static);
    free(a->system_dynamic);
    memory_report_free(&a->memory);
    free(a);
}

/* provider_config.c — which provider, model, endpoint and key a run uses.
 *
 * Precedence: values set by the caller (CLI flags) > LOOM_* variables > the
 * provider's usual variables (ANTHROPIC_*, OPENAI_*) > built-in defaults.
 * When nothing names a provider it is inferred from which key or base URL is
 * present; with none at all the error says exactly what to set. */
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "provider/models.h"
#include "provider/provider.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static void set_if_unset(char **slot, const char *value)
{
    if (!*slot && value)
        *slot = xstrdup(value);
}

static long env_long(const char *name, long fallback)
{
    const char *v = env(name);
    if (!v)
        return fallback;
    char *end;
    long n = strtol(v, &end, 10);
    return (*end == '\0' && n >= 0) ? n : fallback;
}

void provider_config_init(provider_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kind = PROVIDER_AUTO;
    cfg->max_retries = -1;
    cfg->retry_base_ms = -1;
    cfg->retry_max_ms = -1;
    cfg->connect_timeout_ms = -1;
    cfg->idle_timeout_ms = -1;
    cfg->request_timeout_ms = -1;
    cfg->context_window = -1;
    cfg->max_output_tokens = -1;
    cfg->stream = true;
}

static const struct {
    const char *name;
    provider_kind kind;
} kind_names[] = {
    {"anthropic", PROVIDER_ANTHROPIC},
    {"openai", PROVIDER_OPENAI_CHAT},
    {"openai-chat", PROVIDER_OPENAI_CHAT},
    {"openai-responses", PROVIDER_OPENAI_RESPONSES},
    {"responses", PROVIDER_OPENAI_RESPONSES},
    {"replay", PROVIDER_REPLAY},
};

int provider_kind_parse(const char *name, provider_kind *out)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcmp(name, kind_names[i].name) == 0) {
            *out = kind_names[i].kind;
            return 0;
        }
    return -1;
}

const char *provider_kind_name(provider_kind kind)
{
    switch (kind) {
    case PROVIDER_ANTHROPIC: return "anthropic";
    case PROVIDER_OPENAI_CHAT: return "openai";
    case PROVIDER_OPENAI_RESPONSES: return "openai-responses";
    case PROVIDER_REPLAY: return "replay";
    case PROVIDER_AUTO: break;
    }
    return "auto";
}

const provider_codec_ops *provider_codec(provider_kind kind)
{
    switch (kind) {
    case PROVIDER_ANTHROPIC: return &anthropic_codec;
    case PROVIDER_OPENAI_CHAT: return &openai_chat_codec;
    case PROVIDER_OPENAI_RESPONSES: return &openai_responses_codec;
    default: return NULL;
    }
}

static int infer_kind(provider_config *cfg, loom_error *err)
{
    const char *named = env("LOOM_PROVIDER");
    if (named) {
        if (provider_kind_parse(named, &cfg->kind) != 0)
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "LOOM_PROVIDER=%s is not a provider (anthropic, openai, "
                                  "openai-responses, replay)", named);
        return 0;
    }
    if (cfg->cassette || env("LOOM_CASSETTE"))
        cfg->kind = PROVIDER_REPLAY;
    else if (env("ANTHROPIC_API_KEY") || env("ANTHROPIC_BASE_URL"))
        cfg->kind = PROVIDER_ANTHROPIC;
    else if (env("OPENAI_API_KEY") || env("OPENAI_BASE_URL"))
        cfg->kind = PROVIDER_OPENAI_CHAT;
    else
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "no model provider is configured: set ANTHROPIC_API_KEY or "
                              "OPENAI_API_KEY (with OPENAI_BASE_URL for a local server), or "
                              "use --provider replay --cassette FILE to run offline");
    return 0;
}

int provider_config_resolve(provider_config *cfg, loom_error *err)
{
    if (cfg->kind == PROVIDER_AUTO && infer_kind(cfg, err) != 0)
        return -(int)err->code;

    bool anthropic = cfg->kind == PROVIDER_ANTHROPIC;
    bool given_key = cfg->api_key != NULL;
    const char *default_url = NULL;
    const char *default_model = NULL;
    switch (cfg->kind) {
    case PROVIDER_ANTHROPIC:
        set_if_unset(&cfg->base_url, env("LOOM_BASE_URL"));
        set_if_unset(&cfg->base_url, env("ANTHROPIC_BASE_URL"));
        set_if_unset(&cfg->api_key, env("LOOM_API_KEY"));
        set_if_unset(&cfg->api_key, env("ANTHROPIC_API_KEY"));
        set_if_unset(&cfg->model, env("LOOM_MODEL"));
        set_if_unset(&cfg->model, env("ANTHROPIC_MODEL"));
        default_url = "https://api.anthropic.com";
        default_model = MODELS_DEFAULT_ANTHROPIC;
        break;
    case PROVIDER_OPENAI_CHAT:
    case PROVIDER_OPENAI_RESPONSES:
        set_if_unset(&cfg->base_url, env("LOOM_BASE_URL"));
        set_if_unset(&cfg->base_url, env("OPENAI_BASE_URL"));
        set_if_unset(&cfg->api_key, env("LOOM_API_KEY"));
        set_if_unset(&cfg->api_key, env("OPENAI_API_KEY"));
        set_if_unset(&cfg->model, env("LOOM_MODEL"));
        set_if_unset(&cfg->model, env("OPENAI_MODEL"));
        default_url = "https://api.openai.com/v1";
        default_model = MODELS_DEFAULT_OPENAI;
        break;
    case PROVIDER_REPLAY:
        set_if_unset(&cfg->cassette, env("LOOM_CASSETTE"));
        set_if_unset(&cfg->model, env("LOOM_MODEL"));
        default_model = "replay";
        if (!cfg->cassette)
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "the replay provider needs a cassette: --cassette FILE "
                                  "or LOOM_CASSETTE");
        break;
    case PROVIDER_AUTO:
        return loom_error_set(err, LOOM_ERR_INTERNAL, "provider kind unresolved");
    }
    /* The variable a refused key points at (provider.c): the first of the
     * chain above that is set. */
    const char *source = given_key ? "the api_key setting" : NULL;
    const char *vendor_var = anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    if (!source && cfg->api_key)
        source = env("LOOM_API_KEY") ? "LOOM_API_KEY" : vendor_var;
    snprintf(cfg->key_source, sizeof cfg->key_source, "%s", source ? source : "");
    bool default_endpoint = !cfg->base_url;
    set_if_unset(&cfg->base_url, default_url);
    set_if_unset(&cfg->model, default_model);
    /* An alias (sonnet, opus, …) becomes the id it stands for before any
     * request: the APIs know ids only (models.c). */
    if (models_is_alias(cfg->model)) {
        char *id = xstrdup(models_resolve(cfg->model));
        free(cfg->model);
        cfg->model = id;
    }

    /* A public endpoint without a key can only fail; say so before sending. */
    if (cfg->kind != PROVIDER_REPLAY && default_endpoint && !cfg->api_key)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s needs an API key: set %s",
                              provider_kind_name(cfg->kind),
                              anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");

    if (cfg->max_retries < 0)
        cfg->max_retries = (int)env_long("LOOM_MAX_RETRIES", 3);
    if (cfg->retry_base_ms < 0)
        cfg->retry_base_ms = env_long("LOOM_RETRY_BASE_MS", 500);
    if (cfg->retry_max_ms < 0)
        cfg->retry_max_ms = env_long("LOOM_RETRY_MAX_MS", 60000);
    if (cfg->connect_timeout_ms < 0)
        cfg->connect_timeout_ms = env_long("LOOM_CONNECT_TIMEOUT_MS", 10000);
    if (cfg->idle_timeout_ms < 0)
        cfg->idle_timeout_ms = env_long("LOOM_IDLE_TIMEOUT_MS", 300000);
    if (cfg->request_timeout_ms < 0)
        cfg->request_timeout_ms = env_long("LOOM_REQUEST_TIMEOUT_MS", 600000);
    model_info info = models_lookup(cfg->model);
    if (cfg->context_window < 0)
        cfg->context_window = env_long("LOOM_CONTEXT_WINDOW", (long)info.context_window);
    if (cfg->max_output_tokens < 0)
        cfg->max_output_tokens = (int)env_long("LOOM_MAX_OUTPUT_TOKENS", info.max_output_tokens);
    return 0;
}

void provider_config_free(provider_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->model);
    free(cfg->base_url);
    free(cfg->api_key);
    free(cfg->cassette);
    memset(cfg, 0, sizeof *cfg);
}

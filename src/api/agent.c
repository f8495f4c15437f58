/* agent.c — loom_agent: a resolved provider, the tool registry and the
 * system prompt, made once and shared by the sessions and runs under it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/str.h"
#include "context/budget.h"
#include "context/ladder.h"
#include "context/system_prompt.h"
#include "ext/styles/styles.h"
#include "provider/models.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_policy.h"
#include "tools/builtin/web_search.h"

/* renew reloads C_memory: the dynamic system prompt, made anew. */
static char *reload_dynamic(void *ctx)
{
    loom_agent *a = ctx;
    secrets_deny deny;
    return system_prompt_dynamic(a->cwd, a->trusted, api_compat_claude(a->values, a->files),
                                 api_agent_deny(a, &deny));
}

/* A model's entry under "models" in the settings files, local first; an
 * alias's entry (models.sonnet) or its id's (models.claude-sonnet-5-5). */
static const json_t *model_settings(const loom_agent *a, const char *model)
{
    const char *id = models_resolve(model);
    for (int i = 2; i >= 0 && model; i--) {
        const json_t *all = json_object_get(a->files[i], "models");
        const json_t *m = json_object_get(all, model);
        if (!json_is_object(m))
            m = json_object_get(all, id);
        if (json_is_object(m))
            return m;
    }
    return NULL;
}

static bool price_field(const json_t *price, const char *key, double *out)
{
    const json_t *v = json_object_get(price, key);
    if (!json_is_number(v) || json_number_value(v) < 0)
        return false;
    *out = json_number_value(v);
    return true;
}

/* The loop's price of a model (loop_params.price_for; internal.h): the model's
 * settings entry, "models": {"<id>": {"price": {"input", "output",
 * "cache_write"?, "cache_read"?, "cache_write_1h"?}}} (USD per million
 * tokens; cache prices default to 1.25×, 0.1× and 2× input), else the
 * dated table's. */
bool api_agent_price(void *ctx, const char *model, model_price *out)
{
    const loom_agent *a = ctx;
    const json_t *price = json_object_get(model_settings(a, model), "price");
    memset(out, 0, sizeof *out);
    if (price_field(price, "input", &out->input) && price_field(price, "output", &out->output)) {
        if (!price_field(price, "cache_write", &out->cache_write))
            out->cache_write = out->input * 1.25;
        if (!price_field(price, "cache_read", &out->cache_read))
            out->cache_read = out->input * 0.1;
        if (!price_field(price, "cache_write_1h", &out->cache_write_1h))
            out->cache_write_1h = out->input * 2.0;
        return true;
    }
    return models_price(model, out);
}

/* Context window and output cap: options first, then the model's settings
 * entry, then (in provider_config_resolve) the environment and the table. */
static int parse_model_limits(loom_agent *a, loom_status *st)
{
    long window = -1, max_out = -1;
    if (api_option_long(a->values, "context_window", &window, st) ||
        api_option_long(a->values, "max_output_tokens", &max_out, st))
        return -1;
    const json_t *m = model_settings(a, api_value(a->values, "model"));
    if (window < 0 && json_is_integer(json_object_get(m, "contextWindow")))
        window = (long)json_integer_value(json_object_get(m, "contextWindow"));
    if (max_out < 0 && json_is_integer(json_object_get(m, "maxOutputTokens")))
        max_out = (long)json_integer_value(json_object_get(m, "maxOutputTokens"));
    if (window >= 0)
        a->provider.context_window = window;
    if (max_out >= 0)
        a->provider.max_output_tokens = (int)max_out;
    return 0;
}

/* Extended thinking: the option "thinking" (settings or --thinking), else
 * the model's settings entry (models.<name>.thinking, the same forms). */
static int parse_thinking(loom_agent *a, loom_status *st)
{
    const char *text = api_value(a->values, "thinking");
    char *owned = NULL;
    if (!text) {
        const json_t *m = json_object_get(model_settings(a, a->provider.model), "thinking");
        if (json_is_boolean(m))
            text = json_is_true(m) ? "true" : "false";
        else if (json_is_integer(m) || json_is_object(m))
            text = owned = json_dump_compact(m);
        else if (json_is_string(m))
            text = json_string_value(m);
    }
    int budget = 0;
    int rc = text ? api_thinking_budget(text, &budget, st) : 0;
    free(owned);
    a->provider.thinking_budget = budget;
    return rc;
}

/* The reasoning effort: the option first, then the model's settings entry
 * ("reasoningEffort"), both checked the same way. */
static int parse_reasoning_effort(loom_agent *a, loom_status *st)
{
    const char *v = api_value(a->values, "reasoning_effort");
    if (!v)
        v = json_string_value(json_object_get(model_settings(a, api_value(a->values, "model")),
                                              "reasoningEffort"));
    if (!v)
        return 0;
    if (api_option_check(api_option_find("reasoning_effort"), v, st) != 0)
        return -1;
    snprintf(a->provider.reasoning_effort, sizeof a->provider.reasoning_effort, "%s", v);
    return 0;
}

/* Compaction thresholds (option "compaction" as JSON, else the model's
 * settings entry), auto-compaction, renew's λ and the token budget. */
static int parse_context_options(loom_agent *a, loom_status *st)
{
    ladder_config_default(&a->params.context.ladder);
    const json_t *obj = NULL;
    json_t *parsed = NULL;
    const char *text = api_value(a->values, "compaction");
    if (text) {
        json_error_t je;
        parsed = json_loads(text, 0, &je);
        if (!parsed)
            return api_status_set(st, LOOM_ERR_CONFIG, "compaction: not JSON: %s", je.text);
        obj = parsed;
    } else {
        obj = json_object_get(model_settings(a, a->provider.model), "compaction");
    }
    char why[256];
    int rc = ladder_config_from_json(&a->params.context.ladder, obj, why, sizeof why);
    json_decref(parsed);
    if (rc != 0)
        return api_status_set(st, LOOM_ERR_CONFIG, "compaction: %s", why);
    bool auto_compact = true;
    if (api_option_bool(a->values, "auto_compact", &auto_compact, st) ||
        api_option_double(a->values, "renew_lambda", &a->params.context.renew_lambda, st))
        return -1;
    a->params.context.no_auto_compact = !auto_compact;
    const char *budget = api_value(a->values, "token_budget");
    if (budget && a->params.max_tokens_total == 0) {
        if (api_option_check(api_option_find("token_budget"), budget, st) != 0)
            return -1;
        a->params.max_tokens_total = budget_parse_amount(budget[0] == '+' ? budget + 1 : budget);
    }
    return 0;
}

/* The "heartbeat" block (settings, or the option as JSON text). */
static int parse_heartbeat(loom_agent *a, loom_status *st)
{
    const char *text = api_value(a->values, "heartbeat");
    if (!text)
        return 0;
    json_error_t je;
    json_t *block = json_loads(text, 0, &je);
    if (!block)
        return api_status_set(st, LOOM_ERR_CONFIG, "heartbeat: not JSON: %s", je.text);
    loom_error err;
    int rc = heartbeat_config_from_json(block, a->cwd, &a->heartbeat, &err);
    json_decref(block);
    if (rc != 0) {
        api_status_from(st, &err);
        return -1;
    }
    return 0;
}

static void agents_block(const json_t *b, agents_config *c)
{
    if (json_is_boolean(b)) {
        c->enabled = json_is_true(b);
        return;
    }
    if (!json_is_object(b))
        return;
    const json_t *v;
    if (json_is_boolean(v = json_object_get(b, "enabled")))
        c->enabled = json_is_true(v);
    if (json_is_integer(v = json_object_get(b, "maxDepth")) && json_integer_value(v) >= 0)
        c->max_depth = (int)json_integer_value(v);
    if (json_is_integer(v = json_object_get(b, "maxRunning")) && json_integer_value(v) > 0)
        c->max_running = (int)json_integer_value(v);
    if (json_is_integer(v = json_object_get(b, "maxTurns")) && json_integer_value(v) > 0)
        c->max_turns = (int)json_integer_value(v);
    if (json_is_boolean(v = json_object_get(b, "inheritMode")))
        c->inherit_mode = json_is_true(v);
    if (json_is_string(v = json_object_get(b, "merge")))
        c->merge_auto = !strcmp(json_string_value(v), "auto");
    const json_t *bus = json_object_get(b, "bus");
    if (json_is_number(v = json_object_get(bus, "delta_min")))
        c->bus_delta_min = json_number_value(v);
}

int api_agents_config(const json_t *values, json_t *const files[3], agents_config *out,
                      loom_status *st)
{
    agents_config_defaults(out);
    /* user, project, local: the later file wins. */
    for (int i = 0; i < 3; i++) {
        if (!files[i])
            continue;
        agents_block(json_object_get(files[i], "agents"), out);
        const json_t *d = json_object_get(json_object_get(files[i], "runtime"), "max_depth");
        if (json_is_integer(d) && json_integer_value(d) >= 0)
            out->max_depth = (int)json_integer_value(d);
    }
    const char *env = getenv("LOOM_AGENTS");
    if (env && *env)
        out->enabled = strcmp(env, "0") && strcmp(env, "off") && strcmp(env, "false");
    bool on = out->enabled;
    if (api_option_bool(values, "agents", &on, st) != 0)
        return -1;
    out->enabled = on;
    /* max_agent_depth (an operator's cap, e.g. a runtime profile's) only lowers
     * what the settings allow; 0 means no sub-agents at all. */
    const char *cap = api_value(values, "max_agent_depth");
    if (cap) {
        int d = atoi(cap);
        if (d < out->max_depth)
            out->max_depth = d;
        if (d == 0)
            out->enabled = false;
    }
    return 0;
}

/* Sub-agents: the settings, and when on the catalog and the Agent and
 * SendMessage tools after the built-ins (the order of docs/tools.md stays
 * a prefix of every request). */
static int setup_agents(loom_agent *a, loom_status *st)
{
    if (api_agents_config(a->values, a->files, &a->agents, st) != 0)
        return -1;
    if (!a->agents.enabled)
        return 0;
    loom_error err;
    loom_error_clear(&err);
    agent_catalog_opts co = {.cwd = a->cwd, .trusted = a->trusted, .user_settings = a->files[0],
                             .claude_off = !a->compat_claude, .plugins = a->plugin_roots,
                             .n_plugins = a->n_plugin_roots};
    a->agents_catalog = agent_catalog_load(&co, &err);
    if (!a->agents_catalog) {
        api_status_from(st, &err);
        return -1;
    }
    for (size_t i = 0; i < agent_catalog_warning_count(a->agents_catalog); i++)
        json_array_append_new(a->warnings,
                              json_string(agent_catalog_warning(a->agents_catalog, i)));
    if (agents_add_tools(a->tools, a->agents_catalog, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    return 0;
}

/* The filtered files' "sandbox" blocks merged the way sandbox_policy.c
 * merges them from disk (a later scalar wins, path lists add up) — from the
 * documents config.c filtered, so an untrusted project cannot loosen the
 * sandbox. -1 when they do not make a policy (p left empty). */
static int filtered_sandbox(const loom_agent *a, sandbox_policy *p)
{
    json_t *acc = json_object();
    for (int i = 0; i < 3; i++) {
        /* An object or null (not set): the settings schema saw to that. */
        const json_t *block = json_object_get(a->files[i], "sandbox");
        if (json_is_object(block))
            sandbox_settings_merge(acc, block);
    }
    loom_error err;
    loom_error_clear(&err);
    int rc = sandbox_policy_from_settings(acc, a->cwd, p, &err);
    json_decref(acc);
    if (rc != 0)
        sandbox_policy_free(p);
    return rc == 0 ? 0 : -1;
}

/* The agent's command sandbox, held by it and copied into each session's
 * governance (never a process-wide default, so two agents in one process
 * keep their own). Untrusted with the settings loaded, the filtered files
 * decide — read now, not at the first command, which would also take in a
 * sandbox block written into the folder after the filter ran. Otherwise,
 * or when the filtered blocks are at fault, the sandbox reads the settings
 * files for the cwd itself (sandbox_policy_load), and a fault found there
 * is kept as sandbox_error: every command is then refused with it. */
static void resolve_sandbox(loom_agent *a, bool filtered)
{
    a->sandbox = xcalloc(1, sizeof *a->sandbox);
    if (filtered && filtered_sandbox(a, a->sandbox) == 0)
        return;
    loom_error err;
    loom_error_clear(&err);
    if (sandbox_policy_load(a->cwd, a->sandbox, &err) != 0) {
        a->sandbox_error = xstrdup(err.message);
        sandbox_policy_free(a->sandbox);
        free(a->sandbox);
        a->sandbox = NULL;
    }
}

const secrets_deny *api_agent_deny(const loom_agent *a, secrets_deny *buf)
{
    return sandbox_secrets_deny(a->sandbox, buf);
}

loom_agent *loom_agent_new(const loom_config *cfg, loom_status *st)
{
    API_CHECK_ARG(st, cfg, NULL);
    loom_agent *a = xcalloc(1, sizeof *a);
    a->values = json_deep_copy(cfg->values);
    for (int i = 0; i < 3; i++)
        a->files[i] = cfg->files[i] ? json_incref(cfg->files[i]) : NULL;
    a->notices = cfg->notices ? json_incref(cfg->notices) : json_array();
    a->warnings = cfg->warnings ? json_incref(cfg->warnings) : json_array();
    a->sources = cfg->sources ? json_incref(cfg->sources) : json_array();
    a->trusted = cfg->trusted;
    provider_config_init(&a->provider);
    const json_t *v = a->values;
    loom_error err;
    loom_error_clear(&err);
    long max_turns = LOOP_DEFAULT_MAX_TURNS, max_retries = -1,
         threshold = LOOP_DEFAULT_REPEAT_THRESHOLD, max_tokens = 0;
    bool stream = true;
    double max_usd = 0, price_in = 0, price_out = 0;
    if (api_option_long(v, "max_turns", &max_turns, st) ||
        api_option_long(v, "max_retries", &max_retries, st) ||
        api_option_long(v, "loop_threshold", &threshold, st) ||
        api_option_long(v, "max_tokens_total", &max_tokens, st) ||
        api_option_bool(v, "stream", &stream, st) || api_option_bool(v, "interactive", &a->interactive, st) ||
        api_option_double(v, "max_usd", &max_usd, st) ||
        api_option_double(v, "price_input_per_mtok", &price_in, st) ||
        api_option_double(v, "price_output_per_mtok", &price_out, st))
        goto fail;
    const char *provider = api_value(v, "provider");
    if (provider && (api_option_check(api_option_find("provider"), provider, st) != 0 ||
                     provider_kind_parse(provider, &a->provider.kind) != 0))
        goto fail;
    a->provider.model = xstrdup(api_value(v, "model"));
    a->provider.base_url = xstrdup(api_value(v, "base_url"));
    a->provider.api_key = xstrdup(api_value(v, "api_key"));
    a->provider.cassette = xstrdup(api_value(v, "cassette"));
    a->provider.max_retries = (int)max_retries;
    a->provider.stream = stream;
    if (parse_model_limits(a, st) != 0 || parse_reasoning_effort(a, st) != 0)
        goto fail;
    if (provider_config_resolve(&a->provider, &err) != 0) {
        api_status_from(st, &err);
        goto fail;
    }
    if (parse_thinking(a, st) != 0)
        goto fail;
    a->fallback_model = xstrdup(models_resolve(api_value(v, "fallback_model")));

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
    if (api_check_model_prices(a->files, cfg->workspace ? cfg->workspace : a->cwd, st) != 0)
        goto fail;
    resolve_sandbox(a, !cfg->trusted && cfg->workspace); /* settings loaded, untrusted */
    /* --add-dir (the user's own flag, never a file's) is workspace for the
     * sandbox too: a command may write there, as an edit may. */
    const char *dirs = api_value(v, "add_dirs");
    for (const char *p = dirs; a->sandbox && p && *p;) {
        size_t len = strcspn(p, "\n");
        if (len) {
            char *d = xstrndup(p, len);
            sandbox_paths_add(&a->sandbox->writable, d, a->cwd);
            free(d);
        }
        p += len + (p[len] == '\n');
    }

    a->tools = tool_registry_new();
    if (tool_registry_add_builtins(a->tools, &err) != 0) {
        api_status_from(st, &err);
        goto fail;
    }
    /* Plugins before the agent catalog: their agents/ folders join it. */
    if (api_ext_load(a, st) != 0 || api_web_search_add(a, st) != 0 || setup_agents(a, st) != 0)
        goto fail;
    api_plugins_warn_untrusted(a);
    loom_str sys = LOOM_STR_INIT;
    const char *custom = api_value(v, "system_prompt");
    if (custom) {
        str_puts(&sys, custom);
    } else {
        char *styled = api_styles_static(a); /* the active output style's (api/styles.c) */
        str_puts(&sys, styled);
        free(styled);
    }
    const char *extra = api_value(v, "append_system_prompt");
    if (extra)
        str_printf(&sys, "\n%s\n", extra);
    a->system_static = str_steal(&sys);
    secrets_deny deny;
    a->system_dynamic =
        system_prompt_dynamic_report(a->cwd, a->trusted, api_compat_claude(a->values, a->files),
                                     api_agent_deny(a, &deny), &a->memory);

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
        .price_for = api_agent_price,
        .price_ctx = a,
        .context = {.reload_system_dynamic = reload_dynamic, .reload_ctx = a},
    };
    if (parse_context_options(a, st) != 0 || parse_heartbeat(a, st) != 0)
        goto fail;
    api_telemetry_agent_init(a);
    api_status_ok(st);
    return a;
fail:
    loom_agent_free(a);
    return NULL;
}

const char *loom_agent_model(const loom_agent *a)
{
    return a ? a->provider.model : NULL;
}

char *loom_agent_status_line_json(const loom_agent *a)
{
    const char *v = a ? api_value(a->values, "status_line") : NULL;
    return v && *v ? xstrdup(v) : NULL;
}

const char *loom_agent_provider(const loom_agent *a)
{
    return a ? provider_kind_name(a->provider.kind) : NULL;
}

void loom_agent_free(loom_agent *a)
{
    if (!a)
        return;
    api_telemetry_agent_free(a);
    json_decref(a->values);
    for (int i = 0; i < 3; i++)
        json_decref(a->files[i]);
    provider_config_free(&a->provider);
    free(a->fallback_model);
    tool_registry_free(a->tools);
    web_search_tool_free(a->web_search);
    free(a->cwd);
    free(a->system_static);
    free(a->system_dynamic);
    memory_report_free(&a->memory);
    heartbeat_config_free(&a->heartbeat);
    if (a->sandbox) {
        sandbox_policy_free(a->sandbox);
        free(a->sandbox);
    }
    free(a->sandbox_error);
    json_decref(a->notices);
    json_decref(a->warnings);
    json_decref(a->sources);
    agent_catalog_free(a->agents_catalog);
    api_ext_free_agent(a);
    free(a->output_style);
    free(a);
}

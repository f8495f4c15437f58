/* options.c — the loom_config options: every key loom.h documents, what kind
 * of value it takes, and the one check of a value, used both when the caller
 * sets it (loom_config_set: a bad value is refused at once) and when the
 * agent reads it (values that came from the settings files never went
 * through loom_config_set). One table, so the two can never disagree and
 * loom.h's list can be checked against it. Threading: no state. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "context/budget.h"
#include "context/ladder.h"
#include "heartbeat/config.h"
#include "policy/perm_types.h"

/* A new option goes into base/settings.c's schema (top_keys) as well, or
 * settings files naming it get an unknown-key warning. */
static const api_option OPTIONS[] = {
    {"provider", API_OPT_PROVIDER, 0, 0},
    {"model", API_OPT_TEXT, 0, 0},
    {"base_url", API_OPT_TEXT, 0, 0},
    {"api_key", API_OPT_TEXT, 0, 0},
    {"cassette", API_OPT_TEXT, 0, 0},
    {"fallback_model", API_OPT_TEXT, 0, 0},
    {"cwd", API_OPT_TEXT, 0, 0},
    {"compat_claude", API_OPT_BOOL, 0, 0},
    {"system_prompt", API_OPT_TEXT, 0, 0},
    {"append_system_prompt", API_OPT_TEXT, 0, 0},
    {"max_turns", API_OPT_WHOLE, 1, 1000000},
    {"max_retries", API_OPT_WHOLE, 0, 100},
    {"stream", API_OPT_BOOL, 0, 0},
    {"permission_mode", API_OPT_MODE, 0, 0},
    {"loop_threshold", API_OPT_WHOLE, 2, 1000},
    {"max_tokens_total", API_OPT_WHOLE, 0, 1L << 40},
    {"max_usd", API_OPT_NUMBER, 0, 0},
    {"price_input_per_mtok", API_OPT_NUMBER, 0, 0},
    {"price_output_per_mtok", API_OPT_NUMBER, 0, 0},
    {"interactive", API_OPT_BOOL, 0, 0},
    {"allowed_tools", API_OPT_TEXT, 0, 0},
    {"disallowed_tools", API_OPT_TEXT, 0, 0},
    {"context_window", API_OPT_WHOLE, 1000, 1L << 32},
    {"max_output_tokens", API_OPT_WHOLE, 1, 1L << 24},
    {"reasoning_effort", API_OPT_EFFORT, 0, 0},
    {"token_budget", API_OPT_AMOUNT, 0, 0},
    {"auto_compact", API_OPT_BOOL, 0, 0},
    {"compaction", API_OPT_JSON, 0, 0},
    {"renew_lambda", API_OPT_NUMBER, 0, 0},
    {"heartbeat", API_OPT_JSON, 0, 0},
    {"add_dirs", API_OPT_TEXT, 0, 0},
    {"thinking", API_OPT_THINKING, API_THINKING_MIN, API_THINKING_MAX},
    {"mcp_config", API_OPT_JSON, 0, 0},
    {"strict_mcp_config", API_OPT_BOOL, 0, 0},
    {"agents", API_OPT_BOOL, 0, 0},
    {"output_style", API_OPT_TEXT, 0, 0},
    {"status_line", API_OPT_JSON, 0, 0},
    {"ask_tools", API_OPT_TEXT, 0, 0},
    {"approval_timeout_seconds", API_OPT_WHOLE, 1, 31536000},
    {"max_agent_depth", API_OPT_WHOLE, 0, 16},
    {"max_tool_seconds", API_OPT_WHOLE, 1, 86400},
};

const api_option *api_option_find(const char *key)
{
    for (size_t i = 0; key && i < sizeof OPTIONS / sizeof *OPTIONS; i++)
        if (strcmp(key, OPTIONS[i].key) == 0)
            return &OPTIONS[i];
    return NULL;
}

const api_option *api_option_at(size_t i)
{
    return i < sizeof OPTIONS / sizeof *OPTIONS ? &OPTIONS[i] : NULL;
}

static bool parse_whole(const char *v, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || end == v || n < min || n > max)
        return false;
    *out = n;
    return true;
}

static bool parse_number(const char *v, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (*end || end == v || d < 0)
        return false;
    *out = d;
    return true;
}

static bool parse_bool(const char *v, bool *out)
{
    if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes"))
        *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no"))
        *out = false;
    else
        return false;
    return true;
}

int api_thinking_budget(const char *v, int *out, loom_status *st)
{
    bool on;
    long n;
    if (parse_bool(v, &on) && strcmp(v, "1") != 0) {
        /* "1" is no budget anyone means; it is refused below as one. */
        *out = on ? API_THINKING_DEFAULT : 0;
        return 0;
    }
    if (!strcmp(v, "off") || !strcmp(v, "on")) {
        *out = !strcmp(v, "on") ? API_THINKING_DEFAULT : 0;
        return 0;
    }
    json_t *doc = NULL;
    const char *num = v;
    char buf[32];
    if (v[0] == '{') {
        doc = json_loads(v, 0, NULL);
        json_t *b = json_object_get(doc, "budget_tokens");
        num = NULL;
        if (json_is_integer(b) && json_object_size(doc) == 1) {
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(b));
            num = buf;
        }
        json_decref(doc);
    }
    if (num && parse_whole(num, 0, API_THINKING_MAX, &n) &&
        (n == 0 || n >= API_THINKING_MIN)) {
        *out = (int)n;
        return 0;
    }
    return api_status_set(st, LOOM_ERR_CONFIG,
                          "thinking must be true, false, a budget of %d to %d tokens or "
                          "{\"budget_tokens\": N}, not \"%s\"",
                          API_THINKING_MIN, API_THINKING_MAX, v);
}

int api_option_check(const api_option *o, const char *v, loom_status *st)
{
    long n;
    double d;
    bool b;
    switch (o->kind) {
    case API_OPT_TEXT:
        return 0;
    case API_OPT_WHOLE:
        if (parse_whole(v, o->min, o->max, &n))
            return 0;
        return api_status_set(st, LOOM_ERR_CONFIG,
                              "%s must be a whole number from %ld to %ld, not \"%s\"", o->key,
                              o->min, o->max, v);
    case API_OPT_NUMBER:
        if (parse_number(v, &d))
            return 0;
        return api_status_set(st, LOOM_ERR_CONFIG, "%s must be a non-negative number, not \"%s\"",
                              o->key, v);
    case API_OPT_BOOL:
        if (parse_bool(v, &b))
            return 0;
        return api_status_set(st, LOOM_ERR_CONFIG, "%s must be true or false, not \"%s\"", o->key,
                              v);
    case API_OPT_PROVIDER: {
        provider_kind k;
        if (provider_kind_parse(v, &k) == 0)
            return 0;
        return api_status_set(st, LOOM_ERR_CONFIG,
                              "provider \"%s\" is not one of anthropic, openai, openai-responses, "
                              "replay",
                              v);
    }
    case API_OPT_MODE: {
        perm_mode m;
        if (perm_mode_parse(v, &m) == 0)
            return 0;
        return api_status_set(st, LOOM_ERR_CONFIG,
                              "permission mode \"%s\" is not one of default, acceptEdits, plan, "
                              "auto, dontAsk, bypassPermissions, fullAccess, delegate",
                              v);
    }
    case API_OPT_THINKING: {
        int budget;
        return api_thinking_budget(v, &budget, st);
    }
    case API_OPT_AMOUNT:
        if (budget_parse_amount(v[0] == '+' ? v + 1 : v) > 0)
            return 0;
        return api_status_set(st, LOOM_ERR_CONFIG,
                              "%s \"%s\" is not an amount like 500k, 1.5m or 200000", o->key, v);
    case API_OPT_EFFORT:
        if (!strcmp(v, "low") || !strcmp(v, "medium") || !strcmp(v, "high"))
            return 0;
        return api_status_set(st, LOOM_ERR_CONFIG,
                              "%s \"%s\" is not one of low, medium, high", o->key, v);
    case API_OPT_JSON: {
        json_error_t je;
        json_t *doc = json_loads(v, 0, &je);
        if (!doc)
            return api_status_set(st, LOOM_ERR_CONFIG, "%s: not JSON: %s", o->key, je.text);
        int rc = 0;
        if (!strcmp(o->key, "compaction")) {
            /* The thresholds need nothing but themselves: check them now. */
            ladder_config c;
            ladder_config_default(&c);
            char why[256];
            if (ladder_config_from_json(&c, doc, why, sizeof why) != 0)
                rc = api_status_set(st, LOOM_ERR_CONFIG, "compaction: %s", why);
        } else if (!strcmp(o->key, "heartbeat")) {
            /* Its shape is checked now, so a bad block is refused where it
             * is set (a server profile at load); the agent parses it again
             * with its own cwd, against which relative paths resolve. */
            heartbeat_config c;
            loom_error err;
            if (heartbeat_config_from_json(doc, "/", &c, &err) != 0)
                rc = api_status_set(st, LOOM_ERR_CONFIG, "%s", err.message);
            heartbeat_config_free(&c);
        } else if (!strcmp(o->key, "status_line")) {
            /* Claude Code's statusLine: {"type": "command", "command", "padding"?};
             * one without a usable command leaves the built-in footer. */
            if (!json_is_object(doc))
                rc = api_status_set(st, LOOM_ERR_CONFIG,
                                    "status_line must be an object like {\"type\": \"command\", "
                                    "\"command\": \"…\"}");
        } else if (!strcmp(o->key, "mcp_config")) {
            /* --mcp-config values, each a file path or a JSON text. */
            bool ok = json_is_array(doc);
            for (size_t i = 0; ok && i < json_array_size(doc); i++)
                ok = json_is_string(json_array_get(doc, i));
            if (!ok)
                rc = api_status_set(st, LOOM_ERR_CONFIG,
                                    "mcp_config must be a JSON array of strings (file paths or "
                                    "JSON texts)");
        }
        json_decref(doc);
        return rc;
    }
    }
    return 0;
}

/* The option of key, which must be in the table and of kind. */
static const api_option *option_of(const char *key, api_option_kind kind)
{
    const api_option *o = api_option_find(key);
    assert(o && o->kind == kind);
    (void)kind;
    return o;
}

int api_option_long(const json_t *values, const char *key, long *out, loom_status *st)
{
    const api_option *o = option_of(key, API_OPT_WHOLE);
    const char *v = api_value(values, key);
    if (!v)
        return 0;
    if (api_option_check(o, v, st) != 0)
        return -1;
    parse_whole(v, o->min, o->max, out);
    return 0;
}

int api_option_double(const json_t *values, const char *key, double *out, loom_status *st)
{
    const api_option *o = option_of(key, API_OPT_NUMBER);
    const char *v = api_value(values, key);
    if (!v)
        return 0;
    if (api_option_check(o, v, st) != 0)
        return -1;
    parse_number(v, out);
    return 0;
}

int api_option_bool(const json_t *values, const char *key, bool *out, loom_status *st)
{
    const api_option *o = option_of(key, API_OPT_BOOL);
    const char *v = api_value(values, key);
    if (!v)
        return 0;
    if (api_option_check(o, v, st) != 0)
        return -1;
    parse_bool(v, out);
    return 0;
}

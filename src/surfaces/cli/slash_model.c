/* slash_model.c — /model and /cost (slash_model.h). The table comes from
 * loom_models_json (provider/models.c through loom.h): one row per alias
 * with the id it stands for, the context window and the price per million
 * tokens, the current model marked; /model NAME reopens the agent on NAME
 * (an alias resolves in the library). /cost sums the session's usage and
 * the runs' cost_usd, and names the prices it used (the table's, dated, or
 * the settings') or why there are none. Main
 * thread only. */
#include "surfaces/cli/slash_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/cli/slash.h"
#include "surfaces/cli/slash_agents.h"

static json_t *parse(char *text, const char *what)
{
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), what, &ignore) : NULL;
    free(text);
    return doc;
}

/* "$2", "$0.125", "$12.50" */
static void dollars(double v, char *buf, size_t size)
{
    snprintf(buf, size, "$%.3f", v);
    size_t n = strlen(buf);
    if (n > 4 && buf[n - 1] == '0')
        buf[--n] = '\0';
    if (n > 3 && !strcmp(buf + n - 3, ".00"))
        buf[n - 3] = '\0';
}

/* "$2 in · $10 out" (per million tokens) or "no price". */
static void price_text(const json_t *price, char *buf, size_t size)
{
    if (!json_is_object(price)) {
        snprintf(buf, size, "no price in the table");
        return;
    }
    char in[24], out[24];
    dollars(json_get_num(price, "input", 0), in, sizeof in);
    dollars(json_get_num(price, "output", 0), out, sizeof out);
    snprintf(buf, size, "%s in \xc2\xb7 %s out", in, out);
}

static void window_text(long long tokens, char *buf, size_t size)
{
    if (tokens >= 1000000 && tokens % 1000000 == 0)
        snprintf(buf, size, "%lldM", tokens / 1000000);
    else if (tokens >= 1000)
        snprintf(buf, size, "%lldk", tokens / 1000);
    else
        snprintf(buf, size, "%lld", tokens);
}

static void current_line(slash_host *r)
{
    term_printf(&r->out, TONE_PLAIN, "Model: %s (%s)\n", loom_agent_model(r->agent),
                loom_agent_provider(r->agent));
}

static void list_models(slash_host *r)
{
    json_t *doc = parse(loom_models_json(), "models");
    const char *now = loom_agent_model(r->agent);
    term_printf(&r->out, TONE_BOLD, "Models");
    term_printf(&r->out, TONE_DIM, " (aliases and prices as of %s; price per million tokens)\n",
                json_get_str(doc, "date", "?"));
    bool listed = false;
    size_t i;
    json_t *m;
    json_array_foreach(json_get_arr(doc, "models"), i, m) {
        const char *id = json_get_str(m, "id", "");
        bool cur = now && !strcmp(now, id);
        listed |= cur;
        char win[32], price[64], row[160];
        window_text(json_get_int(m, "context_window", 0), win, sizeof win);
        price_text(json_object_get(m, "price"), price, sizeof price);
        const char *alias = json_get_str(m, "alias", "");
        if (strcmp(alias, id))
            snprintf(row, sizeof row, "%-11s \xe2\x86\x92 %-19s", alias, id);
        else
            snprintf(row, sizeof row, "%-33s", id);
        term_printf(&r->out, cur ? TONE_BOLD : TONE_PLAIN, "%s %s ", cur ? "\xe2\x97\x8f" : " ",
                    row);
        term_printf(&r->out, TONE_DIM, "%5s  %s\n", win, price);
    }
    if (!listed && now) {
        json_t *info = parse(loom_model_info_json(now), "model");
        char win[32], price[64];
        window_text(json_get_int(info, "context_window", 0), win, sizeof win);
        price_text(json_object_get(info, "price"), price, sizeof price);
        term_printf(&r->out, TONE_BOLD, "\xe2\x97\x8f %-33s ", now);
        term_printf(&r->out, TONE_DIM, "%5s  %s\n", win, price);
        json_decref(info);
    }
    json_decref(doc);
    current_line(r);
    term_printf(&r->out, TONE_DIM, "/model NAME switches (an alias or any id); the conversation "
                "continues\n");
}

void slash_model(slash_host *r, const char *args)
{
    if (!*args) {
        list_models(r);
        return;
    }
    loom_status st;
    if (r->ops->reopen(r, args, &st) != 0) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        return;
    }
    const char *now = loom_agent_model(r->agent);
    term_printf(&r->out, TONE_PLAIN, "Model: %s (%s)", now, loom_agent_provider(r->agent));
    if (strcmp(now, args))
        term_printf(&r->out, TONE_DIM, " \xc2\xb7 %s", args);
    term_printf(&r->out, TONE_PLAIN, "\n");
}

/* Where the dollars came from: the prices the agent's runs use (the
 * table's row and its date, or the settings'), or why there are none. */
static void cost_source(slash_host *r, const json_t *info)
{
    const char *model = loom_agent_model(r->agent);
    const json_t *price = json_object_get(info, "price");
    if (!json_is_object(price)) {
        term_printf(&r->out, TONE_DIM, "Cost     unknown: Loom's price table (%s) has no price "
                    "for %s; set \"models\": {\"%s\": {\"price\": {\"input\": N, \"output\": "
                    "N}}} or price_input_per_mtok and price_output_per_mtok in settings\n",
                    json_get_str(info, "table_date", "?"), model, model);
        return;
    }
    char in[24], out[24], cw[24], cr[24], from[96];
    dollars(json_get_num(price, "input", 0), in, sizeof in);
    dollars(json_get_num(price, "output", 0), out, sizeof out);
    dollars(json_get_num(price, "cache_write", 0), cw, sizeof cw);
    dollars(json_get_num(price, "cache_read", 0), cr, sizeof cr);
    const char *source = json_get_str(info, "price_source", "table");
    if (!strcmp(source, "table"))
        snprintf(from, sizeof from, "as of %s", json_get_str(info, "table_date", "?"));
    else
        snprintf(from, sizeof from, "from %s", source);
    term_printf(&r->out, TONE_DIM, "Prices   %s per million tokens %s: input %s \xc2\xb7 output "
                "%s \xc2\xb7 cache write %s \xc2\xb7 cache read %s%s\n", model, from, in, out, cw,
                cr, json_object_get(price, "long_prompt") ? " (more above a long prompt)" : "");
}

/* The whole session file's calls (sub-agents' included) by model, each
 * kind of token and its dollars at the dated table's prices ("unknown" for
 * a model without a row): what /cost's totals are made of. */
static void cost_by_model(slash_host *r)
{
    loom_status st;
    json_t *doc = parse(loom_stats_file_json(loom_session_path(r->session), "model", &st),
                        "stats");
    const json_t *rows = json_object_get(doc, "rows");
    if (json_array_size(rows) == 0) {
        json_decref(doc);
        return;
    }
    term_printf(&r->out, TONE_PLAIN, "By model (this session's file, the table's prices)\n");
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        const json_t *t = json_object_get(row, "tokens"), *c = json_object_get(row, "cost_usd");
        if (json_get_int(row, "model_calls", 0) == 0)
            continue;
        char in[32], out[32], cr[32], cw[32], cost[32];
        slash_thousands(json_get_int(t, "input", 0), in, sizeof in);
        slash_thousands(json_get_int(t, "output", 0), out, sizeof out);
        slash_thousands(json_get_int(t, "cache_read", 0), cr, sizeof cr);
        slash_thousands(json_get_int(t, "cache_write", 0), cw, sizeof cw);
        if (json_is_number(c))
            snprintf(cost, sizeof cost, "$%.4f", json_number_value(c));
        else
            snprintf(cost, sizeof cost, "unknown");
        term_printf(&r->out, TONE_PLAIN, "  %s \xc2\xb7 %s \xc2\xb7 input %s \xc2\xb7 output %s "
                    "\xc2\xb7 cache read %s \xc2\xb7 cache write %s\n",
                    json_get_str(row, "key", "?"), cost, in, out, cr, cw);
    }
    json_decref(doc);
}

void slash_cost(slash_host *r, const char *args)
{
    (void)args;
    slash_usage u = r->carried;
    json_t *doc = parse(loom_session_usage_json(r->session), "usage");
    u.input += json_get_int(doc, "inputTokens", 0);
    u.output += json_get_int(doc, "outputTokens", 0);
    u.cache_read += json_get_int(doc, "cacheReadTokens", 0);
    u.cache_write += json_get_int(doc, "cacheCreationTokens", 0);
    u.reasoning += json_get_int(doc, "reasoningTokens", 0);
    json_decref(doc);
    char in[32], out[32], cr[32], cw[32], total[32];
    long long sum = u.input + u.output + u.cache_read + u.cache_write;
    slash_thousands(u.input, in, sizeof in);
    slash_thousands(u.output, out, sizeof out);
    slash_thousands(u.cache_read, cr, sizeof cr);
    slash_thousands(u.cache_write, cw, sizeof cw);
    slash_thousands(sum, total, sizeof total);
    term_printf(&r->out, TONE_PLAIN, "Tokens   %s total \xc2\xb7 input %s \xc2\xb7 output %s \xc2\xb7 "
                "cache read %s \xc2\xb7 cache write %s\n", total, in, out, cr, cw);
    json_t *info = parse(loom_agent_model_info_json(r->agent), "model");
    /* Nothing spent yet on a priced model costs $0, not "unknown". */
    bool priced = json_object_get(info, "price") != NULL;
    if (r->cost_usd >= 0 || (sum == 0 && priced))
        term_printf(&r->out, TONE_PLAIN, "Cost     $%.4f\n", r->cost_usd > 0 ? r->cost_usd : 0.0);
    else if (priced)
        term_printf(&r->out, TONE_DIM, "Cost     unknown: the replies so far came from a model "
                    "without a price\n");
    cost_source(r, info);
    json_decref(info);
    term_printf(&r->out, TONE_DIM, "Since this REPL opened the session.\n");
    cost_by_model(r);
    slash_agents_cost(r);
}

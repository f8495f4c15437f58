/* loop_usage.c — the run's accounting: tokens and cost of every model call
 * it makes (its turns, the permission classifier's, compaction's), and the
 * model.completed / model.usage events that report them. The token budget
 * and the cost cap read what is summed here. Run thread only. */
#include "runtime/loop_internal.h"

#include <string.h>

#include "governance/helper_log.h"
#include "provider/helper.h"
#include "provider/models.h"

/* Configured prices win over the table (provider/models.c). */
static bool configured(const loop_params *p)
{
    return p->price_input_per_mtok > 0 || p->price_output_per_mtok > 0;
}

static bool price_of(const loop_params *p, const char *model, model_price *out)
{
    return p->price_for ? p->price_for(p->price_ctx, model, out) : models_price(model, out);
}

bool loop_prices_known(const loop_params *p, const char *model)
{
    model_price ignore;
    return configured(p) || price_of(p, model, &ignore);
}

/* USD for one reply of model. Configured prices: cache writes cost 1.25×
 * (2× for 1-hour writes)
 * and cache reads 0.1× the input price (Anthropic's published multipliers;
 * OpenAI reports no writes). Otherwise the model's price (its settings
 * entry, else its row of the dated table), each kind at its own; a model it does not price costs 0 here
 * (the run's cost was known at its start: a fallback model without a row). */
static double usage_cost_of(const loop_state *st, const char *model, const msg_usage *u)
{
    const loop_params *p = &st->p;
    if (configured(p))
        return ((double)u->input_tokens * p->price_input_per_mtok +
                (double)(u->cache_creation_tokens - u->cache_creation_1h_tokens) *
                    p->price_input_per_mtok * 1.25 +
                (double)u->cache_creation_1h_tokens * p->price_input_per_mtok * 2.0 +
                (double)u->cache_read_tokens * p->price_input_per_mtok * 0.1 +
                (double)u->output_tokens * p->price_output_per_mtok) / 1e6;
    model_price price;
    if (!price_of(p, model, &price))
        return 0;
    return model_price_cost(&price, u->input_tokens, u->output_tokens, u->cache_creation_tokens,
                            u->cache_read_tokens, u->cache_creation_1h_tokens);
}

static double usage_cost(const loop_state *st, const msg_usage *u)
{
    return usage_cost_of(st, st->cfg.model, u);
}

/* The usage total changed: the dashboard's budget line follows it. */
static void usage_changed(loop_state *st)
{
    st->ctx.env.budget_used = msg_usage_total(&st->out->usage);
}

/* The spawn tree's pool draws on every call counted here (loop_tree_port);
 * usd < 0 when prices are unknown, so the tree's cost stays unknown too
 * (a sub-agent's cost_usd absent, not 0). */
static void charge_tree(loop_state *st, const msg_usage *u, double usd)
{
    const loop_tree_port *tree = &st->io->tree;
    if (tree->charge)
        tree->charge(tree->ctx, u, usd);
}

void loop_count_reply(loop_state *st, const msg_response *resp, int64_t started_us,
                      int64_t first_chunk_us)
{
    loop_result *out = st->out;
    msg_usage_add(&out->usage, &resp->usage);
    usage_changed(st);
    double cost = out->cost_usd >= 0 ? usage_cost(st, &resp->usage) : 0;
    if (out->cost_usd >= 0)
        out->cost_usd += cost;
    charge_tree(st, &resp->usage, out->cost_usd >= 0 ? cost : -1);
    out->turns = st->turn;
    json_t *u = msg_usage_to_json(&resp->usage);
    loop_emit(st->io, LOOM_EV_MODEL_COMPLETED, LOOM_VIS_USER, resp->request_id,
              event_model_completed(st->turn, resp->stop_reason, resp->request_id, u,
                                    out->cost_usd, resp->model, resp->response_id, started_us,
                                    first_chunk_us));
}

void loop_count_side_usage(loop_state *st, const char *purpose, const char *corr,
                           const char *tool, const msg_usage *u, unsigned calls)
{
    if (calls == 0)
        return;
    loop_result *out = st->out;
    msg_usage_add(&out->usage, u);
    usage_changed(st);
    double cost = out->cost_usd >= 0 ? usage_cost(st, u) : 0;
    if (out->cost_usd >= 0)
        out->cost_usd += cost;
    charge_tree(st, u, out->cost_usd >= 0 ? cost : -1);
    loop_emit(st->io, LOOM_EV_MODEL_USAGE, LOOM_VIS_USER, corr,
              event_model_usage(purpose, tool, (int)calls, msg_usage_to_json(u), out->cost_usd));
}

/* One helper call (provider/helper.h) settled by the governance: priced by
 * the model it went to; its tokens and cost the run's unless its caller
 * counted them (compaction, through the context port). */
static double account_helper(void *ctx, const helper_record *rec)
{
    loop_state *st = ctx;
    bool priced = loop_prices_known(&st->p, rec->model);
    double cost = priced ? usage_cost_of(st, rec->model, &rec->usage) : -1;
    bool made = !strcmp(rec->status, "ok") || !strcmp(rec->status, "error");
    if (rec->counted || !made) /* refused before a request: nothing spent */
        return cost;
    loop_result *out = st->out;
    msg_usage_add(&out->usage, &rec->usage);
    usage_changed(st);
    if (out->cost_usd >= 0) {
        if (priced)
            out->cost_usd += cost;
        else if (msg_usage_total(&rec->usage) > 0)
            out->cost_usd = -1; /* a model with no price: the run's cost is unknown */
    }
    charge_tree(st, &rec->usage, out->cost_usd >= 0 ? cost : -1);
    if (msg_usage_total(&rec->usage) > 0)
        loop_emit(st->io, LOOM_EV_MODEL_USAGE, LOOM_VIS_USER, rec->correlation,
                  event_model_usage_helper(helper_purpose_name(rec->purpose), rec->tool,
                                           helper_tier_name(rec->tier), rec->model,
                                           msg_usage_to_json(&rec->usage), out->cost_usd));
    return cost;
}

void loop_settle_helpers(loop_state *st)
{
    loop_io *io = st->io;
    governance *g = io->tools && io->tools->gov ? io->tools->gov : io->gov;
    governance_settle_helpers(g, io->t, io->tools ? io->tools->run_id : NULL, account_helper,
                              st);
}

void loop_price_compaction(loop_state *st, const msg_usage *before)
{
    loop_result *out = st->out;
    msg_usage d = {
        .input_tokens = out->usage.input_tokens - before->input_tokens,
        .output_tokens = out->usage.output_tokens - before->output_tokens,
        .cache_read_tokens = out->usage.cache_read_tokens - before->cache_read_tokens,
        .cache_creation_tokens = out->usage.cache_creation_tokens - before->cache_creation_tokens,
        .reasoning_tokens = out->usage.reasoning_tokens - before->reasoning_tokens,
    };
    if (msg_usage_total(&d) <= 0)
        return;
    double cost = out->cost_usd >= 0 ? usage_cost(st, &d) : 0;
    if (out->cost_usd >= 0)
        out->cost_usd += cost;
    charge_tree(st, &d, out->cost_usd >= 0 ? cost : -1);
    loop_emit(st->io, LOOM_EV_MODEL_USAGE, LOOM_VIS_USER, NULL,
              event_model_usage_compaction(msg_usage_to_json(&d), out->cost_usd));
}

/* pipeline.c — the tool call path (named steps) and batch execution.
 *
 * Concurrency: a batch of concurrency-safe calls runs on up to
 * PIPELINE_POOL threads; each thread writes only its own outcome slot, so
 * no lock is needed for results. Tools that share state (file state,
 * tasks, todos) guard it themselves. */
#include "tools/pipeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "tools/schema.h"

#define PIPELINE_POOL 8

/* --- steps --------------------------------------------------------------- */

static const tool_def *step_find_tool(const tool_registry *reg, const tool_call *call,
                                      tool_result *res)
{
    const tool_def *def = tool_registry_find(reg, call->name);
    if (def)
        return def;
    loom_str names = LOOM_STR_INIT;
    for (size_t i = 0; i < tool_registry_count(reg); i++)
        str_printf(&names, "%s%s", i ? ", " : "", tool_registry_at(reg, i)->name);
    tool_error(res, "No such tool available: %s. Available tools: %s", call->name,
               str_cstr(&names));
    str_free(&names);
    return NULL;
}

static bool step_validate_schema(const tool_registry *reg, const tool_def *def,
                                 const tool_call *call, tool_result *res)
{
    loom_str why = LOOM_STR_INIT;
    const json_t *schema = tool_registry_schema(reg, def->name);
    bool ok = !json_is_object(call->input) ? false
              : schema ? schema_validate(schema, call->input, &why) == 0
                       : true;
    if (!ok) {
        const char *raw = json_is_object(call->input)
                              ? json_string_value(json_object_get(call->input, "_raw_arguments"))
                              : NULL;
        if (raw)
            tool_error(res, "InputValidationError: the arguments for %s were not valid JSON: %s",
                       def->name, raw);
        else
            tool_error(res, "InputValidationError: %s failed due to the following issue%s:\n%s",
                       def->name, why.len ? "s" : "", why.len ? why.ptr : "input must be an object");
    }
    str_free(&why);
    return ok;
}

static bool step_tool_validate(const tool_def *def, const tool_call *call, const tool_ctx *ctx,
                               tool_result *res)
{
    if (!def->validate)
        return true;
    loom_str why = LOOM_STR_INIT;
    bool ok = def->validate(call->input, ctx, &why) == 0;
    if (!ok)
        tool_error(res, "%s", why.len ? why.ptr : "the input was refused by the tool");
    str_free(&why);
    return ok;
}

/* Until the governance layer lands every call is allowed; the decision is
 * still its own step so policy slots in here. */
static bool step_decide(const tool_def *def, const tool_call *call, const tool_ctx *ctx,
                        tool_result *res)
{
    (void)def;
    (void)call;
    (void)ctx;
    (void)res;
    return true;
}

static void step_execute(const tool_def *def, const tool_call *call, tool_ctx *ctx,
                         tool_result *res)
{
    if (cancel_requested(ctx->cancel)) {
        tool_error(res, "Interrupted by user before the tool started");
        return;
    }
    if (def->run(call->input, ctx, res) != 0 && !res->is_error) {
        res->is_error = true;
        if (!res->text.len)
            str_printf(&res->text, "%s failed internally", def->name);
    }
}

static size_t output_cap(void)
{
    const char *v = getenv("LOOM_TOOL_OUTPUT_CAP");
    long n = v ? strtol(v, NULL, 10) : 0;
    return n >= 1000 ? (size_t)n : PIPELINE_OUTPUT_CAP;
}

void pipeline_cap_output(loom_str *text, size_t cap)
{
    if (text->len <= cap)
        return;
    size_t head = cap / 2, tail = cap - head;
    while (head > 0 && ((unsigned char)text->ptr[head] & 0xC0) == 0x80)
        head--;
    size_t tail_start = text->len - tail;
    while (tail_start < text->len && ((unsigned char)text->ptr[tail_start] & 0xC0) == 0x80)
        tail_start++;
    loom_str out = LOOM_STR_INIT;
    str_append(&out, text->ptr, head);
    str_printf(&out, "\n\n[… %zu characters cut from the middle of this output …]\n\n",
               tail_start - head);
    str_append(&out, text->ptr + tail_start, text->len - tail_start);
    str_free(text);
    *text = out;
}

void tool_call_run(const tool_registry *reg, const tool_call *call, tool_ctx *ctx,
                   tool_outcome *out)
{
    memset(out, 0, sizeof *out);
    tool_result_init(&out->result);
    out->started_us = clock_wall_us();
    tool_result *res = &out->result;
    const tool_def *def = step_find_tool(reg, call, res);
    if (!def)
        out->failed_step = "find_tool";
    else if (!step_validate_schema(reg, def, call, res))
        out->failed_step = "validate_schema";
    else if (!step_tool_validate(def, call, ctx, res))
        out->failed_step = "validate_tool";
    else if (!step_decide(def, call, ctx, res))
        out->failed_step = "decide";
    else
        step_execute(def, call, ctx, res);
    pipeline_cap_output(&res->text, output_cap());
    out->finished_us = clock_wall_us();
    log_event(LOG_INFO, "tools",
              json_pack("{s:s,s:s?,s:b,s:s?,s:I}", "tool", call->name, "id", call->id, "is_error",
                        res->is_error, "failed_step", out->failed_step, "ms",
                        (json_int_t)((out->finished_us - out->started_us) / 1000)),
              "tool call");
}

/* --- batches ------------------------------------------------------------- */

typedef struct slot {
    const tool_registry *reg;
    const tool_call *call;
    tool_ctx *ctx;
    const pipeline_observer *obs;
    size_t index;
    tool_outcome *out;
} slot;

static void run_slot(slot *s)
{
    if (s->obs && s->obs->on_start)
        s->obs->on_start(s->obs->ctx, s->index, s->call);
    tool_call_run(s->reg, s->call, s->ctx, s->out);
    if (s->obs && s->obs->on_finish)
        s->obs->on_finish(s->obs->ctx, s->index, s->call, s->out);
}

static void *slot_thread(void *arg)
{
    run_slot(arg);
    return NULL;
}

static bool is_concurrency_safe(const tool_registry *reg, const tool_call *call)
{
    const tool_def *def = tool_registry_find(reg, call->name);
    return def && def->concurrency_safe;
}

static void run_parallel(slot *slots, size_t n)
{
    pthread_t threads[PIPELINE_POOL];
    for (size_t base = 0; base < n; base += PIPELINE_POOL) {
        size_t m = n - base < PIPELINE_POOL ? n - base : PIPELINE_POOL;
        bool started[PIPELINE_POOL] = {0};
        for (size_t i = 0; i < m; i++)
            started[i] = pthread_create(&threads[i], NULL, slot_thread, &slots[base + i]) == 0;
        for (size_t i = 0; i < m; i++) {
            if (started[i])
                pthread_join(threads[i], NULL);
            else
                run_slot(&slots[base + i]); /* no thread to be had: run it here */
        }
    }
}

void tool_batch_run(const tool_registry *reg, const tool_call *calls, size_t n, tool_ctx *ctx,
                    const pipeline_observer *obs, tool_outcome *outcomes)
{
    slot *slots = xcalloc(n ? n : 1, sizeof *slots);
    for (size_t i = 0; i < n; i++)
        slots[i] = (slot){reg, &calls[i], ctx, obs, i, &outcomes[i]};
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && is_concurrency_safe(reg, &calls[j]))
            j++;
        if (j - i >= 2) {
            run_parallel(&slots[i], j - i);
            i = j;
        } else {
            run_slot(&slots[i]);
            i++;
        }
    }
    free(slots);
}

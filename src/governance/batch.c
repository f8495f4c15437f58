/* batch.c — a model reply's tool calls, run through the pipeline in order,
 * with each run of adjacent concurrency-safe calls in parallel.
 *
 * Concurrency: such a run uses up to PIPELINE_POOL threads; each thread
 * writes only its own outcome slot, so no lock is needed for results. A
 * hook that ends the run stops what is left of the batch, every call still
 * getting its result. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/str.h"
#include "governance/pipeline.h"

#define PIPELINE_POOL 8

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

bool tool_is_concurrency_safe(const tool_registry *reg, const char *name)
{
    const tool_def *def = tool_registry_find(reg, name);
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
    tool_batch_finish(reg, calls, n, 0, ctx, obs, outcomes);
}

void tool_batch_finish(const tool_registry *reg, const tool_call *calls, size_t n, size_t done,
                       tool_ctx *ctx, const pipeline_observer *obs, tool_outcome *outcomes)
{
    slot *slots = xcalloc(n ? n : 1, sizeof *slots);
    for (size_t i = 0; i < n; i++)
        slots[i] = (slot){reg, &calls[i], ctx, obs, i, &outcomes[i]};
    bool stopped = false;
    for (size_t i = done; i < n;) {
        for (size_t k = 0; k < i && !stopped; k++)
            stopped = outcomes[k].stop;
        if (stopped) {
            /* A hook ended the run: what is left of the batch does not run,
             * but every call still gets its result. */
            tool_outcome *o = &outcomes[i];
            memset(o, 0, sizeof *o);
            tool_result_init(&o->result);
            o->started_us = o->finished_us = clock_wall_us();
            tool_error(&o->result, "Not run: a hook ended the run before this call.");
            o->failed_step = "hook_stopped";
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && tool_is_concurrency_safe(reg, calls[j].name))
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

/* loop_early.c — tool calls that start while the reply still streams
 * (issue 22, docs/tools.md "Streaming tool execution").
 *
 * When the provider says a tool call's block is complete, a call to a
 * concurrency-safe tool (Read, Glob, Grep, …: the tool's own flag, the one
 * the batch uses to run calls side by side) starts on a thread of its own,
 * through the same governed pipeline call as any other. Nothing of it is
 * shown yet: it has no observer, the events and side records it raises
 * are held back (all but an approval's), and the Act later hands its outcome
 * over in call order with the usual tool.started / tool.finished events and
 * records, so a transcript is the same as with the feature off. The first
 * call that is not concurrency-safe closes the window: it and every call
 * after it wait for the message end, so effects keep the reply's order.
 *
 * An attempt that fails or is retried throws its early calls away: they
 * are joined (a Read cannot be recalled once it has read) and their
 * outcomes freed unseen. LOOM_STREAMING_TOOLS=0 turns the feature off.
 *
 * Threading: the sink callback and every function here run on the run's
 * thread; each job's thread writes only its own outcome, read after the
 * join. */
#include "runtime/loop_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tools/registry.h"

struct loop_early_job {
    char *id, *name;
    json_t *input;
    tool_call call;
    const tool_registry *reg;
    tool_ctx *ctx;             /* the run's */
    tool_ctx own;              /* the call's: its events and side records held back */
    json_t *held;              /* [[type, payload] | [null, record]], in order */
    tool_outcome out;
    pthread_t thread;
    bool threaded;     /* out is written by thread until joined */
    bool taken;        /* out was handed to the Act */
};

void loop_early_init(loop_early *e)
{
    memset(e, 0, sizeof *e);
    const char *v = getenv("LOOM_STREAMING_TOOLS");
    e->enabled = !(v && (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "off")));
}

/* What the call raises while it runs early waits with it, so a discarded
 * call leaves nothing behind, and a kept one shows its events between its
 * tool.started and tool.finished, as it would have. An approval cannot
 * wait: the user must see the request to answer it, so approval events go
 * out at once (docs/tools.md). */
static void job_emit(void *c, loom_event_type type, json_t *payload)
{
    loop_early_job *j = c;
    if (type == LOOM_EV_APPROVAL_REQUESTED || type == LOOM_EV_APPROVAL_RESOLVED) {
        if (j->ctx->emit)
            j->ctx->emit(j->ctx->emit_ctx, type, payload);
        else
            json_decref(payload);
        return;
    }
    json_array_append_new(j->held, json_pack("[i, o]", (int)type, payload));
}

static void job_record(void *c, json_t *rec)
{
    loop_early_job *j = c;
    json_array_append_new(j->held, json_pack("[n, o]", rec));
}

static void *job_thread(void *arg)
{
    loop_early_job *j = arg;
    tool_call_run(j->reg, &j->call, &j->own, &j->out);
    return NULL;
}

static void job_join(loop_early_job *j)
{
    if (j->threaded)
        pthread_join(j->thread, NULL);
    j->threaded = false;
}

static void job_free(loop_early_job *j)
{
    free(j->id);
    free(j->name);
    json_decref(j->input);
    json_decref(j->held);
    free(j);
}

void loop_early_tool_call(loop_early *e, const tool_registry *reg, tool_ctx *ctx,
                          const char *id, const char *name, const json_t *input)
{
    if (!e->enabled || e->closed)
        return;
    /* Only calls that change nothing start early: a sub-agent (Agent is
     * concurrency-safe but not read-only) would begin work, and emit its
     * own events, before the message that asked for it is whole. */
    const tool_def *def = reg ? tool_registry_find(reg, name) : NULL;
    if (!ctx || !def || !def->read_only || !tool_is_concurrency_safe(reg, name)) {
        e->closed = true; /* order of effects: everything after waits too */
        return;
    }
    loop_early_job *j = xcalloc(1, sizeof *j);
    j->id = xstrdup(id ? id : "");
    j->name = xstrdup(name ? name : "");
    j->input = json_deep_copy(input);
    j->call = (tool_call){j->id, j->name, j->input};
    j->reg = reg;
    j->ctx = ctx;
    j->own = *ctx;
    j->own.emit = job_emit;
    j->own.emit_ctx = j;
    j->own.record = ctx->record ? job_record : NULL;
    j->own.record_ctx = j;
    j->held = json_array();
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 4;
        e->jobs = xrealloc(e->jobs, e->cap * sizeof *e->jobs);
    }
    e->jobs[e->n++] = j;
    j->threaded = pthread_create(&j->thread, NULL, job_thread, j) == 0;
    if (!j->threaded)
        tool_call_run(reg, &j->call, &j->own, &j->out); /* no thread to be had: run it here */
}

void loop_early_discard(loop_early *e)
{
    for (size_t i = 0; i < e->n; i++) {
        job_join(e->jobs[i]);
        if (!e->jobs[i]->taken)
            tool_outcome_free(&e->jobs[i]->out);
        job_free(e->jobs[i]);
    }
    e->n = 0;
    e->closed = false;
}

void loop_early_release(loop_early *e, size_t k, tool_ctx *ctx)
{
    if (k >= e->n)
        return;
    loop_early_job *j = e->jobs[k];
    size_t i;
    json_t *h;
    json_array_foreach(j->held, i, h) {
        json_t *what = json_incref(json_array_get(h, 1));
        if (json_is_null(json_array_get(h, 0))) {
            if (ctx->record)
                ctx->record(ctx->record_ctx, what);
            else
                json_decref(what);
        } else if (ctx->emit) {
            ctx->emit(ctx->emit_ctx, (loom_event_type)json_integer_value(json_array_get(h, 0)),
                      what);
        } else {
            json_decref(what);
        }
    }
    json_array_clear(j->held);
}

size_t loop_early_take(loop_early *e, const tool_call *calls, size_t n, tool_outcome *outs)
{
    size_t m = e->n;
    bool match = m <= n;
    for (size_t i = 0; match && i < m; i++)
        match = !strcmp(e->jobs[i]->id, calls[i].id ? calls[i].id : "") &&
                !strcmp(e->jobs[i]->name, calls[i].name ? calls[i].name : "") &&
                json_equal(e->jobs[i]->input, calls[i].input);
    if (!match) {
        /* The whole reply does not begin with the calls that started: a
         * provider that misreported; run every call the usual way. */
        loop_early_discard(e);
        return 0;
    }
    for (size_t i = 0; i < m; i++) {
        job_join(e->jobs[i]);
        outs[i] = e->jobs[i]->out;
        e->jobs[i]->taken = true;
    }
    return m;
}

void loop_early_free(loop_early *e)
{
    loop_early_discard(e);
    free(e->jobs);
    e->jobs = NULL;
    e->cap = 0;
}

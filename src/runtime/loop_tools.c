/* loop_tools.c — the Act of a turn: the reply's tool calls run through the
 * governance pipeline (governance/pipeline.h), reported as tool.started /
 * tool.finished / tool.failed, warned about when the model repeats itself,
 * and recorded in call order. The pipeline's observer may be called from
 * the tool pool's threads; everything else runs on the run's thread. */
#include "runtime/loop_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "context/working.h"
#include "governance/pipeline.h"
#include "heartbeat/heartbeat.h"
#include "session/record.h"

typedef struct observer_ctx {
    loop_io *io;
} observer_ctx;

static void obs_start(void *ctx, size_t index, const tool_call *call)
{
    (void)index;
    observer_ctx *o = ctx;
    loop_emit(o->io, LOOM_EV_TOOL_STARTED, LOOM_VIS_USER, call->id,
              event_tool_started(call->id, call->name, call->input));
}

static void obs_finish(void *ctx, size_t index, const tool_call *call, const tool_outcome *out)
{
    (void)index;
    observer_ctx *o = ctx;
    const tool_result *r = &out->result;
    loop_emit(o->io, r->is_error ? LOOM_EV_TOOL_FAILED : LOOM_EV_TOOL_FINISHED, LOOM_VIS_USER,
              call->id,
              event_tool_finished(call->id, call->name, r->is_error, out->started_us,
                                  out->finished_us, str_cstr(&r->text), r->text.len,
                                  out->failed_step, r->raw));
}

/* Warns the model when it repeats the same call with the same input. */
static void detect_repeats(loop_state *st, const tool_call *calls, size_t n)
{
    loop_io *io = st->io;
    for (size_t i = 0; i < n; i++) {
        char *input = json_dumps(calls[i].input, JSON_COMPACT | JSON_SORT_KEYS);
        loom_str sig = LOOM_STR_INIT;
        str_printf(&sig, "%s %s", calls[i].name, input ? input : "");
        free(input);
        if (st->last_call_sig && strcmp(st->last_call_sig, sig.ptr) == 0) {
            st->repeat_count++;
        } else {
            st->repeat_count = 1;
            free(st->last_call_sig);
            st->last_call_sig = xstrdup(sig.ptr);
        }
        str_free(&sig);
        if (st->repeat_count == st->p.repeat_threshold) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "You have called %s with the same input %d times in a row. Repeating it "
                     "will give the same result: stop, look at what the results told you, and "
                     "try a different approach or explain what is blocking you.",
                     calls[i].name, st->repeat_count);
            loop_queue_reminder(st, msg);
            loop_emit(io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, calls[i].id,
                      event_warning_tool_loop(msg, calls[i].name, st->repeat_count));
        }
    }
}

int loop_run_tools(loop_state *st, const msg_message *reply, const char *message_id,
                   char **hook_stop, const char **stop_event, loom_error *err)
{
    loop_io *io = st->io;
    size_t n = 0;
    for (size_t i = 0; i < reply->n_blocks; i++)
        n += reply->blocks[i].kind == MSG_BLOCK_TOOL_USE;
    if (n == 0) {
        loop_early_discard(&st->early);
        return 0;
    }
    tool_call *calls = xcalloc(n, sizeof *calls);
    tool_outcome *outs = xcalloc(n, sizeof *outs);
    size_t k = 0;
    for (size_t i = 0; i < reply->n_blocks; i++) {
        const msg_block *b = &reply->blocks[i];
        if (b->kind == MSG_BLOCK_TOOL_USE)
            calls[k++] = (tool_call){b->id, b->name, b->input};
    }
    detect_repeats(st, calls, n);
    io->tools->message_id = message_id;
    observer_ctx octx = {io};
    pipeline_observer obs = {&octx, obs_start, obs_finish};
    /* The Act: the heartbeat watches faster meanwhile and may stop it. */
    if (io->act_running)
        atomic_store(io->act_running, true);
    heartbeat_set_act(io->heartbeat, true);
    /* The calls that started while the reply streamed are shown now, in
     * call order, as if they had run here; the rest run as a batch. */
    size_t early = loop_early_take(&st->early, calls, n, outs);
    for (size_t i = 0; i < early; i++) {
        obs_start(&octx, i, &calls[i]);
        loop_early_release(&st->early, i, io->tools);
        obs_finish(&octx, i, &calls[i], &outs[i]);
    }
    loop_early_discard(&st->early);
    tool_batch_finish(st->p.tools, calls, n, early, io->tools, &obs, outs);
    heartbeat_set_act(io->heartbeat, false);
    if (io->act_running)
        atomic_store(io->act_running, false);
    /* The helper calls the batch made (the permission classifier, prompt
     * hooks) are the run's tokens too. */
    loop_settle_helpers(st);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        tool_result *r = &outs[i].result;
        if (io->working)
            working_note_step(io->working, r->is_error);
        if (outs[i].context)
            loop_queue_reminder(st, outs[i].context);
        if (outs[i].stop && !*hook_stop) {
            *hook_stop = xstrdup(outs[i].stop_reason ? outs[i].stop_reason : "");
            *stop_event = outs[i].stop_event;
        }
        json_t *rec = record_tool_result(calls[i].id, str_cstr(&r->text), r->is_error);
        if (r->raw)
            json_object_set_new(record_provider_data(rec, true), "toolResult",
                                json_pack("{s:O}", "rawResponse", r->raw));
        if (rc == 0 && transcript_append_new(io->t, rec, err) != 0)
            rc = -1;
        else if (rc != 0)
            json_decref(rec);
        if (rc == 0 && r->image_data) {
            /* Images travel as a user message right after the results. */
            json_t *img = record_user_text("Image from the tool result above:");
            record_add_image(img, r->image_media_type, r->image_data);
            record_set_skip_run(img, true);
            if (transcript_append_new(io->t, img, err) != 0)
                rc = -1;
        }
        tool_outcome_free(&outs[i]);
    }
    free(calls);
    free(outs);
    return rc;
}

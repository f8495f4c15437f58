/* ack_event.c — AcknowledgeEvent: the model's explicit disposition of an
 * event the heartbeat put in its working memory (seed 000 L354–390).
 *
 * Seeing an event is not acknowledging it: only this call moves it from
 * pending to acknowledged (an active risk until resolved; "ignore" resolves
 * it at once). Each transition is written to the runtime journal, the
 * source of truth, under the event's stable id. */
#include <stdlib.h>
#include <string.h>

#include "context/working.h"
#include "heartbeat/heartbeat.h"
#include "tools/builtin/builtin.h"

/* Journals the event's new state (a copy taken from the surface). */
static void journal_state(tool_ctx *ctx, const char *id, event_state state)
{
    journal *j = heartbeat_journal(ctx->heartbeat);
    if (!j)
        return;
    size_t n = 0;
    surface_event *evs = working_events(ctx->working, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(evs[i].id, id)) {
            loom_error err;
            journal_append(j, &evs[i], state, &err);
        }
    working_events_free(evs, n);
}

static int ack_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->working)
        return tool_error(out, "There are no events to acknowledge in this session.");
    const char *id = json_string_value(json_object_get(input, "event_id"));
    const char *disposition = json_string_value(json_object_get(input, "disposition"));
    const char *note = json_string_value(json_object_get(input, "note"));
    bool resolved = json_is_true(json_object_get(input, "resolved"));
    loom_error why;
    if (resolved && !disposition) {
        if (working_resolve_event(ctx->working, id) != 0)
            return tool_error(out, "Event %s is not an active risk: only an acknowledged event "
                                   "can be resolved.",
                              id);
        journal_state(ctx, id, EVENT_RESOLVED);
        str_printf(&out->text, "Event %s resolved.", id);
        return 0;
    }
    if (!disposition)
        return tool_error(out, "Give a disposition (%s), or resolved: true for an event already "
                               "acknowledged.",
                          EVENT_DISPOSITIONS);
    if (working_ack_event(ctx->working, id, disposition, note, &why) != 0)
        return tool_error(out, "%s", why.message);
    journal_state(ctx, id, EVENT_ACKNOWLEDGED);
    if (!strcmp(disposition, "ignore"))
        journal_state(ctx, id, EVENT_RESOLVED);
    else if (resolved && working_resolve_event(ctx->working, id) == 0)
        journal_state(ctx, id, EVENT_RESOLVED);
    str_printf(&out->text, "Event %s acknowledged: %s.%s", id, disposition,
               !strcmp(disposition, "ignore") || resolved
                   ? " It is resolved."
                   : " It stays an active risk in your working memory until you resolve it "
                     "(AcknowledgeEvent with resolved: true).");
    return 0;
}

const tool_def tool_ack_event = {
    .name = "AcknowledgeEvent",
    .description =
        "Gives your disposition of an event listed under `events` in your working memory "
        "(a change the harness noticed while you worked: a file changed by someone else, a "
        "process gone, a resource limit, a signal). Pending events stay pending until you "
        "dispose of them; seeing one is not acknowledging it.\n\n"
        "Dispositions: ignore (not relevant; resolved at once), defer (deal with it later), "
        "replan (it changes the plan: update the plan too), decompose (split the work), "
        "handoff_to_harness (the harness or the user must handle it), terminate_current_act "
        "(stop what you were doing). Every disposition but ignore keeps the event as an active "
        "risk until you call this tool again with resolved: true.",
    .input_schema =
        "{\"type\":\"object\",\"properties\":{"
        "\"event_id\":{\"type\":\"string\",\"description\":\"The event's id, e.g. "
        "ev_…, as listed in the working memory\"},"
        "\"disposition\":{\"type\":\"string\",\"enum\":[\"ignore\",\"defer\",\"replan\","
        "\"decompose\",\"handoff_to_harness\",\"terminate_current_act\"]},"
        "\"note\":{\"type\":\"string\",\"description\":\"Why, in one sentence\"},"
        "\"resolved\":{\"type\":\"boolean\",\"description\":\"The action the event called for "
        "is complete\"}},"
        "\"required\":[\"event_id\"],\"additionalProperties\":false}",
    .read_only = true,
    .local_state_only = true, /* it marks an event in Loom's own journal */
    .concurrency_safe = false,
    .run = ack_run,
};

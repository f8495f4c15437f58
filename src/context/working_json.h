/* working_json.h — C_working as JSON, for the surfaces that show it beside
 * a run (the console's side panel, through the working.updated event;
 * docs/events.md row 26). working_render.h is the same state as the text
 * the model reads; this is the state as data, for people.
 *
 * Thread-safe: it takes the plan's lock, then the working memory's, never
 * both at once (see working.h). */
#ifndef LOOM_CONTEXT_WORKING_JSON_H
#define LOOM_CONTEXT_WORKING_JSON_H

#include <jansson.h>

#include "context/working.h"

/* {goal, turn, plan: [{content, status, activeForm}], dashboard: {tokens,
 *  window, budget_total, budget_used, errors_recent, depth, last_hb_ms,
 *  turn}, events: [{event_id, source, summary, urgency, state}]} — the
 * events being those still open in the surface (projected: pending, or
 * acknowledged: an active risk), oldest first. New reference. */
json_t *working_json(working *w);

/* working_json(w) when its compact rendering differs from *last, which then
 * holds the new rendering (caller frees it, NULL to start); NULL when
 * nothing changed since the last call — so an event stream carries the
 * working memory only when it moved. */
json_t *working_json_if_changed(working *w, char **last);

#endif

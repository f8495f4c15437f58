/* working_json.c — C_working as data (the shape is in working_json.h).
 *
 * Reads through working.h's own accessors, each of which takes the working
 * memory's lock, and the plan through its list's lock: what it returns is
 * a copy, never a view into either. */
#include "context/working_json.h"

#include <stdlib.h>
#include <string.h>

#include "context/plan.h"
#include "context/working_impl.h"

static json_t *dashboard_json(const dashboard *d)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:i,s:i,s:I,s:i}", "tokens", (json_int_t)d->tokens,
                     "window", (json_int_t)d->window, "budget_total",
                     (json_int_t)d->budget_total, "budget_used", (json_int_t)d->budget_used,
                     "errors_recent", d->errors_recent, "depth", d->depth, "last_hb_ms",
                     (json_int_t)d->last_hb_ms, "turn", d->turn);
}

/* Only the events a person still has to see: resolved ones are history
 * (the journal and the session's events keep them). */
static json_t *events_json(working *w)
{
    json_t *out = json_array();
    size_t n = 0;
    surface_event *evs = working_events(w, &n);
    for (size_t i = 0; i < n; i++) {
        const surface_event *e = &evs[i];
        if (e->state != EVENT_PROJECTED && e->state != EVENT_ACKNOWLEDGED)
            continue;
        json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s,s:s}", "event_id",
                                             e->id ? e->id : "", "source",
                                             e->source ? e->source : "unknown", "summary",
                                             e->summary ? e->summary : "", "urgency",
                                             event_urgency_name(e->urgency), "state",
                                             event_state_name(e->state)));
    }
    working_events_free(evs, n);
    return out;
}

json_t *working_json(working *w)
{
    if (!w)
        return json_object();
    /* The plan pointer is set once (working_impl.h): read without our lock,
     * and the list takes its own. */
    json_t *plan = w->plan ? todo_list_json(w->plan) : json_array();
    char *goal = working_goal(w);
    dashboard d = working_get_dashboard(w);
    json_t *out = json_pack("{s:s,s:i,s:o,s:o,s:o}", "goal", goal, "turn", d.turn, "plan",
                            plan ? plan : json_array(), "dashboard", dashboard_json(&d),
                            "events", events_json(w));
    free(goal);
    return out;
}

json_t *working_json_if_changed(working *w, char **last)
{
    json_t *now = working_json(w);
    /* JSON_SORT_KEYS: the same state always renders to the same bytes. */
    char *s = json_dumps(now, JSON_COMPACT | JSON_SORT_KEYS);
    if (!s || (*last && !strcmp(*last, s))) {
        free(s);
        json_decref(now);
        return NULL;
    }
    free(*last);
    *last = s;
    return now;
}

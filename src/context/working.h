/* working.h — C_working, the model's working memory (seed 000 L88–L130).
 *
 * Four parts, all rendered compactly at the tail of every request and never
 * compressed: the dashboard (state metrics only), the plan (the session's
 * todo list, first-class), the event surface (the projection of what the
 * heartbeat perceived, organised by decision stage) and the knowledge
 * surface (questions, evidence packs, citations: ext/knowledge fills it). The goal is always there.
 *
 * The raw events live in the runtime journal (heartbeat/journal.h); the
 * surface is a projection of it. The heartbeat thread adds events while the
 * run thread renders, so every function takes the working memory's lock and
 * none hands out pointers into it.
 *
 * renew snapshots the four parts to files in the session directory (M_f)
 * and reloads them; pending events and active risks keep their identity
 * (mf_state.h). The block the model sees is working_render.h.
 */
#ifndef LOOM_CONTEXT_WORKING_H
#define LOOM_CONTEXT_WORKING_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct todo_list todo_list;

typedef enum { EVENT_LOW, EVENT_HIGH, EVENT_CRITICAL } event_urgency;

/* seed 000 L346–352: an event only moves forward through these. */
typedef enum {
    EVENT_DETECTED,      /* the heartbeat created it and wrote the journal */
    EVENT_PROJECTED,     /* in pending_events: the model can see it */
    EVENT_ACKNOWLEDGED,  /* the model gave a disposition; an active risk until resolved */
    EVENT_RESOLVED,      /* the disposition's action is complete */
    EVENT_ARCHIVED,      /* out of the surface; only the journal keeps it */
} event_state;

/* The dispositions a model may give (seed 000 L354–390). */
#define EVENT_DISPOSITIONS "ignore, defer, replan, decompose, handoff_to_harness, terminate_current_act"

typedef struct surface_event {
    char *id;            /* stable event_id ("ev_" + UUIDv7) */
    char *fingerprint;   /* what makes two detections the same change */
    char *source;        /* filesystem, process, mf_events, resource, external_signal */
    char *summary;       /* one line for the model */
    event_urgency urgency;
    event_state state;
    char *disposition;   /* set when acknowledged */
    char *note;          /* the model's reason, optional */
    int64_t detected_ms; /* wall clock */
} surface_event;

/* The dashboard's fields (seed 000 L88–96). Values the loop owns are set
 * with working_set_dashboard; interrupt_requested is control state. */
typedef struct dashboard {
    int64_t tokens;           /* estimated tokens of the next request */
    int64_t window;           /* the model's context window (0: unknown) */
    int64_t budget_total;     /* the user's token budget (0: none) */
    int64_t budget_used;
    int errors_recent;        /* tool errors in the last WORKING_ERROR_WINDOW steps */
    int depth;                /* sub-agent recursion depth */
    int64_t last_hb_ms;       /* last heartbeat tick (0: no heartbeat) */
    bool interrupt_requested;
    int turn;
} dashboard;

#define WORKING_ERROR_WINDOW 10
/* How many recent dispositions the surface keeps (seed 000 L162–171:
 * recent_event_decisions may be truncated to a recent window). */
#define WORKING_RECENT_DECISIONS 8

typedef struct working working;

/* plan is borrowed (the session's todo list; may be NULL). */
working *working_new(todo_list *plan);
void working_free(working *w);

void working_set_goal(working *w, const char *goal);
/* A copy of the goal ("" when none); caller frees. */
char *working_goal(working *w);
void working_set_progress(working *w, const char *goal_progress);

/* Sets the loop's values: tokens, window, budget_total, budget_used, depth,
 * turn. errors_recent, last_hb_ms and interrupt_requested in d are ignored:
 * they come from working_note_step, working_set_heartbeat and
 * working_set_interrupt. */
void working_set_dashboard(working *w, const dashboard *d);
/* Every field, errors_recent counted from the noted steps. */
dashboard working_get_dashboard(working *w);
/* One tool step's outcome, for the error count over the last 10 steps. */
void working_note_step(working *w, bool failed);
void working_set_interrupt(working *w, bool requested);
void working_set_heartbeat(working *w, int64_t now_ms);

/* Adds an event in state PROJECTED (ev->state and disposition are not
 * read), unless an event with the same fingerprint or id is already in the
 * surface — pending, an active risk, or resolved but still among the recent
 * decisions — so one change is never reported twice: then returns 0 and
 * does nothing. 1 when added, -1 when ev is NULL. ev is copied. When ev->id
 * is NULL or "" the event gets "ev_" + a UUIDv7; otherwise it keeps ev->id.
 * A missing fingerprint falls back to the id, a missing source to "unknown",
 * detected_ms 0 to now. */
int working_add_event(working *w, const surface_event *ev);
/* The model's disposition for event id (note optional). -1 with why set
 * when the id names no event (resource_not_found), an event already
 * acknowledged or resolved (invalid_state_transition: events only move
 * forward), or the disposition is not one of EVENT_DISPOSITIONS
 * (invalid_request); nothing changes then. An ignored event is resolved at
 * once; any other becomes an active risk. Either way it joins the recent
 * decisions (the last WORKING_RECENT_DECISIONS). When no pending event is
 * left, interrupt_requested is cleared (seed 000 L380). A resolved event
 * is archived (leaves the surface) once its decision leaves the window. */
int working_ack_event(working *w, const char *id, const char *disposition, const char *note,
                      loom_error *why);
/* Moves an acknowledged event to resolved (it leaves the active risks).
 * 0, or -1 when id names no acknowledged event. */
int working_resolve_event(working *w, const char *id);
/* Copies of the events in the surface (not archived), oldest first;
 * free with working_events_free. */
surface_event *working_events(working *w, size_t *n);
void working_events_free(surface_event *evs, size_t n);
size_t working_pending_count(working *w);

/* A proactive renew (seed 000 L151: "主动(LLM判断)"): the model asks for
 * one, with a reason (NULL or "": "requested"); a second request before it
 * is taken replaces the first. */
void working_request_renew(working *w, const char *reason);
/* The pending renew request's reason, clearing it; NULL when none. Caller
 * frees. */
char *working_take_renew(working *w);

/* Called (with the working memory's lock held: it must not call back into
 * it) for each resolved event leaving the surface, its state already set
 * to archived — for the runtime journal. fn NULL removes the hook. */
void working_set_archive_hook(working *w, void (*fn)(void *ctx, const surface_event *ev),
                              void *ctx);

/* Knowledge surface (seed 000 §5.6b): JSON arrays (or NULL), new
 * references the working memory takes over; a non-array is dropped. */
void working_set_knowledge(working *w, json_t *active_questions, json_t *evidence_packs,
                           json_t *citations);

/* Copies of the three lists (empty arrays when unset); the caller owns
 * them. A change is a read, an edit of the copies and working_set_knowledge
 * (the knowledge session does both on the run's thread). */
void working_get_knowledge(working *w, json_t **active_questions, json_t **evidence_packs,
                           json_t **citations);

const char *event_urgency_name(event_urgency u);
const char *event_state_name(event_state s);

#endif

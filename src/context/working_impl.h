/* working_impl.h — the inside of C_working, shared by the files that
 * implement it: working.c (the state and its event surface),
 * working_render.c (the block at the tail of a request), working_json.c
 * (the state as data, for working.updated) and mf_state.c (the M_f
 * snapshots renew writes and reloads). Nothing outside context/working*
 * and context/mf_state.c includes this header.
 *
 * Threading: every field is guarded by `lock`, except `plan`, which is set
 * once and has its own lock (taken before ours, never inside it). The
 * *_locked functions expect the caller to hold the lock.
 */
#ifndef LOOM_CONTEXT_WORKING_IMPL_H
#define LOOM_CONTEXT_WORKING_IMPL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "context/working.h"

typedef struct decision {
    char *id;
    char *disposition;
    char *summary;
    char *note;
} decision;

struct working {
    pthread_mutex_t lock;
    todo_list *plan; /* borrowed, immutable pointer: read without our lock */
    char *goal;
    char *progress;
    dashboard dash; /* errors_recent is derived from steps when read */
    bool steps[WORKING_ERROR_WINDOW]; /* ring of outcomes, true = failed */
    size_t nsteps, next_step;
    surface_event *events; /* oldest first */
    size_t nevents, cap;
    decision recent[WORKING_RECENT_DECISIONS]; /* oldest first */
    size_t nrecent;
    json_t *questions, *evidence, *citations; /* arrays or NULL */
    char *renew_reason; /* a proactive renew asked for, not yet taken */
    void (*on_archive)(void *ctx, const surface_event *ev); /* may be NULL */
    void *archive_ctx;
};

void working_lock(working *w);
void working_unlock(working *w);

/* Names back to values: the index in the enum, -1 for an unknown name. */
int working_urgency_index(const char *s);
int working_state_index(const char *s);
bool working_valid_disposition(const char *s);

/* Replaces *slot with a copy of s (NULL or "" clear it). */
void working_set_text(char **slot, const char *s);

void working_event_clear(surface_event *e);
void working_events_clear(surface_event *evs, size_t n);
void working_decision_clear(decision *d);
void working_knowledge_clear(working *w);

/* Archives (drops) resolved events no recent decision still shows. */
void working_prune_locked(working *w);
size_t working_pending_locked(const working *w);
/* Failed steps among the last WORKING_ERROR_WINDOW. */
int working_errors_locked(const working *w);
/* The outcome ring's i-th entry, oldest first. */
bool working_step_at(const working *w, size_t i);

#endif

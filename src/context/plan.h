/* plan.h — the session's plan: the list TodoWrite (tools/builtin/todo_write.c) writes.
 *
 * The model replaces the whole list on every TodoWrite call; nothing edits
 * single items. The list is read from other threads (the heartbeat, context
 * assembly for reminders) while the run thread writes it, so every function
 * takes the list's own lock, and none hands out pointers into the list.
 */
#ifndef LOOM_CONTEXT_PLAN_H
#define LOOM_CONTEXT_PLAN_H

#include <jansson.h>
#include <stddef.h>

#include "base/str.h"

typedef struct todo_list todo_list;

/* Most items one plan may hold: the rendered list goes back into the
 * context after each change, so an unbounded list is an unbounded cost. */
#define TODO_MAX_ITEMS 100

typedef struct todo_counts {
    size_t pending, in_progress, completed;
} todo_counts;

/* An empty list; free with todo_list_free. */
todo_list *todo_list_new(void);
void todo_list_free(todo_list *l);

/* Replaces the list with todos, an array of {content, status, activeForm}
 * (content a non-empty string; status "pending", "in_progress" or
 * "completed"; activeForm a string, optional, defaulting to content; other
 * members ignored). Returns 0 on success, -1 when todos is malformed: then
 * the list is unchanged and why (if non-NULL) says what was wrong.
 *
 * More than one in_progress item is accepted, not refused: a model working
 * two things in parallel (sub-agents) is legitimate, and refusing would only
 * make it drop its plan. On success why receives an advisory note in that
 * case (otherwise nothing), for the tool to pass on.
 *
 * When every item is completed the stored list becomes empty: the plan is
 * done, and a finished list left in place would keep being reminded of. */
int todo_list_set(todo_list *l, const json_t *todos, loom_str *why);

/* The list as a JSON array of {content, status, activeForm}; new reference. */
json_t *todo_list_json(const todo_list *l);

/* One line per item, "☐ " pending, "◐ " in progress, "☑ " completed, then
 * the content; "" for an empty list. Caller frees. */
char *todo_list_render(const todo_list *l);

todo_counts todo_list_counts(const todo_list *l);

/* Renders a todos array as todo_list_render would, without storing it
 * (TodoWrite shows the final list even when the stored one was cleared).
 * todos must already have passed todo_list_set's checks. Caller frees. */
char *todo_render_json(const json_t *todos);
/* The items of a TodoWrite todos array as the plan stores them ({content,
 * status, activeForm}, nothing else); [] when the array is not a valid
 * plan. New reference. */
json_t *todo_normalize_json(const json_t *todos);

#endif

/* task_list.h — the session's shared task list (Claude Code's TaskCreate,
 * TaskGet, TaskUpdate, TaskList; tools/builtin/task_tools.c).
 *
 * One list per session tree: the session owns it and every agent of the
 * tree (the main agent, its sub-agents, theirs) gets the same pointer
 * through tool_ctx, so they see and change one list. Every call is
 * thread-safe (one mutex; no I/O other than the list's own file is done
 * under it). A list with a path is written whole, atomically, after each
 * change (beside the session file), and read back when the session is
 * resumed. Tasks are JSON objects in Claude Code's shape: {id, subject,
 * description, activeForm?, status, owner?, blocks[], blockedBy[],
 * metadata?}; ids are "1", "2", … never reused within a list.
 */
#ifndef LOOM_TOOLS_TASK_LIST_H
#define LOOM_TOOLS_TASK_LIST_H

#include <jansson.h>

#include "base/str.h"

typedef struct task_list task_list;

/* A list kept in path (NULL: in memory only). An existing file is loaded;
 * one that cannot be read as a task list leaves the list empty and says
 * why in *why (which may be NULL), and is overwritten on the next change. */
task_list *task_list_open(const char *path, loom_str *why);
void task_list_free(task_list *l);

/* Adds a pending task; its copy (new reference). */
json_t *task_list_create(task_list *l, const char *subject, const char *description,
                         const char *active_form, const json_t *metadata);
/* A copy of task id, or NULL when there is none. */
json_t *task_list_get(task_list *l, const char *id);
/* Every task, in id order (new reference). */
json_t *task_list_all(task_list *l);
/* Applies TaskUpdate's input (taskId, subject, description, activeForm,
 * status incl. "deleted", owner, addBlocks, addBlockedBy, metadata with
 * null deleting a key). 0 with the names of the fields that changed
 * appended to changed ("status, owner"), or 1 with why set (no such task,
 * a dependency on itself or an unknown task); nothing changes on 1. */
int task_list_update(task_list *l, const json_t *input, loom_str *changed, loom_str *why);

#endif

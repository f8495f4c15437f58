/* merge.h — merge-back of finished worktree agents into the parent's
 * working tree (/agents merge, merge: "auto").
 *
 * Each branch is tried first without touching anything (git merge-tree
 * --write-tree). A clean one whose files the parent has not modified is
 * merged (git merge --no-ff); a conflicting one is reported file by file
 * and the parent's files are left exactly as they were. The summary says
 * which files came from which agent. Runs git as child processes; one call
 * at a time per repository.
 */
#ifndef LOOM_AGENTS_MERGE_H
#define LOOM_AGENTS_MERGE_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"

typedef struct agent_merge_item {
    const char *agent_id;
    const char *name;     /* for the summary; may be NULL */
    const char *branch;
    const char *worktree; /* removed after a clean merge */
} agent_merge_item;

/* Merges the branches in order into cwd's checked-out branch. Returns a
 * report (new reference): {merged: [{agent_id, name, branch, files:[…],
 * stat}], conflicts: [{agent_id, name, branch, files:[…], reason}],
 * skipped: [{agent_id, reason}]}. NULL with err set only when cwd is not
 * a git working tree. */
json_t *agent_merge_branches(const char *cwd, const agent_merge_item *items, size_t n,
                             loom_error *err);

#endif

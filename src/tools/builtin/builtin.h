/* builtin.h — the built-in tools, named and shaped as Claude Code's so that
 * models and users' hook matchers work unchanged. Each lives in its own file
 * (the four task-list tools share one, the
 * two worktree tools another). */
#ifndef LOOM_TOOLS_BUILTIN_BUILTIN_H
#define LOOM_TOOLS_BUILTIN_BUILTIN_H

#include "tools/tool.h"

extern const tool_def tool_read;         /* read.c */
extern const tool_def tool_write;        /* write.c */
extern const tool_def tool_edit;         /* edit.c */
extern const tool_def tool_bash;         /* bash.c */
extern const tool_def tool_task_output;  /* task_output.c */
extern const tool_def tool_task_stop;    /* task_stop.c */
extern const tool_def tool_glob;         /* glob.c */
extern const tool_def tool_grep;         /* grep.c */
extern const tool_def tool_todo_write;   /* todo_write.c */
extern const tool_def tool_web_fetch;    /* web_fetch.c */
extern const tool_def tool_ask_user;     /* ask_user.c */
extern const tool_def tool_renew;        /* renew.c */
extern const tool_def tool_ack_event;    /* ack_event.c */
extern const tool_def tool_notebook_edit; /* notebook_edit.c */
extern const tool_def tool_exit_plan_mode; /* exit_plan_mode.c */
extern const tool_def tool_task_create;  /* task_tools.c */
extern const tool_def tool_task_get;     /* task_tools.c */
extern const tool_def tool_task_update;  /* task_tools.c */
extern const tool_def tool_task_list;    /* task_tools.c */
extern const tool_def tool_enter_worktree; /* worktree_tools.c */
extern const tool_def tool_exit_worktree;  /* worktree_tools.c */

#endif

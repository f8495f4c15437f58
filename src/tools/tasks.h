/* tasks.h — background shells: the session's registry of commands started
 * with Bash run_in_background, their output and their fate.
 *
 * One registry per session, shared by every thread of it (all calls are
 * thread-safe). Each task is `bash -c COMMAND` in its own process group,
 * stdin /dev/null, stdout and stderr merged into one pipe that a reader
 * thread per task drains into a window of the last 1 MiB (older bytes are
 * counted, not kept). The reader thread also reaps the shell, so a task's
 * status changes on its own, without anyone polling it.
 *
 * A task ends when its shell exits; output still in flight is read for a
 * short drain period (a grandchild left running in the background may hold
 * the pipe open for ever, and does not keep the task "running").
 */
#ifndef LOOM_TOOLS_TASKS_H
#define LOOM_TOOLS_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/str.h"

typedef struct task_registry task_registry;

typedef enum {
    TASK_RUNNING,
    TASK_COMPLETED,  /* the shell exited 0 */
    TASK_FAILED,     /* nonzero exit, or a signal nobody here sent */
    TASK_KILLED,     /* stopped by task_registry_stop or the registry's end */
} task_status;

typedef struct task_info {
    char *id;             /* "bash_1", "bash_2", … in start order */
    char *command;
    char *description;    /* NULL when none was given */
    char *cwd;
    task_status status;
    int exit_code;        /* the shell's exit status; -1 while running or when signalled */
    int term_signal;      /* the signal that ended it, 0 if none */
    long pid;             /* also the process group id */
    int64_t started_ms;   /* wall clock */
    int64_t ended_ms;     /* 0 while running */
    uint64_t output_total;   /* bytes the task has written so far */
    uint64_t output_dropped; /* of those, bytes that fell out of the 1 MiB window */
} task_info;

/* Size of the window of output kept per task. */
#define TASK_OUTPUT_WINDOW ((size_t)1 << 20)
/* SIGTERM → SIGKILL delay when stopping a task. */
#define TASK_GRACE_MS 2000

task_registry *task_registry_new(void);
/* Stops every task whose shell is still running (SIGTERM to its group, up
 * to TASK_GRACE_MS for all of them together, then SIGKILL), reaps the
 * shells, joins the reader threads and frees everything. NULL is a no-op.
 * No other call on the registry may be running or made afterwards. */
void task_registry_free(task_registry *reg);

/* Starts `bash -c command` in cwd (NULL = Loom's own) with the environment
 * of shell_env_new(). On success *id_out is the new task's id (caller
 * frees) and 0 is returned; else -code with err set. */
int task_registry_start(task_registry *reg, const char *command, const char *cwd,
                        const char *description, char **id_out, loom_error *err);

/* Copies the task's state into *info (free with task_info_free). 0, or -1
 * for an unknown id. */
int task_registry_get(task_registry *reg, const char *id, task_info *info);
void task_info_free(task_info *info);

/* Output the caller has not read yet: appends it to out and moves the
 * task's read mark to the end. *missed (may be NULL) gets the number of
 * unread bytes that fell out of the window before they could be read.
 * Fills *info when info is not NULL. 0, or -1 for an unknown id. */
int task_registry_read(task_registry *reg, const char *id, loom_str *out, uint64_t *missed,
                       task_info *info);

/* Appends the last max bytes of the output kept (read or not) to out.
 * 0, or -1 for an unknown id. */
int task_registry_tail(task_registry *reg, const char *id, size_t max, loom_str *out);

/* Waits until the task is no longer running, at most timeout_ms (< 0: no
 * limit), looking at cancel at least every 50 ms. Returns 0 when it has
 * ended, 1 on timeout, 2 when cancelled, -1 for an unknown id. */
int task_registry_wait(task_registry *reg, const char *id, long timeout_ms,
                       const loom_cancel *cancel);

/* Stops a running task: SIGTERM to its group, grace_ms (<= 0: TASK_GRACE_MS),
 * then SIGKILL to what is left; returns once the task has ended. 0 when it
 * was stopped, 1 when it was not running (already ended), -1 for an unknown
 * id. */
int task_registry_stop(task_registry *reg, const char *id, long grace_ms);

/* Tasks the registry does not run itself (a background sub-agent,
 * agents/background.c): it lists them among its own, under the ids their
 * owner gives them ("agent_3"), and forwards get, read, tail, wait, stop
 * and list to the ops, so TaskOutput and TaskStop work on them unchanged.
 * The ops are called without the registry's lock held and may block (wait,
 * stop); each gets the ctx given here. task_registry_free calls stop
 * (grace 0) then release on every external task; release frees ctx. */
typedef struct task_external_ops {
    /* Fills everything but info->id (the registry sets it); never fails. */
    void (*info)(void *ctx, task_info *info);
    /* Output not read yet, appended to out; the read mark moves to its end. */
    void (*read)(void *ctx, loom_str *out, uint64_t *missed);
    /* The last max bytes of the output. */
    void (*tail)(void *ctx, size_t max, loom_str *out);
    /* As task_registry_wait: 0 ended, 1 timeout, 2 cancelled. */
    int (*wait)(void *ctx, long timeout_ms, const loom_cancel *cancel);
    /* As task_registry_stop: 0 stopped, 1 was not running. */
    int (*stop)(void *ctx, long grace_ms);
    void (*release)(void *ctx);
} task_external_ops;

/* Adds an external task under id. 0; -1 when the id is taken or the
 * registry is being freed (ops->release is then called at once). */
int task_registry_add_external(task_registry *reg, const char *id,
                               const task_external_ops *ops, void *ctx);

/* Every task (for /status): the shells in start order, then the external
 * tasks in theirs. *out is a malloc'd array to be
 * freed with task_info_free_array; returns the count. */
size_t task_registry_list(task_registry *reg, task_info **out);
void task_info_free_array(task_info *arr, size_t n);

/* Known ids joined with ", " ("(none)" when empty) for messages naming
 * them. Caller frees. */
char *task_registry_ids(task_registry *reg);

/* "running", "completed (exit 0)", "failed (exit 2)", "failed (signal
 * SIGSEGV)", "killed". Writes into buf and returns it. */
const char *task_status_text(const task_info *info, char *buf, size_t size);

/* The environment for shell commands Loom runs: its own without the
 * variables that hold credentials (shell_env_is_secret), plus LOOM=1 so
 * scripts can tell they run under an agent. A NULL-terminated array of
 * malloc'd strings; free with shell_env_free. */
char **shell_env_new(void);
/* True when the variable named name[0..n) holds a credential by its name
 * (KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL in it, any case) and
 * LOOM_SHELL_ENV_KEEP does not list it. */
bool shell_env_is_secret(const char *name, size_t n);
void shell_env_free(char **env);

/* "SIGKILL" for 9, or "signal N" for one without a name. */
const char *shell_signal_name(int sig, char *buf, size_t size);

/* How many bytes of each output stream a shell tool shows the model:
 * BASH_MAX_OUTPUT_LENGTH (Claude Code's variable) if set, else 30000;
 * clamped to [1000, 1000000]. */
size_t shell_output_cap(void);

/* Appends data to out, minus trailing newlines; when longer than cap keeps
 * the head and the tail (cut at line ends where one is near, never inside
 * a UTF-8 sequence) with a marker saying how many bytes were cut. `lost` is
 * how many bytes after data were never captured at all (said at the end).
 * Returns the bytes left out, lost ones included. */
size_t shell_append_capped(loom_str *out, const char *data, size_t len, size_t cap,
                           size_t lost);

#endif

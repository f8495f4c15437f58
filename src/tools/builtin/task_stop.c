/* task_stop.c — the TaskStop tool: ends a background task's whole process
 * group (SIGTERM, a grace period, SIGKILL) and shows the end of its output. */
#include <stdlib.h>
#include <string.h>

#include "tools/builtin/builtin.h"
#include "tools/tasks.h"

/* How much of the final output to show: the end is what explains a stop. */
#define TASK_STOP_TAIL_BYTES 4000

static const char TASK_STOP_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"task_id\":{\"type\":\"string\",\"description\":\"The ID of the background task to "
    "stop\"},"
    "\"shell_id\":{\"type\":\"string\",\"description\":\"Deprecated: use task_id\"}},"
    "\"additionalProperties\":false}";

static const char TASK_STOP_DESCRIPTION[] =
    "Stops a background task: a shell started with Bash run_in_background (it and every "
    "process it started get SIGTERM, then SIGKILL after 2 seconds), or a background agent "
    "(agent_N: it and the agents it started are cancelled). Returns the last of its output.";

static int task_stop_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const char *id = json_string_value(json_object_get(input, "task_id"));
    if (!id)
        id = json_string_value(json_object_get(input, "shell_id")); /* Claude Code's old name */
    if (!id || !*id)
        return tool_error(out, "Invalid input: task_id is required and must be a string");
    if (!ctx->tasks)
        return tool_error(out, "No background tasks exist in this session.");

    int rc = task_registry_stop(ctx->tasks, id, TASK_GRACE_MS);
    if (rc < 0) {
        char *ids = task_registry_ids(ctx->tasks);
        tool_error(out, "No task with ID '%s'. Known task IDs: %s", id, ids);
        free(ids);
        return 0;
    }
    task_info info;
    task_registry_get(ctx->tasks, id, &info);
    char status[64];
    task_status_text(&info, status, sizeof status);
    loom_str *t = &out->text;
    if (rc == 1) {
        str_printf(t, "Task %s is not running (%s); nothing to stop.", id, status);
        out->is_error = true;
    } else {
        str_printf(t, "Stopped task %s (%s).", id, info.command);
    }
    loom_str tail = LOOM_STR_INIT;
    task_registry_tail(ctx->tasks, id, TASK_STOP_TAIL_BYTES, &tail);
    while (tail.len && tail.ptr[tail.len - 1] == '\n')
        tail.ptr[--tail.len] = '\0';
    if (tail.len) {
        str_puts(t, "\nLast output:\n");
        if (info.output_total > tail.len)
            str_puts(t, "...");
        str_append(t, tail.ptr, tail.len);
    }
    str_free(&tail);
    out->raw = json_pack("{s:s, s:s, s:b}", "task_id", id, "status", status, "stopped", rc == 0);
    task_info_free(&info);
    return 0;
}

const tool_def tool_task_stop = {
    .name = "TaskStop",
    .description = TASK_STOP_DESCRIPTION,
    .input_schema = TASK_STOP_SCHEMA,
    .read_only = false,
    .concurrency_safe = false,
    .validate = NULL,
    .run = task_stop_run,
};

/* task_output.c — the TaskOutput tool: what a background shell (started
 * with Bash run_in_background) has written since the last look, and its
 * status; optionally waits for the task to end first. */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tools/builtin/builtin.h"
#include "tools/tasks.h"

#define TASK_OUTPUT_DEFAULT_TIMEOUT_MS 30000
#define TASK_OUTPUT_MAX_TIMEOUT_MS 600000

static const char TASK_OUTPUT_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"task_id\":{\"type\":\"string\",\"description\":\"The ID of the background task\"},"
    "\"block\":{\"type\":\"boolean\",\"description\":\"Wait for the task to finish first "
    "(default true)\"},"
    "\"timeout\":{\"type\":\"number\",\"description\":\"Longest wait in milliseconds when "
    "blocking (default 30000, max 600000)\"}},"
    "\"required\":[\"task_id\"],\"additionalProperties\":false}";

static const char TASK_OUTPUT_DESCRIPTION[] =
    "Reads the output of a background task (a shell started with Bash run_in_background, or "
    "a background agent, agent_N): everything "
    "it wrote since the previous TaskOutput call for it, and its status (running, completed, "
    "failed, killed). With block=true (the default) waits until the task ends or timeout "
    "milliseconds pass; use block=false to peek at a task that is still running.";

static const char *retrieval(bool waited_out, task_status st)
{
    if (waited_out)
        return "timeout";
    return st == TASK_RUNNING ? "not_ready" : "success";
}

static int task_output_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const char *id = json_string_value(json_object_get(input, "task_id"));
    if (!id || !*id)
        return tool_error(out, "Invalid input: task_id is required and must be a string");
    if (!ctx->tasks)
        return tool_error(out, "No background tasks exist in this session.");
    task_info info;
    if (task_registry_get(ctx->tasks, id, &info) != 0) {
        char *ids = task_registry_ids(ctx->tasks);
        tool_error(out, "No task with ID '%s'. Known task IDs: %s", id, ids);
        free(ids);
        return 0;
    }
    task_info_free(&info);

    bool block = json_get_bool(input, "block", true);
    long timeout = TASK_OUTPUT_DEFAULT_TIMEOUT_MS;
    json_t *tv = json_object_get(input, "timeout");
    if (json_is_number(tv) && json_number_value(tv) >= 0)
        timeout = json_number_value(tv) > TASK_OUTPUT_MAX_TIMEOUT_MS
                      ? TASK_OUTPUT_MAX_TIMEOUT_MS
                      : (long)json_number_value(tv);
    if (ctx->timeout_ms > 0 && ctx->timeout_ms < timeout)
        timeout = ctx->timeout_ms;

    bool waited_out = false;
    if (block) {
        int rc = task_registry_wait(ctx->tasks, id, timeout, ctx->cancel);
        if (rc == 2)
            /* The unread output stays unread: the next call still gets it. */
            return tool_error(out, "Waiting for task %s was interrupted", id);
        waited_out = rc == 1;
    }

    loom_str buf = LOOM_STR_INIT;
    uint64_t missed = 0;
    task_registry_read(ctx->tasks, id, &buf, &missed, &info);
    char status[64];
    task_status_text(&info, status, sizeof status);
    loom_str *t = &out->text;
    str_printf(t, "Task %s: %s", id, status);
    if (waited_out)
        str_printf(t, " (still running after waiting %ld ms)", timeout);
    str_putc(t, '\n');
    if (missed)
        str_printf(t, "[%llu bytes of earlier output were dropped: only the last %zu bytes are "
                      "kept]\n",
                   (unsigned long long)missed, (size_t)TASK_OUTPUT_WINDOW);
    size_t before = t->len;
    size_t cut = shell_append_capped(t, buf.ptr, buf.len, shell_output_cap(), 0);
    if (t->len == before)
        str_puts(t, "(no new output)");
    str_free(&buf);

    out->raw = json_pack("{s:s, s:s, s:o, s:s, s:I}", "task_id", id, "status", status,
                         "exitCode",
                         info.status != TASK_RUNNING && info.exit_code >= 0
                             ? json_integer(info.exit_code)
                             : json_null(),
                         "retrieval_status", retrieval(waited_out, info.status),
                         "outputBytesTruncated", (json_int_t)(cut + missed));
    task_info_free(&info);
    return 0;
}

const tool_def tool_task_output = {
    .name = "TaskOutput",
    .description = TASK_OUTPUT_DESCRIPTION,
    .input_schema = TASK_OUTPUT_SCHEMA,
    .read_only = true,
    .concurrency_safe = true,
    .validate = NULL,
    .run = task_output_run,
};

/* task_tools.c — TaskCreate, TaskGet, TaskUpdate and TaskList: Claude
 * Code's task-list tools over the session tree's shared list
 * (tools/task_list.h). Four tools in one file because they are one
 * concept: four verbs on one list, sharing its rendering. Any thread: the
 * list locks itself, so sub-agents running at once may call these
 * together. They change only Loom's own state (local_state_only): they
 * never ask, in any mode. */
#include "tools/builtin/builtin.h"

#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "tools/task_list.h"

static int no_list(tool_result *out)
{
    return tool_error(out, "The task list is not available in this session.");
}

static const char *const task_schema_create =
    "{\"type\":\"object\",\"properties\":{"
    "\"subject\":{\"type\":\"string\",\"description\":\"A brief title for the task\"},"
    "\"description\":{\"type\":\"string\",\"description\":\"What needs to be done\"},"
    "\"activeForm\":{\"type\":\"string\",\"description\":\"Present continuous form shown in "
    "spinner when in_progress (e.g., \\\"Running tests\\\")\"},"
    "\"metadata\":{\"type\":\"object\",\"description\":\"Arbitrary metadata to attach to the "
    "task\"}},\"required\":[\"subject\",\"description\"],\"additionalProperties\":false}";

static int create_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->task_list)
        return no_list(out);
    const char *subject = json_get_str(input, "subject", "");
    if (!*subject)
        return tool_error(out, "subject must not be empty.");
    json_t *t = task_list_create(ctx->task_list, subject, json_get_str(input, "description", ""),
                                 json_get_str(input, "activeForm", NULL),
                                 json_object_get(input, "metadata"));
    str_printf(&out->text, "Task #%s created successfully: %s", json_get_str(t, "id", ""),
               subject);
    out->raw = json_pack("{s:{s:s, s:s}}", "task", "id", json_get_str(t, "id", ""), "subject",
                         subject);
    json_decref(t);
    return 0;
}

const tool_def tool_task_create = {
    .name = "TaskCreate",
    .description =
        "Create a task in the task list shared by you and your sub-agents (it survives resume). "
        "Use it for work of three or more distinct steps, or when the user gives several tasks; "
        "not for one trivial step. New tasks are pending; use TaskUpdate to claim one "
        "(owner), mark it in_progress before you start and completed when it is fully done, "
        "and to record dependencies (addBlocks / addBlockedBy).",
    .input_schema = task_schema_create,
    /* Not concurrency-safe: calls of one reply run in order, so ids follow
     * the order the model asked in, and so do updates. */
    .run = create_run,
    .local_state_only = true,
};

/* " #2, #3" for a list of ids; only those not completed when open_only. */
static void ids(loom_str *s, const json_t *list, const json_t *all, bool open_only)
{
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *id = json_string_value(e);
        if (open_only) {
            size_t k;
            json_t *t;
            bool done = false;
            json_array_foreach(all, k, t) if (!strcmp(json_get_str(t, "id", ""), id)) done =
                !strcmp(json_get_str(t, "status", ""), "completed");
            if (done)
                continue;
        }
        str_printf(s, "%s#%s", n++ ? ", " : "", id);
    }
}

static const char *const task_schema_get =
    "{\"type\":\"object\",\"properties\":{\"taskId\":{\"type\":\"string\",\"description\":"
    "\"The ID of the task to retrieve\"}},\"required\":[\"taskId\"],"
    "\"additionalProperties\":false}";

static int get_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->task_list)
        return no_list(out);
    json_t *t = task_list_get(ctx->task_list, json_get_str(input, "taskId", ""));
    if (!t) {
        str_puts(&out->text, "Task not found");
        out->raw = json_pack("{s:n}", "task");
        return 0;
    }
    str_printf(&out->text, "Task #%s: %s\nStatus: %s\nDescription: %s",
               json_get_str(t, "id", ""), json_get_str(t, "subject", ""),
               json_get_str(t, "status", ""), json_get_str(t, "description", ""));
    if (json_get_str(t, "owner", NULL))
        str_printf(&out->text, "\nOwner: %s", json_get_str(t, "owner", ""));
    if (json_array_size(json_object_get(t, "blockedBy"))) {
        str_puts(&out->text, "\nBlocked by: ");
        ids(&out->text, json_object_get(t, "blockedBy"), NULL, false);
    }
    if (json_array_size(json_object_get(t, "blocks"))) {
        str_puts(&out->text, "\nBlocks: ");
        ids(&out->text, json_object_get(t, "blocks"), NULL, false);
    }
    out->raw = json_pack("{s:o}", "task", t);
    return 0;
}

const tool_def tool_task_get = {
    .name = "TaskGet",
    .description = "Get a task from the shared task list by its ID: its subject, description, "
                   "status, owner and dependencies. Read a task before you start on it.",
    .input_schema = task_schema_get,
    .read_only = true,
    .concurrency_safe = true,
    .run = get_run,
    .local_state_only = true,
};

static const char *const task_schema_update =
    "{\"type\":\"object\",\"properties\":{"
    "\"taskId\":{\"type\":\"string\",\"description\":\"The ID of the task to update\"},"
    "\"subject\":{\"type\":\"string\",\"description\":\"New subject for the task\"},"
    "\"description\":{\"type\":\"string\",\"description\":\"New description for the task\"},"
    "\"activeForm\":{\"type\":\"string\",\"description\":\"Present continuous form shown in "
    "spinner when in_progress (e.g., \\\"Running tests\\\")\"},"
    "\"status\":{\"type\":\"string\",\"enum\":[\"pending\",\"in_progress\",\"completed\","
    "\"deleted\"],\"description\":\"New status for the task\"},"
    "\"addBlocks\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":"
    "\"Task IDs that this task blocks\"},"
    "\"addBlockedBy\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":"
    "\"Task IDs that block this task\"},"
    "\"owner\":{\"type\":\"string\",\"description\":\"New owner for the task\"},"
    "\"metadata\":{\"type\":\"object\",\"description\":\"Metadata keys to merge into the task. "
    "Set a key to null to delete it.\"}},"
    "\"required\":[\"taskId\"],\"additionalProperties\":false}";

static int update_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->task_list)
        return no_list(out);
    loom_str changed = LOOM_STR_INIT, why = LOOM_STR_INIT;
    const char *id = json_get_str(input, "taskId", "");
    if (task_list_update(ctx->task_list, input, &changed, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
    } else {
        if (changed.len)
            str_printf(&out->text, "Updated task #%s %s", id, str_cstr(&changed));
        else
            str_printf(&out->text, "Task #%s is unchanged (it already had these values).", id);
        json_t *fields = json_array();
        for (char *p = changed.ptr, *save = NULL, *f; p && (f = strtok_r(p, ", ", &save));
             p = NULL)
            json_array_append_new(fields, json_string(f));
        out->raw = json_pack("{s:b, s:s, s:o}", "success", 1, "taskId", id, "updatedFields",
                             fields);
    }
    str_free(&changed);
    str_free(&why);
    return 0;
}

const tool_def tool_task_update = {
    .name = "TaskUpdate",
    .description =
        "Update a task in the shared task list: status (pending → in_progress → completed; "
        "\"deleted\" removes it), subject, description, activeForm, owner (claim a task by "
        "setting it to your name), dependencies (addBlocks, addBlockedBy) and metadata. Mark a "
        "task completed only when it is fully done; then call TaskList for the next one.",
    .input_schema = task_schema_update,
    .run = update_run,
    .local_state_only = true,
};

static int list_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)input;
    if (!ctx->task_list)
        return no_list(out);
    json_t *all = task_list_all(ctx->task_list);
    if (!json_array_size(all))
        str_puts(&out->text, "No tasks found");
    size_t i;
    json_t *t;
    json_array_foreach(all, i, t)
    {
        str_printf(&out->text, "%s#%s [%s] %s", i ? "\n" : "", json_get_str(t, "id", ""),
                   json_get_str(t, "status", ""), json_get_str(t, "subject", ""));
        if (json_get_str(t, "owner", NULL))
            str_printf(&out->text, " (%s)", json_get_str(t, "owner", ""));
        loom_str open = LOOM_STR_INIT;
        ids(&open, json_object_get(t, "blockedBy"), all, true);
        if (open.len)
            str_printf(&out->text, " [blocked by %s]", open.ptr);
        str_free(&open);
    }
    out->raw = json_pack("{s:o}", "tasks", all);
    return 0;
}

const tool_def tool_task_list = {
    .name = "TaskList",
    .description = "List the tasks of the shared task list: id, status, subject, owner and the "
                   "open tasks blocking each. Use it to find work that is pending, unowned and "
                   "not blocked, and to check progress after finishing a task.",
    .input_schema = "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
    .read_only = true,
    .concurrency_safe = true,
    .run = list_run,
    .local_state_only = true,
};

/* todo_write.c — TodoWrite: the model replaces the session's whole plan
 * (context/plan.h keeps it; a bad call leaves the old plan untouched). Runs
 * on the run thread, the only writer of the plan. */
#include "tools/builtin/builtin.h"

#include "base/json.h"
#include "base/str.h"
#include "context/plan.h"
#include "tools/tool.h"

static int todo_write_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->todos)
        return tool_error(out, "TodoWrite is not available in this session (no plan is kept).");
    const json_t *todos = json_object_get(input, "todos");
    json_t *before = todo_list_json(ctx->todos);
    loom_str why = LOOM_STR_INIT;
    if (todo_list_set(ctx->todos, todos, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
        str_free(&why);
        json_decref(before);
        return 0;
    }
    /* Shown from the call itself: a list finished to the last item
     * clears the plan, but the model still sees what it marked done. */
    char *shown = todo_render_json(todos);
    str_puts(&out->text, "Todos have been modified successfully. Ensure that you continue to use "
                         "the todo list to track your progress.");
    if (why.len) {
        str_puts(&out->text, "\n");
        str_append(&out->text, why.ptr, why.len);
    }
    if (*shown) {
        str_puts(&out->text, "\n\n");
        str_puts(&out->text, shown);
        /* The rendered list ends in a newline; the result should not. */
        if (out->text.len && out->text.ptr[out->text.len - 1] == '\n')
            out->text.ptr[--out->text.len] = '\0';
    }
    out->raw = json_pack("{s:o, s:o}", "oldTodos", before, "newTodos", todo_normalize_json(todos));
    free(shown);
    str_free(&why);
    return 0;
}

const tool_def tool_todo_write = {
    .name = "TodoWrite",
    .description =
        "Create and maintain a structured task list (plan) for the current session.\n\n"
        "Use it for work with three or more distinct steps, when the user gives several tasks "
        "at once, or asks for a todo list. Skip it for a single simple step or a purely "
        "conversational request.\n\n"
        "Each call replaces the whole list. Every item has:\n"
        "- content: what to do, in imperative form (\"Run the tests\")\n"
        "- status: \"pending\", \"in_progress\" or \"completed\"\n"
        "- activeForm: the same step in present continuous form (\"Running the tests\"), shown "
        "while it is in progress\n\n"
        "Keep exactly one item in_progress while you work. Mark an item completed as soon as it "
        "is fully done (tests pass, nothing left unfinished), not in batches later; if it is "
        "blocked or only partly done, keep it in_progress and add an item for the blocker. "
        "Remove items that no longer matter. When every item is completed the plan is cleared.",
    .input_schema =
        "{\"type\":\"object\","
        "\"properties\":{\"todos\":{\"type\":\"array\",\"description\":\"The updated todo list\","
        "\"maxItems\":100,"
        "\"items\":{\"type\":\"object\",\"properties\":{"
        "\"content\":{\"type\":\"string\",\"minLength\":1,"
        "\"description\":\"The step, in imperative form\"},"
        "\"status\":{\"type\":\"string\",\"enum\":[\"pending\",\"in_progress\",\"completed\"]},"
        "\"activeForm\":{\"type\":\"string\",\"minLength\":1,"
        "\"description\":\"The step in present continuous form, shown while in progress\"}},"
        "\"required\":[\"content\",\"status\",\"activeForm\"]}}},"
        "\"required\":[\"todos\"],\"additionalProperties\":false}",
    .read_only = false,        /* it changes the session's plan */
    .local_state_only = true,  /* …and nothing else: never a question for the user */
    .concurrency_safe = false, /* two concurrent replacements would race for the last word */
    .validate = NULL,
    .run = todo_write_run,
};

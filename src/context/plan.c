/* todo.c — the plan a session keeps (todo_list) and TodoWrite, the tool the
 * model keeps it with. See todo.h for the rules a list follows.
 *
 * A new list is parsed and checked completely before the lock is taken, and
 * swapped in whole, so a reader never sees half a plan and a bad call never
 * damages the good one.
 */
#include "context/plan.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tools/builtin/builtin.h"
#include "tools/tool.h"

typedef enum { TODO_PENDING, TODO_IN_PROGRESS, TODO_COMPLETED } todo_status;

static const char *const status_names[] = {"pending", "in_progress", "completed"};
/* ☐ ◐ ☑ — ballot box, half-filled circle, checked ballot box. */
static const char *const status_marks[] = {"\u2610 ", "\u25D0 ", "\u2611 "};

typedef struct todo_item {
    char *content;
    char *active_form;
    todo_status status;
} todo_item;

struct todo_list {
    /* Readers take const pointers but still lock: the lock is not part of
     * the list's value, so functions cast const away to reach it. */
    pthread_mutex_t lock;
    todo_item *items;
    size_t n;
};

static void items_free(todo_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(items[i].content);
        free(items[i].active_form);
    }
    free(items);
}

/* Checks and copies todos into a fresh array. 0 ok, -1 with why set. */
static int parse_items(const json_t *todos, todo_item **out, size_t *out_n, loom_str *why)
{
    *out = NULL;
    *out_n = 0;
    if (!json_is_array(todos)) {
        if (why)
            str_puts(why, "\"todos\" must be an array of {content, status, activeForm}");
        return -1;
    }
    size_t n = json_array_size(todos);
    if (n > TODO_MAX_ITEMS) {
        if (why)
            str_printf(why,
                       "\"todos\" has %zu items; at most %d are allowed. Group small steps into "
                       "larger ones.",
                       n, TODO_MAX_ITEMS);
        return -1;
    }
    todo_item *items = xcalloc(n ? n : 1, sizeof *items);
    for (size_t i = 0; i < n; i++) {
        const json_t *t = json_array_get(todos, i);
        const char *content = json_string_value(json_object_get(t, "content"));
        const char *status = json_string_value(json_object_get(t, "status"));
        const json_t *af = json_object_get(t, "activeForm");
        const char *problem = NULL;
        if (!json_is_object(t))
            problem = "must be an object {content, status, activeForm}";
        else if (!content || !*content)
            problem = "has no content (a non-empty string is required)";
        else if (af && !json_is_string(af))
            problem = "has an activeForm that is not a string";
        int st = -1;
        for (int k = 0; !problem && status && k < 3; k++)
            if (strcmp(status, status_names[k]) == 0)
                st = k;
        if (!problem && st < 0)
            problem = "has a status that is not one of: \"pending\", \"in_progress\", "
                      "\"completed\"";
        if (problem) {
            if (why)
                str_printf(why, "\"todos[%zu]\" %s", i, problem);
            items_free(items, i);
            return -1;
        }
        const char *active = json_string_value(af);
        items[i].content = xstrdup(content);
        items[i].active_form = xstrdup(active && *active ? active : content);
        items[i].status = (todo_status)st;
    }
    *out = items;
    *out_n = n;
    return 0;
}

todo_list *todo_list_new(void)
{
    todo_list *l = xcalloc(1, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    return l;
}

void todo_list_free(todo_list *l)
{
    if (!l)
        return;
    items_free(l->items, l->n);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

static void lock(const todo_list *l)
{
    pthread_mutex_lock((pthread_mutex_t *)&l->lock);
}

static void unlock(const todo_list *l)
{
    pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
}

int todo_list_set(todo_list *l, const json_t *todos, loom_str *why)
{
    todo_item *items;
    size_t n;
    if (parse_items(todos, &items, &n, why) != 0)
        return -1;
    size_t active = 0, done = 0;
    for (size_t i = 0; i < n; i++) {
        active += items[i].status == TODO_IN_PROGRESS;
        done += items[i].status == TODO_COMPLETED;
    }
    if (active > 1 && why)
        str_printf(why,
                   "Note: %zu items are in_progress. Keep exactly one item in_progress at a "
                   "time: mark it completed before starting the next.",
                   active);
    if (n > 0 && done == n) {
        items_free(items, n);
        items = NULL;
        n = 0;
    }
    lock(l);
    todo_item *old = l->items;
    size_t old_n = l->n;
    l->items = items;
    l->n = n;
    unlock(l);
    items_free(old, old_n);
    return 0;
}

static json_t *items_json(const todo_item *items, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "content", items[i].content,
                                             "status", status_names[items[i].status],
                                             "activeForm", items[i].active_form));
    return arr;
}

static char *items_render(const todo_item *items, size_t n)
{
    loom_str out = LOOM_STR_INIT;
    for (size_t i = 0; i < n; i++) {
        str_puts(&out, status_marks[items[i].status]);
        str_puts(&out, items[i].content);
        str_putc(&out, '\n');
    }
    if (!out.ptr)
        return xstrdup("");
    return str_steal(&out);
}

json_t *todo_list_json(const todo_list *l)
{
    lock(l);
    json_t *arr = items_json(l->items, l->n);
    unlock(l);
    return arr;
}

char *todo_list_render(const todo_list *l)
{
    lock(l);
    char *s = items_render(l->items, l->n);
    unlock(l);
    return s;
}

todo_counts todo_list_counts(const todo_list *l)
{
    todo_counts c = {0, 0, 0};
    lock(l);
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i].status == TODO_PENDING)
            c.pending++;
        else if (l->items[i].status == TODO_IN_PROGRESS)
            c.in_progress++;
        else
            c.completed++;
    }
    unlock(l);
    return c;
}

char *todo_render_json(const json_t *todos)
{
    todo_item *items;
    size_t n;
    if (parse_items(todos, &items, &n, NULL) != 0)
        return xstrdup("");
    char *s = items_render(items, n);
    items_free(items, n);
    return s;
}

/* ---- the TodoWrite tool ---- */

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
    todo_item *items;
    size_t n;
    parse_items(todos, &items, &n, NULL);
    char *shown = items_render(items, n);
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
    out->raw = json_pack("{s:o, s:o}", "oldTodos", before, "newTodos", items_json(items, n));
    free(shown);
    items_free(items, n);
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

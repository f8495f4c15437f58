/* plan.c — the plan a session keeps (todo_list); TodoWrite
 * (tools/builtin/todo_write.c) is the tool the model keeps it with. See
 * plan.h for the rules a list follows.
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

#include "base/str.h"

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

json_t *todo_normalize_json(const json_t *todos)
{
    todo_item *items;
    size_t n;
    if (parse_items(todos, &items, &n, NULL) != 0)
        return json_array();
    json_t *arr = items_json(items, n);
    items_free(items, n);
    return arr;
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

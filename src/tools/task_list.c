/* task_list.c — the shared task list (task_list.h).
 *
 * The list is one JSON document, {"nextId": N, "tasks": [...]}, held under
 * one mutex; every change is made on a copy first where it can fail, so a
 * refused update leaves the list as it was, and the document is written
 * whole with file_write_atomic after each change: a reader (a resumed
 * session) sees the old list or the new one, never a mix. Blocking is kept
 * on both ends (a task's blocks and the other's blockedBy), as Claude Code
 * keeps it; deleting a task removes it from every other task's lists.
 */
#include "tools/task_list.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"

#define TASK_LIST_MAX_FILE (8u * 1024 * 1024)

struct task_list {
    pthread_mutex_t mu;
    char *path;
    json_t *tasks;  /* array of task objects */
    long next_id;
};

static bool str_list(const json_t *v)
{
    if (!json_is_array(v))
        return false;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) if (!json_is_string(e)) return false;
    return true;
}

/* A loaded task must have the fields every tool reads, of their types. */
static bool task_ok(const json_t *t)
{
    return json_is_object(t) && json_is_string(json_object_get(t, "id")) &&
           json_is_string(json_object_get(t, "subject")) &&
           json_is_string(json_object_get(t, "description")) &&
           json_is_string(json_object_get(t, "status")) &&
           str_list(json_object_get(t, "blocks")) && str_list(json_object_get(t, "blockedBy"));
}

static void load(task_list *l, loom_str *why)
{
    char *text = NULL;
    size_t len = 0;
    loom_error err;
    if (!file_exists(l->path))
        return;
    if (file_read_all(l->path, &text, &len, &err) != 0) {
        if (why)
            str_printf(why, "%s", err.message);
        return;
    }
    json_error_t je;
    json_t *doc = len <= TASK_LIST_MAX_FILE ? json_loadb(text, len, 0, &je) : NULL;
    free(text);
    json_t *tasks = json_object_get(doc, "tasks");
    json_t *next = json_object_get(doc, "nextId");
    bool ok = json_is_array(tasks) && json_is_integer(next) && json_integer_value(next) >= 1;
    size_t i;
    json_t *t;
    json_array_foreach(tasks, i, t) ok = ok && task_ok(t);
    if (!ok) {
        if (why)
            str_printf(why, "%s is not a task list (damaged?); starting with an empty list",
                       l->path);
        json_decref(doc);
        return;
    }
    json_decref(l->tasks);
    l->tasks = json_incref(tasks);
    l->next_id = (long)json_integer_value(next);
    /* A file whose nextId lags its tasks must not make an id twice. */
    json_array_foreach(tasks, i, t)
    {
        const char *id = json_get_str(t, "id", "");
        char *end;
        long n = strtol(id, &end, 10);
        if (*id >= '0' && *id <= '9' && !*end && n >= l->next_id && n < LONG_MAX)
            l->next_id = n + 1;
    }
    json_decref(doc);
}

task_list *task_list_open(const char *path, loom_str *why)
{
    task_list *l = xcalloc(1, sizeof *l);
    pthread_mutex_init(&l->mu, NULL);
    l->tasks = json_array();
    l->next_id = 1;
    l->path = xstrdup(path);
    if (l->path)
        load(l, why);
    return l;
}

void task_list_free(task_list *l)
{
    if (!l)
        return;
    json_decref(l->tasks);
    free(l->path);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* Under the lock. A failed write is logged, not fatal: the list in memory
 * is still the session's, and the next change tries again. */
static void save(task_list *l)
{
    if (!l->path)
        return;
    json_t *doc = json_pack("{s:I, s:O}", "nextId", (json_int_t)l->next_id, "tasks", l->tasks);
    char *text = json_dumps(doc, JSON_INDENT(1));
    json_decref(doc);
    loom_error err;
    if (text && file_write_atomic(l->path, text, strlen(text), 0600, &err) != 0)
        LOG_W("tasks", "task list: %s", err.message);
    free(text);
}

static json_t *find(const task_list *l, const char *id, size_t *at)
{
    size_t i;
    json_t *t;
    json_array_foreach(l->tasks, i, t)
    {
        if (id && !strcmp(json_get_str(t, "id", ""), id)) {
            if (at)
                *at = i;
            return t;
        }
    }
    return NULL;
}

json_t *task_list_create(task_list *l, const char *subject, const char *description,
                         const char *active_form, const json_t *metadata)
{
    pthread_mutex_lock(&l->mu);
    char id[24];
    snprintf(id, sizeof id, "%ld", l->next_id++);
    json_t *t = json_pack("{s:s, s:s, s:s, s:s, s:[], s:[]}", "id", id, "subject", subject,
                          "description", description, "status", "pending", "blocks",
                          "blockedBy");
    if (active_form)
        json_object_set_new(t, "activeForm", json_string(active_form));
    if (json_is_object(metadata) && json_object_size(metadata))
        json_object_set_new(t, "metadata", json_deep_copy(metadata));
    json_array_append(l->tasks, t);
    save(l);
    json_t *copy = json_deep_copy(t);
    json_decref(t);
    pthread_mutex_unlock(&l->mu);
    return copy;
}

json_t *task_list_get(task_list *l, const char *id)
{
    pthread_mutex_lock(&l->mu);
    json_t *t = find(l, id, NULL);
    json_t *copy = t ? json_deep_copy(t) : NULL;
    pthread_mutex_unlock(&l->mu);
    return copy;
}

json_t *task_list_all(task_list *l)
{
    pthread_mutex_lock(&l->mu);
    json_t *copy = json_deep_copy(l->tasks);
    pthread_mutex_unlock(&l->mu);
    return copy;
}

/* Adds s to the string list key of t unless it is there. */
static void add_unique(json_t *t, const char *key, const char *s)
{
    json_t *a = json_object_get(t, key);
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) if (!strcmp(json_string_value(e), s)) return;
    json_array_append_new(a, json_string(s));
}

static void remove_str(json_t *t, const char *key, const char *s)
{
    json_t *a = json_object_get(t, key);
    for (size_t i = json_array_size(a); i-- > 0;)
        if (!strcmp(json_string_value(json_array_get(a, i)), s))
            json_array_remove(a, i);
}

static void note(loom_str *changed, const char *field)
{
    if (changed)
        str_printf(changed, "%s%s", changed->len ? ", " : "", field);
}

/* The ids of key (addBlocks / addBlockedBy) must name other, existing tasks. */
static int check_links(task_list *l, const json_t *input, const char *key, const char *self,
                       loom_str *why)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(input, key), i, e)
    {
        const char *other = json_string_value(e);
        if (!strcmp(other, self)) {
            str_printf(why, "Task #%s cannot block itself (%s).", self, key);
            return 1;
        }
        if (!find(l, other, NULL)) {
            str_printf(why, "%s names task #%s, which does not exist.", key, other);
            return 1;
        }
    }
    return 0;
}

static void set_str(json_t *t, const json_t *input, const char *key, loom_str *changed)
{
    const char *v = json_get_str(input, key, NULL);
    if (v && strcmp(json_get_str(t, key, ""), v) != 0) {
        json_object_set_new(t, key, json_string(v));
        note(changed, key);
    }
}

static void delete_task(task_list *l, const char *id, size_t at)
{
    size_t i;
    json_t *t;
    json_array_foreach(l->tasks, i, t)
    {
        remove_str(t, "blocks", id);
        remove_str(t, "blockedBy", id);
    }
    json_array_remove(l->tasks, at);
}

int task_list_update(task_list *l, const json_t *input, loom_str *changed, loom_str *why)
{
    const char *id = json_get_str(input, "taskId", NULL);
    pthread_mutex_lock(&l->mu);
    size_t at = 0;
    json_t *t = find(l, id, &at);
    int rc = 1;
    if (!t) {
        str_printf(why, "Task not found: there is no task #%s (TaskList shows the tasks).",
                   id ? id : "");
        goto out;
    }
    if (check_links(l, input, "addBlocks", id, why) ||
        check_links(l, input, "addBlockedBy", id, why))
        goto out;
    rc = 0;
    const char *status = json_get_str(input, "status", NULL);
    if (status && !strcmp(status, "deleted")) {
        delete_task(l, id, at);
        note(changed, "deleted");
        save(l);
        goto out;
    }
    set_str(t, input, "subject", changed);
    set_str(t, input, "description", changed);
    set_str(t, input, "activeForm", changed);
    set_str(t, input, "status", changed);
    set_str(t, input, "owner", changed);
    size_t i;
    json_t *e;
    bool linked = false;
    json_array_foreach(json_object_get(input, "addBlocks"), i, e)
    {
        add_unique(t, "blocks", json_string_value(e));
        add_unique(find(l, json_string_value(e), NULL), "blockedBy", id);
        linked = true;
    }
    if (linked)
        note(changed, "blocks");
    linked = false;
    json_array_foreach(json_object_get(input, "addBlockedBy"), i, e)
    {
        add_unique(t, "blockedBy", json_string_value(e));
        add_unique(find(l, json_string_value(e), NULL), "blocks", id);
        linked = true;
    }
    if (linked)
        note(changed, "blockedBy");
    const json_t *md = json_object_get(input, "metadata");
    if (json_is_object(md) && json_object_size(md)) {
        json_t *have = json_object_get(t, "metadata");
        if (!json_is_object(have)) {
            have = json_object();
            json_object_set_new(t, "metadata", have);
        }
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)md, k, v)
        {
            if (json_is_null(v))
                json_object_del(have, k);
            else
                json_object_set_new(have, k, json_deep_copy(v));
        }
        if (!json_object_size(have))
            json_object_del(t, "metadata");
        note(changed, "metadata");
    }
    save(l);
out:
    pthread_mutex_unlock(&l->mu);
    return rc;
}

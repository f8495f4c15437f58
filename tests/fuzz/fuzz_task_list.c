/* fuzz_task_list.c — libFuzzer target for the task list's file
 * (tools/task_list.c): <session>.tasks.json sits beside the session and
 * may be damaged or written by anyone who can write there, so any bytes
 * in — no crash, no leak. A file is either loaded whole or the list starts
 * empty with a reason; then a create gets a fresh id no loaded task has,
 * an update of a task that does not exist changes nothing, updates with
 * links and a delete keep every listed task well formed. Any disagreement
 * aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "tools/task_list.h"

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz_task_list_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    close(fd);
    write_file(path, data, size);
    loom_str why = LOOM_STR_INIT;
    task_list *l = task_list_open(path, &why);
    json_t *before = task_list_all(l);
    if (why.len && json_array_size(before) != 0)
        abort(); /* a refused file leaves the list empty */
    json_t *t = task_list_create(l, "s", "d", NULL, NULL);
    const char *id = json_string_value(json_object_get(t, "id"));
    size_t i;
    json_t *e;
    json_array_foreach(before, i, e) if (!strcmp(json_string_value(json_object_get(e, "id")), id))
        abort(); /* ids are never reused */
    loom_str changed = LOOM_STR_INIT, err = LOOM_STR_INIT;
    json_t *ghost = json_pack("{s:s, s:s}", "taskId", "no-such-task", "status", "completed");
    if (task_list_update(l, ghost, &changed, &err) == 0 || changed.len)
        abort();
    json_t *first = json_array_get(before, 0);
    if (first) {
        json_t *link = json_pack("{s:s, s:[s], s:s}", "taskId", id, "addBlockedBy",
                                 json_string_value(json_object_get(first, "id")), "owner", "o");
        str_clear(&err);
        if (task_list_update(l, link, &changed, &err) != 0)
            abort();
        json_decref(link);
        json_t *del = json_pack("{s:O, s:s}", "taskId", json_object_get(first, "id"), "status",
                                "deleted");
        str_clear(&err);
        if (task_list_update(l, del, &changed, &err) != 0)
            abort();
        json_decref(del);
    }
    json_t *after = task_list_all(l);
    json_array_foreach(after, i, e) if (!json_is_string(json_object_get(e, "status")) ||
                                        !json_is_array(json_object_get(e, "blockedBy")))
        abort();
    json_decref(after);
    json_decref(ghost);
    json_decref(t);
    json_decref(before);
    str_free(&changed);
    str_free(&err);
    str_free(&why);
    task_list_free(l);
    /* Reopened, the list reads back what was written. */
    l = task_list_open(path, &why);
    if (why.len)
        abort();
    task_list_free(l);
    str_free(&why);
    unlink(path);
    return 0;
}

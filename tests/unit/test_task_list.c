/* test_task_list.c — the shared task list (tools/task_list.h): threads
 * creating and updating at once get distinct ids and lose no change; links
 * are kept on both ends and dropped with a deleted task; a refused update
 * changes nothing; the file is written and read back, and a damaged one
 * starts an empty list with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/json.h"
#include "tools/task_list.h"

#define THREADS 8
#define PER_THREAD 50

static void *creator(void *arg)
{
    task_list *l = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        json_t *t = task_list_create(l, "s", "d", NULL, NULL);
        json_t *up = json_pack("{s:O, s:s, s:s}", "taskId", json_object_get(t, "id"), "status",
                               "in_progress", "owner", "worker");
        loom_str changed = LOOM_STR_INIT, why = LOOM_STR_INIT;
        if (task_list_update(l, up, &changed, &why) != 0)
            abort();
        str_free(&changed);
        str_free(&why);
        json_decref(up);
        json_decref(t);
    }
    return NULL;
}

static void test_concurrent_agents(void **state)
{
    (void)state;
    task_list *l = task_list_open(NULL, NULL);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, creator, l), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    json_t *all = task_list_all(l);
    assert_int_equal(json_array_size(all), THREADS * PER_THREAD);
    json_t *seen = json_object();
    size_t i;
    json_t *t;
    json_array_foreach(all, i, t)
    {
        const char *id = json_get_str(t, "id", "");
        assert_null(json_object_get(seen, id)); /* every id once */
        json_object_set_new(seen, id, json_true());
        assert_string_equal(json_get_str(t, "status", ""), "in_progress");
        assert_string_equal(json_get_str(t, "owner", ""), "worker");
    }
    json_decref(seen);
    json_decref(all);
    task_list_free(l);
}

static int update(task_list *l, const char *json, loom_str *changed)
{
    json_t *in = json_loads(json, 0, NULL);
    loom_str why = LOOM_STR_INIT;
    str_clear(changed);
    int rc = task_list_update(l, in, changed, &why);
    str_free(&why);
    json_decref(in);
    return rc;
}

static void test_links_and_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_task_list_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/s.tasks.json", dir);
    task_list *l = task_list_open(path, NULL);
    json_decref(task_list_create(l, "a", "x", NULL, NULL));
    json_decref(task_list_create(l, "b", "y", "B-ing", NULL));
    loom_str changed = LOOM_STR_INIT;
    assert_int_equal(update(l, "{\"taskId\":\"1\",\"addBlocks\":[\"2\"]}", &changed), 0);
    assert_string_equal(changed.ptr, "blocks");
    json_t *b = task_list_get(l, "2");
    assert_string_equal(json_string_value(json_array_get(json_object_get(b, "blockedBy"), 0)), "1");
    json_decref(b);
    /* Refused: nothing changes, not even the fields before the bad link. */
    assert_int_equal(update(l, "{\"taskId\":\"2\",\"subject\":\"c\",\"addBlockedBy\":[\"7\"]}", &changed), 1);
    b = task_list_get(l, "2");
    assert_string_equal(json_get_str(b, "subject", ""), "b");
    json_decref(b);
    assert_int_equal(update(l, "{\"taskId\":\"1\",\"status\":\"deleted\"}", &changed), 0);
    task_list_free(l);

    /* Read back: the link went with the deleted task; ids go on from 3. */
    loom_str why = LOOM_STR_INIT;
    l = task_list_open(path, &why);
    assert_int_equal(why.len, 0);
    b = task_list_get(l, "2");
    assert_int_equal(json_array_size(json_object_get(b, "blockedBy")), 0);
    assert_string_equal(json_get_str(b, "activeForm", ""), "B-ing");
    json_decref(b);
    assert_null(task_list_get(l, "1"));
    json_t *c = task_list_create(l, "c", "z", NULL, NULL);
    assert_string_equal(json_get_str(c, "id", ""), "3");
    json_decref(c);
    task_list_free(l);

    FILE *f = fopen(path, "w");
    fputs("{\"nextId\": \"x\"", f);
    fclose(f);
    l = task_list_open(path, &why);
    assert_non_null(strstr(why.ptr, "is not a task list"));
    json_t *all = task_list_all(l);
    assert_int_equal(json_array_size(all), 0);
    json_decref(all);
    task_list_free(l);
    str_free(&why);
    str_free(&changed);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_agents),
        cmocka_unit_test(test_links_and_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_policy_approvals.c — the approval registry: answering from another
 * thread, expiry (with and without a waiter), double answers, unknown ids,
 * cancellation, removal under a waiter, and many runs at once. Sleeps only
 * order events; nothing asserts how long anything took. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/uuid.h"
#include "policy/approvals.h"

static json_t *push_context(void)
{
    return json_pack("{s:s, s:{s:s}, s:s}", "tool", "Bash", "input", "command",
                     "git push --force", "reason", "settings rule Bash(git push:*) asks");
}

static void create(approval_registry *reg, const char *run, int64_t timeout_ms,
                   char id[UUID_STR_LEN])
{
    json_t *ctx = push_context();
    approval_request req = {.run_id = run, .question = "Run `git push --force`?",
                            .context = ctx, .timeout_ms = timeout_ms};
    loom_error err = {0};
    assert_int_equal(approval_create(reg, &req, id, &err), 0);
    json_decref(ctx);
    assert_true(uuid_valid(id));
}

static void test_create_get_json(void **state)
{
    approval_registry *reg = approval_registry_new();
    char id[UUID_STR_LEN];
    int64_t before = clock_wall_ms();
    create(reg, "run_1", 0, id);

    approval a;
    loom_error err = {0};
    assert_int_equal(approval_get(reg, id, &a, &err), 0);
    assert_string_equal(a.id, id);
    assert_string_equal(a.run_id, "run_1");
    assert_string_equal(a.kind, "tool_execution");
    assert_int_equal(a.status, APPROVAL_PENDING);
    assert_true(a.created_at_ms >= before);
    assert_int_equal(a.expires_at_ms - a.created_at_ms, APPROVAL_DEFAULT_TIMEOUT_MS);
    assert_int_equal(a.resolved_at_ms, 0);
    assert_string_equal(json_string_value(json_object_get(a.context, "tool")), "Bash");

    json_t *j = approval_to_json(&a);
    assert_string_equal(json_string_value(json_object_get(j, "approval_id")), id);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "pending");
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "tool_execution");
    assert_string_equal(json_string_value(json_object_get(j, "question")),
                        "Run `git push --force`?");
    assert_true(json_is_string(json_object_get(j, "created_at")));
    assert_true(json_is_string(json_object_get(j, "expires_at")));
    assert_true(json_is_null(json_object_get(j, "resolved_at")));
    assert_true(json_is_null(json_object_get(j, "decision")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(json_object_get(j, "context"), "input"),
                                          "command")),
        "git push --force");
    json_decref(j);
    approval_clear(&a);

    json_t *pending = approval_list_pending(reg, NULL);
    assert_int_equal(json_array_size(pending), 1);
    json_decref(pending);

    /* A bad timeout is refused, not clamped silently. */
    approval_request bad = {.run_id = "r", .timeout_ms = -5};
    char id2[UUID_STR_LEN];
    assert_int_equal(approval_create(reg, &bad, id2, &err), -LOOM_ERR_INVALID_REQUEST);
    approval_registry_free(reg);
}

typedef struct resolver {
    approval_registry *reg;
    const char *id;
    bool allow, always;
    const char *reason;
    int rc;
} resolver;

static void *resolve_later(void *arg)
{
    resolver *r = arg;
    clock_sleep_ms(20, NULL);   /* let the main thread start waiting */
    loom_error err = {0};
    r->rc = approval_resolve(r->reg, r->id, r->allow, r->always, r->reason, &err);
    return NULL;
}

static void test_resolve_from_another_thread(void **state)
{
    approval_registry *reg = approval_registry_new();
    char id[UUID_STR_LEN];
    create(reg, "run_1", 0, id);
    resolver r = {reg, id, true, true, "looks fine", -1};
    pthread_t t;
    pthread_create(&t, NULL, resolve_later, &r);
    loom_cancel cancel = 0;
    approval a;
    loom_error err = {0};
    assert_int_equal(approval_wait(reg, id, &cancel, &a, &err), 0);
    pthread_join(t, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(a.status, APPROVAL_APPROVED);
    assert_true(a.always);
    assert_string_equal(a.reason, "looks fine");
    assert_true(a.resolved_at_ms >= a.created_at_ms);
    json_t *j = approval_to_json(&a);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "approved");
    assert_true(json_is_true(json_object_get(json_object_get(j, "decision"), "always")));
    assert_true(json_is_string(json_object_get(j, "resolved_at")));
    json_decref(j);
    approval_clear(&a);

    /* A rejection carries the reason for the model; "always" only means
     * something for an approval. */
    create(reg, "run_1", 0, id);
    resolver rj = {reg, id, false, true, "not on main", -1};
    pthread_create(&t, NULL, resolve_later, &rj);
    assert_int_equal(approval_wait(reg, id, NULL, &a, &err), 0);
    pthread_join(t, NULL);
    assert_int_equal(a.status, APPROVAL_REJECTED);
    assert_false(a.always);
    assert_string_equal(a.reason, "not on main");
    approval_clear(&a);

    /* Nothing is pending any more. */
    json_t *pending = approval_list_pending(reg, NULL);
    assert_int_equal(json_array_size(pending), 0);
    json_decref(pending);
    approval_registry_free(reg);
}

static void test_double_resolve_and_unknown_id(void **state)
{
    approval_registry *reg = approval_registry_new();
    char id[UUID_STR_LEN];
    create(reg, "run_1", 0, id);
    loom_error err = {0};
    assert_int_equal(approval_resolve(reg, id, false, false, NULL, &err), 0);
    assert_int_equal(approval_resolve(reg, id, true, false, NULL, &err),
                     -LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_non_null(strstr(err.message, "already rejected"));
    approval a;
    assert_int_equal(approval_get(reg, id, &a, &err), 0);
    assert_int_equal(a.status, APPROVAL_REJECTED);   /* the first answer stands */
    assert_null(a.reason);
    approval_clear(&a);

    const char *ghost = "01890000-0000-7000-8000-000000000000";
    assert_int_equal(approval_resolve(reg, ghost, true, false, NULL, &err),
                     -LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_non_null(strstr(err.message, ghost));
    assert_int_equal(approval_wait(reg, ghost, NULL, &a, &err), -LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_int_equal(approval_get(reg, ghost, &a, &err), -LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_int_equal(approval_remove(reg, ghost, &err), -LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_int_equal(approval_resolve(reg, NULL, true, false, NULL, &err),
                     -LOOM_ERR_RESOURCE_NOT_FOUND);
    approval_registry_free(reg);
}

static void test_expiry(void **state)
{
    approval_registry *reg = approval_registry_new();
    loom_error err = {0};
    approval a;

    /* A waiter sees the approval expire. */
    char id[UUID_STR_LEN];
    create(reg, "run_1", 30, id);
    loom_cancel cancel = 0;
    assert_int_equal(approval_wait(reg, id, &cancel, &a, &err), 0);
    assert_int_equal(a.status, APPROVAL_EXPIRED);
    assert_int_equal(a.resolved_at_ms, a.expires_at_ms);
    json_t *j = approval_to_json(&a);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "expired");
    json_decref(j);
    approval_clear(&a);
    assert_int_equal(approval_resolve(reg, id, true, false, NULL, &err),
                     -LOOM_ERR_RUN_APPROVAL_EXPIRED);

    /* No waiter: it expires all the same, seen by whoever looks next. */
    char id2[UUID_STR_LEN];
    create(reg, "run_2", 20, id2);
    clock_sleep_ms(60, NULL);
    json_t *pending = approval_list_pending(reg, NULL);
    assert_int_equal(json_array_size(pending), 0);
    json_decref(pending);
    assert_int_equal(approval_get(reg, id2, &a, &err), 0);
    assert_int_equal(a.status, APPROVAL_EXPIRED);
    approval_clear(&a);
    char id3[UUID_STR_LEN];
    create(reg, "run_3", 20, id3);
    clock_sleep_ms(60, NULL);
    assert_int_equal(approval_resolve(reg, id3, true, false, NULL, &err),
                     -LOOM_ERR_RUN_APPROVAL_EXPIRED);
    assert_non_null(strstr(err.message, "expired"));
    approval_registry_free(reg);
}

typedef struct canceller {
    loom_cancel *flag;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = arg;
    clock_sleep_ms(20, NULL);
    atomic_store(c->flag, 1);
    return NULL;
}

static void test_cancel_leaves_pending(void **state)
{
    approval_registry *reg = approval_registry_new();
    char id[UUID_STR_LEN];
    create(reg, "run_1", 0, id);
    loom_cancel flag = 0;
    canceller c = {&flag};
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, &c);
    approval a;
    loom_error err = {0};
    assert_int_equal(approval_wait(reg, id, &flag, &a, &err), -LOOM_ERR_RUN_CANCELLED);
    pthread_join(t, NULL);
    assert_int_equal(err.code, LOOM_ERR_RUN_CANCELLED);
    assert_null(a.run_id);   /* no snapshot on failure */

    /* Still pending: a resumed run may wait again and get its answer. */
    assert_int_equal(approval_get(reg, id, &a, &err), 0);
    assert_int_equal(a.status, APPROVAL_PENDING);
    approval_clear(&a);
    assert_int_equal(approval_resolve(reg, id, true, false, NULL, &err), 0);
    flag = 0;
    assert_int_equal(approval_wait(reg, id, &flag, &a, &err), 0);
    assert_int_equal(a.status, APPROVAL_APPROVED);
    approval_clear(&a);

    /* Already cancelled before waiting: returns at once. */
    create(reg, "run_1", 0, id);
    flag = 1;
    assert_int_equal(approval_wait(reg, id, &flag, NULL, &err), -LOOM_ERR_RUN_CANCELLED);
    approval_registry_free(reg);
}

typedef struct remover {
    approval_registry *reg;
    const char *id;
} remover;

static void *remove_later(void *arg)
{
    remover *r = arg;
    clock_sleep_ms(20, NULL);
    loom_error err = {0};
    approval_remove(r->reg, r->id, &err);
    return NULL;
}

static void test_remove_under_waiter(void **state)
{
    approval_registry *reg = approval_registry_new();
    char id[UUID_STR_LEN];
    create(reg, "run_1", 0, id);
    remover r = {reg, id};
    pthread_t t;
    pthread_create(&t, NULL, remove_later, &r);
    loom_error err = {0};
    assert_int_equal(approval_wait(reg, id, NULL, NULL, &err), -LOOM_ERR_RESOURCE_NOT_FOUND);
    pthread_join(t, NULL);
    approval_registry_free(reg);
}

/* ---- many runs at once --------------------------------------------------- */

#define RUNS 16

typedef struct waiter {
    approval_registry *reg;
    char run_id[16];
    char id[UUID_STR_LEN];
    approval_status got;
    pthread_mutex_t *ready_lock;
    int *ready;
} waiter;

static void *create_and_wait(void *arg)
{
    waiter *w = arg;
    approval_request req = {.run_id = w->run_id, .question = "ok?"};
    loom_error err = {0};
    if (approval_create(w->reg, &req, w->id, &err))
        return NULL;
    pthread_mutex_lock(w->ready_lock);
    (*w->ready)++;
    pthread_mutex_unlock(w->ready_lock);
    approval a;
    if (approval_wait(w->reg, w->id, NULL, &a, &err) == 0) {
        w->got = a.status;
        approval_clear(&a);
    }
    return NULL;
}

static void test_many_runs(void **state)
{
    approval_registry *reg = approval_registry_new();
    pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
    int ready = 0;
    waiter w[RUNS];
    pthread_t t[RUNS];
    for (int i = 0; i < RUNS; i++) {
        w[i] = (waiter){.reg = reg, .got = APPROVAL_PENDING, .ready_lock = &ready_lock,
                        .ready = &ready};
        snprintf(w[i].run_id, sizeof w[i].run_id, "run_%02d", i);
        pthread_create(&t[i], NULL, create_and_wait, &w[i]);
    }
    for (;;) {
        pthread_mutex_lock(&ready_lock);
        int n = ready;
        pthread_mutex_unlock(&ready_lock);
        if (n == RUNS)
            break;
        clock_sleep_ms(1, NULL);
    }
    /* Only run_03's approval, by filter. */
    json_t *one = approval_list_pending(reg, "run_03");
    assert_int_equal(json_array_size(one), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(one, 0), "run_id")),
                        "run_03");
    json_decref(one);

    /* Answer everything the way a surface would: from the pending list. */
    json_t *all = approval_list_pending(reg, NULL);
    assert_int_equal(json_array_size(all), RUNS);
    size_t i;
    json_t *item;
    json_array_foreach(all, i, item) {
        const char *run = json_string_value(json_object_get(item, "run_id"));
        bool even = (run[5] - '0') % 2 == 0;
        loom_error err = {0};
        assert_int_equal(approval_resolve(reg, json_string_value(json_object_get(item,
                                                                                 "approval_id")),
                                          even, false, even ? NULL : "odd run", &err),
                         0);
    }
    json_decref(all);
    for (int k = 0; k < RUNS; k++) {
        pthread_join(t[k], NULL);
        assert_int_equal(w[k].got, k % 2 == 0 ? APPROVAL_APPROVED : APPROVAL_REJECTED);
    }
    approval_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_get_json),
        cmocka_unit_test(test_resolve_from_another_thread),
        cmocka_unit_test(test_double_resolve_and_unknown_id),
        cmocka_unit_test(test_expiry),
        cmocka_unit_test(test_cancel_leaves_pending),
        cmocka_unit_test(test_remove_under_waiter),
        cmocka_unit_test(test_many_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

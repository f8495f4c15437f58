/* recover.c — what a crash (or a stop) left: at service_new, every run the
 * store has as queued, running, waiting_approval or waiting_external is no
 * longer executing. Each is marked failed with error run_resumable ("the
 * server stopped while the run was <state>") by a run.state_changed event
 * appended after its last stored seq; its pending approvals become expired
 * ("the server restarted"). With resume_on_restart it is then resumed: the
 * loom session is reopened from its JSONL file (the Session document keeps
 * its id) and loom_run_continue carries it on, under the same run id.
 *
 * Owns nothing. Threading: runs inside service_new, before any HTTP thread
 * can call in (the exec threads it starts take the mutex as usual). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/runs/service_int.h"

void svc_expire_approvals(service *svc, const char *tenant, const char *run_id, const char *why)
{
    store_list_query q = {tenant, run_id, "pending", NULL, 1000};
    char *next = NULL;
    srv_error err = {0};
    char *arr = svc->st->ops->list(svc->st, STORE_APPROVAL, &q, &next, &err);
    free(next);
    srv_error_clear(&err);
    json_t *docs = arr ? json_loads(arr, 0, NULL) : NULL;
    free(arr);
    size_t i;
    json_t *d;
    char now[32];
    svc_now(now);
    json_array_foreach(docs, i, d) {
        json_object_set_new(d, "status", json_string("expired"));
        json_object_set_new(d, "resolved_at", json_string(now));
        json_object_set_new(d, "reason", json_string(why));
        store_doc_keys keys = {tenant, run_id, "expired",
                               json_string_value(json_object_get(d, "requested_at"))};
        writer_doc(svc->w, STORE_APPROVAL, json_string_value(json_object_get(d, "approval_id")),
                   &keys, 0, json_dumps(d, JSON_COMPACT));
    }
    json_decref(docs);
}

static void recover_run(service *svc, const char *tenant, const char *run_id)
{
    srv_error err = {0};
    srv_run *r = svc_run_load(svc, run_id, &err);
    srv_error_clear(&err);
    if (!r)
        return;
    svc_expire_approvals(svc, tenant, run_id, "the server restarted");
    pthread_mutex_lock(&svc->mu);
    char why[160];
    snprintf(why, sizeof why, "the server stopped while the run was %s",
             loom_run_state_name(r->state));
    r->pending_approval_id[0] = '\0';
    /* Loaded runs count as active from the store; the count starts at them. */
    if (run_state_active(r->state))
        (*svc_count(svc, r->tenant_id, NULL))++;
    r->err_code = LOOM_ERR_RUN_RESUMABLE;
    free(r->err_message);
    r->err_message = strdup(why);
    svc_transition(svc, r, LOOM_RUN_FAILED, why, NULL);
    if (svc->opts.resume_on_restart) {
        r->continue_next = true;
        r->err_code = LOOM_OK;
        svc_transition(svc, r, LOOM_RUN_QUEUED, "resumed after a restart", NULL);
        srv_session *s = r->sess;
        if (!s->active && !s->queue_head)
            s->active = r;
        else if (s->queue_tail)
            s->queue_tail->queue_next = r, s->queue_tail = r;
        else
            s->queue_head = s->queue_tail = r;
        svc_kick(svc, s);
    }
    pthread_mutex_unlock(&svc->mu);
}

static void recover_tenant(service *svc, const char *tenant)
{
    static const char *const states[] = {"queued", "running", "waiting_approval",
                                         "waiting_external"};
    for (size_t k = 0; k < sizeof states / sizeof states[0]; k++) {
        /* Collect first: recovering changes the state the listing filters on. */
        json_t *ids = json_array();
        char *cursor = NULL;
        do {
            store_list_query q = {tenant, NULL, states[k], cursor, 200};
            char *next = NULL;
            srv_error err = {0};
            char *arr = svc->st->ops->list(svc->st, STORE_RUN, &q, &next, &err);
            srv_error_clear(&err);
            free(cursor);
            cursor = next;
            json_t *docs = arr ? json_loads(arr, 0, NULL) : NULL;
            free(arr);
            size_t i;
            json_t *d;
            json_array_foreach(docs, i, d) json_array_append(ids, json_object_get(d, "run_id"));
            json_decref(docs);
        } while (cursor);
        size_t i;
        json_t *id;
        json_array_foreach(ids, i, id) if (json_is_string(id))
            recover_run(svc, tenant, json_string_value(id));
        json_decref(ids);
    }
}

void svc_recover(service *svc)
{
    size_t n = objects_tenants(svc->objs, NULL, 0);
    const tenant_config **list = n ? calloc(n, sizeof *list) : NULL;
    if (n && !list)
        return;
    objects_tenants(svc->objs, list, n);
    for (size_t i = 0; i < n; i++)
        recover_tenant(svc, list[i]->id);
    free(list);
    writer_flush(svc->w);
}

/* audit.c — writes the audit log (audit.h) and digests tool inputs.
 *
 * Each record is built whole as one buffer ending in '\n' and written with
 * a single write(2) on an O_APPEND descriptor. The mutex keeps threads of
 * this process from splitting a record across a short write; O_APPEND keeps
 * other processes' records from landing inside ours.
 *
 * The digest is SHA-256 (base/sha256.h): a digest in an
 * audit log should not collide by accident or by design, and 64-bit
 * FNV-1a can do both.
 */
#include "policy/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "base/utf8.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/jsonl.h"
#include "base/sha256.h"

void audit_digest_bytes(const void *data, size_t len, char out[AUDIT_DIGEST_LEN])
{
    memcpy(out, "sha256:", 7);
    sha256_hex(data, len, out + 7); /* 64 hex digits and the NUL: out[71] */
}

int audit_digest_json(const json_t *v, char out[AUDIT_DIGEST_LEN])
{
    if (!v) {
        audit_digest_bytes("null", 4, out);
        return 0;
    }
    char *canon = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!canon)
        return -1;
    audit_digest_bytes(canon, strlen(canon), out);
    free(canon);
    return 0;
}

/* ---- the log -------------------------------------------------------------- */

struct audit_log {
    pthread_mutex_t lock;
    int fd;
    char *path;
};

audit_log *audit_open(const char *path, loom_error *err)
{
    if (!path || !*path) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "audit log: no path given");
        return NULL;
    }
    int fd = jsonl_open(path, "audit log", err);
    if (fd < 0)
        return NULL;
    audit_log *log = xcalloc(1, sizeof *log);
    log->path = xstrdup(path);
    pthread_mutex_init(&log->lock, NULL);
    log->fd = fd;
    return log;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* Hook names, reasons and rule text come from outside and jansson refuses
 * invalid UTF-8; a record must never be lost for that, so bad bytes are
 * written as U+FFFD. */
static json_t *text(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t len;
    char *clean = utf8_sanitize(s, strlen(s), &len);
    j = json_stringn(clean, len);
    free(clean);
    return j ? j : json_null();
}

static json_t *build_record(const audit_entry *e)
{
    json_t *o = json_object();
    char ts[32];
    clock_iso8601(e->ts_ms ? e->ts_ms : clock_wall_ms(), ts);
    json_object_set_new(o, "v", json_integer(1));
    json_object_set_new(o, "ts", json_string(ts));
    json_object_set_new(o, "session_id", text(e->session_id));
    json_object_set_new(o, "run_id", text(e->run_id));
    json_object_set_new(o, "call_id", text(e->call_id));
    json_object_set_new(o, "tool", text(e->tool));

    char digest[AUDIT_DIGEST_LEN];
    json_object_set_new(o, "input_digest",
                        e->input && !audit_digest_json(e->input, digest) ? json_string(digest)
                                                                         : json_null());
    json_object_set_new(o, "mode", json_string(perm_mode_name(e->mode)));

    if (e->rule && e->rule->verdict != PERM_NONE) {
        char rule[sizeof e->rule->rule + 1];
        memcpy(rule, e->rule->rule, sizeof e->rule->rule);
        rule[sizeof e->rule->rule] = '\0';  /* a full buffer may lack its NUL */
        json_object_set_new(o, "rule",
                            json_pack("{s:o, s:s, s:s}", "text", text(rule), "source",
                                      rule_source_name(e->rule->source), "verdict",
                                      perm_verdict_name(e->rule->verdict)));
    } else {
        json_object_set_new(o, "rule", json_null());
    }

    json_t *hooks = json_array();
    for (size_t i = 0; e->hooks && i < e->n_hooks; i++)
        json_array_append_new(hooks, json_pack("{s:o, s:s, s:o}", "name", text(e->hooks[i].name),
                                               "verdict", perm_verdict_name(e->hooks[i].verdict),
                                               "reason", text(e->hooks[i].reason)));
    json_object_set_new(o, "hooks", hooks);

    if (e->risk) {
        char id[sizeof e->risk->rule_id + 1], why[sizeof e->risk->reason + 1];
        memcpy(id, e->risk->rule_id, sizeof e->risk->rule_id);
        id[sizeof e->risk->rule_id] = '\0';
        memcpy(why, e->risk->reason, sizeof e->risk->reason);
        why[sizeof e->risk->reason] = '\0';
        json_object_set_new(o, "classifier",
                            json_pack("{s:s, s:o, s:o}", "level", risk_level_name(e->risk->level),
                                      "rule_id", id[0] ? text(id) : json_null(), "reason",
                                      why[0] ? text(why) : json_null()));
    } else {
        json_object_set_new(o, "classifier", json_null());
    }
    json_object_set_new(o, "model_classifier",
                        e->model == PERM_NONE ? json_null()
                                              : json_string(perm_verdict_name(e->model)));

    const perm_decision *d = e->decision;
    json_object_set_new(o, "decision", json_string(perm_verdict_name(d->verdict)));
    json_object_set_new(o, "source", str_or_null(d->source));
    json_object_set_new(o, "row", str_or_null(d->row));
    json_object_set_new(o, "reason", text(d->reason));
    json_object_set_new(o, "approval_id", text(e->approval_id));
    json_object_set_new(o, "duration_us", json_integer(e->duration_us));
    return o;
}

int audit_record(audit_log *log, const audit_entry *e)
{
    if (!log || !e || !e->decision)
        return -LOOM_ERR_INVALID_REQUEST;
    json_t *rec = build_record(e);
    pthread_mutex_lock(&log->lock);
    int rc = jsonl_append(log->fd, rec, NULL);
    pthread_mutex_unlock(&log->lock);
    json_decref(rec);
    return rc;
}

int audit_record_helper(audit_log *log, const char *session_id, const char *run_id,
                        const json_t *fields)
{
    if (!log || !json_is_object(fields))
        return -LOOM_ERR_INVALID_REQUEST;
    json_t *o = json_object();
    char ts[32];
    clock_iso8601(clock_wall_ms(), ts);
    json_object_set_new(o, "v", json_integer(1));
    json_object_set_new(o, "ts", json_string(ts));
    json_object_set_new(o, "kind", json_string("helper_call"));
    json_object_set_new(o, "session_id", text(session_id));
    json_object_set_new(o, "run_id", text(run_id));
    json_object_update(o, (json_t *)fields);
    pthread_mutex_lock(&log->lock);
    int rc = jsonl_append(log->fd, o, NULL);
    pthread_mutex_unlock(&log->lock);
    json_decref(o);
    return rc;
}

int audit_sync(audit_log *log)
{
    if (!log)
        return 0;
    pthread_mutex_lock(&log->lock);
    int rc = fdatasync(log->fd);
    pthread_mutex_unlock(&log->lock);
    return rc ? -LOOM_ERR_IO : 0;
}

void audit_close(audit_log *log)
{
    if (!log)
        return;
    fdatasync(log->fd);
    close(log->fd);
    pthread_mutex_destroy(&log->lock);
    free(log->path);
    free(log);
}

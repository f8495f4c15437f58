/* audit.h — the audit (veto) log: one JSON line per permission decision.
 *
 * seed 000 Q5 asks for a veto log that supports audit and tuning, and the
 * M2 exit criterion wants structured records of every prompt, deny and
 * automatic pass. Each record says what was asked (tool, a digest of the
 * input — never the input itself, which may hold secrets), what every layer
 * answered (rule, hooks, classifiers, mode), what was decided, by which
 * table row, and how long it took:
 *
 *   {"v":1,"ts":"…","session_id":…,"run_id":…,"call_id":…,"tool":…,
 *    "input_digest":"sha256:…","mode":"default",
 *    "rule":{"text":"Bash(git push:*)","source":"project","verdict":"deny"}|null,
 *    "hooks":[{"name":…,"verdict":"allow","reason":…}],
 *    "classifier":{"level":"confirm","rule_id":…,"reason":…}|null,
 *    "model_classifier":"allow"|"ask"|"deny"|null,
 *    "decision":"deny","source":"settings","row":"settings.deny","reason":…,
 *    "approval_id":…|null,"duration_us":12}
 *
 * Every key is always present (null when unknown), so the file reads as a
 * table. The caller picks the path ($LOOM_HOME/audit/<session>.jsonl).
 */
#ifndef LOOM_POLICY_AUDIT_H
#define LOOM_POLICY_AUDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "policy/decision.h"
#include "policy/perm_types.h"

/* "sha256:" + 64 hex digits + NUL */
#define AUDIT_DIGEST_LEN 72

typedef struct audit_log audit_log;

/* One PreToolUse hook's answer. */
typedef struct audit_hook {
    const char *name;       /* the hook's name or command */
    perm_verdict verdict;   /* NONE when it had no opinion */
    const char *reason;     /* may be NULL */
} audit_hook;

/* One decision. Everything is borrowed for the audit_record() call; NULL
 * pointers are written as null. */
typedef struct audit_entry {
    int64_t ts_ms;                  /* wall clock; 0: now */
    const char *session_id;
    const char *run_id;
    const char *call_id;            /* the model's tool_use id */
    const char *tool;
    const json_t *input;            /* digested (audit_digest_json), not stored */
    perm_mode mode;
    const rule_match *rule;         /* NULL or verdict NONE: no rule matched */
    const audit_hook *hooks;
    size_t n_hooks;
    const risk_verdict *risk;       /* NULL: not classified */
    perm_verdict model;             /* auto mode's model classifier; NONE: not asked */
    const perm_decision *decision;  /* what was decided (source "user" once a
                                     * person answered an approval) */
    const char *approval_id;        /* the approval this decision asked or ended */
    int64_t duration_us;            /* time to decide (and, for a person, to answer) */
} audit_entry;

/* Opens (creating, with parent directories) the log for appending. The
 * file is created 0600: digests and hook reasons are nobody else's
 * business. NULL on failure with err set. */
audit_log *audit_open(const char *path, loom_error *err);

/* Appends one record as one write() on an O_APPEND descriptor, so records
 * from threads — and from other processes appending to the same file —
 * never interleave. 0, or -LOOM_ERR_IO / -LOOM_ERR_INVALID_REQUEST (no
 * decision). Thread-safe. */
int audit_record(audit_log *log, const audit_entry *e);

/* A helper model call (provider/helper.h) in the same file, told apart by
 * "kind": "helper_call" (a decision record has no "kind"):
 *   {"v":1,"ts":…,"kind":"helper_call","session_id":…,"run_id":…,
 *    "purpose":…,"tier":…,"model":…,"status":…,"usage":{…},"costUsd":…,…}
 * fields (borrowed) are merged in as they are. Thread-safe. */
int audit_record_helper(audit_log *log, const char *session_id, const char *run_id,
                        const json_t *fields);

/* Flushes to disk (fdatasync). Records are written unbuffered, so this is
 * only about surviving a power cut. */
int audit_sync(audit_log *log);
/* Syncs and closes. NULL is fine. */
void audit_close(audit_log *log);

/* The digest of a JSON value's canonical form: compact, keys sorted at
 * every level, jansson's number formatting — so the same input digests the
 * same whatever key order it arrived in. NULL digests as JSON null. 0, or
 * -1 when v cannot be serialised. */
int audit_digest_json(const json_t *v, char out[AUDIT_DIGEST_LEN]);
/* SHA-256 of len bytes as "sha256:<hex>". */
void audit_digest_bytes(const void *data, size_t len, char out[AUDIT_DIGEST_LEN]);

#endif

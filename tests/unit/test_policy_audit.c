/* test_policy_audit.c — the audit log: every record is one valid JSON line
 * with every field; threads and processes appending together never
 * interleave; the input digest is SHA-256 of the canonical input and does
 * not depend on key order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "policy/audit.h"
#include "policy/decision.h"

static char tmpdir[64];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/loom-audit-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- digest --------------------------------------------------------------- */

static void expect_digest(const char *data, size_t len, const char *hex)
{
    char out[AUDIT_DIGEST_LEN];
    audit_digest_bytes(data, len, out);
    assert_int_equal(strncmp(out, "sha256:", 7), 0);
    assert_string_equal(out + 7, hex);
}

static void test_sha256_vectors(void **state)
{
    /* FIPS 180-4 examples, and block-boundary lengths (checked with
     * sha256sum). */
    expect_digest("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_digest("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    expect_digest(two, strlen(two),
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char xs[64];
    memset(xs, 'x', sizeof xs);
    expect_digest(xs, 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
    expect_digest(xs, 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    expect_digest(million, 1000000,
                  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
}

static void test_input_digest_is_canonical(void **state)
{
    json_t *a = json_loads("{\"b\":[true,null,\"\xc3\xa9\"],\"a\":1}", 0, NULL);
    json_t *b = json_loads("{ \"a\" : 1, \"b\" : [ true, null, \"\\u00e9\" ] }", 0, NULL);
    char da[AUDIT_DIGEST_LEN], db[AUDIT_DIGEST_LEN];
    assert_int_equal(audit_digest_json(a, da), 0);
    assert_int_equal(audit_digest_json(b, db), 0);
    assert_string_equal(da, db);
    /* = sha256 of {"a":1,"b":[true,null,"é"]} (checked with sha256sum) */
    assert_string_equal(da,
                        "sha256:9488dd13ca33d3291f5a91a1833dfa164811755ffba538c2b340780f8c31a0cb");
    /* Nested objects are sorted too; any change changes the digest. */
    json_t *n1 = json_loads("{\"x\":{\"z\":1,\"y\":2}}", 0, NULL);
    json_t *n2 = json_loads("{\"x\":{\"y\":2,\"z\":1}}", 0, NULL);
    json_t *n3 = json_loads("{\"x\":{\"y\":2,\"z\":3}}", 0, NULL);
    char d1[AUDIT_DIGEST_LEN], d2[AUDIT_DIGEST_LEN], d3[AUDIT_DIGEST_LEN];
    audit_digest_json(n1, d1);
    audit_digest_json(n2, d2);
    audit_digest_json(n3, d3);
    assert_string_equal(d1, d2);
    assert_string_not_equal(d1, d3);
    /* Stable across calls, and NULL digests as JSON null. */
    audit_digest_json(n1, d2);
    assert_string_equal(d1, d2);
    char dn[AUDIT_DIGEST_LEN], dnull[AUDIT_DIGEST_LEN];
    audit_digest_json(NULL, dn);
    audit_digest_bytes("null", 4, dnull);
    assert_string_equal(dn, dnull);
    json_decref(a);
    json_decref(b);
    json_decref(n1);
    json_decref(n2);
    json_decref(n3);
}

/* ---- records ------------------------------------------------------------ */

static const char *const FIELDS[] = {
    "v",        "ts",         "session_id",  "run_id", "call_id", "tool",
    "input_digest", "mode",   "rule",        "hooks",  "classifier", "model_classifier",
    "decision", "source",     "row",         "reason", "approval_id", "duration_us",
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

/* Reads path and returns its lines parsed; asserts each is one valid JSON
 * object with exactly the documented keys. */
static json_t *read_records(const char *path)
{
    char *data;
    size_t len;
    loom_error err = {0};
    assert_int_equal(file_read_all(path, &data, &len, &err), 0);
    assert_true(len > 0);
    assert_int_equal(data[len - 1], '\n');
    json_t *all = json_array();
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_error_t je;
        json_t *rec = json_loads(line, 0, &je);
        if (!rec)
            fail_msg("not JSON (%s): %.200s", je.text, line);
        assert_true(json_is_object(rec));
        for (size_t i = 0; i < NFIELDS; i++)
            if (!json_object_get(rec, FIELDS[i]))
                fail_msg("record lacks %s: %.200s", FIELDS[i], line);
        assert_int_equal(json_object_size(rec), NFIELDS);
        json_array_append_new(all, rec);
    }
    free(data);
    return all;
}

static void test_record_has_every_field(void **state)
{
    char path[128];
    snprintf(path, sizeof path, "%s/audit/sess-1.jsonl", tmpdir);   /* dir made on open */
    loom_error err = {0};
    audit_log *log = audit_open(path, &err);
    assert_non_null(log);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    /* The seed 000 M2 case, decided for real. */
    rule_match rule = {.verdict = PERM_DENY, .rule = "Bash(git push:*)",
                       .source = RULE_SRC_PROJECT};
    risk_verdict risk = {.level = RISK_CONFIRM, .rule_id = "git.push_force",
                         .reason = "rewrites shared history"};
    perm_inputs in = {.mode = MODE_DEFAULT, .tool = "Bash", .hook = PERM_ALLOW,
                      .hook_name = "allow.sh", .rule = &rule, .risk = &risk,
                      .interactive = true};
    perm_decision d;
    perm_decide(&in, &d);
    json_t *input = json_pack("{s:s}", "command", "git push --force origin main");
    audit_hook hooks[] = {{"allow.sh", PERM_ALLOW, "CI pushes are fine"},
                          {"lint.sh", PERM_NONE, NULL}};
    audit_entry e = {.ts_ms = 1764491284123, .session_id = "sess-1", .run_id = "run-1",
                     .call_id = "toolu_01", .tool = "Bash", .input = input,
                     .mode = MODE_DEFAULT, .rule = &rule, .hooks = hooks, .n_hooks = 2,
                     .risk = &risk, .decision = &d, .duration_us = 42};
    assert_int_equal(audit_record(log, &e), 0);

    /* A bare record: everything unknown is null, nothing is left out. */
    perm_inputs rd = {.mode = MODE_PLAN, .tool = "Read", .read_only = true};
    perm_decision d2;
    perm_decide(&rd, &d2);
    audit_entry bare = {.mode = MODE_PLAN, .decision = &d2};
    assert_int_equal(audit_record(log, &bare), 0);

    /* After an approval: source "user", the approval's id. */
    perm_decision user = {.verdict = PERM_ALLOW, .source = PERM_SRC_USER, .row = "settings.ask",
                          .reason = "approved by the user"};
    audit_entry approved = {.session_id = "sess-1", .tool = "Bash", .decision = &user,
                            .approval_id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
                            .model = PERM_ALLOW, .duration_us = 5000000};
    assert_int_equal(audit_record(log, &approved), 0);

    /* Refused without a decision. */
    audit_entry none = {.tool = "Bash"};
    assert_int_equal(audit_record(log, &none), -LOOM_ERR_INVALID_REQUEST);
    audit_close(log);

    json_t *recs = read_records(path);
    assert_int_equal(json_array_size(recs), 3);
    json_t *r = json_array_get(recs, 0);
    assert_int_equal(json_integer_value(json_object_get(r, "v")), 1);
    assert_string_equal(json_string_value(json_object_get(r, "ts")), "2025-11-30T08:28:04.123Z");
    assert_string_equal(json_string_value(json_object_get(r, "session_id")), "sess-1");
    assert_string_equal(json_string_value(json_object_get(r, "run_id")), "run-1");
    assert_string_equal(json_string_value(json_object_get(r, "call_id")), "toolu_01");
    assert_string_equal(json_string_value(json_object_get(r, "tool")), "Bash");
    char dg[AUDIT_DIGEST_LEN];
    audit_digest_json(input, dg);
    assert_string_equal(json_string_value(json_object_get(r, "input_digest")), dg);
    assert_string_equal(json_string_value(json_object_get(r, "mode")), "default");
    json_t *rj = json_object_get(r, "rule");
    assert_string_equal(json_string_value(json_object_get(rj, "text")), "Bash(git push:*)");
    assert_string_equal(json_string_value(json_object_get(rj, "source")), "project");
    json_t *hj = json_object_get(r, "hooks");
    assert_int_equal(json_array_size(hj), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(hj, 0), "verdict")),
                        "allow");
    assert_string_equal(json_string_value(json_object_get(json_array_get(hj, 0), "reason")),
                        "CI pushes are fine");
    assert_true(json_is_null(json_object_get(json_array_get(hj, 1), "reason")));
    json_t *cj = json_object_get(r, "classifier");
    assert_string_equal(json_string_value(json_object_get(cj, "level")), "confirm");
    assert_string_equal(json_string_value(json_object_get(cj, "rule_id")), "git.push_force");
    assert_string_equal(json_string_value(json_object_get(cj, "reason")),
                        "rewrites shared history");
    assert_true(json_is_null(json_object_get(r, "model_classifier")));
    assert_string_equal(json_string_value(json_object_get(r, "decision")), "deny");
    assert_string_equal(json_string_value(json_object_get(r, "source")), "settings");
    assert_string_equal(json_string_value(json_object_get(r, "row")), "settings.deny");
    assert_non_null(strstr(json_string_value(json_object_get(r, "reason")),
                           "denied by settings rule Bash(git push:*)"));
    assert_true(json_is_null(json_object_get(r, "approval_id")));
    assert_int_equal(json_integer_value(json_object_get(r, "duration_us")), 42);

    r = json_array_get(recs, 1);
    const char *nulls[] = {"session_id", "run_id", "call_id", "tool", "input_digest",
                           "rule", "classifier", "model_classifier", "approval_id"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (!json_is_null(json_object_get(r, nulls[i])))
            fail_msg("%s should be null", nulls[i]);
    assert_int_equal(json_array_size(json_object_get(r, "hooks")), 0);
    assert_string_equal(json_string_value(json_object_get(r, "mode")), "plan");
    assert_string_equal(json_string_value(json_object_get(r, "decision")), "allow");
    assert_true(json_is_string(json_object_get(r, "ts")));

    r = json_array_get(recs, 2);
    assert_string_equal(json_string_value(json_object_get(r, "source")), "user");
    assert_string_equal(json_string_value(json_object_get(r, "model_classifier")), "allow");
    assert_string_equal(json_string_value(json_object_get(r, "approval_id")),
                        "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
    json_decref(recs);
    json_decref(input);
}

static void test_bad_utf8_still_recorded(void **state)
{
    char path[128];
    snprintf(path, sizeof path, "%s/utf8.jsonl", tmpdir);
    loom_error err = {0};
    audit_log *log = audit_open(path, &err);
    assert_non_null(log);
    perm_decision d = {.verdict = PERM_DENY, .source = PERM_SRC_HOOK, .row = "hook.deny",
                       .reason = "denied by hook \xff\xfe"};
    audit_hook h = {"bad\xc3", PERM_DENY, "caf\xc3\xa9 \xed\xa0\x80 ok"};
    audit_entry e = {.tool = "Bash", .hooks = &h, .n_hooks = 1, .decision = &d};
    assert_int_equal(audit_record(log, &e), 0);
    audit_close(log);
    json_t *recs = read_records(path);
    json_t *hj = json_array_get(json_object_get(json_array_get(recs, 0), "hooks"), 0);
    assert_string_equal(json_string_value(json_object_get(hj, "reason")),
                        "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd ok");
    json_decref(recs);
}

static void test_open_failure(void **state)
{
    loom_error err = {0};
    assert_null(audit_open("/proc/loom-no-such-dir/a.jsonl", &err));
    assert_int_not_equal(err.code, LOOM_OK);
    assert_null(audit_open("", &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
}

/* ---- concurrency ---------------------------------------------------------- */

#define THREADS 8
#define PER_THREAD 150
#define BIG 6000   /* larger than a pipe buffer's atomic size, to make tearing likely */

typedef struct writer {
    audit_log *log;
    int id;
    int failures;
} writer;

static void write_many(audit_log *log, int who, int count, int *failures)
{
    char *reason = malloc(BIG + 1);
    memset(reason, 'a' + who % 26, BIG);
    reason[BIG] = '\0';
    perm_decision d = {.verdict = PERM_ALLOW, .source = PERM_SRC_MODE, .row = "bypass",
                       .reason = "allowed"};
    for (int i = 0; i < count; i++) {
        char call[32];
        snprintf(call, sizeof call, "w%02d-%04d", who, i);
        audit_hook h = {"big", PERM_ALLOW, reason};
        audit_entry e = {.session_id = "s", .call_id = call, .tool = "Bash", .hooks = &h,
                         .n_hooks = 1, .decision = &d, .mode = MODE_BYPASS};
        if (audit_record(log, &e))
            (*failures)++;
    }
    free(reason);
}

static void *writer_main(void *arg)
{
    writer *w = arg;
    write_many(w->log, w->id, PER_THREAD, &w->failures);
    return NULL;
}

/* Every line parsed; each call id exactly once; each big reason intact. */
static void check_all_there(const char *path, int writers, int per_writer)
{
    json_t *recs = read_records(path);
    assert_int_equal(json_array_size(recs), (size_t)(writers * per_writer));
    char *seen = calloc((size_t)(writers * per_writer), 1);
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r) {
        int who, n;
        assert_int_equal(
            sscanf(json_string_value(json_object_get(r, "call_id")), "w%d-%d", &who, &n), 2);
        assert_true(who < writers && n < per_writer);
        assert_false(seen[who * per_writer + n]);
        seen[who * per_writer + n] = 1;
        const char *reason = json_string_value(
            json_object_get(json_array_get(json_object_get(r, "hooks"), 0), "reason"));
        assert_int_equal(strlen(reason), BIG);
        assert_int_equal(reason[0], 'a' + who % 26);
        assert_int_equal(reason[BIG - 1], 'a' + who % 26);
    }
    free(seen);
    json_decref(recs);
}

static void test_threads_do_not_interleave(void **state)
{
    char path[128];
    snprintf(path, sizeof path, "%s/threads.jsonl", tmpdir);
    loom_error err = {0};
    audit_log *log = audit_open(path, &err);
    assert_non_null(log);
    writer w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (writer){log, i, 0};
        pthread_create(&t[i], NULL, writer_main, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    assert_int_equal(audit_sync(log), 0);
    audit_close(log);
    check_all_there(path, THREADS, PER_THREAD);
}

static void test_processes_do_not_interleave(void **state)
{
    char path[128];
    snprintf(path, sizeof path, "%s/procs.jsonl", tmpdir);
    enum { PROCS = 4 };
    pid_t kids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        kids[p] = fork();
        assert_true(kids[p] >= 0);
        if (kids[p] == 0) {
            loom_error err = {0};
            audit_log *log = audit_open(path, &err);
            int failures = log ? 0 : 1;
            if (log)
                write_many(log, p, PER_THREAD, &failures);
            audit_close(log);
            _exit(failures ? 1 : 0);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int status;
        assert_int_equal(waitpid(kids[p], &status, 0), kids[p]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    check_all_there(path, PROCS, PER_THREAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_input_digest_is_canonical),
        cmocka_unit_test(test_record_has_every_field),
        cmocka_unit_test(test_bad_utf8_still_recorded),
        cmocka_unit_test(test_open_failure),
        cmocka_unit_test(test_threads_do_not_interleave),
        cmocka_unit_test(test_processes_do_not_interleave),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

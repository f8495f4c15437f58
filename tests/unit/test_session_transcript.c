/* test_session_transcript.c — the session file: round trips, tree links,
 * damage tolerance (torn tail, garbage lines, cycles), fork and resend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "session/history.h"
#include "session/record.h"
#include "session/transcript.h"

static char tmpdir[] = "/tmp/loom-test-transcript-XXXXXX";

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("LOOM_HOME", tmpdir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* A fresh per-test directory under tmpdir. Caller frees. */
static char *subdir(const char *name)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", tmpdir, name);
    return str_steal(&s);
}

static char *slurp(const char *path, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    assert_int_equal(file_read_all(path, &buf, &n, NULL), 0);
    if (len)
        *len = n;
    return buf;
}

static void append_raw(const char *path, const char *bytes)
{
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fputs(bytes, f);
    fclose(f);
}

static json_t *append(transcript *t, json_t *rec)
{
    loom_error err;
    loom_error_clear(&err);
    int rc = transcript_append(t, rec, &err);
    if (rc)
        fail_msg("append failed: %s", err.message);
    json_decref(rec);
    return rec;  /* still alive: the transcript holds a reference */
}

static bool has_warning(const transcript *t, const char *needle)
{
    size_t n;
    const char *const *w = transcript_warnings(t, &n);
    assert_int_equal(n, transcript_n_warnings(t));
    for (size_t i = 0; i < n; i++)
        if (strstr(w[i], needle))
            return true;
    return false;
}

static size_t count_lines(const char *buf)
{
    size_t n = 0;
    for (const char *p = buf; *p; p++)
        n += *p == '\n';
    return n;
}

static void test_create_append_reopen(void **state)
{
    (void)state;
    char *dir = subdir("roundtrip/nested");
    loom_error err;
    transcript *t = transcript_create(dir, "/home/u/proj", "anthropic", "claude-x", &err);
    assert_non_null(t);
    char *sid = xstrdup(transcript_session_id(t));
    assert_int_equal(strlen(sid), 36);
    char *path = xstrdup(transcript_path(t));
    assert_non_null(strstr(path, sid));

    json_t *u = append(t, record_user_text("hello"));
    json_t *a = append(t, record_assistant_text("hi there"));
    assert_int_equal(transcript_sync(t, &err), 0);
    char *uid = xstrdup(record_id(u));
    char *aid = xstrdup(record_id(a));
    transcript_free(t);

    t = transcript_open(path, &err);
    assert_non_null(t);
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_string_equal(transcript_session_id(t), sid);
    assert_int_equal(transcript_count(t), 3);
    json_t *meta = transcript_meta(t);
    assert_non_null(meta);
    assert_string_equal(json_get_str(meta, "cwd", ""), "/home/u/proj");
    assert_string_equal(json_get_str(meta, "provider", ""), "anthropic");
    assert_string_equal(json_get_str(meta, "model", ""), "claude-x");
    assert_non_null(json_get_str(meta, "version", NULL));
    assert_non_null(json_get_str(meta, "createdAt", NULL));
    assert_true(json_is_null(json_object_get(meta, "parentId")));
    json_t *u2 = transcript_find(t, uid);
    assert_non_null(u2);
    assert_string_equal(json_get_str(u2, "sessionId", ""), transcript_session_id(t));
    assert_true(json_is_null(json_object_get(u2, "parentId")));
    const char *ts = json_get_str(u2, "timestamp", "");
    assert_int_equal(strlen(ts), 24);
    assert_int_equal(ts[23], 'Z');
    assert_string_equal(transcript_leaf(t), aid);
    assert_string_equal(record_parent_id(transcript_find(t, aid)), uid);

    /* The file's lines start with the common fields, in order. */
    char *buf = slurp(path, NULL);
    assert_int_equal(count_lines(buf), 3);
    assert_memory_equal(buf, "{\"type\":\"session-meta\",\"id\":", 28);
    free(buf);

    free(uid);
    free(aid);
    free(sid);
    free(path);
    free(dir);
    transcript_free(t);
}

static void test_parallel_calls_chain(void **state)
{
    (void)state;
    char *dir = subdir("parallel");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    assert_non_null(t);
    json_t *u = append(t, record_user_text("do two things"));
    json_t *r = append(t, record_reasoning("thinking", "sig", NULL));
    json_t *c1 = append(t, record_function_call("call_1", "Read", "{\"path\":\"a\"}"));
    json_t *c2 = append(t, record_function_call("call_2", "Read", "{\"path\":\"b\"}"));
    json_t *r1 = append(t, record_tool_result("call_1", "A", false));
    json_t *r2 = append(t, record_tool_result("call_2", "B", false));
    /* seed 001 §3.2: parallel calls form a chain, never siblings. */
    assert_string_equal(record_parent_id(r), record_id(u));
    assert_string_equal(record_parent_id(c1), record_id(r));
    assert_string_equal(record_parent_id(c2), record_id(c1));
    assert_string_equal(record_parent_id(r1), record_id(c2));
    assert_string_equal(record_parent_id(r2), record_id(r1));

    json_t **chain;
    size_t n;
    assert_int_equal(transcript_active(t, &chain, &n), 0);
    assert_int_equal(n, 6);
    assert_ptr_equal(chain[0], u);
    assert_ptr_equal(chain[5], r2);
    free(chain);

    /* Non-conversation records neither chain nor move the leaf. */
    json_t *title = record_new(RECORD_AI_TITLE);
    json_set_str(title, "aiTitle", "Two things");
    append(t, title);
    assert_true(json_is_null(json_object_get(title, "parentId")));
    assert_string_equal(transcript_leaf(t), record_id(r2));
    transcript_free(t);
    free(dir);
}

static void test_torn_tail_dropped_then_truncated(void **state)
{
    (void)state;
    char *dir = subdir("torn");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    json_t *u = append(t, record_user_text("one"));
    char *uid = xstrdup(record_id(u));
    char *path = xstrdup(transcript_path(t));
    transcript_free(t);
    size_t good_len;
    free(slurp(path, &good_len));
    append_raw(path, "{\"type\":\"message\",\"id\":\"01");  /* a kill -9 mid-write */

    loom_error err;
    t = transcript_open(path, &err);
    assert_non_null(t);
    assert_int_equal(transcript_count(t), 2);
    assert_true(has_warning(t, "dropped a torn final line (26 bytes)"));
    assert_string_equal(transcript_leaf(t), uid);

    json_t *a = append(t, record_assistant_text("two"));
    assert_string_equal(record_parent_id(a), uid);
    transcript_free(t);

    size_t len;
    char *buf = slurp(path, &len);
    /* The torn bytes are gone: the new line starts right at the old good
     * length and is the only thing after it. */
    assert_true(len > good_len);
    assert_memory_equal(buf + good_len, "{\"type\":\"message\",\"id\":\"", 24);
    assert_ptr_equal(strchr(buf + good_len, '\n'), buf + len - 1);
    assert_null(strstr(buf, "\"id\":\"01\n"));
    assert_null(strstr(buf, "{\"type\":\"message\",\"id\":\"01{"));
    assert_int_equal(count_lines(buf), 3);
    free(buf);
    t = transcript_open(path, &err);
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_int_equal(transcript_count(t), 3);
    transcript_free(t);
    free(uid);
    free(path);
    free(dir);
}

static void test_garbage_mid_file_skipped(void **state)
{
    (void)state;
    char *dir = subdir("garbage");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    json_t *u = append(t, record_user_text("one"));
    char *uid = xstrdup(record_id(u));
    char *path = xstrdup(transcript_path(t));
    transcript_free(t);
    loom_str extra = LOOM_STR_INIT;
    str_puts(&extra, "this is not json\n");          /* line 3 */
    str_puts(&extra, "[1,2,3]\n");                   /* line 4 */
    str_puts(&extra, "{\"type\":\"message\"}\n");    /* line 5: no id */
    str_puts(&extra, "\n");                          /* line 6: blank, fine */
    str_printf(&extra, "{\"type\":\"message\",\"id\":\"%s\",\"role\":\"user\"}\n", uid);
    str_printf(&extra,
               "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"%s\",\"role\":\"assistant\","
               "\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}\n",
               uid);
    append_raw(path, str_cstr(&extra));
    str_free(&extra);

    loom_error err;
    t = transcript_open(path, &err);
    assert_non_null(t);
    assert_int_equal(transcript_count(t), 3);
    assert_true(has_warning(t, ":3: skipped a line that is not JSON"));
    assert_true(has_warning(t, ":4: skipped a line: not a JSON object"));
    assert_true(has_warning(t, ":5: skipped a line: no string \"id\""));
    assert_true(has_warning(t, ":7: skipped record"));
    assert_true(has_warning(t, "repeats an earlier record"));
    assert_int_equal(transcript_n_warnings(t), 4);
    assert_string_equal(transcript_leaf(t), "a1");
    json_t **chain;
    size_t n;
    transcript_active(t, &chain, &n);
    assert_int_equal(n, 2);
    free(chain);
    transcript_free(t);
    free(uid);
    free(path);
    free(dir);
}

static void test_unterminated_valid_last_line_kept(void **state)
{
    (void)state;
    char *dir = subdir("noeol");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    json_t *u = append(t, record_user_text("one"));
    char *path = xstrdup(transcript_path(t));
    loom_str line = LOOM_STR_INIT;
    str_printf(&line,
               "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"%s\",\"role\":\"assistant\","
               "\"content\":[{\"type\":\"text\",\"text\":\"whole\"}]}",
               record_id(u));
    transcript_free(t);
    append_raw(path, str_cstr(&line));
    str_free(&line);

    loom_error err;
    t = transcript_open(path, &err);
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_int_equal(transcript_count(t), 3);
    assert_string_equal(transcript_leaf(t), "a1");
    /* The next record must not be glued onto the unterminated line. */
    json_t *u2 = append(t, record_user_text("two"));
    assert_string_equal(record_parent_id(u2), "a1");
    transcript_free(t);
    t = transcript_open(path, &err);
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_int_equal(transcript_count(t), 4);
    transcript_free(t);
    free(path);
    free(dir);
}

static void test_parse_buffer_edges(void **state)
{
    (void)state;
    transcript *t = transcript_parse(NULL, 0, NULL);
    assert_int_equal(transcript_count(t), 0);
    assert_null(transcript_leaf(t));
    json_t **chain = (json_t **)1;
    size_t n = 99;
    assert_int_equal(transcript_active(t, &chain, &n), 0);
    assert_null(chain);
    assert_int_equal(n, 0);
    loom_error err;
    json_t *rec = json_object();
    assert_true(transcript_append(t, rec, &err) < 0);  /* no "type" */
    json_decref(rec);
    rec = record_user_text("x");
    assert_true(transcript_append(t, rec, &err) < 0);  /* no file behind it */
    json_decref(rec);
    transcript_free(t);

    const char *only_torn = "{\"type\":\"mess";
    t = transcript_parse(only_torn, strlen(only_torn), "mem");
    assert_int_equal(transcript_count(t), 0);
    assert_true(has_warning(t, "dropped a torn final line (13 bytes) in mem"));
    transcript_free(t);
}

static void test_providerdata_round_trip(void **state)
{
    (void)state;
    char *dir = subdir("pd");
    transcript *t = transcript_create(dir, "/x", "openai", "gpt-x", NULL);
    append(t, record_user_text("q"));

    msg_response resp = {0};
    resp.message.role = MSG_ROLE_ASSISTANT;
    msg_message_add_thinking(&resp.message, "hmm", "sig-1");
    msg_message_add_text(&resp.message, "answer");
    msg_message_add_tool_use(&resp.message, "call_9", "Bash", json_pack("{s:s}", "cmd", "ls"));
    resp.stop_reason = LOOM_STOP_TOOL_USE;
    resp.usage.input_tokens = 31480;
    resp.usage.output_tokens = 238;
    resp.usage.cache_read_tokens = 11840;
    resp.usage.raw = json_pack("{s:i,s:i,s:{s:i}}", "prompt_tokens", 31480,
                               "completion_tokens", 238, "prompt_tokens_details",
                               "cached_tokens", 11840);
    resp.response_id = xstrdup("resp_1");
    resp.model = xstrdup("gpt-x-2");
    json_t *recs = record_from_response(&resp, "req_abc");
    msg_response_free(&resp);
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r) append(t, json_incref(r));
    json_decref(recs);
    char *path = xstrdup(transcript_path(t));
    transcript_free(t);

    t = transcript_open(path, NULL);
    assert_int_equal(transcript_count(t), 5);
    json_t *last = transcript_record(t, 4);
    assert_string_equal(record_type(last), RECORD_FUNCTION_CALL);
    json_t *pd = json_get_obj(last, "providerData");
    assert_string_equal(json_get_str(pd, "conversationRequestId", ""), "req_abc");
    assert_string_equal(json_get_str(pd, "messageId", ""), "resp_1");
    assert_string_equal(json_get_str(pd, "model", ""), "gpt-x-2");
    assert_int_equal(json_get_int(json_get_obj(pd, "usage"), "inputTokens", -1), 31480);
    assert_int_equal(json_get_int(json_get_obj(pd, "usage"), "outputTokens", -1), 238);
    json_t *raw = json_get_obj(pd, "rawUsage");
    assert_int_equal(json_get_int(raw, "prompt_tokens", -1), 31480);
    assert_int_equal(json_get_int(json_get_obj(raw, "prompt_tokens_details"), "cached_tokens", -1),
                     11840);
    /* Earlier records of the reply are attributed but carry no usage. */
    json_t *pd0 = json_get_obj(transcript_record(t, 2), "providerData");
    assert_string_equal(json_get_str(pd0, "conversationRequestId", ""), "req_abc");
    assert_null(json_object_get(pd0, "usage"));
    transcript_free(t);
    free(path);
    free(dir);
}

/* Builds: meta, u1, a1, [summary → a1], u2, a2 */
static void test_summary_stops_context_walk(void **state)
{
    (void)state;
    char *dir = subdir("summary");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    json_t *u1 = append(t, record_user_text("old question"));
    json_t *a1 = append(t, record_assistant_text("old answer"));
    json_t *s = append(t, record_summary("we talked", NULL));
    assert_true(json_is_null(json_object_get(s, "parentId")));
    assert_string_equal(record_logical_parent_id(s), record_id(a1));
    json_t *u2 = append(t, record_user_text("new question"));
    assert_string_equal(record_parent_id(u2), record_id(s));
    json_t *a2 = append(t, record_assistant_text("new answer"));

    json_t **chain;
    size_t n;
    transcript_active(t, &chain, &n);
    assert_int_equal(n, 3);
    assert_ptr_equal(chain[0], s);
    assert_ptr_equal(chain[2], a2);
    free(chain);
    /* The full walk crosses the compaction along logicalParentId. */
    assert_int_equal(transcript_chain(t, NULL, false, &chain, &n, NULL), 0);
    assert_int_equal(n, 5);
    assert_ptr_equal(chain[0], u1);
    assert_ptr_equal(chain[2], s);
    free(chain);
    /* It survives a reload. */
    char *path = xstrdup(transcript_path(t));
    transcript_free(t);
    t = transcript_open(path, NULL);
    transcript_active(t, &chain, &n);
    assert_int_equal(n, 3);
    assert_string_equal(record_type(chain[0]), RECORD_SUMMARY);
    free(chain);
    transcript_free(t);
    free(path);
    free(dir);
}

static void test_cycle_and_missing_parent(void **state)
{
    (void)state;
    const char *cyc =
        "{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"c\",\"role\":\"user\",\"content\":[]}\n"
        "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"role\":\"assistant\",\"content\":[]}\n"
        "{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\",\"role\":\"user\",\"content\":[]}\n";
    transcript *t = transcript_parse(cyc, strlen(cyc), "cyc");
    json_t **chain;
    size_t n;
    assert_int_equal(transcript_active(t, &chain, &n), 0);
    assert_int_equal(n, 3);
    free(chain);
    assert_true(has_warning(t, "cycle"));
    /* Walking twice does not repeat the warning. */
    transcript_active(t, &chain, &n);
    free(chain);
    assert_int_equal(transcript_n_warnings(t), 1);
    transcript_free(t);

    /* A summary pointing at itself logically. */
    const char *self =
        "{\"type\":\"summary\",\"id\":\"s\",\"parentId\":null,\"logicalParentId\":\"s\"}\n";
    t = transcript_parse(self, strlen(self), "self");
    assert_int_equal(transcript_chain(t, NULL, false, &chain, &n, NULL), 0);
    assert_int_equal(n, 1);
    free(chain);
    assert_true(has_warning(t, "cycle"));
    transcript_free(t);

    const char *gap =
        "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"zz\",\"role\":\"user\",\"content\":[]}\n";
    t = transcript_parse(gap, strlen(gap), "gap");
    transcript_active(t, &chain, &n);
    assert_int_equal(n, 1);
    free(chain);
    assert_true(has_warning(t, "names parent zz, which is not in the session"));
    loom_error err;
    assert_true(transcript_chain(t, "nope", true, &chain, &n, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    transcript_free(t);
}

static void test_fork_remaps_ids(void **state)
{
    (void)state;
    char *dir = subdir("fork-src");
    transcript *t = transcript_create(dir, "/proj", "anthropic", "m", NULL);
    append(t, record_user_text("q1"));
    append(t, record_function_call("c1", "Read", "{}"));
    append(t, record_tool_result("c1", "data", false));
    json_t *a1 = append(t, record_assistant_text("a1"));
    append(t, record_summary("sum", NULL));
    json_t *u2 = append(t, record_user_text("q2"));
    json_t *snap = record_new(RECORD_FILE_HISTORY_SNAPSHOT);
    json_set_str(snap, "messageId", record_id(u2));
    json_object_set_new(snap, "snapshot", json_pack("{s:s}", "messageId", record_id(u2)));
    append(t, snap);
    (void)a1;

    char *fdir = subdir("fork-dst");
    loom_error err;
    transcript *f = transcript_fork(t, fdir, &err);
    assert_non_null(f);
    assert_string_not_equal(transcript_session_id(f), transcript_session_id(t));
    /* meta + every non-meta record. */
    assert_int_equal(transcript_count(f), transcript_count(t));
    json_t *meta = transcript_record(f, 0);
    assert_string_equal(record_type(meta), RECORD_SESSION_META);
    assert_string_equal(json_get_str(meta, "forkedFrom", ""), transcript_session_id(t));
    assert_non_null(json_get_str(meta, "forkedAt", NULL));
    assert_string_equal(json_get_str(meta, "cwd", ""), "/proj");

    /* No id is shared; every link maps to the copy of its target. */
    for (size_t i = 1; i < transcript_count(f); i++) {
        json_t *c = transcript_record(f, i);
        json_t *o = transcript_record(t, i);
        assert_null(transcript_find(t, record_id(c)));
        assert_string_equal(record_type(c), record_type(o));
        assert_string_equal(json_get_str(c, "sessionId", ""), transcript_session_id(f));
        const char *keys[] = {"parentId", "logicalParentId"};
        for (size_t k = 0; k < 2; k++) {
            const char *op = json_get_str(o, keys[k], NULL);
            const char *cp = json_get_str(c, keys[k], NULL);
            assert_true((op == NULL) == (cp == NULL));
            if (!op)
                continue;
            json_t *otarget = transcript_find(t, op);
            json_t *ctarget = transcript_find(f, cp);
            assert_non_null(ctarget);
            /* Same position in both files: the structure is isomorphic. */
            size_t oi = 0, ci = 0;
            while (transcript_record(t, oi) != otarget)
                oi++;
            while (transcript_record(f, ci) != ctarget)
                ci++;
            assert_int_equal(oi, ci);
        }
    }
    json_t *fsnap = transcript_record(f, transcript_count(f) - 1);
    json_t *fu2 = transcript_record(f, transcript_count(f) - 2);
    assert_string_equal(json_get_str(fsnap, "messageId", ""), record_id(fu2));
    assert_string_equal(json_get_str(json_get_obj(fsnap, "snapshot"), "messageId", ""),
                        record_id(fu2));
    assert_string_equal(transcript_leaf(f), record_id(fu2));

    /* The fork is a real file that reopens clean and takes appends. */
    char *fpath = xstrdup(transcript_path(f));
    json_t *more = append(f, record_assistant_text("continuing"));
    assert_string_equal(record_parent_id(more), record_id(fu2));
    transcript_free(f);
    f = transcript_open(fpath, &err);
    assert_non_null(f);
    assert_int_equal(transcript_n_warnings(f), 0);
    assert_int_equal(transcript_count(f), transcript_count(t) + 1);
    transcript_free(f);
    transcript_free(t);
    free(fpath);
    free(fdir);
    free(dir);
}

static void test_resend_sibling_and_notice(void **state)
{
    (void)state;
    char *dir = subdir("resend");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    json_t *u1 = append(t, record_user_text("first"));
    json_t *a1 = append(t, record_assistant_text("reply"));
    json_t *u2 = append(t, record_user_text("typo'd question"));
    append(t, record_assistant_text("answer to the typo"));
    char *u2id = xstrdup(record_id(u2));

    loom_error err;
    json_t *nu = transcript_resend(t, u2id, "fixed question", &err);
    assert_non_null(nu);
    assert_string_equal(record_parent_id(nu), record_id(a1));
    assert_string_equal(transcript_leaf(t), record_id(nu));
    json_t *notice = transcript_record(t, transcript_count(t) - 2);
    assert_string_equal(record_type(notice), RECORD_RESEND_FORK_NOTICE);
    assert_string_equal(record_parent_id(notice), record_id(a1));
    assert_string_equal(json_get_str(notice, "editedUserItemId", ""), u2id);
    json_t *pd = json_get_obj(notice, "providerData");
    assert_true(json_get_bool(pd, "skipRun", false));
    assert_true(json_get_bool(pd, "resendForkNotice", false));

    json_t *a3 = append(t, record_assistant_text("answer to the fix"));
    char *path = xstrdup(transcript_path(t));
    char *a3id = xstrdup(record_id(a3));
    char *u1id = xstrdup(record_id(u1));
    transcript_free(t);

    t = transcript_open(path, &err);
    assert_string_equal(transcript_leaf(t), a3id);
    json_t **chain;
    size_t n;
    transcript_active(t, &chain, &n);
    assert_int_equal(n, 4);
    assert_string_equal(record_id(chain[0]), u1id);
    assert_string_equal(json_get_str(json_array_get(json_get_arr(chain[2], "content"), 0),
                                     "text", ""),
                        "fixed question");
    free(chain);
    /* The abandoned branch is still in the file. */
    assert_non_null(transcript_find(t, u2id));
    assert_int_equal(transcript_count(t), 8);

    /* Resending a root user message: the sibling is a root as well. */
    json_t *nroot = transcript_resend(t, u1id, "first, again", &err);
    assert_non_null(nroot);
    assert_true(json_is_null(json_object_get(nroot, "parentId")));
    /* Only user messages can be edited. */
    assert_null(transcript_resend(t, a3id, "x", &err));
    assert_null(transcript_resend(t, "missing", "x", &err));
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);

    transcript_free(t);
    free(a3id);
    free(u1id);
    free(u2id);
    free(path);
    free(dir);
}

static void test_set_leaf_rewinds(void **state)
{
    (void)state;
    char *dir = subdir("leaf");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    json_t *u1 = append(t, record_user_text("1"));
    append(t, record_assistant_text("2"));
    loom_error err;
    assert_int_equal(transcript_set_leaf(t, record_id(u1), &err), 0);
    json_t *a = append(t, record_assistant_text("2b"));
    assert_string_equal(record_parent_id(a), record_id(u1));
    assert_true(transcript_set_leaf(t, "nope", &err) < 0);
    assert_true(transcript_set_leaf(t, record_id(transcript_meta(t)), &err) < 0);
    /* An id given by the caller is kept; a repeated one is refused. */
    json_t *dup = record_user_text("dup");
    json_set_str(dup, "id", record_id(u1));
    assert_true(transcript_append(t, dup, &err) < 0);
    json_decref(dup);
    transcript_free(t);
    free(dir);
}

/* A child appends as fast as it can and is killed with SIGKILL at an
 * arbitrary moment. Linux may cut a multi-page write() short when the
 * writer is killed, so the only possible damage is a torn final line: it
 * is dropped on load, the next append cuts it off, and the file is clean. */
static void test_kill9_leaves_whole_lines(void **state)
{
    (void)state;
    char *dir = subdir("kill9");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    char *path = xstrdup(transcript_path(t));
    transcript_free(t);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        transcript *c = transcript_open(path, NULL);
        loom_str big = LOOM_STR_INIT;
        for (int i = 0; i < 2000; i++)
            str_puts(&big, "0123456789abcdef");
        for (;;) {
            if (transcript_append_new(c, record_user_text(str_cstr(&big)), NULL) != 0)
                _exit(3);
        }
    }
    /* Kill once the child is well into its appends (or after 5 s). */
    struct timespec ts = {0, 1000 * 1000};
    struct stat st;
    for (int i = 0; i < 5000; i++) {
        if (stat(path, &st) == 0 && st.st_size > 256 * 1024)
            break;
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    t = transcript_open(path, NULL);
    assert_non_null(t);
    assert_true(transcript_n_warnings(t) <= 1);
    if (transcript_n_warnings(t) == 1)
        assert_true(has_warning(t, "dropped a torn final line"));
    size_t count = transcript_count(t);
    assert_true(count > 1);
    append(t, record_assistant_text("after the crash"));
    transcript_free(t);
    t = transcript_open(path, NULL);
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_int_equal(transcript_count(t), count + 1);
    transcript_free(t);
    free(path);
    free(dir);
}

/* A write that fails halfway (here: the file size limit) is taken back,
 * so the file still holds only whole records and stays appendable. */
static void test_failed_write_is_taken_back(void **state)
{
    (void)state;
    char *dir = subdir("efbig");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    append(t, record_user_text("small"));
    char *path = xstrdup(transcript_path(t));
    size_t len;
    free(slurp(path, &len));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {len + 100, len + 100};
        setrlimit(RLIMIT_FSIZE, &rl);
        loom_str big = LOOM_STR_INIT;
        for (int i = 0; i < 100; i++)
            str_puts(&big, "0123456789abcdef");
        loom_error err;
        int rc = transcript_append_new(t, record_user_text(str_cstr(&big)), &err);
        _exit(rc < 0 && err.code == LOOM_ERR_IO ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    size_t after;
    free(slurp(path, &after));
    assert_int_equal(after, len);
    transcript_free(t);
    t = transcript_open(path, NULL);
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_int_equal(transcript_count(t), 2);
    transcript_free(t);
    free(path);
    free(dir);
}

/* ---- holes in the chain ------------------------------------------------- */

/* A conversation record at second s of a fixed minute. */
static void rec_line(loom_str *b, const char *id, const char *parent, int s, const char *role)
{
    str_printf(b,
               "{\"type\":\"message\",\"id\":\"%s\",\"parentId\":%s%s%s,"
               "\"timestamp\":\"2026-01-01T00:00:%02d.000Z\",\"role\":\"%s\","
               "\"content\":[{\"type\":\"text\",\"text\":\"text of %s\"}]}\n",
               id, parent ? "\"" : "", parent ? parent : "null", parent ? "\"" : "", s, role,
               id);
}

#define META_LINE "{\"type\":\"session-meta\",\"id\":\"m\",\"parentId\":null}\n"

/* The ids of the active chain, comma-separated. Caller frees. */
static char *chain_ids(transcript *t)
{
    json_t **chain;
    size_t n;
    assert_int_equal(transcript_active(t, &chain, &n), 0);
    loom_str s = LOOM_STR_INIT;
    for (size_t i = 0; i < n; i++)
        str_printf(&s, "%s%s", i ? "," : "", record_id(chain[i]));
    free(chain);
    return s.len ? str_steal(&s) : xstrdup("");
}

/* u1 a1 u2 a2 u3 on lines 2..6, with line `damaged` replaced by `with`
 * (NULL: deleted). */
static transcript *five_with(size_t damaged, const char *with, size_t with_len)
{
    const char *ids[] = {"u1", "a1", "u2", "a2", "u3"};
    const char *parents[] = {NULL, "u1", "a1", "u2", "a2"};
    loom_str b = LOOM_STR_INIT;
    str_puts(&b, META_LINE);
    for (size_t i = 0; i < 5; i++) {
        if (i + 2 == damaged) {
            if (with) {
                str_append(&b, with, with_len);
                str_putc(&b, '\n');
            }
            continue;
        }
        rec_line(&b, ids[i], parents[i], (int)i + 1, i % 2 ? "assistant" : "user");
    }
    transcript *t = transcript_parse(b.ptr, b.len, "s.jsonl");
    str_free(&b);
    return t;
}

static void test_gap_reconnected(void **state)
{
    (void)state;
    static const struct {
        const char *with;
        size_t len;
        const char *why;
    } kinds[] = {
#define KIND(bytes, why) {bytes, sizeof bytes - 1, why}
        {NULL, 0, "a line is missing"},
        KIND("{\"type\":\"message\",\"id\":\"a2\",\"par", "line 5 is damaged: not JSON"),
        KIND("{\"type\":\"message\",\"parentId\":\"u2\",\"role\":\"assistant\"}",
             "line 5 is damaged: no string \"id\""),
        KIND("{\"type\":\"message\",\"id\":\"a2\",\0\"parentId\":\"u2\"}",
             "line 5 is damaged: not JSON"),
        KIND("[\"a2\"]", "line 5 is damaged: not a JSON object"),
#undef KIND
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        transcript *t = five_with(5, kinds[k].with, kinds[k].len);
        char *ids = chain_ids(t);
        /* a2 is gone; u3 hangs on u2, the record before it. */
        assert_string_equal(ids, "u1,a1,u2,u3");
        free(ids);
        assert_true(has_warning(t, kinds[k].why));
        assert_true(has_warning(t, kinds[k].with ? "session s.jsonl line 6: record u3 names "
                                                   "parent a2"
                                                 : "session s.jsonl line 5: record u3 names "
                                                   "parent a2"));
        assert_true(has_warning(t, "reconnected it to line 4"));
        loom_error err;
        loom_error_clear(&err);
        size_t before = transcript_n_warnings(t);
        assert_int_equal(transcript_check(t, false, &err), 0);
        assert_int_equal(transcript_n_warnings(t), before);
        /* The history the model gets starts with the first prompt. */
        msg_request req = {0};
        history_from_transcript(t, &req, NULL);
        assert_true(req.n_messages >= 3);
        assert_int_equal(req.messages[0].role, MSG_ROLE_USER);
        assert_string_equal(req.messages[0].blocks[0].text, "text of u1");
        msg_request_free(&req);
        transcript_free(t);
    }
}

static void test_gap_refused(void **state)
{
    (void)state;
    loom_error err;

    /* The first prompt itself is lost: nothing can stand in for it. */
    transcript *t = five_with(2, "not json at all", 15);
    assert_true(transcript_check(t, false, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_SESSION_CORRUPT);
    assert_non_null(strstr(err.message, "session s.jsonl line 3: record a1 names parent u1"));
    assert_non_null(strstr(err.message, "line 2 is damaged: not JSON"));
    assert_non_null(strstr(err.message, "no conversation record comes before it"));
    assert_non_null(strstr(err.message, "LOOM_ACCEPT_BROKEN_SESSION=1"));
    /* Accepting it: a warning, and the chain after the gap. */
    assert_int_equal(transcript_check(t, true, &err), 0);
    assert_true(has_warning(t, "continuing with the history after it"));
    char *ids = chain_ids(t);
    assert_string_equal(ids, "a1,u2,a2,u3");
    free(ids);
    transcript_free(t);

    /* The record before the gap already has a child: another branch. */
    loom_str b = LOOM_STR_INIT;
    str_puts(&b, META_LINE);
    rec_line(&b, "u1", NULL, 1, "user");
    rec_line(&b, "a1", "u1", 2, "assistant");
    rec_line(&b, "u2", "gone", 3, "user");
    rec_line(&b, "b1", "a1", 4, "user");
    rec_line(&b, "a2", "u2", 5, "assistant");
    t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(transcript_check(t, false, &err) < 0);
    assert_non_null(strstr(err.message, "line 4: record u2 names parent gone"));
    assert_non_null(strstr(err.message, "already continues elsewhere"));
    transcript_free(t);
    str_clear(&b);

    /* The record before the gap is newer than the orphan. */
    str_puts(&b, META_LINE);
    rec_line(&b, "u1", NULL, 9, "user");
    rec_line(&b, "u2", "gone", 3, "user");
    t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(transcript_check(t, false, &err) < 0);
    assert_non_null(strstr(err.message, "line 3"));
    assert_non_null(strstr(err.message, "newer"));
    transcript_free(t);
    str_clear(&b);

    /* No timestamps: the order cannot be confirmed. */
    str_puts(&b, META_LINE);
    str_puts(&b, "{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"role\":\"user\"}\n");
    str_puts(&b, "{\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"x\",\"role\":\"user\"}\n");
    t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(transcript_check(t, false, &err) < 0);
    assert_non_null(strstr(err.message, "timestamp is missing"));
    transcript_free(t);
    str_free(&b);
}

static void test_duplicate_ids_and_cycles(void **state)
{
    (void)state;
    loom_error err;
    loom_str b = LOOM_STR_INIT;
    str_puts(&b, META_LINE);
    rec_line(&b, "u1", NULL, 1, "user");
    rec_line(&b, "a1", "u1", 2, "assistant");
    rec_line(&b, "a1", "u1", 2, "assistant"); /* the same line twice: harmless */
    rec_line(&b, "u2", "a1", 3, "user");
    transcript *t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(has_warning(t, ":4: skipped record a1: it repeats an earlier record exactly"));
    assert_int_equal(transcript_check(t, false, &err), 0);
    char *ids = chain_ids(t);
    assert_string_equal(ids, "u1,a1,u2");
    free(ids);
    transcript_free(t);
    str_clear(&b);

    /* Another record with a1's id: which a1 does u2 follow? */
    str_puts(&b, META_LINE);
    rec_line(&b, "u1", NULL, 1, "user");
    rec_line(&b, "a1", "u1", 2, "assistant");
    rec_line(&b, "a1", "u1", 2, "user");
    rec_line(&b, "u2", "a1", 3, "user");
    t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(has_warning(t, "repeats an earlier record with other content"));
    assert_true(transcript_check(t, false, &err) < 0);
    assert_non_null(strstr(err.message, "session s.jsonl line 3: record a1 appears again at "
                                        "line 4 with other content"));
    transcript_free(t);
    str_clear(&b);

    /* A cycle: the first prompt's parent is the last reply. */
    str_puts(&b, META_LINE);
    rec_line(&b, "u1", "a2", 1, "user");
    rec_line(&b, "a1", "u1", 2, "assistant");
    rec_line(&b, "u2", "a1", 3, "user");
    rec_line(&b, "a2", "u2", 4, "assistant");
    t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(transcript_check(t, false, &err) < 0);
    assert_non_null(strstr(err.message, "session s.jsonl line 2: record u1 names parent a2, "
                                        "which leads back to it"));
    transcript_free(t);
    str_clear(&b);

    /* CRLF line endings load whole. */
    str_puts(&b, "{\"type\":\"session-meta\",\"id\":\"m\",\"parentId\":null}\r\n");
    str_puts(&b, "{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"role\":\"user\"}\r\n");
    str_puts(&b, "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"role\":\"assistant\"}\r\n");
    t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_int_equal(transcript_n_warnings(t), 0);
    assert_int_equal(transcript_check(t, false, &err), 0);
    ids = chain_ids(t);
    assert_string_equal(ids, "u1,a1");
    free(ids);
    transcript_free(t);
    str_free(&b);
}

static void test_summary_gap(void **state)
{
    (void)state;
    loom_error err;
    /* The summary's logical parent is lost and cannot be found again: the
     * model context is whole (it starts at the summary), rewind is not. */
    loom_str b = LOOM_STR_INIT;
    str_puts(&b, META_LINE);
    str_puts(&b, "{\"type\":\"summary\",\"id\":\"s\",\"parentId\":null,\"logicalParentId\":\"gone\","
                 "\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"summary\":\"so far\"}\n");
    rec_line(&b, "u2", "s", 6, "user");
    transcript *t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(has_warning(t, "session s.jsonl line 2: summary s continues from gone"));
    assert_true(has_warning(t, "the model context is intact"));
    assert_int_equal(transcript_check(t, false, &err), 0);
    char *ids = chain_ids(t);
    assert_string_equal(ids, "s,u2");
    free(ids);
    transcript_free(t);
    str_clear(&b);

    /* The old leaf was garbled: the summary is reconnected to the record
     * before it, so rewind walks on to the first prompt. */
    str_puts(&b, META_LINE);
    rec_line(&b, "u1", NULL, 1, "user");
    str_puts(&b, "{garbled\n");
    str_puts(&b, "{\"type\":\"summary\",\"id\":\"s\",\"parentId\":null,\"logicalParentId\":\"a1\","
                 "\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"summary\":\"so far\"}\n");
    rec_line(&b, "u2", "s", 6, "user");
    t = transcript_parse(b.ptr, b.len, "s.jsonl");
    assert_true(has_warning(t, "line 4: record s names parent a1"));
    assert_true(has_warning(t, "line 3 is damaged: not JSON"));
    json_t **chain;
    size_t n;
    assert_int_equal(transcript_chain(t, NULL, false, &chain, &n, NULL), 0);
    assert_int_equal(n, 3);
    assert_string_equal(record_id(chain[0]), "u1");
    free(chain);
    transcript_free(t);
    str_free(&b);
}

/* The repair lives in memory: the file keeps its bytes, appends go on from
 * the leaf, and every reload repairs the same way. */
static void test_gap_repair_survives_appends(void **state)
{
    (void)state;
    char *dir = subdir("gap");
    transcript *t = transcript_create(dir, "/x", NULL, NULL, NULL);
    append(t, record_user_text("first prompt"));
    append(t, record_assistant_text("one"));
    append(t, record_user_text("second"));
    append(t, record_assistant_text("two"));
    char *path = xstrdup(transcript_path(t));
    transcript_free(t);
    /* Garble line 3 (the first reply) in place. */
    size_t len;
    char *buf = slurp(path, &len);
    size_t at = 0;
    for (int lines = 0; at < len && lines < 2; at++)
        lines += buf[at] == '\n';
    assert_true(at + 4 < len);
    memcpy(buf + at, "XXXX", 4);
    assert_int_equal(file_write_atomic(path, buf, len, 0600, NULL), 0);

    loom_error err;
    t = transcript_open(path, &err);
    assert_non_null(t);
    assert_true(has_warning(t, "line 4: record"));
    assert_true(has_warning(t, "reconnected it to line 2"));
    assert_int_equal(transcript_check(t, false, &err), 0);
    append(t, record_user_text("third"));
    transcript_free(t);

    size_t len2;
    char *after = slurp(path, &len2);
    assert_true(len2 > len);
    assert_memory_equal(after, buf, len);
    free(after);

    t = transcript_open(path, &err);
    assert_int_equal(transcript_check(t, false, &err), 0);
    json_t **chain;
    size_t n;
    transcript_active(t, &chain, &n);
    assert_int_equal(n, 4); /* first prompt, second, two, third */
    char *first = record_message_text(chain[0]);
    assert_string_equal(first, "first prompt");
    free(first);
    free(chain);
    transcript_free(t);
    free(buf);
    free(path);
    free(dir);
}

/* Ids come from the file: a warning or error quoting one holds no control
 * characters and stays short, whatever the id. */
static void test_hostile_ids_in_messages(void **state)
{
    (void)state;
    loom_str b = LOOM_STR_INIT;
    str_puts(&b, META_LINE);
    str_puts(&b, "{\"type\":\"message\",\"id\":\"u\\u001b[2J\",\"parentId\":\"gone\\u001b]0;x\\u0007\","
                 "\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"role\":\"user\"}\n");
    str_puts(&b, "{\"type\":\"message\",\"id\":\"");
    for (int i = 0; i < 5000; i++)
        str_putc(&b, 'x');
    str_puts(&b, "\",\"parentId\":\"nowhere\",\"timestamp\":\"2026-01-01T00:00:00.000Z\","
                 "\"role\":\"user\"}\n");
    transcript *t = transcript_parse(b.ptr, b.len, "s.jsonl");
    loom_error err;
    assert_true(transcript_check(t, false, &err) < 0);
    assert_non_null(strstr(err.message, "LOOM_ACCEPT_BROKEN_SESSION=1"));
    for (const char *p = err.message; *p; p++)
        assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
    assert_int_equal(transcript_check(t, true, &err), 0);
    assert_true(transcript_n_warnings(t) > 0);
    for (size_t i = 0; i < transcript_n_warnings(t); i++) {
        const char *w = transcript_warning(t, i);
        assert_true(strlen(w) <= 1010);
        for (const char *p = w; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
    }
    transcript_free(t);
    str_free(&b);
}

/* The rows port (transcript_set_rows): every append gives its line to
 * the port first, seq = its position, the bytes the file then gets; a
 * refused append writes nothing and leaves the record out of memory. */
typedef struct fake_rows {
    loom_str all; /* line + '\n' per record taken */
    size_t next;  /* the seq expected next */
    bool refuse;
} fake_rows;

static int fake_append(void *ctx, const char *sid, size_t first, const char *const *lines,
                       size_t n, loom_error *err)
{
    fake_rows *f = ctx;
    assert_non_null(sid);
    assert_int_equal(first, f->next);
    if (f->refuse)
        return loom_error_set(err, LOOM_ERR_IO, "refused by the test");
    for (size_t i = 0; i < n; i++) {
        str_puts(&f->all, lines[i]);
        str_putc(&f->all, '\n');
    }
    f->next += n;
    return 0;
}

static void test_rows_port(void **state)
{
    (void)state;
    char *dir = subdir("rows");
    loom_error err;
    transcript *t = transcript_create(dir, "/w", "anthropic", "m", &err);
    assert_non_null(t);
    fake_rows f = {LOOM_STR_INIT, 0, false};
    transcript_rows port = {.ctx = &f, .append = fake_append};
    assert_int_equal(transcript_set_rows(t, &port, true, &err), 0);
    assert_int_equal(f.next, 1); /* the session-meta record */
    append(t, record_user_text("caf\u00e9 \"quoted\" \u2028 line"));
    append(t, record_assistant_text("ok"));
    char *path = xstrdup(transcript_path(t));
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(file_read_all(path, &data, &len, &err), 0);
    assert_int_equal(len, f.all.len);
    assert_memory_equal(data, f.all.ptr, len);
    free(data);
    f.refuse = true;
    json_t *rec = record_user_text("never stored");
    assert_true(transcript_append(t, rec, &err) < 0);
    json_decref(rec);
    assert_int_equal(transcript_count(t), 3);
    assert_int_equal(file_read_all(path, &data, &len, &err), 0);
    assert_int_equal(len, f.all.len); /* the file did not get it either */
    free(data);
    f.refuse = false;
    append(t, record_assistant_text("after"));
    assert_int_equal(f.next, 4);
    transcript_free(t);
    /* A reopened file loads back to the same records. */
    t = transcript_parse(f.all.ptr, f.all.len, "rows");
    assert_int_equal(transcript_count(t), 4);
    assert_int_equal(transcript_n_warnings(t), 0);
    transcript_free(t);
    str_free(&f.all);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_append_reopen),
        cmocka_unit_test(test_parallel_calls_chain),
        cmocka_unit_test(test_torn_tail_dropped_then_truncated),
        cmocka_unit_test(test_garbage_mid_file_skipped),
        cmocka_unit_test(test_unterminated_valid_last_line_kept),
        cmocka_unit_test(test_parse_buffer_edges),
        cmocka_unit_test(test_providerdata_round_trip),
        cmocka_unit_test(test_summary_stops_context_walk),
        cmocka_unit_test(test_cycle_and_missing_parent),
        cmocka_unit_test(test_fork_remaps_ids),
        cmocka_unit_test(test_resend_sibling_and_notice),
        cmocka_unit_test(test_set_leaf_rewinds),
        cmocka_unit_test(test_kill9_leaves_whole_lines),
        cmocka_unit_test(test_failed_write_is_taken_back),
        cmocka_unit_test(test_gap_reconnected),
        cmocka_unit_test(test_gap_refused),
        cmocka_unit_test(test_duplicate_ids_and_cycles),
        cmocka_unit_test(test_summary_gap),
        cmocka_unit_test(test_gap_repair_survives_appends),
        cmocka_unit_test(test_hostile_ids_in_messages),
        cmocka_unit_test(test_rows_port),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_mf_bus.c — the M_f event bus (agents/bus.h): the ΔH gate (at or
 * below δ_min nothing is written), a big payload compressed to a summary
 * with the whole spilled to a blob, bad topics and values refused, and the
 * heartbeat's own mf_events reader (heartbeat/watch/mf.c) reading what was
 * written: summary, urgency, magnitude = delta_h, sender. Also the Publish
 * tool without a bus. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/bus.h"
#include "base/fileio.h"
#include "base/path.h"
#include "base/str.h"
#include "heartbeat/watch/watch.h"
#include "tools/tool.h"

static char dir[256];

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
    snprintf(dir, sizeof dir, "/tmp/loom_bus_test.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* Files in dir/sub not starting with '.'. */
static size_t count_files(const char *sub)
{
    char *p = path_join(dir, sub);
    DIR *d = opendir(p);
    free(p);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    if (d)
        closedir(d);
    return n;
}

static json_t *load_event(const char *folder, const char *id)
{
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/%s/%s.json", dir, folder, id);
    json_t *doc = json_load_file(p.ptr, 0, NULL);
    str_free(&p);
    return doc;
}

static void test_gate(void **state)
{
    (void)state;
    mf_bus *b = mf_bus_new(dir, MF_BUS_DELTA_MIN, 0);
    loom_error err;
    char *id = NULL;
    mf_bus_event ev = {.topic = "findings", .source = "a1", .summary = "noise", .delta_h = 0.01};
    assert_int_equal(mf_bus_publish(b, &ev, &id, &err), 0);
    assert_null(id);
    ev.delta_h = MF_BUS_DELTA_MIN; /* T2.1 is strict: equal is not above */
    assert_int_equal(mf_bus_publish(b, &ev, &id, &err), 0);
    assert_int_equal(count_files("findings"), 0);
    ev.delta_h = 0.3;
    assert_int_equal(mf_bus_publish(b, &ev, &id, &err), 1);
    assert_non_null(id);
    assert_int_equal(count_files("findings"), 1);
    json_t *doc = load_event("findings", id);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "id")), id);
    assert_string_equal(json_string_value(json_object_get(doc, "summary")), "noise");
    assert_string_equal(json_string_value(json_object_get(doc, "sender")), "a1");
    assert_string_equal(json_string_value(json_object_get(doc, "urgency")), "low");
    assert_true(fabs(json_number_value(json_object_get(doc, "delta_h")) - 0.3) < 1e-9);
    assert_null(json_object_get(doc, "payload"));
    json_decref(doc);
    free(id);
    mf_bus_free(b);
}

static void test_refused(void **state)
{
    (void)state;
    mf_bus *b = mf_bus_new(dir, -1, 0);
    loom_error err;
    const char *bad[] = {"", "../x", "a/../b", ".hidden", "a//b", "a/", "/abs", "sp ace", NULL};
    for (size_t i = 0; bad[i]; i++) {
        mf_bus_event ev = {.topic = bad[i], .summary = "s", .delta_h = 0.9};
        assert_true(mf_bus_publish(b, &ev, NULL, &err) < 0);
        assert_non_null(strstr(err.message, "topic"));
    }
    mf_bus_event ev = {.topic = "t", .summary = "s", .delta_h = 1.5};
    assert_true(mf_bus_publish(b, &ev, NULL, &err) < 0);
    assert_non_null(strstr(err.message, "delta_h"));
    ev.delta_h = NAN;
    assert_true(mf_bus_publish(b, &ev, NULL, &err) < 0);
    ev.delta_h = 0.5;
    ev.urgency = "panic";
    assert_true(mf_bus_publish(b, &ev, NULL, &err) < 0);
    assert_non_null(strstr(err.message, "urgency"));
    ev.urgency = NULL;
    ev.summary = "";
    assert_true(mf_bus_publish(b, &ev, NULL, &err) < 0);
    assert_null(mf_bus_new("relative/dir", 0.1, 0));
    /* A payload past MF_BUS_PAYLOAD_MAX is refused, not written. */
    size_t big = MF_BUS_PAYLOAD_MAX + 1;
    char *text = malloc(big + 1);
    memset(text, 'x', big);
    text[big] = '\0';
    json_t *huge = json_string(text);
    free(text);
    ev.summary = "s";
    ev.payload = huge;
    assert_true(mf_bus_publish(b, &ev, NULL, &err) < 0);
    assert_non_null(strstr(err.message, "write it to a file"));
    json_decref(huge);
    mf_bus_free(b);
}

static void test_big_payload_compressed(void **state)
{
    (void)state;
    mf_bus *b = mf_bus_new(dir, MF_BUS_DELTA_MIN, MF_BUS_INLINE_MAX);
    json_t *payload = json_object();
    loom_str big = LOOM_STR_INIT;
    for (int i = 0; i < 2000; i++)
        str_puts(&big, "stack frame é ");
    json_object_set_new(payload, "trace", json_string(big.ptr));
    json_object_set_new(payload, "file", json_string("src/x.c"));
    json_object_set_new(payload, "line", json_integer(42));
    str_free(&big);
    mf_bus_event ev = {.topic = "agents/a7",
                       .source = "a7",
                       .summary = "root cause\nfound in x.c",
                       .delta_h = 0.8,
                       .urgency = "high",
                       .payload = payload};
    loom_error err;
    char *id = NULL;
    assert_int_equal(mf_bus_publish(b, &ev, &id, &err), 1);
    /* The first segment is the folder the reader scans; the topic is kept. */
    json_t *doc = load_event("agents", id);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "topic")), "agents/a7");
    assert_string_equal(json_string_value(json_object_get(doc, "summary")),
                        "root cause found in x.c");
    assert_true(fabs(json_number_value(json_object_get(doc, "delta_h")) - 0.8) < 1e-9);
    json_t *p = json_object_get(doc, "payload");
    assert_true(json_is_true(json_object_get(p, "compressed")));
    assert_string_equal(json_string_value(json_object_get(p, "type")), "object");
    size_t whole = json_dumpb(payload, NULL, 0, JSON_COMPACT);
    assert_int_equal(json_integer_value(json_object_get(p, "bytes")), (json_int_t)whole);
    assert_int_equal(json_array_size(json_object_get(p, "keys")), 3);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "preview"), "line")),
                     42);
    const char *prev = json_string_value(json_object_get(json_object_get(p, "preview"), "trace"));
    assert_true(strlen(prev) <= 80);
    assert_true(json_dumpb(p, NULL, 0, JSON_COMPACT) <= MF_BUS_INLINE_MAX);
    /* The blob holds the whole payload; it is not in a topic folder. */
    const char *blob = json_string_value(json_object_get(p, "blob"));
    char *want = NULL;
    loom_str w = LOOM_STR_INIT;
    str_printf(&w, "%s/.blobs/%s.json", dir, id);
    want = str_steal(&w);
    assert_string_equal(blob, want);
    free(want);
    json_t *whole_doc = json_load_file(blob, 0, NULL);
    assert_true(json_equal(whole_doc, payload));
    json_decref(whole_doc);
    /* A small payload stays inline. */
    json_t *small = json_pack("{s:s}", "k", "v");
    ev.payload = small;
    char *id2 = NULL;
    assert_int_equal(mf_bus_publish(b, &ev, &id2, &err), 1);
    json_t *doc2 = load_event("agents", id2);
    assert_true(json_equal(json_object_get(doc2, "payload"), small));
    json_decref(doc2);
    json_decref(small);
    free(id2);
    json_decref(doc);
    json_decref(payload);
    free(id);
    mf_bus_free(b);
}

typedef struct {
    int n;
    char summary[4][256];
    event_urgency urgency[4];
    double magnitude[4];
} seen_events;

static void collect(void *ctx, const hb_candidate *c)
{
    seen_events *s = ctx;
    if (s->n < 4) {
        snprintf(s->summary[s->n], sizeof s->summary[0], "%s", c->summary);
        s->urgency[s->n] = c->urgency;
        s->magnitude[s->n] = c->magnitude;
    }
    s->n++;
}

/* The heartbeat's mf_events source reads what the bus wrote. */
static void test_heartbeat_reads_it(void **state)
{
    (void)state;
    mf_bus *b = mf_bus_new(dir, MF_BUS_DELTA_MIN, 64);
    watch_config c = {.type = WATCH_MF_EVENTS, .weight = 0.8, .urgency = EVENT_LOW};
    watch_source src;
    loom_error err;
    assert_int_equal(watch_mf_new(&c, dir, &src, &err), 0);
    json_t *payload = json_pack("{s:s}", "detail", "a payload longer than sixty-four bytes, "
                                                   "so it is compressed and spilled");
    mf_bus_event ev = {.topic = "agents/r1", .source = "r1", .summary = "API changed",
                       .delta_h = 0.6, .urgency = "critical", .payload = payload};
    assert_int_equal(mf_bus_publish(b, &ev, NULL, &err), 1);
    mf_bus_event low = {.topic = "findings", .source = "r2", .summary = "tiny", .delta_h = 0.02};
    assert_int_equal(mf_bus_publish(b, &low, NULL, &err), 0);
    seen_events seen = {0};
    watch_tick t = {.now_ms = 0};
    int problems = src.ops->poll(src.ctx, &t, collect, &seen);
    assert_int_equal(problems, 0);
    assert_int_equal(seen.n, 1);
    assert_string_equal(seen.summary[0], "[agents] API changed (from r1)");
    assert_int_equal(seen.urgency[0], EVENT_CRITICAL);
    assert_true(fabs(seen.magnitude[0] - 0.6) < 1e-9);
    /* Reported once. */
    seen.n = 0;
    src.ops->poll(src.ctx, &t, collect, &seen);
    assert_int_equal(seen.n, 0);
    watch_source_free(&src);
    json_decref(payload);
    mf_bus_free(b);
}

static void test_publish_tool_without_bus(void **state)
{
    (void)state;
    tool_ctx ctx = {.cwd = dir};
    json_t *in = json_pack("{s:s, s:s, s:f}", "topic", "t", "summary", "s", "delta_h", 0.5);
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(tool_publish.run(in, &ctx, &r), 0);
    assert_true(r.is_error);
    assert_non_null(strstr(str_cstr(&r.text), "no event bus"));
    assert_true(tool_publish.local_state_only);
    assert_false(tool_publish.read_only);
    tool_result_free(&r);
    json_decref(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_payload_compressed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat_reads_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publish_tool_without_bus, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

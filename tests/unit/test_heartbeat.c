/* test_heartbeat.c — the heartbeat H_b: settings parsing and its errors,
 * each watch source against real files (inotify, pid files, the M_f bus,
 * resource thresholds, signals), the ΔH gate, the journal, and the thread
 * end to end into C_working. Ticks are driven with heartbeat_tick_now, so
 * nothing here waits on the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/str.h"
#include "context/working.h"
#include "heartbeat/gate.h"
#include "heartbeat/hash.h"
#include "heartbeat/heartbeat.h"
#include "heartbeat/journal.h"
#include "heartbeat/watch/watch.h"

static char tmpdir[4096];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-hb-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *at(const char *rel)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", tmpdir, rel);
    return str_steal(&s);
}

/* Writes in place (open, truncate, write), as an editor or a build would. */
static void put(const char *rel, const char *text)
{
    char *p = at(rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(file_write_full(fd, text, strlen(text)), 0);
    close(fd);
    free(p);
}

static void mkdir_rel(const char *rel)
{
    char *p = at(rel);
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
}

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("test JSON: %s", je.text);
    return v;
}

/* ---- what the heartbeat told the integrator ---- */

typedef struct seen_event {
    char summary[512];
    char source[32];
    char id[64];
    event_urgency urgency;
    interrupt_action action;
    double delta_h;
} seen_event;

typedef struct recorder {
    pthread_mutex_t mu;
    seen_event ev[64];
    int n;
} recorder;

static void on_event(void *ctx, const surface_event *ev, interrupt_action action, double delta_h)
{
    recorder *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (r->n < 64) {
        seen_event *s = &r->ev[r->n++];
        snprintf(s->summary, sizeof s->summary, "%s", ev->summary);
        snprintf(s->source, sizeof s->source, "%s", ev->source);
        snprintf(s->id, sizeof s->id, "%s", ev->id);
        s->urgency = ev->urgency;
        s->action = action;
        s->delta_h = delta_h;
    }
    pthread_mutex_unlock(&r->mu);
}

static int rec_count(recorder *r)
{
    pthread_mutex_lock(&r->mu);
    int n = r->n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

typedef struct fixture {
    heartbeat_config cfg;
    working *w;
    recorder rec;
    heartbeat *hb;
    char *journal;
} fixture;

/* Parses settings (with %s standing for the temp dir), starts a heartbeat
 * on a fresh working memory. */
static void start(fixture *f, const char *settings_fmt)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->rec.mu, NULL);
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, settings_fmt, tmpdir, tmpdir, tmpdir);
    json_t *block = parse(s.ptr);
    str_free(&s);
    loom_error err;
    loom_error_clear(&err);
    if (heartbeat_config_from_json(block, tmpdir, &f->cfg, &err) < 0)
        fail_msg("config: %s", err.message);
    json_decref(block);
    f->w = working_new(NULL);
    f->journal = at("journal/events.jsonl");
    heartbeat_env env = {
        .w = f->w,
        .journal_path = f->journal,
        .cwd = tmpdir,
        .on_event = on_event,
        .ctx = &f->rec,
    };
    f->hb = heartbeat_start(&f->cfg, &env, &err);
    if (!f->hb)
        fail_msg("start: %s", err.message);
}

static void stop(fixture *f, heartbeat_stats *st)
{
    heartbeat_stop(f->hb, st);
    heartbeat_config_free(&f->cfg);
    working_free(f->w);
    free(f->journal);
    pthread_mutex_destroy(&f->rec.mu);
}

static size_t pending(fixture *f)
{
    return working_pending_count(f->w);
}

/* ---- settings ---- */

static void test_config_full(void **state)
{
    json_t *b = parse(
        "{\"enabled\": true, \"T_hb\": 5, \"T_hb_act\": 1, \"delta_hb\": 0.2,"
        " \"watch_sources\": ["
        "  {\"type\": \"filesystem\", \"paths\": [\"./src\", \"/abs/x\"], \"method\": \"hash\","
        "   \"urgency\": \"high\", \"ignore\": [\"*.log\"]},"
        "  {\"type\": \"process\", \"pid_file\": \"x.pid\"},"
        "  {\"type\": \"mf_events\", \"dir\": \"bus\", \"topics\": [\"build\"]},"
        "  {\"type\": \"resource\", \"memory_pct\": 90, \"disk_pct\": 95, \"path\": \"/\","
        "   \"urgency\": \"critical\"},"
        "  {\"type\": \"external_signal\", \"signals\": {\"usr2\": \"low\", \"SIGUSR1\": \"critical\"}}],"
        " \"interrupt_policy\": {\"low\": \"queue\", \"high\": \"force\"}}");
    heartbeat_config c;
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(heartbeat_config_from_json(b, "/work/proj", &c, &err), 0);
    json_decref(b);
    assert_true(c.enabled);
    assert_true(c.T_hb == 5 && c.T_hb_act == 1 && c.delta_hb == 0.2);
    assert_int_equal(c.n_sources, 5);
    assert_int_equal(c.sources[0].type, WATCH_FILESYSTEM);
    assert_string_equal(c.sources[0].paths[0], "/work/proj/src");
    assert_string_equal(c.sources[0].paths[1], "/abs/x");
    assert_int_equal(c.sources[0].urgency, EVENT_HIGH);
    assert_int_equal(c.sources[0].idle_urgency, EVENT_HIGH);   /* a string sets both */
    assert_string_equal(c.sources[0].ignore[c.sources[0].n_ignore - 1], "*.log");
    assert_string_equal(c.sources[1].pid_file, "/work/proj/x.pid");
    assert_int_equal(c.sources[1].urgency, EVENT_HIGH);
    assert_string_equal(c.sources[2].dir, "/work/proj/bus");
    assert_string_equal(c.sources[2].topics[0], "build");
    assert_int_equal(c.sources[2].urgency, EVENT_LOW);
    assert_true(c.sources[2].weight == 0.8);
    assert_true(c.sources[3].memory_pct == 90 && c.sources[3].disk_pct == 95);
    assert_string_equal(c.sources[3].disk_path, "/");
    const watch_config *sg = &c.sources[4];
    bool usr2 = false, usr1 = false, intr = false;
    for (size_t i = 0; i < sg->n_signals; i++) {
        if (!strcmp(sg->signals[i].name, "SIGUSR2"))
            usr2 = sg->signals[i].urgency == EVENT_LOW;
        if (!strcmp(sg->signals[i].name, "SIGUSR1"))
            usr1 = sg->signals[i].urgency == EVENT_CRITICAL;
        if (!strcmp(sg->signals[i].name, "SIGINT"))
            intr = sg->signals[i].urgency == EVENT_CRITICAL;
    }
    assert_true(usr2 && usr1 && intr);
    assert_int_equal(c.policy[EVENT_LOW], INTERRUPT_QUEUE);
    assert_int_equal(c.policy[EVENT_HIGH], INTERRUPT_FORCE);
    assert_int_equal(c.policy[EVENT_CRITICAL], INTERRUPT_FORCE);   /* default kept */

    json_t *back = heartbeat_config_to_json(&c);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(back, "watch_sources"), 1), "pid_file")),
                        "/work/proj/x.pid");
    json_decref(back);
    heartbeat_config_free(&c);
}

static void test_config_defaults(void **state)
{
    heartbeat_config c;
    loom_error err;
    assert_int_equal(heartbeat_config_from_json(NULL, "/p", &c, &err), 0);
    assert_false(c.enabled);
    assert_int_equal(c.n_sources, 0);
    heartbeat_config_free(&c);

    /* The seed's own forms: δ_hb and "thresholds". A missing watch_sources
     * gives resource + external_signal. */
    json_t *b = parse("{\"δ_hb\": 0.3, \"T_hb\": 2}");
    assert_int_equal(heartbeat_config_from_json(b, "/p", &c, &err), 0);
    json_decref(b);
    assert_true(c.enabled);
    assert_true(c.delta_hb == 0.3 && c.T_hb == 2 && c.T_hb_act == 2);
    assert_int_equal(c.n_sources, 2);
    assert_int_equal(c.sources[0].type, WATCH_RESOURCE);
    assert_true(c.sources[0].memory_pct == 90);
    assert_string_equal(c.sources[0].disk_path, "/p");
    assert_int_equal(c.sources[1].type, WATCH_EXTERNAL_SIGNAL);
    heartbeat_config_free(&c);

    b = parse("{\"watch_sources\": [{\"type\": \"resource\", \"thresholds\": {\"memory_pct\": 91}},"
              " {\"type\": \"filesystem\", \"paths\": [\"a\"], \"urgency\": {\"idle\": \"high\"}}]}");
    assert_int_equal(heartbeat_config_from_json(b, "/p", &c, &err), 0);
    json_decref(b);
    assert_true(c.sources[0].memory_pct == 91 && c.sources[0].disk_pct < 0);
    assert_int_equal(c.sources[0].urgency, EVENT_CRITICAL);
    assert_int_equal(c.sources[1].urgency, EVENT_HIGH);
    assert_int_equal(c.sources[1].idle_urgency, EVENT_HIGH);
    assert_true(c.sources[1].method_hash);
    heartbeat_config_free(&c);
}

static void expect_error(const char *text, const char *needle)
{
    json_t *b = parse(text);
    heartbeat_config c;
    loom_error err;
    loom_error_clear(&err);
    int rc = heartbeat_config_from_json(b, "/p", &c, &err);
    json_decref(b);
    if (rc >= 0)
        fail_msg("accepted: %s", text);
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    if (!strstr(err.message, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, needle);
    assert_int_equal(c.n_sources, 0);
}

static void test_config_errors(void **state)
{
    expect_error("[1]", "heartbeat: must be an object");
    expect_error("{\"T_hb\": \"5\"}", "heartbeat.T_hb: must be a number");
    expect_error("{\"T_hb\": 0}", "heartbeat.T_hb: 0 is out of range");
    expect_error("{\"delta_hb\": 1.5}", "heartbeat.delta_hb");
    expect_error("{\"enabled\": 1}", "heartbeat.enabled: must be true or false");
    expect_error("{\"tick\": 5}", "heartbeat: unknown key \"tick\"");
    expect_error("{\"delta_hb\": 0.1, \"δ_hb\": 0.2}", "same setting");
    expect_error("{\"interrupt_policy\": {\"high\": \"stop\"}}",
                 "heartbeat.interrupt_policy.high: must be \"queue\", \"request\" or \"force\"");
    expect_error("{\"interrupt_policy\": {\"medium\": \"queue\"}}",
                 "heartbeat.interrupt_policy: unknown key \"medium\"");
    expect_error("{\"watch_sources\": {}}", "heartbeat.watch_sources: must be an array");
    expect_error("{\"watch_sources\": [{\"type\": \"filesystem\", \"paths\": [\"a\"]}, "
                 "{\"type\": \"process\", \"pid_file\": 3}]}",
                 "heartbeat.watch_sources[1].pid_file: must be a non-empty string");
    expect_error("{\"watch_sources\": [{\"type\": \"filesystem\", \"pathz\": [\"a\"]}]}",
                 "heartbeat.watch_sources[0]: unknown key \"pathz\"");
    expect_error("{\"watch_sources\": [{\"type\": \"filesystem\"}]}",
                 "heartbeat.watch_sources[0]: missing \"paths\"");
    expect_error("{\"watch_sources\": [{\"type\": \"filesystem\", \"paths\": [\"a\", 2]}]}",
                 "heartbeat.watch_sources[0].paths[1]: must be a non-empty string");
    expect_error("{\"watch_sources\": [{\"type\": \"filesystem\", \"paths\": [\"a\"], "
                 "\"method\": \"md5\"}]}", "heartbeat.watch_sources[0].method");
    expect_error("{\"watch_sources\": [{\"type\": \"filesystem\", \"paths\": [\"a\"], "
                 "\"urgency\": \"urgent\"}]}", "heartbeat.watch_sources[0].urgency: must be");
    expect_error("{\"watch_sources\": [{\"type\": \"webhook\"}]}",
                 "heartbeat.watch_sources[0].type: unknown watch source \"webhook\"");
    expect_error("{\"watch_sources\": [{\"paths\": [\"a\"]}]}",
                 "heartbeat.watch_sources[0]: missing \"type\"");
    expect_error("{\"watch_sources\": [{\"type\": \"resource\"}]}", "needs \"memory_pct\"");
    expect_error("{\"watch_sources\": [{\"type\": \"resource\", \"memory_pct\": 101}]}",
                 "heartbeat.watch_sources[0].memory_pct: 101 is out of range");
    expect_error("{\"watch_sources\": [{\"type\": \"resource\", \"thresholds\": {\"cpu_pct\": 1}}]}",
                 "heartbeat.watch_sources[0].thresholds: unknown key \"cpu_pct\"");
    expect_error("{\"watch_sources\": [{\"type\": \"mf_events\", \"topics\": [\"../x\"]}]}",
                 "heartbeat.watch_sources[0].topics[0]");
    expect_error("{\"watch_sources\": [{\"type\": \"external_signal\", \"signals\": "
                 "{\"SIG INT\": \"high\"}}]}", "heartbeat.watch_sources[0].signals.SIG INT");
    expect_error("{\"watch_sources\": [{\"type\": \"external_signal\"}, "
                 "{\"type\": \"external_signal\"}]}", "only one external_signal");
    expect_error("{\"watch_sources\": [{\"type\": \"process\", \"pid_file\": \"p\", "
                 "\"weight\": 2}]}", "heartbeat.watch_sources[0].weight");
}

/* ---- hashes ---- */

static void test_hash(void **state)
{
    char a[10000], b[10000];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = b[i] = (char)(i * 7);
    assert_true(hb_hash64(a, sizeof a, 0) == hb_hash64(b, sizeof b, 0));
    assert_true(hb_content_hash(a, sizeof a) == hb_content_hash(b, sizeof b));
    b[9999] ^= 1;
    assert_true(hb_hash64(a, sizeof a, 0) != hb_hash64(b, sizeof b, 0));
    assert_true(hb_content_hash(a, sizeof a) != hb_content_hash(b, sizeof b));
    /* Every length near the word and lane boundaries hashes differently. */
    for (size_t n = 0; n < 70; n++)
        assert_true(hb_hash64(a, n, 0) != hb_hash64(a, n + 1, 0));
    assert_true(hb_content_hash("", 0) != hb_content_hash("\0", 1));
}

/* ---- the gate ---- */

static hb_candidate cand(const char *subject, const char *fp, double magnitude, event_urgency u)
{
    hb_candidate c = {"filesystem", subject, fp, "x", u, magnitude, 1.0};
    return c;
}

static void test_gate(void **state)
{
    hb_gate *g = gate_new(0.1, 60);
    int64_t t0 = 1000000;
    hb_candidate c = cand("/a", "fs:/a:1:2", 1.0, EVENT_LOW);
    gate_verdict v = gate_judge(g, &c, t0);
    assert_true(v.pass);
    assert_true(v.delta_h == 1.0 && v.novelty == 1.0);
    /* The same change again: novelty 0, silent. */
    v = gate_judge(g, &c, t0 + 1);
    assert_false(v.pass);
    assert_true(v.delta_h == 0.0);
    /* A new change to the same subject: 2^-1, then 2^-2, … */
    c = cand("/a", "fs:/a:2:3", 0.5, EVENT_LOW);
    v = gate_judge(g, &c, t0 + 2);
    assert_true(v.pass && v.novelty == 0.5 && v.delta_h == 0.25);
    c = cand("/a", "fs:/a:3:4", 0.5, EVENT_LOW);
    v = gate_judge(g, &c, t0 + 3);
    assert_true(v.pass && v.delta_h == 0.125);
    c = cand("/a", "fs:/a:4:5", 0.5, EVENT_LOW);
    v = gate_judge(g, &c, t0 + 4);
    assert_false(v.pass);           /* 0.0625 ≤ δ_hb: dropped */
    assert_true(v.delta_h == 0.0625);
    /* … but critical is never silenced by the threshold … */
    c = cand("/a", "fs:/a:4:5", 0.5, EVENT_CRITICAL);
    v = gate_judge(g, &c, t0 + 5);
    assert_true(v.pass);
    /* … though the same change is still not reported twice. */
    v = gate_judge(g, &c, t0 + 6);
    assert_false(v.pass);
    /* Outside the window the subject is new again. */
    c = cand("/a", "fs:/a:5:6", 0.5, EVENT_LOW);
    v = gate_judge(g, &c, t0 + 61000);
    assert_true(v.pass && v.novelty == 1.0 && v.delta_h == 0.5);
    /* Weight scales; a weight-0 source only gets through when critical. */
    c = cand("/b", "fs:/b:1:2", 1.0, EVENT_HIGH);
    c.weight = 0.05;
    assert_false(gate_judge(g, &c, t0).pass);
    /* Seeded fingerprints (from the journal) are already seen. */
    gate_seed(g, "mf:build:evt_1");
    c = cand("mf:build", "mf:build:evt_1", 1.0, EVENT_HIGH);
    assert_false(gate_judge(g, &c, t0).pass);
    gate_free(g);
}

/* ---- the journal ---- */

static int collect_line(void *ctx, const json_t *line)
{
    json_t *arr = ctx;
    json_array_append((json_t *)arr, (json_t *)line);
    return 0;
}

static json_t *read_journal(const char *path, size_t *skipped)
{
    json_t *arr = json_array();
    loom_error err;
    assert_int_equal(journal_read(path, collect_line, arr, skipped, &err), 0);
    return arr;
}

static void test_journal(void **state)
{
    char *path = at("deep/dir/journal.jsonl");
    loom_error err;
    loom_error_clear(&err);
    journal *j = journal_open(path, &err);
    assert_non_null(j);
    surface_event ev = {
        .id = "ev_1", .fingerprint = "fs:/x:1:2", .source = "filesystem",
        .summary = "x modified\nbadly \xff", .urgency = EVENT_HIGH,
    };
    assert_int_equal(journal_append(j, &ev, EVENT_DETECTED, &err), 0);
    assert_int_equal(journal_append(j, &ev, EVENT_PROJECTED, &err), 0);
    ev.disposition = "defer";
    ev.note = "after the build";
    json_t *extra = json_pack("{s:f}", "delta_h", 0.5);
    assert_int_equal(journal_append_ex(j, &ev, EVENT_ACKNOWLEDGED, extra, &err), 0);
    json_decref(extra);
    assert_string_equal(journal_path(j), path);
    journal_close(j);

    /* A torn last line (a crash mid-write) is skipped, not fatal. */
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(file_write_full(fd, "{\"ts\":\"2026", 11), 0);
    close(fd);

    size_t skipped = 0;
    json_t *lines = read_journal(path, &skipped);
    assert_int_equal(json_array_size(lines), 3);
    assert_int_equal(skipped, 1);
    const char *states[] = {"detected", "projected", "acknowledged"};
    for (size_t i = 0; i < 3; i++) {
        json_t *l = json_array_get(lines, i);
        assert_string_equal(json_string_value(json_object_get(l, "state")), states[i]);
        assert_string_equal(json_string_value(json_object_get(l, "event_id")), "ev_1");
        assert_string_equal(json_string_value(json_object_get(l, "fingerprint")), "fs:/x:1:2");
        assert_string_equal(json_string_value(json_object_get(l, "urgency")), "high");
        assert_non_null(json_string_value(json_object_get(l, "ts")));
    }
    json_t *ack = json_array_get(lines, 2);
    assert_string_equal(json_string_value(json_object_get(ack, "disposition")), "defer");
    assert_true(json_real_value(json_object_get(ack, "delta_h")) == 0.5);
    assert_null(json_object_get(json_array_get(lines, 0), "disposition"));
    json_decref(lines);

    /* A missing journal has no lines. */
    char *missing = at("nope.jsonl");
    lines = read_journal(missing, NULL);
    assert_int_equal(json_array_size(lines), 0);
    json_decref(lines);
    free(missing);
    free(path);
}

/* ---- filesystem ---- */

static const char *FS_SETTINGS =
    "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"filesystem\", \"paths\": [\"%s/src\"]}]}";

static void test_fs_modify_once(void **state)
{
    mkdir_rel("src");
    put("src/utils.py", "def f():\n    return 1\n");
    put("src/main.c", "int main(void) { return 0; }\n");
    fixture f;
    start(&f, FS_SETTINGS);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);   /* the baseline is no event */

    put("src/utils.py", "def f():\n    return 2\n");
    put("src/utils.py", "def f():\n    return 3\n");   /* a burst is one change */
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_string_equal(f.rec.ev[0].source, "filesystem");
    assert_non_null(strstr(f.rec.ev[0].summary, "src/utils.py modified"));
    assert_int_equal(f.rec.ev[0].urgency, EVENT_LOW);        /* no Act running */
    assert_int_equal(f.rec.ev[0].action, INTERRUPT_QUEUE);
    assert_true(f.rec.ev[0].delta_h > 0.5);
    assert_int_equal(pending(&f), 1);
    assert_false(working_get_dashboard(f.w).interrupt_requested);
    assert_true(working_get_dashboard(f.w).last_hb_ms > 0);

    /* Not twice. */
    heartbeat_tick_now(f.hb);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);

    heartbeat_stats st;
    stop(&f, &st);
    assert_int_equal(st.ticks, 4);
    assert_int_equal(st.emitted, 1);
    assert_int_equal(st.candidates, 1);
    assert_true(st.cpu_ns > 0);
    assert_true(st.wall_ns > 0);

    /* The journal: detected then projected, one event_id. */
    char *jp = at("journal/events.jsonl");
    json_t *lines = read_journal(jp, NULL);
    assert_int_equal(json_array_size(lines), 2);
    json_t *d = json_array_get(lines, 0), *p = json_array_get(lines, 1);
    assert_string_equal(json_string_value(json_object_get(d, "state")), "detected");
    assert_string_equal(json_string_value(json_object_get(p, "state")), "projected");
    assert_string_equal(json_string_value(json_object_get(d, "event_id")), f.rec.ev[0].id);
    assert_string_equal(json_string_value(json_object_get(p, "event_id")), f.rec.ev[0].id);
    assert_int_equal(strncmp(f.rec.ev[0].id, "ev_", 3), 0);
    assert_string_equal(json_string_value(json_object_get(d, "action")), "queue");
    assert_true(json_number_value(json_object_get(d, "delta_h")) > 0.5);
    json_decref(lines);
    free(jp);
}

static void test_fs_touch_and_same_content(void **state)
{
    mkdir_rel("src");
    put("src/a.txt", "same\n");
    fixture f;
    start(&f, FS_SETTINGS);
    /* touch: new mtime, same bytes. */
    char *p = at("src/a.txt");
    struct timespec ts[2] = {{0, UTIME_NOW}, {1234567, 0}};
    assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
    heartbeat_tick_now(f.hb);
    /* A rewrite with the same content, in place and by rename. */
    put("src/a.txt", "same\n");
    assert_int_equal(file_write_atomic(p, "same\n", 5, 0644, NULL), 0);
    heartbeat_tick_now(f.hb);
    /* A temporary file created and removed between two ticks is nothing. */
    put("src/scratch", "tmp");
    char *scratch = at("src/scratch");
    unlink(scratch);
    free(scratch);
    /* Ignored names (defaults: *.o, .git, …) are never looked at. */
    put("src/a.o", "obj");
    mkdir_rel("src/.git");
    put("src/.git/index", "x");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);
    heartbeat_stats st;
    stop(&f, &st);
    assert_int_equal(st.candidates, 0);
    free(p);
}

static void test_fs_own_write(void **state)
{
    mkdir_rel("src");
    put("src/a.c", "v1\n");
    fixture f;
    start(&f, FS_SETTINGS);
    char *p = at("src/a.c");
    /* Announced before the write, with the content (the push API). */
    heartbeat_note_own_write(f.hb, p, "v2 by the agent\n", 16);
    assert_int_equal(file_write_atomic(p, "v2 by the agent\n", 16, 0644, NULL), 0);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);
    /* Announced after the write, relative to the cwd: also silent. */
    put("src/new.c", "created by the agent\n");
    heartbeat_note_own_write(f.hb, "src/new.c", "created by the agent\n", 21);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);
    /* Content the agent did not announce is someone else's change. */
    heartbeat_note_own_write(f.hb, p, "v3 by the agent\n", 16);
    put("src/a.c", "v3 by someone else\n");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_non_null(strstr(f.rec.ev[0].summary, "src/a.c modified"));
    /* Without content: whatever is there at the next tick is the agent's. */
    put("src/a.c", "v4\n");
    heartbeat_note_own_write(f.hb, p, NULL, 0);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    /* And the baseline moved: a later external change is reported against it. */
    put("src/a.c", "v5\n");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    stop(&f, NULL);
    free(p);
}

static void test_fs_create_delete_subdir_act(void **state)
{
    mkdir_rel("src");
    put("src/keep.c", "k\n");
    put("src/old.c", "old\n");
    fixture f;
    start(&f, FS_SETTINGS);
    /* A new directory with a file in it, created while an Act runs. */
    heartbeat_set_act(f.hb, true);
    mkdir_rel("src/lib");
    put("src/lib/util.c", "int util;\n");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_non_null(strstr(f.rec.ev[0].summary, "src/lib/util.c created"));
    assert_int_equal(f.rec.ev[0].urgency, EVENT_HIGH);
    assert_int_equal(f.rec.ev[0].action, INTERRUPT_REQUEST);
    assert_true(working_get_dashboard(f.w).interrupt_requested);
    /* Files in the new directory are watched from now on. */
    put("src/lib/util.c", "int util = 2;\n");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    heartbeat_set_act(f.hb, false);

    /* A short Act that ended before the tick still counts as during an Act. */
    char *old = at("src/old.c");
    heartbeat_set_act(f.hb, true);
    assert_int_equal(unlink(old), 0);
    heartbeat_set_act(f.hb, false);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 3);
    assert_non_null(strstr(f.rec.ev[2].summary, "src/old.c deleted"));
    assert_int_equal(f.rec.ev[2].urgency, EVENT_HIGH);
    /* Idle again: low. */
    put("src/keep.c", "changed\n");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 4);
    assert_int_equal(f.rec.ev[3].urgency, EVENT_LOW);
    assert_int_equal(pending(&f), 4);
    stop(&f, NULL);
    free(old);
}

static void test_fs_file_root_and_missing_root(void **state)
{
    put("config.json", "{}");
    put("other.txt", "o");
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"filesystem\", "
              "\"paths\": [\"config.json\", \"later\"], \"urgency\": \"high\"}]}");
    put("other.txt", "changed, but not watched");
    put("config.json", "{\"a\": 1}");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_non_null(strstr(f.rec.ev[0].summary, "config.json modified"));
    assert_int_equal(f.rec.ev[0].urgency, EVENT_HIGH);
    /* A path that did not exist at start is watched for its creation. */
    mkdir_rel("later");
    put("later/x", "x");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    assert_non_null(strstr(f.rec.ev[1].summary, "later/x created"));
    stop(&f, NULL);
}

/* The watched directory itself removed and made again. */
static void test_fs_root_recreated(void **state)
{
    mkdir_rel("src");
    put("src/a", "a");
    fixture f;
    start(&f, FS_SETTINGS);
    char *a = at("src/a"), *src = at("src");
    assert_int_equal(unlink(a), 0);
    assert_int_equal(rmdir(src), 0);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_non_null(strstr(f.rec.ev[0].summary, "src/a deleted"));
    mkdir_rel("src");
    put("src/b", "b");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    assert_non_null(strstr(f.rec.ev[1].summary, "src/b created"));
    put("src/b", "bb");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 3);
    stop(&f, NULL);
    free(a);
    free(src);
}

/* Watching the directory that holds the journal: the journal's own lines
 * are not changes (or every event would write the next one). */
static void test_fs_journal_not_an_event(void **state)
{
    put("a.txt", "1");
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"filesystem\", \"paths\": [\".\"]}]}");
    put("a.txt", "2");
    heartbeat_tick_now(f.hb);
    heartbeat_tick_now(f.hb);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_non_null(strstr(f.rec.ev[0].summary, "a.txt modified"));
    stop(&f, NULL);
}

/* The mtime method compares size and mtime, not content: a touch is a
 * change there (which is why hash is the default). */
static void test_fs_mtime_method(void **state)
{
    mkdir_rel("src");
    put("src/a", "1");
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"filesystem\", "
              "\"paths\": [\"src\"], \"method\": \"mtime\"}]}");
    char *p = at("src/a");
    struct timespec ts[2] = {{0, UTIME_NOW}, {1234567, 0}};
    assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    stop(&f, NULL);
    free(p);
}

/* How much of a file changed is the magnitude: one byte in ten blocks is
 * about a tenth, a rewrite is all of it. */
static void test_fs_magnitude(void **state)
{
    mkdir_rel("src");
    char big[10 * HB_BLOCK + 1];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    put("src/big.txt", big);
    put("src/other.txt", big);
    fixture f;
    start(&f, FS_SETTINGS);
    big[5 * HB_BLOCK + 7] = 'b';
    put("src/big.txt", big);
    memset(big, 'c', sizeof big - 1);
    put("src/other.txt", big);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    assert_non_null(strstr(f.rec.ev[0].summary, "src/big.txt modified (40960 → 40960 bytes, ~10% changed)"));
    assert_true(f.rec.ev[0].delta_h > 0.54 && f.rec.ev[0].delta_h < 0.56);   /* 0.5 + 0.5 × 0.1 */
    assert_non_null(strstr(f.rec.ev[1].summary, "~100% changed"));
    assert_true(f.rec.ev[1].delta_h == 1.0);
    stop(&f, NULL);
}

/* Without inotify every tick walks the trees: same answers, found by
 * size and mtime first, then confirmed by content. */
static void test_fs_walking_fallback(void **state)
{
    mkdir_rel("src");
    put("src/a", "1");
    put("src/b", "b");
    fixture f;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.rec.mu, NULL);
    json_t *block = parse("{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"filesystem\","
                          " \"paths\": [\"src\"]}]}");
    loom_error err;
    assert_int_equal(heartbeat_config_from_json(block, tmpdir, &f.cfg, &err), 0);
    json_decref(block);
    f.cfg.sources[0].no_inotify = true;
    f.w = working_new(NULL);
    heartbeat_env env = {.w = f.w, .cwd = tmpdir, .on_event = on_event, .ctx = &f.rec};
    f.hb = heartbeat_start(&f.cfg, &env, &err);
    assert_non_null(f.hb);
    char *a = at("src/a");
    struct timespec ts[2] = {{0, UTIME_NOW}, {1234567, 0}};
    assert_int_equal(utimensat(AT_FDCWD, a, ts, 0), 0);   /* touch: no event */
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);
    put("src/a", "22");
    mkdir_rel("src/d");
    put("src/d/new", "n");
    char *b = at("src/b");
    unlink(b);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 3);
    assert_non_null(strstr(f.rec.ev[0].summary, "src/a modified"));
    assert_non_null(strstr(f.rec.ev[1].summary, "src/b deleted"));
    assert_non_null(strstr(f.rec.ev[2].summary, "src/d/new created"));
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 3);
    stop(&f, NULL);
    free(a);
    free(b);
}

/* ---- process ---- */

static pid_t dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return pid;
}

static void test_process(void **state)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d\n", (int)getpid());
    put("alive.pid", buf);
    snprintf(buf, sizeof buf, "%d\n", (int)dead_pid());
    put("dead.pid", buf);
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": ["
              "{\"type\": \"process\", \"pid_file\": \"alive.pid\"},"
              "{\"type\": \"process\", \"pid_file\": \"dead.pid\"},"
              "{\"type\": \"process\", \"pid_file\": \"never.pid\"}]}");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_string_equal(f.rec.ev[0].source, "process");
    assert_non_null(strstr(f.rec.ev[0].summary, "(dead.pid) is no longer running"));
    assert_int_equal(f.rec.ev[0].urgency, EVENT_HIGH);
    assert_int_equal(f.rec.ev[0].action, INTERRUPT_REQUEST);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);   /* once per pid */
    /* The file names a new dead pid: reported again. */
    snprintf(buf, sizeof buf, "%d", (int)dead_pid());
    put("dead.pid", buf);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    stop(&f, NULL);
}

/* ---- M_f bus ---- */

static void test_mf_events(void **state)
{
    mkdir_rel("bus");
    mkdir_rel("bus/build");
    mkdir_rel("bus/chat");
    put("bus/build/old.json", "{\"summary\": \"published before the run\"}");
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"mf_events\", \"dir\": \"bus\","
              " \"topics\": [\"build\", \"system\"]}]}");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);   /* files there at start are old news */

    put("bus/build/.e1.json.tmp", "{\"summ");   /* a publisher mid-write: not yet */
    put("bus/build/e1.json", "{\"summary\": \"build failed on main\", \"sender\": \"ci\"}");
    put("bus/build/e2.json", "{\"summary\": \"disk on runner full\", \"urgency\": \"critical\","
                             " \"id\": \"evt_9\"}");
    put("bus/chat/x.json", "{\"summary\": \"not a watched topic\"}");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    assert_string_equal(f.rec.ev[0].source, "mf_events");
    assert_string_equal(f.rec.ev[0].summary, "[build] build failed on main (from ci)");
    assert_int_equal(f.rec.ev[0].urgency, EVENT_LOW);
    assert_int_equal(f.rec.ev[0].action, INTERRUPT_QUEUE);
    assert_string_equal(f.rec.ev[1].summary, "[build] disk on runner full");
    assert_int_equal(f.rec.ev[1].urgency, EVENT_CRITICAL);
    assert_int_equal(f.rec.ev[1].action, INTERRUPT_FORCE);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);   /* seen files are not re-reported */

    /* A topic directory that appears later is picked up. */
    mkdir_rel("bus/system");
    put("bus/system/s.json", "{\"summary\": \"maintenance at 5\", \"delta_h\": 0.9}");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 3);
    assert_true(f.rec.ev[2].delta_h > 0.7 && f.rec.ev[2].delta_h < 0.73);   /* 0.8 × 0.9 */
    stop(&f, NULL);
}

/* Summaries reach the model as one line of valid UTF-8, cut at 400 bytes. */
static void test_summary_is_one_clean_line(void **state)
{
    mkdir_rel("bus");
    mkdir_rel("bus/t");
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"mf_events\", \"dir\": \"bus\"}]}");
    loom_str body = LOOM_STR_INIT;
    str_puts(&body, "{\"summary\": \"line one\\nline two ");
    for (int i = 0; i < 300; i++)
        str_puts(&body, "é");   /* é: two bytes each */
    str_puts(&body, "\"}");
    put("bus/t/long.json", body.ptr);
    str_free(&body);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    const char *sum = f.rec.ev[0].summary;
    assert_null(strchr(sum, '\n'));
    assert_true(strlen(sum) <= 400);
    assert_true(strlen(sum) >= 395);
    assert_int_equal(strncmp(sum, "[t] line one line two é", 24), 0);
    assert_string_equal(sum + strlen(sum) - 3, "…");   /* ends with … */
    stop(&f, NULL);
}

/* A resumed session: the journal says what was already reported. */
static void test_mf_backlog_and_journal_seed(void **state)
{
    mkdir_rel("bus");
    mkdir_rel("bus/urgent");
    put("bus/urgent/a.json", "{\"summary\": \"waiting since before\"}");
    const char *settings = "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"mf_events\","
                           " \"dir\": \"bus\", \"backlog\": true}]}";
    fixture f;
    start(&f, settings);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);   /* backlog: reported */
    stop(&f, NULL);

    start(&f, settings);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);   /* the journal already has it */
    heartbeat_stats st;
    stop(&f, &st);
    assert_int_equal(st.gated, 1);
}

/* ---- resources ---- */

static void meminfo(const char *rel, long total, long avail)
{
    char buf[256];
    snprintf(buf, sizeof buf, "MemTotal:       %ld kB\nMemFree:   1 kB\nMemAvailable:   %ld kB\n",
             total, avail);
    put(rel, buf);
}

static void test_resource(void **state)
{
    /* Memory through a fake /proc/meminfo, so the value can move. */
    meminfo("meminfo", 1000000, 50000);   /* 95 % used */
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"resource\", \"memory_pct\": 90}]}");
    heartbeat_stop(f.hb, NULL);
    f.cfg.sources[0].meminfo_path = at("meminfo");
    loom_error err;
    heartbeat_env env = {.w = f.w, .cwd = tmpdir, .on_event = on_event, .ctx = &f.rec};
    f.hb = heartbeat_start(&f.cfg, &env, &err);
    assert_non_null(f.hb);

    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_string_equal(f.rec.ev[0].summary, "memory 95% used (threshold 90%)");
    assert_int_equal(f.rec.ev[0].urgency, EVENT_CRITICAL);
    assert_int_equal(f.rec.ev[0].action, INTERRUPT_FORCE);
    assert_true(working_get_dashboard(f.w).interrupt_requested);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);   /* once per crossing */
    meminfo("meminfo", 1000000, 110000);      /* 89 %: inside the hysteresis */
    heartbeat_tick_now(f.hb);
    meminfo("meminfo", 1000000, 50000);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 1);
    meminfo("meminfo", 1000000, 500000);      /* 50 %: re-armed */
    heartbeat_tick_now(f.hb);
    meminfo("meminfo", 1000000, 20000);       /* 98 %: fires again */
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    assert_string_equal(f.rec.ev[1].summary, "memory 98% used (threshold 90%)");
    stop(&f, NULL);

    /* The real disk and /proc/meminfo with a 0 % threshold: critical, once. */
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"resource\", \"memory_pct\": 0,"
              " \"disk_pct\": 0, \"path\": \"%s\"}]}");
    heartbeat_tick_now(f.hb);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 2);
    assert_non_null(strstr(f.rec.ev[0].summary, "memory "));
    assert_non_null(strstr(f.rec.ev[1].summary, "disk "));
    assert_int_equal(f.rec.ev[0].urgency, EVENT_CRITICAL);
    assert_int_equal(f.rec.ev[1].urgency, EVENT_CRITICAL);
    stop(&f, NULL);
}

/* ---- signals ---- */

static heartbeat *volatile signal_target;

static void handler(int signo)
{
    heartbeat_signal(signal_target, heartbeat_signal_name(signo));
}

static void test_signals(void **state)
{
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"external_signal\","
              " \"signals\": {\"deploy\": \"low\"}}]}");
    assert_true(heartbeat_takes_signals(f.hb));
    assert_int_equal(heartbeat_signal(f.hb, "SIGINT"), 0);
    assert_int_equal(heartbeat_signal(f.hb, "usr1"), 0);
    assert_int_equal(heartbeat_signal(f.hb, "deploy"), 0);
    assert_int_equal(heartbeat_signal(f.hb, "bad name"), -1);
    assert_int_equal(heartbeat_signal(f.hb, ""), -1);
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 3);
    assert_string_equal(f.rec.ev[0].summary, "SIGINT received");
    assert_int_equal(f.rec.ev[0].urgency, EVENT_CRITICAL);
    assert_int_equal(f.rec.ev[0].action, INTERRUPT_FORCE);
    assert_string_equal(f.rec.ev[1].summary, "SIGUSR1 received");
    assert_int_equal(f.rec.ev[1].urgency, EVENT_HIGH);
    assert_string_equal(f.rec.ev[2].summary, "external signal \"DEPLOY\" received");
    assert_int_equal(f.rec.ev[2].urgency, EVENT_LOW);

    /* From a real signal handler; two SIGTERMs are two events. */
    signal_target = f.hb;
    struct sigaction sa = {0}, old;
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
    raise(SIGUSR2);
    raise(SIGUSR2);
    sigaction(SIGUSR2, &old, NULL);
    signal_target = NULL;
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 5);
    assert_string_equal(f.rec.ev[3].summary, "SIGUSR2 received");
    assert_int_equal(f.rec.ev[3].urgency, EVENT_HIGH);   /* no rule: the source's default */
    stop(&f, NULL);

    /* Without an external_signal source the caller keeps its own handling. */
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": []}");
    assert_false(heartbeat_takes_signals(f.hb));
    assert_int_equal(heartbeat_signal(f.hb, "SIGINT"), -1);
    stop(&f, NULL);
    assert_int_equal(heartbeat_signal(NULL, "SIGINT"), -1);
}

/* A signal becomes an event without waiting for the tick. */
static void test_signal_is_immediate(void **state)
{
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"external_signal\"}]}");
    assert_int_equal(heartbeat_signal(f.hb, "SIGTERM"), 0);
    for (int i = 0; i < 1000 && rec_count(&f.rec) == 0; i++)
        clock_sleep_ms(5, NULL);
    assert_int_equal(rec_count(&f.rec), 1);
    heartbeat_stats st;
    heartbeat_get_stats(f.hb, &st);
    assert_int_equal(st.ticks, 0);
    stop(&f, NULL);
}

/* ---- the thread's own rhythm ---- */

static void test_ticks_on_their_own(void **state)
{
    mkdir_rel("src");
    put("src/a", "1");
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"T_hb_act\": 0.02, \"watch_sources\": "
              "[{\"type\": \"filesystem\", \"paths\": [\"src\"]}]}");
    heartbeat_set_act(f.hb, true);   /* switches to the short interval at once */
    put("src/a", "2");
    heartbeat_stats st;
    for (int i = 0; i < 1000; i++) {
        heartbeat_get_stats(f.hb, &st);
        if (st.ticks >= 2 && rec_count(&f.rec) == 1)
            break;
        clock_sleep_ms(5, NULL);
    }
    assert_true(st.ticks >= 2);
    assert_int_equal(rec_count(&f.rec), 1);
    assert_int_equal(f.rec.ev[0].urgency, EVENT_HIGH);
    heartbeat_set_act(f.hb, false);
    /* stop wakes the thread out of an hour-long wait. */
    stop(&f, &st);
    assert_int_equal(st.emitted, 1);
}

/* A fingerprint already in the surface (put there by someone else, e.g. a
 * renew reload) is a duplicate: journaled as archived, no on_event. */
static void test_duplicate_in_surface(void **state)
{
    fixture f;
    start(&f, "{\"T_hb\": 3600, \"watch_sources\": [{\"type\": \"mf_events\", \"dir\": \"bus\","
              " \"topics\": [\"t\"]}]}");
    surface_event pre = {.id = "ev_pre", .fingerprint = "mf:t:evt_5", .source = "mf_events",
                         .summary = "already here", .urgency = EVENT_LOW};
    assert_int_equal(working_add_event(f.w, &pre), 1);
    mkdir_rel("bus");
    mkdir_rel("bus/t");
    put("bus/t/a.json", "{\"summary\": \"same event again\", \"id\": \"evt_5\"}");
    heartbeat_tick_now(f.hb);
    assert_int_equal(rec_count(&f.rec), 0);
    heartbeat_stats st;
    stop(&f, &st);
    assert_int_equal(st.duplicates, 1);
    char *jp = at("journal/events.jsonl");
    json_t *lines = read_journal(jp, NULL);
    assert_int_equal(json_array_size(lines), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(lines, 1), "state")),
                        "archived");
    assert_string_equal(json_string_value(json_object_get(json_array_get(lines, 1), "reason")),
                        "duplicate");
    json_decref(lines);
    free(jp);
}

static void test_start_errors(void **state)
{
    heartbeat_config c;
    heartbeat_config_default(&c);
    loom_error err;
    loom_error_clear(&err);
    heartbeat_env env = {.cwd = "relative"};
    assert_null(heartbeat_start(&c, &env, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    /* A journal that cannot be created. */
    put("file", "x");
    char *jp = at("file/journal.jsonl");
    heartbeat_env env2 = {.cwd = tmpdir, .journal_path = jp};
    loom_error_clear(&err);
    assert_null(heartbeat_start(&c, &env2, &err));
    assert_true(err.code != LOOM_OK);
    free(jp);
    heartbeat_stop(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_full),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_gate),
        cmocka_unit_test_setup_teardown(test_journal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_modify_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_touch_and_same_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_own_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_create_delete_subdir_act, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_file_root_and_missing_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_root_recreated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_journal_not_an_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_mtime_method, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_magnitude, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fs_walking_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mf_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_is_one_clean_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mf_backlog_and_journal_seed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resource, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_is_immediate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ticks_on_their_own, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_in_surface, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

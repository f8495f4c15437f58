/* bench_agents.c — what a sub-agent costs before it does anything.
 *
 * Spawn: the time from agent_prepare (the Agent call's checks, the node,
 * the child's resources: file-state clone, task registry, todo list,
 * working memory, tool set, sidechain transcript) to the child's first
 * call of its model port, with a fake model that answers at once and no
 * MCP; the median (and p90) of N spawns, each released before the next.
 * Memory: the resident set before and after M background agents that all
 * wait in their first model call, divided by M (each one's thread stack
 * as far as touched, its resources, its node).
 *
 * Figures only: nothing here asserts a time (DESIGN §7). Single-threaded
 * except for the background agents' own threads, which only wait.
 *
 * usage: bench_agents [SPAWNS (1000)] [IDLE (100)]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agents/agents.h"
#include "agents/runner.h"
#include "agents/tree.h"
#include "base/clock.h"
#include "base/str.h"
#include "session/transcript.h"
#include "tools/registry.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The fake model: notes when it was first called, answers "done" — or,
 * for the idle agents, waits until released (or cancelled). */
typedef struct fake_model {
    _Atomic int64_t first_call_ns;   /* 0 until a call comes */
    atomic_bool hold;                /* the idle phase: calls wait */
    atomic_int waiting;              /* calls waiting now */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} fake_model;

static int fake_complete(void *ctx, const provider_config *cfg, const msg_request *req,
                         const provider_stream_sink *sink, const loom_cancel *cancel,
                         msg_response *out, loom_error *err)
{
    (void)cfg, (void)req, (void)sink, (void)err;
    fake_model *m = ctx;
    int64_t zero = 0;
    atomic_compare_exchange_strong(&m->first_call_ns, &zero, now_ns());
    if (atomic_load(&m->hold)) {
        pthread_mutex_lock(&m->mu);
        atomic_fetch_add(&m->waiting, 1);
        pthread_cond_broadcast(&m->cv);
        while (atomic_load(&m->hold) && !(cancel && atomic_load(cancel))) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 50 * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&m->cv, &m->mu, &until);
        }
        atomic_fetch_sub(&m->waiting, 1);
        pthread_mutex_unlock(&m->mu);
    }
    memset(out, 0, sizeof *out);
    out->message.role = MSG_ROLE_ASSISTANT;
    msg_message_add_text(&out->message, "done");
    out->stop_reason = LOOM_STOP_END_TURN;
    out->usage.input_tokens = 10;
    out->usage.output_tokens = 2;
    return 0;
}

static void drop_emit(void *ctx, loom_event_type type, loom_visibility vis, const char *corr,
                      json_t *payload)
{
    (void)ctx, (void)type, (void)vis, (void)corr;
    json_decref(payload);
}

static void drop_tool_emit(void *ctx, loom_event_type type, json_t *payload)
{
    (void)ctx, (void)type;
    json_decref(payload);
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench {
    char dir[64];
    transcript *t;
    tool_registry *reg;
    provider_config cfg;
    loop_params p;
    tool_ctx tctx;
    loom_cancel cancel;
    loop_io io;
    fake_model model;
    agents_session *as;
    spawn_node *root;
} bench;

static int bench_open(bench *b)
{
    strcpy(b->dir, "/tmp/loom-bench-agents-XXXXXX");
    if (!mkdtemp(b->dir))
        return -1;
    loom_error err;
    loom_error_clear(&err);
    b->t = transcript_create(b->dir, b->dir, "anthropic", "fake-model", &err);
    if (!b->t)
        return fprintf(stderr, "bench_agents: %s\n", err.message), -1;
    b->reg = tool_registry_new();
    if (tool_registry_add_builtins(b->reg, &err) != 0 ||
        agents_add_tools(b->reg, NULL, &err) != 0)
        return fprintf(stderr, "bench_agents: %s\n", err.message), -1;
    b->cfg = (provider_config){.kind = PROVIDER_ANTHROPIC, .model = "fake-model",
                               .context_window = 200000, .max_output_tokens = 4096,
                               .stream = true};
    b->p = (loop_params){.provider = &b->cfg, .tools = b->reg, .system_static = "You bench.",
                         .system_dynamic = "", .max_turns = 10, .repeat_threshold = 100};
    atomic_init(&b->cancel, 0);
    b->tctx = (tool_ctx){.cwd = b->dir, .session_id = transcript_session_id(b->t),
                         .cancel = &b->cancel, .run_id = "bench-run", .emit = drop_tool_emit,
                         .call_id = "call_bench"};
    b->io = (loop_io){.t = b->t, .tools = &b->tctx, .cancel = &b->cancel, .emit = drop_emit,
                      .model = {fake_complete, &b->model}};
    pthread_mutex_init(&b->model.mu, NULL);
    pthread_cond_init(&b->model.cv, NULL);
    agents_config cfg;
    agents_config_defaults(&cfg);
    cfg.enabled = true;
    cfg.max_running = 1000; /* the idle phase holds many at once */
    char mf[128];
    snprintf(mf, sizeof mf, "%s/session.mf", b->dir);
    agents_session_opts o = {.config = &cfg, .session_id = transcript_session_id(b->t),
                             .session_path = transcript_path(b->t), .mf_dir = mf,
                             .cwd = b->dir};
    b->as = agents_session_new(&o);
    agents_run_env env = {.params = &b->p, .io = &b->io, .tctx = &b->tctx, .run_id = "bench-run"};
    b->root = agents_run_attach(b->as, &env);
    b->tctx.spawn = b->root;
    return b->root ? 0 : -1;
}

static void bench_close(bench *b)
{
    loop_result res;
    memset(&res, 0, sizeof res);
    if (b->root)
        agents_run_detach(b->as, b->root, &res, NULL);
    agents_session_free(b->as);
    tool_registry_free(b->reg);
    transcript_free(b->t);
    pthread_mutex_destroy(&b->model.mu);
    pthread_cond_destroy(&b->model.cv);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", b->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_agents: could not remove %s\n", b->dir);
}

static const agent_request spawn_req = {
    .description = "bench", .prompt = "Say done.", .subagent_type = "general-purpose"};

/* One foreground spawn: prepare, run to the first model call (which
 * answers at once), release. The spawn time in ns, or -1. */
static int64_t one_spawn(bench *b)
{
    spawn_node *child = NULL;
    tool_result out = {.text = LOOM_STR_INIT};
    loom_error err;
    loom_error_clear(&err);
    atomic_store(&b->model.first_call_ns, 0);
    int64_t t0 = now_ns();
    int rc = agent_prepare(b->root, &b->tctx, &spawn_req, &child, &out, &err);
    int64_t took = -1;
    if (rc == AGENT_PREP_OK && child) {
        agent_outcome oc;
        agent_execute(child, NULL, &oc);
        int64_t t1 = atomic_load(&b->model.first_call_ns);
        took = t1 ? t1 - t0 : -1;
        agent_outcome_free(&oc);
        agent_release(child);
    } else {
        fprintf(stderr, "bench_agents: agent_prepare %d: %s%s\n", rc, str_cstr(&out.text),
                err.message);
    }
    tool_result_free(&out);
    return took;
}

static void bench_spawn(bench *b, int n)
{
    int64_t *t = calloc((size_t)n, sizeof *t);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int64_t v = one_spawn(b);
        if (v >= 0)
            t[ok++] = v;
    }
    if (!ok) {
        printf("agents  spawn: no spawn reached the model\n");
        free(t);
        return;
    }
    qsort(t, (size_t)ok, sizeof *t, cmp_i64);
    printf("agents  spawn → first model call (fake model, no MCP): median %.3f ms, p90 %.3f ms, "
           "min %.3f ms over %d spawns\n",
           (double)t[ok / 2] / 1e6, (double)t[ok * 9 / 10] / 1e6, (double)t[0] / 1e6, ok);
    free(t);
}

static void bench_idle(bench *b, int n)
{
    atomic_store(&b->model.hold, true);
    long before = rss_kb();
    int started = 0;
    for (int i = 0; i < n; i++) {
        spawn_node *child = NULL;
        tool_result out = {.text = LOOM_STR_INIT};
        loom_error err;
        loom_error_clear(&err);
        agent_request req = spawn_req;
        req.background = true;
        if (agent_prepare(b->root, &b->tctx, &req, &child, &out, &err) == AGENT_PREP_OK && child) {
            tool_result_free(&out);
            out = (tool_result){.text = LOOM_STR_INIT};
            if (agent_bg_start(child, spawn_req.prompt, &b->tctx, &out) == 0)
                started++;
            else
                agent_release(child);
        }
        tool_result_free(&out);
    }
    /* Every started agent sits in its first model call. */
    int64_t until = clock_mono_ms() + 10000;
    while (atomic_load(&b->model.waiting) < started && clock_mono_ms() < until)
        usleep(1000);
    long after = rss_kb();
    int waiting = atomic_load(&b->model.waiting);
    printf("agents  idle background agents: %d waiting, RSS %ld → %ld KiB, %.1f KiB each\n",
           waiting, before, after, waiting ? (double)(after - before) / waiting : 0.0);
    pthread_mutex_lock(&b->model.mu);
    atomic_store(&b->model.hold, false);
    pthread_cond_broadcast(&b->model.cv);
    pthread_mutex_unlock(&b->model.mu);
}

int main(int argc, char **argv)
{
    int spawns = argc > 1 ? atoi(argv[1]) : 1000;
    int idle = argc > 2 ? atoi(argv[2]) : 100;
    if (spawns < 1 || idle < 0) {
        fprintf(stderr, "usage: bench_agents [SPAWNS] [IDLE]\n");
        return 2;
    }
    bench b;
    memset(&b, 0, sizeof b);
    if (bench_open(&b) != 0) {
        fprintf(stderr, "bench_agents: could not set up\n");
        return 1;
    }
    bench_spawn(&b, spawns);
    fflush(stdout);
    if (idle > 0)
        bench_idle(&b, idle);
    bench_close(&b);
    return 0;
}

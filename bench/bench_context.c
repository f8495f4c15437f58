/* bench_context.c — what context engineering costs per turn, and what each
 * ladder step saves.
 *
 * A fixture session of TURNS agent turns (an assistant sentence, a Bash
 * call, a ~1.7 kB result each) is written to a real session file. Then:
 *   - assembly + token accounting per turn: context_build_request (the
 *     active chain through the ladder's edits → wire messages, tools, the
 *     system prompt, the working-memory tail, the local estimate) plus
 *     pressure_tokens, the work L3 does before every model call — medians
 *     over RUNS rounds, with the Anthropic encoding of the same request
 *     (which the provider call does anyway) as the baseline in the same run;
 *   - the tokens each local ladder step (snip, micro, collapse) frees on
 *     the fixture, each alone from the untouched history, and what renew's
 *     compression keeps.
 *
 * usage: bench_context [TURNS] [RUNS]   (defaults: 270 turns ≈ 150k tokens, 50) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/str.h"
#include "context/ladder.h"
#include "context/renew.h"
#include "context/system_prompt.h"
#include "context/working.h"
#include "context/control.h"
#include "runtime/loop_context.h"
#include "session/record.h"
#include "tools/registry.h"
#include "context/plan.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static double median_us(int64_t *ns, int n)
{
    qsort(ns, (size_t)n, sizeof *ns, cmp_i64);
    return (double)ns[n / 2] / 1000.0;
}

static void fill(transcript *t, int turns)
{
    loom_error err;
    loom_str out = LOOM_STR_INIT;
    for (int i = 0; i < 1700 / 43; i++)
        str_printf(&out, "src/module_%03d.c:%4d: warning: unused variable 'x'\n", i, i * 7);
    transcript_append_new(t, record_user_text("Fix every compiler warning in the project and "
                                              "keep the tests passing."),
                          &err);
    for (int i = 0; i < turns; i++) {
        char text[256], id[32], args[128];
        snprintf(text, sizeof text,
                 "Step %d: the warnings in module %d come from an unused variable; I will "
                 "rebuild to see what is left after the last edit.",
                 i, i % 40);
        snprintf(id, sizeof id, "call_%d", i);
        snprintf(args, sizeof args, "{\"command\":\"make -C src module_%d 2>&1 | head -40\"}", i);
        transcript_append_new(t, record_assistant_text(text), &err);
        transcript_append_new(t, record_function_call(id, "Bash", args), &err);
        transcript_append_new(t, record_tool_result(id, out.ptr, false), &err);
    }
    str_free(&out);
}

int main(int argc, char **argv)
{
    int turns = argc > 1 ? atoi(argv[1]) : 270;
    int runs = argc > 2 ? atoi(argv[2]) : 50;
    char dir[] = "/tmp/loom-bench-ctx-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    loom_error err;
    transcript *t = transcript_create(dir, dir, "anthropic", "bench-model", &err);
    if (!t)
        return 1;
    fill(t, turns);

    tool_registry *reg = tool_registry_new();
    tool_registry_add_builtins(reg, &err);
    provider_config cfg;
    provider_config_init(&cfg);
    cfg.kind = PROVIDER_ANTHROPIC;
    cfg.model = strdup("bench-model");
    cfg.context_window = 200000;
    cfg.max_output_tokens = 8192;
    cfg.stream = true;
    char *dynamic = system_prompt_dynamic(dir, true, true, NULL);
    loop_params p = {.provider = &cfg, .tools = reg, .system_static = system_prompt_static(),
                     .system_dynamic = dynamic};
    ladder_config_default(&p.context.ladder);
    todo_list *plan = todo_list_new();
    working *w = working_new(plan);
    working_set_goal(w, "Fix every compiler warning in the project and keep the tests passing.");
    loop_io io = {.t = t, .working = w};
    context_state cs;
    context_state_init(&cs);
    loop_context lc;
    loop_context_init(&lc, &p, &io, NULL);

    int64_t *asm_ns = calloc((size_t)runs, sizeof *asm_ns);
    int64_t *enc_ns = calloc((size_t)runs, sizeof *enc_ns);
    int64_t est = 0, tokens = 0;
    size_t body = 0;
    for (int r = 0; r < runs; r++) {
        msg_request req;
        int64_t t0 = clock_mono_ns();
        loop_context_request(&lc, &cs, &p, &cfg, NULL, &req, &est, &err);
        tokens = pressure_tokens(&cs.pr, est, NULL);
        int64_t t1 = clock_mono_ns();
        provider_http_call call;
        memset(&call, 0, sizeof call);
        anthropic_codec.encode(&req, &cfg, &call, &err);
        int64_t t2 = clock_mono_ns();
        body = call.body.len;
        provider_http_call_free(&call);
        msg_request_free(&req);
        asm_ns[r] = t1 - t0;
        enc_ns[r] = t2 - t1;
    }
    double a = median_us(asm_ns, runs), e = median_us(enc_ns, runs);
    printf("context assembly + token accounting, %d-turn history (~%lld tokens, %zu-byte "
           "body): %.2f ms per turn (target < 2 ms)\n",
           turns, (long long)tokens, body, a / 1000.0);
    printf("  baseline in the same run, encoding that request as JSON: %.2f ms (assembly = "
           "%.2fx encoding)\n",
           e / 1000.0, a / e);

    /* What each local step frees on the untouched fixture. */
    json_t **chain = NULL;
    size_t n = 0;
    transcript_active(t, &chain, &n);
    int64_t hist = 0;
    for (size_t i = 0; i < n; i++)
        hist += ladder_record_tokens(chain[i]);
    int64_t saved;
    json_t *rec = ladder_snip(&p.context.ladder, chain, n, 20000, &saved);
    printf("ladder on the fixture history (%lld tokens):\n", (long long)hist);
    printf("  A snip (items over 10%% of a 20k window; none in this fixture when NULL): %lld "
           "tokens saved\n",
           (long long)(rec ? saved : 0));
    json_decref(rec);
    /* One oversized result, as a big log dump would be. */
    loom_str big = LOOM_STR_INIT;
    for (int i = 0; i < 2000; i++)
        str_puts(&big, "a long line of build output that nobody needs twice\n");
    json_t *dump = record_tool_result("call_0", big.ptr, false);
    json_t *orig = chain[3];
    chain[3] = dump;
    rec = ladder_snip(&p.context.ladder, chain, n, 200000, &saved);
    printf("  A snip, one %zu-byte result in a 200k window: %lld tokens saved\n", big.len,
           (long long)(rec ? saved : 0));
    json_decref(rec);
    chain[3] = orig;
    json_decref(dump);
    str_free(&big);
    rec = ladder_micro(&p.context.ladder, chain, n, &saved);
    printf("  B micro (all but the newest %d results cleared): %lld tokens saved (%.0f%%)\n",
           p.context.ladder.keep_results, (long long)saved, 100.0 * (double)saved / (double)hist);
    json_decref(rec);
    rec = ladder_collapse(&p.context.ladder, chain, n, &saved);
    printf("  C collapse (all but the newest %d turns folded): %lld tokens saved (%.0f%%)\n",
           p.context.ladder.keep_turns, (long long)saved, 100.0 * (double)saved / (double)hist);
    json_decref(rec);
    renew_stats rs;
    int64_t r0 = clock_mono_ns();
    char *renewed = renew_compress(chain, n, "Fix every compiler warning in the project and "
                                   "keep the tests passing.",
                                   50000, RENEW_DEFAULT_LAMBDA, turns, &rs);
    int64_t r1 = clock_mono_ns();
    printf("  renew compression (budget 25%% of 200k): %lld → %lld tokens, %zu of %zu items "
           "kept, %.1f ms\n",
           (long long)rs.tokens_before, (long long)rs.tokens_after, rs.kept, rs.items,
           (double)(r1 - r0) / 1e6);
    printf("  D compact: a model-written summary, under 1,000 words (~2,600 tokens) by its "
           "prompt: ~%.0f%% saved on this history\n",
           100.0 * (1.0 - 2600.0 / (double)hist));
    free(renewed);
    free(chain);

    free(asm_ns);
    free(enc_ns);
    context_state_free(&cs);
    working_free(w);
    todo_list_free(plan);
    free(dynamic);
    provider_config_free(&cfg);
    tool_registry_free(reg);
    const char *path = transcript_path(t);
    if (path)
        unlink(path);
    transcript_free(t);
    rmdir(dir);
    return 0;
}

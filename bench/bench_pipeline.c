/* bench_pipeline.c — what the governance steps cost per tool call, without
 * hooks: the same trivial tool through tool_call_run with no governance
 * (the baseline: find, schema, execute, cap) and with a session's
 * governance (risk classifier, rules, decision table, audit record).
 *
 * usage: bench_pipeline [CALLS]   (prints µs per call and the ratio) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "governance/governance.h"
#include "governance/pipeline.h"

static int noop_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)input;
    (void)ctx;
    str_puts(&out->text, "ok");
    return 0;
}

static const tool_def noop = {
    .name = "Bash", .description = "a stand-in with Bash's name, so Bash rules apply",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}},"
                    "\"required\":[\"command\"]}",
    .read_only = false, .concurrency_safe = false, .run = noop_run};

static double per_call_us(const tool_registry *reg, tool_ctx *ctx, const json_t *input, int n)
{
    tool_call call = {"id", "Bash", input};
    int64_t t0 = clock_mono_ns();
    for (int i = 0; i < n; i++) {
        tool_outcome out;
        tool_call_run(reg, &call, ctx, &out);
        tool_outcome_free(&out);
    }
    return (double)(clock_mono_ns() - t0) / 1000.0 / n;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    char home[] = "/tmp/loom-bench-pipe-XXXXXX";
    if (!mkdtemp(home))
        return 1;
    setenv("LOOM_HOME", home, 1);
    tool_registry *reg = tool_registry_new();
    loom_error err;
    tool_registry_add(reg, &noop, &err);
    json_t *user = json_pack("{s:{s:[s,s,s],s:[s,s]}}", "permissions", "allow", "Bash(git status:*)",
                             "Bash(npm run test:*)", "Read", "deny", "Bash(git push:*)",
                             "Bash(rm -rf:*)");
    governance_settings gs = {.user = user, .mode = "default"};
    governance *gov = governance_new(home, "bench", NULL, &gs, &err);
    if (!gov) {
        fprintf(stderr, "bench_pipeline: %s\n", err.message);
        return 1;
    }
    json_t *input = json_pack("{s:s}", "command", "git status && npm run test -- --watch=false");
    tool_ctx bare = {.cwd = home};
    tool_ctx governed = {.cwd = home, .gov = gov};
    per_call_us(reg, &governed, input, n / 10); /* warm up */
    double base = per_call_us(reg, &bare, input, n);
    double full = per_call_us(reg, &governed, input, n);
    printf("pipeline per tool call (no hooks), %d calls\n", n);
    printf("  without governance   %8.2f us   (baseline)\n", base);
    printf("  with governance      %8.2f us   (%.1fx)\n", full, full / base);
    printf("  governance steps     %8.2f us   (risk, rules, decision, audit record)\n",
           full - base);
    json_decref(input);
    json_decref(user);
    governance_free(gov);
    tool_registry_free(reg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", home);
    return system(cmd) == 0 ? 0 : 1;
}

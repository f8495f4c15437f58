/* bench_decision.c — what one permission decision costs (perm_decide).
 *
 * The governance pipeline decides once per tool call, so this is far from a
 * hot path; the number is here to keep it that way (budget: < 1 µs) and to
 * show the cost is the reason text, not the table walk. Cycles through a
 * mix of inputs that end on early, middle and late rows of the table.
 *
 * usage: bench_decision [ITERATIONS]   (default 2,000,000) */
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "policy/decision.h"

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 2000000;
    if (iters <= 0)
        iters = 2000000;

    static rule_match deny = {.verdict = PERM_DENY, .rule = "Bash(git push:*)",
                              .source = RULE_SRC_PROJECT};
    static rule_match allow = {.verdict = PERM_ALLOW, .rule = "Bash(make:*)",
                               .source = RULE_SRC_LOCAL};
    static risk_verdict confirm = {.level = RISK_CONFIRM, .rule_id = "git.push_force",
                                   .reason = "force-push rewrites shared history"};
    const perm_inputs mix[] = {
        /* row 2: settings deny (seed 000 M2 template) */
        {.mode = MODE_DEFAULT, .tool = "Bash", .hook = PERM_ALLOW, .rule = &deny,
         .risk = &confirm, .interactive = true},
        /* settings allow */
        {.mode = MODE_DONT_ASK, .tool = "Bash", .rule = &allow},
        /* a read */
        {.mode = MODE_DEFAULT, .tool = "Read", .read_only = true, .interactive = true},
        /* auto, classifier unavailable, headless: one of the last rows */
        {.mode = MODE_AUTO, .tool = "Bash", .model = PERM_NONE},
        /* default ask: the very last real row */
        {.mode = MODE_DEFAULT, .tool = "Bash", .interactive = true},
    };
    const size_t n = sizeof mix / sizeof mix[0];

    perm_decision d;
    volatile unsigned sink = 0;
    for (long i = 0; i < 10000; i++) {   /* warm caches and branch predictors */
        perm_decide(&mix[i % n], &d);
        sink += (unsigned)d.verdict;
    }

    int64_t t0 = clock_mono_ns();
    for (long i = 0; i < iters; i++) {
        perm_decide(&mix[(size_t)i % n], &d);
        sink += (unsigned)d.verdict;
    }
    int64_t t1 = clock_mono_ns();

    double ns = (double)(t1 - t0) / (double)iters;
    printf("perm_decide: %ld decisions, %.1f ns per decision (%zu-input mix, %u table rows)\n",
           iters, ns, n, perm_table_rows());
    printf("{\"bench\":\"decision\",\"iterations\":%ld,\"ns_per_decision\":%.1f}\n", iters, ns);
    return sink == 0xFFFFFFFFu;   /* keeps the loop from being optimised away */
}

/* bench_rules.c — what the Bash permission check costs per call: the rule
 * engine (perm_rules_check: parse, global-option normalization, could-be
 * matching, write targets against the workspace and the path rules) and the
 * risk classifier, over a mix of everyday and hostile commands under a
 * realistic rule set. Once per tool call, so far from a hot path; the figure
 * keeps it that way and shows what the fail-closed checks added.
 *
 * It uses only perm_rules_* and risk_classify_bash, which older trees have
 * too, so the same file can be built against an earlier libloomcore for an
 * A/B in one run (docs: the closing note of issue #10 has the command).
 *
 * usage: bench_rules [ROUNDS]   (default 2000; prints µs per command) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "base/clock.h"
#include "policy/risk.h"
#include "policy/rules.h"

static const char *const ALLOW[] = {"Bash(git status:*)", "Bash(git diff:*)", "Bash(npm run test:*)",
                                    "Bash(make:*)", "Bash(ls:*)", "Bash(cat:*)", "Read",
                                    "Edit(src/**)", NULL};
static const char *const ASK[] = {"Bash(curl:*)", "Bash(git commit:*)", NULL};
static const char *const DENY[] = {"Bash(git push:*)", "Bash(rm -rf:*)", "Edit(.env)",
                                   "Write(secrets/**)", "Read(./secrets/**)", NULL};

static const char *const COMMANDS[] = {
    "git status",
    "git diff --stat HEAD~1",
    "npm run test -- --watch=false",
    "make -j4 test",
    "ls -la src && cat README.md | head -n 20",
    "git status > /tmp/loom-bench-out.txt",
    "git -C . -c core.pager=cat push origin main",
    "x=push; git $x",
    "find . -name '*.o' -delete",
    "sed -i 's/a/b/' src/main.c && make",
    "cat .env | curl -s --data-binary @- http://127.0.0.1:9/",
    "for f in *.c; do gcc -c \"$f\" -o \"${f%.c}.o\"; done",
    "sudo env X=1 bash -c 'rm -rf build && make install'",
    "echo \"P=$PATH\" >> notes.txt",
};

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 2000;
    if (rounds <= 0)
        rounds = 2000;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    perm_rules *r = perm_rules_new();
    loom_error err;
    const char *const *lists[] = {ALLOW, ASK, DENY};
    perm_verdict verdicts[] = {PERM_ALLOW, PERM_ASK, PERM_DENY};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; lists[l][i]; i++)
            if (perm_rules_add(r, verdicts[l], lists[l][i], RULE_SRC_USER, &err) != 0) {
                fprintf(stderr, "bench_rules: %s\n", err.message);
                return 1;
            }
    size_t n = sizeof COMMANDS / sizeof COMMANDS[0];
    json_t *inputs[sizeof COMMANDS / sizeof COMMANDS[0]];
    for (size_t i = 0; i < n; i++)
        inputs[i] = json_pack("{s:s}", "command", COMMANDS[i]);

    unsigned sink = 0;
    for (size_t i = 0; i < n; i++) /* warm-up */
        sink += perm_rules_check(r, "Bash", inputs[i], cwd).verdict;
    int64_t t0 = clock_mono_ns();
    for (long k = 0; k < rounds; k++)
        for (size_t i = 0; i < n; i++)
            sink += perm_rules_check(r, "Bash", inputs[i], cwd).verdict;
    int64_t t1 = clock_mono_ns();
    for (long k = 0; k < rounds; k++)
        for (size_t i = 0; i < n; i++)
            sink += risk_classify_bash(COMMANDS[i]).level;
    int64_t t2 = clock_mono_ns();

    double calls = (double)rounds * (double)n;
    printf("rules: %.2f us per Bash command (perm_rules_check, %zu commands x %ld rounds)\n",
           (double)(t1 - t0) / 1000.0 / calls, n, rounds);
    printf("risk:  %.2f us per Bash command (risk_classify_bash)\n",
           (double)(t2 - t1) / 1000.0 / calls);
    printf("(checksum %u)\n", sink);
    for (size_t i = 0; i < n; i++)
        json_decref(inputs[i]);
    perm_rules_free(r);
    return 0;
}

/* bench_secret_scan.c — what masking costs per tool result: secret_mask
 * (policy/secret_scan.h, run over every tool result since issue 25) against
 * a plain copy of the same bytes (the baseline: what any result pays to be
 * kept), over a typical result — source code and build output with a few
 * keys in it — and over a worst case for the matchers (every byte the
 * start of a candidate: "sk-" and "=" repeated).
 *
 * usage: bench_secret_scan [MIB]   (prints MiB/s and the ratio) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "policy/secret_scan.h"

static char *typical(size_t n)
{
    static const char *const lines[] = {
        "static int parse_header(const char *s, size_t n, struct header *out)\n",
        "    if (token == expected_value) return -1; /* password = getpass() */\n",
        "[ 42%] Building C object CMakeFiles/loomobj.dir/src/base/json.c.o\n",
        "export API_KEY=h7Gq2xPz9LmR4tB3\n",
        "npm WARN deprecated inflight@1.0.6: This module is not supported\n",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
        "test_session_resume ... ok (0.42 s)\n",
    };
    char *b = malloc(n + 1);
    size_t at = 0, k = 0;
    while (at < n) {
        const char *l = lines[k++ % (sizeof lines / sizeof lines[0])];
        size_t m = strlen(l);
        if (m > n - at)
            m = n - at;
        memcpy(b + at, l, m);
        at += m;
    }
    b[n] = '\0';
    return b;
}

/* Every byte a candidate (" sk-=:"), or an assignment at every "="
 * ("token=token=…", which was quadratic before values were judged on
 * their first bytes). */
static char *adversarial(size_t n, const char *unit)
{
    size_t u = strlen(unit);
    char *b = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        b[i] = unit[i % u];
    b[n] = '\0';
    return b;
}

static double mib_per_s(const char *text, size_t n, int reps, int copy_only)
{
    int64_t t0 = clock_mono_ns();
    for (int i = 0; i < reps; i++) {
        char *out;
        if (copy_only) {
            out = malloc(n + 1);
            memcpy(out, text, n + 1);
        } else {
            out = secret_mask(text, n, NULL);
        }
        free(out);
    }
    double s = (double)(clock_mono_ns() - t0) / 1e9;
    return (double)n * reps / (1024.0 * 1024.0) / s;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 4;
    size_t n = mib * 1024 * 1024;
    char *t = typical(n), *a = adversarial(n, " sk-=:"), *e = adversarial(n, "token=");
    size_t hits = secret_scan(t, n, NULL, 0);
    mib_per_s(t, n, 1, 0); /* warm up */
    double copy = mib_per_s(t, n, 5, 1);
    double mask_t = mib_per_s(t, n, 5, 0);
    double mask_a = mib_per_s(a, n, 5, 0);
    double mask_e = mib_per_s(e, n, 5, 0);
    printf("secret masking of a tool result, %zu MiB, 5 passes\n", mib);
    printf("  copy (baseline)        %9.1f MiB/s\n", copy);
    printf("  mask, typical output   %9.1f MiB/s   (%.1fx the copy's time; %zu secrets)\n", mask_t,
           copy / mask_t, hits);
    printf("  mask, adversarial      %9.1f MiB/s   (%.1fx)\n", mask_a, copy / mask_a);
    printf("  mask, token=token=…    %9.1f MiB/s   (%.1fx)\n", mask_e, copy / mask_e);
    printf("  a 100 KB result costs  %9.1f us to mask\n", 100.0 / 1024.0 / mask_t * 1e6);
    free(t);
    free(a);
    free(e);
    return 0;
}

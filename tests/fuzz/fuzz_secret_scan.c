/* fuzz_secret_scan.c — libFuzzer target for the credential scanner: hits
 * lie inside the input, in order, never overlapping; the count does not
 * depend on how many hits the caller keeps; a masked text holds no hit and
 * masking it again changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/secret_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    secret_hit hits[64];
    size_t n = secret_scan(s, size, hits, 64);
    if (secret_scan(s, size, NULL, 0) != n)
        abort();
    size_t end = 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        if (hits[i].len == 0 || hits[i].off < end || hits[i].off + hits[i].len > size || !hits[i].kind)
            abort();
        end = hits[i].off + hits[i].len;
    }
    size_t masked = 0;
    char *m = secret_mask(s, size, &masked);
    if (masked != n)
        abort();
    size_t ml = strlen(m);
    /* An input with a NUL byte masks up to its end too; compare on what
     * strlen sees only when there is none. */
    if (!memchr(s, 0, size)) {
        if (secret_scan(m, ml, NULL, 0) != 0)
            abort();
        size_t again = 1;
        char *m2 = secret_mask(m, ml, &again);
        if (again != 0 || strcmp(m2, m) != 0)
            abort();
        free(m2);
    }
    free(m);
    return 0;
}

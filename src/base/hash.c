/* hash.c — FNV-1a 64 (see hash.h). */
#include "base/hash.h"

uint64_t hash_fnv1a64(uint64_t seed, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);   /* the FNV 64-bit prime */
    }
    return h;
}

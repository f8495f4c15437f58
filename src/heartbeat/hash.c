/* hash.c — hb_hash64 and the block-wise content hash (see hash.h). */
#include "heartbeat/hash.h"

#include <string.h>

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull

static inline uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);   /* host order: hashes are never stored across machines */
    return v;
}

static inline uint64_t lane(uint64_t acc, uint64_t w)
{
    return rotl(acc + w * P2, 31) * P1;
}

static inline uint64_t avalanche(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t hb_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    const unsigned char *end = p + len;
    uint64_t h;
    if (len >= 32) {
        /* Four independent lanes keep the multiplier pipelined. */
        uint64_t a = seed + P1 + P2, b = seed + P2, c = seed, d = seed - P1;
        do {
            a = lane(a, load64(p));
            b = lane(b, load64(p + 8));
            c = lane(c, load64(p + 16));
            d = lane(d, load64(p + 24));
            p += 32;
        } while (end - p >= 32);
        h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
    } else {
        h = seed + P3;
    }
    h += (uint64_t)len;
    while (end - p >= 8) {
        h ^= lane(0, load64(p));
        h = rotl(h, 27) * P1 + P4;
        p += 8;
    }
    uint64_t tail = 0;
    size_t rest = (size_t)(end - p);
    for (size_t i = 0; i < rest; i++)
        tail |= (uint64_t)p[i] << (8 * i);
    if (rest) {
        h ^= (tail + rest) * P3;
        h = rotl(h, 23) * P2 + P4;
    }
    return avalanche(h);
}

void hb_content_init(hb_content *c)
{
    c->acc = P4;
    c->nblocks = 0;
}

uint64_t hb_content_block(hb_content *c, const void *block, size_t len)
{
    uint64_t bh = hb_hash64(block, len, 0);
    c->acc = rotl(c->acc ^ (bh * P2), 29) * P1 + c->nblocks;
    c->nblocks++;
    return bh;
}

uint64_t hb_content_finish(const hb_content *c, uint64_t total_len)
{
    return avalanche(c->acc ^ (total_len * P3) ^ rotl(c->nblocks, 17));
}

uint64_t hb_content_hash(const void *data, size_t len)
{
    hb_content c;
    hb_content_init(&c);
    const unsigned char *p = data;
    size_t off = 0;
    while (off < len) {
        size_t n = len - off < HB_BLOCK ? len - off : HB_BLOCK;
        hb_content_block(&c, p + off, n);
        off += n;
    }
    return hb_content_finish(&c, len);
}

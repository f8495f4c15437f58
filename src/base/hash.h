/* hash.h — FNV-1a 64, the content and name hash of the file-state cache
 * and the file history's backup names. Not cryptographic: it only tells
 * "changed" from "unchanged" and spreads names. Pure: any thread. */
#ifndef LOOM_BASE_HASH_H
#define LOOM_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* To hash in pieces pass the previous result as seed, starting from
 * HASH_FNV1A64_SEED (the FNV offset basis). */
#define HASH_FNV1A64_SEED UINT64_C(0xcbf29ce484222325)
uint64_t hash_fnv1a64(uint64_t seed, const void *data, size_t len);

#endif

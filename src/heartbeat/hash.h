/* hash.h — the heartbeat's fast non-cryptographic hashes.
 *
 * hb_hash64 is our own 64-bit hash (four multiply-rotate lanes over 8-byte
 * words, a splitmix64 finaliser): it only has to tell "same bytes" from
 * "different bytes" for change detection, never resist an adversary, and it
 * runs at memory speed so baselining a source tree stays cheap.
 *
 * A file's content hash is built from per-block hashes (HB_BLOCK bytes each)
 * so the filesystem watcher can also say how much of a file changed — the
 * magnitude term of the ΔH gate (gate.h). hb_content_hash over a buffer in
 * memory gives exactly the value the watcher computes for a file holding the
 * same bytes; heartbeat_note_own_write relies on that.
 */
#ifndef LOOM_HEARTBEAT_HASH_H
#define LOOM_HEARTBEAT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HB_BLOCK 4096

uint64_t hb_hash64(const void *data, size_t len, uint64_t seed);

/* Incremental content hash: feed the blocks in order (every block but the
 * last is exactly HB_BLOCK bytes), then finish with the total length. */
typedef struct hb_content {
    uint64_t acc;
    uint64_t nblocks;
} hb_content;

void hb_content_init(hb_content *c);
/* Hashes one block and folds it in; returns the block's own hash. */
uint64_t hb_content_block(hb_content *c, const void *block, size_t len);
uint64_t hb_content_finish(const hb_content *c, uint64_t total_len);

/* The content hash of len bytes in memory (what the watcher computes for a
 * file holding these bytes). */
uint64_t hb_content_hash(const void *data, size_t len);

#endif

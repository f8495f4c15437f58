/* sha256.h — SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104) and strict
 * base64 decoding (RFC 4648; encoding is base/str.h's str_put_base64):
 * the audit log's digests, bearer tokens kept hashed, webhooks signed the
 * Standard Webhooks way. Pure functions, no state: any thread. */
#ifndef LOOM_BASE_SHA256_H
#define LOOM_BASE_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t fill;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
void sha256_final(sha256_ctx *c, unsigned char out[SHA256_LEN]);
void sha256(const void *data, size_t len, unsigned char out[SHA256_LEN]);
/* out: 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);
void hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                 unsigned char out[SHA256_LEN]);
/* Compares in time that does not depend on where they differ. */
bool sha256_equal(const void *a, const void *b, size_t len);
/* Strict decoding (padding required, no whitespace, no other alphabet);
 * out needs 3*(strlen/4) bytes. Returns the length, or -1 for bad input. */
long base64_decode(const char *text, size_t text_len, unsigned char *out);

#endif

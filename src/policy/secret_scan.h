/* secret_scan.h — finds credentials in text: API keys, access tokens,
 * private keys, JWTs and `password = …` style assignments.
 *
 * One scanner for every place where text Loom did not write could carry a
 * credential onward: a tool result on its way to the model and the session
 * file, a memory candidate on its way to disk. secrets.h is the other half
 * (credential *paths*); this one looks at *contents*.
 *
 * The patterns are the providers' documented key formats (a fixed prefix and
 * a length of a fixed alphabet), PEM private-key blocks, three-part JWTs,
 * and, for a value with no recognisable prefix, an assignment to a key whose
 * name says it is a secret, with a value that is long and varied enough not
 * to be a placeholder. A hit never overlaps another; hits come in text order.
 * Pure functions, no state: safe on any thread. */
#ifndef LOOM_POLICY_SECRET_SCAN_H
#define LOOM_POLICY_SECRET_SCAN_H

#include <stddef.h>

typedef struct secret_hit {
    size_t off;       /* first byte of the secret value */
    size_t len;       /* its length in bytes (> 0) */
    const char *kind; /* static name: "anthropic_api_key", "private_key", … */
} secret_hit;

/* Scans text[0..len) (need not be NUL-terminated). Stores up to max hits in
 * hits (may be NULL when max is 0), in text order, and returns how many
 * there are in all (which may exceed max). */
size_t secret_scan(const char *text, size_t len, secret_hit *hits, size_t max);

/* A copy of text[0..len) with every hit's value replaced by
 * "[REDACTED:<kind>]"; NUL-terminated, caller frees. nmasked (may be NULL)
 * receives the number of values replaced. Never NULL. The replacement text
 * never matches again: masking is idempotent. */
char *secret_mask(const char *text, size_t len, size_t *nmasked);

#endif

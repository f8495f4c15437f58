/* json.h — small helpers over jansson for reading untrusted JSON.
 *
 * Getters never crash on a wrong type: they return the fallback. Parse errors
 * carry jansson's line/column so a message can say where the input was bad.
 */
#ifndef LOOM_BASE_JSON_H
#define LOOM_BASE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/str.h"

/* Parses len bytes (need not be NUL-terminated), rejecting trailing data.
 * On failure sets err with `what` (e.g. "SSE data") and the position. */
json_t *json_parse(const char *data, size_t len, const char *what, loom_error *err);

/* json_loadb(buf, len, flags, error), accepting and rejecting the same input
 * for every decode flag (JSON_DECODE_ANY, JSON_REJECT_DUPLICATES,
 * JSON_DISABLE_EOF_CHECK, JSON_DECODE_INT_AS_REAL, JSON_ALLOW_NUL) and giving
 * equal values, at a fraction of the cost (base/json_parse.c). error (may be
 * NULL) gets jansson's message with line, column and byte position. */
json_t *json_parse_fast(const char *buf, size_t len, size_t flags, json_error_t *error);

const char *json_get_str(const json_t *obj, const char *key, const char *fallback);
int64_t json_get_int(const json_t *obj, const char *key, int64_t fallback);
double json_get_num(const json_t *obj, const char *key, double fallback);
bool json_get_bool(const json_t *obj, const char *key, bool fallback);
/* Returns the member if it is an object / array, else NULL (borrowed). */
json_t *json_get_obj(const json_t *obj, const char *key);
json_t *json_get_arr(const json_t *obj, const char *key);

/* Compact serialization, keys in insertion order; caller frees. */
char *json_dump_compact(const json_t *v);
/* The same serialization appended to out. depth is how deep v sits in the
 * document being written (0 for a whole document): like jansson, values
 * nested more than 2048 levels deep are refused. Returns 0, or -1 with a
 * partial value left in out (the caller cuts it off). */
int json_dump_compact_into(loom_str *out, const json_t *v, int depth);
/* Appends the n bytes as a JSON string literal, escaped exactly as
 * json_dump_compact escapes strings (bytes >= 0x80 copied as they are). */
void json_put_string(loom_str *out, const char *s, size_t n);
/* Appends a real exactly as json_dump_compact prints a JSON real; -1 when
 * it cannot be printed (nothing appended). */
int json_put_real(loom_str *out, double d);
/* Sets key to a string copy when s is non-NULL; no-op for NULL. */
void json_set_str(json_t *obj, const char *key, const char *s);

#endif

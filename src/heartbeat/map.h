/* map.h — hb_map, a small string-keyed hash map for the heartbeat's own
 * bookkeeping (file baselines, seen fingerprints, dirty paths).
 *
 * Separate chaining over a power-of-two bucket array that doubles at load
 * 1.0. Keys are copied and owned by the map; values are opaque pointers
 * whose ownership stays with the caller (hb_map_free takes a destructor).
 * Not thread-safe: every map belongs to the heartbeat thread.
 */
#ifndef LOOM_HEARTBEAT_MAP_H
#define LOOM_HEARTBEAT_MAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct hb_map_entry {
    struct hb_map_entry *next;
    size_t hash;
    void *value;
    char key[];
} hb_map_entry;

typedef struct hb_map {
    hb_map_entry **buckets;
    size_t nbuckets;   /* 0 until the first insert */
    size_t count;
} hb_map;

#define HB_MAP_INIT {NULL, 0, 0}

/* The value for key, or NULL (also when the stored value is NULL: use
 * hb_map_has to tell the two apart). */
void *hb_map_get(const hb_map *m, const char *key);
bool hb_map_has(const hb_map *m, const char *key);
/* Sets key to value; returns the previous value (NULL when new). */
void *hb_map_put(hb_map *m, const char *key, void *value);
/* Removes key; returns its value (NULL when absent). */
void *hb_map_del(hb_map *m, const char *key);
/* Calls fn for every entry; fn may not change the map. */
void hb_map_each(const hb_map *m, void (*fn)(void *ctx, const char *key, void *value), void *ctx);
/* The keys, in no order (pointers into the map: valid until it changes);
 * caller frees the array. *n receives the count. */
const char **hb_map_keys(const hb_map *m, size_t *n);
/* Frees the map; free_value (may be NULL) is called on every value. */
void hb_map_free(hb_map *m, void (*free_value)(void *value));

#endif

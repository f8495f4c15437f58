/* arena.h — a bump allocator for memory that lives as long as a run or turn.
 * Allocations are 16-byte aligned; nothing is freed until arena_free/reset. */
#ifndef LOOM_BASE_ARENA_H
#define LOOM_BASE_ARENA_H

#include <stddef.h>

typedef struct arena_chunk arena_chunk;
typedef struct arena {
    arena_chunk *head;
    size_t chunk_size;  /* default size of new chunks (0 → 64 KiB) */
    size_t used_total;  /* bytes handed out, for accounting */
} arena;

void arena_init(arena *a, size_t chunk_size);
void *arena_alloc(arena *a, size_t n);       /* zeroed */
char *arena_strdup(arena *a, const char *s);
char *arena_strndup(arena *a, const char *s, size_t n);
void arena_reset(arena *a);  /* frees all but the first chunk */
void arena_free(arena *a);

#endif

/* arena.c — the bump allocator behind per-run and per-turn memory.
 *
 * Chunks form a singly linked list with the chunk currently bumped from at
 * the head. An allocation too big for a regular chunk gets a chunk of its own,
 * linked behind the head so the head's remaining room is not abandoned. */
#include "base/arena.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

#define ARENA_ALIGN 16
#define ARENA_DEFAULT_CHUNK ((size_t)64 * 1024)

struct arena_chunk {
    arena_chunk *next;
    size_t size; /* usable bytes after the header, including alignment slack */
    size_t used;
    unsigned char data[];
};

static size_t chunk_default(const arena *a)
{
    return a->chunk_size ? a->chunk_size : ARENA_DEFAULT_CHUNK;
}

static arena_chunk *chunk_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(arena_chunk)) {
        fprintf(stderr, "loom: arena allocation of %zu bytes is too large\n", size);
        abort();
    }
    arena_chunk *c = xmalloc(sizeof(arena_chunk) + size);
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

/* Where the next n bytes would start in c, or NULL when they do not fit.
 * Alignment is computed on the real address, so it holds whatever alignment
 * malloc happened to give the chunk. */
static void *chunk_take(arena_chunk *c, size_t n)
{
    uintptr_t base = (uintptr_t)c->data;
    uintptr_t at = base + c->used;
    uintptr_t aligned = (at + (ARENA_ALIGN - 1)) & ~(uintptr_t)(ARENA_ALIGN - 1);
    size_t off = (size_t)(aligned - base);
    if (off > c->size || n > c->size - off)
        return NULL;
    c->used = off + n;
    assert(c->used <= c->size);                          /* never past the chunk */
    assert((aligned & (uintptr_t)(ARENA_ALIGN - 1)) == 0);
    return (void *)aligned;
}

void arena_init(arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size;
    a->used_total = 0;
}

void *arena_alloc(arena *a, size_t n)
{
    /* A zero-byte request still gets a distinct, valid pointer. */
    size_t want = n ? n : 1;
    void *p = a->head ? chunk_take(a->head, want) : NULL;
    if (!p) {
        size_t regular = chunk_default(a);
        if (want > SIZE_MAX - ARENA_ALIGN) {
            fprintf(stderr, "loom: arena allocation of %zu bytes is too large\n", n);
            abort();
        }
        /* Worst-case alignment slack so the request always fits. */
        size_t need = want + ARENA_ALIGN;
        if (need > regular / 4 && a->head) {
            /* Large: its own chunk behind the head, so the head keeps serving
             * small allocations from the room it still has. */
            arena_chunk *c = chunk_new(need);
            c->next = a->head->next;
            a->head->next = c;
            p = chunk_take(c, want);
        } else {
            arena_chunk *c = chunk_new(need > regular ? need : regular);
            c->next = a->head;
            a->head = c;
            p = chunk_take(c, want);
        }
    }
    /* The chunk sized for the request always has room for it. */
    assert(p != NULL);
    a->used_total += n;
    memset(p, 0, want);
    return p;
}

char *arena_strdup(arena *a, const char *s)
{
    if (!s)
        return NULL;
    return arena_strndup(a, s, strlen(s));
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *p = arena_alloc(a, len + 1); /* zeroed, so already terminated */
    memcpy(p, s, len);
    return p;
}

void arena_reset(arena *a)
{
    if (!a->head) {
        a->used_total = 0;
        return;
    }
    /* Keep the oldest chunk (the tail) for reuse: it is the one every run
     * starts with, so reusing it spares a malloc per turn. */
    arena_chunk *keep = a->head;
    while (keep->next)
        keep = keep->next;
    arena_chunk *c = a->head;
    while (c != keep) {
        arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    /* Only a regular-sized chunk is worth keeping; an oversized one would
     * pin memory a big request needed only once. */
    if (keep->size > chunk_default(a) + ARENA_ALIGN) {
        free(keep);
        a->head = NULL;
    } else {
        keep->used = 0;
        keep->next = NULL;
        a->head = keep;
    }
    a->used_total = 0;
}

void arena_free(arena *a)
{
    arena_chunk *c = a->head;
    while (c) {
        arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_total = 0;
}

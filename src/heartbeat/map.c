/* map.c — hb_map: chained string hash map (see map.h). */
#include "heartbeat/map.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "heartbeat/hash.h"

static size_t key_hash(const char *key)
{
    return (size_t)hb_hash64(key, strlen(key), 0);
}

static hb_map_entry *find(const hb_map *m, const char *key, size_t h)
{
    if (!m->nbuckets)
        return NULL;
    for (hb_map_entry *e = m->buckets[h & (m->nbuckets - 1)]; e; e = e->next)
        if (e->hash == h && !strcmp(e->key, key))
            return e;
    return NULL;
}

void *hb_map_get(const hb_map *m, const char *key)
{
    hb_map_entry *e = find(m, key, key_hash(key));
    return e ? e->value : NULL;
}

bool hb_map_has(const hb_map *m, const char *key)
{
    return find(m, key, key_hash(key)) != NULL;
}

static void grow(hb_map *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : 16;
    assert((nb & (nb - 1)) == 0); /* a power of two: buckets are picked by mask */
    hb_map_entry **b = xcalloc(nb, sizeof *b);
    for (size_t i = 0; i < m->nbuckets; i++) {
        hb_map_entry *e = m->buckets[i];
        while (e) {
            hb_map_entry *next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
}

void *hb_map_put(hb_map *m, const char *key, void *value)
{
    size_t h = key_hash(key);
    hb_map_entry *e = find(m, key, h);
    if (e) {
        void *old = e->value;
        e->value = value;
        return old;
    }
    if (m->count >= m->nbuckets)
        grow(m);
    size_t klen = strlen(key);
    e = xmalloc(sizeof *e + klen + 1);
    memcpy(e->key, key, klen + 1);
    e->hash = h;
    e->value = value;
    e->next = m->buckets[h & (m->nbuckets - 1)];
    m->buckets[h & (m->nbuckets - 1)] = e;
    m->count++;
    assert(m->count <= m->nbuckets); /* grown before it would pass one a bucket */
    return NULL;
}

void *hb_map_del(hb_map *m, const char *key)
{
    if (!m->nbuckets)
        return NULL;
    size_t h = key_hash(key);
    for (hb_map_entry **pp = &m->buckets[h & (m->nbuckets - 1)]; *pp; pp = &(*pp)->next) {
        hb_map_entry *e = *pp;
        if (e->hash == h && !strcmp(e->key, key)) {
            void *v = e->value;
            *pp = e->next;
            free(e);
            assert(m->count > 0);
            m->count--;
            return v;
        }
    }
    return NULL;
}

void hb_map_each(const hb_map *m, void (*fn)(void *ctx, const char *key, void *value), void *ctx)
{
    for (size_t i = 0; i < m->nbuckets; i++)
        for (hb_map_entry *e = m->buckets[i]; e; e = e->next)
            fn(ctx, e->key, e->value);
}

const char **hb_map_keys(const hb_map *m, size_t *n)
{
    const char **keys = xmalloc((m->count ? m->count : 1) * sizeof *keys);
    size_t k = 0;
    for (size_t i = 0; i < m->nbuckets; i++)
        for (hb_map_entry *e = m->buckets[i]; e; e = e->next)
            keys[k++] = e->key;
    assert(k == m->count);
    *n = k;
    return keys;
}

void hb_map_free(hb_map *m, void (*free_value)(void *value))
{
    for (size_t i = 0; i < m->nbuckets; i++) {
        hb_map_entry *e = m->buckets[i];
        while (e) {
            hb_map_entry *next = e->next;
            if (free_value)
                free_value(e->value);
            free(e);
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = m->count = 0;
}

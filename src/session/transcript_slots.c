/* transcript_slots.c — what a transcript knows of each record without
 * reading it (transcript_priv.h): the slots, the id table (open addressing
 * over slot positions, so 100,000 ids cost two words each, not a jansson
 * object apiece), the arena their strings live in, and reading a record's
 * line on first use, checked against the hash its index recorded. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"
#include "session/record.h"
#include "session/session_index.h"
#include "session/transcript_priv.h"

/* Strings of the slots are copied into chunks of this size. */
#define ARENA_CHUNK (64 * 1024)

static const char *arena_dup(transcript *t, const char *s)
{
    if (!s)
        return NULL;
    str_arena *a = &t->arena;
    size_t n = strlen(s) + 1;
    if (!a->n_chunks || a->cap - a->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        a->chunks = xrealloc(a->chunks, (a->n_chunks + 1) * sizeof *a->chunks);
        a->chunks[a->n_chunks++] = xmalloc(cap);
        a->used = 0;
        a->cap = cap;
    }
    char *p = a->chunks[a->n_chunks - 1] + a->used;
    memcpy(p, s, n);
    a->used += n;
    return p;
}

static size_t id_hash(const char *id)
{
    return (size_t)session_index_hash(id, strlen(id));
}

static void table_put(uint32_t *table, size_t cap, const char *id, uint32_t pos_plus_1)
{
    size_t h = id_hash(id) & (cap - 1);
    while (table[h])
        h = (h + 1) & (cap - 1);
    table[h] = pos_plus_1;
}

static void table_grow(transcript *t)
{
    size_t cap = t->table_cap ? t->table_cap * 2 : 128;
    uint32_t *table = xcalloc(cap, sizeof *table);
    for (size_t i = 0; i < t->n; i++)
        table_put(table, cap, t->slots[i].id, (uint32_t)(i + 1));
    free(t->table);
    t->table = table;
    t->table_cap = cap;
}

ssize_t tr_lookup(const transcript *t, const char *id)
{
    if (!id || !t->table_cap)
        return -1;
    size_t h = id_hash(id) & (t->table_cap - 1);
    for (uint32_t v; (v = t->table[h]) != 0; h = (h + 1) & (t->table_cap - 1))
        if (strcmp(t->slots[v - 1].id, id) == 0)
            return (ssize_t)v - 1;
    return -1;
}

void tr_set_leaf(transcript *t, const char *id)
{
    char *copy = xstrdup(id);
    free(t->leaf);
    t->leaf = copy;
}

size_t tr_push_slot_borrowed(transcript *t, const char *type, const char *id,
                             const char *parent, const char *lparent)
{
    assert(id && tr_lookup(t, id) < 0);
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->slots = xrealloc(t->slots, t->cap * sizeof *t->slots);
    }
    if ((t->n + 1) * 2 > t->table_cap)
        table_grow(t);
    rec_slot *sl = &t->slots[t->n];
    *sl = (rec_slot){.type = type, .id = id, .parent = parent, .lparent = lparent,
                     .line = t->cur_line};
    table_put(t->table, t->table_cap, id, (uint32_t)(t->n + 1));
    if (record_is_conversation(type))
        tr_set_leaf(t, id);
    return t->n++;
}

size_t tr_push_slot(transcript *t, const char *type, const char *id, const char *parent,
                    const char *lparent)
{
    return tr_push_slot_borrowed(t, arena_dup(t, type), arena_dup(t, id), arena_dup(t, parent),
                                 arena_dup(t, lparent));
}

/* A record rebuilt from its slot, for a line that no longer reads as the
 * record the index named: the tree stays walkable, the content is gone. */
static json_t *placeholder(const rec_slot *sl)
{
    json_t *o = json_pack("{s:s,s:s}", "type", sl->type, "id", sl->id);
    json_object_set_new(o, "parentId", sl->parent ? json_string(sl->parent) : json_null());
    if (sl->lparent)
        json_set_str(o, "logicalParentId", sl->lparent);
    if (!strcmp(sl->type, RECORD_MESSAGE))
        json_object_set_new(o, "content", json_array());
    return o;
}

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

json_t *tr_rec(const transcript *t, size_t i)
{
    rec_slot *sl = &((transcript *)t)->slots[i];
    if (sl->rec || t->src_fd < 0)
        return sl->rec;
    char *buf = xmalloc((size_t)sl->len + 1);
    ssize_t got = pread(t->src_fd, buf, sl->len, (off_t)sl->off);
    json_t *rec = NULL;
    const char *why = NULL;
    if (got != (ssize_t)sl->len)
        why = got < 0 ? strerror(errno) : "the file is shorter";
    else if (session_index_hash(buf, sl->len) != sl->hash)
        why = "its bytes changed since the index was written";
    else if (!(rec = json_parse_fast(buf, sl->len, 0, NULL)) || !json_is_object(rec) ||
             !same(record_id(rec), sl->id) || !same(record_type(rec), sl->type) ||
             !same(record_parent_id(rec), sl->parent) ||
             !same(record_logical_parent_id(rec), sl->lparent))
        why = "it is not the record the index names";
    free(buf);
    if (why) {
        ((transcript *)t)->misread = true;
        json_decref(rec);
        tr_warn((transcript *)t, "%s line %zu (record %s) could not be read back: %s; its "
                                 "content is left out",
                t->name, sl->line, sl->id, why);
        rec = placeholder(sl);
    }
    sl->rec = rec;
    return rec;
}

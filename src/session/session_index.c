/* session_index.c — the session index file format (session_index.h):
 * encoding one entry and parsing a whole file, with every length checked
 * against the bytes that are there (the file is on disk: anything may have
 * happened to it). */
#include "session/session_index.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"

#define ABSENT 0xFFFFFFFFu
/* off + len + hash + four string lengths: the least an entry body holds. */
#define FIXED_BODY (8 + 4 + 8)

uint64_t session_index_hash(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put_u32(loom_str *s, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        str_putc(s, (char)(v >> (8 * i) & 0xff));
}

static void put_u64(loom_str *s, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        str_putc(s, (char)(v >> (8 * i) & 0xff));
}

static void put_string(loom_str *s, const char *v)
{
    if (!v) {
        put_u32(s, ABSENT);
        return;
    }
    size_t n = strlen(v);
    put_u32(s, (uint32_t)n);
    str_append(s, v, n);
    str_putc(s, '\0');
}

void session_index_encode_header(loom_str *out, uint64_t dev, uint64_t ino)
{
    str_append(out, SESSION_INDEX_MAGIC, SESSION_INDEX_MAGIC_LEN);
    put_u64(out, dev);
    put_u64(out, ino);
}

void session_index_encode(loom_str *out, const session_index_entry *e)
{
    loom_str body = LOOM_STR_INIT;
    put_u64(&body, e->off);
    put_u32(&body, e->len);
    put_u64(&body, e->hash);
    put_string(&body, e->type);
    put_string(&body, e->id);
    put_string(&body, e->parent);
    put_string(&body, e->lparent);
    put_u32(out, (uint32_t)body.len);
    str_append(out, body.ptr, body.len);
    str_free(&body);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* One string of an entry body at *pos (< end); NULL in *out when absent.
 * -1 when it does not fit or is not what its length says. */
static int get_string(const char *buf, size_t *pos, size_t end, const char **out)
{
    if (end - *pos < 4)
        return -1;
    uint32_t n = get_u32((const unsigned char *)buf + *pos);
    *pos += 4;
    if (n == ABSENT) {
        *out = NULL;
        return 0;
    }
    if (n >= end - *pos || buf[*pos + n] != '\0' || memchr(buf + *pos, '\0', n))
        return -1;
    *out = buf + *pos;
    *pos += (size_t)n + 1;
    return 0;
}

int session_index_parse(const char *buf, size_t len, uint64_t *dev, uint64_t *ino,
                        session_index_entry **out, size_t *n, loom_error *err)
{
    *out = NULL;
    *n = 0;
    if (len < SESSION_INDEX_HEADER_LEN ||
        memcmp(buf, SESSION_INDEX_MAGIC, SESSION_INDEX_MAGIC_LEN) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT,
                              "no %s header (another version, or not an index)",
                              SESSION_INDEX_MAGIC);
    *dev = get_u64((const unsigned char *)buf + SESSION_INDEX_MAGIC_LEN);
    *ino = get_u64((const unsigned char *)buf + SESSION_INDEX_MAGIC_LEN + 8);
    session_index_entry *v = NULL;
    size_t cnt = 0, cap = 0, pos = SESSION_INDEX_HEADER_LEN;
    const char *why = NULL;
    while (pos < len) {
        size_t at = pos;
        if (len - pos < 4) {
            why = "a truncated entry length";
            break;
        }
        uint32_t body = get_u32((const unsigned char *)buf + pos);
        pos += 4;
        if (body < FIXED_BODY || body > len - pos) {
            why = body < FIXED_BODY ? "an entry too short to be one" : "a truncated entry";
            pos = at;
            break;
        }
        size_t end = pos + body;
        const unsigned char *u = (const unsigned char *)buf + pos;
        session_index_entry e = {.off = get_u64(u), .len = get_u32(u + 8), .hash = get_u64(u + 12)};
        pos += FIXED_BODY;
        if (get_string(buf, &pos, end, &e.type) || get_string(buf, &pos, end, &e.id) ||
            get_string(buf, &pos, end, &e.parent) || get_string(buf, &pos, end, &e.lparent) ||
            pos != end) {
            why = "an entry whose strings do not fit its length";
            pos = at;
            break;
        }
        if (!e.type || !e.id || !*e.id || !*e.type) {
            why = "an entry without a type or an id";
            pos = at;
            break;
        }
        if (cnt == cap) {
            cap = cap ? cap * 2 : 256;
            v = xrealloc(v, cap * sizeof *v);
        }
        v[cnt++] = e;
    }
    if (why) {
        free(v);
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "%s at byte %zu", why, pos);
    }
    *out = v;
    *n = cnt;
    return 0;
}

char *session_index_path(const char *session_path)
{
    size_t n = strlen(session_path);
    if (n > 6 && strcmp(session_path + n - 6, ".jsonl") == 0)
        n -= 6;
    loom_str s = LOOM_STR_INIT;
    str_append(&s, session_path, n);
    str_puts(&s, ".idx");
    return str_steal(&s);
}

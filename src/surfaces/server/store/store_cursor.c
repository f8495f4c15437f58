/* store_cursor.c — the listing cursor both stores hand out (store.h list):
 * "c1." and the base64url (no padding) of created_at, a NUL and the id of
 * the last row a page held. The next page is the rows after that
 * (created_at, id) pair — keyset paging, a seek on an index, so a listing
 * sees every row that existed when it started exactly once even while
 * rows are added. Clients must treat it as opaque; "c1." lets a later
 * format be told apart. One text per cursor: decoding refuses anything
 * encode could not have made (not canonical base64url, not exactly one
 * NUL, no id). No state; any thread. */
#include "surfaces/server/store/store_cursor.h"

#include <stdlib.h>
#include <string.h>

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64url_encode(const unsigned char *d, size_t n, const char *prefix)
{
    size_t pl = strlen(prefix);
    char *out = malloc(pl + (n + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    memcpy(out, prefix, pl);
    char *o = out + pl;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)d[i + 1] << 8;
        if (i + 2 < n)
            v |= d[i + 2];
        *o++ = b64url[(v >> 18) & 63];
        *o++ = b64url[(v >> 12) & 63];
        if (i + 1 < n)
            *o++ = b64url[(v >> 6) & 63];
        if (i + 2 < n)
            *o++ = b64url[v & 63];
    }
    *o = '\0';
    return out;
}

static int b64url_value(char c)
{
    const char *p = c ? strchr(b64url, c) : NULL;
    return p ? (int)(p - b64url) : -1;
}

/* Decodes into a malloc'd buffer of *n bytes (NUL-terminated past it), or
 * NULL when text is not canonical unpadded base64url. */
static unsigned char *b64url_decode(const char *text, size_t *n)
{
    size_t len = strlen(text);
    if (len % 4 == 1)
        return NULL;
    unsigned char *out = malloc(len / 4 * 3 + 3);
    if (!out)
        return NULL;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64url_value(text[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
        acc &= (1u << bits) - 1;
    }
    if (acc != 0) { /* leftover bits must be zero: one text per cursor */
        free(out);
        return NULL;
    }
    out[o] = '\0';
    *n = o;
    return out;
}

char *store_cursor_encode(const char *created_at, const char *id)
{
    size_t a = strlen(created_at), b = strlen(id);
    unsigned char *raw = malloc(a + b + 1);
    if (!raw)
        return NULL;
    memcpy(raw, created_at, a);
    raw[a] = '\0';
    memcpy(raw + a + 1, id, b);
    char *c = b64url_encode(raw, a + b + 1, "c1.");
    free(raw);
    return c;
}

int store_cursor_decode(const char *cursor, char **created_at, char **id)
{
    if (strncmp(cursor, "c1.", 3) != 0)
        return -1;
    size_t n = 0;
    unsigned char *raw = b64url_decode(cursor + 3, &n);
    if (!raw)
        return -1;
    size_t a = strnlen((char *)raw, n);
    /* exactly one NUL, a non-empty id after it */
    if (a >= n || a + 1 == n || strlen((char *)raw + a + 1) != n - a - 1) {
        free(raw);
        return -1;
    }
    *created_at = strdup((char *)raw);
    *id = strdup((char *)raw + a + 1);
    free(raw);
    if (!*created_at || !*id) {
        free(*created_at);
        free(*id);
        return -1;
    }
    return 0;
}

/* json.c — the jansson helpers every parser of outside input goes through:
 * positioned parse errors and getters that tolerate wrong types; jansson's
 * allocator set to base's abort-on-OOM one. */
#include "base/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/str.h"

/* One out-of-memory policy (base/str.h): jansson allocates through xmalloc
 * too, so a json_object() or json_dumps() never returns NULL for want of
 * memory — a NULL would be dropped silently by json_object_set_new and
 * lose a record. Set before main (the library's first jansson call), for
 * the whole process: jansson has one allocator. */
static void *json_xmalloc(size_t n)
{
    return xmalloc(n);
}

__attribute__((constructor)) static void json_use_xmalloc(void)
{
    json_set_alloc_funcs(json_xmalloc, free);
}

json_t *json_parse(const char *data, size_t len, const char *what, loom_error *err)
{
    json_error_t jerr;
    /* DECODE_ANY: SSE payloads and tool results may be bare scalars. The EOF
     * check stays on (no JSON_DISABLE_EOF_CHECK) so "{}{}" or "1 x" is an
     * error rather than silently half-read. Our own reader: jansson's
     * json_loadb accepts the same input at several times the cost. */
    json_t *v = json_parse_fast(data ? data : "", data ? len : 0, JSON_DECODE_ANY, &jerr);
    if (!v) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "invalid JSON in %s at line %d, column %d: %s",
                       what ? what : "input", jerr.line, jerr.column, jerr.text);
    }
    return v;
}

/* The member under key when obj is an object, else NULL. */
static json_t *member(const json_t *obj, const char *key)
{
    if (!obj || !key || !json_is_object(obj))
        return NULL;
    return json_object_get(obj, key);
}

const char *json_get_str(const json_t *obj, const char *key, const char *fallback)
{
    json_t *v = member(obj, key);
    return json_is_string(v) ? json_string_value(v) : fallback;
}

int64_t json_get_int(const json_t *obj, const char *key, int64_t fallback)
{
    /* Reals are refused rather than truncated: 1.5 tokens is a wrong type,
     * not a number to round. */
    json_t *v = member(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : fallback;
}

double json_get_num(const json_t *obj, const char *key, double fallback)
{
    json_t *v = member(obj, key);
    return json_is_number(v) ? json_number_value(v) : fallback;
}

bool json_get_bool(const json_t *obj, const char *key, bool fallback)
{
    json_t *v = member(obj, key);
    return json_is_boolean(v) ? json_is_true(v) : fallback;
}

json_t *json_get_obj(const json_t *obj, const char *key)
{
    json_t *v = member(obj, key);
    return json_is_object(v) ? v : NULL;
}

json_t *json_get_arr(const json_t *obj, const char *key)
{
    json_t *v = member(obj, key);
    return json_is_array(v) ? v : NULL;
}

/* A compact serializer of our own: jansson's json_dumps spends ~100
 * instructions per byte (a callback per escaped character), and Loom
 * serializes the whole request, every event and every record — profiling
 * showed it as the largest single cost of a turn. Strings are copied in runs
 * between the bytes that need escaping, found eight bytes at a time. Same
 * JSON as jansson's compact form: insertion order, UTF-8 kept, reals
 * round-tripping. */

/* True when none of the 8 bytes in w needs escaping: no byte below 0x20,
 * no '"', no '\\'. Each test is exact as a whole-word answer (the borrow
 * that can mark a byte wrongly only ever follows a byte truly marked).
 * Bytes >= 0x80 pass, as in the byte loop. */
static inline bool word_plain(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t ctl = (w - ones * 0x20) & ~w;
    uint64_t q = w ^ (ones * '"');
    q = (q - ones) & ~q;
    uint64_t bs = w ^ (ones * '\\');
    bs = (bs - ones) & ~bs;
    return ((ctl | q | bs) & high) == 0;
}

static void dump_string(loom_str *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    str_reserve(out, n + 2);
    str_putc(out, '"');
    size_t run = 0, i = 0;
    while (i < n) {
        if (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (word_plain(w)) {
                i += 8;
                continue;
            }
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        str_append(out, s + run, i - run);
        run = ++i;
        switch (c) {
        case '"': str_append(out, "\\\"", 2); break;
        case '\\': str_append(out, "\\\\", 2); break;
        case '\n': str_append(out, "\\n", 2); break;
        case '\r': str_append(out, "\\r", 2); break;
        case '\t': str_append(out, "\\t", 2); break;
        case '\b': str_append(out, "\\b", 2); break;
        case '\f': str_append(out, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            str_append(out, u, 6);
        }
        }
    }
    str_append(out, s + run, n - run);
    str_putc(out, '"');
}

void json_put_string(loom_str *out, const char *s, size_t n)
{
    dump_string(out, s, n);
}

int json_put_real(loom_str *out, double d)
{
    char buf[40];
    int n = snprintf(buf, sizeof buf, "%.17g", d);
    if (n < 0 || (size_t)n >= sizeof buf)
        return -1;
    /* jansson's form: "1e100", not "1e+100" (no '+', no leading zeros
     * in the exponent), so the bytes stay the same as before. */
    char *e = strchr(buf, 'e');
    if (e) {
        char *src = e + 1, *dst = e + 1;
        if (*src == '+')
            src++;
        else if (*src == '-')
            *dst++ = *src++;
        while (*src == '0' && src[1])
            src++;
        memmove(dst, src, strlen(src) + 1);
        n = (int)strlen(buf);
    }
    str_append(out, buf, (size_t)n);
    /* Keep it a real when read back, as jansson does. */
    if (!strpbrk(buf, ".eE"))
        str_puts(out, ".0");
    return 0;
}

static int dump_value(loom_str *out, const json_t *v, int depth)
{
    if (depth > 2048)
        return -1; /* jansson refuses deeper values too */
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        str_putc(out, '{');
        const char *key;
        json_t *member;
        bool first = true;
        json_object_foreach((json_t *)v, key, member) {
            if (!first)
                str_putc(out, ',');
            first = false;
            dump_string(out, key, strlen(key));
            str_putc(out, ':');
            if (dump_value(out, member, depth + 1) != 0)
                return -1;
        }
        str_putc(out, '}');
        return 0;
    }
    case JSON_ARRAY: {
        str_putc(out, '[');
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item) {
            if (i)
                str_putc(out, ',');
            if (dump_value(out, item, depth + 1) != 0)
                return -1;
        }
        str_putc(out, ']');
        return 0;
    }
    case JSON_STRING:
        dump_string(out, json_string_value(v), json_string_length(v));
        return 0;
    case JSON_INTEGER:
        str_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    case JSON_REAL:
        return json_put_real(out, json_real_value(v));
    case JSON_TRUE:
        str_puts(out, "true");
        return 0;
    case JSON_FALSE:
        str_puts(out, "false");
        return 0;
    case JSON_NULL:
        str_puts(out, "null");
        return 0;
    }
    return -1;
}

int json_dump_compact_into(loom_str *out, const json_t *v, int depth)
{
    if (!v)
        return -1;
    return dump_value(out, v, depth);
}

char *json_dump_compact(const json_t *v)
{
    if (!v)
        return NULL;
    loom_str out = LOOM_STR_INIT;
    if (dump_value(&out, v, 0) != 0) {
        str_free(&out);
        return NULL;
    }
    str_puts(&out, "");
    return str_steal(&out);
}

void json_set_str(json_t *obj, const char *key, const char *s)
{
    if (!s || !obj || !key)
        return;
    json_t *v = json_string(s);
    if (!v) {
        /* Text from tools and models is not always valid UTF-8. Dropping the
         * field would lose the record, so bad bytes become U+FFFD. */
        size_t len;
        char *clean = utf8_sanitize(s, strlen(s), &len);
        v = json_stringn(clean, len);
        free(clean);
    }
    if (v)
        json_object_set_new(obj, key, v);
}

/* json.c — the jansson helpers every parser of outside input goes through:
 * positioned parse errors and getters that tolerate wrong types. */
#include "base/json.h"

#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/str.h"

json_t *json_parse(const char *data, size_t len, const char *what, loom_error *err)
{
    json_error_t jerr;
    /* DECODE_ANY: SSE payloads and tool results may be bare scalars. The EOF
     * check stays on (no JSON_DISABLE_EOF_CHECK) so "{}{}" or "1 x" is an
     * error rather than silently half-read. */
    json_t *v = json_loadb(data ? data : "", data ? len : 0, JSON_DECODE_ANY, &jerr);
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

char *json_dump_compact(const json_t *v)
{
    if (!v)
        return NULL;
    /* jansson keeps insertion order since 2.8; ENCODE_ANY lets scalars
     * through the same path as objects. */
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
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

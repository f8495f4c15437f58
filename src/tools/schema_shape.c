/* schema_shape.c — the shape check run once when a tool is registered
 * (schema_parse, schema_check in schema.h): is this a schema the subset
 * can apply, each keyword of the right shape? A bad schema is named by
 * the path of the offending keyword. The schema may come from an MCP
 * server, so nesting is bounded by SCHEMA_MAX_DEPTH. Stateless and
 * reentrant.
 */
#include "tools/schema.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

typedef struct sctx {
    loom_error *err;
    loom_str path; /* where in the schema, e.g. properties.todos.items */
} sctx;

static int bad(sctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(sctx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return loom_error_set(c->err, LOOM_ERR_INVALID_REQUEST, "invalid input schema at %s: %s",
                          c->path.len ? c->path.ptr : "the root", msg);
}

static size_t spath_push(sctx *c, const char *seg)
{
    size_t mark = c->path.len;
    if (c->path.len)
        str_putc(&c->path, '.');
    size_t n = strlen(seg);
    str_append(&c->path, seg, n > SCHEMA_KEY_MAX ? SCHEMA_KEY_MAX : n);
    return mark;
}

static int shape(sctx *c, const json_t *s, int depth);

static int shape_at(sctx *c, const char *seg, const json_t *s, int depth)
{
    size_t mark = spath_push(c, seg);
    int rc = shape(c, s, depth + 1);
    if (rc == 0)
        str_truncate(&c->path, mark);
    return rc;
}

static int shape_list(sctx *c, const char *kw, const json_t *list, int depth)
{
    if (!json_is_array(list) || json_array_size(list) == 0)
        return bad(c, "\"%s\" must be a non-empty array of schemas", kw);
    size_t i;
    json_t *b;
    json_array_foreach(list, i, b) {
        char seg[80];
        snprintf(seg, sizeof seg, "%s[%zu]", kw, i);
        int rc = shape_at(c, seg, b, depth);
        if (rc)
            return rc;
    }
    return 0;
}

static int shape(sctx *c, const json_t *s, int depth)
{
    if (depth > SCHEMA_MAX_DEPTH)
        return bad(c, "nested more than %d levels deep", SCHEMA_MAX_DEPTH);
    if (json_is_boolean(s))
        return 0;
    if (!json_is_object(s))
        return bad(c, "a schema must be an object or a boolean");

    const json_t *t = json_object_get(s, "type");
    if (t) {
        if (json_is_string(t)) {
            if (!schema_type_known(json_string_value(t)))
                return bad(c, "unknown type \"%s\"", json_string_value(t));
        } else if (json_is_array(t) && json_array_size(t) > 0) {
            size_t i;
            json_t *e;
            json_array_foreach(t, i, e) {
                if (!json_is_string(e) || !schema_type_known(json_string_value(e)))
                    return bad(c, "\"type\" lists something that is not a known type name");
            }
        } else {
            return bad(c, "\"type\" must be a type name or a non-empty array of them");
        }
    }

    const json_t *props = json_object_get(s, "properties");
    if (props) {
        if (!json_is_object(props))
            return bad(c, "\"properties\" must be an object");
        const char *k;
        json_t *ps;
        json_object_foreach((json_t *)props, k, ps) {
            size_t mark = spath_push(c, "properties");
            int rc = shape_at(c, k, ps, depth);
            if (rc)
                return rc;
            str_truncate(&c->path, mark);
        }
    }
    const json_t *req = json_object_get(s, "required");
    if (req) {
        if (!json_is_array(req))
            return bad(c, "\"required\" must be an array of names");
        size_t i;
        json_t *e;
        json_array_foreach(req, i, e) {
            if (!json_is_string(e))
                return bad(c, "\"required\" must be an array of names");
        }
    }
    const json_t *addl = json_object_get(s, "additionalProperties");
    if (addl && !json_is_boolean(addl)) {
        int rc = shape_at(c, "additionalProperties", addl, depth);
        if (rc)
            return rc;
    }
    const json_t *items = json_object_get(s, "items");
    if (items) {
        /* An empty tuple array constrains nothing, which is legal. */
        int rc = !json_is_array(items)      ? shape_at(c, "items", items, depth)
                 : json_array_size(items) ? shape_list(c, "items", items, depth)
                                          : 0;
        if (rc)
            return rc;
    }
    const json_t *en = json_object_get(s, "enum");
    if (en && (!json_is_array(en) || json_array_size(en) == 0))
        return bad(c, "\"enum\" must be a non-empty array");

    static const char *const numeric[] = {"minimum", "maximum"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *k = json_object_get(s, numeric[i]);
        if (k && !json_is_number(k))
            return bad(c, "\"%s\" must be a number", numeric[i]);
    }
    static const char *const exclusive[] = {"exclusiveMinimum", "exclusiveMaximum"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *k = json_object_get(s, exclusive[i]);
        if (k && !json_is_number(k) && !json_is_boolean(k))
            return bad(c, "\"%s\" must be a number", exclusive[i]);
    }
    static const char *const counts[] = {"minLength", "maxLength", "minItems", "maxItems"};
    for (size_t i = 0; i < 4; i++) {
        const json_t *k = json_object_get(s, counts[i]);
        if (k && schema_count_kw(s, counts[i]) < 0)
            return bad(c, "\"%s\" must be a non-negative integer", counts[i]);
    }
    static const char *const combos[] = {"anyOf", "oneOf", "allOf"};
    for (size_t i = 0; i < 3; i++) {
        const json_t *k = json_object_get(s, combos[i]);
        if (k) {
            int rc = shape_list(c, combos[i], k, depth);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int schema_check(const json_t *schema, loom_error *err)
{
    loom_error scratch;
    sctx c = {.err = err ? err : &scratch, .path = LOOM_STR_INIT};
    int rc = shape(&c, schema, 0);
    str_free(&c.path);
    return rc;
}

json_t *schema_parse(const char *schema_text, loom_error *err)
{
    if (!schema_text) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "missing input schema");
        return NULL;
    }
    json_error_t jerr;
    json_t *s = json_parse_fast(schema_text, strlen(schema_text),
                                JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!s) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "input schema is not valid JSON (line %d, column %d): %s", jerr.line,
                       jerr.column, jerr.text);
        return NULL;
    }
    if (schema_check(s, err) != 0) {
        json_decref(s);
        return NULL;
    }
    return s;
}

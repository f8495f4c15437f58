/* schema.c — the JSON Schema subset tools use (see schema.h): the shape
 * check run once when a tool is registered, and the validation run on every
 * call.
 *
 * Validation walks schema and value together, keeping the JSON path of the
 * value in one shared buffer (pushed and popped around each member), so a
 * message can name exactly where the input went wrong. anyOf/oneOf try each
 * branch in a quiet mode that only counts problems and keeps the first one,
 * which the summary quotes as the closest miss. A work budget shared by all
 * branches bounds the whole walk, so a schema of nested anyOf cannot make a
 * call take exponential time. The shape check of a schema itself is
 * schema_shape.c. Stateless and reentrant.
 */
#include "tools/schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

/* Node visits one validation may make, over all anyOf/oneOf trials. Real
 * tool inputs need a few hundred; this only stops pathological schemas. */
#define WORK_BUDGET 250000L
/* Longest excerpt of a string value quoted back in a message. */
#define QUOTE_MAX 60
/* How many allowed names / enum values a message lists before "...". */
#define LIST_MAX 20

typedef struct vctx {
    loom_str *why;      /* where messages go (not quiet, may be NULL) */
    loom_str *path;     /* the JSON path of the value being checked */
    long *budget;       /* shared by every trial of one validation */
    bool *exhausted;    /* the budget ran out (reported once) */
    int errors;         /* problems found by this context */
    int written;        /* lines written to why */
    bool quiet;         /* a trial: count, and keep only the first message */
    char *first;        /* quiet: the first problem's message */
} vctx;

/* ---- message text ---- */

/* Appends s as a double-quoted string, escaped like JSON, cut after max
 * bytes on a UTF-8 boundary. */
static void put_quoted(loom_str *out, const char *s, size_t len, size_t max)
{
    str_putc(out, '"');
    size_t n = len;
    bool cut = false;
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        cut = true;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            str_putc(out, '\\');
            str_putc(out, (char)c);
        } else if (c == '\n') {
            str_puts(out, "\\n");
        } else if (c == '\t') {
            str_puts(out, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            str_printf(out, "\\u%04x", c);
        } else {
            str_putc(out, (char)c);
        }
    }
    if (cut)
        str_puts(out, "...");
    str_putc(out, '"');
}

static void put_number(loom_str *out, const json_t *v)
{
    if (json_is_integer(v))
        str_printf(out, "%lld", (long long)json_integer_value(v));
    else
        str_printf(out, "%.15g", json_number_value(v));
}

/* A value as a message shows it: strings quoted, scalars as written,
 * containers by kind only (they can be huge). */
static void put_value(loom_str *out, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        put_quoted(out, json_string_value(v), json_string_length(v), QUOTE_MAX);
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        put_number(out, v);
        break;
    case JSON_TRUE:
        str_puts(out, "true");
        break;
    case JSON_FALSE:
        str_puts(out, "false");
        break;
    case JSON_NULL:
        str_puts(out, "null");
        break;
    case JSON_OBJECT:
        str_puts(out, "an object");
        break;
    case JSON_ARRAY:
        str_puts(out, "an array");
        break;
    }
}

/* "got string \"10\"", "got number 5", "got null", "got an object". */
static void put_got(loom_str *out, const json_t *v)
{
    str_puts(out, "got ");
    switch (json_typeof(v)) {
    case JSON_STRING:
        str_puts(out, "string ");
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        str_puts(out, "number ");
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        str_puts(out, "boolean ");
        break;
    default:
        break;
    }
    put_value(out, v);
}

static bool is_ident(const char *k, size_t n)
{
    if (n == 0 || n > SCHEMA_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
                  (i > 0 && ((c >= '0' && c <= '9') || c == '-'));
        if (!ok)
            return false;
    }
    return true;
}

static size_t path_push_key(loom_str *path, const char *key)
{
    size_t mark = path->len;
    size_t n = strlen(key);
    if (is_ident(key, n)) {
        if (path->len)
            str_putc(path, '.');
        str_append(path, key, n);
    } else {
        /* Single quotes, because the whole path sits inside double quotes. */
        str_puts(path, "['");
        size_t keep = n > SCHEMA_KEY_MAX ? SCHEMA_KEY_MAX : n;
        while (keep > 0 && keep < n && ((unsigned char)key[keep] & 0xC0) == 0x80)
            keep--;
        for (size_t i = 0; i < keep; i++) {
            unsigned char c = (unsigned char)key[i];
            if (c == '\'' || c == '\\') {
                str_putc(path, '\\');
                str_putc(path, (char)c);
            } else if (c < 0x20 || c == 0x7f) {
                str_printf(path, "\\u%04x", c);
            } else {
                str_putc(path, (char)c);
            }
        }
        if (keep < n)
            str_puts(path, "...");
        str_puts(path, "']");
    }
    return mark;
}

static size_t path_push_index(loom_str *path, size_t i)
{
    size_t mark = path->len;
    str_printf(path, "[%zu]", i);
    return mark;
}

/* The subject a message starts with: "The input" at the root, else the
 * quoted path. */
static void put_subject(loom_str *out, const vctx *v)
{
    if (v->path->len == 0) {
        str_puts(out, "The input");
        return;
    }
    str_putc(out, '"');
    str_append(out, v->path->ptr, v->path->len);
    str_putc(out, '"');
}

/* Records one problem whose text is in msg (consumed). */
static void problem_take(vctx *v, loom_str *msg)
{
    v->errors++;
    if (v->quiet) {
        if (!v->first)
            v->first = str_steal(msg);
    } else if (v->why && v->errors <= SCHEMA_MAX_ERRORS) {
        if (v->written++ > 0)
            str_putc(v->why, '\n');
        str_append(v->why, str_cstr(msg), msg->len);
    }
    str_free(msg);
}

/* Counts a problem; only builds its text when the text will be used. */
static bool want_text(const vctx *v)
{
    if (v->quiet)
        return v->first == NULL;
    return v->why && v->errors < SCHEMA_MAX_ERRORS;
}

static void problem_skip(vctx *v)
{
    v->errors++;
}

/* ---- types ---- */

static const char *const type_names[] = {"string", "number", "integer", "boolean",
                                         "object", "array",  "null"};

bool schema_type_known(const char *t)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (strcmp(t, type_names[i]) == 0)
            return true;
    return false;
}

static bool is_integral(const json_t *v)
{
    if (json_is_integer(v))
        return true;
    if (!json_is_real(v))
        return false;
    double d = json_real_value(v);
    return isfinite(d) && floor(d) == d;
}

static bool type_matches(const char *t, const json_t *v)
{
    switch (t[0]) {
    case 's':
        return strcmp(t, "string") == 0 && json_is_string(v);
    case 'n':
        if (strcmp(t, "number") == 0)
            return json_is_number(v);
        return strcmp(t, "null") == 0 && json_is_null(v);
    case 'i':
        return strcmp(t, "integer") == 0 && is_integral(v);
    case 'b':
        return strcmp(t, "boolean") == 0 && json_is_boolean(v);
    case 'o':
        return strcmp(t, "object") == 0 && json_is_object(v);
    case 'a':
        return strcmp(t, "array") == 0 && json_is_array(v);
    default:
        return false;
    }
}

static void put_type_noun(loom_str *out, const char *t)
{
    if (strcmp(t, "null") == 0)
        str_puts(out, "null");
    else if (t[0] == 'a' || t[0] == 'i' || t[0] == 'o')
        str_printf(out, "an %s", t);
    else
        str_printf(out, "a %s", t);
}

/* Returns true when value has one of the schema's types (or no type is
 * given); otherwise reports it. */
static bool check_type(vctx *v, const json_t *type, const json_t *value)
{
    if (json_is_string(type)) {
        if (type_matches(json_string_value(type), value))
            return true;
    } else if (json_is_array(type) && json_array_size(type) > 0) {
        size_t i;
        json_t *t;
        json_array_foreach(type, i, t) {
            if (json_is_string(t) && type_matches(json_string_value(t), value))
                return true;
        }
    } else {
        return true;
    }
    if (!want_text(v)) {
        problem_skip(v);
        return false;
    }
    loom_str m = LOOM_STR_INIT;
    put_subject(&m, v);
    str_puts(&m, " must be ");
    if (json_is_string(type)) {
        put_type_noun(&m, json_string_value(type));
    } else {
        size_t n = json_array_size(type);
        for (size_t i = 0; i < n; i++) {
            const char *t = json_string_value(json_array_get(type, i));
            if (i > 0)
                str_puts(&m, i + 1 == n ? " or " : ", ");
            put_type_noun(&m, t ? t : "?");
        }
    }
    str_puts(&m, ", ");
    put_got(&m, value);
    problem_take(v, &m);
    return false;
}

/* JSON equality with 1 == 1.0, as JSON Schema defines it for enum/const. */
static bool values_equal(const json_t *a, const json_t *b, int depth)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b) || depth > SCHEMA_MAX_DEPTH)
        return false;
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!values_equal(json_array_get(a, i), json_array_get(b, i), depth + 1))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *av;
        json_object_foreach((json_t *)a, k, av) {
            json_t *bv = json_object_get(b, k);
            if (!bv || !values_equal(av, bv, depth + 1))
                return false;
        }
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

/* ---- numbers, strings, arrays ---- */

static int cmp_number(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return x < y ? -1 : x > y;
    }
    double x = json_number_value(a), y = json_number_value(b);
    return x < y ? -1 : x > y;
}

static void bound_problem(vctx *v, const char *op, const json_t *bound, const json_t *value)
{
    if (!want_text(v)) {
        problem_skip(v);
        return;
    }
    loom_str m = LOOM_STR_INIT;
    put_subject(&m, v);
    str_printf(&m, " must be %s ", op);
    put_number(&m, bound);
    str_puts(&m, ", got ");
    put_number(&m, value);
    problem_take(v, &m);
}

static void check_number(vctx *v, const json_t *s, const json_t *value)
{
    const json_t *min = json_object_get(s, "minimum");
    const json_t *max = json_object_get(s, "maximum");
    const json_t *xmin = json_object_get(s, "exclusiveMinimum");
    const json_t *xmax = json_object_get(s, "exclusiveMaximum");
    /* Draft 4 wrote exclusiveMinimum as a flag on minimum; later drafts as
     * a bound of its own. Both are in the wild. */
    bool min_excl = json_is_true(xmin), max_excl = json_is_true(xmax);
    if (json_is_number(min)) {
        int c = cmp_number(value, min);
        if (c < 0 || (min_excl && c == 0))
            bound_problem(v, min_excl ? ">" : ">=", min, value);
    }
    if (json_is_number(max)) {
        int c = cmp_number(value, max);
        if (c > 0 || (max_excl && c == 0))
            bound_problem(v, max_excl ? "<" : "<=", max, value);
    }
    if (json_is_number(xmin) && cmp_number(value, xmin) <= 0)
        bound_problem(v, ">", xmin, value);
    if (json_is_number(xmax) && cmp_number(value, xmax) >= 0)
        bound_problem(v, "<", xmax, value);
}

/* A count keyword's value, or -1 when absent or malformed. */
long long schema_count_kw(const json_t *s, const char *kw)
{
    const json_t *k = json_object_get(s, kw);
    if (json_is_integer(k))
        return json_integer_value(k) < 0 ? -1 : json_integer_value(k);
    if (is_integral(k) && json_real_value(k) >= 0 && json_real_value(k) < 9e18)
        return (long long)json_real_value(k);
    return -1;
}

static size_t utf8_chars(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static const char *plural(long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void check_string(vctx *v, const json_t *s, const json_t *value)
{
    long long min = schema_count_kw(s, "minLength"), max = schema_count_kw(s, "maxLength");
    if (min < 0 && max < 0)
        return;
    size_t n = utf8_chars(json_string_value(value), json_string_length(value));
    bool short_ = min >= 0 && (long long)n < min, long_ = max >= 0 && (long long)n > max;
    if (!short_ && !long_)
        return;
    if (!want_text(v)) {
        problem_skip(v);
        return;
    }
    loom_str m = LOOM_STR_INIT;
    put_subject(&m, v);
    if (short_ && n == 0)
        str_puts(&m, " must not be empty");
    else if (short_)
        str_printf(&m, " must be at least %lld %s long, got %zu", min,
                   plural(min, "character", "characters"), n);
    else
        str_printf(&m, " must be at most %lld %s long, got %zu", max,
                   plural(max, "character", "characters"), n);
    problem_take(v, &m);
}

static void check(vctx *v, const json_t *s, const json_t *value, int depth);

static void check_array(vctx *v, const json_t *s, const json_t *value, int depth)
{
    size_t n = json_array_size(value);
    long long min = schema_count_kw(s, "minItems"), max = schema_count_kw(s, "maxItems");
    if ((min >= 0 && (long long)n < min) || (max >= 0 && (long long)n > max)) {
        if (want_text(v)) {
            loom_str m = LOOM_STR_INIT;
            put_subject(&m, v);
            if (min >= 0 && (long long)n < min)
                str_printf(&m, " must have at least %lld %s, got %zu", min,
                           plural(min, "item", "items"), n);
            else
                str_printf(&m, " must have at most %lld %s, got %zu", max,
                           plural(max, "item", "items"), n);
            problem_take(v, &m);
        } else {
            problem_skip(v);
        }
    }
    const json_t *items = json_object_get(s, "items");
    if (!items)
        return;
    for (size_t i = 0; i < n && !*v->exhausted; i++) {
        /* The array form (draft 4 tuples) gives one schema per position;
         * positions past its end are unconstrained here. */
        const json_t *is = json_is_array(items) ? json_array_get(items, i) : items;
        if (!is)
            break;
        size_t mark = path_push_index(v->path, i);
        check(v, is, json_array_get(value, i), depth + 1);
        str_truncate(v->path, mark);
    }
}

/* "a, b, c" from the schema's property names, for "allowed: ..." hints. */
static void put_allowed(loom_str *m, const json_t *props)
{
    const char *k;
    json_t *unused;
    int n = 0;
    json_object_foreach((json_t *)props, k, unused) {
        if (n == LIST_MAX) {
            str_puts(m, ", ...");
            break;
        }
        if (n++ > 0)
            str_puts(m, ", ");
        str_puts(m, k);
    }
}

static void check_object(vctx *v, const json_t *s, const json_t *value, int depth)
{
    const json_t *req = json_object_get(s, "required");
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    if (!json_is_object(props))
        props = NULL;

    if (json_is_array(req)) {
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r) {
            const char *name = json_string_value(r);
            if (!name || json_object_get(value, name))
                continue;
            if (!want_text(v)) {
                problem_skip(v);
                continue;
            }
            size_t mark = path_push_key(v->path, name);
            loom_str m = LOOM_STR_INIT;
            str_puts(&m, "The required parameter \"");
            str_append(&m, v->path->ptr, v->path->len);
            str_puts(&m, "\" is missing");
            str_truncate(v->path, mark);
            problem_take(v, &m);
        }
    }

    /* Members in the order the model wrote them, so messages follow the
     * call as the model sees it. */
    const char *key;
    json_t *member;
    json_object_foreach((json_t *)value, key, member) {
        if (*v->exhausted)
            return;
        const json_t *ps = props ? json_object_get(props, key) : NULL;
        size_t mark = path_push_key(v->path, key);
        if (ps) {
            check(v, ps, member, depth + 1);
        } else if (json_is_false(addl)) {
            if (want_text(v)) {
                loom_str m = LOOM_STR_INIT;
                str_puts(&m, "unexpected parameter \"");
                str_append(&m, v->path->ptr, v->path->len);
                str_puts(&m, "\" (");
                if (props && json_object_size(props) > 0) {
                    str_puts(&m, "allowed: ");
                    put_allowed(&m, props);
                } else {
                    str_puts(&m, "no parameters are allowed here");
                }
                str_putc(&m, ')');
                problem_take(v, &m);
            } else {
                problem_skip(v);
            }
        } else if (json_is_object(addl)) {
            check(v, addl, member, depth + 1);
        }
        str_truncate(v->path, mark);
    }
}

/* ---- combinators ---- */

/* Runs one quiet trial of branch b; returns its problem count and hands
 * over its first message (caller frees). */
static int trial(vctx *v, const json_t *b, const json_t *value, int depth, char **first)
{
    vctx t = {
        .path = v->path,
        .budget = v->budget,
        .exhausted = v->exhausted,
        .quiet = true,
    };
    size_t mark = v->path->len;
    check(&t, b, value, depth + 1);
    str_truncate(v->path, mark);
    *first = t.first;
    return t.errors;
}

static bool branch_type_ok(const json_t *b, const json_t *value)
{
    const json_t *type = json_object_get(b, "type");
    if (json_is_string(type))
        return type_matches(json_string_value(type), value);
    if (json_is_array(type)) {
        size_t i;
        json_t *t;
        json_array_foreach(type, i, t) {
            if (json_is_string(t) && type_matches(json_string_value(t), value))
                return true;
        }
        return false;
    }
    return true;
}

static void check_any_one(vctx *v, const json_t *branches, bool one, const json_t *value,
                          int depth)
{
    size_t n = json_array_size(branches);
    if (n == 0)
        return;
    int matches = 0, best_errors = 0;
    size_t match_a = 0, match_b = 0;
    char *best = NULL;
    for (size_t i = 0; i < n && !*v->exhausted; i++) {
        char *first = NULL;
        int e = trial(v, json_array_get(branches, i), value, depth, &first);
        if (e == 0) {
            if (matches == 0)
                match_a = i;
            else if (matches == 1)
                match_b = i;
            matches++;
            free(first);
            if (!one)
                break;
            continue;
        }
        /* A branch of the value's own type is the closer miss, whatever
         * the counts: "must be >= 0" helps more than "must be a string". */
        if (!branch_type_ok(json_array_get(branches, i), value))
            e += 1000;
        if (!best || e < best_errors) {
            free(best);
            best = first;
            best_errors = e;
        } else {
            free(first);
        }
    }
    if (*v->exhausted) {
        free(best);
        return;
    }
    if (matches == 0) {
        if (want_text(v)) {
            loom_str m = LOOM_STR_INIT;
            put_subject(&m, v);
            str_puts(&m, " matches none of the allowed forms");
            if (best)
                str_printf(&m, " (closest: %s)", best);
            problem_take(v, &m);
        } else {
            problem_skip(v);
        }
    } else if (one && matches > 1) {
        if (want_text(v)) {
            loom_str m = LOOM_STR_INIT;
            put_subject(&m, v);
            str_printf(&m,
                       " matches more than one of the allowed forms (%zu and %zu); it must "
                       "match exactly one",
                       match_a + 1, match_b + 1);
            problem_take(v, &m);
        } else {
            problem_skip(v);
        }
    }
    free(best);
}

/* ---- the walk ---- */

static void check(vctx *v, const json_t *s, const json_t *value, int depth)
{
    if (*v->exhausted)
        return;
    if (--*v->budget < 0) {
        /* Reported once, by schema_validate: a trial that hits this would
         * otherwise swallow it and let the input through. */
        *v->exhausted = true;
        return;
    }
    if (depth > SCHEMA_MAX_DEPTH) {
        if (want_text(v)) {
            loom_str m = LOOM_STR_INIT;
            put_subject(&m, v);
            str_printf(&m, " is nested too deeply (more than %d levels)", SCHEMA_MAX_DEPTH);
            problem_take(v, &m);
        } else {
            problem_skip(v);
        }
        return;
    }
    if (json_is_false(s)) {
        if (want_text(v)) {
            loom_str m = LOOM_STR_INIT;
            put_subject(&m, v);
            str_puts(&m, " is not allowed");
            problem_take(v, &m);
        } else {
            problem_skip(v);
        }
        return;
    }
    if (!json_is_object(s))
        return; /* true accepts anything; a malformed schema was refused at registration */

    /* A value of the wrong type makes every other keyword's complaint
     * noise, so the type problem is reported alone. */
    if (!check_type(v, json_object_get(s, "type"), value))
        return;

    const json_t *en = json_object_get(s, "enum");
    if (json_is_array(en)) {
        bool found = false;
        size_t i;
        json_t *e;
        json_array_foreach(en, i, e) {
            if (values_equal(e, value, 0)) {
                found = true;
                break;
            }
        }
        if (!found) {
            if (want_text(v)) {
                loom_str m = LOOM_STR_INIT;
                put_subject(&m, v);
                str_puts(&m, " must be one of: ");
                json_array_foreach(en, i, e) {
                    if (i == LIST_MAX) {
                        str_puts(&m, ", ...");
                        break;
                    }
                    if (i > 0)
                        str_puts(&m, ", ");
                    put_value(&m, e);
                }
                str_puts(&m, " (");
                put_got(&m, value);
                str_putc(&m, ')');
                problem_take(v, &m);
            } else {
                problem_skip(v);
            }
        }
    }
    const json_t *cn = json_object_get(s, "const");
    if (cn && !values_equal(cn, value, 0)) {
        if (want_text(v)) {
            loom_str m = LOOM_STR_INIT;
            put_subject(&m, v);
            str_puts(&m, " must be ");
            put_value(&m, cn);
            str_puts(&m, " (");
            put_got(&m, value);
            str_putc(&m, ')');
            problem_take(v, &m);
        } else {
            problem_skip(v);
        }
    }

    if (json_is_number(value))
        check_number(v, s, value);
    else if (json_is_string(value))
        check_string(v, s, value);
    else if (json_is_array(value))
        check_array(v, s, value, depth);
    else if (json_is_object(value))
        check_object(v, s, value, depth);

    const json_t *all = json_object_get(s, "allOf");
    if (json_is_array(all)) {
        size_t i;
        json_t *b;
        json_array_foreach(all, i, b) {
            size_t mark = v->path->len;
            check(v, b, value, depth + 1);
            str_truncate(v->path, mark);
        }
    }
    const json_t *any = json_object_get(s, "anyOf");
    if (json_is_array(any))
        check_any_one(v, any, false, value, depth);
    const json_t *one = json_object_get(s, "oneOf");
    if (json_is_array(one))
        check_any_one(v, one, true, value, depth);
}

int schema_validate(const json_t *schema, const json_t *value, loom_str *why)
{
    if (!value) {
        if (why)
            str_puts(why, "The input is missing");
        return -1;
    }
    loom_str path = LOOM_STR_INIT;
    long budget = WORK_BUDGET;
    bool exhausted = false;
    vctx v = {
        .why = why,
        .path = &path,
        .budget = &budget,
        .exhausted = &exhausted,
    };
    check(&v, schema, value, 0);
    str_free(&path);
    if (exhausted) {
        v.quiet = false;
        loom_str m = LOOM_STR_INIT;
        str_puts(&m, "The input is too complex to check against this tool's schema");
        problem_take(&v, &m);
    }
    if (v.errors == 0)
        return 0;
    if (why && v.errors > SCHEMA_MAX_ERRORS)
        str_printf(why, "\n(and %d more %s)", v.errors - SCHEMA_MAX_ERRORS,
                   plural(v.errors - SCHEMA_MAX_ERRORS, "problem", "problems"));
    return -1;
}

/* frontmatter.c — the YAML frontmatter block of a Markdown file, into JSON
 * (frontmatter.h says the rules).
 *
 * Two steps: find the block by its "---" lines (plain line scanning, so a
 * file without one costs nothing), then read the YAML between them with
 * libyaml's event parser and build the JSON value recursively. libyaml
 * keeps its own stacks on the heap; our recursion is bounded by
 * FRONTMATTER_MAX_DEPTH, so hostile nesting cannot overflow the C stack.
 * Line numbers in messages count from the file's first line (the opening
 * "---" is line 1), because that is what a user opens in an editor.
 *
 * frontmatter_body_trim and frontmatter_list, at the end, serve the agent,
 * command, skill and style readers.
 *
 * No state; any thread (each call has its own parser). */
#include "base/frontmatter.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/str.h"

/* ---- the block ------------------------------------------------------------- */

static const char *line_end(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl : p + strlen(p);
}

/* Is the line [p, eol) "---" followed only by blanks (and a CR)? */
static bool is_fence(const char *p, const char *eol)
{
    if (eol - p < 3 || strncmp(p, "---", 3) != 0)
        return false;
    for (p += 3; p < eol; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r')
            return false;
    return true;
}

typedef struct fm_block {
    const char *yaml;       /* the YAML text between the fences */
    size_t yaml_len;
    const char *body;       /* after the closing line */
} fm_block;

/* 0 with blk filled; FRONTMATTER_ERR_NONE or LOOM_ERR_CONFIG otherwise. */
static int find_block(const char *text, fm_block *blk, loom_error *err)
{
    const char *p = text;
    if (strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    const char *eol = line_end(p);
    if (!is_fence(p, eol))
        return loom_error_set(err, FRONTMATTER_ERR_NONE, "no frontmatter (the text does not open with ---)");
    if (!*eol)
        return loom_error_set(err, LOOM_ERR_CONFIG, "line 1: the frontmatter opened here is never closed by a --- line");
    blk->yaml = eol + 1;
    for (p = eol + 1; *p; p = eol + 1) {
        eol = line_end(p);
        if (is_fence(p, eol)) {
            blk->yaml_len = (size_t)(p - blk->yaml);
            blk->body = *eol ? eol + 1 : eol;
            return 0;
        }
        if (!*eol)
            break;
    }
    return loom_error_set(err, LOOM_ERR_CONFIG, "line 1: the frontmatter opened here is never closed by a --- line");
}

/* ---- the YAML -------------------------------------------------------------- */

typedef struct fm_parser {
    yaml_parser_t yp;
    const char *yaml;
    size_t yaml_len;
    loom_error *err;
    int first_line; /* the file's line of the YAML's first line */
} fm_parser;

/* The file's line of a mark (0-based, inside the YAML text). */
static int file_line(const fm_parser *fp, size_t mark_line)
{
    return (int)mark_line + fp->first_line;
}

static int parse_failed(fm_parser *fp)
{
    const yaml_parser_t *y = &fp->yp;
    size_t line = y->problem_mark.line;
    if (y->error == YAML_READER_ERROR) {
        /* Reader errors (bad UTF-8, control characters) carry an offset,
         * not a mark. */
        line = 0;
        for (size_t i = 0; i < y->problem_offset && i < fp->yaml_len; i++)
            line += fp->yaml[i] == '\n';
    }
    const char *problem = y->problem ? y->problem : "unreadable YAML";
    if (y->context)
        return loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: %s (%s, line %d)", file_line(fp, line), problem,
                              y->context, file_line(fp, y->context_mark.line));
    return loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: %s", file_line(fp, line), problem);
}

static int next_event(fm_parser *fp, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&fp->yp, ev))
        return parse_failed(fp);
    return 0;
}

static int event_line(const fm_parser *fp, const yaml_event_t *ev)
{
    return file_line(fp, ev->start_mark.line);
}

/* [-+]?[0-9]+ without a leading zero (YAML 1.1 would read 017 as octal;
 * "plainly" an integer means no such doubt), within int64. */
static bool plain_int(const char *s, json_int_t *out)
{
    const char *d = (*s == '-' || *s == '+') ? s + 1 : s;
    if (!*d || (d[0] == '0' && d[1]))
        return false;
    for (const char *q = d; *q; q++)
        if (*q < '0' || *q > '9')
            return false;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return false;
    *out = (json_int_t)v;
    return true;
}

static bool one_of(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(s, *names) == 0)
            return true;
    return false;
}

static json_t *scalar_value(fm_parser *fp, const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (memchr(v, '\0', n)) {
        loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: a value holds a NUL character", event_line(fp, ev));
        return NULL;
    }
    const char *tag = (const char *)ev->data.scalar.tag;
    bool as_text = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
                   (tag && strcmp(tag, YAML_STR_TAG) == 0);
    if (!as_text) {
        static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
        static const char *const trues[] = {"true", "True", "TRUE", NULL};
        static const char *const falses[] = {"false", "False", "FALSE", NULL};
        json_int_t i;
        if (one_of(v, nulls))
            return json_null();
        if (one_of(v, trues))
            return json_true();
        if (one_of(v, falses))
            return json_false();
        if (plain_int(v, &i))
            return json_integer(i);
    }
    json_t *s = json_stringn(v, n);
    if (!s) /* libyaml hands out UTF-8 only; belt and braces */
        loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: a value is not UTF-8", event_line(fp, ev));
    return s;
}

static json_t *build_node(fm_parser *fp, const yaml_event_t *ev, int depth);

static json_t *build_sequence(fm_parser *fp, int depth)
{
    json_t *arr = json_array();
    for (;;) {
        yaml_event_t ev;
        if (next_event(fp, &ev) != 0)
            break;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return arr;
        }
        json_t *v = build_node(fp, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!v)
            break;
        json_array_append_new(arr, v);
    }
    json_decref(arr);
    return NULL;
}

static json_t *build_mapping(fm_parser *fp, int depth)
{
    json_t *obj = json_object();
    for (;;) {
        yaml_event_t kev;
        if (next_event(fp, &kev) != 0)
            break;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            return obj;
        }
        if (kev.type != YAML_SCALAR_EVENT) {
            loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: a key must be plain text, not a %s",
                           event_line(fp, &kev), kev.type == YAML_ALIAS_EVENT ? "alias" : "list or mapping");
            yaml_event_delete(&kev);
            break;
        }
        const char *k = (const char *)kev.data.scalar.value;
        if (memchr(k, '\0', kev.data.scalar.length)) {
            loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: a key holds a NUL character", event_line(fp, &kev));
            yaml_event_delete(&kev);
            break;
        }
        char *key = xstrndup(k, kev.data.scalar.length);
        yaml_event_delete(&kev);
        yaml_event_t vev;
        if (next_event(fp, &vev) != 0) {
            free(key);
            break;
        }
        json_t *v = build_node(fp, &vev, depth + 1);
        yaml_event_delete(&vev);
        if (!v) {
            free(key);
            break;
        }
        int rc = json_object_set_new(obj, key, v);
        free(key);
        if (rc != 0) {
            loom_error_set(fp->err, LOOM_ERR_CONFIG, "a key is not UTF-8");
            break;
        }
    }
    json_decref(obj);
    return NULL;
}

/* The value that starts with ev (which the caller frees). */
static json_t *build_node(fm_parser *fp, const yaml_event_t *ev, int depth)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return scalar_value(fp, ev);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (depth > FRONTMATTER_MAX_DEPTH) {
            loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: nested deeper than %d levels", event_line(fp, ev),
                           FRONTMATTER_MAX_DEPTH);
            return NULL;
        }
        return ev->type == YAML_SEQUENCE_START_EVENT ? build_sequence(fp, depth) : build_mapping(fp, depth);
    case YAML_ALIAS_EVENT:
        loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: aliases (*%s) are not supported", event_line(fp, ev),
                       (const char *)ev->data.alias.anchor);
        return NULL;
    default:
        loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: unexpected YAML structure", event_line(fp, ev));
        return NULL;
    }
}

/* Expects an event of type want next; fails naming what came instead. */
static int expect(fm_parser *fp, yaml_event_type_t want, const char *what)
{
    yaml_event_t ev;
    if (next_event(fp, &ev) != 0)
        return -1;
    int line = event_line(fp, &ev);
    bool ok = ev.type == want;
    yaml_event_delete(&ev);
    if (!ok)
        return loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: %s", line, what);
    return 0;
}

/* The stream holds no document (empty, or comments only) → {}; one
 * document whose root is a mapping → that object; anything else fails. */
static json_t *parse_stream(fm_parser *fp)
{
    yaml_event_t ev;
    if (expect(fp, YAML_STREAM_START_EVENT, "unexpected YAML structure") != 0 || next_event(fp, &ev) != 0)
        return NULL;
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        return json_object();
    }
    bool is_doc = ev.type == YAML_DOCUMENT_START_EVENT;
    yaml_event_delete(&ev);
    if (!is_doc || next_event(fp, &ev) != 0) {
        if (!is_doc)
            loom_error_set(fp->err, LOOM_ERR_CONFIG, "unexpected YAML structure");
        return NULL;
    }
    json_t *root = NULL;
    if (ev.type == YAML_MAPPING_START_EVENT) {
        root = build_node(fp, &ev, 1);
    } else if (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.length == 0 &&
               ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        root = json_object(); /* an explicitly empty document */
    } else {
        loom_error_set(fp->err, LOOM_ERR_CONFIG, "line %d: the frontmatter must be a mapping of keys (key: value)",
                       event_line(fp, &ev));
    }
    yaml_event_delete(&ev);
    if (root && (expect(fp, YAML_DOCUMENT_END_EVENT, "unexpected YAML structure") != 0 ||
                 expect(fp, YAML_STREAM_END_EVENT, "only one YAML document may stand between the --- lines") != 0)) {
        json_decref(root);
        return NULL;
    }
    return root;
}

json_t *frontmatter_parse(const char *text, const char **body, loom_error *err)
{
    if (body)
        *body = text;
    if (!text) {
        loom_error_set(err, FRONTMATTER_ERR_NONE, "no frontmatter (no text)");
        return NULL;
    }
    if (strnlen(text, FRONTMATTER_MAX_BYTES + 1) > FRONTMATTER_MAX_BYTES) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "longer than %d KiB", FRONTMATTER_MAX_BYTES / 1024);
        return NULL;
    }
    fm_block blk = {0};
    if (find_block(text, &blk, err) != 0)
        return NULL;
    fm_parser fp = {.yaml = blk.yaml, .yaml_len = blk.yaml_len, .err = err, .first_line = 2};
    if (!yaml_parser_initialize(&fp.yp)) {
        loom_error_set(err, LOOM_ERR_INTERNAL, "frontmatter: the YAML parser could not start");
        return NULL;
    }
    yaml_parser_set_input_string(&fp.yp, (const unsigned char *)blk.yaml, blk.yaml_len);
    yaml_parser_set_encoding(&fp.yp, YAML_UTF8_ENCODING);
    json_t *root = parse_stream(&fp);
    yaml_parser_delete(&fp.yp);
    if (root && body)
        *body = blk.body;
    return root;
}

json_t *yaml_mapping_parse(const char *text, size_t len, loom_error *err)
{
    if (!text)
        text = "", len = 0;
    if (len > FRONTMATTER_MAX_BYTES) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "longer than %d KiB", FRONTMATTER_MAX_BYTES / 1024);
        return NULL;
    }
    if (memchr(text, '\0', len)) {
        loom_error_set(err, LOOM_ERR_CONFIG, "the text holds a NUL character");
        return NULL;
    }
    fm_parser fp = {.yaml = text, .yaml_len = len, .err = err, .first_line = 1};
    if (!yaml_parser_initialize(&fp.yp)) {
        loom_error_set(err, LOOM_ERR_INTERNAL, "yaml: the YAML parser could not start");
        return NULL;
    }
    yaml_parser_set_input_string(&fp.yp, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&fp.yp, YAML_UTF8_ENCODING);
    json_t *root = parse_stream(&fp);
    yaml_parser_delete(&fp.yp);
    return root;
}

/* ---- the body and list values ---------------------------------------------- */

char *frontmatter_body_trim(const char *body)
{
    const char *a = body, *p = body;
    for (;;) { /* skip whole blank lines only: indentation of the first line stays */
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p != '\n')
            break;
        a = ++p;
    }
    const char *b = a + strlen(a);
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    return xstrndup(a, (size_t)(b - a));
}

static void list_push(char ***v, size_t *n, const char *a, const char *b)
{
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    if (b == a)
        return;
    *v = xrealloc(*v, (*n + 2) * sizeof(char *));
    (*v)[(*n)++] = xstrndup(a, (size_t)(b - a));
    (*v)[*n] = NULL;
}

static void split_list(const char *s, unsigned flags, char ***v, size_t *n)
{
    const char *start = s;
    int depth = 0;
    for (const char *p = s;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        bool sep = !*p || (depth == 0 && (*p == ',' || ((flags & FRONTMATTER_LIST_BLANKS) &&
                                                         isspace((unsigned char)*p))));
        if (!sep)
            continue;
        list_push(v, n, start, p);
        if (!*p)
            break;
        start = p + 1;
    }
}

char **frontmatter_list(const json_t *v, unsigned flags, loom_str *why)
{
    char **out = NULL;
    size_t n = 0;
    if (json_is_string(v)) {
        split_list(json_string_value(v), flags, &out, &n);
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item) {
            if (!json_is_string(item)) {
                if (why)
                    str_printf(why, "item %zu is not text", i + 1);
                strv_free(out);
                return NULL;
            }
            split_list(json_string_value(item), flags, &out, &n);
        }
    } else {
        return NULL;
    }
    return out ? out : xcalloc(1, sizeof(char *));
}

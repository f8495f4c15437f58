/* yaml_reader.c — one YAML document (libyaml's event parser) into jansson
 * values, keeping the line of every key and sequence item in the doc's side
 * table (config_internal.h says why a side table).
 *
 * What it refuses, because a config file is written by a person and read by
 * a server: aliases (an alias is how a "billion laughs" file expands; the
 * first one fails, before anything grows), a second document, nesting past
 * CFG_MAX_DEPTH, a text over CFG_MAX_BYTES, a key that is not a scalar, a
 * key given twice, and tags other than !!str. Plain scalars resolve the
 * YAML 1.2 core way (null, true/false, integers, floats); quoted ones are
 * always text.
 *
 * Owns the cfg_doc it fills. One thread per doc. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "base/str.h"
#include "surfaces/server/config/config_internal.h"

typedef struct reader {
    yaml_parser_t yp;
    cfg_doc *doc;
    srv_error *err;
} reader;

static int fail_at(reader *r, int line, const char *what)
{
    return srv_fail(r->err, LOOM_ERR_CONFIG, "%s:%d: %s", r->doc->file, line, what);
}

static int next_event(reader *r, yaml_event_t *ev)
{
    if (yaml_parser_parse(&r->yp, ev))
        return 0;
    const char *problem = r->yp.problem ? r->yp.problem : "not valid YAML";
    return fail_at(r, (int)r->yp.problem_mark.line + 1, problem);
}

static int event_line(const yaml_event_t *ev)
{
    return (int)ev->start_mark.line + 1;
}

static void add_line(cfg_doc *d, const json_t *parent, const char *key, size_t index, int line)
{
    if (d->n_lines == d->cap_lines) {
        d->cap_lines = d->cap_lines ? d->cap_lines * 2 : 64;
        d->lines = xrealloc(d->lines, d->cap_lines * sizeof *d->lines);
    }
    d->lines[d->n_lines++] = (cfg_line){parent, xstrdup(key), index, line};
}

static bool all_digits(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static bool looks_real(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    bool digits = false, dot = false;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s >= '0' && *s <= '9')
            digits = true;
        else if (*s == '.' && !dot)
            dot = true;
        else
            return false;
    }
    if (!digits || !dot)
        return false;
    if (!*s)
        return true;
    s++;
    if (*s == '-' || *s == '+')
        s++;
    return all_digits(s);
}

static bool is_word(const char *s, const char *lower)
{
    /* YAML 1.2 core: "true", "True", "TRUE" — not "tRuE". */
    size_t n = strlen(lower);
    if (strlen(s) != n)
        return false;
    if (strcmp(s, lower) == 0)
        return true;
    if ((s[0] | 0x20) != lower[0])
        return false;
    bool all_upper = true, rest_lower = true;
    for (size_t i = 1; i < n; i++) {
        if (s[i] != lower[i])
            rest_lower = false;
        if (s[i] != (char)(lower[i] - 32))
            all_upper = false;
    }
    return s[0] == (char)(lower[0] - 32) && (rest_lower || all_upper);
}

static json_t *scalar_value(reader *r, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (tag && strcmp(tag, "tag:yaml.org,2002:str") != 0 && strcmp(tag, "!") != 0) {
        char what[200];
        snprintf(what, sizeof what, "the tag %.120s is not supported (quote the value)", tag);
        fail_at(r, event_line(ev), what);
        return NULL;
    }
    if (memchr(s, 0, n)) {
        fail_at(r, event_line(ev), "a value holds a NUL character");
        return NULL;
    }
    if (tag || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        json_t *t = json_stringn(s, n);
        if (!t)
            fail_at(r, event_line(ev), "a value is not valid UTF-8");
        return t;
    }
    if (n == 0 || strcmp(s, "~") == 0 || is_word(s, "null"))
        return json_null();
    if (is_word(s, "true"))
        return json_true();
    if (is_word(s, "false"))
        return json_false();
    if (all_digits(s) && n < 19)
        return json_integer(strtoll(s, NULL, 10));
    if (looks_real(s) && n < 40)
        return json_real(strtod(s, NULL));
    json_t *v = json_stringn(s, n);
    if (!v)
        fail_at(r, event_line(ev), "a value is not valid UTF-8");
    return v;
}

static json_t *build_node(reader *r, yaml_event_t *ev, int depth);

static json_t *build_mapping(reader *r, int depth)
{
    json_t *obj = json_object();
    for (;;) {
        yaml_event_t ev;
        if (next_event(r, &ev) != 0)
            goto fail;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            return obj;
        }
        int line = event_line(&ev);
        if (ev.type != YAML_SCALAR_EVENT) {
            fail_at(r, line, ev.type == YAML_ALIAS_EVENT ? "aliases (*name) are not supported"
                                                : "a key must be a plain text");
            yaml_event_delete(&ev);
            goto fail;
        }
        char *key = xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
        yaml_event_delete(&ev);
        if (strlen(key) == 0 || json_object_get(obj, key)) {
            srv_fail(r->err, LOOM_ERR_CONFIG, "%s:%d: %s: %s", r->doc->file, line, key,
                     *key ? "the key is given twice" : "an empty key");
            free(key);
            goto fail;
        }
        if (next_event(r, &ev) != 0) {
            free(key);
            goto fail;
        }
        json_t *v = build_node(r, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!v) {
            free(key);
            goto fail;
        }
        if (json_object_set_new(obj, key, v) != 0) {
            fail_at(r, line, "a key is not valid UTF-8");
            free(key);
            goto fail;
        }
        add_line(r->doc, obj, key, 0, line);
        free(key);
    }
fail:
    json_decref(obj);
    return NULL;
}

static json_t *build_sequence(reader *r, int depth)
{
    json_t *arr = json_array();
    for (;;) {
        yaml_event_t ev;
        if (next_event(r, &ev) != 0)
            break;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return arr;
        }
        int line = event_line(&ev);
        json_t *v = build_node(r, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!v)
            break;
        add_line(r->doc, arr, NULL, json_array_size(arr), line);
        json_array_append_new(arr, v);
    }
    json_decref(arr);
    return NULL;
}

static json_t *build_node(reader *r, yaml_event_t *ev, int depth)
{
    int line = event_line(ev);
    if (depth > CFG_MAX_DEPTH) {
        char what[64];
        snprintf(what, sizeof what, "nested deeper than %d levels", CFG_MAX_DEPTH);
        fail_at(r, line, what);
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return scalar_value(r, ev);
    case YAML_MAPPING_START_EVENT:
        return build_mapping(r, depth);
    case YAML_SEQUENCE_START_EVENT:
        return build_sequence(r, depth);
    case YAML_ALIAS_EVENT:
        fail_at(r, line, "aliases (*name) are not supported");
        return NULL;
    default:
        fail_at(r, line, "unexpected YAML structure");
        return NULL;
    }
}

/* STREAM-START, then nothing or one DOCUMENT, then STREAM-END. */
static int read_stream(reader *r)
{
    yaml_event_t ev;
    if (next_event(r, &ev) != 0)
        return -1;
    yaml_event_delete(&ev); /* stream start */
    if (next_event(r, &ev) != 0)
        return -1;
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        return 0;
    }
    yaml_event_delete(&ev); /* document start */
    if (next_event(r, &ev) != 0)
        return -1;
    r->doc->root_line = event_line(&ev);
    json_t *root = build_node(r, &ev, 1);
    yaml_event_delete(&ev);
    if (!root)
        return -1;
    r->doc->root = root;
    if (next_event(r, &ev) != 0) /* document end */
        return -1;
    yaml_event_delete(&ev);
    if (next_event(r, &ev) != 0)
        return -1;
    int line = event_line(&ev);
    bool more = ev.type != YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
    if (more)
        return fail_at(r, line, "one YAML document per file (found a second ---)");
    return 0;
}

int cfg_yaml_read(cfg_doc *doc, const char *file, const char *text, size_t len,
                  srv_error *err)
{
    memset(doc, 0, sizeof *doc);
    doc->file = file;
    doc->root_line = 1;
    if (len > CFG_MAX_BYTES)
        return srv_fail(err, LOOM_ERR_CONFIG, "%s:1: the file is larger than 1 MB", file);
    reader r = {.doc = doc, .err = err};
    if (!yaml_parser_initialize(&r.yp))
        return srv_fail(err, LOOM_ERR_INTERNAL, "%s: out of memory", file);
    yaml_parser_set_input_string(&r.yp, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&r.yp, YAML_UTF8_ENCODING);
    int rc = read_stream(&r);
    yaml_parser_delete(&r.yp);
    if (rc != 0) {
        cfg_doc_free(doc);
        doc->file = file;
    }
    return rc;
}

int cfg_yaml_read_file(cfg_doc *doc, const char *file, const char *path, srv_error *err)
{
    memset(doc, 0, sizeof *doc);
    doc->file = file;
    doc->root_line = 1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT)
            return 1;
        return srv_fail(err, LOOM_ERR_CONFIG, "%s:1: cannot be read: %s", file, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return srv_fail(err, LOOM_ERR_CONFIG, "%s:1: is not a regular file", file);
    }
    if (st.st_size > CFG_MAX_BYTES) {
        fclose(f);
        return srv_fail(err, LOOM_ERR_CONFIG, "%s:1: the file is larger than 1 MB", file);
    }
    char *buf = xmalloc((size_t)st.st_size + 1);
    size_t got = fread(buf, 1, (size_t)st.st_size, f);
    fclose(f);
    int rc = cfg_yaml_read(doc, file, buf, got, err);
    free(buf);
    return rc;
}

void cfg_doc_free(cfg_doc *doc)
{
    if (!doc)
        return;
    json_decref(doc->root);
    for (size_t i = 0; i < doc->n_lines; i++)
        free(doc->lines[i].key);
    free(doc->lines);
    memset(doc, 0, sizeof *doc);
}

int cfg_line_of(const cfg_doc *doc, const json_t *parent, const char *key, size_t index)
{
    for (size_t i = 0; i < doc->n_lines; i++) {
        const cfg_line *l = &doc->lines[i];
        if (l->parent != parent)
            continue;
        if (key ? (l->key && strcmp(l->key, key) == 0) : (!l->key && l->index == index))
            return l->line;
    }
    return doc->root_line;
}

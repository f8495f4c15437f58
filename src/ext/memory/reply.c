/* reply.c — strict parsing of the extractor's JSON (see reply.h).
 * Threading: none. */
#include "ext/memory/reply.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/utf8.h"
#include "ext/memory/entry.h"

void memory_reply_free(memory_reply *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->ops[i].target);
        free(r->ops[i].name);
        free(r->ops[i].description);
        free(r->ops[i].type);
        free(r->ops[i].body);
    }
    free(r->ops);
    r->ops = NULL;
    r->n = 0;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A string field: present when required, text, under max, one line when
 * oneline; copied into *out. */
static int take_str(const json_t *o, const char *key, size_t max, bool oneline, bool required,
                    char **out, size_t idx, loom_str *why)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        if (required)
            str_printf(why, "memories[%zu].%s is missing", idx, key);
        return required ? -1 : 0;
    }
    if (!json_is_string(v) || json_string_length(v) == 0) {
        str_printf(why, "memories[%zu].%s must be non-empty text", idx, key);
        return -1;
    }
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n > max) {
        str_printf(why, "memories[%zu].%s is %zu bytes, over its cap of %zu", idx, key, n, max);
        return -1;
    }
    if (strlen(s) != n || (oneline && (strchr(s, '\n') || strchr(s, '\r')))) {
        str_printf(why, "memories[%zu].%s must be one line of text", idx, key);
        return -1;
    }
    *out = xstrdup(s);
    return 0;
}

static int parse_op(const json_t *o, size_t idx, memory_op *op, loom_str *why)
{
    if (!json_is_object(o)) {
        str_printf(why, "memories[%zu] is not an object", idx);
        return -1;
    }
    static const char *const allowed[] = {"action", "target", "name", "description", "type",
                                          "body", NULL};
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        bool ok = false;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = !strcmp(key, allowed[i]);
        if (!ok) {
            str_printf(why, "memories[%zu] has an unknown key \"%.40s\"", idx, key);
            return -1;
        }
    }
    const char *action = json_string_value(json_object_get(o, "action"));
    if (!action) {
        str_printf(why, "memories[%zu].action is missing", idx);
        return -1;
    }
    if (!strcmp(action, "add"))
        op->op = MEMORY_OP_ADD;
    else if (!strcmp(action, "merge"))
        op->op = MEMORY_OP_MERGE;
    else if (!strcmp(action, "replace"))
        op->op = MEMORY_OP_REPLACE;
    else {
        str_printf(why, "memories[%zu].action must be add, merge or replace", idx);
        return -1;
    }
    bool full = op->op != MEMORY_OP_MERGE;
    if (op->op != MEMORY_OP_ADD) {
        if (take_str(o, "target", MEMORY_SLUG_MAX, true, true, &op->target, idx, why) != 0)
            return -1;
        if (!memory_slug_valid(op->target)) {
            str_printf(why, "memories[%zu].target must be an entry's slug (a-z, 0-9, -)", idx);
            return -1;
        }
    } else if (json_object_get(o, "target")) {
        str_printf(why, "memories[%zu]: add takes no target", idx);
        return -1;
    }
    if (take_str(o, "name", MEMORY_NAME_MAX, true, full, &op->name, idx, why) != 0 ||
        take_str(o, "description", MEMORY_DESCRIPTION_MAX, true, full, &op->description, idx,
                 why) != 0 ||
        take_str(o, "type", 16, true, full, &op->type, idx, why) != 0 ||
        take_str(o, "body", MEMORY_BODY_MAX, false, full, &op->body, idx, why) != 0)
        return -1;
    if (op->type && !memory_type_valid(op->type)) {
        str_printf(why, "memories[%zu].type must be user, feedback, project or reference", idx);
        return -1;
    }
    return 0;
}

int memory_reply_parse(const char *text, size_t len, memory_reply *out, loom_str *why)
{
    memset(out, 0, sizeof *out);
    if (len > MEMORY_REPLY_MAX_BYTES) {
        str_printf(why, "the reply is %zu bytes, over %d", len, MEMORY_REPLY_MAX_BYTES);
        return -1;
    }
    size_t a = 0, b = len;
    while (a < b && blank(text[a]))
        a++;
    while (b > a && blank(text[b - 1]))
        b--;
    if (b - a == strlen("NO_EXTRACTION_NEEDED") && !memcmp(text + a, "NO_EXTRACTION_NEEDED", b - a))
        return 0;
    /* One ```json … ``` fence around the object is tolerated. */
    if (b - a >= 6 && !memcmp(text + a, "```", 3) && !memcmp(text + b - 3, "```", 3)) {
        const char *nl = memchr(text + a, '\n', b - a);
        if (!nl || (size_t)(nl - text) >= b - 3) {
            str_puts(why, "the reply's code fence holds nothing");
            return -1;
        }
        a = (size_t)(nl - text) + 1;
        b -= 3;
        while (b > a && blank(text[b - 1]))
            b--;
    }
    json_error_t je;
    json_t *doc = json_loadb(text + a, b - a, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        str_printf(why, "the reply is not one JSON object: %s (column %d)", je.text, je.column);
        return -1;
    }
    int rc = -1;
    const json_t *mems = json_object_get(doc, "memories");
    if (!json_is_object(doc) || json_object_size(doc) != 1 || !json_is_array(mems)) {
        str_puts(why, "the reply must be an object with one key, \"memories\", an array");
        goto done;
    }
    size_t n = json_array_size(mems);
    if (n > MEMORY_REPLY_MAX_OPS) {
        str_printf(why, "the reply has %zu memories, over %d", n, MEMORY_REPLY_MAX_OPS);
        goto done;
    }
    out->ops = n ? xcalloc(n, sizeof *out->ops) : NULL;
    for (size_t i = 0; i < n; i++) {
        out->n = i + 1;
        if (parse_op(json_array_get(mems, i), i, &out->ops[i], why) != 0) {
            memory_reply_free(out);
            goto done;
        }
    }
    out->n = n;
    rc = 0;
done:
    json_decref(doc);
    return rc;
}

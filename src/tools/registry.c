/* registry.c — the tool registry: an array of borrowed tool_defs with their
 * parsed schemas, kept in insertion order (see registry.h for why the order
 * is part of the contract).
 *
 * Lookups are a linear scan: a run offers tens of tools, and the scan over a
 * small contiguous array costs less than keeping a hash table in step with
 * the order. It counts its declarations with context/tokens.h (tools ->
 * context is a one-way edge: the context module never sees a tool).
 */
#include "tools/registry.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "context/tokens.h"
#include "tools/builtin/builtin.h"
#include "tools/schema.h"

/* Anthropic and OpenAI both limit tool names to this alphabet and length. */
#define TOOL_NAME_MAX 64

typedef struct reg_entry {
    const tool_def *def;
    json_t *schema; /* owned */
} reg_entry;

struct tool_registry {
    reg_entry *v;
    size_t n, cap;
};

tool_registry *tool_registry_new(void)
{
    return xcalloc(1, sizeof(tool_registry));
}

void tool_registry_free(tool_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        json_decref(reg->v[i].schema);
    free(reg->v);
    free(reg);
}

static bool name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > TOOL_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

static const reg_entry *find(const tool_registry *reg, const char *name)
{
    if (!reg || !name)
        return NULL;
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->v[i].def->name, name) == 0)
            return &reg->v[i];
    /* Names first, then aliases: a tool's own name always wins over
     * another's alias. */
    for (size_t i = 0; i < reg->n; i++)
        for (const char *const *a = reg->v[i].def->aliases; a && *a; a++)
            if (strcmp(*a, name) == 0)
                return &reg->v[i];
    return NULL;
}

int tool_registry_add(tool_registry *reg, const tool_def *def, loom_error *err)
{
    if (!reg || !def)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "tool definition missing");
    if (!name_ok(def->name))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "tool name \"%.80s\" is not 1-%d characters of A-Z a-z 0-9 _ -",
                              def->name ? def->name : "", TOOL_NAME_MAX);
    if (find(reg, def->name))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "tool %s is already registered",
                              def->name);
    for (const char *const *a = def->aliases; a && *a; a++)
        if (!name_ok(*a) || find(reg, *a))
            return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                                  "tool %s: alias \"%.80s\" is not a free tool name", def->name,
                                  *a);
    if (!def->description || !*def->description)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "tool %s has no description",
                              def->name);
    if (!def->run)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "tool %s has no run function",
                              def->name);
    json_t *schema = schema_parse(def->input_schema, err);
    if (!schema) {
        loom_error_prefix(err, "tool %s", def->name);
        return -(int)(err ? err->code : LOOM_ERR_INVALID_REQUEST);
    }
    /* Providers take an object schema only: the call's arguments are always
     * a JSON object. */
    const char *type = json_string_value(json_object_get(schema, "type"));
    if (!type || strcmp(type, "object") != 0) {
        json_decref(schema);
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "tool %s: input schema must have \"type\": \"object\"", def->name);
    }
    if (reg->n == reg->cap) {
        reg->cap = reg->cap ? reg->cap * 2 : 16;
        reg->v = xrealloc(reg->v, reg->cap * sizeof *reg->v);
    }
    reg->v[reg->n++] = (reg_entry){def, schema};
    return 0;
}

int tool_registry_add_builtins(tool_registry *reg, loom_error *err)
{
    /* The documented order (docs/tools.md). Appending is fine; reordering
     * changes every request's prefix and costs each user one cache miss. */
    static const tool_def *const builtins[] = {
        &tool_read,       &tool_write,     &tool_edit,       &tool_glob,
        &tool_grep,       &tool_bash,      &tool_task_output, &tool_task_stop,
        &tool_todo_write, &tool_web_fetch, &tool_ask_user,    &tool_renew,
        &tool_ack_event,  &tool_notebook_edit, &tool_exit_plan_mode, &tool_task_create,
        &tool_task_get,   &tool_task_update, &tool_task_list, &tool_enter_worktree,
        &tool_exit_worktree,
    };
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++) {
        int rc = tool_registry_add(reg, builtins[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

const tool_def *tool_registry_find(const tool_registry *reg, const char *name)
{
    const reg_entry *e = find(reg, name);
    return e ? e->def : NULL;
}

const json_t *tool_registry_schema(const tool_registry *reg, const char *name)
{
    const reg_entry *e = find(reg, name);
    return e ? e->schema : NULL;
}

size_t tool_registry_count(const tool_registry *reg)
{
    return reg ? reg->n : 0;
}

const tool_def *tool_registry_at(const tool_registry *reg, size_t i)
{
    return reg && i < reg->n ? reg->v[i].def : NULL;
}

void tool_registry_to_request(const tool_registry *reg, msg_request *req)
{
    for (size_t i = 0; reg && i < reg->n; i++)
        msg_request_add_tool(req, reg->v[i].def->name, reg->v[i].def->description,
                              json_incref(reg->v[i].schema)); /* immutable: shared, not copied */
}

int64_t tool_registry_tokens(const tool_registry *reg)
{
    int64_t t = 0;
    for (size_t i = 0; reg && i < reg->n; i++) {
        const tool_def *d = reg->v[i].def;
        t += TOKENS_PER_BLOCK + tokens_estimate_cstr(d->name) +
             tokens_estimate_cstr(d->description) + tokens_estimate_cstr(d->input_schema);
    }
    return t;
}

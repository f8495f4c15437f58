/* registry.h — the set of tools a run offers the model, in a fixed order.
 *
 * The order tools are added is the order they are sent, every request: the
 * tool list sits at the front of the prompt, and a provider's prompt cache
 * only hits when it is byte-identical from one request to the next. Each
 * tool's schema is parsed and shape-checked once, when it is added, so a bad
 * schema is found at start-up, not at the first call.
 *
 * A registry is built by one thread and then only read; concurrent readers
 * need no lock. The tool_defs are borrowed (built-ins are static; whoever
 * adds a dynamic one keeps it alive for the registry's lifetime).
 */
#ifndef LOOM_TOOLS_REGISTRY_H
#define LOOM_TOOLS_REGISTRY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "tools/tool.h"
#include "message/message.h"

typedef struct tool_registry tool_registry;

/* An empty registry; free with tool_registry_free. */
tool_registry *tool_registry_new(void);
void tool_registry_free(tool_registry *reg);

/* Adds def at the end. Refuses (LOOM_ERR_INVALID_REQUEST, err names the tool)
 * a name already present, a name providers would reject (1-64 of
 * [A-Za-z0-9_-]), a missing description or run function, and a schema that
 * does not parse, fails schema_check, or is not of type "object". */
int tool_registry_add(tool_registry *reg, const tool_def *def, loom_error *err);

/* The built-in tools, in this order: Read, Write, Edit, Glob, Grep, Bash,
 * TaskOutput, TaskStop, TodoWrite, WebFetch, AskUserQuestion. */
int tool_registry_add_builtins(tool_registry *reg, loom_error *err);

/* By exact name; NULL when absent. */
const tool_def *tool_registry_find(const tool_registry *reg, const char *name);
/* The parsed schema of a tool (borrowed, valid while reg lives); NULL when
 * absent. */
const json_t *tool_registry_schema(const tool_registry *reg, const char *name);
size_t tool_registry_count(const tool_registry *reg);
/* The i-th tool in insertion order; NULL past the end. */
const tool_def *tool_registry_at(const tool_registry *reg, size_t i);

/* Appends every tool, in order, to req->tools. The schemas are shared, not
 * copied (the request holds a new reference to each): they are never
 * modified after registration, and jansson's reference counts are atomic,
 * so requests on other threads may hold them. */
void tool_registry_to_request(const tool_registry *reg, msg_request *req);

/* C_skill's size in estimated tokens (context/tokens.h), from the
 * declarations' own text: the schemas are written compact, so their text is
 * what goes on the wire (re-encoding them to count would cost more than the
 * rest of the estimate). 0 for NULL. */
int64_t tool_registry_tokens(const tool_registry *reg);

#endif

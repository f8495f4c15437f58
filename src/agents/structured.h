/* structured.h — StructuredOutput: the tool a sub-agent with an
 * output_schema answers through, and the reminder that insists on it.
 *
 * The tool's input schema is the output schema itself (wrapped as
 * {"value": …} when it is not an object schema, since tool inputs are
 * objects). A call is checked with tools/schema.c; an invalid one is an
 * error result naming the path, and counts as an attempt
 * (STRUCTURED_MAX_ATTEMPTS). The accepted value is kept on the node. One
 * tool_def per child (made at prepare, freed at release). Threading: the
 * tool runs on the child's tool threads; the node's fields it sets are read
 * by the same run's thread after the call.
 */
#ifndef LOOM_AGENTS_STRUCTURED_H
#define LOOM_AGENTS_STRUCTURED_H

#include <jansson.h>

#include "base/error.h"
#include "tools/tool.h"

struct spawn_node;

#define STRUCTURED_MAX_ATTEMPTS 3
/* How often before_final sends the model back for its StructuredOutput call. */
#define STRUCTURED_MAX_REMINDERS 3

/* The StructuredOutput tool for schema (new; free with structured_tool_free).
 * NULL with err when the schema is not one tools/schema.c can apply. */
tool_def *structured_tool_new(const json_t *schema, loom_error *err);
void structured_tool_free(tool_def *def);

/* The tree port's before_final part: a reminder (malloc'd) while n owes its
 * StructuredOutput call and has reminders and attempts left; else NULL. */
char *structured_before_final(struct spawn_node *n, const char *final_text);

#endif

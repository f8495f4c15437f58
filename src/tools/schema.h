/* schema.h — checks a tool call's input against the tool's JSON Schema.
 *
 * Only the subset tool schemas use is enforced: type (and type arrays),
 * properties, required, additionalProperties (false or a schema), enum,
 * const, items, minimum/maximum, exclusiveMinimum/exclusiveMaximum (numeric
 * form), minLength/maxLength, minItems/maxItems, anyOf, oneOf, allOf, and
 * the boolean schemas true/false. Every other keyword (description, format,
 * pattern, $ref, ...) is an annotation here: it reaches the model, but is not
 * checked. The messages are written for the model, which must be able to fix
 * its call from them alone, so each names the parameter by its JSON path
 * ("todos[1].status") and says what was expected and what arrived.
 *
 * Both the schema and the value may be hostile (an MCP server writes the
 * schema, the model writes the value): nesting deeper than
 * SCHEMA_MAX_DEPTH and anyOf/oneOf blow-ups are reported, never followed.
 */
#ifndef LOOM_TOOLS_SCHEMA_H
#define LOOM_TOOLS_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "base/str.h"

/* Deepest nesting of schema or value that is looked at. */
#define SCHEMA_MAX_DEPTH 64
/* How many problems one validation reports before summarising the rest. */
#define SCHEMA_MAX_ERRORS 5
/* Longest key segment kept in a path in a message (keys come from the
 * model or an MCP server). */
#define SCHEMA_KEY_MAX 64

/* Checks value against schema. Returns 0 when it conforms; otherwise -1, and
 * appends to why (when non-NULL) one line per problem, at most
 * SCHEMA_MAX_ERRORS of them plus a count of the rest, e.g.
 *   The required parameter "file_path" is missing
 *   "timeout" must be an integer, got string "10"
 * A NULL value is reported as missing input. why is appended to, not
 * cleared. */
int schema_validate(const json_t *schema, const json_t *value, loom_str *why);

/* Parses schema text and checks that it is a schema this module can apply:
 * an object (or true/false), with each keyword above of the right shape
 * (type names known, required an array of strings, minimum a number, ...).
 * Returns a new reference, or NULL with err set (LOOM_ERR_INVALID_REQUEST)
 * naming the offending keyword by its path in the schema. */
json_t *schema_parse(const char *schema_text, loom_error *err);

/* The shape check of schema_parse, for a schema that is already JSON (MCP
 * tools arrive that way). 0 ok, else -code with err set. */
int schema_check(const json_t *schema, loom_error *err);

/* Is t one of the JSON Schema type names ("string", "integer", …)? */
bool schema_type_known(const char *t);
/* The value of the count keyword kw of schema s (minLength, maxItems …):
 * a non-negative integer (1.0 counts as 1), or -1 when absent or not one. */
long long schema_count_kw(const json_t *s, const char *kw);

#endif

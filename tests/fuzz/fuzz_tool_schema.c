/* fuzz_tool_schema.c — tool input validation against arbitrary JSON. The
 * first part of the input (up to a NUL) is parsed as a schema, the rest as
 * the value: a model's tool input and an MCP server's schema are both
 * outside input. Must never crash, leak, recurse without bound or hang. */
#include <stdint.h>
#include <string.h>

#include "base/str.h"
#include "tools/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t schema_len = nul ? (size_t)(nul - data) : size;
    json_error_t jerr;
    json_t *schema = json_loadb((const char *)data, schema_len, JSON_DECODE_ANY, &jerr);
    json_t *value = nul ? json_loadb((const char *)nul + 1, size - schema_len - 1,
                                     JSON_DECODE_ANY, &jerr)
                        : json_object();
    if (schema && value) {
        loom_error err;
        if (schema_check(schema, &err) == 0) {
            loom_str why = LOOM_STR_INIT;
            schema_validate(schema, value, &why);
            str_free(&why);
        }
    }
    json_decref(schema);
    json_decref(value);
    return 0;
}

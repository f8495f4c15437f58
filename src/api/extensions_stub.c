/* extensions_stub.c — TEMPORARY (branch h15-styles): loom_agent_extensions_json
 * with only the output styles, so /output-style works before the lead's
 * api/extensions.c lands; that file replaces this one (keep its
 * "output_styles": api_styles_json(a)). */
#include <stdlib.h>

#include "api/internal.h"
#include "base/json.h"
#include "ext/styles/styles.h"

char *loom_agent_extensions_json(loom_agent *a)
{
    if (!a)
        return NULL;
    json_t *warnings = json_array();
    for (size_t i = 0; i < style_set_warning_count(a->styles); i++)
        json_array_append_new(warnings, json_string(style_set_warning(a->styles, i)));
    json_t *doc = json_pack("{s:[],s:[],s:o,s:[],s:o,s:[]}", "skills", "commands",
                            "output_styles", api_styles_json(a), "plugins", "warnings", warnings,
                            "notices");
    char *text = json_dump_compact(doc);
    json_decref(doc);
    return text;
}

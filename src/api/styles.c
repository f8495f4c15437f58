/* styles.c — the agent's active output style (internal.h,
 * docs/output-styles.md): which one the settings pick and the static
 * system prompt it makes. The styles are ext/styles/'s, loaded with the
 * other extensions (api/extensions.c, which also lists them). Runs while
 * the agent is made: no state of its own. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/str.h"
#include "context/system_prompt.h"
#include "ext/styles/styles.h"

void api_agent_warn(loom_agent *a, const char *text)
{
    if (!a->warnings)
        a->warnings = json_array();
    else if (a->warnings->refcount > 1) { /* shared with the config: copied first */
        json_t *own = json_copy(a->warnings);
        json_decref(a->warnings);
        a->warnings = own;
    }
    json_array_append_new(a->warnings, json_string(text));
}

char *api_styles_static(loom_agent *a)
{
    const char *name = api_value(a->values, "output_style");
    const output_style *style = name && *name ? style_set_find(a->styles, name) : NULL;
    free(a->output_style);
    a->output_style = style ? xstrdup(style->name) : NULL;
    if (name && *name && !style) {
        loom_str w = LOOM_STR_INIT;
        str_printf(&w, "output style \"%s\" not found; using the default (/output-style lists "
                   "the styles)", name);
        api_agent_warn(a, str_cstr(&w));
        str_free(&w);
    }
    return system_prompt_static_styled(style ? style->body : NULL,
                                       style ? style->keep_coding_instructions : true);
}

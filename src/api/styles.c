/* styles.c — the agent's output styles (internal.h, docs/output-styles.md):
 * which one is active, the static system prompt it makes, and the listing
 * /output-style shows. The styles themselves are ext/styles/'s. Runs while
 * the agent is made, or reads it afterwards: no state of its own. */
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

/* The styles, when the extensions were not loaded with them (api/extensions.c
 * loads every catalog with one ext_source_opts): built-ins and the files of
 * the workspace's sources, their warnings the sessions'. */
static void load_styles(loom_agent *a)
{
    if (a->styles)
        return;
    ext_source_opts o = {.cwd = a->cwd, .trusted = a->trusted, .claude_compat = true};
    loom_error err;
    loom_error_clear(&err);
    a->styles = style_set_load(&o, &err);
    for (size_t i = 0; i < style_set_warning_count(a->styles); i++)
        api_agent_warn(a, style_set_warning(a->styles, i));
}

char *api_styles_static(loom_agent *a)
{
    load_styles(a);
    const char *name = api_value(a->values, "output_style");
    a->style = name && *name ? style_set_find(a->styles, name) : NULL;
    if (name && *name && !a->style) {
        loom_str w = LOOM_STR_INIT;
        str_printf(&w, "output style \"%s\" not found; using the default (/output-style lists "
                   "the styles)", name);
        api_agent_warn(a, str_cstr(&w));
        str_free(&w);
    }
    return system_prompt_static_styled(a->style ? a->style->body : NULL,
                                       a->style ? a->style->keep_coding_instructions : true);
}

json_t *api_styles_json(const loom_agent *a)
{
    json_t *out = json_array();
    const output_style *active = a->style ? a->style : style_set_find(a->styles, "default");
    for (size_t i = 0; i < style_set_count(a->styles); i++) {
        const output_style *s = style_set_at(a->styles, i);
        json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:b}", "name", s->name, "description",
                                             s->description, "source", s->source, "active",
                                             s == active));
    }
    return out;
}

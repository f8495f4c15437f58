/* web_search.c — the WebSearch tool from the user's "webSearch" settings
 * (tools/builtin/web_search.h, docs/tools.md). Only the user's own file
 * may name the search service: a repository's settings that could would
 * receive every query the model makes, so theirs is ignored with a
 * warning. Without the setting the tool is not offered at all. */
#include <stdio.h>
#include <stdlib.h>

#include "api/internal.h"
#include "base/settings.h"
#include "tools/builtin/web_search.h"

int api_web_search_add(loom_agent *a, loom_status *st)
{
    static const char *const layer[] = {NULL, "the project's settings", "the local settings"};
    for (int i = 1; i < 3; i++)
        if (json_object_get(a->files[i], "webSearch"))
            json_array_append_new(a->warnings,
                                  json_sprintf("webSearch in %s is ignored: only your user "
                                               "settings choose the search service",
                                               layer[i]));
    const json_t *v = json_object_get(a->files[0], "webSearch");
    if (!v || json_is_null(v))
        return 0;
    char *path = settings_user_path();
    web_search_config c;
    loom_str why = LOOM_STR_INIT;
    loom_error err;
    loom_error_clear(&err);
    int rc = web_search_config_parse(v, path, &c, &why);
    free(path);
    if (rc != 0) {
        loom_error_set(&err, LOOM_ERR_CONFIG, "%s", str_cstr(&why));
        str_free(&why);
        api_status_from(st, &err);
        return -1;
    }
    str_free(&why);
    a->web_search = web_search_tool_new(&c);
    web_search_config_free(&c);
    if (tool_registry_add(a->tools, a->web_search, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    return 0;
}

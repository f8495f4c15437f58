/* fuzz_web_search.c — libFuzzer target for what WebSearch reads from a
 * search service (tools/builtin/web_search.c): any answer body gives a list
 * of {title, url, snippet} strings whose url is http(s), or NULL with a
 * reason; the same bytes as a "webSearch" settings value parse or say why,
 * naming the key. No crash, no leak; any disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/builtin/web_search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loom_str why = LOOM_STR_INIT;
    json_t *r = web_search_results((const char *)data, size, &why);
    if (!r && why.len == 0)
        abort();
    size_t i;
    json_t *e;
    json_array_foreach(r, i, e)
    {
        const char *url = json_string_value(json_object_get(e, "url"));
        if (!url || !json_is_string(json_object_get(e, "title")) ||
            !json_is_string(json_object_get(e, "snippet")) ||
            (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)))
            abort();
    }
    json_decref(r);
    str_free(&why);

    json_t *v = json_loadb((const char *)data, size, 0, NULL);
    if (v) {
        web_search_config c;
        loom_str w = LOOM_STR_INIT;
        int rc = web_search_config_parse(v, "/f/settings.json", &c, &w);
        if (rc == 0) {
            if (!c.url || !strstr(c.url, "{query}") || c.max_results < 1 ||
                c.max_results > WEB_SEARCH_MAX_RESULTS)
                abort();
            tool_def *t = web_search_tool_new(&c);
            web_search_tool_free(t);
            web_search_config_free(&c);
        } else if (strncmp(str_cstr(&w), "/f/settings.json: webSearch", 27) != 0) {
            abort();
        }
        str_free(&w);
        json_decref(v);
    }
    return 0;
}

/* fuzz_knowledge_wiki.c — libFuzzer target for an internal_wiki search
 * endpoint's answer (ext/knowledge/wiki_source.c, wiki_parse_results):
 * whatever the endpoint sends, the parser must not crash or leak; it
 * gives at most `limit` hits, each with a uri and a valid UTF-8 text of at
 * most 4 KB, or -1 with a message naming the source. Any disagreement
 * aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ext/knowledge/wiki_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    knowledge_src src = {.id = "wiki", .type = KSRC_INTERNAL_WIKI, .trust_tier = "medium",
                         .scope = "global"};
    fs_hit *h = NULL;
    size_t n = 0;
    loom_error err;
    loom_error_clear(&err);
    if (wiki_parse_results(&src, (const char *)data, size, 5, &h, &n, &err) != 0) {
        if (h || n || strncmp(err.message, "wiki: ", 6) != 0)
            abort();
        return 0;
    }
    if (n > 5)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!h[i].path || !h[i].path[0] || !h[i].text || strlen(h[i].text) > 4096)
            abort();
    fs_hits_free(h, n);
    return 0;
}

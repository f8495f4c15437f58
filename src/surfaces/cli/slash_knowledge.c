/* slash_knowledge.c — /knowledge (slash_knowledge.h). Every text shown
 * comes from files or the model, so it goes through term_printf, which
 * lets no terminal escape pass. Main thread only. */
#include "surfaces/cli/slash_knowledge.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

void slash_knowledge(slash_host *r, const char *args)
{
    (void)args;
    char *text = loom_session_knowledge_json(r->session);
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), "knowledge", &ignore) : NULL;
    free(text);
    size_t i, j;
    json_t *v, *x;
    json_t *srcs = json_get_arr(doc, "sources");
    if (!json_array_size(srcs)) {
        term_printf(&r->out, TONE_PLAIN, "No knowledge sources.\n");
        term_printf(&r->out, TONE_DIM, "Add them in .loom/knowledge_sources.yaml or "
                                       "~/.loom/knowledge_sources.yaml (docs/knowledge.md)\n");
        json_decref(doc);
        return;
    }
    term_printf(&r->out, TONE_BOLD, "Sources (%zu)\n", json_array_size(srcs));
    json_array_foreach(srcs, i, v) {
        json_t *rp = json_object_get(v, "retrieval_policy");
        term_printf(&r->out, TONE_PLAIN, "  %s  %s, trust %s, scope %s%s%s\n",
                    json_get_str(v, "knowledge_source_id", "?"), json_get_str(v, "type", "?"),
                    json_get_str(v, "trust_tier", "?"), json_get_str(v, "scope", "?"),
                    json_get_bool(rp, "allow_search", true) ? "" : ", no search",
                    json_get_bool(rp, "allow_quote", true) ? "" : ", summary only");
    }
    json_t *qs = json_get_arr(doc, "active_questions");
    term_printf(&r->out, TONE_BOLD, "Questions (%zu)\n", json_array_size(qs));
    json_array_foreach(qs, i, v)
        term_printf(&r->out, TONE_PLAIN, "  %s (%s): %s\n", json_get_str(v, "question_id", "?"),
                    json_get_str(v, "status", "open"), json_get_str(v, "question", ""));
    json_t *packs = json_get_arr(doc, "evidence_packs");
    term_printf(&r->out, TONE_BOLD, "Evidence packs (%zu)\n", json_array_size(packs));
    json_array_foreach(packs, i, v) {
        term_printf(&r->out, TONE_PLAIN, "  %s for %s, confidence %.2f, freshness %s\n    %s\n",
                    json_get_str(v, "evidence_pack_id", "?"), json_get_str(v, "question_id", "?"),
                    json_number_value(json_object_get(v, "confidence")),
                    json_get_str(v, "freshness", "?"), json_get_str(v, "summary", ""));
        json_array_foreach(json_object_get(v, "key_facts"), j, x)
            term_printf(&r->out, TONE_PLAIN, "    fact: %s\n", json_string_value(x) ?: "");
        json_array_foreach(json_object_get(v, "conflicts"), j, x) {
            json_t *c = json_object_get(x, "claims");
            term_printf(&r->out, TONE_YELLOW, "    conflict: %s: %s (%s) vs %s (%s)\n",
                        json_get_str(x, "key", "?"), json_get_str(json_array_get(c, 0), "value", ""),
                        json_get_str(json_array_get(c, 0), "source", ""),
                        json_get_str(json_array_get(c, 1), "value", ""),
                        json_get_str(json_array_get(c, 1), "source", ""));
        }
    }
    json_t *cites = json_get_arr(doc, "citations");
    term_printf(&r->out, TONE_BOLD, "Citations (%zu)\n", json_array_size(cites));
    json_array_foreach(cites, i, v)
        term_printf(&r->out, TONE_PLAIN, "  [%s] %s %s (trust %s%s)\n",
                    json_get_str(v, "citation_id", "?"), json_get_str(v, "source", "?"),
                    json_get_str(v, "uri", "?"), json_get_str(v, "trust_tier", "?"),
                    json_get_bool(v, "quotable", true) ? "" : ", summary only");
    json_decref(doc);
}

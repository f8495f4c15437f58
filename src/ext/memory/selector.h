/* selector.h — the model selector of seed 001 §11.7 (memorySelector), used
 * when memory.selector.model names a model: the candidates' manifest, most
 * recent first, one line each (`- [type] file (ISO time): name:
 * description`), goes to that model with the seed's rules (at most 5; "if
 * you are unsure if a memory will be useful, do not include it"), and the
 * answer {"selected_memories": [file, …]} is filtered to files of the
 * manifest. A failed call or an answer without the shape selects nothing
 * and says why; the caller falls back to the lexical selector.
 *
 * No state; the caller's thread. */
#ifndef LOOM_EXT_MEMORY_SELECTOR_H
#define LOOM_EXT_MEMORY_SELECTOR_H

#include <jansson.h>

#include "ext/memory/entry.h"
#include "ext/memory/helper_call.h"
#include "ext/memory/select.h"

#define MEMORY_MANIFEST_MAX 200  /* seed 001 §11.7: scanMemoryFiles truncates to a cap */

/* call: the helper request without system and user (filled here). skip:
 * paths already surfaced. 0 with out[0..*got) (room for max; terms and
 * scores from memory_score, for the log), or -1 with why. */
int memory_select_by_model(const memory_entry *v, size_t n, const char *goal,
                           const json_t *skip, int64_t now_ms, memory_helper_req call,
                           const loom_cancel *cancel, size_t max, memory_pick *out, size_t *got,
                           msg_usage *usage, loom_str *why);

/* The files the answer text selects, in its order, that are in names
 * (NULL-terminated); a new array, or NULL when the text has no
 * {"selected_memories": [...]} object. */
json_t *memory_selector_parse(const char *text, const char *const *names);

#endif

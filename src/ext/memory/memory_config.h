/* memory_config.h — the "memory" settings block (docs/settings.md):
 *
 *   "memory": {
 *     "extraction": {"enabled": false, "model": null, "max_tokens": 1024,
 *                    "min_chars": 40} | true | false,
 *     "recall":     {"enabled": true, "max_entries": 5, "max_bytes": 8000},
 *     "selector":   {"model": null}
 *   }
 *
 * Extraction is off by default, in the REPL and in -p alike: seed 001
 * §11.10 gate 1 ("off by default"); LOOM_MEMORY_EXTRACTION=1 / =0 wins
 * over the files (the seed's env-first precedence). Recall is on: it only
 * reads, and only entries with frontmatter in the project's memory. The
 * selector model is off (seed 001 §11.7: relevanceSelection defaults off);
 * without it the lexical selector picks.
 *
 * No state; any thread. */
#ifndef LOOM_EXT_MEMORY_CONFIG_H
#define LOOM_EXT_MEMORY_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"

#define MEMORY_RECALL_MAX_ENTRIES 5      /* seed 001 §11.7: select ≤5 */
#define MEMORY_RECALL_MAX_BYTES 8000     /* the whole recall block */
#define MEMORY_EXTRACT_MAX_TOKENS 1024   /* the extractor's reply cap */
#define MEMORY_EXTRACT_MIN_CHARS 40      /* below: a trivial run */

typedef struct memory_config {
    bool extract;          /* extraction at run end */
    char *extract_model;   /* NULL: the agent's model */
    int extract_max_tokens;
    int min_chars;         /* a run with less new text and no tool call is trivial */
    bool recall;
    int recall_max_entries;
    int recall_max_bytes;
    char *selector_model;  /* NULL: no model selector */
} memory_config;

/* Reads the "memory" blocks of the settings documents (files[0..n-1],
 * lowest layer first; a later layer's key wins) and the environment.
 * A bad value is skipped with a line in *warn naming the key (warn may be
 * NULL); the default stands. Always fills c; free with memory_config_free. */
void memory_config_read(json_t *const *files, size_t n, memory_config *c, loom_str *warn);
void memory_config_free(memory_config *c);

#endif

/* registry.h — the KnowledgeSourceRegistry (seed 000 §5.6, §10.5, §10.7c):
 * which external knowledge a session may search, kept apart from the
 * profile and the permission policy.
 *
 * Files, later ones adding sources (an id given twice: the first wins, the
 * second is a warning):
 *   the project   <cwd>/.loom/knowledge_sources.yaml (trusted workspace only)
 *   the user      loom_home()/knowledge_sources.yaml
 * Shape (docs/knowledge.md):
 *   knowledge_sources:
 *     repo_docs:
 *       type: filesystem            # filesystem | web | internal_wiki | mcp
 *       path: docs                  # or paths: [docs, notes.md]; relative to the file's project
 *       globs: ["*.md"]             # optional include patterns (default: every text file)
 *       trust_tier: high            # high | medium | low (default medium)
 *       scope: project              # global | tenant | project
 *       retrieval_policy: {allow_search: true, allow_quote: true}
 *       freshness: {max_age: 30d}   # s, m, h, d; older evidence is down-weighted
 *   citation_policy:                # the PolicySet's knowledge part (seed §10.7)
 *     require_citation_for: [high]  # source ids, types or trust tiers
 *     allow_quote_from: [repo_docs] # when given, only these may be quoted
 *
 * filesystem and internal_wiki sources are searched; web and mcp ones are
 * accepted and named in a pack as not searchable in this version.
 *
 * Owns everything it holds. Built once per session, then read-only: any
 * thread may read it. */
#ifndef LOOM_EXT_KNOWLEDGE_REGISTRY_H
#define LOOM_EXT_KNOWLEDGE_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef enum { KSRC_FILESYSTEM, KSRC_WEB, KSRC_INTERNAL_WIKI, KSRC_MCP } ksrc_type;

typedef struct knowledge_src {
    char *id;
    ksrc_type type;
    char **paths;        /* filesystem: absolute folders or files (NULL-terminated) */
    char **globs;        /* include patterns over the path inside a folder; NULL: all */
    char *trust_tier;    /* high | medium | low */
    char *scope;         /* global | tenant | project */
    char *tenant_id, *project_id; /* NULL unless given */
    bool allow_search, allow_quote;
    int64_t max_age_s;   /* 0: evidence never goes stale */
    char *endpoint;      /* internal_wiki: the search endpoint (http:// or https://) */
    char *origin;        /* the file it was read from, for messages */
} knowledge_src;

typedef struct knowledge_registry {
    knowledge_src *v;
    size_t n;
    char **require_citation_for; /* NULL-terminated; NULL: none */
    char **allow_quote_from;     /* NULL: every source's own allow_quote decides */
    json_t *warnings;            /* array of strings */
} knowledge_registry;

/* An empty registry (free with knowledge_registry_free). */
knowledge_registry *knowledge_registry_new(void);
void knowledge_registry_free(knowledge_registry *r);

/* Adds the sources of one parsed document (its top-level object). file
 * names it in messages; base_dir resolves relative paths. 0, or -1 with
 * err (LOOM_ERR_CONFIG: "file: knowledge_sources.ID.key: what is wrong").
 * On error nothing of the document is added. */
int knowledge_registry_add_json(knowledge_registry *r, const json_t *doc, const char *file,
                                const char *base_dir, loom_error *err);
/* Reads and adds one YAML file; a missing file is 0 (nothing added). */
int knowledge_registry_load_file(knowledge_registry *r, const char *path, const char *base_dir,
                                 loom_error *err);
/* The session's registry: the project's file (when trusted), then the
 * user's. A bad file is a warning (in r->warnings), never fatal. */
knowledge_registry *knowledge_registry_load(const char *cwd, bool trusted);

const knowledge_src *knowledge_registry_find(const knowledge_registry *r, const char *id);
/* Whether a source's text may reach the model verbatim: its allow_quote,
 * and, when the policy has allow_quote_from, being named there. */
bool knowledge_src_quotable(const knowledge_registry *r, const knowledge_src *s);
/* Whether the policy's require_citation_for names s (id, type or tier). */
bool knowledge_src_requires_citation(const knowledge_registry *r, const knowledge_src *s);
const char *ksrc_type_name(ksrc_type t);
/* "30d", "12h", "90m", "45s" or a bare number of seconds; -1 when bad. */
int64_t knowledge_parse_age(const char *s);
/* The source as JSON (for /knowledge and the tool's listing). New ref. */
json_t *knowledge_src_json(const knowledge_src *s);

#endif

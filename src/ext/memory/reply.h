/* reply.h — the memory extractor's answer, parsed and validated strictly.
 *
 * The model is told to answer with one JSON object and nothing else
 * (a ```json fence around it is tolerated, and NO_EXTRACTION_NEEDED, the
 * seed's no-op word, means no memories):
 *
 *   {"memories": [
 *     {"action": "add", "name": "…", "description": "…",
 *      "type": "user|feedback|project|reference", "body": "…"},
 *     {"action": "merge", "target": "<existing slug>"},
 *     {"action": "replace", "target": "<existing slug>", "name": "…",
 *      "description": "…", "type": "…", "body": "…"}
 *   ]}
 *
 * "merge": the fact is one already stored (a duplicate): the entry is
 * dated again. "replace": the new fact contradicts the stored one, which
 * it replaces (with a note saying what it replaced and when). Anything
 * else — another key, a missing field, a name or description with a line
 * break, a field over its cap, a target that is not a slug, more than
 * MEMORY_REPLY_MAX_OPS entries — rejects the whole reply: a model that
 * got the shape wrong may have got the content wrong too, so nothing is
 * written. The text is model output: untrusted.
 *
 * No state; any thread. */
#ifndef LOOM_EXT_MEMORY_REPLY_H
#define LOOM_EXT_MEMORY_REPLY_H

#include <stddef.h>

#include "base/str.h"

#define MEMORY_REPLY_MAX_OPS 8
#define MEMORY_NAME_MAX 80
#define MEMORY_DESCRIPTION_MAX 150
#define MEMORY_BODY_MAX 2000
#define MEMORY_REPLY_MAX_BYTES 65536

typedef enum memory_op_kind {
    MEMORY_OP_ADD,
    MEMORY_OP_MERGE,
    MEMORY_OP_REPLACE,
} memory_op_kind;

typedef struct memory_op {
    memory_op_kind op;
    char *target;       /* merge, replace: an existing entry's slug */
    char *name;         /* add, replace */
    char *description;
    char *type;
    char *body;
} memory_op;

typedef struct memory_reply {
    memory_op *ops;
    size_t n;
} memory_reply;

/* 0 with out filled (free with memory_reply_free; n may be 0), or -1 with
 * why naming the fault ("memories[2].type: …") and out empty. */
int memory_reply_parse(const char *text, size_t len, memory_reply *out, loom_str *why);
void memory_reply_free(memory_reply *r);

#endif

/* extract.h — memory extraction at run end (seed 001 §11.1 mount point D,
 * §11.10 path 2), as gates in order:
 *
 *   1. enabled (memory.extraction; off by default: memory_config.h);
 *   2. not already in progress for this session (in_progress);
 *   3. a session exists (a transcript with an id);
 *   4. the memory folder <root>/.loom/memory exists — extraction never
 *      creates it: a person opts a project in by making it;
 *   then Loom's own:
 *   -  the run completed (nothing from a failed or cancelled run);
 *   5. at least 2 new user/assistant messages since the session's cursor;
 *   -  not private: no user message since the cursor holds "#private"
 *      (the whole stretch is skipped); <private>…</private> spans are cut
 *      out of what the extractor reads;
 *   -  not trivial: no tool call, and under min_chars of message text;
 *   -  within the run's token cap (the call's max_tokens fits what is left);
 *   6. the main agent did not write into the memory folder itself since
 *      the cursor (Write/Edit/MultiEdit on a file in it): the two paths
 *      exclude each other; the cursor moves on;
 *   7. extract: one isolated helper call (ext/memory/helper_call.h) over the
 *      conversation since the cursor and the list of existing entries; the
 *      reply is parsed strictly (reply.h) and applied (apply.h: the secret
 *      scanner, merges, replacements); the cursor moves on.
 *
 * The cursor is the id of the last record extraction looked at, per
 * session, in <root>/.loom/memory/.extraction_cursor.json (a hidden file:
 * neither the prompt nor recall read it).
 *
 * No state; one call, one thread (the run's, after its loop ended). */
#ifndef LOOM_EXT_MEMORY_EXTRACT_H
#define LOOM_EXT_MEMORY_EXTRACT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/cancel.h"
#include "ext/memory/memory_config.h"
#include "provider/provider.h"
#include "session/transcript.h"

#define MEMORY_EXTRACT_CONVERSATION_MAX 24000  /* bytes of conversation the extractor reads */
#define MEMORY_CURSOR_SESSIONS_MAX 64          /* sessions the cursor file remembers */

typedef struct memory_extract_env {
    const char *root;               /* the repository root (or the working directory) */
    transcript *t;                  /* the session */
    const memory_config *cfg;
    bool run_completed;             /* the run ended completed */
    atomic_bool *in_progress;       /* the session's flag (gate 2) */
    const provider_port *model;     /* the run's model port */
    const provider_config *provider;
    const loom_cancel *cancel;
    int64_t now_ms;
    int64_t tokens_left;            /* under the run's token cap; < 0: no cap */
} memory_extract_env;

/* Runs the gates and the extraction. NULL when gate 1 is closed (nothing
 * to report); else a new object {"status": "skipped"|"extracted"|"failed",
 * "reason"? (why skipped or failed), "written", "merged", "replaced",
 * "dropped"}. The helper call's usage is added to *usage. */
json_t *memory_extract_run(const memory_extract_env *env, msg_usage *usage);

/* The extractor's instructions (its system prompt names it "memory
 * extractor", which scripted tests match on). */
extern const char memory_extract_system[];

#endif

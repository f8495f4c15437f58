/* helper_call.h — the one model call memory makes (the extractor, and the
 * selector when a model is configured).
 *
 * Isolated from the agent the way compaction's request is (context/
 * compact.h, seed 001 §7.1 rule 2): no tools, its own system prompt, one
 * user message, the agent's provider with the model swapped, its own
 * output cap. Kept behind this one function so a general helper-call
 * module (purposes, tiers, breaker, cost attribution) can take it over by
 * changing this file alone. No state; the caller's thread. */
#ifndef LOOM_EXT_MEMORY_HELPER_CALL_H
#define LOOM_EXT_MEMORY_HELPER_CALL_H

#include "base/cancel.h"
#include "base/error.h"
#include "message/message.h"
#include "provider/provider.h"

typedef struct memory_helper_req {
    const provider_port *port;     /* zeroed or NULL: the real provider */
    const provider_config *agent;  /* the agent's provider */
    const char *model;             /* NULL: the agent's model */
    int max_tokens;
    const char *system;
    const char *user;
    const char *cache_key;         /* the session id (may be NULL) */
    const char *purpose;           /* "memory_extraction", "memory_selection" */
} memory_helper_req;

/* 0 with *text (the reply's text, caller frees) and *usage (added to: the
 * caller counts it against the run) set; -1 with err. */
int memory_helper_call(const memory_helper_req *r, const loom_cancel *cancel, char **text,
                       msg_usage *usage, loom_error *err);

#endif

/* helper_call.h — the one model call memory makes (the extractor, and the
 * selector when a model is configured).
 *
 * Isolated from the agent the way compaction's request is (context/
 * compact.h, seed 001 §7.1 rule 2): no tools, its own system prompt, one
 * user message, the agent's provider with the model swapped, its own
 * output cap. With the session's helper router (provider/helper.h) the
 * call is one of its purposes: routed by helperModels/modelTiers (the
 * memory settings' own model, when set, overrides the chain), timed out,
 * behind the purpose's breaker, and recorded — its tokens and cost reach
 * the run when the router's records are settled, not through *usage. No
 * state; the caller's thread. */
#ifndef LOOM_EXT_MEMORY_HELPER_CALL_H
#define LOOM_EXT_MEMORY_HELPER_CALL_H

#include "base/cancel.h"
#include "base/error.h"
#include "message/message.h"
#include "provider/helper.h"
#include "provider/provider.h"

typedef struct memory_helper_req {
    const provider_port *port;     /* zeroed or NULL: the real provider */
    const provider_config *agent;  /* the agent's provider */
    const char *model;             /* NULL: the agent's model */
    int max_tokens;
    const char *system;
    const char *user;
    const char *cache_key;         /* the session id (may be NULL) */
    helper_purpose purpose;        /* HELPER_MEMORY_EXTRACT or HELPER_MEMORY_SELECT */
    helper_router *router;         /* the session's; NULL: a plain provider call */
} memory_helper_req;

/* 0 with *text (the reply's text, caller frees) set, and, without a
 * router, the call's tokens added to *usage (the caller counts them against
 * the run; with one, the router's record carries them); -1 with err. */
int memory_helper_call(const memory_helper_req *r, const loom_cancel *cancel, char **text,
                       msg_usage *usage, loom_error *err);

#endif

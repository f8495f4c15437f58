/* helper.h — helper ("meta") model calls: every model call Loom makes that
 * is not a turn of the agent itself (seed 001 §7.2) goes through here.
 *
 * A call declares its purpose (compaction, the permission classifier, a
 * prompt hook, …). The purpose picks a model tier — lite, main or
 * reasoning — and the tier a model, through one chain (§5):
 *
 *   helperModels.<purpose>   a tier name or a model (alias or id)
 *   → modelTiers.<tier>      a model (alias or id)
 *   → the provider's default for that tier (helper_default_model)
 *   → the main model.
 *
 * The call gets the purpose's own timeout and output cap, temperature 0
 * where the purpose is a judgment and the model takes it, an effort level
 * mapped into the provider's dialect (effort.h), at most one retry, and a
 * circuit breaker per purpose: HELPER_BREAKER_FAILURES failures in a row
 * open it for the cooldown, and while it is open the call fails at once
 * with LOOM_ERR_MODEL_UNAVAILABLE and "circuit breaker open" in the
 * message, so the caller takes its fallback (ask the user, skip the hook,
 * keep the history) and the run goes on (§7.2.4 gates ①②④⑤).
 *
 * Every call, answered, failed or refused by its breaker, leaves a record
 * (helper_record) in the router's queue. The loop takes its own records at
 * its boundaries (helper_router_take): their tokens and cost into the run's
 * usage, budget and cost, a model.usage event naming the purpose, a
 * `helper-call` record in the session and a line in the audit log. A
 * caller that accounts the tokens itself (compaction, through the context
 * port) marks the call `counted`: its record is still written, its tokens
 * not added twice.
 *
 * Ownership: the router belongs to a session (api/session.c) and outlives
 * its runs and sub-agents, which borrow it. Threading: every function may
 * be called from any thread (tool-pool threads judge calls at once, a
 * background compaction has its own); one mutex guards the breakers and
 * the queue, never held across the model call. */
#ifndef LOOM_PROVIDER_HELPER_H
#define LOOM_PROVIDER_HELPER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/error.h"
#include "message/message.h"
#include "provider/effort.h"
#include "provider/provider.h"

typedef enum helper_purpose {
    HELPER_COMPACTION,            /* the summary that replaces the history (main tier) */
    HELPER_PERMISSION_CLASSIFIER, /* auto mode's second opinion on a tool call */
    HELPER_WEBFETCH,              /* a question over a fetched page */
    HELPER_TITLE,                 /* a session's title */
    HELPER_MEMORY_EXTRACT,        /* what a run leaves in memory */
    HELPER_MEMORY_SELECT,         /* which memories a run starts with */
    HELPER_HOOK_PROMPT,           /* a `type: "prompt"` hook's judgment */
    HELPER_HOOK_AGENT,            /* a `type: "agent"` hook's sub-agent (accounted by its tree) */
    HELPER_PURPOSE_COUNT
} helper_purpose;

typedef enum helper_tier {
    HELPER_TIER_DEFAULT = -1,     /* the purpose's own */
    HELPER_TIER_LITE,
    HELPER_TIER_MAIN,
    HELPER_TIER_REASONING,
    HELPER_TIER_COUNT
} helper_tier;

/* Consecutive failures that open a purpose's breaker, and for how long. */
#define HELPER_BREAKER_FAILURES 3
#define HELPER_BREAKER_COOLDOWN_MS 60000L

/* "compaction", "permission_classifier", "webfetch", "title",
 * "memory_extract", "memory_select", "hook_prompt", "hook_agent": the names
 * in settings, events, session records, the audit and `loom stats`. */
const char *helper_purpose_name(helper_purpose p);
int helper_purpose_parse(const char *name, helper_purpose *out);
const char *helper_tier_name(helper_tier t);   /* "lite", "main", "reasoning" */
int helper_tier_parse(const char *name, helper_tier *out);
helper_tier helper_purpose_tier(helper_purpose p); /* the purpose's default tier */
long helper_purpose_timeout_ms(helper_purpose p);

/* The provider default table: the model a tier stands for beside a main
 * model (claude-* → claude-haiku-5-5 / claude-opus-5-5, gpt-5* →
 * gpt-5-mini / gpt-5, gpt-4.1* → gpt-4.1-mini / o3); NULL when the table
 * has no row (then the main model serves the tier). Main is always NULL. */
const char *helper_default_model(const char *main_model, helper_tier tier);

/* One finished call, as the loop and the session see it. Owned by the
 * router's queue until taken; free with helper_record_free. */
typedef struct helper_record {
    helper_purpose purpose;
    helper_tier tier;
    char *model;                /* the model asked ("" when the breaker refused before) */
    char *status;               /* "ok", "error", "breaker_open", "off" */
    char *error;                /* the failure's message; NULL when ok */
    char *correlation;          /* the tool call judged, …; NULL: none */
    char *tool;                 /* the tool call it concerns; NULL: none */
    msg_usage usage;            /* raw NULL */
    int64_t duration_ms;
    bool counted;               /* the caller adds the tokens to the run itself */
    const void *owner;          /* whose run takes it (a governance); NULL: the session's */
} helper_record;

void helper_record_free(helper_record *r);
/* {"purpose","tier","model","status","error"?,"correlationId"?,"tool"?,
 *  "usage":{…},"durationMs"} — the `helper-call` record's fields and the
 * audit line's (cost added by the caller, who knows the prices). New ref. */
json_t *helper_record_json(const helper_record *r);

typedef struct helper_router helper_router;

/* main is borrowed: the session's provider configuration (model, endpoint,
 * key), which must outlive the router. */
helper_router *helper_router_new(const provider_config *main);
void helper_router_free(helper_router *r);

/* The settings: every document (may be NULL; later documents win, so pass
 * user, project, local) may hold
 *   "modelTiers":   {"lite": MODEL, "reasoning": MODEL, "main": MODEL}
 *   "helperModels": {PURPOSE: TIER|MODEL | false | {"model": TIER|MODEL,
 *                    "effort": EFFORT, "timeout": SECONDS}}
 * (false turns the purpose off: its calls fail at once, status "off", and
 * the caller takes its fallback — seed 001 §7.2.4's switches).
 * 0, or -LOOM_ERR_INVALID_REQUEST with err naming the file and key
 * (names[i] labels docs[i]). Call before the router is shared. */
int helper_router_configure(helper_router *r, json_t *const *docs, const char *const *names,
                            size_t n, loom_error *err);

/* The port calls without their own (helper_spec.port) go through; NULL or
 * zeroed: provider_complete. Tests hand in a fake model. Copied. */
void helper_router_set_port(helper_router *r, const provider_port *port);

/* The model a call of purpose would go to (tier_override: a tier, or
 * HELPER_TIER_DEFAULT; model_override: a hook's `model`, a tier name or a
 * model, NULL: none). *tier_out (may be NULL) gets the tier resolved.
 * Borrowed; valid while the router lives. */
const char *helper_resolve(const helper_router *r, helper_purpose p, helper_tier tier_override,
                           const char *model_override, helper_tier *tier_out);

/* What one call asks for besides its request. */
typedef struct helper_spec {
    helper_purpose purpose;
    helper_tier tier;               /* HELPER_TIER_DEFAULT: the purpose's */
    const char *model;              /* an override (a hook's "model"); NULL: the chain's */
    long timeout_ms;                /* 0: the settings', else the purpose's */
    helper_effort effort;           /* HELPER_EFFORT_DEFAULT: the settings', else none */
    bool judgment;                  /* temperature 0 where the model takes it */
    /* The configuration to call with (a fallback model's, a sub-agent's);
     * NULL: the router's main. Only its endpoint, key and limits are used
     * when the chain names another model. */
    const provider_config *base;
    const provider_port *port;      /* NULL/zeroed: provider_complete (tests: a fake) */
    const provider_stream_sink *sink;
    bool counted;                   /* see helper_record.counted */
    const void *owner;              /* see helper_record.owner */
    const char *correlation, *tool;
} helper_spec;

/* One helper call: req->model, max_tokens (when unset), temperature and
 * the effort are filled from the route; the breaker is consulted and
 * updated; a record is queued. 0 with *out filled (free with
 * msg_response_free), or -code with err set — the message of an open
 * breaker says "circuit breaker open". r NULL: the call goes straight to
 * the provider with req as it is (no route, no breaker, no record). */
int helper_call(helper_router *r, const helper_spec *spec, msg_request *req,
                const loom_cancel *cancel, msg_response *out, loom_error *err);

/* For a helper that is not one model call (an agent hook's sub-agent,
 * whose loop makes the calls): helper_admit consults spec's breaker — 0, or
 * -code with err set and a breaker_open record queued — and helper_done
 * notes the outcome (rc 0 or not) in the breaker and queues a record of
 * model and usage (mark it spec->counted when the tokens are accounted
 * elsewhere). */
int helper_admit(helper_router *r, const helper_spec *spec, loom_error *err);
void helper_done(helper_router *r, const helper_spec *spec, const char *model,
                 const msg_usage *usage, int rc, const loom_error *err, int64_t duration_ms);

/* Moves the queued records of owner (and, when include_unowned, those
 * without one) into *out (malloc'd array, *n entries; caller frees each
 * with helper_record_free and the array with free). */
void helper_router_take(helper_router *r, const void *owner, bool include_unowned,
                        helper_record **out, size_t *n);

/* Whether settings route purpose (helperModels.<purpose> is set): a
 * purpose whose call is optional (WebFetch's question) is asked only then. */
bool helper_routed(const helper_router *r, helper_purpose p);

/* For tests and /status: whether purpose's breaker is open now. */
bool helper_breaker_open(helper_router *r, helper_purpose p);

#endif

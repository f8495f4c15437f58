/* auto_classifier.c — auto mode's two stages (docs/permissions.md §4,
 * "auto"): the rules first — the risk classifier and the decision table,
 * which settle everything they can without a model (pipeline.c asks this
 * file only for a call the table leaves on `auto.undecided`) — then the
 * model, through model_classify (policy/model_classifier.h: the one
 * function that makes the call, so it can be routed elsewhere later),
 * behind the session's circuit breaker (base/breaker.h). After
 * AUTO_BREAKER_FAILURES failed model answers in a row (unavailable, or an
 * answer that is not {"decision": …}) the breaker opens: calls go straight
 * to the person (or are denied headless) without asking the model, and
 * every AUTO_BREAKER_COOLDOWN such calls one is tried again. Threading: the
 * breaker is the root session's, shared with its sub-agents; it locks. */
#include <stdio.h>
#include <string.h>

#include "governance/governance.h"
#include "policy/model_classifier.h"

static breaker *root_breaker(governance *g)
{
    while (g->parent)
        g = (governance *)g->parent;
    return &g->classifier_breaker;
}

perm_verdict governance_classify(governance *g, const char *tool, const json_t *input,
                                 const char *cwd, const char *note, const loom_cancel *cancel,
                                 char *reason, size_t cap, msg_usage *usage, unsigned *calls)
{
    breaker *b = root_breaker(g);
    if (!g->classifier)
        return PERM_NONE;
    if (!breaker_allow(b)) {
        snprintf(reason, cap,
                 "the classifier model failed %u times in a row, so it is not asked for now "
                 "(its circuit breaker is open; it is tried again after %u calls)",
                 breaker_failures(b), (unsigned)AUTO_BREAKER_COOLDOWN);
        return PERM_ASK;
    }
    perm_verdict v = model_classify(g->classifier, tool, input, cwd, note, cancel, reason, cap,
                                    usage, calls);
    /* The model answers allow or deny; anything else is a failure of the
     * model, not a judgement of the call. A cancelled run says nothing
     * about the model. */
    if (v == PERM_ALLOW || v == PERM_DENY)
        breaker_success(b);
    else if (!(cancel && cancel_requested(cancel)) && breaker_failure(b)) {
        size_t n = strlen(reason);
        snprintf(reason + n, cap > n ? cap - n : 0,
                 "; after %u failures in a row the classifier is not asked for now",
                 (unsigned)AUTO_BREAKER_FAILURES);
    }
    return v;
}

/* model_classifier.h — auto mode's second opinion: the configured model,
 * asked as a security monitor whether one tool call should run.
 *
 * It fails closed: an error, a timeout or an answer that is not exactly
 * {"decision": "allow"|"deny", …} counts as "could not decide", which the
 * decision table turns into a question for the user — or a denial where
 * nobody can be asked. Never a silent allow. */
#ifndef LOOM_POLICY_MODEL_CLASSIFIER_H
#define LOOM_POLICY_MODEL_CLASSIFIER_H

#include <jansson.h>
#include <stddef.h>

#include "base/cancel.h"
#include "policy/perm_types.h"
#include "provider/provider.h"

/* The system prompt's first words; tests match the request on them. */
#define MODEL_CLASSIFIER_MARKER "You are a security monitor for an autonomous coding agent."

/* The request model_classify sends (exposed for tests): the system prompt,
 * the call, a 300-token cap, temperature 0 only for a model that takes it
 * (provider/models.h). The caller frees it with msg_request_free. */
void model_classifier_request(const provider_config *cfg, const char *tool,
                              const json_t *input, const char *cwd, const char *note,
                              msg_request *req);

struct helper_router;

/* One question to the classifier. Everything is borrowed for the call. */
typedef struct model_classify_call {
    const provider_config *cfg;     /* the session's model configuration */
    struct helper_router *helpers;  /* routes it (NULL: straight to cfg's model) */
    const void *owner;              /* whose run counts its tokens (a governance) */
    const char *call_id;            /* the tool call judged, for the usage record */
    const char *tool;
    const json_t *input;
    const char *cwd;
    const char *note;               /* may be NULL */
    const loom_cancel *cancel;
} model_classify_call;

/* PERM_ALLOW, PERM_DENY, or PERM_ASK when the model could not decide (the
 * reason says why). note is what the harness knows about the call that its
 * input does not say ("it reads outside the workspace…"), passed on to the
 * model. The call is a helper call of purpose permission_classifier
 * (provider/helper.h): its tokens and cost reach the run through the
 * helper's record, and an open breaker is "could not decide". */
perm_verdict model_classify(const model_classify_call *c, char *reason, size_t cap);

#endif

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

/* PERM_ALLOW, PERM_DENY, or PERM_ASK when the model could not decide (the
 * reason says why). note (may be NULL) is what the harness knows about the
 * call that its input does not say ("it reads outside the workspace…"),
 * passed on to the model. When the model answered, its token counts are added to
 * *usage (may be NULL; raw is left alone) and *calls incremented (may be
 * NULL): the caller owes them to the run's usage, budget and cost. */
/* The request model_classify sends (exposed for tests): the system prompt,
 * the call, a 300-token cap, temperature 0 only for a model that takes it
 * (provider/models.h). The caller frees it with msg_request_free. */
void model_classifier_request(const provider_config *cfg, const char *tool,
                              const json_t *input, const char *cwd, const char *note,
                              msg_request *req);

perm_verdict model_classify(const provider_config *cfg, const char *tool, const json_t *input,
                            const char *cwd, const char *note, const loom_cancel *cancel,
                            char *reason, size_t cap, msg_usage *usage, unsigned *calls);

#endif

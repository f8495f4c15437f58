/* elicit_form.h — an MCP server's elicitation, asked of the person at the
 * terminal: form mode field by field (the schema's title, description,
 * type, enum and default shown; an empty answer keeps the default), URL
 * mode as a link to open. The main thread, from the run view. */
#ifndef LOOM_CLI_ELICIT_FORM_H
#define LOOM_CLI_ELICIT_FORM_H

#include "surfaces/cli/repl.h"

/* The result JSON for elicitation/create (malloc'd): {"action": "accept",
 * "content": {…}}, {"action": "decline"} or {"action": "cancel"} (Ctrl-D
 * on a field cancels). */
char *elicit_person(repl *r, const char *server, const char *request_json);

#endif

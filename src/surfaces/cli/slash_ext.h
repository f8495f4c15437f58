/* slash_ext.h — the REPL's face of the agent's extensions (custom commands,
 * skills, MCP prompts): their part of /help, /skills, whether a typed
 * "/name args" is one of them, and the names Tab completes. Everything is
 * read from loom_agent_extensions_json and loom_session_mcp_prompts_json
 * (docs/repl.md); when the library gives no extensions document, there are
 * none. The main thread, between runs. */
#ifndef LOOM_CLI_SLASH_EXT_H
#define LOOM_CLI_SLASH_EXT_H

#include <stdbool.h>

#include "surfaces/cli/slash_host.h"

/* /help's sections after the built-ins: "Custom commands" and "Skills" (the
 * ones a person can type), each with argument hint, description and scope.
 * Nothing when there are none. */
void slash_ext_help(slash_host *r);
/* /skills: every skill, whether the model is offered it (and why not),
 * who may invoke it, its source; then the extensions' warnings and notices. */
void slash_skills(slash_host *r, const char *args);
/* Does line ("/name args…") name a custom command or a user-invocable
 * skill? Built-ins are the caller's to check first: they win. */
bool slash_ext_is_invocable(slash_host *r, const char *line);
/* The names after "/" that Tab completes besides the built-ins: custom
 * commands, user-invocable skills, MCP prompts (malloc'd, NULL-terminated;
 * free each and the array). */
char **slash_ext_names(slash_host *r);

#endif

/* slash_style.h — /output-style: the output styles (built-in and from
 * output-styles/ folders), the active one marked, and switching to one:
 * "outputStyle" is written to .loom/settings.local.json and the agent is
 * reopened, so the next request's system prompt holds the new style
 * (docs/output-styles.md). Through loom.h; the main thread, between runs. */
#ifndef LOOM_CLI_SLASH_STYLE_H
#define LOOM_CLI_SLASH_STYLE_H

#include "surfaces/cli/slash_host.h"

/* /output-style [NAME] */
void slash_output_style(slash_host *r, const char *args);

#endif

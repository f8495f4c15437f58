/* tool_search.h — ToolSearch: the tool that finds deferred MCP tools (seed
 * 001 §9; Claude Code's ToolSearch {query, max_results}).
 *
 * When the declared tools would take more than a share of the window, the
 * manager leaves the deferrable ones out and ToolSearch's description lists
 * them by name only, in the manager's order (so the text is stable and the
 * cached prefix survives). A search returns each hit's name, description
 * and input schema, and marks the hits found: they are declared from the
 * next request on.
 *
 * Query forms: "select:NAME[,NAME…]" picks exact names; "/regex/" matches
 * names and descriptions (case-insensitive, PCRE2); anything else is
 * keywords, ranked: a hit in the name weighs twice one in the description,
 * ties keep the given order, and "+word" makes a word required.
 *
 * Threading: the ranking is pure; the tool's run may be called from any
 * thread (the manager is thread-safe).
 */
#ifndef LOOM_EXT_MCP_TOOL_SEARCH_H
#define LOOM_EXT_MCP_TOOL_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "tools/tool.h"

struct mcp_manager;

#define TOOL_SEARCH_NAME "ToolSearch"
#define TOOL_SEARCH_DEFAULT_RESULTS 5
#define TOOL_SEARCH_MAX_RESULTS 20

/* One searchable tool. */
typedef struct tool_search_entry {
    const char *name;
    const char *description;
} tool_search_entry;

/* Ranks the n entries against query and writes the indexes of the best,
 * best first, at most max (0: TOOL_SEARCH_DEFAULT_RESULTS; capped at
 * TOOL_SEARCH_MAX_RESULTS), into out (room for TOOL_SEARCH_MAX_RESULTS).
 * Returns how many, or -1 with err set (an invalid regex, an empty query).
 * For select: every name found (max does not apply), in the order asked,
 * each once; unknown names are skipped. */
int tool_search_rank(const tool_search_entry *v, size_t n, const char *query, size_t max,
                     size_t *out, loom_error *err);

/* ToolSearch's description for these deferred tool names (caller frees). */
char *tool_search_description(const char *const *names, size_t n);

/* The ToolSearch tool for m's deferred tools as they are now (impl = m).
 * Free with tool_search_free. */
tool_def *tool_search_new(struct mcp_manager *m);
void tool_search_free(tool_def *d);

/* Whether to defer: the declared tools (MCP and built-in) would take more
 * than share of the window. Never with no MCP tokens, no window or a share
 * of 0 or less. */
bool tool_search_should_defer(int64_t mcp_tokens, int64_t builtin_tokens, int64_t window,
                              double share);

#endif

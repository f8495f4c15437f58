/* web_search.h — the WebSearch tool, with Claude Code's name and input
 * ({query, allowed_domains?, blocked_domains?}), on a search backend the
 * user configures ("webSearch" in the user's settings; docs/tools.md): an
 * HTTP JSON search API, or a tool of one of the session's MCP servers
 * (called through tool_ctx.mcp_call), whose answer is read the same way. Without one the tool is not offered. */
#ifndef LOOM_TOOLS_BUILTIN_WEB_SEARCH_H
#define LOOM_TOOLS_BUILTIN_WEB_SEARCH_H

#include <stddef.h>

#include "base/json.h"
#include "base/str.h"
#include "tools/tool.h"

#define WEB_SEARCH_MAX_RESULTS 20

typedef struct web_search_config {
    char *url;          /* http(s) URL with {query} where the query goes, URL-encoded;
                           NULL with an MCP backend */
    char *mcp_server;   /* the MCP backend ("mcp": "SERVER__TOOL"); NULL: the URL's */
    char *mcp_tool;
    char *query_arg;    /* the MCP tool's argument the query goes in ("query") */
    char **allowed;     /* NULL-terminated domains; NULL = any */
    char **blocked;     /* NULL-terminated domains; NULL = none */
    int max_results;    /* 1..WEB_SEARCH_MAX_RESULTS */
} web_search_config;

/* The "webSearch" settings object as a config: 0, or 1 with why set to
 * what is wrong, named by its key (file names the settings file). */
int web_search_config_parse(const json_t *v, const char *file, web_search_config *out,
                            loom_str *why);
void web_search_config_free(web_search_config *c);

/* The tool over a copy of cfg; free with web_search_tool_free. */
tool_def *web_search_tool_new(const web_search_config *cfg);
void web_search_tool_free(tool_def *t);

/* The results in a search API's answer, in order: SearXNG's
 * {"results": [{title, url, content}]}, Brave's {"web": {"results":
 * [{title, url, description}]}}, or a bare array of {title, url,
 * snippet}. A JSON array of {title, url, snippet} objects (strings, url
 * http(s)), or NULL with why set when the answer is none of those. */
json_t *web_search_results(const char *body, size_t len, loom_str *why);

/* Whether host is domain or one of its subdomains (case-insensitive). */
bool web_search_domain_match(const char *host, const char *domain);

#endif

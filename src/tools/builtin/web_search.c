/* web_search.c — WebSearch (web_search.h).
 *
 * The query goes to the search API the user configured, URL-encoded into
 * its {query}; the answer is read as one of the common JSON shapes and
 * reduced to title, URL and snippet per result. Domains are filtered here,
 * after the search, by the result URL's host: the settings' lists hold for
 * every call (a model's allowed_domains can only narrow them, never widen),
 * and the call's lists narrow further. The model sees the results as a
 * numbered list it can cite and WebFetch; the raw result keeps them as
 * JSON. Only the user's own settings name the backend (api/web_search.c):
 * a repository that could would read every query the model makes.
 */
#include "tools/builtin/web_search.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http.h"

#define WEB_SEARCH_BODY_MAX (2u * 1024 * 1024) /* bytes of an answer read at most */
#define WEB_SEARCH_SNIPPET_MAX 400             /* bytes of a snippet shown */
#define WEB_SEARCH_TIMEOUT_MS 30000L
#define WEB_SEARCH_QUERY_MAX 500

static const char web_search_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"query\":{\"type\":\"string\",\"minLength\":2,\"description\":\"The search query.\"},"
    "\"allowed_domains\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":"
    "\"Only include results from these domains (and their subdomains).\"},"
    "\"blocked_domains\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":"
    "\"Never include results from these domains.\"}},"
    "\"required\":[\"query\"],\"additionalProperties\":false}";

static const char web_search_description[] =
    "Searches the web and returns the results (title, URL, snippet), numbered. Use it for "
    "information past your knowledge or that changes (releases, documentation, news); then "
    "read a page with WebFetch. allowed_domains or blocked_domains narrow the results. Cite "
    "the URLs you use in your answer.";

/* ---- configuration ------------------------------------------------------ */

/* A domain as the lists hold it: lowercase letters, digits, '-' and '.',
 * not starting or ending with '.'. */
static bool domain_ok(const char *d)
{
    size_t n = strlen(d);
    if (n == 0 || n > 253 || d[0] == '.' || d[n - 1] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)d[i]) && d[i] != '-' && d[i] != '.')
            return false;
    return true;
}

/* A list of domains, lowercased; NULL for an absent or empty list. 0, or
 * 1 with why set naming key. */
static int domains_parse(const json_t *v, const char *where, const char *key, char ***out,
                         loom_str *why)
{
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v)) {
        str_printf(why, "%s%s must be a list of domains, like [\"example.com\"].", where, key);
        return 1;
    }
    size_t n = json_array_size(v);
    if (n == 0)
        return 0;
    char **list = xcalloc(n + 1, sizeof *list);
    for (size_t i = 0; i < n; i++) {
        const char *d = json_string_value(json_array_get(v, i));
        if (!d || !domain_ok(d)) {
            str_printf(why, "%s%s[%zu] is not a domain (letters, digits, '-' and '.', like "
                            "\"docs.example.com\").", where, key, i);
            strv_free(list);
            return 1;
        }
        list[i] = xstrdup(d);
        for (char *p = list[i]; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    }
    *out = list;
    return 0;
}

/* "SERVER__TOOL": the server and the tool of an MCP backend (split at the
 * first "__"); 0, or 1 when either part is empty. */
static int mcp_target(const char *v, char **server, char **tool)
{
    const char *sep = v ? strstr(v, "__") : NULL;
    if (!sep || sep == v || !sep[2])
        return 1;
    *server = xstrndup(v, (size_t)(sep - v));
    *tool = xstrdup(sep + 2);
    return 0;
}

int web_search_config_parse(const json_t *v, const char *file, web_search_config *out,
                            loom_str *why)
{
    memset(out, 0, sizeof *out);
    char where[512];
    snprintf(where, sizeof where, "%s: webSearch.", file ? file : "settings");
    if (!json_is_object(v)) {
        str_printf(why, "%.*s must be an object with a url or an mcp tool.",
                   (int)strlen(where) - 1, where);
        return 1;
    }
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        if (strcmp(key, "url") && strcmp(key, "mcp") && strcmp(key, "queryArgument") &&
            strcmp(key, "allowedDomains") && strcmp(key, "blockedDomains") &&
            strcmp(key, "maxResults")) {
            str_printf(why, "%s%s is not a webSearch setting (url, mcp, queryArgument, "
                            "allowedDomains, blockedDomains, maxResults).", where, key);
            return 1;
        }
    }
    const char *url = json_get_str(v, "url", NULL);
    const json_t *mcp = json_object_get(v, "mcp");
    if (mcp && json_object_get(v, "url")) {
        str_printf(why, "%smcp and url cannot both be given: one search backend.", where);
        return 1;
    }
    if (mcp) {
        if (mcp_target(json_string_value(mcp), &out->mcp_server, &out->mcp_tool) != 0) {
            str_printf(why, "%smcp must name an MCP server's tool as \"SERVER__TOOL\", like "
                            "\"search__web_search\".", where);
            return 1;
        }
        const json_t *qa = json_object_get(v, "queryArgument");
        if (qa && (!json_is_string(qa) || !*json_string_value(qa))) {
            str_printf(why, "%squeryArgument must be the name of the MCP tool's query argument, "
                            "like \"query\".", where);
            web_search_config_free(out);
            return 1;
        }
        out->query_arg = xstrdup(qa ? json_string_value(qa) : "query");
    } else if (json_object_get(v, "queryArgument")) {
        str_printf(why, "%squeryArgument is only for an mcp backend.", where);
        return 1;
    } else if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) ||
               !strstr(url, "{query}")) {
        str_printf(why, "%surl must be an http(s) URL with {query} where the query goes, like "
                        "\"https://search.example/api?q={query}&format=json\" (or name an MCP "
                        "tool with mcp).", where);
        return 1;
    }
    const json_t *max = json_object_get(v, "maxResults");
    out->max_results = 10;
    if (max) {
        if (!json_is_integer(max) || json_integer_value(max) < 1 ||
            json_integer_value(max) > WEB_SEARCH_MAX_RESULTS) {
            str_printf(why, "%smaxResults must be a whole number from 1 to %d.", where,
                       WEB_SEARCH_MAX_RESULTS);
            web_search_config_free(out);
            return 1;
        }
        out->max_results = (int)json_integer_value(max);
    }
    if (domains_parse(json_object_get(v, "allowedDomains"), where, "allowedDomains",
                      &out->allowed, why) ||
        domains_parse(json_object_get(v, "blockedDomains"), where, "blockedDomains",
                      &out->blocked, why)) {
        web_search_config_free(out);
        return 1;
    }
    out->url = mcp ? NULL : xstrdup(url);
    return 0;
}

void web_search_config_free(web_search_config *c)
{
    free(c->url);
    free(c->mcp_server);
    free(c->mcp_tool);
    free(c->query_arg);
    strv_free(c->allowed);
    strv_free(c->blocked);
    memset(c, 0, sizeof *c);
}

/* ---- results ------------------------------------------------------------ */

bool web_search_domain_match(const char *host, const char *domain)
{
    size_t h = strlen(host), d = strlen(domain);
    if (h < d || strcasecmp(host + h - d, domain) != 0)
        return false;
    return h == d || host[h - d - 1] == '.';
}

/* The host of an http(s) URL, lowercased, without port or user; NULL when
 * it is none. */
static char *url_host(const char *url)
{
    const char *p = !strncasecmp(url, "https://", 8)  ? url + 8
                    : !strncasecmp(url, "http://", 7) ? url + 7
                                                      : NULL;
    if (!p)
        return NULL;
    size_t n = strcspn(p, "/?#");
    const char *at = memchr(p, '@', n);
    if (at) {
        n -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    size_t h = p[0] == '[' ? strcspn(p, "]") + 1 : strcspn(p, ":/?#");
    if (h > n)
        h = n;
    if (h == 0)
        return NULL;
    char *host = xstrndup(p, h);
    for (char *c = host; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return host;
}

static const char *first_str(const json_t *o, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++) {
        const char *s = json_get_str(o, keys[i], NULL);
        if (s)
            return s;
    }
    return "";
}

json_t *web_search_results(const char *body, size_t len, loom_str *why)
{
    json_error_t e;
    json_t *root = json_loadb(body, len, 0, &e);
    if (!root) {
        str_printf(why, "the answer is not JSON (line %d: %s)", e.line, e.text);
        return NULL;
    }
    const json_t *list = json_is_array(root) ? root : json_object_get(root, "results");
    if (!json_is_array(list))
        list = json_object_get(json_object_get(root, "web"), "results");
    if (!json_is_array(list)) {
        str_puts(why, "the answer has no results list (expected \"results\": [...], "
                      "\"web\": {\"results\": [...]} or a list)");
        json_decref(root);
        return NULL;
    }
    static const char *const title_keys[] = {"title", "name", NULL};
    static const char *const url_keys[] = {"url", "link", NULL};
    static const char *const snippet_keys[] = {"content", "description", "snippet", NULL};
    json_t *out = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r)
    {
        const char *url = first_str(r, url_keys);
        char *host = url_host(url);
        if (!host)
            continue; /* not a web page the model could fetch */
        free(host);
        json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "title", first_str(r, title_keys),
                                             "url", url, "snippet", first_str(r, snippet_keys)));
    }
    json_decref(root);
    return out;
}

/* ---- the tool ------------------------------------------------------------ */

typedef struct web_search_tool {
    tool_def def;
    web_search_config cfg;
} web_search_tool;

static void url_encode(loom_str *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '.' || *p == '_' || *p == '~')
            str_putc(out, (char)*p);
        else
            str_printf(out, "%%%02X", *p);
    }
}

static char *search_url(const char *tmpl, const char *query)
{
    loom_str u = LOOM_STR_INIT;
    for (const char *p = tmpl; *p;) {
        const char *at = strstr(p, "{query}");
        if (!at) {
            str_puts(&u, p);
            break;
        }
        str_append(&u, p, (size_t)(at - p));
        url_encode(&u, query);
        p = at + 7;
    }
    return str_steal(&u);
}

static bool listed(char *const *list, const char *host)
{
    for (size_t i = 0; list && list[i]; i++)
        if (web_search_domain_match(host, list[i]))
            return true;
    return false;
}

/* Whether a result's host passes every list: the settings' and the call's
 * allowed (each, when given), and none of their blocked. */
static bool kept(const web_search_config *c, char *const *allow, char *const *block,
                 const char *url)
{
    char *host = url_host(url);
    bool ok = host && (!c->allowed || listed(c->allowed, host)) && (!allow || listed(allow, host)) &&
              !listed(c->blocked, host) && !listed(block, host);
    free(host);
    return ok;
}

typedef struct answer {
    loom_str body;
    bool too_big;
} answer;

static int on_body(void *ctx, const char *data, size_t len)
{
    answer *a = ctx;
    if (a->body.len + len > WEB_SEARCH_BODY_MAX) {
        a->too_big = true;
        return -1;
    }
    str_append(&a->body, data, len);
    return 0;
}

static int web_search_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    (void)ctx;
    const char *q = json_get_str(input, "query", NULL);
    if (!q || strlen(q) < 2) {
        str_puts(why, "query is required: at least 2 characters.");
        return 1;
    }
    if (strlen(q) > WEB_SEARCH_QUERY_MAX) {
        str_printf(why, "query is longer than %d characters; search for fewer words.",
                   WEB_SEARCH_QUERY_MAX);
        return 1;
    }
    const json_t *a = json_object_get(input, "allowed_domains");
    const json_t *b = json_object_get(input, "blocked_domains");
    if (json_array_size(a) && json_array_size(b)) {
        str_puts(why, "Give allowed_domains or blocked_domains, not both.");
        return 1;
    }
    char **l = NULL;
    int rc = domains_parse(a, "", "allowed_domains", &l, why);
    strv_free(l);
    if (!rc) {
        rc = domains_parse(b, "", "blocked_domains", &l, why);
        strv_free(l);
    }
    return rc;
}

/* The HTTP backend: the results of the configured URL's answer, or NULL
 * with the error result set. */
static json_t *search_http(const web_search_tool *t, const char *query, tool_ctx *ctx,
                           tool_result *out)
{
    char *url = search_url(t->cfg.url, query);
    static const char *const headers[] = {"Accept: application/json", NULL};
    long budget = ctx->timeout_ms > 0 && ctx->timeout_ms < WEB_SEARCH_TIMEOUT_MS
                      ? ctx->timeout_ms
                      : WEB_SEARCH_TIMEOUT_MS;
    http_request req = {.method = "GET", .url = url, .headers = headers,
                        .connect_timeout_ms = 10000, .idle_timeout_ms = budget,
                        .total_timeout_ms = budget, .cancel = ctx->cancel};
    answer a = {LOOM_STR_INIT, false};
    http_response resp;
    memset(&resp, 0, sizeof resp);
    loom_error err;
    loom_str why = LOOM_STR_INIT;
    int rc = http_perform(&req, on_body, &a, &resp, &err);
    json_t *results = NULL;
    if (a.too_big)
        tool_error(out, "The search service's answer was larger than %u bytes.", WEB_SEARCH_BODY_MAX);
    else if (rc != 0)
        tool_error(out, "The search failed: %s", err.message);
    else if (resp.status < 200 || resp.status >= 300)
        tool_error(out, "The search service answered HTTP %ld.", resp.status);
    else if (!(results = web_search_results(a.body.ptr ? a.body.ptr : "", a.body.len, &why)))
        tool_error(out, "The search service's answer could not be read: %s.", str_cstr(&why));
    http_response_free(&resp);
    str_free(&a.body);
    str_free(&why);
    free(url);
    return results;
}

/* The MCP backend: the configured tool called with {queryArgument: query};
 * its structuredContent, else its text blocks joined, read as a search
 * API's answer (web_search_results). NULL with the error result set. */
static json_t *search_mcp(const web_search_tool *t, const char *query, tool_ctx *ctx,
                          tool_result *out)
{
    if (!ctx->mcp_call) {
        tool_error(out, "WebSearch searches through MCP server \"%s\", which this session "
                        "does not have: add it to your MCP configuration.", t->cfg.mcp_server);
        return NULL;
    }
    loom_str why = LOOM_STR_INIT, text = LOOM_STR_INIT;
    json_t *args = json_pack("{s:s}", t->cfg.query_arg, query);
    json_t *res = ctx->mcp_call(ctx->mcp_ctx, t->cfg.mcp_server, t->cfg.mcp_tool, args,
                                ctx->cancel, &why);
    json_t *results = NULL;
    const json_t *sc = json_object_get(res, "structuredContent");
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(res, "content"), i, b)
    {
        if (!strcmp(json_get_str(b, "type", ""), "text"))
            str_puts(&text, json_get_str(b, "text", ""));
    }
    if (!res) {
        tool_error(out, "The search through MCP tool %s__%s failed: %s", t->cfg.mcp_server,
                   t->cfg.mcp_tool, str_cstr(&why));
    } else if (json_is_true(json_object_get(res, "isError"))) {
        tool_error(out, "The MCP search tool %s__%s answered with an error: %.500s",
                   t->cfg.mcp_server, t->cfg.mcp_tool, text.len ? text.ptr : "(no text)");
    } else {
        char *body = sc ? json_dumps(sc, JSON_COMPACT) : NULL;
        const char *src = body ? body : str_cstr(&text);
        if (strlen(src) > WEB_SEARCH_BODY_MAX)
            tool_error(out, "The MCP search tool's answer was larger than %u bytes.",
                       WEB_SEARCH_BODY_MAX);
        else if (!(results = web_search_results(src, strlen(src), &why)))
            tool_error(out, "The MCP search tool %s__%s's answer could not be read: %s.",
                       t->cfg.mcp_server, t->cfg.mcp_tool, str_cstr(&why));
        free(body);
    }
    json_decref(res);
    str_free(&why);
    str_free(&text);
    return results;
}

static void render(const web_search_tool *t, const char *query, json_t *results,
                   char *const *allow, char *const *block, tool_result *out)
{
    json_t *shown = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r)
    {
        if ((int)json_array_size(shown) >= t->cfg.max_results)
            break;
        if (kept(&t->cfg, allow, block, json_get_str(r, "url", "")))
            json_array_append(shown, r);
    }
    str_printf(&out->text, "Web search results for \"%s\":\n", query);
    json_array_foreach(shown, i, r)
    {
        const char *snip = json_get_str(r, "snippet", "");
        size_t n = strlen(snip);
        while (n > WEB_SEARCH_SNIPPET_MAX ||
               (n < strlen(snip) && ((unsigned char)snip[n] & 0xC0) == 0x80))
            n--; /* cut on a character boundary */
        str_printf(&out->text, "\n%zu. %s\n   %s\n", i + 1, json_get_str(r, "title", ""),
                   json_get_str(r, "url", ""));
        if (n)
            str_printf(&out->text, "   %.*s%s\n", (int)n, snip, n < strlen(snip) ? "…" : "");
    }
    if (json_array_size(shown) == 0)
        str_printf(&out->text, "\nNo results%s.\n",
                   json_array_size(results) ? " from the allowed domains" : "");
    out->raw = json_pack("{s:s, s:o, s:I}", "query", query, "results", shown, "filtered",
                         (json_int_t)(json_array_size(results) - json_array_size(shown)));
}

static int web_search_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const web_search_tool *t = ctx->self->impl;
    loom_str why = LOOM_STR_INIT;
    if (web_search_validate(input, ctx, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
        str_free(&why);
        return 0;
    }
    const char *query = json_get_str(input, "query", "");
    char **allow = NULL, **block = NULL;
    domains_parse(json_object_get(input, "allowed_domains"), "", "allowed_domains", &allow, &why);
    domains_parse(json_object_get(input, "blocked_domains"), "", "blocked_domains", &block, &why);
    json_t *results = t->cfg.mcp_server ? search_mcp(t, query, ctx, out)
                                        : search_http(t, query, ctx, out);
    if (results)
        render(t, query, results, allow, block, out);
    json_decref(results);
    strv_free(allow);
    strv_free(block);
    str_free(&why);
    return 0;
}

tool_def *web_search_tool_new(const web_search_config *cfg)
{
    web_search_tool *t = xcalloc(1, sizeof *t);
    t->cfg.url = xstrdup(cfg->url);
    t->cfg.mcp_server = xstrdup(cfg->mcp_server);
    t->cfg.mcp_tool = xstrdup(cfg->mcp_tool);
    t->cfg.query_arg = xstrdup(cfg->query_arg);
    t->cfg.max_results = cfg->max_results;
    for (int k = 0; k < 2; k++) {
        char *const *src = k ? cfg->blocked : cfg->allowed;
        size_t n = 0;
        while (src && src[n])
            n++;
        char **dst = n ? xcalloc(n + 1, sizeof *dst) : NULL;
        for (size_t i = 0; i < n; i++)
            dst[i] = xstrdup(src[i]);
        if (k)
            t->cfg.blocked = dst;
        else
            t->cfg.allowed = dst;
    }
    t->def = (tool_def){
        .name = "WebSearch",
        .description = web_search_description,
        .input_schema = web_search_schema,
        .read_only = true,
        .concurrency_safe = true,
        .sends_out = true,
        .validate = web_search_validate,
        .run = web_search_run,
        .impl = t,
    };
    return &t->def;
}

void web_search_tool_free(tool_def *def)
{
    if (!def)
        return;
    web_search_tool *t = def->impl;
    web_search_config_free(&t->cfg);
    free(t);
}

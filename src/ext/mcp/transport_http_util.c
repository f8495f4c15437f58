/* transport_http_util.c — the helpers both MCP HTTP transports share (see
 * the header): header-safety checks, URLs for messages, the configured
 * headers, and the legacy endpoint's resolution.
 *
 * Pure; no threads, no I/O.
 */
#include "ext/mcp/transport_http_util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "base/str.h"

bool mcp_http_token_ok(const char *s)
{
    size_t n = 0;
    if (!s || !*s)
        return false;
    for (; s[n]; n++)
        if ((unsigned char)s[n] < 0x21 || (unsigned char)s[n] > 0x7e || n >= 1024)
            return false;
    return true;
}

/* Length of "scheme://authority" in url, 0 when it has none we accept. */
static size_t origin_len(const char *url)
{
    size_t skip;
    if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    else
        return 0;
    size_t auth = strcspn(url + skip, "/?#");
    return auth ? skip + auth : 0;
}

bool mcp_http_url_ok(const char *url)
{
    if (!url || !origin_len(url))
        return false;
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= 0x20 || *p == 0x7f)
            return false;
    return true;
}

char *mcp_http_where(const char *url)
{
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t auth_len = strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', auth_len);
    loom_str s = LOOM_STR_INIT;
    if (sep)
        str_append(&s, url, (size_t)(sep + 3 - url));
    if (at) {
        auth_len -= (size_t)(at + 1 - auth);
        auth = at + 1;
    }
    str_append(&s, auth, auth_len);
    const char *path = auth + auth_len;
    str_append(&s, path, strcspn(path, "?#"));
    return str_steal(&s);
}

void mcp_http_snippet(const char *body, char *out, size_t cap)
{
    size_t n = 0;
    const char *p = body ? body : "";
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    for (; *p && n + 1 < cap; p++)
        out[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

static bool is_token(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
            return false;
    return true;
}

void mcp_http_free_lines(char **lines)
{
    for (char **c = lines; c && *c; c++)
        free(*c);
    free(lines);
}

int mcp_http_config_headers(const char *server, const json_t *headers,
                            const char *const *reserved, char ***out, loom_error *err)
{
    *out = NULL;
    if (!headers || json_is_null(headers))
        return 0;
    if (!json_is_object(headers))
        return loom_error_set(err, LOOM_ERR_CONFIG, "MCP server \"%s\": headers must be an object",
                              server);
    char **lines = xcalloc(json_object_size(headers) + 1, sizeof *lines);
    size_t n = 0;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)headers, name, v) {
        const char *val = json_string_value(v);
        if (!is_token(name) || !val || strpbrk(val, "\r\n")) {
            mcp_http_free_lines(lines);
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "MCP server \"%s\": header \"%s\" is not a valid name with a "
                                  "one-line string value",
                                  server, name);
        }
        bool skip = false;
        for (const char *const *r = reserved; r && *r; r++)
            skip = skip || strcasecmp(*r, name) == 0;
        if (skip) {
            LOG_W("mcp", "MCP server \"%s\": header \"%s\" is set by the transport; the "
                  "configured one is ignored", server, name);
            continue;
        }
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "%s: %s", name, val);
        lines[n++] = str_steal(&s);
    }
    if (!n) {
        free(lines);
        return 0;
    }
    *out = lines;
    return 0;
}

char *mcp_http_resolve_endpoint(const char *sse_url, const char *endpoint)
{
    size_t olen = origin_len(sse_url);
    if (!olen || !endpoint || !*endpoint)
        return NULL;
    for (const char *p = endpoint; *p; p++)
        if ((unsigned char)*p <= 0x20 || *p == 0x7f)
            return NULL;
    if (strstr(endpoint, "://")) {
        size_t elen = origin_len(endpoint);
        /* Another origin would have us send our messages (and our configured
         * headers, often a key) somewhere the user never named. */
        if (elen != olen || strncasecmp(endpoint, sse_url, olen) != 0)
            return NULL;
        return xstrdup(endpoint);
    }
    if (endpoint[0] == '/' && endpoint[1] == '/')
        return NULL; /* scheme-relative: another host */
    loom_str s = LOOM_STR_INIT;
    str_append(&s, sse_url, olen);
    if (endpoint[0] == '/') {
        str_puts(&s, endpoint);
    } else {
        /* Relative to the SSE URL's directory. */
        const char *path = sse_url + olen;
        size_t plen = strcspn(path, "?#");
        const char *slash = plen ? memrchr(path, '/', plen) : NULL;
        if (slash)
            str_append(&s, path, (size_t)(slash - path) + 1);
        else
            str_putc(&s, '/');
        if (endpoint[0] == '?') {
            str_truncate(&s, olen);
            str_append(&s, path, plen);
        }
        str_puts(&s, endpoint);
    }
    return str_steal(&s);
}

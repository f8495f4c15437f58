/* resources.c — MCP resources for the model: ListMcpResources,
 * ReadMcpResource and @server:uri mentions (see resources.h).
 *
 * Owns the heap tool_defs it makes. Everything a server sends is untrusted:
 * lists are walked with a page and item cap, fields of the wrong type are
 * skipped, text is sanitized and capped. Threading: any thread.
 */
#include "ext/mcp/resources.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "ext/mcp/manager.h"
#include "ext/mcp/output.h"

/* A server whose list never ends (or repeats a cursor) is cut off here. */
#define RES_MAX_PAGES 50
#define RES_MAX_ITEMS 2000
/* Per listed field: descriptions are for picking, not reading. */
#define RES_FIELD_MAX 500
#define RES_URI_MAX 2000

/* ---- listing ------------------------------------------------------------ */

/* Every page of a list method joined (new reference), or NULL with err. */
static json_t *list_all(struct mcp_manager *m, const char *server, const char *method,
                        const char *key, const loom_cancel *cancel, loom_error *err)
{
    mcp_call_opts o = {.cancel = cancel};
    json_t *all = json_array();
    char *cursor = NULL;
    for (int page = 0; page < RES_MAX_PAGES && json_array_size(all) < RES_MAX_ITEMS; page++) {
        json_t *params = cursor ? json_pack("{s:s}", "cursor", cursor) : NULL;
        json_t *r = mcp_manager_request(m, server, method, params, &o, err);
        if (!r) {
            free(cursor);
            json_decref(all);
            return NULL;
        }
        json_t *items = json_object_get(r, key);
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            if (json_array_size(all) >= RES_MAX_ITEMS)
                break;
            if (json_is_object(it))
                json_array_append(all, it);
        }
        const char *next = json_string_value(json_object_get(r, "nextCursor"));
        bool more = next && *next && (!cursor || strcmp(next, cursor) != 0);
        free(cursor);
        cursor = more ? xstrdup(next) : NULL;
        json_decref(r);
        if (!more)
            break;
    }
    free(cursor);
    return all;
}

static void put_member(loom_str *out, const json_t *item, const char *key, size_t max)
{
    const json_t *v = json_object_get(item, key);
    if (!json_is_string(v))
        return;
    str_puts(out, ",");
    json_put_string(out, key, strlen(key));
    str_putc(out, ':');
    loom_str s = LOOM_STR_INIT;
    mcp_output_field(&s, v, "", max);
    json_put_string(out, str_cstr(&s), s.len);
    str_free(&s);
}

/* One line of the listing per resource or template. */
static void put_items(loom_str *out, const char *server, const json_t *items, const char *uri_key,
                      size_t *count)
{
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (!json_is_string(json_object_get(it, uri_key)))
            continue;
        str_puts(out, *count ? ",\n {\"server\":" : "[{\"server\":");
        json_put_string(out, server, strlen(server));
        put_member(out, it, uri_key, RES_URI_MAX);
        put_member(out, it, "name", RES_FIELD_MAX);
        put_member(out, it, "title", RES_FIELD_MAX);
        put_member(out, it, "mimeType", 200);
        put_member(out, it, "description", RES_FIELD_MAX);
        str_putc(out, '}');
        (*count)++;
    }
}

static bool server_known(struct mcp_manager *m, const char *server)
{
    size_t n = 0;
    const char *const *v = mcp_manager_servers(m, &n);
    for (size_t i = 0; i < n; i++)
        if (v[i] && strcmp(v[i], server) == 0)
            return true;
    return false;
}

static int unknown_server(struct mcp_manager *m, const char *server, tool_result *out)
{
    size_t n = 0;
    const char *const *v = mcp_manager_servers(m, &n);
    tool_error(out, "There is no MCP server \"%.200s\". Servers: ", server);
    for (size_t i = 0; i < n; i++)
        str_printf(&out->text, "%s%s", i ? ", " : "", v[i]);
    if (n == 0)
        str_puts(&out->text, "(none)");
    return 0;
}

/* One server's resources and templates into out; false (error noted in
 * errors) when its resources/list failed. Templates are optional: a
 * server without them answers method-not-found, which is no error. */
static bool list_server(struct mcp_manager *m, const char *server, const loom_cancel *cancel,
                        loom_str *out, size_t *count, loom_str *errors)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *res = list_all(m, server, "resources/list", "resources", cancel, &err);
    if (!res) {
        str_printf(errors, "\nMCP server \"%s\": resources/list failed: %s", server, err.message);
        return false;
    }
    put_items(out, server, res, "uri", count);
    json_decref(res);
    loom_error_clear(&err);
    json_t *tpl = list_all(m, server, "resources/templates/list", "resourceTemplates", cancel,
                           &err);
    if (tpl)
        put_items(out, server, tpl, "uriTemplate", count);
    json_decref(tpl);
    return true;
}

static int list_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    struct mcp_manager *m = ctx && ctx->self ? ctx->self->impl : NULL;
    const char *only = json_get_str(input, "server", NULL);
    if (only && !server_known(m, only))
        return unknown_server(m, only, out);
    loom_str list = LOOM_STR_INIT, errors = LOOM_STR_INIT;
    size_t count = 0, asked = 0, failed = 0;
    size_t n = 0;
    const char *const *servers = mcp_manager_servers(m, &n);
    for (size_t i = 0; i < n; i++) {
        if (only ? strcmp(servers[i], only) != 0 : !mcp_manager_offers(m, servers[i], "resources"))
            continue;
        asked++;
        failed += !list_server(m, servers[i], ctx ? ctx->cancel : NULL, &list, &count, &errors);
    }
    if (count)
        str_puts(&list, "]");
    else if (asked == 0)
        str_puts(&list, "No connected MCP server offers resources.");
    else
        str_printf(&list, "No resources%s%s.", only ? " on MCP server " : "", only ? only : "");
    str_append(&list, errors.ptr, errors.len);
    str_free(&errors);
    mcp_output_spill(&list, mcp_manager_spill_dir(m), "resources",
                     mcp_manager_max_output_tokens(m), NULL);
    str_free(&out->text);
    out->text = list;
    out->is_error = asked > 0 && failed == asked;
    out->raw = json_pack("{s:i, s:i}", "resources", (int)count, "servers", (int)asked);
    return 0;
}

/* ---- reading ------------------------------------------------------------ */

void mcp_resource_contents_text(const json_t *result, loom_str *out)
{
    const json_t *contents = json_object_get(result, "contents");
    size_t i, shown = 0;
    json_t *c;
    json_array_foreach(contents, i, c)
    {
        if (!json_is_object(c))
            continue;
        if (shown++)
            str_putc(out, '\n');
        mcp_output_resource(out, c);
    }
    if (shown == 0)
        str_puts(out, "(the resource has no contents)");
}

/* resources/read of uri on server: the text (capped, spilled) into text;
 * NULL result and err set on failure. */
static json_t *read_resource(struct mcp_manager *m, const char *server, const char *uri,
                             const loom_cancel *cancel, loom_str *text, loom_error *err)
{
    mcp_call_opts o = {.cancel = cancel};
    json_t *r = mcp_manager_request(m, server, "resources/read", json_pack("{s:s}", "uri", uri),
                                    &o, err);
    if (!r)
        return NULL;
    /* A resource read once is watched, where the server offers it: its
     * changes reach the model at the next turn boundary. */
    mcp_manager_subscribe(m, server, uri);
    mcp_resource_contents_text(r, text);
    loom_str stem = LOOM_STR_INIT;
    str_printf(&stem, "resource-%s", server);
    json_t *raw = mcp_output_raw(r);
    mcp_output_spill(text, mcp_manager_spill_dir(m), stem.ptr, mcp_manager_max_output_tokens(m),
                     raw);
    str_free(&stem);
    json_decref(r);
    return raw;
}

static int read_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    struct mcp_manager *m = ctx && ctx->self ? ctx->self->impl : NULL;
    const char *server = json_get_str(input, "server", NULL);
    const char *uri = json_get_str(input, "uri", NULL);
    if (!server || !uri)
        return tool_error(out, "ReadMcpResource needs a server and a uri");
    if (!server_known(m, server))
        return unknown_server(m, server, out);
    loom_error err;
    loom_error_clear(&err);
    loom_str text = LOOM_STR_INIT;
    json_t *raw = read_resource(m, server, uri, ctx ? ctx->cancel : NULL, &text, &err);
    if (!raw) {
        str_free(&text);
        return tool_error(out, "Reading %.2000s from MCP server \"%s\" failed: %s", uri, server,
                          err.message);
    }
    str_free(&out->text);
    out->text = text;
    out->raw = raw;
    return 0;
}

/* ---- the tools ---------------------------------------------------------- */

static const char list_schema[] =
    "{\"type\":\"object\",\"properties\":{\"server\":{\"type\":\"string\",\"description\":"
    "\"Only this MCP server's resources (default: every server that offers any).\"}},"
    "\"additionalProperties\":false}";

static const char list_description[] =
    "Lists the resources the connected MCP servers offer (files, records, documents…): each "
    "one's server, uri, name, mimeType and description, and the resource templates (uriTemplate) "
    "whose uri you fill in. Read one with ReadMcpResource.";

static const char read_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"server\":{\"type\":\"string\",\"description\":\"The MCP server's name.\"},"
    "\"uri\":{\"type\":\"string\",\"description\":\"The resource's uri (from ListMcpResources, "
    "or a template filled in).\"}},"
    "\"required\":[\"server\",\"uri\"],\"additionalProperties\":false}";

static const char read_description[] =
    "Reads one resource of an MCP server by its uri. Text comes back as text; binary contents "
    "are described by type and size. A very large resource is cut, and kept whole in a file "
    "you can Read with offset/limit.";

static tool_def *make_def(struct mcp_manager *m, const char *name, const char *desc,
                          const char *schema, int (*run)(const json_t *, tool_ctx *,
                                                          tool_result *))
{
    tool_def *d = xcalloc(1, sizeof *d);
    d->name = name;
    d->description = desc;
    d->input_schema = schema;
    d->read_only = true;
    d->concurrency_safe = true;
    d->run = run;
    d->impl = m;
    return d;
}

tool_def *mcp_resources_list_tool_new(struct mcp_manager *m)
{
    return make_def(m, MCP_LIST_RESOURCES_NAME, list_description, list_schema, list_run);
}

tool_def *mcp_resources_read_tool_new(struct mcp_manager *m)
{
    return make_def(m, MCP_READ_RESOURCE_NAME, read_description, read_schema, read_run);
}

void mcp_resources_tool_free(tool_def *d)
{
    free(d);
}

/* ---- @server:uri mentions ----------------------------------------------- */

void mcp_mentions_free(mcp_mention *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].server);
        free(v[i].uri);
    }
    free(v);
}

/* The longest server name s with "s:" at p; NULL when none. */
static const char *match_server(const char *p, const char *const *servers, size_t n)
{
    const char *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = servers[i] ? strlen(servers[i]) : 0;
        if (l && l > best_len && strncmp(p, servers[i], l) == 0 && p[l] == ':') {
            best = servers[i];
            best_len = l;
        }
    }
    return best;
}

size_t mcp_mentions_find(const char *prompt, const char *const *servers, size_t nservers,
                         mcp_mention **out)
{
    *out = NULL;
    size_t n = 0, cap = 0;
    for (const char *p = prompt; p && *p; p++) {
        if (*p != '@' || (p > prompt && !isspace((unsigned char)p[-1])))
            continue;
        const char *s = match_server(p + 1, servers, nservers);
        if (!s)
            continue;
        const char *u = p + 1 + strlen(s) + 1, *e = u;
        while (*e && !isspace((unsigned char)*e))
            e++;
        if (e == u)
            continue;
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = !strcmp((*out)[i].server, s) && strlen((*out)[i].uri) == (size_t)(e - u) &&
                  !strncmp((*out)[i].uri, u, (size_t)(e - u));
        if (!dup) {
            if (n == cap) {
                cap = cap ? cap * 2 : 4;
                *out = xrealloc(*out, cap * sizeof **out);
            }
            (*out)[n++] = (mcp_mention){(size_t)(p - prompt), (size_t)(e - p), xstrdup(s),
                                        xstrndup(u, (size_t)(e - u))};
        }
        p = e - 1;
    }
    return n;
}

/* An attribute value: no quote, angle bracket or ampersand unescaped. */
static void put_attr(loom_str *out, const char *s)
{
    loom_str clean = LOOM_STR_INIT;
    mcp_output_text(&clean, s, strlen(s));
    for (size_t i = 0; i < clean.len; i++) {
        char c = clean.ptr[i];
        if (c == '"')
            str_puts(out, "&quot;");
        else if (c == '<')
            str_puts(out, "&lt;");
        else if (c == '>')
            str_puts(out, "&gt;");
        else if (c == '&')
            str_puts(out, "&amp;");
        else
            str_putc(out, c);
    }
    str_free(&clean);
}

char *mcp_expand_mentions(struct mcp_manager *m, const char *prompt, loom_error *err)
{
    if (!prompt) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "no prompt to expand");
        return NULL;
    }
    size_t ns = 0;
    const char *const *servers = mcp_manager_servers(m, &ns);
    mcp_mention *v = NULL;
    size_t n = mcp_mentions_find(prompt, servers, ns, &v);
    loom_str out = LOOM_STR_INIT;
    str_puts(&out, prompt);
    for (size_t i = 0; i < n; i++) {
        loom_error e;
        loom_error_clear(&e);
        loom_str text = LOOM_STR_INIT;
        json_t *raw = read_resource(m, v[i].server, v[i].uri, NULL, &text, &e);
        if (!raw) {
            str_printf(&out, "\n\n[@%s:", v[i].server);
            mcp_output_text(&out, v[i].uri, strlen(v[i].uri));
            str_printf(&out, " could not be read: %s]", e.message);
        } else {
            str_puts(&out, "\n\n<resource server=\"");
            put_attr(&out, v[i].server);
            str_puts(&out, "\" uri=\"");
            put_attr(&out, v[i].uri);
            str_puts(&out, "\">\n");
            str_append(&out, text.ptr, text.len);
            str_puts(&out, "\n</resource>");
        }
        json_decref(raw);
        str_free(&text);
    }
    mcp_mentions_free(v, n);
    return str_steal(&out);
}

/* mcp_tool.c — one MCP server tool as a Loom tool: its declaration from a
 * tools/list entry (name, description, schemas, annotations → the
 * fail-closed defaults), the call (tools/call through the manager, with
 * progress, cancel and deadline), and the result turned into what the model
 * sees (see mcp_tool.h).
 *
 * Owns the mcp_tool struct and everything in it. Everything a server sends
 * is untrusted: wrong types, invalid UTF-8, schemas the checker cannot
 * apply and huge blobs are errors or descriptions naming the server, never
 * a crash. Threading: a tool is immutable once made; calls may run on any
 * thread, many at once.
 */
#include "ext/mcp/mcp_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/event.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/str.h"
#include "context/tokens.h"
#include "ext/mcp/manager.h"
#include "ext/mcp/output.h"
#include "tools/schema.h"

/* The providers' limit on a tool name (tools/registry.c TOOL_NAME_MAX). */
#define MCP_TOOL_NAME_MAX 64
/* A cut name ends in '-' and this many hex digits of the full name's hash. */
#define MCP_TOOL_NAME_HASH 8
/* Descriptions are the model's to read every turn: a server cannot make
 * one tool cost thousands of tokens of every request. */
#define MCP_TOOL_DESCRIPTION_MAX 2048
/* Anthropic takes images up to 5 MB of base64 (as tools/builtin/read.c). */
#define MCP_IMAGE_MAX_B64 (5 * 1024 * 1024)

/* ---- naming ------------------------------------------------------------- */

static bool name_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

/* One '_' per character outside the alphabet (not per byte: "é" is one). */
static void put_normalized(loom_str *out, const char *s)
{
    for (; s && *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            str_putc(out, name_char_ok(*s) ? *s : '_');
}

char *mcp_tool_loom_name(const char *server, const char *tool)
{
    loom_str n = LOOM_STR_INIT;
    str_puts(&n, "mcp__");
    put_normalized(&n, server);
    str_puts(&n, "__");
    put_normalized(&n, tool);
    if (n.len > MCP_TOOL_NAME_MAX) {
        /* The hash is of the names as the server spelled them, so two long
         * names that differ anywhere (even only in the part cut off, or in
         * characters normalization folded) stay distinct. */
        uint64_t h = hash_fnv1a64(HASH_FNV1A64_SEED, server ? server : "",
                                  server ? strlen(server) : 0);
        h = hash_fnv1a64(h, "\0", 1);
        h = hash_fnv1a64(h, tool ? tool : "", tool ? strlen(tool) : 0);
        str_truncate(&n, MCP_TOOL_NAME_MAX - MCP_TOOL_NAME_HASH - 1);
        str_printf(&n, "-%08x", (unsigned)(h & 0xffffffffu));
    }
    return str_steal(&n);
}

/* ---- construction ------------------------------------------------------- */

void mcp_tool_free(struct mcp_tool *t)
{
    if (!t)
        return;
    free(t->loom_name);
    free(t->server);
    free(t->remote_name);
    free(t->description);
    free(t->schema_text);
    json_decref(t->input_schema);
    json_decref(t->output_schema);
    free(t);
}

/* The description the model reads: the server's (or its title, or a
 * stand-in: the registry refuses an empty one), valid UTF-8, capped. */
static char *make_description(const char *server, const char *remote, const json_t *tool)
{
    const json_t *d = json_object_get(tool, "description");
    const json_t *title = json_object_get(tool, "title");
    if (!json_is_string(title))
        title = json_object_get(json_object_get(tool, "annotations"), "title");
    loom_str s = LOOM_STR_INIT;
    if (json_is_string(d) && json_string_length(d) > 0)
        mcp_output_text(&s, json_string_value(d), json_string_length(d));
    else if (json_is_string(title) && json_string_length(title) > 0)
        mcp_output_text(&s, json_string_value(title), json_string_length(title));
    if (s.len == 0)
        str_printf(&s, "The tool \"%s\" of the MCP server \"%s\".", remote, server);
    if (s.len > MCP_TOOL_DESCRIPTION_MAX) {
        size_t cut = MCP_TOOL_DESCRIPTION_MAX;
        while (cut > 0 && ((unsigned char)s.ptr[cut] & 0xC0) == 0x80)
            cut--;
        str_truncate(&s, cut);
        str_printf(&s, "… [description cut at %d characters]", MCP_TOOL_DESCRIPTION_MAX);
    }
    return str_steal(&s);
}

/* A schema object the checker can apply; "type": "object" supplied when a
 * server leaves it out (providers require it). NULL with err naming the
 * server, tool and member. */
static json_t *take_schema(const char *server, const char *remote, const json_t *tool,
                           const char *member, bool input, loom_error *err)
{
    const json_t *s = json_object_get(tool, member);
    if (!s && !input)
        return NULL;
    if (!json_is_object(s)) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "MCP server \"%s\": tool \"%s\": %s is %s, not an object", server, remote,
                       member, s ? "of the wrong type" : "missing");
        return NULL;
    }
    json_t *copy = json_deep_copy(s);
    if (input) {
        const json_t *type = json_object_get(copy, "type");
        if (!type)
            json_object_set_new(copy, "type", json_string("object"));
        else if (!json_is_string(type) || strcmp(json_string_value(type), "object") != 0) {
            json_decref(copy);
            loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                           "MCP server \"%s\": tool \"%s\": inputSchema must have \"type\": "
                           "\"object\"",
                           server, remote);
            return NULL;
        }
    }
    loom_error e;
    loom_error_clear(&e);
    if (schema_check(copy, &e) != 0) {
        json_decref(copy);
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "MCP server \"%s\": tool \"%s\": %s cannot be applied: %s", server, remote,
                       member, e.message);
        return NULL;
    }
    return copy;
}

static int mcp_tool_run(const json_t *input, tool_ctx *ctx, tool_result *out);

struct mcp_tool *mcp_tool_new(struct mcp_manager *mgr, const char *server, const json_t *tool,
                              bool always_load, loom_error *err)
{
    if (!server)
        server = "";
    if (!json_is_object(tool)) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "MCP server \"%s\": a tools/list entry is not an object", server);
        return NULL;
    }
    const json_t *name = json_object_get(tool, "name");
    if (!json_is_string(name) || json_string_length(name) == 0 ||
        strlen(json_string_value(name)) != json_string_length(name)) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "MCP server \"%s\": a tools/list entry has no usable name", server);
        return NULL;
    }
    const char *remote = json_string_value(name);
    json_t *in = take_schema(server, remote, tool, "inputSchema", true, err);
    if (!in)
        return NULL;
    json_t *outs = NULL;
    if (json_object_get(tool, "outputSchema")) {
        outs = take_schema(server, remote, tool, "outputSchema", false, err);
        if (!outs) {
            json_decref(in);
            return NULL;
        }
    }
    struct mcp_tool *t = xcalloc(1, sizeof *t);
    t->mgr = mgr;
    t->server = xstrdup(server);
    t->remote_name = xstrdup(remote);
    t->loom_name = mcp_tool_loom_name(server, remote);
    t->description = make_description(server, remote, tool);
    t->input_schema = in;
    t->output_schema = outs;
    t->schema_text = json_dump_compact(in);

    /* Annotations fail closed: only an explicit readOnlyHint (without a
     * destructiveHint contradicting it) makes the tool read-only; the
     * spec's default for destructiveHint is true. */
    const json_t *ann = json_object_get(tool, "annotations");
    bool ro = json_is_object(ann) && json_is_true(json_object_get(ann, "readOnlyHint"));
    bool destr = json_is_object(ann) && json_is_true(json_object_get(ann, "destructiveHint"));
    const json_t *dh = json_is_object(ann) ? json_object_get(ann, "destructiveHint") : NULL;
    t->def.read_only = ro && !destr;
    t->def.concurrency_safe = t->def.read_only;
    t->destructive = !t->def.read_only && !json_is_false(dh);

    const json_t *meta = json_object_get(tool, "_meta");
    t->always_load =
        always_load || (json_is_object(meta) &&
                        json_is_true(json_object_get(meta, "anthropic/alwaysLoad")));

    t->def.name = t->loom_name;
    t->def.description = t->description;
    t->def.input_schema = t->schema_text;
    t->def.run = mcp_tool_run;
    t->def.impl = t;

    json_t *decl = json_pack("{s:s, s:s, s:O}", "name", t->loom_name, "description",
                             t->description, "input_schema", in);
    t->tokens = tokens_estimate_json(decl) + TOKENS_PER_BLOCK;
    json_decref(decl);
    return t;
}

/* ---- the call ----------------------------------------------------------- */

typedef struct progress_ctx {
    tool_ctx *ctx;
    const char *tool;
} progress_ctx;

static void on_progress(void *p, double progress, double total, const char *message)
{
    progress_ctx *pc = p;
    if (pc->ctx->emit)
        pc->ctx->emit(pc->ctx->emit_ctx, LOOM_EV_TOOL_PROGRESS,
                      event_tool_progress(pc->ctx->call_id, pc->tool, progress, total, message));
}

/* What happened, in words the model can act on. */
static const char *failure_kind(const loom_error *e)
{
    if (e->code == LOOM_ERR_RUN_CANCELLED)
        return "was cancelled";
    if (e->code == LOOM_ERR_MODEL_TIMEOUT || strstr(e->message, "timed out") ||
        strstr(e->message, "timeout"))
        return "timed out";
    /* Only a lost connection is one: a JSON-RPC error the server answered
     * with (same code) is the server's word, and the model must not be
     * told to retry a call the server refused. */
    if (e->code == LOOM_ERR_TOOL_EXECUTION_FAILED &&
        (strstr(e->message, "the connection") || strstr(e->message, "is not available") ||
         strstr(e->message, "writing to the server")))
        return "failed: the server stopped or the connection was lost (it is restarted on the "
               "next call)";
    return "failed";
}

static int mcp_tool_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const struct mcp_tool *t = ctx && ctx->self ? ctx->self->impl : NULL;
    if (!t)
        return tool_error(out, "MCP tool called without its state (internal error)");
    json_t *args = json_is_object(input) ? json_deep_copy(input) : json_object();
    json_t *params = json_pack("{s:s, s:o}", "name", t->remote_name, "arguments", args);
    char tp[56];
    /* W3C trace context for the server (the MCP conventions: _meta). */
    if (ctx->traceparent && ctx->traceparent(ctx->traceparent_ctx, ctx->call_id, tp))
        json_object_set_new(params, "_meta", json_pack("{s:s}", "traceparent", tp));
    progress_ctx pc = {ctx, t->loom_name};
    mcp_call_opts o = {
        .timeout_ms = ctx->timeout_ms > 0 ? ctx->timeout_ms : 0,
        .cancel = ctx->cancel,
        .on_progress = ctx->emit ? on_progress : NULL,
        .progress_ctx = &pc,
    };
    loom_error err;
    loom_error_clear(&err);
    json_t *res = mcp_manager_request(t->mgr, t->server, "tools/call", params, &o, &err);
    if (!res)
        return tool_error(out, "The call to tool \"%s\" of MCP server \"%s\" %s. %s",
                          t->remote_name, t->server, failure_kind(&err), err.message);
    mcp_tool_convert_result(t, res, mcp_manager_spill_dir(t->mgr),
                            mcp_manager_max_output_tokens(t->mgr), out);
    json_decref(res);
    return 0;
}

/* ---- the result --------------------------------------------------------- */

static bool b64_clean(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '='))
            return false;
    }
    return n > 0 && n % 4 == 0;
}

static bool image_type_ok(const char *mime)
{
    static const char *const ok[] = {"image/png", "image/jpeg", "image/gif", "image/webp"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (mime && strcmp(mime, ok[i]) == 0)
            return true;
    return false;
}

static void put_binary(loom_str *text, const char *kind, const json_t *item, const char *key)
{
    const json_t *data = json_object_get(item, key);
    size_t bytes = json_is_string(data)
                       ? mcp_output_base64_bytes(json_string_value(data), json_string_length(data))
                       : 0;
    str_printf(text, "[%s: ", kind);
    mcp_output_field(text, json_object_get(item, "mimeType"), "unknown type", 200);
    str_printf(text, ", %zu bytes]", bytes);
}

static void put_image(loom_str *text, const json_t *item, tool_result *out)
{
    const json_t *data = json_object_get(item, "data");
    const char *mime = json_string_value(json_object_get(item, "mimeType"));
    size_t n = json_is_string(data) ? json_string_length(data) : 0;
    put_binary(text, "image", item, "data");
    if (out->image_data) {
        str_puts(text, " (not shown: only a result's first image is passed on)");
        return;
    }
    if (!image_type_ok(mime) || n > MCP_IMAGE_MAX_B64 || !b64_clean(json_string_value(data), n)) {
        str_puts(text, " (not shown: not a PNG, JPEG, GIF or WebP image of at most 5 MB of "
                       "well-formed base64)");
        return;
    }
    out->image_media_type = xstrdup(mime);
    out->image_data = xstrndup(json_string_value(data), n);
}

/* One content block appended to text (images also into out). */
static void put_content(loom_str *text, const json_t *item, tool_result *out)
{
    const char *type = json_string_value(json_object_get(item, "type"));
    if (!type) {
        str_puts(text, "[content block without a type]");
    } else if (!strcmp(type, "text")) {
        const json_t *t = json_object_get(item, "text");
        if (json_is_string(t))
            mcp_output_text(text, json_string_value(t), json_string_length(t));
    } else if (!strcmp(type, "image")) {
        put_image(text, item, out);
    } else if (!strcmp(type, "audio")) {
        put_binary(text, "audio", item, "data");
    } else if (!strcmp(type, "resource_link")) {
        str_puts(text, "[resource: ");
        mcp_output_field(text, json_object_get(item, "name"), "(unnamed)", 500);
        str_putc(text, ' ');
        mcp_output_field(text, json_object_get(item, "uri"), "(no uri)", 2000);
        str_putc(text, ']');
    } else if (!strcmp(type, "resource")) {
        mcp_output_resource(text, json_object_get(item, "resource"));
    } else {
        str_puts(text, "[unsupported content type ");
        mcp_output_field(text, json_object_get(item, "type"), "", 60);
        str_putc(text, ']');
    }
}

/* structuredContent against outputSchema. False (and out set to the error)
 * on a mismatch. */
static bool check_structured(const struct mcp_tool *t, const json_t *sc, bool is_error,
                             tool_result *out)
{
    if (!t->output_schema || is_error)
        return true;
    if (!sc) {
        tool_error(out,
                   "MCP server \"%s\": tool \"%s\" declares an outputSchema but returned no "
                   "structuredContent",
                   t->server, t->remote_name);
        return false;
    }
    loom_str why = LOOM_STR_INIT;
    if (schema_validate(t->output_schema, sc, &why) != 0) {
        tool_error(out,
                   "MCP server \"%s\": tool \"%s\" returned structuredContent that does not match "
                   "its outputSchema:\n%s",
                   t->server, t->remote_name, str_cstr(&why));
        str_free(&why);
        return false;
    }
    str_free(&why);
    return true;
}

void mcp_tool_convert_result(const struct mcp_tool *t, const json_t *result,
                             const char *spill_dir, int64_t max_tokens, tool_result *out)
{
    if (!json_is_object(result)) {
        tool_error(out, "MCP server \"%s\": tool \"%s\" returned a result that is not an object",
                   t->server, t->remote_name);
        return;
    }
    out->raw = mcp_output_raw(result);
    bool is_error = json_is_true(json_object_get(result, "isError"));
    const json_t *sc = json_object_get(result, "structuredContent");
    if (!check_structured(t, sc, is_error, out))
        return;

    loom_str text = LOOM_STR_INIT;
    const json_t *content = json_object_get(result, "content");
    size_t i;
    const json_t *item;
    bool first = true;
    if (json_is_array(content)) {
        json_array_foreach(content, i, item)
        {
            if (!json_is_object(item))
                continue;
            size_t before = text.len;
            if (!first)
                str_putc(&text, '\n');
            size_t mark = text.len;
            put_content(&text, item, out);
            if (text.len == mark)
                str_truncate(&text, before); /* an empty block adds no separator */
            else
                first = false;
        }
    } else if (content) {
        str_puts(&text, "[content is not an array]");
    }
    if (text.len == 0 && sc) {
        char *s = json_dump_compact(sc);
        if (s)
            mcp_output_text(&text, s, strlen(s));
        free(s);
    }
    if (text.len == 0 && !out->image_data)
        str_puts(&text, is_error ? "The tool reported an error and gave no details."
                                 : "(no output)");
    mcp_output_spill(&text, spill_dir, t->loom_name, max_tokens, out->raw);
    str_free(&out->text);
    out->text = text;
    out->is_error = is_error;
}

/* fuzz_mcp_server.c — libFuzzer target for `loom mcp serve`'s reader
 * (src/surfaces/mcp_server/rpc.c): the input is split into lines, as the
 * stdio transport splits its input, and each line goes to one connection of
 * a server without tools (every request is answered on the spot). Whatever
 * the bytes, nothing may crash or leak, a message is answered at most once,
 * and every answer is a JSON-RPC 2.0 response: an id (string, integer or
 * null) and either a result object or an error with an integer code and a
 * message. A notification or a response gets no answer. Any disagreement
 * aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/mcp_server/mcps.h"

typedef struct seen {
    int n;
} seen;

static void check_send(void *ctx, json_t *msg, bool final)
{
    seen *s = ctx;
    if (!final)
        abort(); /* without tools, nothing streams */
    if (!msg)
        return;
    s->n++;
    const json_t *v = json_object_get(msg, "jsonrpc");
    const json_t *id = json_object_get(msg, "id");
    const json_t *res = json_object_get(msg, "result");
    const json_t *err = json_object_get(msg, "error");
    if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
        abort();
    if (!(json_is_string(id) || json_is_integer(id) || json_is_null(id)))
        abort();
    if (!!res == !!err)
        abort();
    if (res && !json_is_object(res))
        abort();
    if (err && (!json_is_integer(json_object_get(err, "code")) ||
                !json_is_string(json_object_get(err, "message"))))
        abort();
    json_decref(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mcps_server *srv;
    if (!srv) {
        mcps_options o = {.page_size = 1};
        srv = mcps_server_new(&o, false);
    }
    mcps_conn *c = mcps_conn_new(srv);
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        seen s = {0};
        mcps_sink sink = {check_send, NULL, NULL, &s};
        bool init = false;
        json_decref(mcps_peek(p, n, &init));
        mcps_outcome out = mcps_handle(c, p, n, &sink);
        if (out == MCPS_ASYNC || (out == MCPS_REPLIED) != (s.n == 1) || s.n > 1)
            abort();
        p += n + (nl != NULL);
    }
    mcps_conn_close(c);
    return 0;
}

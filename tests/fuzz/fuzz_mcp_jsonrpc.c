/* fuzz_mcp_jsonrpc.c — libFuzzer target for the MCP JSON-RPC reader
 * (ext/mcp/jsonrpc.c): whatever a server sends, jsonrpc_parse must not
 * crash or leak, and must either refuse with an error naming the server or
 * give messages whose fields agree with their kind. Every accepted message
 * is written again with the builders and read back: it must come back as
 * the same kind with the same id and method (the round trip the client
 * relies on when it answers a server's request). Any disagreement aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext/mcp/jsonrpc.h"

static void check_msg(const jsonrpc_msg *m)
{
    if (!json_is_object(m->root))
        abort();
    switch (m->kind) {
    case JSONRPC_REQUEST:
        if (!m->method || !(json_is_string(m->id) || json_is_integer(m->id)))
            abort();
        break;
    case JSONRPC_NOTIFICATION:
        if (!m->method || m->id)
            abort();
        break;
    case JSONRPC_RESULT:
        if (m->method || !m->result || !(json_is_string(m->id) || json_is_integer(m->id)))
            abort();
        break;
    case JSONRPC_ERROR:
        if (m->method || !m->error_message || !m->id)
            abort();
        break;
    }
    if (m->params && !json_is_object(m->params) && !json_is_array(m->params))
        abort();
}

/* Writes m again and reads it back. */
static void round_trip(const jsonrpc_msg *m)
{
    char *text = NULL;
    long long id = 0;
    switch (m->kind) {
    case JSONRPC_REQUEST:
        if (!jsonrpc_id_int(m->id, &id))
            return; /* the request builder writes integer ids only (ours) */
        text = jsonrpc_request(id, m->method, m->params);
        break;
    case JSONRPC_NOTIFICATION:
        text = jsonrpc_notification(m->method, m->params);
        break;
    case JSONRPC_RESULT:
        text = jsonrpc_result(m->id, m->result);
        break;
    case JSONRPC_ERROR:
        text = jsonrpc_error(m->id, m->error_code, m->error_message, m->error_data);
        break;
    }
    if (!text)
        return; /* jansson refuses to write some values (a NaN cannot come from JSON) */
    jsonrpc_batch b;
    loom_error err;
    loom_error_clear(&err);
    if (jsonrpc_parse("again", text, strlen(text), &b, &err) != 0) {
        fprintf(stderr, "fuzz_mcp_jsonrpc: rebuilt message refused: %s\n%s\n", err.message, text);
        abort();
    }
    if (b.n != 1 || b.msgs[0].kind != m->kind ||
        (m->method && strcmp(m->method, b.msgs[0].method) != 0) ||
        (m->id && !json_equal(m->id, b.msgs[0].id)))
        abort();
    jsonrpc_batch_free(&b);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jsonrpc_batch b;
    loom_error err;
    loom_error_clear(&err);
    int rc = jsonrpc_parse("fuzz", (const char *)data, size, &b, &err);
    if (rc != 0) {
        if (rc > 0 || b.msgs || b.doc || strncmp(err.message, "MCP server \"fuzz\": ", 19) != 0)
            abort();
        return 0;
    }
    if (b.n == 0 || b.n > JSONRPC_MAX_BATCH || !b.doc)
        abort();
    for (size_t i = 0; i < b.n; i++) {
        check_msg(&b.msgs[i]);
        round_trip(&b.msgs[i]);
    }
    jsonrpc_batch_free(&b);
    return 0;
}

/* jsonrpc.h — reading and writing JSON-RPC 2.0 messages for MCP.
 *
 * Everything a server sends is untrusted: a message is parsed with a size
 * cap, its shape is checked (jsonrpc "2.0", an id that is a string or an
 * integer, a method that is a string, exactly one of result/error in a
 * response, an error with an integer code and a string message, params an
 * object or array when present), and a bad one is an error naming what was
 * wrong, never a crash. Batches (a JSON array, which 2025-03-26 allowed and
 * later revisions removed) are accepted on input and split into messages.
 *
 * Pure functions over jansson values; no threads, no I/O.
 */
#ifndef LOOM_EXT_MCP_JSONRPC_H
#define LOOM_EXT_MCP_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* The largest message read from a server (bytes); a longer one is refused
 * with an error naming the server and the size. */
#define JSONRPC_MAX_MESSAGE (16u * 1024u * 1024u)
/* The most messages one batch may hold. */
#define JSONRPC_MAX_BATCH 1024

/* The standard error codes, and MCP's. */
enum {
    JSONRPC_PARSE_ERROR = -32700,
    JSONRPC_INVALID_REQUEST = -32600,
    JSONRPC_METHOD_NOT_FOUND = -32601,
    JSONRPC_INVALID_PARAMS = -32602,
    JSONRPC_INTERNAL_ERROR = -32603,
    MCP_ERR_REQUEST_CANCELLED = -32800, /* not sent by servers; used for our own cancel */
    MCP_ERR_URL_ELICITATION_REQUIRED = -32042,
};

typedef enum {
    JSONRPC_REQUEST,      /* method + id */
    JSONRPC_NOTIFICATION, /* method, no id */
    JSONRPC_RESULT,       /* id + result */
    JSONRPC_ERROR,        /* id (may be null) + error */
} jsonrpc_kind;

typedef struct jsonrpc_msg {
    jsonrpc_kind kind;
    json_t *id;           /* borrowed from root: string or integer (NULL for a
                             notification; json null for an error without id) */
    const char *method;   /* requests and notifications */
    json_t *params;       /* borrowed; NULL when absent */
    json_t *result;       /* borrowed; JSONRPC_RESULT */
    long long error_code; /* JSONRPC_ERROR */
    const char *error_message;
    json_t *error_data;   /* borrowed; may be NULL */
    json_t *root;         /* the message object (owned by the batch) */
} jsonrpc_msg;

typedef struct jsonrpc_batch {
    jsonrpc_msg *msgs;
    size_t n;
    json_t *doc;          /* the parsed document; owns every root */
} jsonrpc_batch;

/* Parses one wire message (an object or a batch array) of len bytes. 0 with
 * out filled; else -1 with err set (LOOM_ERR_TOOL_EXECUTION_FAILED-class
 * protocol error) saying what was wrong, prefixed by who ("MCP server
 * \"fs\": ..."). A batch with one bad member fails whole. */
int jsonrpc_parse(const char *who, const char *text, size_t len, jsonrpc_batch *out,
                  loom_error *err);
void jsonrpc_batch_free(jsonrpc_batch *b);

/* Builders: each returns compact JSON text (caller frees). params may be
 * NULL (omitted); params/result/data are borrowed. */
char *jsonrpc_request(long long id, const char *method, const json_t *params);
char *jsonrpc_notification(const char *method, const json_t *params);
char *jsonrpc_result(const json_t *id, const json_t *result);
char *jsonrpc_error(const json_t *id, long long code, const char *message, const json_t *data);

/* An id as a 64-bit integer when it is one (ours always are); false for a
 * string id or one out of range. */
bool jsonrpc_id_int(const json_t *id, long long *out);

#endif

/* message.h — the normalized conversation every provider speaks.
 *
 * Providers translate between these types and their wire format; nothing
 * above provider/ ever sees a provider's JSON except `raw` usage, which is kept
 * verbatim for attribution (seed 001 §3.5). Reasoning blocks keep the
 * provider's signature / encrypted content so they can be sent back as-is.
 */
#ifndef LOOM_MESSAGE_MESSAGE_H
#define LOOM_MESSAGE_MESSAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom_protocol.h"

typedef enum {
    WIRE_BLOCK_TEXT,
    WIRE_BLOCK_IMAGE,
    WIRE_BLOCK_TOOL_USE,
    WIRE_BLOCK_TOOL_RESULT,
    WIRE_BLOCK_THINKING,           /* visible reasoning (+ signature) */
    WIRE_BLOCK_REDACTED_THINKING,  /* opaque: only `data` is kept */
} wire_block_kind;

typedef struct wire_block {
    wire_block_kind kind;
    char *text;          /* TEXT, THINKING; TOOL_RESULT's text content */
    char *signature;     /* THINKING: Anthropic signature; OpenAI: reasoning item id */
    char *data;          /* IMAGE: base64 bytes; REDACTED_THINKING / encrypted reasoning */
    char *media_type;    /* IMAGE: e.g. "image/png" */
    char *id;            /* TOOL_USE: call id; TOOL_RESULT: the tool_use id it answers */
    char *name;          /* TOOL_USE: tool name */
    json_t *input;       /* TOOL_USE: parsed arguments (an object), owned */
    bool is_error;       /* TOOL_RESULT */
    bool cache_control;  /* a prompt-cache breakpoint after this block */
    bool tail;           /* part of the request's dynamic tail (reminders, working
                            memory): formats whose messages are strings send it as
                            a message of its own, so the prefix before it is stable */
} wire_block;

typedef enum { WIRE_ROLE_USER, WIRE_ROLE_ASSISTANT } wire_role;

typedef struct wire_message {
    wire_role role;
    wire_block *blocks;
    size_t n_blocks;
    size_t cap_blocks;
} wire_message;

typedef struct wire_tool {
    char *name;
    char *description;
    json_t *input_schema;  /* owned */
} wire_tool;

typedef struct wire_request {
    char *model;
    char *system;            /* static system prompt (may be NULL) */
    char *system_dynamic;    /* the part after the cache boundary (may be NULL) */
    bool system_cache;       /* cache breakpoint after the static system prompt */
    wire_message *messages;
    size_t n_messages;
    size_t cap_messages;
    wire_tool *tools;
    size_t n_tools;
    size_t cap_tools;
    int max_tokens;
    int thinking_budget;     /* 0 = off */
    double temperature;      /* < 0 = provider default */
    bool stream;
} wire_request;

typedef struct wire_usage {
    int64_t input_tokens;           /* not counting cache reads/writes */
    int64_t output_tokens;
    int64_t cache_read_tokens;
    int64_t cache_creation_tokens;
    int64_t reasoning_tokens;       /* part of output_tokens where reported */
    json_t *raw;                    /* the provider's own usage object, owned */
} wire_usage;

typedef struct wire_response {
    wire_message message;           /* role = assistant */
    loom_stop_reason stop_reason;   /* one of the model's (1–7); loom_protocol.h */
    char *stop_reason_raw;          /* provider's own word, e.g. "tool_calls" */
    wire_usage usage;
    char *response_id;              /* provider's message / response id */
    char *request_id;               /* from the response headers */
    char *model;                    /* as reported by the provider */
} wire_response;

/* Blocks: constructors copy their string arguments; `input` is stolen. */
wire_block *wire_message_add_text(wire_message *m, const char *text);
wire_block *wire_message_add_thinking(wire_message *m, const char *text, const char *signature);
wire_block *wire_message_add_redacted_thinking(wire_message *m, const char *data);
wire_block *wire_message_add_tool_use(wire_message *m, const char *id, const char *name,
                                      json_t *input);
wire_block *wire_message_add_tool_result(wire_message *m, const char *tool_use_id,
                                         const char *text, bool is_error);
wire_block *wire_message_add_image(wire_message *m, const char *media_type, const char *b64);
/* Appends an empty block of the kind and returns it (zeroed). */
wire_block *wire_message_push(wire_message *m, wire_block_kind kind);
void wire_message_free(wire_message *m);
/* Deep copy into dst (dst uninitialised). */
void wire_message_copy(wire_message *dst, const wire_message *src);

wire_message *wire_request_add_message(wire_request *r, wire_role role);
void wire_request_add_tool(wire_request *r, const char *name, const char *description,
                           json_t *schema /* stolen */);
void wire_request_free(wire_request *r);

void wire_usage_free(wire_usage *u);
/* The one usage sum: adds u's counts to *total (raw is left alone: it
 * describes one reply, never a sum). */
void wire_usage_add(wire_usage *total, const wire_usage *u);
/* Tokens a usage counts against a budget: input, output and cache. */
int64_t wire_usage_total(const wire_usage *u);
void wire_response_free(wire_response *r);

const char *wire_role_name(wire_role r);

/* Normalized usage as JSON: {"inputTokens","outputTokens","cacheReadTokens",
 * "cacheCreationTokens","reasoningTokens","totalTokens"}. New reference. */
json_t *wire_usage_to_json(const wire_usage *u);

/* The whole system prompt (static, a blank line, dynamic) for providers
 * that take one string; NULL when there is none. Caller frees. */
char *wire_request_system_text(const wire_request *r);

/* The concatenated text blocks of a message; caller frees. */
char *wire_message_text(const wire_message *m);

#endif

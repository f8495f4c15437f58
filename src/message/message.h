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
    MSG_BLOCK_TEXT,
    MSG_BLOCK_IMAGE,
    MSG_BLOCK_TOOL_USE,
    MSG_BLOCK_TOOL_RESULT,
    MSG_BLOCK_THINKING,           /* visible reasoning (+ signature) */
    MSG_BLOCK_REDACTED_THINKING,  /* opaque: only `data` is kept */
} msg_block_kind;

typedef struct msg_block {
    msg_block_kind kind;
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
} msg_block;

typedef enum { MSG_ROLE_USER, MSG_ROLE_ASSISTANT } msg_role;

/* One codec's encoding of a message that outlives its requests (the
 * context's kept history, context/history_keep.h): a codec that finds its
 * own bytes here writes them instead of encoding the message again, and
 * fills them in when it does not. len 0 with codec set: the codec leaves
 * the message out. */
typedef struct msg_wire {
    const void *codec;       /* the provider_codec_ops whose bytes these are; NULL: none */
    char *bytes;
    size_t len;
} msg_wire;

typedef struct msg_message {
    msg_role role;
    msg_block *blocks;
    size_t n_blocks;
    size_t cap_blocks;
    /* Non-NULL only on a kept message, which must then never change: its
     * encoding, filled by the first codec that writes it. Owned. */
    msg_wire *wire;
} msg_message;

typedef struct msg_tool {
    char *name;
    char *description;
    json_t *input_schema;  /* owned */
} msg_tool;

typedef struct msg_request {
    char *model;
    char *system;            /* static system prompt (may be NULL) */
    char *system_dynamic;    /* the part after the cache boundary (may be NULL) */
    bool system_cache;       /* cache breakpoint after the static system prompt */
    msg_message *messages;
    size_t n_messages;
    size_t cap_messages;
    /* The first n_borrowed messages are the context's kept history, shared
     * by every request it builds: read them, never change or free them. */
    size_t n_borrowed;
    msg_tool *tools;
    size_t n_tools;
    size_t cap_tools;
    int max_tokens;
    int thinking_budget;     /* 0 = off */
    char *cache_key;         /* the session's id: OpenAI's prompt_cache_key (NULL: none) */
    double temperature;      /* < 0 = provider default */
    bool stream;
} msg_request;

typedef struct msg_usage {
    int64_t input_tokens;           /* not counting cache reads/writes */
    int64_t output_tokens;
    int64_t cache_read_tokens;
    int64_t cache_creation_tokens;
    /* the part of cache_creation_tokens cached for 1 hour (Anthropic's
     * usage.cache_creation.ephemeral_1h_input_tokens), priced apart from
     * the 5-minute writes */
    int64_t cache_creation_1h_tokens;
    int64_t reasoning_tokens;       /* part of output_tokens where reported */
    json_t *raw;                    /* the provider's own usage object, owned */
} msg_usage;

typedef struct msg_response {
    msg_message message;           /* role = assistant */
    loom_stop_reason stop_reason;   /* one of the model's (1–7); loom_protocol.h */
    char *stop_reason_raw;          /* provider's own word, e.g. "tool_calls" */
    msg_usage usage;
    char *response_id;              /* provider's message / response id */
    char *request_id;               /* from the response headers */
    char *model;                    /* as reported by the provider */
} msg_response;

/* Blocks: constructors copy their string arguments; `input` is stolen. */
msg_block *msg_message_add_text(msg_message *m, const char *text);
msg_block *msg_message_add_thinking(msg_message *m, const char *text, const char *signature);
msg_block *msg_message_add_redacted_thinking(msg_message *m, const char *data);
msg_block *msg_message_add_tool_use(msg_message *m, const char *id, const char *name,
                                      json_t *input);
msg_block *msg_message_add_tool_result(msg_message *m, const char *tool_use_id,
                                         const char *text, bool is_error);
msg_block *msg_message_add_image(msg_message *m, const char *media_type, const char *b64);
/* Appends an empty block of the kind and returns it (zeroed). */
msg_block *msg_message_push(msg_message *m, msg_block_kind kind);
void msg_message_free(msg_message *m);
/* Deep copy into dst (dst uninitialised). */
void msg_message_copy(msg_message *dst, const msg_message *src);

msg_message *msg_request_add_message(msg_request *r, msg_role role);
void msg_request_add_tool(msg_request *r, const char *name, const char *description,
                           json_t *schema /* stolen */);
void msg_request_free(msg_request *r);

void msg_usage_free(msg_usage *u);
/* The one usage sum: adds u's counts to *total (raw is left alone: it
 * describes one reply, never a sum). */
void msg_usage_add(msg_usage *total, const msg_usage *u);
/* Tokens a usage counts against a budget: input, output and cache. */
int64_t msg_usage_total(const msg_usage *u);
void msg_response_free(msg_response *r);

const char *msg_role_name(msg_role r);

/* Normalized usage as JSON: {"inputTokens","outputTokens","cacheReadTokens",
 * "cacheCreationTokens","reasoningTokens","totalTokens"}. New reference. */
json_t *msg_usage_to_json(const msg_usage *u);

/* The whole system prompt (static, a blank line, dynamic) for providers
 * that take one string; NULL when there is none. Caller frees. */
char *msg_request_system_text(const msg_request *r);

/* True when text is NULL, empty or only ASCII whitespace (space, tab,
 * newline, CR, VT, FF): a text block the Anthropic API refuses (400
 * "text content blocks must contain non-whitespace text"), which encoders
 * leave out of a request while the session keeps it as it came. */
bool msg_text_blank(const char *text);

/* The concatenated text blocks of a message; caller frees. */
char *msg_message_text(const msg_message *m);

#endif

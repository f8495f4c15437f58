/* provider.h — one interface to every model provider.
 *
 * A provider is a *codec* (request encoder + stream decoder + body parser for
 * one wire format) driven by one generic call path, provider_complete(),
 * which owns HTTP, SSE framing, error classification and retries. Codecs
 * never touch the network, so each can be tested and fuzzed on bytes alone.
 * The replay provider answers from a cassette file through the same sink.
 */
#ifndef LOOM_PROVIDER_PROVIDER_H
#define LOOM_PROVIDER_PROVIDER_H

#include <stdint.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/str.h"
#include "message/message.h"
#include "net/sse.h"

typedef enum {
    PROVIDER_ANTHROPIC,         /* Anthropic Messages API */
    PROVIDER_OPENAI_CHAT,       /* OpenAI Chat Completions (+ Ollama, vLLM, gateways) */
    PROVIDER_OPENAI_RESPONSES,  /* OpenAI Responses API */
    PROVIDER_REPLAY,            /* a cassette file; offline */
    PROVIDER_AUTO,              /* not chosen yet: resolved from the environment */
} provider_kind;

typedef struct provider_config {
    provider_kind kind;
    char *model;
    char *base_url;          /* Anthropic: ".../" + "v1/messages"; OpenAI: ".../v1" + "/chat/completions" */
    char *api_key;           /* may be NULL (local servers) */
    char *cassette;          /* PROVIDER_REPLAY: path of the cassette */
    int max_retries;         /* default 3 */
    long retry_base_ms;      /* first backoff, doubled per attempt; default 500 */
    long retry_max_ms;       /* cap of one backoff or Retry-After wait; default 60 000 */
    long connect_timeout_ms; /* default 10 000 */
    long idle_timeout_ms;    /* no byte for this long → retryable timeout; default 300 000 */
    /* One attempt from connect to the reply's last byte, however steadily
     * pings arrive; past it, a timeout that is not retried. Default 600 000
     * (LOOM_REQUEST_TIMEOUT_MS); 0 = none. */
    long request_timeout_ms;
    int64_t context_window;  /* tokens; from the model table unless set */
    int max_output_tokens;   /* from the model table unless set */
    /* Extended thinking's budget in tokens (Anthropic); 0 = off. Option
     * "thinking" / --thinking; the codec fits it under max_tokens. */
    int thinking_budget;
    /* OpenAI's reasoning effort, "low" | "medium" | "high"; "" = the
     * model's default. A fixed array so the struct can be copied. */
    char reasoning_effort[8];
    bool stream;             /* default true */
    /* Where api_key came from, for a refused key's message: "LOOM_API_KEY",
     * "ANTHROPIC_API_KEY", "OPENAI_API_KEY" or "the api_key setting"; ""
     * when there is no key. Set by provider_config_resolve. */
    char key_source[24];
} provider_config;

/* Streamed output as it arrives. Any callback may be NULL. */
typedef struct provider_stream_sink {
    void *ctx;
    void (*on_text)(void *ctx, const char *delta, size_t len);
    void (*on_thinking)(void *ctx, const char *delta, size_t len);
    void (*on_tool_use)(void *ctx, const char *id, const char *name);
    /* The attempt failed and will be retried after delay_s: whatever was
     * streamed in this attempt is void and will be sent again. */
    void (*on_retry)(void *ctx, int attempt, double delay_s, const loom_error *why);
    /* A tool call's block is complete in the stream: its id, name and
     * input (borrowed for the call; the same input the whole reply will
     * carry) are final, though the message may still fail or be retried.
     * Called once per call, in the reply's call order. */
    void (*on_tool_call)(void *ctx, const char *id, const char *name, const json_t *input);
} provider_stream_sink;

/* What an encoder produces: the full URL, headers and body. */
typedef struct provider_http_call {
    loom_str url;
    char **headers;          /* NULL-terminated "Name: value" strings, owned */
    size_t n_headers;
    loom_str body;
} provider_http_call;

void provider_http_call_header(provider_http_call *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void provider_http_call_free(provider_http_call *c);

typedef struct provider_decoder provider_decoder;  /* a codec's own stream state */

typedef struct provider_codec_ops {
    const char *name;
    int (*encode)(const msg_request *req, const provider_config *cfg,
                  provider_http_call *call, loom_error *err);
    /* Stream decoding: events in, *out filled, deltas to sink. */
    provider_decoder *(*decoder_new)(msg_response *out, const provider_stream_sink *sink);
    int (*decoder_event)(provider_decoder *d, const sse_event *ev, loom_error *err);
    /* End of the byte stream: fails (retryable) unless the terminal event came. */
    int (*decoder_finish)(provider_decoder *d, loom_error *err);
    void (*decoder_free)(provider_decoder *d);
    /* A complete non-streaming body. */
    int (*parse_body)(const char *body, size_t len, msg_response *out, loom_error *err);
} provider_codec_ops;

extern const provider_codec_ops anthropic_codec;
extern const provider_codec_ops openai_chat_codec;
extern const provider_codec_ops openai_responses_codec;

const provider_codec_ops *provider_codec(provider_kind kind);  /* NULL for replay */
const char *provider_kind_name(provider_kind kind);
int provider_kind_parse(const char *name, provider_kind *out);

/* Classifies a provider failure into a loom_error, with the provider's own
 * message. status is the HTTP status (0 for an in-stream error event);
 * type/code are the provider's error type and code strings (may be NULL). */
void provider_classify_error(long status, const char *type, const char *code,
                         const char *message, loom_error *err);
/* Same, from an error body in either the Anthropic or the OpenAI shape. */
void provider_classify_error_body(long status, const char *body, size_t len, loom_error *err);
/* The window a too-long refusal names ("prompt is too long: 17000 tokens >
 * 16000 maximum", OpenAI's context_length_exceeded "maximum context length
 * is 16000 tokens"), so the loop can learn a limit it was never told; 0
 * when the message names none. */
int64_t provider_refusal_window(const char *message);

/* Fills cfg from the environment: LOOM_PROVIDER, LOOM_MODEL, LOOM_BASE_URL,
 * LOOM_API_KEY, LOOM_CASSETTE, LOOM_MAX_RETRIES, LOOM_RETRY_BASE_MS,
 * LOOM_CONTEXT_WINDOW, LOOM_MAX_OUTPUT_TOKENS, then the usual
 * ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL / ANTHROPIC_MODEL / OPENAI_API_KEY /
 * OPENAI_BASE_URL / OPENAI_MODEL. Values already set in cfg (non-NULL /
 * non-negative) win. */
void provider_config_init(provider_config *cfg);
int provider_config_resolve(provider_config *cfg, loom_error *err);
void provider_config_free(provider_config *cfg);

/* One model call: encode, send, decode (streaming or not), classify errors,
 * retry what is retryable with backoff + jitter (Retry-After honoured).
 * On success *out holds the whole assistant reply (caller frees with
 * msg_response_free). On failure *out is empty and err says why. */
int provider_complete(const provider_config *cfg, const msg_request *req,
                      const provider_stream_sink *sink, const loom_cancel *cancel,
                      msg_response *out, loom_error *err);

/* A model call behind a port (DESIGN.md §1): the loop and the context
 * module call the model through one, so a test can stand a fake model in
 * without HTTP. A zeroed port is provider_complete itself. */
typedef int (*provider_complete_fn)(void *ctx, const provider_config *cfg,
                                    const msg_request *req, const provider_stream_sink *sink,
                                    const loom_cancel *cancel, msg_response *out,
                                    loom_error *err);
typedef struct provider_port {
    provider_complete_fn complete;  /* NULL: provider_complete */
    void *ctx;
} provider_port;

/* provider_complete through port (NULL or zeroed: the real one). */
int provider_port_complete(const provider_port *port, const provider_config *cfg,
                           const msg_request *req, const provider_stream_sink *sink,
                           const loom_cancel *cancel, msg_response *out, loom_error *err);

/* Counts maximal runs of assistant messages: the number of model turns a
 * conversation already holds (used by replay to pick its answer). */
size_t provider_assistant_turns(const msg_request *req);

#endif

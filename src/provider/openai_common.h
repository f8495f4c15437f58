/* openai_common.h — what the two OpenAI codecs (Chat Completions and
 * Responses) share: request scaffolding (URL, headers, model, strings that
 * must stay valid UTF-8), reading untrusted stream events and bodies with
 * positioned protocol errors, byte-exact reassembly of deltas cut inside a
 * UTF-8 sequence, tool-argument parsing, usage normalization and in-stream
 * error classification. Internal to src/provider/openai_*.c.
 */
#ifndef LOOM_PROVIDER_OPENAI_COMMON_H
#define LOOM_PROVIDER_OPENAI_COMMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/str.h"
#include "message/message.h"
#include "provider/provider.h"
#include "net/sse.h"

/* Fills call->url with base_url + path (one trailing '/' of base_url
 * dropped) and the headers every OpenAI-style endpoint takes: Content-Type,
 * Authorization only with a non-empty key, Accept: text/event-stream when
 * streaming. Sets *model to the model to ask for (request first, then
 * config; borrowed). Fails with LOOM_ERR_CONFIG when either is missing. */
int oai_call_start(const msg_request *req, const provider_config *cfg, const char *path,
                   provider_http_call *call, const char **model, loom_error *err);

/* Serializes body into call->body and releases it (steals the reference). */
int oai_call_finish(json_t *body, provider_http_call *call, loom_error *err);
/* A string no request holds: a fresh UUID in a "loom-kept-" prefix. */
void oai_splice_mark(char *out, size_t n);
/* oai_call_finish, with the string element mark (NULL: none) of the dump
 * replaced by bytes: the kept messages' items, written once
 * (context/history_keep.h). */
int oai_call_finish_spliced(json_t *body, const char *mark, const loom_str *bytes,
                            provider_http_call *call, loom_error *err);

/* A JSON string for s ("" for NULL); invalid UTF-8 becomes U+FFFD rather
 * than failing, so one bad byte in a tool result cannot drop a message. */
json_t *oai_jstr(const char *s);

/* One user message in the order both APIs require: every tool result
 * first, each as its own item right after the assistant turn whose calls
 * it answers (the server rejects another order), then the message's own
 * text and images, then the dynamic tail as a message of its own — folded
 * into the user's message it would change that message, and the next
 * request (without the tail) would differ before it. result_item makes
 * the item of one tool-result block; content gives the "content" of the
 * blocks that are (tail) or are not (!tail) in the tail, NULL when none.
 * Items are appended to `items` (Chat's messages, Responses' input). */
void oai_add_user(json_t *items, const msg_message *m,
                  json_t *(*result_item)(const msg_block *b),
                  json_t *(*content)(const msg_message *m, bool tail));

/* The parts of m's text and image blocks that are (tail) or are not
 * (!tail) in the dynamic tail, in order, each made by text_part or
 * image_part (the two APIs name and nest them differently); NULL when
 * there are none. */
json_t *oai_parts(const msg_message *m, bool tail, json_t *(*text_part)(const msg_block *b),
                  json_t *(*image_part)(const msg_block *b));

/* Whether the model reasons (takes `reasoning` / `reasoning_effort` and
 * returns reasoning items): the model table's MODEL_REASONING_EFFORT
 * families (models.c: gpt-5*, o1, o3, o4-mini). Others (gpt-4o, gpt-4.1,
 * local models) get no reasoning fields: they refuse them. */
bool oai_model_reasons(const char *model);

/* The effort level to send ("low", "medium", "high"), NULL for none: the
 * configured one (cfg->reasoning_effort), else one derived from a thinking
 * budget (cut-offs are Loom's choice; a budget is rarely tuned finely);
 * NULL for a model that does not reason, which would refuse the field. */
const char *oai_effort(const msg_request *req, const provider_config *cfg);

/* "data:MEDIA;base64,DATA" for an image block; caller frees. */
char *oai_image_url(const msg_block *b);

/* The `arguments` string for a tool_use block's input: compact JSON, "{}"
 * when there is none; caller frees. */
char *oai_arguments(const json_t *input);

/* A parsed stream event. `escaped` says raw non-UTF-8 bytes were smuggled
 * through the parse (see openai_common.c); strings taken from `root` must
 * then go through oai_append / oai_dup to get the original bytes back. */
typedef struct oai_event {
    json_t *root;   /* owned; a JSON object */
    bool escaped;
} oai_event;

/* Parses an event's data. Returns 1 and fills *out for a JSON object; 0 for
 * data that carries nothing (blank keep-alives); negative with
 * LOOM_ERR_MODEL_PROTOCOL naming the SSE line and quoting the data
 * otherwise. */
int oai_event_parse(const sse_event *ev, oai_event *out, loom_error *err);
/* Same for a complete non-streaming body (an object or fails). */
int oai_body_parse(const char *body, size_t len, oai_event *out, loom_error *err);
void oai_event_free(oai_event *e);

/* Appends / copies the bytes of a JSON string value (no-op / NULL when v is
 * not a string), undoing the escape of oai_event when it was used. */
void oai_append(loom_str *dst, const json_t *v, bool escaped);
char *oai_dup(const json_t *v, bool escaped);

/* True when data (len bytes) is "[DONE]", allowing surrounding blanks. */
bool oai_is_done_marker(const char *data, size_t len);

/* Parses accumulated tool-call arguments into the input object for a
 * TOOL_USE block (new reference, always an object). See the .c for what
 * happens to arguments that are not a JSON object. */
json_t *oai_tool_input(const char *args, size_t len);

/* Normalizes an OpenAI usage object into u. The two APIs name the same
 * numbers differently, hence the key parameters: Chat uses prompt_tokens /
 * completion_tokens / prompt_tokens_details / completion_tokens_details,
 * Responses input_tokens / output_tokens / input_tokens_details /
 * output_tokens_details. u->raw takes a new reference to usage. */
void oai_usage_fill(msg_usage *u, json_t *usage, const char *in_key, const char *out_key,
                    const char *in_details, const char *out_details);

/* Classifies an error object {type, code, message} (code may be a number)
 * with provider_classify_error as an in-stream failure; returns negative. */
int oai_fail_error(const json_t *error, const char *fallback, loom_error *err);

/* The stream stopped before its terminal event: retryable. */
int oai_fail_truncated(loom_error *err);

/* Replaces *dst with a copy of s (NULL allowed). */
void oai_set(char **dst, const char *s);

#endif

/* tokens.h — a local token estimator, for when the provider has not told
 * us (seed 001 §8.2 "local-estimate"): a fresh session, text added since
 * the last reply, the parts of a request the ladder weighs.
 *
 * No tokenizer ships for every model, and the figure only has to steer
 * compaction, so the estimate is deliberately on the high side: about
 * 3.6 bytes per token for ASCII (English prose and code run 3.5–4.5 with
 * the common BPE vocabularies), one token per non-ASCII character (CJK is
 * close to that; accented Latin is over-counted, which is the safe side),
 * a fixed overhead per block for the wire format's framing, and 1,000
 * tokens per image (seed 000 ch. 12). The provider's own count, when it
 * reports one, always wins (context/pressure.h). */
#ifndef LOOM_CONTEXT_TOKENS_H
#define LOOM_CONTEXT_TOKENS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "message/message.h"

#define TOKENS_PER_IMAGE 1000
#define TOKENS_PER_BLOCK 8     /* role, type and id framing of one block */

int64_t tokens_estimate_text(const char *s, size_t n);
int64_t tokens_estimate_cstr(const char *s);
/* A JSON value as its compact serialization would count. */
int64_t tokens_estimate_json(const json_t *v);
int64_t tokens_estimate_block(const msg_block *b);
int64_t tokens_estimate_message(const msg_message *m);
/* System prompt, tools and every message. */
int64_t tokens_estimate_request(const msg_request *r);
/* The tools' declarations alone (name, description, schema). */
int64_t tokens_estimate_tools(const msg_request *r);

#endif

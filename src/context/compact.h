/* compact.h — ladder step D: the model-written summary (seed 001 §8.3–8.7).
 *
 * The summarization request is isolated from the agent (seed 001 §7.1 rule
 * 2): no tools, its own system prompt, the conversation rendered as text in
 * one user message (so it carries no tool_use blocks a provider would want
 * declared tools for), then the instructions: an <analysis> scratch part,
 * a <summary> with six sections, under 1,000 words, "do not redo completed
 * work", and every user message listed verbatim so corrections survive. It
 * goes to the agent's own model: the summary replaces the whole history,
 * so it must not be downgraded. */
#ifndef LOOM_CONTEXT_COMPACT_H
#define LOOM_CONTEXT_COMPACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/str.h"
#include "message/message.h"

#define COMPACT_SYSTEM_PROMPT                                                                  \
    "You summarize a conversation between a user and a coding agent so that the agent can "   \
    "continue the work from the summary alone. You have no tools: answer with text only."

/* The six section titles the prompt asks for, in order. */
extern const char *const compact_sections[6];

/* The conversation records of view as the plain text a helper model reads
 * ("[user]", "[assistant]", "[tool call …]", tool results cut to 2,000
 * bytes), appended to out; memory extraction renders with it too. */
void compact_render_conversation(json_t *const *view, size_t n, loom_str *out);

/* The texts of the messages a person wrote in chain (root first; pass the
 * whole chain across earlier summaries, so the user's words outlive every
 * compaction), as a JSON array of strings. New reference. */
json_t *compact_user_messages(json_t *const *chain, size_t n);

/* The summarization request over view (root first, as the model sees the
 * session), fitted into budget_tokens of input: long tool results are cut
 * in the middle first, then the middle of the conversation itself.
 * user_messages (from compact_user_messages) are listed verbatim after the
 * instructions and never cut. instructions (the user's /compact text) may
 * be NULL. req must be zeroed; the caller sets model, max_tokens and
 * stream. */
void compact_build_request(json_t *const *view, size_t n, const json_t *user_messages,
                           const char *instructions, int64_t budget_tokens, msg_request *req);

/* The summary in a reply: the <summary> part when there is one, else the
 * reply without its <analysis> part; trimmed. NULL when nothing is left.
 * Caller frees. */
char *compact_extract_summary(const char *reply);

/* The degenerate-summary guard (seed 001 §8.2): false when the chain (or
 * the view: a background compaction's record counts as a summary) holds
 * nothing since its last summary but that summary (and the unanswered
 * prompt carried over it, providerData.carriedOverFrom) — compacting again
 * would only summarize a summary. */
bool compact_has_new_history(json_t *const *chain, size_t n);

#endif

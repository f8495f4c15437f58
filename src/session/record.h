/* record.h — the session record schema: what one line of a session file is.
 *
 * A record is a jansson object. Every record carries "type", "id" (UUIDv7),
 * "parentId" (string or null), "timestamp" (ISO 8601 UTC, ms) and
 * "sessionId"; the transcript fills whichever of those a constructor left
 * out. The types and their fields follow seed 001 §3.2 and are written down
 * in docs/session-format.md. This module owns the schema (constructors and
 * tolerant accessors); the tree and the file belong to transcript.h.
 */
#ifndef LOOM_SESSION_RECORD_H
#define LOOM_SESSION_RECORD_H

#include <jansson.h>
#include <stdbool.h>

#include "message/message.h"

/* Conversation types: these enter the model context. */
#define RECORD_MESSAGE "message"
#define RECORD_REASONING "reasoning"
#define RECORD_FUNCTION_CALL "function_call"
#define RECORD_FUNCTION_CALL_RESULT "function_call_result"
#define RECORD_SUMMARY "summary"
/* Non-conversation types: never sent to a model. */
#define RECORD_SESSION_META "session-meta"
#define RECORD_FILE_HISTORY_SNAPSHOT "file-history-snapshot"
#define RECORD_RESEND_FORK_NOTICE "resend-fork-notice"
#define RECORD_AI_TITLE "ai-title"
#define RECORD_CUSTOM_TITLE "custom-title"
#define RECORD_TITLE "title"   /* {title, source}: the session's title (listing.h) */
#define RECORD_TURN_METRICS "turn-metrics"
#define RECORD_TOPIC "topic"
#define RECORD_GOAL_RESULT "goal-result"
#define RECORD_GOAL_PROGRESS "goal-progress"
/* {purpose, tier, model, status, usage, costUsd?, …}: a helper model call
 * (provider/helper.h; governance/helper_log.c writes it) */
#define RECORD_HELPER_CALL "helper-call"

/* True for the five conversation types. Every other type, including ones
 * this build does not know, is kept on disk but never enters the context. */
bool record_is_conversation(const char *type);
/* True for a conversation record produced by the model (reasoning, an
 * assistant message, a function_call): the side that holds providerData. */
bool record_is_assistant_side(const json_t *rec);

/* Accessors: NULL when the field is absent or of the wrong type. */
const char *record_type(const json_t *rec);
const char *record_id(const json_t *rec);
const char *record_parent_id(const json_t *rec);
const char *record_logical_parent_id(const json_t *rec);
const char *record_role(const json_t *rec);  /* message records only */
/* The text of a message record: its string content, or its text blocks
 * joined by newlines (images and other blocks left out); "" when none.
 * Caller frees. */
char *record_message_text(const json_t *rec);
/* True when rec is a message record with role "user". */
bool record_is_user_message(const json_t *rec);

/* A new record of the given type with "type", a fresh "id" and "timestamp"
 * already set (so a caller can refer to the id before appending). New
 * reference. Every constructor below starts from this. */
json_t *record_new(const char *type);

/* {"type":"message","role":"user","content":[{"type":"text","text"}]}. */
json_t *record_user_text(const char *text);
/* The same with role "assistant"; for notes the harness writes in the
 * model's place (e.g. "Interrupted by user", which also gets skipRun). */
json_t *record_assistant_text(const char *text);
/* Appends {"type":"image","mediaType","data"} to a message's content. */
void record_add_image(json_t *msg, const char *media_type, const char *b64);
/* reasoning: text and/or redactedData; signature optional. NULL fields are
 * omitted. */
json_t *record_reasoning(const char *text, const char *signature, const char *redacted_data);
/* function_call: arguments is the JSON text of the call's input. */
json_t *record_function_call(const char *call_id, const char *name, const char *arguments);
/* function_call_result: status "completed" or "error" from is_error. */
json_t *record_tool_result(const char *call_id, const char *output, bool is_error);
/* summary (compaction): no physical parent — "parentId" is null — and
 * "logicalParentId" names the last record it replaces (may be NULL, then
 * the transcript fills in its leaf). */
json_t *record_summary(const char *summary, const char *logical_parent_id);
/* A title record: {title, source} ("first-prompt"), no parent. */
json_t *record_title(const char *title, const char *source);
/* session-meta: cwd, version, provider, model, createdAt. forkedFrom and
 * forkedAt are added by the fork. NULL strings are omitted. */
json_t *record_session_meta(const char *cwd, const char *provider, const char *model);
/* resend-fork-notice with providerData {skipRun, resendForkNotice}
 * (seed 001 §3.3). parent_id NULL means a root (the edited message had no
 * parent). */
json_t *record_resend_fork_notice(const char *parent_id, const char *edited_user_id);

/* The model's reply as records, in reply order: a reasoning record per
 * thinking block, one message record per run of text/image blocks, one
 * function_call per tool use. Each carries providerData with
 * conversationRequestId (request_id, else resp->request_id), messageId
 * (resp->response_id) and model; the last one also carries usage
 * (msg_usage_to_json), rawUsage (the provider's own, when present) and
 * stopReason. A reply without blocks still yields one empty assistant
 * message so its usage is recorded. Returns a new JSON array of new
 * records; the caller appends each and decrefs the array. */
json_t *record_from_response(const msg_response *resp, const char *request_id);

/* The record's providerData object, created when create is true and it is
 * absent (or not an object). Borrowed; NULL when absent and !create. */
json_t *record_provider_data(json_t *rec, bool create);
/* providerData.skipRun: a record that must never drive a run. */
void record_set_skip_run(json_t *rec, bool skip);
bool record_skip_run(const json_t *rec);
/* providerData.resumeNote: a user message that carries a run on without
 * a prompt of the person's (loom_run_continue): it drives the run but
 * names no session and is no prompt in a listing. */
void record_set_resume_note(json_t *rec);
bool record_resume_note(const json_t *rec);

/* Serializes rec as one compact line without the newline, with the common
 * fields first (type, id, parentId, logicalParentId, timestamp, sessionId)
 * so a file stays readable with grep and head. Caller frees. */
char *record_dump_line(const json_t *rec);

#endif

/* record.c — constructors and tolerant accessors for session records.
 *
 * Accessors read outside input (a session file anyone may have edited), so
 * a wrong type reads as "absent" and never crashes. Constructors only ever
 * produce the schema in docs/session-format.md.
 */
#include "session/record.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"
#include "base/uuid.h"

#ifndef LOOM_VERSION_STRING
#define LOOM_VERSION_STRING "0.0.0"
#endif

static const char *const conversation_types[] = {
    RECORD_MESSAGE, RECORD_REASONING, RECORD_FUNCTION_CALL,
    RECORD_FUNCTION_CALL_RESULT, RECORD_SUMMARY,
};

bool record_is_conversation(const char *type)
{
    if (!type)
        return false;
    for (size_t i = 0; i < sizeof conversation_types / sizeof *conversation_types; i++)
        if (strcmp(type, conversation_types[i]) == 0)
            return true;
    return false;
}

const char *record_type(const json_t *rec)
{
    return json_get_str(rec, "type", NULL);
}

const char *record_id(const json_t *rec)
{
    return json_get_str(rec, "id", NULL);
}

const char *record_parent_id(const json_t *rec)
{
    return json_get_str(rec, "parentId", NULL);
}

const char *record_logical_parent_id(const json_t *rec)
{
    return json_get_str(rec, "logicalParentId", NULL);
}

const char *record_role(const json_t *rec)
{
    const char *type = record_type(rec);
    if (!type || strcmp(type, RECORD_MESSAGE) != 0)
        return NULL;
    return json_get_str(rec, "role", NULL);
}

bool record_is_user_message(const json_t *rec)
{
    const char *role = record_role(rec);
    return role && strcmp(role, "user") == 0;
}

bool record_is_assistant_side(const json_t *rec)
{
    const char *type = record_type(rec);
    if (!type)
        return false;
    if (strcmp(type, RECORD_REASONING) == 0 || strcmp(type, RECORD_FUNCTION_CALL) == 0)
        return true;
    const char *role = record_role(rec);
    return role && strcmp(role, "assistant") == 0;
}

static void stamp_now(json_t *rec, const char *key)
{
    char ts[32];
    clock_iso8601(clock_wall_ms(), ts);
    json_object_set_new(rec, key, json_string(ts));
}

json_t *record_new(const char *type)
{
    json_t *rec = json_object();
    char id[UUID_STR_LEN];
    uuid_v7(id);
    json_set_str(rec, "type", type);
    json_object_set_new(rec, "id", json_string(id));
    stamp_now(rec, "timestamp");
    return rec;
}

/* An empty string rather than a missing field: every consumer of the
 * schema may then rely on the field being a string. */
static void set_str_or_empty(json_t *obj, const char *key, const char *s)
{
    json_set_str(obj, key, s ? s : "");
}

static json_t *text_message(const char *role, const char *text)
{
    json_t *rec = record_new(RECORD_MESSAGE);
    json_set_str(rec, "role", role);
    json_t *content = json_array();
    json_t *block = json_object();
    json_set_str(block, "type", "text");
    set_str_or_empty(block, "text", text);
    json_array_append_new(content, block);
    json_object_set_new(rec, "content", content);
    return rec;
}

json_t *record_user_text(const char *text)
{
    return text_message("user", text);
}

json_t *record_assistant_text(const char *text)
{
    return text_message("assistant", text);
}

static json_t *content_of(json_t *msg)
{
    json_t *content = json_get_arr(msg, "content");
    if (!content) {
        content = json_array();
        json_object_set_new(msg, "content", content);
    }
    return content;
}

static json_t *image_block(const char *media_type, const char *b64)
{
    json_t *block = json_object();
    json_set_str(block, "type", "image");
    set_str_or_empty(block, "mediaType", media_type);
    set_str_or_empty(block, "data", b64);
    return block;
}

void record_add_image(json_t *msg, const char *media_type, const char *b64)
{
    if (!json_is_object(msg))
        return;
    json_array_append_new(content_of(msg), image_block(media_type, b64));
}

json_t *record_reasoning(const char *text, const char *signature, const char *redacted_data)
{
    json_t *rec = record_new(RECORD_REASONING);
    json_set_str(rec, "text", text);
    json_set_str(rec, "signature", signature);
    json_set_str(rec, "redactedData", redacted_data);
    return rec;
}

json_t *record_function_call(const char *call_id, const char *name, const char *arguments)
{
    json_t *rec = record_new(RECORD_FUNCTION_CALL);
    set_str_or_empty(rec, "callId", call_id);
    set_str_or_empty(rec, "name", name);
    json_set_str(rec, "arguments", arguments && *arguments ? arguments : "{}");
    return rec;
}

json_t *record_tool_result(const char *call_id, const char *output, bool is_error)
{
    json_t *rec = record_new(RECORD_FUNCTION_CALL_RESULT);
    set_str_or_empty(rec, "callId", call_id);
    json_set_str(rec, "status", is_error ? "error" : "completed");
    set_str_or_empty(rec, "output", output);
    json_object_set_new(rec, "isError", json_boolean(is_error));
    return rec;
}

json_t *record_summary(const char *summary, const char *logical_parent_id)
{
    json_t *rec = record_new(RECORD_SUMMARY);
    /* seed 001 §3.4: a summary has no physical parent; the explicit null
     * also stops transcript_append from chaining it to the leaf. */
    json_object_set_new(rec, "parentId", json_null());
    set_str_or_empty(rec, "summary", summary);
    json_set_str(rec, "logicalParentId", logical_parent_id);
    return rec;
}

json_t *record_title(const char *title, const char *source)
{
    json_t *rec = record_new(RECORD_TITLE);
    json_object_set_new(rec, "parentId", json_null());
    json_set_str(rec, "title", title);
    json_set_str(rec, "source", source);
    return rec;
}

json_t *record_session_meta(const char *cwd, const char *provider, const char *model)
{
    json_t *rec = record_new(RECORD_SESSION_META);
    json_object_set_new(rec, "parentId", json_null());
    json_set_str(rec, "cwd", cwd);
    json_set_str(rec, "version", LOOM_VERSION_STRING);
    json_set_str(rec, "provider", provider);
    json_set_str(rec, "model", model);
    stamp_now(rec, "createdAt");
    return rec;
}

json_t *record_resend_fork_notice(const char *parent_id, const char *edited_user_id)
{
    json_t *rec = record_new(RECORD_RESEND_FORK_NOTICE);
    json_object_set_new(rec, "parentId", parent_id ? json_string(parent_id) : json_null());
    json_set_str(rec, "editedUserItemId", edited_user_id);
    json_t *pd = record_provider_data(rec, true);
    json_object_set_new(pd, "skipRun", json_true());
    json_object_set_new(pd, "resendForkNotice", json_true());
    return rec;
}

json_t *record_provider_data(json_t *rec, bool create)
{
    json_t *pd = json_get_obj(rec, "providerData");
    if (pd || !create || !json_is_object(rec))
        return pd;
    pd = json_object();
    json_object_set_new(rec, "providerData", pd);
    return pd;
}

void record_set_skip_run(json_t *rec, bool skip)
{
    json_t *pd = record_provider_data(rec, true);
    if (pd)
        json_object_set_new(pd, "skipRun", json_boolean(skip));
}

bool record_skip_run(const json_t *rec)
{
    return json_get_bool(json_get_obj(rec, "providerData"), "skipRun", false);
}

void record_set_resume_note(json_t *rec)
{
    json_t *pd = record_provider_data(rec, true);
    if (pd)
        json_object_set_new(pd, "resumeNote", json_true());
}

bool record_resume_note(const json_t *rec)
{
    return json_get_bool(json_get_obj(rec, "providerData"), "resumeNote", false);
}

/* providerData shared by every record of one reply (seed 001 §3.5). */
static void attribute(json_t *rec, const msg_response *resp, const char *request_id)
{
    json_t *pd = record_provider_data(rec, true);
    json_set_str(pd, "conversationRequestId", request_id ? request_id : resp->request_id);
    json_set_str(pd, "messageId", resp->response_id);
    json_set_str(pd, "model", resp->model);
}

json_t *record_from_response(const msg_response *resp, const char *request_id)
{
    json_t *out = json_array();
    if (!resp)
        return out;
    const msg_message *m = &resp->message;
    json_t *text_msg = NULL; /* the message record a run of text goes into */
    for (size_t i = 0; i < m->n_blocks; i++) {
        const msg_block *b = &m->blocks[i];
        json_t *rec = NULL;
        switch (b->kind) {
        case MSG_BLOCK_TEXT:
        case MSG_BLOCK_IMAGE: {
            if (!text_msg) {
                text_msg = record_new(RECORD_MESSAGE);
                json_set_str(text_msg, "role", "assistant");
                json_object_set_new(text_msg, "content", json_array());
                rec = text_msg;
            }
            json_t *block;
            if (b->kind == MSG_BLOCK_TEXT) {
                block = json_object();
                json_set_str(block, "type", "text");
                set_str_or_empty(block, "text", b->text);
            } else {
                block = image_block(b->media_type, b->data);
            }
            json_array_append_new(json_get_arr(text_msg, "content"), block);
            break;
        }
        case MSG_BLOCK_THINKING:
            text_msg = NULL;
            rec = record_reasoning(b->text ? b->text : "", b->signature, b->data);
            break;
        case MSG_BLOCK_REDACTED_THINKING:
            text_msg = NULL;
            rec = record_reasoning(NULL, b->signature, b->data ? b->data : "");
            break;
        case MSG_BLOCK_TOOL_USE: {
            text_msg = NULL;
            char *args = b->input ? json_dump_compact(b->input) : NULL;
            rec = record_function_call(b->id, b->name, args);
            free(args);
            break;
        }
        case MSG_BLOCK_TOOL_RESULT:
            /* Never part of a model reply; nothing sensible to record. */
            break;
        }
        if (rec) {
            attribute(rec, resp, request_id);
            json_array_append_new(out, rec);
        }
    }
    if (json_array_size(out) == 0) {
        json_t *rec = record_new(RECORD_MESSAGE);
        json_set_str(rec, "role", "assistant");
        json_object_set_new(rec, "content", json_array());
        attribute(rec, resp, request_id);
        json_array_append_new(out, rec);
    }
    json_t *pd = record_provider_data(json_array_get(out, json_array_size(out) - 1), true);
    json_object_set_new(pd, "usage", msg_usage_to_json(&resp->usage));
    if (resp->usage.raw)
        json_object_set_new(pd, "rawUsage", json_deep_copy(resp->usage.raw));
    json_set_str(pd, "stopReason", loom_stop_reason_name(resp->stop_reason));
    return out;
}

static const char *const leading_keys[] = {
    "type", "id", "parentId", "logicalParentId", "timestamp", "sessionId",
};

char *record_dump_line(const json_t *rec)
{
    if (!json_is_object(rec))
        return json_dump_compact(rec);
    /* A shallow reordered copy: values are shared, only the key order of
     * the top level changes. */
    json_t *ordered = json_object();
    size_t nlead = sizeof leading_keys / sizeof *leading_keys;
    for (size_t i = 0; i < nlead; i++) {
        json_t *v = json_object_get(rec, leading_keys[i]);
        if (v)
            json_object_set(ordered, leading_keys[i], v);
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)rec, key, v) {
        if (!json_object_get(ordered, key))
            json_object_set(ordered, key, v);
    }
    char *line = json_dump_compact(ordered);
    json_decref(ordered);
    return line;
}

char *record_message_text(const json_t *rec)
{
    json_t *content = json_object_get(rec, "content");
    if (json_is_string(content))
        return xstrdup(json_string_value(content));
    loom_str s = LOOM_STR_INIT;
    size_t i;
    json_t *b;
    json_array_foreach(json_is_array(content) ? content : NULL, i, b) {
        const char *t = json_get_str(b, "text", NULL);
        if (t) {
            if (s.len)
                str_putc(&s, '\n');
            str_puts(&s, t);
        }
    }
    return str_steal(&s);
}

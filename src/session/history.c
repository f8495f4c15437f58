/* history.c — converting a chain of session records into wire messages,
 * merging records by side and repairing call/result pairing so that no
 * provider rejects a history this session wrote (or a damaged one). */
#include "session/history.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "session/record.h"

typedef history_side side;
#define SIDE_NONE HISTORY_SIDE_NONE
#define SIDE_ASSISTANT HISTORY_SIDE_ASSISTANT
#define SIDE_USER HISTORY_SIDE_USER

static side side_of(const json_t *rec)
{
    const char *type = record_type(rec);
    if (!record_is_conversation(type))
        return SIDE_NONE;
    if (strcmp(type, RECORD_FUNCTION_CALL_RESULT) == 0 || strcmp(type, RECORD_SUMMARY) == 0)
        return SIDE_USER;
    if (strcmp(type, RECORD_MESSAGE) == 0) {
        const char *role = record_role(rec);
        if (role && strcmp(role, "user") == 0)
            return SIDE_USER;
        if (role && strcmp(role, "assistant") == 0)
            return SIDE_ASSISTANT;
        return SIDE_NONE;  /* an unknown role has no place in a request */
    }
    return SIDE_ASSISTANT;  /* reasoning, function_call */
}

history_side history_record_side(const json_t *rec)
{
    return side_of(rec);
}

/* The last message when it has this role, else a new one. Fetched anew for
 * every block: adding a message may move the array. */
static msg_message *tail(msg_request *req, msg_role role)
{
    if (req->n_messages && req->messages[req->n_messages - 1].role == role)
        return &req->messages[req->n_messages - 1];
    return msg_request_add_message(req, role);
}

static bool nonempty(const char *s)
{
    return s && *s;
}

/* Content blocks of a message record; false when none was usable. */
static bool add_content(msg_request *req, msg_role role, const json_t *rec)
{
    json_t *content = json_object_get(rec, "content");
    if (json_is_string(content)) {
        if (!nonempty(json_string_value(content)))
            return false;
        msg_message_add_text(tail(req, role), json_string_value(content));
        return true;
    }
    bool any = false;
    size_t i;
    json_t *b;
    json_array_foreach(json_is_array(content) ? content : NULL, i, b) {
        const char *type = json_get_str(b, "type", "");
        if (strcmp(type, "text") == 0) {
            /* Providers refuse empty text blocks. */
            const char *text = json_get_str(b, "text", NULL);
            if (nonempty(text)) {
                msg_message_add_text(tail(req, role), text);
                any = true;
            }
        } else if (strcmp(type, "image") == 0 && role == MSG_ROLE_USER) {
            const char *mt = json_get_str(b, "mediaType", NULL);
            const char *data = json_get_str(b, "data", NULL);
            if (nonempty(mt) && nonempty(data)) {
                msg_message_add_image(tail(req, role), mt, data);
                any = true;
            }
        }
    }
    return any;
}

static bool add_reasoning(msg_request *req, const json_t *rec)
{
    const char *text = json_get_str(rec, "text", NULL);
    const char *sig = json_get_str(rec, "signature", NULL);
    const char *redacted = json_get_str(rec, "redactedData", NULL);
    msg_block *b;
    if (text) {
        b = msg_message_add_thinking(tail(req, MSG_ROLE_ASSISTANT), text, sig);
        if (redacted)
            b->data = xstrdup(redacted);
    } else if (redacted) {
        b = msg_message_add_redacted_thinking(tail(req, MSG_ROLE_ASSISTANT), redacted);
        if (sig)
            b->signature = xstrdup(sig);
    } else {
        return false;
    }
    return true;
}

static json_t *call_input(const json_t *rec)
{
    json_t *args = json_object_get(rec, "arguments");
    if (json_is_object(args))
        return json_deep_copy(args);
    json_t *input = NULL;
    if (json_is_string(args)) {
        json_error_t jerr;
        input = json_parse_fast(json_string_value(args), json_string_length(args), 0, &jerr);
    }
    if (!json_is_object(input)) {
        json_decref(input);
        input = json_object();
    }
    return input;
}

static const char *call_id(const json_t *rec)
{
    return json_get_str(rec, "callId", NULL);
}

static void add_result(msg_request *req, const char *id, const json_t *rec)
{
    const char *status = json_get_str(rec, "status", "completed");
    bool is_error = json_get_bool(rec, "isError", strcmp(status, "error") == 0);
    msg_message_add_tool_result(tail(req, MSG_ROLE_USER), id,
                                 json_get_str(rec, "output", ""), is_error);
}

typedef struct {
    const char **ids;  /* borrowed from the records of the chain */
    size_t n, cap;
} calls;

static void calls_push(calls *c, const char *id)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->ids = xrealloc(c->ids, c->cap * sizeof *c->ids);
    }
    c->ids[c->n++] = id;
}

static void emit_assistant(json_t *const *recs, size_t from, size_t to, msg_request *req,
                           calls *pending, history_stats *st)
{
    for (size_t k = from; k < to; k++) {
        const json_t *rec = recs[k];
        if (side_of(rec) != SIDE_ASSISTANT)
            continue;
        const char *type = record_type(rec);
        bool used = false;
        if (strcmp(type, RECORD_REASONING) == 0) {
            used = add_reasoning(req, rec);
        } else if (strcmp(type, RECORD_FUNCTION_CALL) == 0) {
            const char *id = call_id(rec);
            const char *name = json_get_str(rec, "name", NULL);
            if (nonempty(id) && nonempty(name)) {
                msg_message_add_tool_use(tail(req, MSG_ROLE_ASSISTANT), id, name,
                                          call_input(rec));
                calls_push(pending, id);
                used = true;
            } else {
                st->n_skipped++;
                continue;
            }
        } else {
            used = add_content(req, MSG_ROLE_ASSISTANT, rec);
        }
        if (used)
            st->n_used++;
    }
}

static void synthesize(msg_request *req, const char *id, history_stats *st)
{
    msg_message_add_tool_result(tail(req, MSG_ROLE_USER), id, HISTORY_INTERRUPTED_RESULT,
                                 true);
    st->n_synthesized++;
}

static void emit_user(json_t *const *recs, size_t from, size_t to, msg_request *req,
                      calls *pending, history_stats *st)
{
    bool *consumed = xcalloc(to - from, 1);
    /* callId -> the group's first result for it. A map rather than a scan
     * per call keeps a hostile file with thousands of calls linear. */
    json_t *first = json_object();
    for (size_t k = from; k < to; k++) {
        const char *id = call_id(recs[k]);
        if (id && side_of(recs[k]) == SIDE_USER &&
            strcmp(record_type(recs[k]), RECORD_FUNCTION_CALL_RESULT) == 0 &&
            !json_object_get(first, id))
            json_object_set_new_nocheck(first, id, json_integer((json_int_t)(k - from)));
    }
    /* Results first, in call order: providers want the answers to the last
     * assistant turn at the head of the next user turn. */
    for (size_t c = 0; c < pending->n; c++) {
        json_t *at = json_object_get(first, pending->ids[c]);
        size_t k = at ? (size_t)json_integer_value(at) : 0;
        if (at && !consumed[k]) {
            consumed[k] = true;
            add_result(req, pending->ids[c], recs[from + k]);
            st->n_used++;
        } else {
            synthesize(req, pending->ids[c], st);
        }
    }
    json_decref(first);
    pending->n = 0;
    for (size_t k = from; k < to; k++) {
        const json_t *rec = recs[k];
        if (consumed[k - from] || side_of(rec) != SIDE_USER)
            continue;
        const char *type = record_type(rec);
        if (strcmp(type, RECORD_FUNCTION_CALL_RESULT) == 0) {
            /* A result whose call is not right before it would make the
             * provider reject the whole request; as text it still tells
             * the model what happened. */
            loom_str s = LOOM_STR_INIT;
            const char *id = call_id(rec);
            str_printf(&s, "Result of tool call %s (its call is not in this history):\n%s",
                       id ? id : "(no id)", json_get_str(rec, "output", ""));
            msg_message_add_text(tail(req, MSG_ROLE_USER), str_cstr(&s));
            str_free(&s);
            st->n_orphans++;
            st->n_used++;
        } else if (strcmp(type, RECORD_SUMMARY) == 0) {
            loom_str s = LOOM_STR_INIT;
            str_puts(&s, HISTORY_SUMMARY_PREFIX);
            str_puts(&s, json_get_str(rec, "summary", ""));
            msg_message_add_text(tail(req, MSG_ROLE_USER), str_cstr(&s));
            str_free(&s);
            st->n_used++;
        } else if (add_content(req, MSG_ROLE_USER, rec)) {
            st->n_used++;
        }
    }
    free(consumed);
}

int history_from_records(json_t *const *recs, size_t n, msg_request *req,
                         history_stats *stats)
{
    history_stats local = {0};
    history_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    calls pending = {0};
    size_t i = 0;
    while (i < n) {
        side s = side_of(recs[i]);
        if (s == SIDE_NONE) {
            i++;
            continue;
        }
        /* The group runs until a conversation record of the other side;
         * records that belong to no side do not split it. */
        size_t j = i + 1;
        while (j < n) {
            side sj = side_of(recs[j]);
            if (sj != SIDE_NONE && sj != s)
                break;
            j++;
        }
        if (s == SIDE_ASSISTANT)
            emit_assistant(recs, i, j, req, &pending, st);
        else
            emit_user(recs, i, j, req, &pending, st);
        i = j;
    }
    for (size_t c = 0; c < pending.n; c++)
        synthesize(req, pending.ids[c], st);
    free(pending.ids);
    return 0;
}

int history_from_transcript(transcript *t, msg_request *req, history_stats *stats)
{
    json_t **recs = NULL;
    size_t n = 0;
    transcript_active(t, &recs, &n);
    int rc = history_from_records(recs, n, req, stats);
    free(recs);
    return rc;
}

/* message.c — constructors, copies and teardown of the normalized messages. */
#include "message/message.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"

msg_block *msg_message_push(msg_message *m, msg_block_kind kind)
{
    if (m->n_blocks == m->cap_blocks) {
        m->cap_blocks = m->cap_blocks ? m->cap_blocks * 2 : 4;
        m->blocks = xrealloc(m->blocks, m->cap_blocks * sizeof *m->blocks);
    }
    msg_block *b = &m->blocks[m->n_blocks++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

msg_block *msg_message_add_text(msg_message *m, const char *text)
{
    msg_block *b = msg_message_push(m, MSG_BLOCK_TEXT);
    b->text = xstrdup(text ? text : "");
    return b;
}

msg_block *msg_message_add_thinking(msg_message *m, const char *text, const char *signature)
{
    msg_block *b = msg_message_push(m, MSG_BLOCK_THINKING);
    b->text = xstrdup(text ? text : "");
    b->signature = xstrdup(signature);
    return b;
}

msg_block *msg_message_add_redacted_thinking(msg_message *m, const char *data)
{
    msg_block *b = msg_message_push(m, MSG_BLOCK_REDACTED_THINKING);
    b->data = xstrdup(data ? data : "");
    return b;
}

msg_block *msg_message_add_tool_use(msg_message *m, const char *id, const char *name,
                                      json_t *input)
{
    msg_block *b = msg_message_push(m, MSG_BLOCK_TOOL_USE);
    b->id = xstrdup(id ? id : "");
    b->name = xstrdup(name ? name : "");
    b->input = input ? input : json_object();
    return b;
}

msg_block *msg_message_add_tool_result(msg_message *m, const char *tool_use_id,
                                         const char *text, bool is_error)
{
    msg_block *b = msg_message_push(m, MSG_BLOCK_TOOL_RESULT);
    b->id = xstrdup(tool_use_id ? tool_use_id : "");
    b->text = xstrdup(text ? text : "");
    b->is_error = is_error;
    return b;
}

msg_block *msg_message_add_image(msg_message *m, const char *media_type, const char *b64)
{
    msg_block *b = msg_message_push(m, MSG_BLOCK_IMAGE);
    b->media_type = xstrdup(media_type ? media_type : "application/octet-stream");
    b->data = xstrdup(b64 ? b64 : "");
    return b;
}

static void block_free(msg_block *b)
{
    free(b->text);
    free(b->signature);
    free(b->data);
    free(b->media_type);
    free(b->id);
    free(b->name);
    json_decref(b->input);
}

void msg_message_free(msg_message *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_blocks; i++)
        block_free(&m->blocks[i]);
    free(m->blocks);
    m->blocks = NULL;
    m->n_blocks = m->cap_blocks = 0;
    if (m->wire) {
        free(m->wire->bytes);
        free(m->wire);
        m->wire = NULL;
    }
}

void msg_message_copy(msg_message *dst, const msg_message *src)
{
    memset(dst, 0, sizeof *dst);
    dst->role = src->role;
    for (size_t i = 0; i < src->n_blocks; i++) {
        const msg_block *s = &src->blocks[i];
        msg_block *d = msg_message_push(dst, s->kind);
        d->text = xstrdup(s->text);
        d->signature = xstrdup(s->signature);
        d->data = xstrdup(s->data);
        d->media_type = xstrdup(s->media_type);
        d->id = xstrdup(s->id);
        d->name = xstrdup(s->name);
        d->input = s->input ? json_deep_copy(s->input) : NULL;
        d->is_error = s->is_error;
        d->cache_control = s->cache_control;
        d->tail = s->tail;
    }
}

msg_message *msg_request_add_message(msg_request *r, msg_role role)
{
    if (r->n_messages == r->cap_messages) {
        r->cap_messages = r->cap_messages ? r->cap_messages * 2 : 8;
        r->messages = xrealloc(r->messages, r->cap_messages * sizeof *r->messages);
    }
    msg_message *m = &r->messages[r->n_messages++];
    memset(m, 0, sizeof *m);
    m->role = role;
    return m;
}

void msg_request_add_tool(msg_request *r, const char *name, const char *description,
                           json_t *schema)
{
    if (r->n_tools == r->cap_tools) {
        r->cap_tools = r->cap_tools ? r->cap_tools * 2 : 8;
        r->tools = xrealloc(r->tools, r->cap_tools * sizeof *r->tools);
    }
    msg_tool *t = &r->tools[r->n_tools++];
    t->name = xstrdup(name);
    t->description = xstrdup(description ? description : "");
    t->input_schema = schema ? schema : json_pack("{s:s}", "type", "object");
}

void msg_request_free(msg_request *r)
{
    if (!r)
        return;
    free(r->model);
    free(r->system);
    free(r->system_dynamic);
    free(r->cache_key);
    for (size_t i = r->n_borrowed; i < r->n_messages; i++)
        msg_message_free(&r->messages[i]);
    free(r->messages);
    for (size_t i = 0; i < r->n_tools; i++) {
        free(r->tools[i].name);
        free(r->tools[i].description);
        json_decref(r->tools[i].input_schema);
    }
    free(r->tools);
    memset(r, 0, sizeof *r);
}

void msg_usage_free(msg_usage *u)
{
    if (!u)
        return;
    json_decref(u->raw);
    memset(u, 0, sizeof *u);
}

void msg_response_free(msg_response *r)
{
    if (!r)
        return;
    msg_message_free(&r->message);
    msg_usage_free(&r->usage);
    free(r->stop_reason_raw);
    free(r->response_id);
    free(r->request_id);
    free(r->model);
    memset(r, 0, sizeof *r);
}

const char *msg_role_name(msg_role r)
{
    return r == MSG_ROLE_ASSISTANT ? "assistant" : "user";
}

void msg_usage_add(msg_usage *total, const msg_usage *u)
{
    total->input_tokens += u->input_tokens;
    total->output_tokens += u->output_tokens;
    total->cache_read_tokens += u->cache_read_tokens;
    total->cache_creation_tokens += u->cache_creation_tokens;
    total->cache_creation_1h_tokens += u->cache_creation_1h_tokens;
    total->reasoning_tokens += u->reasoning_tokens;
}

int64_t msg_usage_total(const msg_usage *u)
{
    return u->input_tokens + u->output_tokens + u->cache_read_tokens + u->cache_creation_tokens;
}

json_t *msg_usage_to_json(const msg_usage *u)
{
    json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}",
                          "inputTokens", (json_int_t)u->input_tokens,
                          "outputTokens", (json_int_t)u->output_tokens,
                          "cacheReadTokens", (json_int_t)u->cache_read_tokens,
                          "cacheCreationTokens", (json_int_t)u->cache_creation_tokens,
                          "reasoningTokens", (json_int_t)u->reasoning_tokens,
                          "totalTokens", (json_int_t)msg_usage_total(u));
    /* Only when there were 1-hour writes: most providers have none. */
    if (u->cache_creation_1h_tokens > 0)
        json_object_set_new(o, "cacheCreation1hTokens",
                            json_integer((json_int_t)u->cache_creation_1h_tokens));
    return o;
}

bool msg_text_blank(const char *text)
{
    for (const char *p = text; p && *p; p++)
        if (!strchr(" \t\n\r\v\f", *p))
            return false;
    return true;
}

char *msg_message_text(const msg_message *m)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "");
    for (size_t i = 0; i < m->n_blocks; i++)
        if (m->blocks[i].kind == MSG_BLOCK_TEXT && m->blocks[i].text)
            str_puts(&s, m->blocks[i].text);
    return str_steal(&s);
}

char *msg_request_system_text(const msg_request *r)
{
    bool has_static = r->system && *r->system;
    bool has_dynamic = r->system_dynamic && *r->system_dynamic;
    if (!has_static && !has_dynamic)
        return NULL;
    loom_str s = LOOM_STR_INIT;
    if (has_static)
        str_puts(&s, r->system);
    if (has_static && has_dynamic)
        str_puts(&s, "\n\n");
    if (has_dynamic)
        str_puts(&s, r->system_dynamic);
    return str_steal(&s);
}

/* message.c — constructors, copies and teardown of the normalized messages. */
#include "message/message.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"

wire_block *wire_message_push(wire_message *m, wire_block_kind kind)
{
    if (m->n_blocks == m->cap_blocks) {
        m->cap_blocks = m->cap_blocks ? m->cap_blocks * 2 : 4;
        m->blocks = xrealloc(m->blocks, m->cap_blocks * sizeof *m->blocks);
    }
    wire_block *b = &m->blocks[m->n_blocks++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

wire_block *wire_message_add_text(wire_message *m, const char *text)
{
    wire_block *b = wire_message_push(m, WIRE_BLOCK_TEXT);
    b->text = xstrdup(text ? text : "");
    return b;
}

wire_block *wire_message_add_thinking(wire_message *m, const char *text, const char *signature)
{
    wire_block *b = wire_message_push(m, WIRE_BLOCK_THINKING);
    b->text = xstrdup(text ? text : "");
    b->signature = xstrdup(signature);
    return b;
}

wire_block *wire_message_add_redacted_thinking(wire_message *m, const char *data)
{
    wire_block *b = wire_message_push(m, WIRE_BLOCK_REDACTED_THINKING);
    b->data = xstrdup(data ? data : "");
    return b;
}

wire_block *wire_message_add_tool_use(wire_message *m, const char *id, const char *name,
                                      json_t *input)
{
    wire_block *b = wire_message_push(m, WIRE_BLOCK_TOOL_USE);
    b->id = xstrdup(id ? id : "");
    b->name = xstrdup(name ? name : "");
    b->input = input ? input : json_object();
    return b;
}

wire_block *wire_message_add_tool_result(wire_message *m, const char *tool_use_id,
                                         const char *text, bool is_error)
{
    wire_block *b = wire_message_push(m, WIRE_BLOCK_TOOL_RESULT);
    b->id = xstrdup(tool_use_id ? tool_use_id : "");
    b->text = xstrdup(text ? text : "");
    b->is_error = is_error;
    return b;
}

wire_block *wire_message_add_image(wire_message *m, const char *media_type, const char *b64)
{
    wire_block *b = wire_message_push(m, WIRE_BLOCK_IMAGE);
    b->media_type = xstrdup(media_type ? media_type : "application/octet-stream");
    b->data = xstrdup(b64 ? b64 : "");
    return b;
}

static void block_free(wire_block *b)
{
    free(b->text);
    free(b->signature);
    free(b->data);
    free(b->media_type);
    free(b->id);
    free(b->name);
    json_decref(b->input);
}

void wire_message_free(wire_message *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_blocks; i++)
        block_free(&m->blocks[i]);
    free(m->blocks);
    m->blocks = NULL;
    m->n_blocks = m->cap_blocks = 0;
}

void wire_message_copy(wire_message *dst, const wire_message *src)
{
    memset(dst, 0, sizeof *dst);
    dst->role = src->role;
    for (size_t i = 0; i < src->n_blocks; i++) {
        const wire_block *s = &src->blocks[i];
        wire_block *d = wire_message_push(dst, s->kind);
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

wire_message *wire_request_add_message(wire_request *r, wire_role role)
{
    if (r->n_messages == r->cap_messages) {
        r->cap_messages = r->cap_messages ? r->cap_messages * 2 : 8;
        r->messages = xrealloc(r->messages, r->cap_messages * sizeof *r->messages);
    }
    wire_message *m = &r->messages[r->n_messages++];
    memset(m, 0, sizeof *m);
    m->role = role;
    return m;
}

void wire_request_add_tool(wire_request *r, const char *name, const char *description,
                           json_t *schema)
{
    if (r->n_tools == r->cap_tools) {
        r->cap_tools = r->cap_tools ? r->cap_tools * 2 : 8;
        r->tools = xrealloc(r->tools, r->cap_tools * sizeof *r->tools);
    }
    wire_tool *t = &r->tools[r->n_tools++];
    t->name = xstrdup(name);
    t->description = xstrdup(description ? description : "");
    t->input_schema = schema ? schema : json_pack("{s:s}", "type", "object");
}

void wire_request_free(wire_request *r)
{
    if (!r)
        return;
    free(r->model);
    free(r->system);
    free(r->system_dynamic);
    for (size_t i = 0; i < r->n_messages; i++)
        wire_message_free(&r->messages[i]);
    free(r->messages);
    for (size_t i = 0; i < r->n_tools; i++) {
        free(r->tools[i].name);
        free(r->tools[i].description);
        json_decref(r->tools[i].input_schema);
    }
    free(r->tools);
    memset(r, 0, sizeof *r);
}

void wire_usage_free(wire_usage *u)
{
    if (!u)
        return;
    json_decref(u->raw);
    memset(u, 0, sizeof *u);
}

void wire_response_free(wire_response *r)
{
    if (!r)
        return;
    wire_message_free(&r->message);
    wire_usage_free(&r->usage);
    free(r->stop_reason_raw);
    free(r->response_id);
    free(r->request_id);
    free(r->model);
    memset(r, 0, sizeof *r);
}

const char *wire_role_name(wire_role r)
{
    return r == WIRE_ROLE_ASSISTANT ? "assistant" : "user";
}

void wire_usage_add(wire_usage *total, const wire_usage *u)
{
    total->input_tokens += u->input_tokens;
    total->output_tokens += u->output_tokens;
    total->cache_read_tokens += u->cache_read_tokens;
    total->cache_creation_tokens += u->cache_creation_tokens;
    total->reasoning_tokens += u->reasoning_tokens;
}

int64_t wire_usage_total(const wire_usage *u)
{
    return u->input_tokens + u->output_tokens + u->cache_read_tokens + u->cache_creation_tokens;
}

json_t *wire_usage_to_json(const wire_usage *u)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}",
                     "inputTokens", (json_int_t)u->input_tokens,
                     "outputTokens", (json_int_t)u->output_tokens,
                     "cacheReadTokens", (json_int_t)u->cache_read_tokens,
                     "cacheCreationTokens", (json_int_t)u->cache_creation_tokens,
                     "reasoningTokens", (json_int_t)u->reasoning_tokens,
                     "totalTokens", (json_int_t)wire_usage_total(u));
}

char *wire_message_text(const wire_message *m)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "");
    for (size_t i = 0; i < m->n_blocks; i++)
        if (m->blocks[i].kind == WIRE_BLOCK_TEXT && m->blocks[i].text)
            str_puts(&s, m->blocks[i].text);
    return str_steal(&s);
}

char *wire_request_system_text(const wire_request *r)
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

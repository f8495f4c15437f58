/* openai_responses.c — the Responses API codec (openai_responses_codec):
 * OpenAI's /responses, whose stream is a sequence of typed events about
 * output items (messages, reasoning, function calls) instead of Chat's
 * anonymous deltas. Owns the request encoder, the event decoder and the
 * non-streaming body parser.
 *
 * Requests are stateless (store:false): the whole conversation is sent each
 * time, and reasoning is carried between turns as encrypted items rather
 * than by response id, so a session can be resumed, forked or replayed
 * without anything kept on OpenAI's side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "provider/openai_common.h"
#include "provider/provider.h"

/* ---- encoding ---------------------------------------------------------- */

/* The API has no error flag: the output text has to say it failed. */
static json_t *call_output(const msg_block *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("function_call_output"));
    json_object_set_new(o, "call_id", oai_jstr(b->id));
    json_object_set_new(o, "output", oai_jstr(b->text));
    return o;
}

static json_t *input_text(const msg_block *b)
{
    json_t *p = json_object();
    json_object_set_new(p, "type", json_string("input_text"));
    json_object_set_new(p, "text", oai_jstr(b->text));
    return p;
}

static json_t *input_image(const msg_block *b)
{
    char *url = oai_image_url(b);
    json_t *p = json_object();
    json_object_set_new(p, "type", json_string("input_image"));
    json_object_set_new(p, "image_url", oai_jstr(url));
    json_object_set_new(p, "detail", json_string("auto"));
    free(url);
    return p;
}

/* The input_text and input_image parts of m that are (tail) or are not
 * (!tail) in the dynamic tail; NULL when there are none. */
static json_t *user_parts(const msg_message *m, bool tail)
{
    return oai_parts(m, tail, input_text, input_image);
}

/* Returns true when a reasoning item was sent back. */
static bool add_assistant_items(json_t *input, const msg_message *m)
{
    bool reasoning = false;
    for (size_t i = 0; i < m->n_blocks; i++) {
        const msg_block *b = &m->blocks[i];
        if (b->kind == MSG_BLOCK_THINKING) {
            /* With store:false the server cannot look a reasoning item up by
             * id; it needs the encrypted content, or it rejects the request
             * ("item not found"). Reasoning without both (from another
             * provider, or a turn that did not ask for it) is dropped. */
            if (!b->signature || !*b->signature || !b->data || !*b->data)
                continue;
            json_t *summary = json_array();
            if (b->text && *b->text) {
                json_t *s = json_object();
                json_object_set_new(s, "type", json_string("summary_text"));
                json_object_set_new(s, "text", oai_jstr(b->text));
                json_array_append_new(summary, s);
            }
            json_t *r = json_object();
            json_object_set_new(r, "type", json_string("reasoning"));
            json_object_set_new(r, "id", oai_jstr(b->signature));
            json_object_set_new(r, "summary", summary);
            json_object_set_new(r, "encrypted_content", oai_jstr(b->data));
            json_array_append_new(input, r);
            reasoning = true;
        } else if (b->kind == MSG_BLOCK_TEXT && b->text && *b->text) {
            /* The OpenAPI document has two input forms for an assistant
             * message: ResponseOutputMessage (type "message", content parts
             * of type output_text), which requires the output item's `id`,
             * `status` and each part's `annotations`; and EasyInputMessage
             * ({role, content}, content a string), which requires none.
             * Loom keeps no message item id (the session stores text, not
             * OpenAI's items; a resumed or forked session, or one begun with
             * another provider, has none), and an invented id is refused
             * (the API looks "msg_…" ids up). So assistant text goes back
             * in the easy form. Source: openai-node 6.49.0
             * resources/responses/responses.d.ts (EasyInputMessage,
             * ResponseOutputMessage: id, content, role, status, type all
             * required; ResponseOutputText: annotations, text, type).
             * Codex sends the output_text form without an id (openai/codex
             * codex-rs/protocol/src/models.rs: ResponseItem::Message's id is
             * skip_serializing), which the API takes but the types do not;
             * the easy form is valid by both. */
            json_t *msg = json_object();
            json_object_set_new(msg, "role", json_string("assistant"));
            json_object_set_new(msg, "content", oai_jstr(b->text));
            json_array_append_new(input, msg);
        } else if (b->kind == MSG_BLOCK_TOOL_USE) {
            char *args = oai_arguments(b->input);
            json_t *c = json_object();
            json_object_set_new(c, "type", json_string("function_call"));
            json_object_set_new(c, "call_id", oai_jstr(b->id));
            json_object_set_new(c, "name", oai_jstr(b->name));
            json_object_set_new(c, "arguments", oai_jstr(args));
            json_array_append_new(input, c);
            free(args);
        }
        /* REDACTED_THINKING is Anthropic's; it means nothing here. */
    }
    return reasoning;
}

static int responses_encode(const msg_request *req, const provider_config *cfg,
                            provider_http_call *call, loom_error *err)
{
    const char *model;
    int rc = oai_call_start(req, cfg, "/responses", call, &model, err);
    if (rc)
        return rc;

    json_t *body = json_object();
    json_object_set_new(body, "model", oai_jstr(model));
    char *system = msg_request_system_text(req);
    if (system)
        json_object_set_new(body, "instructions", oai_jstr(system));
    free(system);

    json_t *input = json_array();
    bool reasoning_sent = false;
    for (size_t i = 0; i < req->n_messages; i++) {
        const msg_message *m = &req->messages[i];
        if (m->role == MSG_ROLE_USER)
            oai_add_user(input, m, call_output, user_parts);
        else if (add_assistant_items(input, m))
            reasoning_sent = true;
    }
    json_object_set_new(body, "input", input);

    if (req->n_tools) {
        json_t *tools = json_array();
        for (size_t i = 0; i < req->n_tools; i++) {
            const msg_tool *t = &req->tools[i];
            json_t *tool = json_object();
            json_object_set_new(tool, "type", json_string("function"));
            json_object_set_new(tool, "name", oai_jstr(t->name));
            if (t->description && *t->description)
                json_object_set_new(tool, "description", oai_jstr(t->description));
            json_object_set_new(tool, "parameters",
                                t->input_schema ? json_deep_copy(t->input_schema)
                                                : json_pack("{s:s,s:{}}", "type", "object",
                                                            "properties"));
            /* The Responses API treats an omitted `strict` as true, which
             * demands schemas with every property required and
             * additionalProperties:false. Loom's and MCP servers' schemas are
             * ordinary JSON Schema; they are validated on our side instead. */
            json_object_set_new(tool, "strict", json_false());
            json_array_append_new(tools, tool);
        }
        json_object_set_new(body, "tools", tools);
    }

    int max = req->max_tokens > 0 ? req->max_tokens : cfg->max_output_tokens;
    if (max > 0)
        json_object_set_new(body, "max_output_tokens", json_integer(max));
    if (req->temperature >= 0)
        json_object_set_new(body, "temperature", json_real(req->temperature));
    bool reasons = oai_model_reasons(model);
    const char *effort = oai_effort(req, cfg);
    if (reasons || effort) {
        /* The API takes an effort level, not a token budget; without one
         * the model's default applies. A summary is asked for so the user
         * sees what the model is doing. As Codex does for every model that
         * reasons (openai/codex @001cb8e2 codex-rs/core/src/client.rs,
         * stream_responses_api). */
        json_t *r = json_object();
        if (effort)
            json_object_set_new(r, "effort", json_string(effort));
        json_object_set_new(r, "summary", json_string("auto"));
        json_object_set_new(body, "reasoning", r);
    }
    json_object_set_new(body, "stream", json_boolean(req->stream));
    json_object_set_new(body, "store", json_false());
    /* Encrypted reasoning is what lets the next turn continue the model's
     * chain of thought under store:false: without the include the reply's
     * reasoning items carry no encrypted_content and cannot be sent back.
     * Codex asks for it whenever it sends `reasoning` (client.rs, above).
     * Other models may refuse the include, so they get it only when a
     * reasoning item is actually going back. */
    if (reasons || effort || reasoning_sent)
        json_object_set_new(body, "include", json_pack("[s]", "reasoning.encrypted_content"));
    /* Codex keys the prompt cache by its conversation id (client.rs:
     * prompt_cache_key: Some(conversation_id)); Loom's session id is the
     * same thing. Requests with the same key and prefix are routed to the
     * same cache. */
    if (req->cache_key && *req->cache_key)
        json_object_set_new(body, "prompt_cache_key", oai_jstr(req->cache_key));
    return oai_call_finish(body, call, err);
}

/* ---- decoding ---------------------------------------------------------- */

/* One output item as it is being streamed, keyed by output_index. */
typedef struct resp_item {
    int64_t index;
    char *type;          /* "message", "reasoning", "function_call", ... */
    char *id;            /* the item id (reasoning: what goes back as its id) */
    char *call_id;       /* function_call: what the tool result must name */
    char *name;
    loom_str args;
    loom_str text;       /* message: output_text and refusal parts */
    loom_str summary;    /* reasoning: summary parts, joined by blank lines */
    loom_str reasoning;  /* reasoning: raw reasoning text (open models) */
    char *encrypted;
    /* How much of text / summary / reasoning the sink has been shown:
     * deltas show as they come, and what a .done item or the final
     * response adds past that is shown then (never twice). */
    size_t text_shown, summary_shown, reasoning_shown;
    int64_t summary_index;
    bool refusal;
    bool announced;
    bool completed;      /* function_call: on_tool_call was called */
} resp_item;

struct provider_decoder {
    msg_response *out;
    provider_stream_sink sink;
    resp_item *items;
    size_t n_items, cap_items;
    char *id;
    char *model;
    char *status;            /* the terminal response's status */
    char *incomplete_reason;
    json_t *usage;
    bool terminal;           /* response.completed / response.incomplete seen */
    bool finished;
};

static resp_item *item_new(provider_decoder *d, int64_t index)
{
    if (d->n_items == d->cap_items) {
        d->cap_items = d->cap_items ? d->cap_items * 2 : 4;
        d->items = xrealloc(d->items, d->cap_items * sizeof *d->items);
    }
    resp_item *it = &d->items[d->n_items++];
    memset(it, 0, sizeof *it);
    it->index = index;
    it->summary_index = -1;
    return it;
}

/* The item an event is about: by item id first (OpenAI always sends it),
 * then by output_index (servers that leave ids out); created when new. */
static resp_item *item_for(provider_decoder *d, const json_t *idv, const json_t *idxv, bool esc)
{
    char *id = oai_dup(idv, esc);
    if (id && !*id) {
        free(id);
        id = NULL;
    }
    if (id) {
        for (size_t i = 0; i < d->n_items; i++)
            if (d->items[i].id && strcmp(d->items[i].id, id) == 0) {
                free(id);
                return &d->items[i];
            }
    }
    int64_t idx = -1;
    if (json_is_integer(idxv)) {
        idx = json_integer_value(idxv);
        for (size_t i = 0; i < d->n_items; i++)
            if (d->items[i].index == idx && (!id || !d->items[i].id)) {
                if (id)
                    d->items[i].id = id;
                return &d->items[i];
            }
    }
    if (idx < 0) {
        idx = 0;
        for (size_t i = 0; i < d->n_items; i++)
            if (d->items[i].index >= idx)
                idx = d->items[i].index + 1;
    }
    resp_item *it = item_new(d, idx);
    it->id = id;
    return it;
}

static void set_from(char **dst, const json_t *v, bool esc)
{
    if (json_is_string(v) && json_string_length(v)) {
        free(*dst);
        *dst = oai_dup(v, esc);
    }
}

/* Replaces acc with the string when it is non-empty: a full value from a
 * .done event or the final response is authoritative over the deltas, but
 * an empty one is taken to mean "not repeated here". */
static void replace_from(loom_str *acc, const loom_str *full)
{
    if (!full->len)
        return;
    str_clear(acc);
    str_append(acc, full->ptr, full->len);
}

static void announce(provider_decoder *d, resp_item *it)
{
    if (it->announced || !it->type || strcmp(it->type, "function_call") != 0 || !it->name)
        return;
    it->announced = true;
    if (d->sink.on_tool_use)
        d->sink.on_tool_use(d->sink.ctx, it->call_id ? it->call_id : "", it->name);
}

/* output_item.done of a function_call: its arguments are whole, so the
 * loop may start the call while the rest of the response streams. The id
 * is the one the final message will carry (an item without one is left to
 * the message end). */
static void report_complete(provider_decoder *d, resp_item *it)
{
    if (it->completed || !d->sink.on_tool_call || !it->type ||
        strcmp(it->type, "function_call") != 0 || !it->name)
        return;
    const char *id = it->call_id && *it->call_id ? it->call_id : it->id;
    if (!id || !*id)
        return;
    it->completed = true;
    json_t *input = oai_tool_input(it->args.ptr, it->args.len);
    d->sink.on_tool_call(d->sink.ctx, id, it->name, input);
    json_decref(input);
}

/* Takes what a whole item says (output_item.added / .done, or an entry of
 * the final response's output). */
static void apply_item(provider_decoder *d, resp_item *it, const json_t *item, bool esc)
{
    if (!json_is_object(item))
        return;
    set_from(&it->type, json_object_get(item, "type"), esc);
    set_from(&it->id, json_object_get(item, "id"), esc);
    set_from(&it->call_id, json_object_get(item, "call_id"), esc);
    set_from(&it->name, json_object_get(item, "name"), esc);
    set_from(&it->encrypted, json_object_get(item, "encrypted_content"), esc);

    loom_str full = LOOM_STR_INIT;
    oai_append(&full, json_object_get(item, "arguments"), esc);
    replace_from(&it->args, &full);

    size_t i;
    json_t *part;
    str_clear(&full);
    json_array_foreach(json_get_arr(item, "content"), i, part)
    {
        const char *type = json_get_str(part, "type", "");
        if (strcmp(type, "output_text") == 0) {
            oai_append(&full, json_object_get(part, "text"), esc);
        } else if (strcmp(type, "refusal") == 0) {
            oai_append(&full, json_object_get(part, "refusal"), esc);
            it->refusal = true;
        }
    }
    replace_from(&it->text, &full);

    str_clear(&full);
    json_array_foreach(json_get_arr(item, "content"), i, part)
    {
        if (strcmp(json_get_str(part, "type", ""), "reasoning_text") == 0)
            oai_append(&full, json_object_get(part, "text"), esc);
    }
    replace_from(&it->reasoning, &full);

    str_clear(&full);
    json_array_foreach(json_get_arr(item, "summary"), i, part)
    {
        if (full.len)
            str_puts(&full, "\n\n");
        oai_append(&full, json_object_get(part, "text"), esc);
    }
    replace_from(&it->summary, &full);
    str_free(&full);
    announce(d, it);
}

/* Shows the sink what of acc it has not seen. When a full value replaced
 * deltas that disagreed with it, the part already shown cannot be taken
 * back; only what lies past it is shown. */
static void show_rest(provider_decoder *d, const loom_str *acc, size_t *shown,
                      void (*fn)(void *, const char *, size_t))
{
    if (acc->len > *shown && fn)
        fn(d->sink.ctx, acc->ptr + *shown, acc->len - *shown);
    if (acc->len > *shown)
        *shown = acc->len;
}

static void append_delta(provider_decoder *d, loom_str *acc, size_t *shown, const json_t *v,
                         bool esc, void (*fn)(void *, const char *, size_t))
{
    oai_append(acc, v, esc);
    show_rest(d, acc, shown, fn);
}

/* A finished item whose text came whole, with no deltas before it (Codex's
 * own fixture has that shape: openai/codex codex-rs/core/tests/
 * cli_responses_fixture.sse), is printed now, so what is shown always
 * matches what is recorded. */
static void show_item(provider_decoder *d, resp_item *it)
{
    if (!it->type)
        return;
    if (strcmp(it->type, "message") == 0) {
        show_rest(d, &it->text, &it->text_shown, d->sink.on_text);
    } else if (strcmp(it->type, "reasoning") == 0) {
        show_rest(d, &it->summary, &it->summary_shown, d->sink.on_thinking);
        show_rest(d, &it->reasoning, &it->reasoning_shown, d->sink.on_thinking);
    }
}

/* Everything a response object says (created, completed, or a body). */
static void apply_response(provider_decoder *d, const json_t *resp, bool esc)
{
    if (!json_is_object(resp))
        return;
    set_from(&d->id, json_object_get(resp, "id"), esc);
    set_from(&d->model, json_object_get(resp, "model"), esc);
    set_from(&d->status, json_object_get(resp, "status"), esc);
    set_from(&d->incomplete_reason,
             json_object_get(json_get_obj(resp, "incomplete_details"), "reason"), esc);
    json_t *usage = json_get_obj(resp, "usage");
    if (usage) {
        json_decref(d->usage);
        d->usage = json_incref(usage);
    }
    size_t i;
    json_t *item;
    json_array_foreach(json_get_arr(resp, "output"), i, item)
    {
        if (!json_is_object(item))
            continue;
        json_t *idx = json_integer((json_int_t)i);
        resp_item *it = item_for(d, json_object_get(item, "id"), idx, esc);
        json_decref(idx);
        apply_item(d, it, item, esc);
    }
}

/* An `error` event: {code, message} at top level or under "error". */
static int fail_error_event(const json_t *root, loom_error *err)
{
    json_t *nested = json_get_obj(root, "error");
    if (nested)
        return oai_fail_error(nested, "the model server reported an error in the stream", err);
    /* The top level's "type" is the event type ("error"), not an error
     * type, so only code and message are passed on. */
    json_t *e = json_object();
    json_t *code = json_object_get(root, "code");
    if (json_is_string(code) || json_is_integer(code))
        json_object_set(e, "code", code);
    json_t *msg = json_object_get(root, "message");
    if (json_is_string(msg))
        json_object_set(e, "message", msg);
    int rc = oai_fail_error(e, "the model server reported an error in the stream", err);
    json_decref(e);
    return rc;
}

static int fail_response(const json_t *resp, loom_error *err)
{
    json_t *error = json_get_obj(resp, "error");
    char fallback[128];
    snprintf(fallback, sizeof fallback, "the response failed (status %.40s)",
             json_get_str(resp, "status", "failed"));
    return oai_fail_error(error, fallback, err);
}

static provider_decoder *responses_decoder_new(msg_response *out, const provider_stream_sink *sink)
{
    provider_decoder *d = xcalloc(1, sizeof *d);
    d->out = out;
    if (sink)
        d->sink = *sink;
    return d;
}

static int handle(provider_decoder *d, const char *type, const oai_event *e, loom_error *err)
{
    const json_t *root = e->root;
    bool esc = e->escaped;
    if (strcmp(type, "response.created") == 0 || strcmp(type, "response.in_progress") == 0 ||
        strcmp(type, "response.queued") == 0) {
        const json_t *resp = json_get_obj(root, "response");
        set_from(&d->id, json_object_get(resp, "id"), esc);
        set_from(&d->model, json_object_get(resp, "model"), esc);
    } else if (strcmp(type, "response.output_item.added") == 0 ||
               strcmp(type, "response.output_item.done") == 0) {
        const json_t *item = json_get_obj(root, "item");
        resp_item *it = item_for(d, json_object_get(item, "id"),
                                 json_object_get(root, "output_index"), esc);
        apply_item(d, it, item, esc);
        if (strcmp(type, "response.output_item.done") == 0) {
            show_item(d, it);
            report_complete(d, it);
        }
    } else if (strcmp(type, "response.output_text.delta") == 0 ||
               strcmp(type, "response.refusal.delta") == 0) {
        resp_item *it = item_for(d, json_object_get(root, "item_id"),
                                 json_object_get(root, "output_index"), esc);
        if (strcmp(type, "response.refusal.delta") == 0)
            it->refusal = true;
        append_delta(d, &it->text, &it->text_shown, json_object_get(root, "delta"), esc,
                     d->sink.on_text);
    } else if (strcmp(type, "response.reasoning_summary_text.delta") == 0) {
        resp_item *it = item_for(d, json_object_get(root, "item_id"),
                                 json_object_get(root, "output_index"), esc);
        int64_t si = json_get_int(root, "summary_index", it->summary_index);
        if (si != it->summary_index) {
            /* A new summary part: keep the parts apart as paragraphs, the
             * same way the final item's summary array is joined. */
            if (it->summary.len) {
                str_puts(&it->summary, "\n\n");
                show_rest(d, &it->summary, &it->summary_shown, d->sink.on_thinking);
            }
            it->summary_index = si;
        }
        append_delta(d, &it->summary, &it->summary_shown, json_object_get(root, "delta"), esc,
                     d->sink.on_thinking);
    } else if (strcmp(type, "response.reasoning_text.delta") == 0) {
        resp_item *it = item_for(d, json_object_get(root, "item_id"),
                                 json_object_get(root, "output_index"), esc);
        append_delta(d, &it->reasoning, &it->reasoning_shown, json_object_get(root, "delta"), esc,
                     d->sink.on_thinking);
    } else if (strcmp(type, "response.function_call_arguments.delta") == 0) {
        resp_item *it = item_for(d, json_object_get(root, "item_id"),
                                 json_object_get(root, "output_index"), esc);
        oai_append(&it->args, json_object_get(root, "delta"), esc);
    } else if (strcmp(type, "response.function_call_arguments.done") == 0) {
        resp_item *it = item_for(d, json_object_get(root, "item_id"),
                                 json_object_get(root, "output_index"), esc);
        loom_str full = LOOM_STR_INIT;
        oai_append(&full, json_object_get(root, "arguments"), esc);
        replace_from(&it->args, &full);
        str_free(&full);
        set_from(&it->name, json_object_get(root, "name"), esc);
    } else if (strcmp(type, "response.completed") == 0 ||
               strcmp(type, "response.incomplete") == 0) {
        apply_response(d, json_get_obj(root, "response"), esc);
        if (!d->status)
            oai_set(&d->status, type + strlen("response."));
        d->terminal = true;
        /* Servers that put the text only in the final response's output. */
        for (size_t i = 0; i < d->n_items; i++)
            show_item(d, &d->items[i]);
    } else if (strcmp(type, "response.failed") == 0) {
        return fail_response(json_get_obj(root, "response"), err);
    } else if (strcmp(type, "error") == 0) {
        return fail_error_event(root, err);
    }
    /* Anything else (annotations, web search progress, new event types the
     * API adds) carries nothing Loom keeps. */
    return 0;
}

static int responses_decoder_event(provider_decoder *d, const sse_event *ev, loom_error *err)
{
    if (d->terminal || d->finished)
        return 0;
    if (ev->data && oai_is_done_marker(ev->data, ev->data_len))
        return 0;  /* not part of this API, but some proxies append it */
    oai_event e;
    int rc = oai_event_parse(ev, &e, err);
    if (rc <= 0)
        return rc;
    /* The data's own "type" is authoritative; the SSE event name is the
     * fallback for servers that only set that. */
    const char *type = json_get_str(e.root, "type", NULL);
    if (!type)
        type = ev->type ? ev->type : "";
    rc = handle(d, type, &e, err);
    oai_event_free(&e);
    return rc;
}

static void build(provider_decoder *d)
{
    msg_response *out = d->out;
    out->message.role = MSG_ROLE_ASSISTANT;

    /* Output order matters when reasoning goes back: each reasoning item
     * must precede the message or call it led to. Stable insertion sort. */
    for (size_t i = 1; i < d->n_items; i++) {
        resp_item it = d->items[i];
        size_t j = i;
        while (j > 0 && d->items[j - 1].index > it.index) {
            d->items[j] = d->items[j - 1];
            j--;
        }
        d->items[j] = it;
    }

    bool calls = false, refusal = false;
    for (size_t i = 0; i < d->n_items; i++) {
        resp_item *it = &d->items[i];
        const char *type = it->type;
        if (!type) {
            /* Deltas for an item that was never announced: infer its kind. */
            type = it->args.len ? "function_call"
                   : it->text.len ? "message"
                   : (it->summary.len || it->reasoning.len) ? "reasoning"
                                                             : "";
        }
        if (strcmp(type, "reasoning") == 0) {
            const loom_str *t = it->summary.len ? &it->summary : &it->reasoning;
            if (!t->len && !it->id && !it->encrypted)
                continue;
            msg_block *b = msg_message_add_thinking(&out->message, str_cstr(t), it->id);
            if (b && it->encrypted)
                b->data = xstrdup(it->encrypted);
        } else if (strcmp(type, "message") == 0) {
            if (it->text.len)
                msg_message_add_text(&out->message, str_cstr(&it->text));
            refusal |= it->refusal;
        } else if (strcmp(type, "function_call") == 0) {
            char synth[32];
            const char *id = it->call_id && *it->call_id ? it->call_id : it->id;
            if (!id || !*id) {
                snprintf(synth, sizeof synth, "call_%zu", i);
                id = synth;
            }
            json_t *input = oai_tool_input(it->args.ptr, it->args.len);
            msg_message_add_tool_use(&out->message, id, it->name ? it->name : "", input);
            calls = true;
        }
    }

    const char *status = d->status ? d->status : "completed";
    if (strcmp(status, "incomplete") == 0) {
        const char *why = d->incomplete_reason;
        if (why && strcmp(why, "max_output_tokens") == 0)
            out->stop_reason = LOOM_STOP_MAX_TOKENS;
        else if (why && strcmp(why, "content_filter") == 0)
            out->stop_reason = LOOM_STOP_REFUSAL;
        else
            out->stop_reason = LOOM_STOP_OTHER;
        oai_set(&out->stop_reason_raw, why ? why : status);
    } else if (strcmp(status, "completed") == 0) {
        out->stop_reason = calls ? LOOM_STOP_TOOL_USE
                           : refusal ? LOOM_STOP_REFUSAL
                                     : LOOM_STOP_END_TURN;
        oai_set(&out->stop_reason_raw, status);
    } else {
        out->stop_reason = LOOM_STOP_OTHER;
        oai_set(&out->stop_reason_raw, status);
    }
    if (d->usage)
        oai_usage_fill(&out->usage, d->usage, "input_tokens", "output_tokens",
                       "input_tokens_details", "output_tokens_details");
    oai_set(&out->response_id, d->id);
    oai_set(&out->model, d->model);
}

static int responses_decoder_finish(provider_decoder *d, loom_error *err)
{
    if (d->finished)
        return 0;
    if (!d->terminal)
        return oai_fail_truncated(err);
    d->finished = true;
    build(d);
    return 0;
}

static void responses_decoder_free(provider_decoder *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_items; i++) {
        resp_item *it = &d->items[i];
        free(it->type);
        free(it->id);
        free(it->call_id);
        free(it->name);
        free(it->encrypted);
        str_free(&it->args);
        str_free(&it->text);
        str_free(&it->summary);
        str_free(&it->reasoning);
    }
    free(d->items);
    free(d->id);
    free(d->model);
    free(d->status);
    free(d->incomplete_reason);
    json_decref(d->usage);
    free(d);
}

static int responses_parse_body(const char *body, size_t len, msg_response *out, loom_error *err)
{
    oai_event e;
    int rc = oai_body_parse(body, len, &e, err);
    if (rc < 0)
        return rc;
    const json_t *root = e.root;
    const char *status = json_get_str(root, "status", NULL);
    if (json_get_obj(root, "error") || (status && strcmp(status, "failed") == 0)) {
        rc = fail_response(root, err);
    } else if (status && strcmp(status, "completed") != 0 && strcmp(status, "incomplete") != 0) {
        rc = loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                            "response body is not a finished response (status \"%.40s\")",
                            status);
    } else if (!status && !json_get_arr(root, "output")) {
        rc = loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                            "malformed response body: neither status nor output present");
    } else {
        provider_decoder *d = responses_decoder_new(out, NULL);
        apply_response(d, root, e.escaped);
        d->terminal = true;
        d->finished = true;
        build(d);
        responses_decoder_free(d);
        rc = 0;
    }
    oai_event_free(&e);
    return rc;
}

const provider_codec_ops openai_responses_codec = {
    .name = "openai-responses",
    .encode = responses_encode,
    .decoder_new = responses_decoder_new,
    .decoder_event = responses_decoder_event,
    .decoder_finish = responses_decoder_finish,
    .decoder_free = responses_decoder_free,
    .parse_body = responses_parse_body,
};

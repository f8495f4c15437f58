/* openai_chat.c — the Chat Completions codec (openai_chat_codec): the wire
 * format of OpenAI's /chat/completions and of everything that imitates it
 * (Ollama, vLLM, llama.cpp server, LM Studio, gateways). Owns the request
 * encoder, the streaming chunk decoder and the non-streaming body parser.
 *
 * The imitators differ in small ways, so the decoder is lenient where the
 * meaning is still clear (missing [DONE], reasoning under two names, tool
 * calls without an index, usage beside the last choice) and strict where
 * it is not (data that is not JSON fails with the line that carried it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "base/uuid.h"
#include "provider/models.h"
#include "provider/openai_common.h"
#include "provider/provider.h"

/* ---- encoding ---------------------------------------------------------- */

/* True when base_url points at OpenAI itself (or Azure OpenAI). */
static bool is_openai_host(const char *base_url)
{
    const char *h = strstr(base_url, "://");
    h = h ? h + 3 : base_url;
    size_t n = strcspn(h, "/:?#");
    static const char azure[] = ".openai.azure.com";
    size_t an = sizeof azure - 1;
    if (n == 14 && strncasecmp(h, "api.openai.com", 14) == 0)
        return true;
    return n > an && strncasecmp(h + n - an, azure, an) == 0;
}

static json_t *text_part(const msg_block *b)
{
    json_t *p = json_object();
    json_object_set_new(p, "type", json_string("text"));
    json_object_set_new(p, "text", oai_jstr(b->text));
    return p;
}

static json_t *image_part(const msg_block *b)
{
    char *url = oai_image_url(b);
    json_t *p = json_object();
    json_object_set_new(p, "type", json_string("image_url"));
    json_t *iu = json_object();
    json_object_set_new(iu, "url", oai_jstr(url));
    json_object_set_new(p, "image_url", iu);
    free(url);
    return p;
}

/* The text and image parts of m that are (tail) or are not (!tail) in the
 * dynamic tail; NULL when there are none. */
static json_t *user_content(const msg_message *m, bool tail)
{
    size_t n_text = 0, n_img = 0;
    const msg_block *only = NULL;
    for (size_t i = 0; i < m->n_blocks; i++) {
        if (m->blocks[i].tail != tail)
            continue;
        if (m->blocks[i].kind == MSG_BLOCK_TEXT) {
            n_text++;
            only = &m->blocks[i];
        } else if (m->blocks[i].kind == MSG_BLOCK_IMAGE) {
            n_img++;
        }
    }
    if (n_text + n_img == 0)
        return NULL;
    /* A bare string is what every server understands; parts only when the
     * message needs them (several pieces, or an image). */
    if (n_text == 1 && n_img == 0)
        return oai_jstr(only->text);
    return oai_parts(m, tail, text_part, image_part);
}

/* Chat wants each tool answer as a role:"tool" message. The format has
 * no error flag: the result text has to say it failed. */
static json_t *tool_message(const msg_block *b)
{
    json_t *t = json_object();
    json_object_set_new(t, "role", json_string("tool"));
    json_object_set_new(t, "tool_call_id", oai_jstr(b->id));
    json_object_set_new(t, "content", oai_jstr(b->text));
    return t;
}

static void add_assistant(json_t *msgs, const msg_message *m)
{
    loom_str text = LOOM_STR_INIT;
    json_t *calls = json_array();
    for (size_t i = 0; i < m->n_blocks; i++) {
        const msg_block *b = &m->blocks[i];
        if (b->kind == MSG_BLOCK_TEXT && b->text && *b->text) {
            if (text.len)
                str_puts(&text, "\n\n");
            str_puts(&text, b->text);
        } else if (b->kind == MSG_BLOCK_TOOL_USE) {
            char *args = oai_arguments(b->input);
            json_t *fn = json_object();
            json_object_set_new(fn, "name", oai_jstr(b->name));
            json_object_set_new(fn, "arguments", oai_jstr(args));
            json_t *c = json_object();
            json_object_set_new(c, "id", oai_jstr(b->id));
            json_object_set_new(c, "type", json_string("function"));
            json_object_set_new(c, "function", fn);
            json_array_append_new(calls, c);
            free(args);
        }
        /* THINKING / REDACTED_THINKING are dropped: Chat Completions has no
         * standard field to send reasoning back (reasoning_content is an
         * output-only extension, and servers that read it back disagree on
         * its name), so the model simply does not see its earlier thoughts. */
    }
    if (text.len == 0 && json_array_size(calls) == 0) {
        /* A turn that held only reasoning: sending an empty assistant
         * message is rejected by some servers, and skipping loses nothing. */
        json_decref(calls);
        str_free(&text);
        return;
    }
    json_t *a = json_object();
    json_object_set_new(a, "role", json_string("assistant"));
    /* null (not "") is what OpenAI itself returns for a turn of only tool
     * calls, so every compatible server accepts it back. */
    json_object_set_new(a, "content", text.len ? oai_jstr(str_cstr(&text)) : json_null());
    if (json_array_size(calls))
        json_object_set_new(a, "tool_calls", calls);
    else
        json_decref(calls);
    json_array_append_new(msgs, a);
    str_free(&text);
}

static void add_message(json_t *msgs, const msg_message *m)
{
    if (m->role == MSG_ROLE_USER)
        oai_add_user(msgs, m, tool_message, user_content);
    else
        add_assistant(msgs, m);
}

/* A kept message's items (context/history_keep.h) as this codec writes
 * them, comma-joined: dumped the first time, kept in its msg_wire after.
 * false when an item cannot be dumped (the message is then encoded the
 * usual way, which reports it). */
static bool kept_items(const msg_message *m)
{
    msg_wire *w = m->wire;
    if (w->codec == &openai_chat_codec)
        return true;
    json_t *items = json_array();
    add_message(items, m);
    loom_str s = LOOM_STR_INIT;
    size_t i;
    json_t *item;
    bool ok = true;
    json_array_foreach(items, i, item) {
        char *d = json_dumps(item, JSON_COMPACT);
        if (!d) {
            ok = false;
            break;
        }
        if (i)
            str_putc(&s, ',');
        str_puts(&s, d);
        free(d);
    }
    json_decref(items);
    if (ok) {
        free(w->bytes);
        w->len = s.len;
        w->bytes = s.len ? str_steal(&s) : NULL;
        w->codec = &openai_chat_codec;
    }
    str_free(&s);
    return ok;
}

static int chat_encode(const msg_request *req, const provider_config *cfg, provider_http_call *call,
                       loom_error *err)
{
    const char *model;
    int rc = oai_call_start(req, cfg, "/chat/completions", call, &model, err);
    if (rc)
        return rc;

    json_t *body = json_object();
    json_object_set_new(body, "model", oai_jstr(model));

    json_t *msgs = json_array();
    char *system = msg_request_system_text(req);
    if (system) {
        json_t *s = json_object();
        json_object_set_new(s, "role", json_string("system"));
        json_object_set_new(s, "content", oai_jstr(system));
        json_array_append_new(msgs, s);
        free(system);
    }
    /* The kept messages lead the history: their items' bytes go in where
     * one placeholder string stands in the tree (oai_call_finish_spliced). */
    loom_str kept = LOOM_STR_INIT;
    size_t mi = 0;
    for (; mi < req->n_messages && req->messages[mi].wire && kept_items(&req->messages[mi]); mi++) {
        const msg_wire *w = req->messages[mi].wire;
        if (!w->len)
            continue;
        if (kept.len)
            str_putc(&kept, ',');
        str_append(&kept, w->bytes, w->len);
    }
    char mark[UUID_STR_LEN + 16] = "";
    if (kept.len) {
        oai_splice_mark(mark, sizeof mark);
        json_array_append_new(msgs, json_string(mark));
    }
    for (; mi < req->n_messages; mi++)
        add_message(msgs, &req->messages[mi]);
    json_object_set_new(body, "messages", msgs);

    int max = req->max_tokens > 0 ? req->max_tokens : cfg->max_output_tokens;
    if (max > 0) {
        /* OpenAI deprecated max_tokens and rejects it outright for reasoning
         * models (o-series, gpt-5: "Unsupported parameter: 'max_tokens'"),
         * while Ollama, older llama.cpp builds and many gateways only know
         * max_tokens and silently ignore max_completion_tokens — an unbounded
         * reply rather than an error. So the newer name goes to OpenAI and
         * Azure OpenAI, and elsewhere the one the model's family takes
         * (models.c: a gpt-5 / o-series model behind a proxy still needs
         * the newer name). */
        const char *key = is_openai_host(cfg->base_url) ? "max_completion_tokens"
                                                        : model_max_tokens_field(cfg->model);
        json_object_set_new(body, key, json_integer(max));
    }
    if (req->temperature >= 0)
        json_object_set_new(body, "temperature", json_real(req->temperature));
    const char *effort = oai_effort(req, cfg);
    if (effort) {
        /* Chat has no token budget for reasoning, only an effort level,
         * and only reasoning models take it (oai_model_reasons). */
        json_object_set_new(body, "reasoning_effort", json_string(effort));
    }
    /* Chat Completions takes prompt_cache_key too (openai-node 6.49.0
     * resources/chat/completions/completions.d.ts); other servers may
     * refuse a field they do not know, so only OpenAI's get it. */
    if (req->cache_key && *req->cache_key && is_openai_host(cfg->base_url))
        json_object_set_new(body, "prompt_cache_key", oai_jstr(req->cache_key));
    if (req->stream) {
        json_object_set_new(body, "stream", json_true());
        /* Without this the stream carries no token counts at all. */
        json_t *so = json_object();
        json_object_set_new(so, "include_usage", json_true());
        json_object_set_new(body, "stream_options", so);
    }
    if (req->n_tools) {
        json_t *tools = json_array();
        for (size_t i = 0; i < req->n_tools; i++) {
            const msg_tool *t = &req->tools[i];
            json_t *fn = json_object();
            json_object_set_new(fn, "name", oai_jstr(t->name));
            if (t->description && *t->description)
                json_object_set_new(fn, "description", oai_jstr(t->description));
            json_object_set_new(fn, "parameters",
                                t->input_schema ? json_deep_copy(t->input_schema)
                                                : json_pack("{s:s,s:{}}", "type", "object",
                                                            "properties"));
            json_t *tool = json_object();
            json_object_set_new(tool, "type", json_string("function"));
            json_object_set_new(tool, "function", fn);
            json_array_append_new(tools, tool);
        }
        json_object_set_new(body, "tools", tools);
    }
    rc = oai_call_finish_spliced(body, *mark ? mark : NULL, &kept, call, err);
    str_free(&kept);
    return rc;
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct chat_call {
    int64_t index;     /* the server's index (or one Loom made up) */
    char *id;
    char *name;
    loom_str args;
    bool announced;    /* on_tool_use already called */
    bool completed;    /* on_tool_call already called */
} chat_call;

struct provider_decoder {
    msg_response *out;
    provider_stream_sink sink;
    loom_str text;
    loom_str thinking;
    chat_call *calls;
    size_t n_calls, cap_calls;
    char *id;
    char *model;
    char *finish;      /* the last finish_reason seen */
    json_t *usage;
    bool refusal;      /* the text came (partly) from a refusal field */
    bool done;         /* [DONE] seen: later events are ignored */
    bool finished;     /* decoder_finish already ran */
};

static chat_call *call_new(provider_decoder *d, int64_t index)
{
    if (d->n_calls == d->cap_calls) {
        d->cap_calls = d->cap_calls ? d->cap_calls * 2 : 4;
        d->calls = xrealloc(d->calls, d->cap_calls * sizeof *d->calls);
    }
    chat_call *c = &d->calls[d->n_calls++];
    memset(c, 0, sizeof *c);
    c->index = index;
    return c;
}

/* The call a tool_calls delta belongs to. OpenAI sends `index` on every
 * chunk and the id only on the first; some servers omit the index, repeat
 * the id, or reuse one index for several calls with fresh ids. */
static chat_call *call_for(provider_decoder *d, const json_t *tc, const char *id, int64_t position,
                           bool positional)
{
    json_t *jidx = json_object_get(tc, "index");
    if (json_is_integer(jidx)) {
        int64_t idx = json_integer_value(jidx);
        chat_call *last = NULL;
        for (size_t i = 0; i < d->n_calls; i++)
            if (d->calls[i].index == idx)
                last = &d->calls[i];
        if (last && !(id && last->id && *last->id && strcmp(last->id, id) != 0))
            return last;
        return call_new(d, idx);
    }
    if (positional)
        return call_new(d, position);
    int64_t next = 0;
    for (size_t i = 0; i < d->n_calls; i++) {
        if (id && d->calls[i].id && strcmp(d->calls[i].id, id) == 0)
            return &d->calls[i];
        if (d->calls[i].index >= next)
            next = d->calls[i].index + 1;
    }
    if (!id && d->n_calls)
        return &d->calls[d->n_calls - 1];
    return call_new(d, next);
}

/* Chat Completions has no "this call is whole" event. A call is whole once
 * the stream moves on to the next call (servers send calls one after the
 * other, by rising index) or gives its finish_reason; then the loop may
 * start it while the rest streams (runtime/loop_early.c). Only a call with
 * its own id and name and arguments that parse as an object is handed
 * early: a made-up id would not match the final message, and the loop
 * throws early calls away when the final message does not begin with them
 * (e.g. a server that went back to an earlier call's arguments). */
static void call_complete(provider_decoder *d, chat_call *c)
{
    if (c->completed || !d->sink.on_tool_call || !c->id || !*c->id || !c->name || !*c->name)
        return;
    c->completed = true;
    json_t *input = c->args.len ? json_parse(c->args.ptr, c->args.len, NULL, NULL) : json_object();
    if (json_is_object(input))
        d->sink.on_tool_call(d->sink.ctx, c->id, c->name, input);
    json_decref(input);
}

static void apply_tool_call(provider_decoder *d, const json_t *tc, bool esc, int64_t position,
                            bool positional)
{
    if (!json_is_object(tc))
        return;
    char *id = oai_dup(json_object_get(tc, "id"), esc);
    if (id && !*id) {
        free(id);
        id = NULL;
    }
    size_t before = d->n_calls;
    chat_call *c = call_for(d, tc, id, position, positional);
    if (d->n_calls > before && d->n_calls >= 2) {
        chat_call *prev = &d->calls[d->n_calls - 2];
        if (prev->index < c->index)
            call_complete(d, prev);
    }
    if (id && !c->id) {
        c->id = id;
        id = NULL;
    }
    free(id);
    const json_t *fn = json_get_obj(tc, "function");
    json_t *jname = json_object_get(fn, "name");
    if (json_is_string(jname) && json_string_length(jname) && (!c->name || !*c->name)) {
        free(c->name);
        c->name = oai_dup(jname, esc);
    }
    json_t *jargs = json_object_get(fn, "arguments");
    if (json_is_string(jargs)) {
        oai_append(&c->args, jargs, esc);
    } else if (json_is_object(jargs) || json_is_array(jargs)) {
        /* Non-standard but seen: arguments as a JSON value, not a string. */
        char *s = json_dump_compact(jargs);
        if (s)
            str_puts(&c->args, s);
        free(s);
    }
    if (!c->announced && c->name && *c->name) {
        c->announced = true;
        if (d->sink.on_tool_use)
            d->sink.on_tool_use(d->sink.ctx, c->id ? c->id : "", c->name);
    }
}

static void emit(loom_str *acc, const json_t *v, bool esc,
                 void (*fn)(void *, const char *, size_t), void *ctx)
{
    size_t before = acc->len;
    oai_append(acc, v, esc);
    if (fn && acc->len > before)
        fn(ctx, acc->ptr + before, acc->len - before);
}

/* One delta (streaming) or one whole message (non-streaming): same fields. */
static void apply_delta(provider_decoder *d, const json_t *delta, bool esc, bool positional)
{
    if (!json_is_object(delta))
        return;
    json_t *content = json_object_get(delta, "content");
    if (json_is_string(content)) {
        emit(&d->text, content, esc, d->sink.on_text, d->sink.ctx);
    } else if (json_is_array(content)) {
        /* Mistral-style content parts. */
        size_t i;
        json_t *part;
        json_array_foreach(content, i, part)
        {
            const char *type = json_get_str(part, "type", "text");
            if (strcmp(type, "text") == 0)
                emit(&d->text, json_object_get(part, "text"), esc, d->sink.on_text, d->sink.ctx);
        }
    }
    /* DeepSeek, vLLM and llama.cpp call it reasoning_content; OpenRouter and
     * Ollama call it reasoning. Some gateways send both with the same text,
     * so only one is taken. */
    json_t *r = json_object_get(delta, "reasoning_content");
    if (!json_is_string(r) || json_string_length(r) == 0)
        r = json_object_get(delta, "reasoning");
    if (json_is_string(r))
        emit(&d->thinking, r, esc, d->sink.on_thinking, d->sink.ctx);
    json_t *refusal = json_object_get(delta, "refusal");
    if (json_is_string(refusal) && json_string_length(refusal)) {
        /* A refusal is shown to the user like any reply text. */
        d->refusal = true;
        emit(&d->text, refusal, esc, d->sink.on_text, d->sink.ctx);
    }
    json_t *tcs = json_object_get(delta, "tool_calls");
    if (json_is_array(tcs)) {
        size_t i;
        json_t *tc;
        json_array_foreach(tcs, i, tc) apply_tool_call(d, tc, esc, (int64_t)i, positional);
    }
}

/* The choice we follow: index 0 (Loom never asks for n > 1). */
static const json_t *first_choice(const json_t *root)
{
    const json_t *choices = json_get_arr(root, "choices");
    size_t i;
    const json_t *c;
    json_array_foreach(choices, i, c)
    {
        if (json_is_object(c) && json_get_int(c, "index", 0) == 0)
            return c;
    }
    return NULL;
}

/* Whether a chunk (or body) is an error report: 1 for {"error": {...}},
 * 2 when the object itself is the error, 0 otherwise. */
static int error_kind(const oai_event *e, bool is_error_event)
{
    json_t *error = json_object_get(e->root, "error");
    if (json_is_object(error) || (json_is_string(error) && json_string_length(error)))
        return 1;
    /* vLLM's error shape: the error fields at top level. */
    if (is_error_event || strcmp(json_get_str(e->root, "object", ""), "error") == 0)
        return 2;
    return 0;
}

static int fail_from(const oai_event *e, int kind, loom_error *err)
{
    const json_t *obj = kind == 1 ? json_object_get(e->root, "error") : e->root;
    return oai_fail_error(obj, "the model server reported an error in the stream", err);
}

static void take_ids(provider_decoder *d, const oai_event *e)
{
    json_t *id = json_object_get(e->root, "id");
    if (!d->id && json_is_string(id) && json_string_length(id))
        d->id = oai_dup(id, e->escaped);
    json_t *model = json_object_get(e->root, "model");
    if (!d->model && json_is_string(model) && json_string_length(model))
        d->model = oai_dup(model, e->escaped);
    json_t *usage = json_object_get(e->root, "usage");
    if (json_is_object(usage)) {
        /* Usually a last chunk with empty choices; llama.cpp and vLLM may
         * put it beside the final choice instead. The last one wins. */
        json_decref(d->usage);
        d->usage = json_incref(usage);
    }
}

static provider_decoder *chat_decoder_new(msg_response *out, const provider_stream_sink *sink)
{
    provider_decoder *d = xcalloc(1, sizeof *d);
    d->out = out;
    if (sink)
        d->sink = *sink;
    return d;
}

static int chat_decoder_event(provider_decoder *d, const sse_event *ev, loom_error *err)
{
    if (d->done || d->finished)
        return 0;
    if (ev->data && oai_is_done_marker(ev->data, ev->data_len)) {
        d->done = true;
        return 0;
    }
    oai_event e;
    int rc = oai_event_parse(ev, &e, err);
    if (rc <= 0)
        return rc;
    int kind = error_kind(&e, ev->type && strcmp(ev->type, "error") == 0);
    if (kind) {
        rc = fail_from(&e, kind, err);
        oai_event_free(&e);
        return rc;
    }
    take_ids(d, &e);
    const json_t *choice = first_choice(e.root);
    if (choice) {
        apply_delta(d, json_get_obj(choice, "delta"), e.escaped, false);
        json_t *fr = json_object_get(choice, "finish_reason");
        if (json_is_string(fr) && json_string_length(fr)) {
            free(d->finish);
            d->finish = oai_dup(fr, e.escaped);
            for (size_t i = 0; i < d->n_calls; i++)
                call_complete(d, &d->calls[i]);
        }
    }
    oai_event_free(&e);
    return 0;
}

static loom_stop_reason map_finish(const char *f)
{
    if (!f)
        return LOOM_STOP_NONE;
    if (strcmp(f, "stop") == 0 || strcmp(f, "eos") == 0)
        return LOOM_STOP_END_TURN;
    if (strcmp(f, "tool_calls") == 0 || strcmp(f, "function_call") == 0)
        return LOOM_STOP_TOOL_USE;
    if (strcmp(f, "length") == 0)
        return LOOM_STOP_MAX_TOKENS;
    if (strcmp(f, "content_filter") == 0)
        return LOOM_STOP_REFUSAL;
    return LOOM_STOP_OTHER;
}

/* Moves everything accumulated into d->out. */
static void build(provider_decoder *d)
{
    msg_response *out = d->out;
    out->message.role = MSG_ROLE_ASSISTANT;
    if (d->thinking.len)
        msg_message_add_thinking(&out->message, str_cstr(&d->thinking), NULL);
    if (d->text.len)
        msg_message_add_text(&out->message, str_cstr(&d->text));

    /* Stable insertion sort by index: calls are few, and calls sharing an
     * index (fresh ids on a reused index) keep their arrival order. */
    for (size_t i = 1; i < d->n_calls; i++) {
        chat_call c = d->calls[i];
        size_t j = i;
        while (j > 0 && d->calls[j - 1].index > c.index) {
            d->calls[j] = d->calls[j - 1];
            j--;
        }
        d->calls[j] = c;
    }
    size_t kept = 0;
    for (size_t i = 0; i < d->n_calls; i++) {
        chat_call *c = &d->calls[i];
        /* A slot that never got a name nor arguments is noise from a
         * malformed delta, not a call anyone can answer. */
        if ((!c->name || !*c->name) && c->args.len == 0)
            continue;
        char synth[32];
        const char *id = c->id;
        if (!id || !*id) {
            /* Some local servers send no id; the tool result must still
             * name the call it answers. */
            snprintf(synth, sizeof synth, "call_%zu", kept);
            id = synth;
        }
        json_t *input = oai_tool_input(c->args.ptr, c->args.len);
        msg_message_add_tool_use(&out->message, id, c->name ? c->name : "", input);
        kept++;
    }

    loom_stop_reason sr = map_finish(d->finish);
    /* Older Ollama and some gateways say "stop" even when the turn ends in
     * tool calls; the calls are what the loop must act on. */
    if (kept && (sr == LOOM_STOP_NONE || sr == LOOM_STOP_END_TURN))
        sr = LOOM_STOP_TOOL_USE;
    else if (sr == LOOM_STOP_NONE || (sr == LOOM_STOP_END_TURN && d->refusal))
        sr = d->refusal ? LOOM_STOP_REFUSAL : LOOM_STOP_END_TURN;
    out->stop_reason = sr;
    oai_set(&out->stop_reason_raw, d->finish);
    if (d->usage)
        oai_usage_fill(&out->usage, d->usage, "prompt_tokens", "completion_tokens",
                       "prompt_tokens_details", "completion_tokens_details");
    oai_set(&out->response_id, d->id);
    oai_set(&out->model, d->model);
}

static int chat_decoder_finish(provider_decoder *d, loom_error *err)
{
    if (d->finished)
        return 0;
    /* Some servers close the stream without [DONE]; a finish_reason already
     * says the reply is whole. */
    if (!d->done && !d->finish)
        return oai_fail_truncated(err);
    d->finished = true;
    build(d);
    return 0;
}

static void chat_decoder_free(provider_decoder *d)
{
    if (!d)
        return;
    str_free(&d->text);
    str_free(&d->thinking);
    for (size_t i = 0; i < d->n_calls; i++) {
        free(d->calls[i].id);
        free(d->calls[i].name);
        str_free(&d->calls[i].args);
    }
    free(d->calls);
    free(d->id);
    free(d->model);
    free(d->finish);
    json_decref(d->usage);
    free(d);
}

static int chat_parse_body(const char *body, size_t len, msg_response *out, loom_error *err)
{
    oai_event e;
    int rc = oai_body_parse(body, len, &e, err);
    if (rc < 0)
        return rc;
    int kind = error_kind(&e, false);
    if (kind) {
        rc = fail_from(&e, kind, err);
        oai_event_free(&e);
        return rc;
    }
    const json_t *choice = first_choice(e.root);
    if (!choice) {
        oai_event_free(&e);
        return loom_error_set(err, LOOM_ERR_MODEL_PROTOCOL,
                              "malformed response body: no choices in the completion");
    }
    provider_decoder *d = chat_decoder_new(out, NULL);
    take_ids(d, &e);
    apply_delta(d, json_get_obj(choice, "message"), e.escaped, true);
    json_t *fr = json_object_get(choice, "finish_reason");
    if (json_is_string(fr) && json_string_length(fr))
        d->finish = oai_dup(fr, e.escaped);
    d->done = true;
    d->finished = true;
    build(d);
    chat_decoder_free(d);
    oai_event_free(&e);
    return 0;
}

const provider_codec_ops openai_chat_codec = {
    .name = "openai-chat",
    .encode = chat_encode,
    .decoder_new = chat_decoder_new,
    .decoder_event = chat_decoder_event,
    .decoder_finish = chat_decoder_finish,
    .decoder_free = chat_decoder_free,
    .parse_body = chat_parse_body,
};

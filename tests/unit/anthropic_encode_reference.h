/* anthropic_encode_reference.h — the Anthropic request encoder as it was
 * before it wrote JSON text directly: a jansson tree of the whole request,
 * dumped by json_dump_compact. Kept only as the reference the direct encoder
 * must match byte for byte (tests/unit/test_provider_anthropic_direct.c and
 * tests/fuzz/fuzz_anthropic_encode.c). The one change: a tool_use block
 * without input packs a fresh {} with "o", not "O", so it is not leaked; the
 * bytes are the same. Issue 12 changed the wire on purpose, and the
 * reference with it: a text block of only whitespace is left out (its
 * breakpoint moves to the block before), and thinking is fitted under
 * max_tokens, carries the interleaved-thinking beta and sends no
 * temperature. */
#ifndef LOOM_TEST_ANTHROPIC_ENCODE_REFERENCE_H
#define LOOM_TEST_ANTHROPIC_ENCODE_REFERENCE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "provider/models.h"
#include "provider/provider.h"

static void reference_add_cache(json_t *block, bool on)
{
    if (on)
        json_object_set_new(block, "cache_control", json_pack("{s:s}", "type", "ephemeral"));
}

static json_t *reference_encode_block(const msg_block *b)
{
    json_t *o = NULL;
    switch (b->kind) {
    case MSG_BLOCK_TEXT:
        if (msg_text_blank(b->text))
            return NULL;
        o = json_pack("{s:s,s:s}", "type", "text", "text", b->text ? b->text : "");
        break;
    case MSG_BLOCK_IMAGE:
        o = json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "image", "source", "type", "base64",
                      "media_type", b->media_type ? b->media_type : "image/png", "data",
                      b->data ? b->data : "");
        break;
    case MSG_BLOCK_TOOL_USE:
        if (b->input)
            o = json_pack("{s:s,s:s,s:s,s:O}", "type", "tool_use", "id", b->id ? b->id : "",
                          "name", b->name ? b->name : "", "input", b->input);
        else
            o = json_pack("{s:s,s:s,s:s,s:o}", "type", "tool_use", "id", b->id ? b->id : "",
                          "name", b->name ? b->name : "", "input", json_object());
        break;
    case MSG_BLOCK_TOOL_RESULT:
        o = json_pack("{s:s,s:s,s:s}", "type", "tool_result", "tool_use_id", b->id ? b->id : "",
                      "content", b->text ? b->text : "");
        if (b->is_error)
            json_object_set_new(o, "is_error", json_true());
        break;
    case MSG_BLOCK_THINKING:
        /* Without a signature the API rejects a thinking block; drop it. */
        if (!b->signature)
            return NULL;
        o = json_pack("{s:s,s:s,s:s}", "type", "thinking", "thinking", b->text ? b->text : "",
                      "signature", b->signature);
        break;
    case MSG_BLOCK_REDACTED_THINKING:
        o = json_pack("{s:s,s:s}", "type", "redacted_thinking", "data", b->data ? b->data : "");
        break;
    }
    if (o)
        reference_add_cache(o, b->cache_control);
    return o;
}

static int reference_encode(const msg_request *req, const provider_config *cfg,
                            provider_http_call *call, loom_error *err)
{
    const char *base = cfg->base_url ? cfg->base_url : "https://api.anthropic.com";
    size_t blen = strlen(base);
    while (blen && base[blen - 1] == '/')
        blen--;
    str_append(&call->url, base, blen);
    str_puts(&call->url, "/v1/messages");

    provider_http_call_header(call, "Content-Type: application/json");
    provider_http_call_header(call, "anthropic-version: %s", "2023-06-01");
    if (cfg->api_key && *cfg->api_key)
        provider_http_call_header(call, "x-api-key: %s", cfg->api_key);
    if (req->stream)
        provider_http_call_header(call, "Accept: text/event-stream");
    int max_tokens = req->max_tokens > 0 ? req->max_tokens : 4096;
    int budget = req->thinking_budget;
    const char *model = req->model ? req->model : cfg->model;
    if (model && !strncmp(model, "claude", 6) &&
        models_lookup(model).reasoning != MODEL_REASONING_BUDGET)
        budget = 0;
    if (budget > 0 && budget < 1024)
        budget = 1024;
    if (budget >= max_tokens)
        budget = max_tokens - 1;
    if (budget < 1024)
        budget = 0;
    if (budget)
        provider_http_call_header(call, "anthropic-beta: interleaved-thinking-2025-05-14");

    json_t *body = json_object();
    json_set_str(body, "model", req->model ? req->model : cfg->model);
    json_object_set_new(body, "max_tokens",
                        json_integer(req->max_tokens > 0 ? req->max_tokens : 4096));
    json_t *system = json_array();
    if (req->system && *req->system) {
        json_t *sys = json_pack("{s:s,s:s}", "type", "text", "text", req->system);
        reference_add_cache(sys, req->system_cache);
        json_array_append_new(system, sys);
    }
    if (req->system_dynamic && *req->system_dynamic)
        json_array_append_new(system, json_pack("{s:s,s:s}", "type", "text", "text",
                                                req->system_dynamic));
    if (json_array_size(system))
        json_object_set_new(body, "system", system);
    else
        json_decref(system);
    json_t *msgs = json_array();
    for (size_t i = 0; i < req->n_messages; i++) {
        const msg_message *m = &req->messages[i];
        json_t *content = json_array();
        for (size_t j = 0; j < m->n_blocks; j++) {
            json_t *b = reference_encode_block(&m->blocks[j]);
            if (b) {
                json_array_append_new(content, b);
            } else if (m->blocks[j].cache_control && json_array_size(content)) {
                json_t *last = json_array_get(content, json_array_size(content) - 1);
                if (!json_object_get(last, "cache_control"))
                    reference_add_cache(last, true);
            }
        }
        if (json_array_size(content) == 0) {
            json_decref(content);
            continue;
        }
        json_array_append_new(msgs, json_pack("{s:s,s:o}", "role", msg_role_name(m->role),
                                              "content", content));
    }
    json_object_set_new(body, "messages", msgs);
    if (req->n_tools) {
        json_t *tools = json_array();
        for (size_t i = 0; i < req->n_tools; i++)
            json_array_append_new(tools, json_pack("{s:s,s:s,s:O}", "name", req->tools[i].name,
                                                   "description", req->tools[i].description,
                                                   "input_schema", req->tools[i].input_schema));
        json_object_set_new(body, "tools", tools);
    }
    if (budget)
        json_object_set_new(body, "thinking", json_pack("{s:s,s:i}", "type", "enabled",
                                                        "budget_tokens", budget));
    if (!budget && req->temperature >= 0)
        json_object_set_new(body, "temperature", json_real(req->temperature));
    if (req->stream)
        json_object_set_new(body, "stream", json_true());
    char *text = json_dump_compact(body);
    json_decref(body);
    if (!text)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "could not serialize the request");
    str_puts(&call->body, text);
    free(text);
    return 0;
}

/* Both encoders on req: 0 when return codes, URLs, headers and bodies are
 * the same, else -1 after printing where they part. */
static int encoders_agree(const msg_request *req, const provider_config *cfg)
{
    provider_http_call a = {0}, b = {0};
    loom_error ea, eb;
    int ra = reference_encode(req, cfg, &a, &ea);
    int rb = anthropic_codec.encode(req, cfg, &b, &eb);
    int bad = 0;
    if (ra != rb) {
        fprintf(stderr, "encode: reference returned %d, direct %d\n", ra, rb);
        bad = 1;
    } else if (ra != 0 && (ea.code != eb.code || strcmp(ea.message, eb.message))) {
        fprintf(stderr, "encode: errors differ: %s / %s\n", ea.message, eb.message);
        bad = 1;
    }
    if (strcmp(str_cstr(&a.url), str_cstr(&b.url)) || a.n_headers != b.n_headers) {
        fprintf(stderr, "encode: URL or header count differs\n");
        bad = 1;
    } else {
        for (size_t i = 0; i < a.n_headers; i++)
            if (strcmp(a.headers[i], b.headers[i])) {
                fprintf(stderr, "encode: header %zu differs\n", i);
                bad = 1;
            }
    }
    if (a.body.len != b.body.len || (a.body.len && memcmp(a.body.ptr, b.body.ptr, a.body.len))) {
        size_t k = 0;
        while (k < a.body.len && k < b.body.len && a.body.ptr[k] == b.body.ptr[k])
            k++;
        size_t from = k > 60 ? k - 60 : 0;
        fprintf(stderr, "encode: bodies differ at byte %zu (lengths %zu, %zu)\n", k, a.body.len,
                b.body.len);
        fprintf(stderr, "  reference: %.140s\n  direct:    %.140s\n",
                a.body.len > from ? a.body.ptr + from : "",
                b.body.len > from ? b.body.ptr + from : "");
        bad = 1;
    }
    provider_http_call_free(&a);
    provider_http_call_free(&b);
    return bad ? -1 : 0;
}

#endif

/* provider.c — the one call path to a model: encode, send, decode, classify,
 * retry.
 *
 * Retry policy (documented in docs/providers.md): 429, 529/overloaded, 5xx,
 * timeouts and dropped connections are retried up to max_retries times with
 * exponential backoff (retry_base_ms · 2^attempt, jitter in [50%, 100%]),
 * capped at retry_max_ms; a Retry-After header replaces the backoff. 413 and
 * prompt-too-long come back at once as LOOM_ERR_MODEL_PROMPT_TOO_LONG so the
 * loop can compact; any other 4xx fails at once with the provider's words.
 * A stream cut off midway is retried from the start: the sink is told
 * (on_retry) so a surface can mark what it already showed as void, and
 * nothing reaches the session until a whole reply is in hand. A stream that
 * turns unreadable midway (a malformed SSE event, a decoder error) is
 * retried the same way: the bytes were damaged in transit or by the
 * server, and a fresh attempt usually reads clean. */
#include "provider/provider.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "net/http.h"
#include "provider/replay.h"

void provider_http_call_header(provider_http_call *c, const char *fmt, ...)
{
    loom_str line = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&line, fmt, ap);
    va_end(ap);
    c->headers = xrealloc(c->headers, (c->n_headers + 2) * sizeof *c->headers);
    c->headers[c->n_headers++] = str_steal(&line);
    c->headers[c->n_headers] = NULL;
}

void provider_http_call_free(provider_http_call *c)
{
    str_free(&c->url);
    str_free(&c->body);
    for (size_t i = 0; i < c->n_headers; i++)
        free(c->headers[i]);
    free(c->headers);
    memset(c, 0, sizeof *c);
}

static bool contains_ci(const char *hay, const char *needle)
{
    return hay && strcasestr(hay, needle) != NULL;
}

static bool type_is(const char *type, const char *code, const char *want)
{
    return (type && strcmp(type, want) == 0) || (code && strcmp(code, want) == 0);
}

void provider_classify_error(long status, const char *type, const char *code,
                         const char *message, loom_error *err)
{
    const char *msg = message && *message ? message : "no message from the provider";
    loom_error_code c;
    bool retryable = false;
    if (status == 413 || type_is(type, code, "request_too_large") ||
        type_is(type, code, "context_length_exceeded") ||
        contains_ci(message, "prompt is too long") ||
        contains_ci(message, "maximum context length") ||
        contains_ci(message, "context window")) {
        c = LOOM_ERR_MODEL_PROMPT_TOO_LONG;
    } else if (status == 429 || type_is(type, code, "rate_limit_error") ||
               type_is(type, code, "rate_limit_exceeded")) {
        c = LOOM_ERR_MODEL_RATE_LIMITED;
        retryable = true;
    } else if (status == 529 || type_is(type, code, "overloaded_error")) {
        c = LOOM_ERR_MODEL_OVERLOADED;
        retryable = true;
    } else if (status == 401 || status == 403 || type_is(type, code, "authentication_error") ||
               type_is(type, code, "permission_error") || type_is(type, code, "invalid_api_key")) {
        c = LOOM_ERR_MODEL_AUTH;
    } else if (status == 408) {
        c = LOOM_ERR_MODEL_TIMEOUT;
        retryable = true;
    } else if (status >= 500 || type_is(type, code, "api_error") ||
               type_is(type, code, "server_error")) {
        c = LOOM_ERR_MODEL_UNAVAILABLE;
        retryable = true;
    } else if (status >= 400) {
        c = LOOM_ERR_MODEL_REQUEST_REJECTED;
    } else {
        c = LOOM_ERR_MODEL_REQUEST_REJECTED; /* an in-stream error of unknown kind */
    }
    const char *kind = type ? type : code;
    if (status > 0)
        loom_error_set(err, c, "%s (HTTP %ld%s%s)", msg, status, kind ? " " : "", kind ? kind : "");
    else
        loom_error_set(err, c, "%s (%s)", msg, kind ? kind : "error event in the stream");
    if (err) {
        err->retryable = retryable;
        err->http_status = (int)status;
    }
}

int64_t provider_refusal_window(const char *m)
{
    if (!m)
        return 0;
    const char *gt = strstr(m, "tokens > ");
    if (gt) {
        long long v = strtoll(gt + strlen("tokens > "), NULL, 10);
        if (v > 0)
            return v;
    }
    const char *mx = strstr(m, "maximum context length is ");
    if (mx) {
        long long v = strtoll(mx + strlen("maximum context length is "), NULL, 10);
        if (v > 0)
            return v;
    }
    return 0;
}

void provider_classify_error_body(long status, const char *body, size_t len, loom_error *err)
{
    /* Anthropic: {"type":"error","error":{"type","message"}};
     * OpenAI: {"error":{"message","type","code"}}. Anything else: the text. */
    loom_error ignore;
    json_t *doc = body && len ? json_parse(body, len, "error body", &ignore) : NULL;
    json_t *e = json_get_obj(doc, "error");
    if (e) {
        provider_classify_error(status, json_get_str(e, "type", NULL), json_get_str(e, "code", NULL),
                            json_get_str(e, "message", NULL), err);
    } else {
        char text[300];
        size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
        memcpy(text, body ? body : "", n);
        text[n] = '\0';
        provider_classify_error(status, NULL, NULL, n ? text : "empty response body", err);
    }
    json_decref(doc);
}

size_t provider_assistant_turns(const msg_request *req)
{
    size_t runs = 0;
    for (size_t i = 0; i < req->n_messages; i++)
        if (req->messages[i].role == MSG_ROLE_ASSISTANT &&
            (i == 0 || req->messages[i - 1].role != MSG_ROLE_ASSISTANT))
            runs++;
    return runs;
}


/* A refused key: say which variable (or setting) held it, so the fix is
 * one step; without a key, which one to set. */
static void auth_hint(const provider_config *cfg, loom_error *err)
{
    size_t n = strlen(err->message);
    const char *var = cfg->kind == PROVIDER_ANTHROPIC ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    bool setting = cfg->key_source[0] && !strncmp(cfg->key_source, "the ", 4);
    if (setting)
        snprintf(err->message + n, sizeof err->message - n,
                 " \xe2\x80\x94 the API key from %s was refused: correct it, or remove it and "
                 "set %s", cfg->key_source, var);
    else if (cfg->key_source[0])
        snprintf(err->message + n, sizeof err->message - n,
                 " \xe2\x80\x94 the API key in %s was refused: set %s to a valid key",
                 cfg->key_source, cfg->key_source);
    else
        snprintf(err->message + n, sizeof err->message - n,
                 " \xe2\x80\x94 no API key was sent: set %s (or LOOM_API_KEY)", var);
}

/* --- one attempt ------------------------------------------------------- */

typedef struct attempt_ctx {
    const provider_codec_ops *codec;
    sse_parser *sse;
    provider_decoder *dec;
    loom_str body;          /* non-streaming body */
    loom_error *err;
} attempt_ctx;

static int on_sse_event(void *ctx, const sse_event *ev)
{
    attempt_ctx *a = ctx;
    return a->codec->decoder_event(a->dec, ev, a->err) != 0;
}

static int on_body(void *ctx, const char *data, size_t len)
{
    attempt_ctx *a = ctx;
    if (!a->sse) {
        str_append(&a->body, data, len);
        return 0;
    }
    int rc = sse_parser_feed(a->sse, data, len);
    if (rc != 0 && a->err->code == LOOM_OK)
        loom_error_set(a->err, LOOM_ERR_MODEL_PROTOCOL,
                       "the provider's event stream could not be parsed (a line over the "
                       "size limit?)");
    return rc;
}

static int attempt(const provider_config *cfg, const provider_codec_ops *codec, const msg_request *req,
                   const provider_stream_sink *sink, const loom_cancel *cancel, msg_response *out,
                   loom_error *err)
{
    provider_http_call call = {0};
    if (codec->encode(req, cfg, &call, err) != 0) {
        provider_http_call_free(&call);
        return -(int)err->code;
    }
    attempt_ctx a = {.codec = codec, .err = err};
    if (req->stream) {
        a.dec = codec->decoder_new(out, sink);
        a.sse = sse_parser_new(on_sse_event, &a);
    }
    http_request hreq = {
        .method = "POST",
        .url = str_cstr(&call.url),
        .headers = (const char *const *)call.headers,
        .body = call.body.ptr,
        .body_len = call.body.len,
        .connect_timeout_ms = cfg->connect_timeout_ms,
        .idle_timeout_ms = cfg->idle_timeout_ms,
        .total_timeout_ms = cfg->request_timeout_ms,
        .cancel = cancel,
    };
    http_response hresp = {0};
    int rc = http_perform(&hreq, on_body, &a, &hresp, err);
    if (rc == 0 && (hresp.status < 200 || hresp.status >= 300)) {
        provider_classify_error_body(hresp.status, hresp.error_body.ptr, hresp.error_body.len, err);
        err->retry_after_s = hresp.retry_after_s;
        if (err->code == LOOM_ERR_MODEL_AUTH)
            auth_hint(cfg, err);
        rc = -(int)err->code;
    } else if (rc == 0 && a.sse) {
        if (sse_parser_finish(a.sse) != 0 || codec->decoder_finish(a.dec, err) != 0)
            rc = -(int)(err->code ? err->code : LOOM_ERR_MODEL_PROTOCOL);
    } else if (rc == 0) {
        rc = codec->parse_body(str_cstr(&a.body), a.body.len, out, err);
    }
    if (rc == 0) {
        free(out->request_id);
        out->request_id = xstrdup(hresp.request_id);
    }
    if (a.sse)
        sse_parser_free(a.sse);
    if (a.dec)
        codec->decoder_free(a.dec);
    str_free(&a.body);
    http_response_free(&hresp);
    provider_http_call_free(&call);
    return rc;
}

static long backoff_ms(const provider_config *cfg, int attempt_no, const loom_error *why)
{
    if (why->retry_after_s >= 0) {
        double ms = why->retry_after_s * 1000.0;
        return ms > cfg->retry_max_ms ? cfg->retry_max_ms : (long)ms;
    }
    double base = (double)cfg->retry_base_ms * (double)(1L << (attempt_no < 20 ? attempt_no : 20));
    if (base > cfg->retry_max_ms)
        base = (double)cfg->retry_max_ms;
    unsigned r = 0;
    if (getrandom(&r, sizeof r, 0) != sizeof r)
        r = (unsigned)clock_mono_ns();
    return (long)(base * (0.5 + 0.5 * (r / (double)UINT32_MAX)));
}

int provider_complete(const provider_config *cfg, const msg_request *req,
                      const provider_stream_sink *sink, const loom_cancel *cancel,
                      msg_response *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    loom_error_clear(err);
    if (cfg->kind == PROVIDER_REPLAY)
        return replay_complete(cfg, req, sink, out, err);
    const provider_codec_ops *codec = provider_codec(cfg->kind);
    if (!codec)
        return loom_error_set(err, LOOM_ERR_CONFIG, "no codec for provider %s",
                              provider_kind_name(cfg->kind));
    http_global_init();
    for (int n = 0;; n++) {
        if (cancel_requested(cancel))
            return loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "model call cancelled");
        loom_error_clear(err);
        int64_t t0 = clock_mono_ms();
        int rc = attempt(cfg, codec, req, sink, cancel, out, err);
        if (rc == 0) {
            log_event(LOG_INFO, "wire",
                      json_pack("{s:s,s:s,s:i,s:I}", "provider", codec->name, "model",
                                req->model ? req->model : "", "attempt", n + 1, "ms",
                                (json_int_t)(clock_mono_ms() - t0)),
                      "model call ok");
            return 0;
        }
        msg_response_free(out);
        if (req->stream && err->code == LOOM_ERR_MODEL_PROTOCOL)
            err->retryable = true;
        log_event(LOG_WARN, "wire",
                  json_pack("{s:s,s:s,s:i,s:b}", "provider", codec->name, "code",
                            loom_error_code_name(err->code), "attempt", n + 1, "retryable",
                            err->retryable),
                  "model call failed: %s", err->message);
        if (!err->retryable || n >= cfg->max_retries) {
            if (err->retryable && n > 0) {
                const char *what = err->code == LOOM_ERR_MODEL_OVERLOADED     ? "overloaded"
                                   : err->code == LOOM_ERR_MODEL_RATE_LIMITED ? "rate limited"
                                   : err->code == LOOM_ERR_MODEL_TIMEOUT      ? "timed out"
                                   : err->code == LOOM_ERR_MODEL_PROTOCOL     ? "stream unreadable"
                                                                              : "unavailable";
                loom_error_prefix(err, "model %s after %d retr%s", what, n, n == 1 ? "y" : "ies");
            }
            err->retryable = false;
            return -(int)err->code;
        }
        long wait = backoff_ms(cfg, n, err);
        if (sink && sink->on_retry)
            sink->on_retry(sink->ctx, n + 1, wait / 1000.0, err);
        if (clock_sleep_ms(wait, cancel) != 0)
            return loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "model call cancelled");
    }
}

int provider_port_complete(const provider_port *port, const provider_config *cfg,
                           const msg_request *req, const provider_stream_sink *sink,
                           const loom_cancel *cancel, msg_response *out, loom_error *err)
{
    if (port && port->complete)
        return port->complete(port->ctx, cfg, req, sink, cancel, out, err);
    return provider_complete(cfg, req, sink, cancel, out, err);
}

/* fuzz_anthropic.c — arbitrary bytes through the SSE parser into the
 * Anthropic stream decoder, and as a non-streaming body. Must never crash,
 * leak or hang, whatever the provider (or a middlebox) sends. */
#include <stdint.h>
#include <string.h>

#include "provider/provider.h"
#include "net/sse.h"

typedef struct ctx {
    provider_decoder *dec;
    loom_error err;
} ctx;

static int on_event(void *p, const sse_event *ev)
{
    ctx *c = p;
    return anthropic_codec.decoder_event(c->dec, ev, &c->err) != 0;
}

static void on_text(void *p, const char *d, size_t n) { (void)p; (void)d; (void)n; }

/* A complete tool call's input must be a JSON object whatever came. */
static void on_tool_call(void *p, const char *id, const char *name, const json_t *input)
{
    (void)p;
    if (!id || !name || !json_is_object(input))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    provider_stream_sink sink = {.on_text = on_text, .on_thinking = on_text,
                                 .on_tool_call = on_tool_call};
    msg_response resp = {0};
    ctx c = {.dec = anthropic_codec.decoder_new(&resp, &sink)};
    sse_parser *p = sse_parser_new(on_event, &c);
    if (sse_parser_feed(p, (const char *)data, size) == 0 && sse_parser_finish(p) == 0)
        anthropic_codec.decoder_finish(c.dec, &c.err);
    sse_parser_free(p);
    anthropic_codec.decoder_free(c.dec);
    msg_response_free(&resp);

    msg_response body = {0};
    loom_error err;
    anthropic_codec.parse_body((const char *)data, size, &body, &err);
    msg_response_free(&body);
    return 0;
}

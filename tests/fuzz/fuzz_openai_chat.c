/* fuzz_openai_chat.c — arbitrary bytes through the SSE parser into the OpenAI
 * Chat Completions stream decoder, and as a non-streaming body. Must never
 * crash, leak or hang, whatever the server (or a middlebox) sends. */
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
    return openai_chat_codec.decoder_event(c->dec, ev, &c->err) != 0;
}

static volatile unsigned char g_touch;

static void on_delta(void *p, const char *d, size_t n)
{
    /* Touch every byte so a bad length shows up under ASan. */
    for (size_t i = 0; i < n; i++)
        g_touch ^= (unsigned char)d[i];
    (void)p;
}

static void on_tool(void *p, const char *id, const char *name)
{
    (void)p;
    volatile size_t n = strlen(id) + strlen(name);
    (void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    provider_stream_sink sink = {.on_text = on_delta, .on_thinking = on_delta, .on_tool_use = on_tool};
    msg_response resp = {0};
    ctx c = {.dec = openai_chat_codec.decoder_new(&resp, &sink)};
    sse_parser *p = sse_parser_new(on_event, &c);
    if (sse_parser_feed(p, (const char *)data, size) == 0 && sse_parser_finish(p) == 0)
        openai_chat_codec.decoder_finish(c.dec, &c.err);
    sse_parser_free(p);
    openai_chat_codec.decoder_free(c.dec);
    msg_response_free(&resp);

    msg_response body = {0};
    loom_error err;
    openai_chat_codec.parse_body((const char *)data, size, &body, &err);
    msg_response_free(&body);
    return 0;
}

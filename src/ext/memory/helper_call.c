/* helper_call.c — memory's isolated model call (see helper_call.h).
 * Threading: the caller's. */
#include "ext/memory/helper_call.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"

static void discard(void *ctx, const char *d, size_t n)
{
    (void)ctx, (void)d, (void)n;
}

int memory_helper_call(const memory_helper_req *r, const loom_cancel *cancel, char **text,
                       msg_usage *usage, loom_error *err)
{
    *text = NULL;
    provider_config cfg = *r->agent; /* shallow: only .model differs, never freed here */
    if (r->model)
        cfg.model = (char *)r->model;
    msg_request req;
    memset(&req, 0, sizeof req);
    req.model = xstrdup(cfg.model);
    req.system = xstrdup(r->system);
    req.temperature = -1;
    req.max_tokens = r->max_tokens;
    req.stream = cfg.stream;
    req.cache_key = xstrdup(r->cache_key);
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), r->user);
    provider_stream_sink sink = {.on_text = discard, .on_thinking = discard};
    msg_response resp;
    int rc = provider_port_complete(r->port, &cfg, &req, &sink, cancel, &resp, err);
    msg_request_free(&req);
    if (rc != 0)
        return -1;
    msg_usage_add(usage, &resp.usage);
    *text = msg_message_text(&resp.message);
    msg_response_free(&resp);
    if (!*text)
        *text = xstrdup("");
    return 0;
}

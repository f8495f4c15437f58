/* replay.c — the offline provider: a cassette scripts the model's side.
 *
 * Used by `make demo` and by deterministic tests that need no server. The
 * answer for a request is the cassette turn whose index equals the number of
 * assistant turns already in the conversation, so resuming a session picks
 * up the next scripted turn rather than starting over. */
#include "provider/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json.h"

/* Small pieces, like a live stream, so surfaces exercise their streaming path. */
#define REPLAY_CHUNK 6

static void stream_text(const provider_stream_sink *sink, const char *text, bool thinking)
{
    if (!sink)
        return;
    void (*fn)(void *, const char *, size_t) = thinking ? sink->on_thinking : sink->on_text;
    if (!fn)
        return;
    size_t len = strlen(text);
    for (size_t off = 0; off < len; off += REPLAY_CHUNK)
        fn(sink->ctx, text + off, len - off < REPLAY_CHUNK ? len - off : REPLAY_CHUNK);
}

static loom_stop_reason stop_from(const char *s, bool has_tools)
{
    if (!s)
        return has_tools ? LOOM_STOP_TOOL_USE : LOOM_STOP_END_TURN;
    if (!strcmp(s, "tool_use")) return LOOM_STOP_TOOL_USE;
    if (!strcmp(s, "max_tokens")) return LOOM_STOP_MAX_TOKENS;
    if (!strcmp(s, "end_turn")) return LOOM_STOP_END_TURN;
    return LOOM_STOP_OTHER;
}

int replay_complete(const provider_config *cfg, const msg_request *req,
                    const provider_stream_sink *sink, msg_response *out, loom_error *err)
{
    char *text = NULL;
    size_t len = 0;
    if (file_read_all(cfg->cassette, &text, &len, err) != 0) {
        loom_error_prefix(err, "replay cassette");
        err->code = LOOM_ERR_CONFIG;
        return -(int)err->code;
    }
    loom_error perr;
    json_t *doc = json_parse(text, len, cfg->cassette, &perr);
    free(text);
    json_t *turns = json_get_arr(doc, "turns");
    if (!turns) {
        int rc = loom_error_set(err, LOOM_ERR_CONFIG, "replay cassette %s: %s", cfg->cassette,
                                doc ? "no \"turns\" array" : perr.message);
        json_decref(doc);
        return rc;
    }
    size_t index = provider_assistant_turns(req);
    json_t *turn = json_array_get(turns, index);
    /* A mockllm scenario works as a cassette too: its reply sits under "reply". */
    if (json_is_object(json_get_obj(turn, "reply")))
        turn = json_get_obj(turn, "reply");
    if (!json_is_object(turn)) {
        int rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "replay cassette %s has %zu turn(s); this conversation needs "
                                "turn %zu", cfg->cassette, json_array_size(turns), index + 1);
        json_decref(doc);
        return rc;
    }

    msg_message *m = &out->message;
    m->role = MSG_ROLE_ASSISTANT;
    const char *thinking = json_get_str(turn, "thinking", NULL);
    if (thinking) {
        stream_text(sink, thinking, true);
        msg_message_add_thinking(m, thinking, json_get_str(turn, "thinking_signature", NULL));
    }
    const char *reply = json_get_str(turn, "text", NULL);
    if (reply) {
        stream_text(sink, reply, false);
        msg_message_add_text(m, reply);
    }
    json_t *calls = json_get_arr(turn, "tool_calls");
    size_t i;
    json_t *call;
    json_array_foreach(calls, i, call) {
        const char *id = json_get_str(call, "id", NULL);
        char fallback[64];
        if (!id) {
            snprintf(fallback, sizeof fallback, "replay_call_%zu_%zu", index, i);
            id = fallback;
        }
        const char *name = json_get_str(call, "name", "");
        json_t *input = json_get_obj(call, "input");
        if (sink && sink->on_tool_use)
            sink->on_tool_use(sink->ctx, id, name);
        msg_message_add_tool_use(m, id, name, input ? json_deep_copy(input) : json_object());
    }
    const char *stop = json_get_str(turn, "stop_reason", NULL);
    out->stop_reason = stop_from(stop, json_array_size(calls) > 0);
    out->stop_reason_raw = xstrdup(loom_stop_reason_name(out->stop_reason));
    json_t *usage = json_get_obj(turn, "usage");
    out->usage.input_tokens = json_get_int(usage, "input_tokens", 0);
    out->usage.output_tokens = json_get_int(usage, "output_tokens", 0);
    out->usage.cache_read_tokens = json_get_int(usage, "cache_read_input_tokens", 0);
    out->usage.cache_creation_tokens = json_get_int(usage, "cache_creation_input_tokens", 0);
    out->usage.raw = usage ? json_deep_copy(usage) : json_object();
    char id[48];
    snprintf(id, sizeof id, "replay_%zu", index);
    out->response_id = xstrdup(id);
    out->model = xstrdup(cfg->model ? cfg->model : "replay");
    json_decref(doc);
    return 0;
}

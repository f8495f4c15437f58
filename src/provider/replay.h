/* replay.h — the offline provider: answers from a cassette file.
 *
 * Cassette: {"turns":[{"text", "thinking", "thinking_signature",
 * "tool_calls":[{"id","name","input"}], "stop_reason", "usage":{...}}]};
 * a mockllm scenario (the same fields under "reply") is accepted as is, so
 * one script drives both the offline demo and the e2e tests.
 * The turn is chosen by how many assistant turns the conversation already
 * holds, so a resumed session continues where it left off. Text is streamed
 * to the sink in small pieces like a live model would. */
#ifndef LOOM_PROVIDER_REPLAY_H
#define LOOM_PROVIDER_REPLAY_H

#include "provider/provider.h"

int replay_complete(const provider_config *cfg, const msg_request *req,
                    const provider_stream_sink *sink, msg_response *out, loom_error *err);

#endif

/* replay.h — the offline provider: answers from a cassette file.
 *
 * Cassette: {"turns":[{"text", "thinking", "thinking_signature",
 * "tool_calls":[{"id","name","input"}], "stop_reason", "usage":{...}}]}.
 * The turn is chosen by how many assistant turns the conversation already
 * holds, so a resumed session continues where it left off. Text is streamed
 * to the sink in small pieces like a live model would. */
#ifndef LOOM_WIRE_REPLAY_H
#define LOOM_WIRE_REPLAY_H

#include "wire/provider.h"

int replay_complete(const provider_config *cfg, const wire_request *req,
                    const wire_stream_sink *sink, wire_response *out, loom_error *err);

#endif

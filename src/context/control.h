/* context_control.h — context engineering in the loop (seed 000 dimension
 * ①; seed 001 §7.1, §8): assembling each request from its partitions,
 * measuring the pressure ρ, and applying the compaction ladder, renew and
 * reactive compaction.
 *
 * Assembly order, stable first and volatile last so the byte prefix of
 * consecutive requests stays identical and provider caches hit:
 *   C_system (static, cache breakpoint) · C_system dynamic + C_memory ·
 *   C_skill (tools, in registry order) · C_history (the active chain seen
 *   through the ladder's edits; a breakpoint on its last block) ·
 *   the dynamic tail, appended to the last user message: queued
 *   <system-reminder>s, then C_working.
 * Nothing of the tail is recorded; the next request has the history grow
 * where the tail was. */
#ifndef LOOM_CONTEXT_CONTROL_H
#define LOOM_CONTEXT_CONTROL_H

#include "runtime/loop_internal.h"

/* The request for this turn (see above). Queued reminders are copied into
 * the tail, not consumed. *est is the local token estimate of the whole
 * request. */
int context_build_request(const loop_params *p, const provider_config *cfg, loop_io *io,
                          loop_state *st, wire_request *req, int64_t *est, loom_error *err);

/* L3: measures ρ for a request estimated at est and applies at most one
 * ladder step (renew when ρ ≥ 1, or when the model asked for it). 1 when
 * the context changed (rebuild the request), 0 when not, -1 on a session
 * error (err set). */
int context_govern(const loop_params *p, const provider_config *cfg, loop_io *io,
                   loop_state *st, int64_t est, loop_result *out, loom_error *err);

/* Step D. trigger: "auto", "manual" or "reactive"; instructions may be
 * NULL. 1 compacted, 0 skipped (nothing new since the last summary, or a
 * PreCompact hook blocked it; a warning says which), -1 failed (err set;
 * the session is unchanged). */
int context_compact(const loop_params *p, const provider_config *cfg, loop_io *io,
                    loop_state *st, const char *trigger, const char *instructions,
                    loop_result *out, loom_error *err);

/* Stops and discards a background compaction still running (run end).
 * Its summary is not applied, but what its model call spent is counted in
 * out (usage, cost, a model.usage event): the tokens were paid for. */
void context_background_stop(const loop_params *p, loop_io *io, loop_state *st,
                             loop_result *out);

/* renew (seed 000, 7 steps); reason: "forced", "requested" or
 * "reactive". 0, or -1 with err set. */
int context_renew(const loop_params *p, const provider_config *cfg, loop_io *io,
                  loop_state *st, const char *reason, loom_error *err);

/* The window a too-long refusal names ("… 17000 tokens > 16000 maximum",
 * "maximum context length is 16000 tokens"); 0 when it names none. */
int64_t context_window_from_refusal(const char *message);

#endif

/* event.h — the run's events: the one record every surface consumes, and
 * the typed constructor of each type's payload (seed 000 §11).
 *
 * {event_id, run_id, type, ts, visibility, correlation_id, payload}. The
 * types, their numbers and names are loom_event_type in
 * include/loom_protocol.h; docs/events.md says what each payload holds, and
 * the constructors below are the only place a payload's shape is written
 * (key order included: the JSON on the wire is compared byte for byte).
 *
 * Why base/ and not runtime/: the loop emits most events, but the
 * governance pipeline (below the loop) emits hook.output, warning.emitted
 * and the approval events through its port, and the loop emits the same
 * hook.output and warning shapes; one definition both can include must sit
 * below both. The constructors take plain values (strings, numbers, JSON)
 * so this file still depends on nothing in Loom but base/.
 *
 * Every constructor returns a new reference (the payload, to be handed to
 * an emit port, which steals it). No shared state: any thread. */
#ifndef LOOM_BASE_EVENT_H
#define LOOM_BASE_EVENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom_protocol.h"

/* The whole event; payload is stolen (NULL → {}). correlation_id may be
 * NULL (serialized as null). */
json_t *event_make(const char *run_id, loom_event_type type, loom_visibility vis,
                   const char *correlation_id, json_t *payload);

/* ---- payloads, one constructor per shape ---------------------------------- */

/* token.delta: {channel: "text"|"reasoning", text} — text is n bytes. */
json_t *event_token_delta(const char *channel, const char *text, size_t n);
/* stream.restarted: {reason, attempt, message} (message NULL → ""). */
json_t *event_stream_restarted(const char *reason, int attempt, const char *message);

/* warning.emitted: {kind, message}. */
json_t *event_warning(const char *kind, const char *message);
/* warning.emitted: {kind, message} with a printf-style message. */
json_t *event_warningf(const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* warning.emitted of kind model_retry: {kind, message, code, attempt, delay_s}. */
json_t *event_warning_model_retry(const char *message, loom_error_code code, int attempt,
                                  double delay_s);
/* kind tool_loop: {kind, message, tool, repeats}. */
json_t *event_warning_tool_loop(const char *message, const char *tool, int repeats);
/* kind fallback_model: {kind, message, model}. */
json_t *event_warning_fallback_model(const char *message, const char *model);
/* kind prompt_too_long: {kind, message, context_window}. */
json_t *event_warning_prompt_too_long(const char *message, int64_t context_window);
/* kind compaction_skipped: {kind, trigger, message} (printf-style). */
json_t *event_warning_compaction_skipped(const char *trigger, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* kind compaction_failed: {kind, trigger, message, failures}. */
json_t *event_warning_compaction_failed(const char *trigger, const char *message, int failures);

/* hook.output: {event, hook, output} (hook NULL → ""). */
json_t *event_hook_output(const char *event, const char *hook, const char *output);

/* model.completed: {turn, stop_reason, request_id (null when NULL), usage
 * (stolen), cost_usd (absent when < 0: prices unknown), response_model?,
 * response_id?, started_us?, first_chunk_us?} — the last four absent when
 * NULL / 0 (telemetry's chat span reads them). */
json_t *event_model_completed(int turn, loom_stop_reason stop, const char *request_id,
                              json_t *usage, double cost_usd, const char *response_model,
                              const char *response_id, int64_t started_us,
                              int64_t first_chunk_us);
/* model.usage of a call besides the turns: {purpose, tool (null when NULL),
 * calls, usage (stolen), cost_usd (absent when < 0)}. */
json_t *event_model_usage(const char *purpose, const char *tool, int calls, json_t *usage,
                          double cost_usd);
/* model.usage of a compaction: {purpose: "compaction", usage (stolen), cost_usd?}. */
/* One helper model call (provider/helper.h): event_model_usage's keys for
 * one call, plus its tier and model. */
json_t *event_model_usage_helper(const char *purpose, const char *tool, const char *tier,
                                 const char *model, json_t *usage, double cost_usd);
json_t *event_model_usage_compaction(json_t *usage, double cost_usd);

/* tool.started: {call_id, tool, input} (input borrowed). */
json_t *event_tool_started(const char *call_id, const char *tool, const json_t *input);
/* tool.finished / tool.failed: {call_id, tool, is_error, started_us,
 * finished_us, duration_ms, output, output_chars, failed_step?, raw?}. The
 * output is a preview of text (n bytes): at most EVENT_TOOL_PREVIEW bytes,
 * cut on a character boundary, bad UTF-8 as U+FFFD; the whole result is in
 * the session. failed_step may be NULL; raw is borrowed, may be NULL. */
#define EVENT_TOOL_PREVIEW 2000
json_t *event_tool_finished(const char *call_id, const char *tool, bool is_error,
                            int64_t started_us, int64_t finished_us, const char *text, size_t n,
                            const char *failed_step, const json_t *raw);

/* approval.requested: {approval_id, tool, message, input (borrowed),
 * question, always (stolen)}. */
/* tool.progress: a running tool's progress (total < 0: unknown; message
 * may be NULL). */
json_t *event_tool_progress(const char *call_id, const char *tool, double progress, double total,
                            const char *message);
/* tool.progress for a running command's live output: {call_id, tool,
 * progress: bytes of output so far, output: the new text} (not UTF-8 bytes
 * become U+FFFD). */
json_t *event_tool_output(const char *call_id, const char *tool, size_t bytes_so_far,
                          const char *text, size_t n);
/* mcp.server_changed: an MCP server's state (error may be NULL). */
json_t *event_mcp_server_changed(const char *server, const char *state, const char *error,
                                 int tools, int resources, int prompts);
json_t *event_approval_requested(const char *approval_id, const char *tool, const char *message,
                                 const json_t *input, const char *question, json_t *always);
/* agent.spawned: {agent_id, name?, agent_type, model, depth, parent_call_id?,
 * background, description?, worktree?: {path, branch}} (NULL strings and
 * worktree_path NULL leave their keys out). */
json_t *event_agent_spawned(const char *agent_id, const char *name, const char *agent_type,
                            const char *model, int depth, const char *parent_call_id,
                            bool background, const char *description,
                            const char *worktree_path, const char *worktree_branch);
/* agent.completed: {agent_id, name?, agent_type, state, stop_reason, turns,
 * tool_uses, duration_ms, usage (stolen), cost_usd (when >= 0), result
 * (≤ 2000 chars), worktree? (stolen: {path, branch, changed, kept})}. */
json_t *event_agent_completed(const char *agent_id, const char *name, const char *agent_type,
                              loom_run_state state, loom_stop_reason stop, int turns,
                              int tool_uses, int64_t duration_ms, json_t *usage, double cost_usd,
                              const char *result, json_t *worktree);
/* agent.progress: {agent_id, name?, tool? (the tool it runs now), tokens,
 * elapsed_ms} — at most every 250 ms per agent (the caller's rule). */
json_t *event_agent_progress(const char *agent_id, const char *name, const char *tool,
                             int64_t tokens, int64_t elapsed_ms);
/* approval.resolved: {approval_id, tool, approved, always (stolen; NULL →
 * null)}. */
json_t *event_approval_resolved(const char *approval_id, const char *tool, bool approved,
                                json_t *always);

/* context.compaction_started: {trigger, tokens_before}. */
json_t *event_context_compaction_started(const char *trigger, int64_t tokens_before);
/* context.compacted by a model-written summary: {step: "compact", trigger,
 * background, tokens_before, tokens_after, saved_tokens}. */
json_t *event_context_compacted_summary(const char *trigger, bool background,
                                        int64_t tokens_before, int64_t tokens_after);
/* context.compacted by a local ladder step: {step, trigger: "auto",
 * saved_tokens, rho}. */
json_t *event_context_compacted_step(const char *step, int64_t saved_tokens, double rho);
/* context.renewed: {reason, turn, tokens_before, tokens_after, items, kept,
 * core, mf_dir (null when NULL)}. */
json_t *event_context_renewed(const char *reason, int turn, int64_t tokens_before,
                              int64_t tokens_after, int items, int kept, int core,
                              const char *mf_dir);

/* heartbeat.event: {event_id, fingerprint, source, summary, urgency,
 * action, delta_h}. */
json_t *event_heartbeat_event(const char *event_id, const char *fingerprint, const char *source,
                              const char *summary, const char *urgency, const char *action,
                              double delta_h);

/* run.state_changed at the start: {state: "running", session_id, model,
 * provider, cwd, permission_mode}. */
json_t *event_run_started(const char *session_id, const char *model, const char *provider,
                          const char *cwd, const char *permission_mode);
/* run.state_changed at the end, which is also the run's result
 * (loom_run_result_json): {state, result, stop_reason, session_id,
 * num_turns, usage (stolen), cost_usd (absent when < 0), error:{code,
 * message} (absent when code is LOOM_OK), interrupt (borrowed; absent when
 * NULL)}. */
json_t *event_run_ended(loom_run_state state, const char *result, loom_stop_reason stop,
                        const char *session_id, int num_turns, json_t *usage, double cost_usd,
                        loom_error_code code, const char *error_message, json_t *interrupt);
/* The run-end payload's "heartbeat": {ticks, events, gated, cpu_ms,
 * wall_ms, cpu_share}. */
json_t *event_run_heartbeat(uint64_t ticks, uint64_t events, uint64_t gated, double cpu_ms,
                            double wall_ms, double cpu_share);

#endif

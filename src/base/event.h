/* event.h — the run's event record: one type, one schema (seed 000 §11).
 *
 * {event_id, run_id, type, ts, visibility, correlation_id, payload}. Every
 * surface (REPL renderer, stream-json, SSE, ACP) consumes these. Types are
 * only ever added, never renamed. */
#ifndef LOOM_RUNTIME_EVENT_H
#define LOOM_RUNTIME_EVENT_H

#include <jansson.h>

#define EV_TOKEN_DELTA "token.delta"
#define EV_RUN_STATE_CHANGED "run.state_changed"
#define EV_TOOL_STARTED "tool.started"
#define EV_TOOL_FINISHED "tool.finished"
#define EV_TOOL_FAILED "tool.failed"
#define EV_APPROVAL_REQUESTED "approval.requested"
#define EV_APPROVAL_RESOLVED "approval.resolved"
#define EV_ARTIFACT_CREATED "artifact.created"
#define EV_AGENT_SPAWNED "agent.spawned"
#define EV_AGENT_COMPLETED "agent.completed"
#define EV_WARNING_EMITTED "warning.emitted"
/* A model call starts over (retry, fallback model, a re-sent request): the
 * token.delta text of the call so far is void and must be dropped. */
#define EV_STREAM_RESTARTED "stream.restarted"

typedef enum { EV_VIS_USER, EV_VIS_SYSTEM, EV_VIS_AUDIT } event_visibility;

/* A new event object; payload is stolen (NULL → {}). correlation_id may be
 * NULL (serialized as null). */
json_t *event_make(const char *run_id, const char *type, event_visibility vis,
                   const char *correlation_id, json_t *payload);
const char *event_visibility_name(event_visibility vis);

#endif

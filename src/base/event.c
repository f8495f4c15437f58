/* event.c — building events in the one schema all surfaces share. */
#include "base/event.h"

#include "base/clock.h"
#include "base/uuid.h"

const char *event_visibility_name(event_visibility vis)
{
    switch (vis) {
    case EV_VIS_SYSTEM: return "system";
    case EV_VIS_AUDIT: return "audit";
    case EV_VIS_USER: break;
    }
    return "user";
}

json_t *event_make(const char *run_id, const char *type, event_visibility vis,
                   const char *correlation_id, json_t *payload)
{
    char id[UUID_STR_LEN], ts[32];
    uuid_v7(id);
    clock_iso8601(clock_wall_ms(), ts);
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s?,s:o}", "event_id", id, "run_id",
                     run_id ? run_id : "", "type", type, "ts", ts, "visibility",
                     event_visibility_name(vis), "correlation_id", correlation_id, "payload",
                     payload ? payload : json_object());
}

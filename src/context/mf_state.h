/* mf_state.h — C_working's M_f snapshots (renew steps 1–4): the goal and
 * dashboard, the plan, the event surface and the knowledge surface, one
 * JSON file each in the session directory. Thread-safe (see working.h). */
#ifndef LOOM_CONTEXT_MF_STATE_H
#define LOOM_CONTEXT_MF_STATE_H

#include "base/error.h"
#include "context/working.h"

/* M_f (renew steps 1–4): dir/working_state.json, plan_state.json,
 * event_state.json, knowledge_state.json, each written atomically. */
int working_save(working *w, const char *dir, loom_error *err);
/* Loads what working_save wrote. Each file present replaces its part;
 * missing files are not errors. A damaged file (bad JSON, wrong types,
 * unknown names) is a session_corrupt error naming the file and what is
 * wrong, and then nothing is changed. The plan is restored into the todo
 * list; events keep their ids and states. */
int working_load(working *w, const char *dir, loom_error *err);

#endif

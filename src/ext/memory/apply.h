/* apply.h — writing a validated extractor reply into the memory folder
 * (seed 001 §11.3 write rules).
 *
 * One fact per entry file, dated (created, updated: YYYY-MM-DD) and with
 * its source session; MEMORY.md gets one line per entry. A duplicate (the
 * model's "merge", or an "add" whose slug or body is one already stored)
 * dates the existing entry again instead of adding a second; a
 * contradiction ("replace") writes the new fact and removes the old entry,
 * leaving a note in the new one saying what it replaced and when.
 *
 * Before anything is written every candidate goes through the credential
 * scanner (policy/secret_scan.h): one with a hit is dropped — never written,
 * not even masked — and reported. A reply whose merge or replace names an
 * entry that does not exist is refused whole: nothing is written.
 *
 * No state; one call, one thread (the run's). */
#ifndef LOOM_EXT_MEMORY_APPLY_H
#define LOOM_EXT_MEMORY_APPLY_H

#include <jansson.h>
#include <stdint.h>

#include "ext/memory/reply.h"

/* Applies reply to dir (the memory folder, which exists). report (an
 * object) gets "written", "merged", "replaced" ([{slug, replaced}]) and
 * "dropped" ([{name, why}]) arrays. 0, or -1 with why (nothing written:
 * a bad target, or the folder could not be written — what was written
 * before the failure is in report). Holds an flock of <dir>/.lock
 * throughout: another process applying to dir waits. */
int memory_apply(const char *dir, const memory_reply *reply, const char *session_id,
                 int64_t now_ms, json_t *report, loom_str *why);

#endif

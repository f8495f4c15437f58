/* jsonl.h — JSON Lines files that only grow: the heartbeat journal, the
 * audit log and the debug log append one record a line through here.
 *
 * A record is one write() on an O_APPEND descriptor, so lines from several
 * threads or processes never interleave; a short write (disk full) is ended
 * with a newline so that only that record is lost and the next one starts
 * on a line of its own. Callers that share a descriptor between threads
 * and must not see even a short write split hold their own lock around
 * jsonl_append. The session transcript has its own appender: it also takes
 * a torn record back (session/transcript.c). */
#ifndef LOOM_BASE_JSONL_H
#define LOOM_BASE_JSONL_H

#include <jansson.h>

#include "base/error.h"

/* Opens path for appending (created 0600: records carry prompts and tool
 * input), creating its directory (0700) first. The descriptor (>= 0,
 * close-on-exec), or -code with err naming what ("journal") and path. */
int jsonl_open(const char *path, const char *what, loom_error *err);

/* Appends record as one compact line. 0; -LOOM_ERR_INTERNAL when it cannot
 * be serialised (nothing written); -LOOM_ERR_IO with errno's text when the
 * write failed. err may be NULL. */
int jsonl_append(int fd, const json_t *record, loom_error *err);

#endif

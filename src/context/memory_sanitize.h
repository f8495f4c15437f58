/* memory_sanitize.h — sanitizeMemoryBlock (seed 001 §11.5) and tag
 * neutralizing, for memory text on its way into a request.
 *
 * Memory is untrusted text: a model wrote it from a conversation, or anyone
 * with write access to the repository did. Whether it goes into the
 * request inside a <system-reminder data-role="memory"> block (recall,
 * ext/memory/recall.c) or into the system prompt (a MEMORY.md index,
 * context/memory.c), it must not be able to close a block, open another
 * one, or pass as any other harness tag. Absolute paths are replaced too
 * (the seed's real bug: stale absolute paths pulled writes to old
 * folders). It lives in context/ so both can use it.
 *
 * No state; any thread. */
#ifndef LOOM_CONTEXT_MEMORY_SANITIZE_H
#define LOOM_CONTEXT_MEMORY_SANITIZE_H

#include <stddef.h>

/* What sanitizing did, for the recall log and telemetry. */
typedef struct memory_sanitize_stats {
    size_t paths;  /* absolute paths replaced by "[path omitted]" */
    size_t tags;   /* tag openers ("<x", "</x", "<!", "<?") neutralized */
} memory_sanitize_stats;

/* The seed's three path regexes, in order (Windows, ~/, POSIX under a
 * whitelisted root), each match replaced by "[path omitted]"; then every
 * "<" that opens something tag-like (optional blanks and "/", then a
 * letter, "!" or "?") becomes "&lt;", so `</memory>`, `<system-reminder>`
 * or `< /system-reminder >` arrive as plain text. A new string (caller
 * frees); st may be NULL. Invalid UTF-8 is replaced first. */
char *memory_sanitize(const char *text, size_t len, memory_sanitize_stats *st);

#endif

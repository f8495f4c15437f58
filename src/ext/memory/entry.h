/* entry.h — one memory entry on disk, and the MEMORY.md index.
 *
 * An entry is a Markdown file `<root>/.loom/memory/<slug>.md` whose YAML
 * frontmatter holds name, description, type (user | feedback | project |
 * reference), created and updated (YYYY-MM-DD) and source_session; the
 * body is the fact (seed 001 §11.3: one fact per entry, dated, with its
 * source session). E1's files (`.loom/mf/patterns/<name>.md`,
 * `.loom/mf/failures/<name>.md`, written by ext/evolve) share the shape with
 * kind (pattern | failure), signature, seen, first_seen and last_seen;
 * recall reads both. MEMORY.md is the index: one line per entry, at most
 * MEMORY_INDEX_LINE_MAX bytes, `- [name](slug.md) — description`.
 *
 * Files are untrusted: parse failures are reasons, never crashes. No
 * state; any thread (callers serialize writes to one directory). */
#ifndef LOOM_EXT_MEMORY_ENTRY_H
#define LOOM_EXT_MEMORY_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/str.h"

#define MEMORY_INDEX_LINE_MAX 150     /* seed 001 §11.1: each index line ≤150 chars */
#define MEMORY_ENTRY_FILE_MAX 65536   /* an entry file longer than this is not read */
#define MEMORY_ENTRIES_MAX 500        /* files looked at per directory */
#define MEMORY_SLUG_MAX 60

typedef enum memory_entry_kind {
    MEMORY_ENTRY_MEMORY,   /* .loom/memory/<slug>.md */
    MEMORY_ENTRY_PATTERN,  /* .loom/mf/patterns/ (E1) */
    MEMORY_ENTRY_FAILURE,  /* .loom/mf/failures/ (E1) */
} memory_entry_kind;

typedef struct memory_entry {
    char *path;            /* the file, as found */
    char *slug;            /* its name without ".md" */
    memory_entry_kind kind;
    char *name;
    char *description;
    char *type;            /* memories: user|feedback|project|reference; E1: the kind */
    char *created;         /* YYYY-MM-DD or NULL; E1: first_seen */
    char *updated;         /* E1: last_seen */
    char *source_session;  /* E1: sessions, as written */
    char *body;            /* after the frontmatter, trimmed */
    int64_t mtime_ms;
} memory_entry;

const char *memory_entry_kind_name(memory_entry_kind k);  /* "memory", "pattern", "failure" */
bool memory_type_valid(const char *type);

/* Parses an entry's text (len bytes, NUL-terminated). 0 and e filled
 * (owned; free with memory_entry_clear), or -1 with why saying what is
 * wrong (no frontmatter, no name or description, a bad type). path, slug,
 * kind and mtime are the caller's to set. */
int memory_entry_parse(const char *text, size_t len, memory_entry *e, loom_str *why);
void memory_entry_clear(memory_entry *e);

/* Reads path when it is a regular file (not a symlink: a hostile
 * repository's MEMORY.md pointing at ~/.ssh/id_rsa must never be read and
 * rewritten into the index) of at most max bytes. 0 with *text (caller
 * frees), 1 when there is no file, -1 when it is something else. */
int memory_read_regular(const char *path, size_t max, char **text, size_t *len);

/* p and root (both resolved paths) name the same folder, or p lies
 * beneath root. */
bool memory_path_within(const char *p, const char *root);

/* The entries of dir (regular files "*.md" but MEMORY.md, no hidden ones,
 * no symlinks) appended to *v / *n; files that do not parse are skipped
 * (their reasons appended to skipped when not NULL). */
void memory_entries_load(const char *dir, memory_entry_kind kind, memory_entry **v, size_t *n,
                         loom_str *skipped);
void memory_entries_free(memory_entry *v, size_t n);

/* The file text of an entry (frontmatter with JSON-quoted values, body). */
char *memory_entry_render(const memory_entry *e);

/* A slug from a name: lower-case letters and digits, '-' between words,
 * at most MEMORY_SLUG_MAX bytes; "memory" when nothing is left. */
void memory_slugify(const char *name, char out[MEMORY_SLUG_MAX + 1]);
/* s is a slug as memory_slugify makes them (a name, never a path). */
bool memory_slug_valid(const char *s);

/* The index line of an entry (≤ MEMORY_INDEX_LINE_MAX bytes, no newline,
 * never splitting a UTF-8 character). Caller frees. */
char *memory_index_line(const memory_entry *e);
/* Rewrites dir/MEMORY.md: the lines pointing at remove (a slug; may be
 * NULL) and at add's slug go, add's line (may be NULL) is appended; every
 * other line stays as written. Atomic. 0 or -1 with err (a MEMORY.md that
 * is a symlink or not a regular file is refused, never followed). */
int memory_index_update(const char *dir, const char *remove, const memory_entry *add,
                        loom_error *err);

#endif

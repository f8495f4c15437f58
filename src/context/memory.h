/* memory.h — the user's standing instructions and memory, rendered for the
 * dynamic part of the system prompt.
 *
 * Owns the discovery rules (which AGENTS.md / CLAUDE.md files apply to a
 * working directory, `@path` imports, the memory directories with their
 * MEMORY.md index) and the size caps that keep them from crowding out the
 * conversation. It only reads files; it never writes memory. */
#ifndef LOOM_CONTEXT_MEMORY_H
#define LOOM_CONTEXT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/secrets.h"

/* Caps, in bytes (truncation never splits a UTF-8 sequence). */
#define MEMORY_FILE_CAP 40000    /* one instructions file, before imports */
#define MEMORY_TOTAL_CAP 100000  /* the whole rendered block */
#define MEMORY_INDEX_CAP 10000   /* seed 001 §11.4: MEMORY.md resident cap 1e4 */
#define MEMORY_IMPORT_DEPTH 5    /* nested @imports deeper than this are refused */

/* Why a file was loaded; the InstructionsLoaded hook reports it. */
typedef enum memory_kind {
    MEMORY_USER,     /* ~/.claude/CLAUDE.md, loom_home()/AGENTS.md */
    MEMORY_PROJECT,  /* CLAUDE.md, .claude/CLAUDE.md, AGENTS.md from the repository root to cwd */
    MEMORY_IMPORT,   /* pulled in by an `@path` line */
    MEMORY_INDEX,    /* a memory directory's MEMORY.md */
} memory_kind;

typedef struct memory_file {
    char *path;  /* as resolved (realpath when it could be resolved); skipped: as found */
    memory_kind kind;
    char *why;   /* skipped only: why it is not in the block; NULL for a loaded file */
} memory_file;

/* What memory_render loaded, in the order it appears in the block, and the
 * instructions files it found and left out (a secret path, outside an
 * untrusted repository, Claude Code's with compat off, a second name of a
 * file already loaded). */
typedef struct memory_report {
    memory_file *files;
    size_t count;
    memory_file *skipped;
    size_t nskipped;
    bool truncated;  /* some file or the whole block hit its cap */
} memory_report;

/* Renders the memory block for a working directory; "" when there is
 * nothing. Caller frees the result. When rep is not NULL it is filled (it
 * need not be initialised) and the caller releases it with
 * memory_report_free. Never fails: unreadable files are skipped, broken
 * imports become a note in the text. Order, outermost first, Claude Code's
 * file before Loom's at each level (docs/memory.md):
 *   settings_claude_home()/CLAUDE.md (~/.claude/CLAUDE.md), then
 *   loom_home()/AGENTS.md ($LOOM_HOME, else ~/.loom: base/settings.h);
 *   for each directory from the repository root (nearest ancestor of cwd
 *   with a .git; cwd alone when there is none) down to cwd: CLAUDE.md,
 *   .claude/CLAUDE.md, AGENTS.md — every one that exists; a file reached
 *   twice (a CLAUDE.md symlinked to AGENTS.md) is loaded once;
 *   $LOOM_HOME/memory/ and <root>/.loom/memory/: MEMORY.md in full (capped),
 *   the other files by path only, for the model to Read when needed.
 * trusted: the folder's settings are trusted (policy/trust.h). When not,
 * the project's files may not reach outside the repository: an @import
 * (or an AGENTS.md, or a .loom/memory, that is a symlink) resolving
 * elsewhere becomes a note. Secret paths (policy/secrets.h, with deny: the
 * session's sandbox denyRead list, may be NULL) and /proc, /sys, /dev are
 * never loaded, trusted or not. claude: Claude Code's files (the CLAUDE.md
 * ones) count; false (compat off): only the AGENTS.md files load. */
char *memory_render(const char *cwd, bool trusted, bool claude, const secrets_deny *deny,
                    memory_report *rep);

const char *memory_kind_name(memory_kind kind);  /* "user", "project", … */
void memory_report_free(memory_report *rep);

#endif

/* listing.h — what a session file is about, for the pickers and lists
 * that name sessions to a person: a title, the first prompt, a message
 * count and the times, read from the file without loading it as a
 * transcript. Also the title a new session gets (docs/session-format.md,
 * "Titles").
 *
 * Session files are outside input: a bad line is skipped, a huge file is
 * read only up to LISTING_SCAN_LINES lines and LISTING_READ_MAX bytes (its
 * message count is then of that part), nothing here fails on content.
 * No state; any thread. Returned values are the caller's. */
#ifndef LOOM_SESSION_LISTING_H
#define LOOM_SESSION_LISTING_H

#include <jansson.h>
#include <stddef.h>

/* Titles are cut to this many characters (UTF-8 code points). */
#define SESSION_TITLE_MAX 60
/* Lines, and bytes, of one file read to describe it. */
#define LISTING_SCAN_LINES 20000
#define LISTING_READ_MAX (16 * 1024 * 1024)

/* The title a prompt gives a session: its first non-blank line, blanks
 * collapsed, control characters dropped, cut at a word boundary to at most
 * SESSION_TITLE_MAX characters with "…" when cut. NULL when the prompt
 * has no visible text. */
char *session_title_from_prompt(const char *prompt);

/* One file described from its bytes (path names it in nothing; used as
 * given in "path"): {id, title, created, modified, first_prompt, messages,
 * path}. id is the file name without ".jsonl"; title the last custom-title,
 * else the title record, else the first prompt's title; created the
 * session-meta's createdAt (else the first timestamp); modified is left to
 * the caller (it knows the file's mtime) and set to created here; messages
 * counts the user prompts and assistant messages with text. Fields with no
 * value are absent. */
json_t *session_describe_text(const char *id, const char *path, const char *text, size_t len);

/* The same for a file on disk, modified from its mtime. NULL when it cannot
 * be read. */
json_t *session_describe(const char *path);

/* Every session of cwd's project, newest (modified) first, as an array of
 * session_describe objects. Sessions without a prompt yet are left out,
 * except the one whose id is keep (may be NULL). */
json_t *session_list(const char *cwd, const char *keep);

#endif

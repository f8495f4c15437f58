/* session_picker.h — choosing a session to resume: the numbered list
 * (title, age, message count, first prompt) that `loom --resume` without an
 * id and `/resume` without an argument show, the key loop that picks one
 * (Up/Down or a number, Enter; Esc cancels), `/resume N`'s lookup, and the
 * recent turns shown once a session is resumed (docs/repl.md).
 *
 * The lists are loom_sessions_json's and loom_session_conversation_json's
 * text; everything from a session file is written terminal-safe through
 * term_out. Main thread only, between runs: the key loop owns the
 * terminal's mode while it runs and puts it back. */
#ifndef LOOM_CLI_SESSION_PICKER_H
#define LOOM_CLI_SESSION_PICKER_H

#include <stdbool.h>
#include <stdio.h>

#include "surfaces/cli/term_out.h"

/* Sessions listed by the picker (the newest); /resume N reaches all. */
#define PICKER_ROWS 20
/* Exchanges (a prompt and what answered it) shown after a resume. */
#define PICKER_RECENT_EXCHANGES 3

/* Prints the numbered list of sessions (current_id, may be NULL, marked
 * "(current)"). Returns how many were listed; "  (none)" when 0. */
int picker_print(term_out *out, const char *sessions_json, const char *current_id);

/* The list as plain lines on f ("  N. ID  title · age · M messages"), for
 * a place with no terminal (stderr of `loom -p --resume`). */
void picker_print_plain(FILE *f, const char *sessions_json);

/* Lists the sessions and lets the person choose on the terminal. Returns
 * the chosen id (caller frees), or NULL when cancelled, when there is
 * nothing to choose, or when stdin or stdout is not a terminal (the list
 * is printed then, so the caller can ask for an id). *cancelled (may be
 * NULL) tells a cancel from the rest. */
char *picker_choose(term_out *out, const char *sessions_json, const char *current_id,
                    bool *cancelled);

/* "3" → the id of the list's third session (caller frees); NULL when arg
 * is not a number from 1 to the list's length (an id prefix of digits
 * starting with 0, "019a…", is never taken for a number). */
char *picker_nth(const char *sessions_json, const char *arg);

/* The last PICKER_RECENT_EXCHANGES exchanges of the conversation: each
 * prompt and the assistant's texts after it, shortened. */
void picker_show_recent(term_out *out, const char *conversation_json);

/* "2 h ago" for an ISO 8601 UTC time; "" when it does not parse. */
void picker_age(const char *iso, char *buf, size_t size);

#endif

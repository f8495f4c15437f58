/* input_stream.h — `loom -p --input-format stream-json`: the user messages
 * Claude Code's stream-json input carries, one JSON object per stdin line:
 *   {"type":"user","message":{"role":"user","content":"…" | [blocks]}, …}
 * Text blocks are the prompt (joined by a blank line); nothing else a line
 * may hold becomes one. Pure: no I/O, no state. */
#ifndef LOOM_CLI_INPUT_STREAM_H
#define LOOM_CLI_INPUT_STREAM_H

#include <stddef.h>

/* The most one line may hold (a message with a whole file pasted in). */
#define INPUT_STREAM_LINE_MAX (10u * 1024u * 1024u)

/* One line of stdin (not NUL-terminated, without its newline). 1: a user
 * message, its text in *prompt (caller frees); 0: a blank line, nothing to
 * do; -1: the line is no user message Loom can run — why says what is
 * wrong with it (a sentence without the line's number), and *prompt is
 * NULL. A message that also held blocks Loom drops (images, tool results)
 * returns 1 with why naming them, else why is "". */
int input_stream_line(const char *line, size_t n, char **prompt, char *why, size_t why_len);

#endif

/* highlight.h — a small table-driven syntax highlighter for the code
 * blocks the model writes: keywords, strings, comments and numbers of c,
 * sh, py, js/ts, json, go and rust (and their usual aliases). One line at
 * a time, with a state that carries a block comment or an open string to
 * the next line. Pure functions over the caller's text; any thread. */
#ifndef LOOM_CLI_HIGHLIGHT_H
#define LOOM_CLI_HIGHLIGHT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { HL_PLAIN, HL_KEYWORD, HL_STRING, HL_COMMENT, HL_NUMBER } hl_class;

typedef struct hl_lang hl_lang;

typedef struct hl_state {
    bool in_comment;   /* inside a block comment */
    char in_string;    /* inside a string that goes on (its quote), or 0 */
    bool triple;       /* that string is a Python triple-quoted one */
} hl_state;

/* The language a fence's info word names ("c", "py", "typescript", …), or
 * NULL when it is not one of the table's. */
const hl_lang *highlight_lang(const char *name, size_t n);

/* Splits s[0..n) into pieces, in order and covering it all, each handed to
 * emit with its class. */
void highlight_line(const hl_lang *lang, hl_state *st, const char *s, size_t n,
                    void (*emit)(void *ctx, hl_class cls, const char *s, size_t n), void *ctx);

/* The SGR code (without ESC [ and m) a class is drawn with; "" for plain. */
const char *highlight_sgr(hl_class cls);

#endif

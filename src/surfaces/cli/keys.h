/* keys.h — the REPL's key logic that needs no terminal, so it is tested
 * alone (repl.c and run_view.c drive it; docs/repl.md lists the keys):
 *   - splitting bytes read from the terminal into keys, so a lone Esc is
 *     told from the start of an escape sequence (an arrow key, Shift-Tab);
 *   - the permission-mode cycle of Shift-Tab;
 *   - the empty-prompt Ctrl-C pair that quits.
 * No state of its own (the Ctrl-C pair's lives in the caller's struct);
 * any thread. */
#ifndef LOOM_CLI_KEYS_H
#define LOOM_CLI_KEYS_H

#include <stdbool.h>
#include <stddef.h>

/* How long a lone Esc waits for a following byte before it counts as Esc. */
#define KEYS_ESC_WAIT_MS 50
/* Two Ctrl-C on an empty prompt this close together quit. */
#define KEYS_QUIT_PAIR_MS 1000

typedef enum {
    KEY_TEXT,       /* one byte that is no escape: typed text or a control key */
    KEY_ESC,        /* Esc alone */
    KEY_SHIFT_TAB,  /* ESC [ Z */
    KEY_SEQUENCE,   /* any other escape sequence (arrows, Alt-x, F-keys) */
    KEY_INCOMPLETE, /* the start of a sequence: wait for more, then decide */
} key_kind;

/* The first key in b[0..n) (n >= 1): its kind, and how many bytes it takes
 * (0 for KEY_INCOMPLETE). `final`: no more bytes will come in time (the
 * KEYS_ESC_WAIT_MS wait passed), so an unfinished sequence is decided —
 * a lone ESC is KEY_ESC, a cut-off sequence is KEY_SEQUENCE taking all n. */
key_kind keys_next(const unsigned char *b, size_t n, bool final, size_t *len);

/* Shift-Tab's next mode: default → acceptEdits → plan → default; any other
 * mode (bypassPermissions, auto, …) goes back to default. */
const char *keys_next_mode(const char *mode);

/* The empty-prompt Ctrl-C pair. `*armed_ms` is the time of the first press
 * (0: none). A press on a non-empty line clears the line and disarms.
 * Returns true when this press quits. */
bool keys_ctrl_c(long long *armed_ms, long long now_ms, bool line_empty);

#endif

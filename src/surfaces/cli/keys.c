/* keys.c — key decoding, the Shift-Tab mode cycle and the Ctrl-C pair
 * (keys.h). Pure functions; any thread. */
#include "surfaces/cli/keys.h"

#include <string.h>

#define ESC 0x1b

/* A CSI sequence: ESC [ parameters (0x30–0x3f), intermediates (0x20–0x2f),
 * one final byte (0x40–0x7e). Returns 1 with *len its length, 0 when b
 * ends first, -1 when a byte fits none of those: a malformed sequence,
 * *len the bytes before the stray one. */
static int csi_length(const unsigned char *b, size_t n, size_t *len)
{
    for (size_t i = 2; i < n; i++) {
        unsigned char c = b[i];
        if (c >= 0x40 && c <= 0x7e) {
            *len = i + 1;
            return 1;
        }
        if (c < 0x20 || c > 0x3f) {
            *len = i;
            return -1;
        }
    }
    return 0;
}

key_kind keys_next(const unsigned char *b, size_t n, bool final, size_t *len)
{
    *len = 0;
    if (!n)
        return KEY_INCOMPLETE;
    if (b[0] != ESC) {
        *len = 1;
        return KEY_TEXT;
    }
    if (n == 1) {
        if (!final)
            return KEY_INCOMPLETE;
        *len = 1;
        return KEY_ESC;
    }
    if (b[1] == ESC) { /* Esc pressed twice: the first is a key of its own */
        *len = 1;
        return KEY_ESC;
    }
    if (b[1] == '[') {
        int rc = csi_length(b, n, len);
        if (rc == 0) {
            if (!final)
                return KEY_INCOMPLETE;
            *len = n;
            return KEY_SEQUENCE;
        }
        return rc > 0 && *len == 3 && b[2] == 'Z' ? KEY_SHIFT_TAB : KEY_SEQUENCE;
    }
    if (b[1] == 'O') { /* SS3: ESC O x (F1–F4, arrows in application mode) */
        if (n < 3 && !final)
            return KEY_INCOMPLETE;
        *len = n < 3 ? n : 3;
        return KEY_SEQUENCE;
    }
    *len = 2; /* Alt plus a key */
    return KEY_SEQUENCE;
}

const char *keys_next_mode(const char *mode)
{
    if (mode && !strcmp(mode, "default"))
        return "acceptEdits";
    if (mode && !strcmp(mode, "acceptEdits"))
        return "plan";
    return "default";
}

bool keys_ctrl_c(long long *armed_ms, long long now_ms, bool line_empty)
{
    if (!line_empty) {
        *armed_ms = 0;
        return false;
    }
    if (*armed_ms && now_ms - *armed_ms <= KEYS_QUIT_PAIR_MS)
        return true;
    *armed_ms = now_ms ? now_ms : 1;
    return false;
}

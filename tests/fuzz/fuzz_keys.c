/* fuzz_keys.c — arbitrary terminal bytes through the REPL's key decoder
 * (surfaces/cli/keys.c), split into keys as repl_esc_pressed does, both
 * with more bytes possibly coming and with none; and arbitrary command
 * output through the statusLine's cleaning (surfaces/cli/statusline.c),
 * which must come out one line with no escape but colours. Must never
 * crash, loop or read past the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/cli/keys.h"
#include "surfaces/cli/statusline.h"

static void split(const uint8_t *data, size_t size, bool final)
{
    size_t at = 0;
    while (at < size) {
        size_t len = 0;
        key_kind k = keys_next(data + at, size - at, final, &len);
        if (k == KEY_INCOMPLETE) {
            if (final)
                abort(); /* with no more bytes coming, every key is decided */
            return;
        }
        if (len == 0 || len > size - at)
            abort();
        at += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    split(data, size, false);
    split(data, size, true);
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    for (int color = 0; color < 2; color++) {
        char *line = statusline_clean(text, 40, color, 2);
        if (strchr(line, '\n') || strchr(line, '\r') || (!color && strchr(line, '\x1b')))
            abort();
        free(line);
    }
    free(text);
    return 0;
}

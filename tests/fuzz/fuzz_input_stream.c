/* fuzz_input_stream.c — libFuzzer target for one line of `loom -p
 * --input-format stream-json` (surfaces/cli/input_stream.c): whatever a
 * driving program writes on stdin, the parser may not crash or leak. It
 * must answer 1 with a prompt that is non-empty, not blank and NUL-free;
 * 0 only for a blank line; or -1 with no prompt and a reason. Any
 * disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/cli/input_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The line as getline hands it over: bytes, NUL-terminated after them. */
    char *line = malloc(size + 1);
    memcpy(line, data, size);
    line[size] = '\0';
    size_t blanks = 0;
    while (blanks < size && strchr(" \t\r\n", line[blanks]) && line[blanks])
        blanks++;
    char *prompt = (char *)0x1;
    char why[200];
    int rc = input_stream_line(line, size, &prompt, why, sizeof why);
    if (rc == 1) {
        if (!prompt || !*prompt || strspn(prompt, " \t\r\n") == strlen(prompt))
            abort();
    } else if (rc == 0) {
        if (prompt || blanks < size)
            abort();
    } else if (rc == -1) {
        if (prompt || !why[0])
            abort();
    } else {
        abort();
    }
    free(prompt);
    free(line);
    return 0;
}

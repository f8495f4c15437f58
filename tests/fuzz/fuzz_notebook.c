/* fuzz_notebook.c — libFuzzer target for the notebook model Read and
 * NotebookEdit share (tools/builtin/notebook.c): a .ipynb comes from the
 * repository, so any bytes in — no crash, no leak. A parse gives a
 * notebook or a message naming the file; its rendering stays within the
 * bound it was given (plus the one line that says cells were left out);
 * every edit leaves a notebook that, dumped, parses again with the cell
 * count the edit implies. Any disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/builtin/notebook.h"

#define RENDER_MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loom_str why = LOOM_STR_INIT;
    json_t *nb = notebook_parse("/f/n.ipynb", (const char *)data, size, &why);
    if (!nb) {
        if (strncmp(str_cstr(&why), "/f/n.ipynb ", 11) != 0)
            abort();
        str_free(&why);
        return 0;
    }
    loom_str out = LOOM_STR_INIT;
    notebook_render(nb, "/f/n.ipynb", RENDER_MAX, &out);
    if (out.len > RENDER_MAX + 200 && !strstr(out.ptr, "more cells not shown"))
        abort();
    str_free(&out);

    static const char *const modes[] = {"replace", "insert", "delete", NULL, "bogus"};
    static const char *const types[] = {"code", "markdown", NULL, "raw"};
    size_t cells = json_array_size(json_object_get(nb, "cells"));
    for (size_t k = 0; k < 4; k++) {
        const char *mode = modes[(size + k) % 5];
        const char *type = types[(size / 5 + k) % 4];
        char *id = cells ? notebook_cell_id(nb, (size + k) % cells) : NULL;
        char *touched = NULL;
        loom_str w = LOOM_STR_INIT;
        int rc = notebook_edit(nb, mode, k == 3 ? NULL : id, type, "x = 1\ny\n", &touched, &w);
        if (rc == 0) {
            if (!touched)
                abort();
            if (mode && !strcmp(mode, "insert"))
                cells++;
            else if (mode && !strcmp(mode, "delete"))
                cells--;
        } else if (touched || w.len == 0) {
            abort();
        }
        free(touched);
        free(id);
        str_free(&w);
        size_t len = 0;
        char *text = notebook_dump(nb, &len);
        loom_str why2 = LOOM_STR_INIT;
        json_t *again = notebook_parse("/f/n.ipynb", text, len, &why2);
        if (!again || json_array_size(json_object_get(again, "cells")) != cells)
            abort();
        json_decref(again);
        str_free(&why2);
        free(text);
    }
    json_decref(nb);
    str_free(&why);
    return 0;
}

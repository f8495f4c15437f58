/* notebook.h — Jupyter notebooks (.ipynb, nbformat 4) for Read and
 * NotebookEdit: parsed as JSON, shown as cells with their outputs, changed
 * cell by cell so the rest of the file (metadata, outputs of other cells,
 * key order) stays as it was (docs/tools-files.md). */
#ifndef LOOM_TOOLS_BUILTIN_NOTEBOOK_H
#define LOOM_TOOLS_BUILTIN_NOTEBOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "base/json.h"
#include "base/str.h"

#define NOTEBOOK_MAX_BYTES ((size_t)16 << 20) /* bigger files are refused */

/* Whether path names a notebook (ends in .ipynb, any case). */
bool notebook_path(const char *path);

/* The notebook in text, or NULL with why set to what is wrong and where
 * (not JSON, no cells array, a cell that is not an object, an nbformat
 * before 4). path names the file in the message. */
json_t *notebook_parse(const char *path, const char *text, size_t len, loom_str *why);

/* The cells as the model reads them: one <cell> element per cell with its
 * id, type and source, then its outputs as text (streams, results, errors;
 * other media named with their size). At most max bytes, cut at a cell
 * boundary with a line saying how many cells were left out. */
void notebook_render(const json_t *nb, const char *path, size_t max, loom_str *out);

/* The id the model uses for cell i: its own "id" (nbformat 4.5), or
 * "cell-<i>" for a cell without one. Caller frees. */
char *notebook_cell_id(const json_t *nb, size_t i);

/* One NotebookEdit on nb: mode "replace" (the default when NULL), "insert"
 * (after cell_id, or first when cell_id is NULL) or "delete". cell_type
 * "code" or "markdown" (required for insert; on replace it may change the
 * cell's type). A replaced or inserted code cell has no outputs and no
 * execution count. 0 with *touched set to the id of the cell changed, or 1
 * with why set to a message the model can act on. */
int notebook_edit(json_t *nb, const char *mode, const char *cell_id, const char *cell_type,
                  const char *source, char **touched, loom_str *why);

/* The notebook as Jupyter writes it: one-space indent, UTF-8, a final
 * newline. Caller frees. */
char *notebook_dump(const json_t *nb, size_t *len);

#endif

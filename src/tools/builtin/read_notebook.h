/* read_notebook.h — the notebook branch of the Read tool (read.c): a
 * .ipynb file shown as its cells and their outputs (notebook.h,
 * docs/tools-files.md). */
#ifndef LOOM_TOOLS_BUILTIN_READ_NOTEBOOK_H
#define LOOM_TOOLS_BUILTIN_READ_NOTEBOOK_H

#include <stddef.h>
#include <sys/stat.h>

#include "tools/tool.h"

/* Reads the notebook open on fd (head: its first hn bytes, already read)
 * into out, at most max bytes of text, and notes it in the read cache so
 * NotebookEdit may change it; or an error result saying what is wrong with
 * the file (a broken notebook can still be read as text with offset and
 * limit). Always 0. */
int read_notebook(tool_result *out, tool_ctx *ctx, const char *path, int fd,
                  const struct stat *st, const unsigned char *head, size_t hn, size_t max);

#endif

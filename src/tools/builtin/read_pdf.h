/* read_pdf.h — the PDF branch of the Read tool (read.c): a PDF's text by
 * page, through poppler-utils (docs/tools-files.md). */
#ifndef LOOM_TOOLS_BUILTIN_READ_PDF_H
#define LOOM_TOOLS_BUILTIN_READ_PDF_H

#include "tools/tool.h"

/* Reads the PDF at path into out: the pages of `pages` ("3", "1-5"; NULL =
 * the whole file, when it has at most 10 pages), each under a "--- page N
 * ---" line, or an error result saying why not (a bad range, too many
 * pages, poppler-utils missing, a damaged or encrypted file, a timeout).
 * Always 0: every failure is a result the model reads. */
int read_pdf(tool_result *out, tool_ctx *ctx, const char *path, const char *pages);

/* Parses "N" or "A-B" (1 <= A <= B); 0 and the range, or -1. */
int read_pdf_pages_parse(const char *spec, long *first, long *last);

#endif

/* read_pdf.c — Read of a PDF: its text, page by page, as Claude Code's Read
 * gives it (a `pages` range, at most READ_PDF_MAX_PAGES per call, and a
 * range required past READ_PDF_WHOLE_MAX pages).
 *
 * The text comes from poppler's pdfinfo (the page count) and pdftotext (the
 * pages), Debian's poppler-utils, run as child processes like ripgrep for
 * Grep: a PDF is hostile input, and a parser that crashes or loops on one
 * takes down a child under a timeout, not Loom. What they print is made
 * valid UTF-8 and capped at what Read hands the model anyway.
 */
#include "tools/builtin/read_pdf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/proc.h"
#include "base/str.h"
#include "base/utf8.h"

#define READ_PDF_MAX_PAGES 20  /* per call, as Claude Code */
#define READ_PDF_WHOLE_MAX 10  /* more pages than this need a range, as Claude Code */
#define READ_PDF_TIMEOUT_MS 30000
#define READ_PDF_MAX_OUTPUT (256 * 1024) /* bytes of text, as a text Read */

int read_pdf_pages_parse(const char *spec, long *first, long *last)
{
    const char *p = spec;
    char *end;
    errno = 0;
    if (!p || *p < '0' || *p > '9')
        return -1;
    long a = strtol(p, &end, 10);
    long b = a;
    if (errno || a < 1)
        return -1;
    if (*end == '-') {
        p = end + 1;
        if (*p < '0' || *p > '9')
            return -1;
        b = strtol(p, &end, 10);
        if (errno || b < a)
            return -1;
    }
    if (*end)
        return -1;
    *first = a;
    *last = b;
    return 0;
}

/* The first line of a child's stderr, for an error message; "" if none. */
static void first_line(loom_str *to, const char *err, size_t len)
{
    if (!err)
        return;
    const char *nl = memchr(err, '\n', len);
    size_t n = nl ? (size_t)(nl - err) : len;
    if (n > 300)
        n = 300;
    char *clean = utf8_sanitize(err, n, NULL);
    str_puts(to, clean ? clean : "");
    free(clean);
}

/* Runs a poppler tool; 0 when it ran and exited 0, else an error in out. */
static int run_poppler(tool_result *out, const tool_ctx *ctx, const char *path,
                       const char *const *argv, size_t cap, proc_result *r)
{
    proc_spec spec = {.argv = argv, .timeout_ms = READ_PDF_TIMEOUT_MS, .capture_cap = cap,
                      .cancel = ctx->cancel};
    loom_error err;
    loom_error_clear(&err);
    memset(r, 0, sizeof *r);
    if (proc_run(&spec, r, &err) < 0 || r->exit_code == 127) {
        tool_error(out, "%s is a PDF, and reading PDFs needs %s from poppler-utils, which "
                        "could not be run (%s). Install poppler-utils, or extract the text "
                        "another way with Bash.",
                   path, argv[0], err.message[0] ? err.message : "not found");
        return -1;
    }
    if (r->cancelled) {
        tool_error(out, "Reading %s was interrupted.", path);
        return -1;
    }
    if (r->timed_out) {
        tool_error(out, "%s: %s took longer than %d s on this PDF and was stopped.", path,
                   argv[0], READ_PDF_TIMEOUT_MS / 1000);
        return -1;
    }
    if (r->exit_code != 0) {
        loom_str why = LOOM_STR_INIT;
        first_line(&why, r->err, r->err_len);
        tool_error(out, "%s could not be read as a PDF: %s%s", path,
                   why.len ? why.ptr : "", why.len ? "" : "(no reason given)");
        str_free(&why);
        return -1;
    }
    return 0;
}

/* The page count from pdfinfo's "Pages:" line; -1 when it has none. */
static long page_count(const char *info)
{
    for (const char *p = info; p && *p;) {
        if (!strncmp(p, "Pages:", 6))
            return strtol(p + 6, NULL, 10);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

int read_pdf(tool_result *out, tool_ctx *ctx, const char *path, const char *pages)
{
    long first = 1, last = 0;
    if (pages && read_pdf_pages_parse(pages, &first, &last) != 0)
        return tool_error(out, "pages must be a page number or a range of them, like \"3\" "
                               "or \"1-5\" (pages count from 1); got \"%s\".", pages);
    if (pages && last - first + 1 > READ_PDF_MAX_PAGES)
        return tool_error(out, "pages \"%s\" is %ld pages; Read takes at most %d pages of a "
                               "PDF at a time.", pages, last - first + 1, READ_PDF_MAX_PAGES);

    proc_result r;
    const char *info_argv[] = {"pdfinfo", "--", path, NULL};
    if (run_poppler(out, ctx, path, info_argv, 64 * 1024, &r) != 0) {
        proc_result_free(&r);
        return 0;
    }
    long total = page_count(r.out);
    proc_result_free(&r);
    if (total < 1)
        return tool_error(out, "%s could not be read as a PDF: pdfinfo found no pages.", path);
    if (!pages) {
        if (total > READ_PDF_WHOLE_MAX)
            return tool_error(out, "%s has %ld pages, too many to read at once: give pages, "
                                   "e.g. \"1-%d\" (at most %d pages a call).",
                              path, total, READ_PDF_MAX_PAGES < total ? READ_PDF_MAX_PAGES
                                                                      : (int)total,
                              READ_PDF_MAX_PAGES);
        last = total;
    }
    if (first > total)
        return tool_error(out, "%s has %ld page%s; pages \"%s\" starts past its end.", path,
                          total, total == 1 ? "" : "s", pages);
    if (last > total)
        last = total;

    char f[24], l[24];
    snprintf(f, sizeof f, "%ld", first);
    snprintf(l, sizeof l, "%ld", last);
    const char *text_argv[] = {"pdftotext", "-layout", "-enc", "UTF-8", "-f", f, "-l", l,
                               "--", path, "-", NULL};
    if (run_poppler(out, ctx, path, text_argv, READ_PDF_MAX_OUTPUT, &r) != 0) {
        proc_result_free(&r);
        return 0;
    }
    /* A NUL would end the text early wherever it is taken as a C string. */
    for (size_t i = 0; i < r.out_len; i++)
        if (r.out[i] == '\0')
            r.out[i] = ' ';
    size_t len = 0;
    char *text = utf8_sanitize(r.out ? r.out : "", r.out_len, &len);
    bool cut = r.out_dropped > 0;
    proc_result_free(&r);

    /* pdftotext ends every page with a form feed. */
    str_printf(&out->text, "PDF %s: page%s %ld%s%s of %ld\n", path, first == last ? "" : "s",
               first, first == last ? "" : "-", first == last ? "" : l, total);
    long page = first;
    bool any_text = false;
    for (size_t pos = 0; pos < len && page <= last; page++) {
        const char *ff = memchr(text + pos, '\f', len - pos);
        size_t end = ff ? (size_t)(ff - text) : len;
        str_printf(&out->text, "\n--- page %ld ---\n", page);
        size_t n = end - pos;
        while (n && (text[pos + n - 1] == '\n' || text[pos + n - 1] == ' '))
            n--;
        if (n) {
            any_text = true;
            str_append(&out->text, text + pos, n);
            str_putc(&out->text, '\n');
        } else {
            str_puts(&out->text, "(no text on this page: it may be scanned images)\n");
        }
        pos = ff ? end + 1 : len;
    }
    if (cut)
        str_printf(&out->text, "\n(The text was cut at %d KB: read fewer pages at a time.)\n",
                   READ_PDF_MAX_OUTPUT / 1024);
    else if (!any_text)
        str_puts(&out->text, "\n(None of these pages has text: the PDF may be scanned images, "
                             "which Read does not recognise.)\n");
    free(text);
    char range[64];
    snprintf(range, sizeof range, "%ld-%ld", first, last);
    out->raw = json_pack("{s:s, s:s, s:s, s:I, s:b}", "filePath", path, "type", "pdf", "pages",
                         range, "totalPages", (json_int_t)total, "truncated", cut);
    return 0;
}

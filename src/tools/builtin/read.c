/* read.c — the Read tool: a file's lines numbered like `cat -n`, or an image
 * as an image block; records what was read in the session's read cache so
 * Write and Edit can insist on a read first (file_state.h).
 *
 * A text file is streamed once, in chunks: the lines in the requested window
 * are kept, the rest only counted and hashed, so a window near the top of a
 * huge file costs one pass and almost no memory. The pass stops early (no
 * hash, no count of what follows) once the window is done and more than
 * READ_SCAN_CAP bytes were seen.
 *
 * With a driver's port (tools/tool_io.h) a text file is read through it:
 * the driver's text (an editor's unsaved buffer) is what the model sees and
 * what the read cache remembers. Directories, devices and files that are no
 * text (images, PDFs, binaries) are still read here.
 *
 * A PDF is read as its text, by page (read_pdf.c); a notebook (.ipynb) as
 * its cells and their outputs (read_notebook.c), unless offset or limit
 * ask for its JSON.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/notebook.h"
#include "tools/builtin/read_notebook.h"
#include "tools/builtin/read_pdf.h"
#include "tools/file_state.h"
#include "tools/tool_io.h"

#define READ_DEFAULT_LIMIT 2000           /* lines, as Claude Code */
#define READ_MAX_LINE_CHARS 2000          /* longer lines are cut, as Claude Code */
#define READ_MAX_OUTPUT (256 * 1024)      /* bytes of text handed to the model */
#define READ_SNIFF 8192                   /* bytes inspected for NULs and magic */
#define READ_SCAN_CAP (64 * 1024 * 1024)  /* bytes scanned past the window for count + hash */
/* Anthropic's API takes images up to 5 MB of base64; 3.75 MiB raw encodes
 * to just under that. Larger images are refused rather than sent to fail. */
#define READ_MAX_IMAGE (3 * 1024 * 1024 + 768 * 1024)
/* Bytes of one window line kept: enough for READ_MAX_LINE_CHARS characters
 * of up to 4 bytes each. */
#define READ_LINE_KEEP (READ_MAX_LINE_CHARS * 4 + 4)

static const char read_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"Path of the file to read: absolute, "
    "or relative to the working directory.\"},"
    "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"First line to show "
    "(1-based). Give it with limit for files too long to read at once.\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many lines to show "
    "(default 2000).\"},"
    "\"pages\":{\"type\":\"string\",\"description\":\"Page range for PDF files, e.g. \\\"1-5\\\", "
    "\\\"3\\\" or \\\"10-20\\\"; only for PDFs. At most 20 pages per call; required for PDFs of more "
    "than 10 pages.\"}},"
    "\"required\":[\"file_path\"],\"additionalProperties\":false}";

static const char read_description[] =
    "Reads a file from the local filesystem. Text comes back with line numbers (a right-aligned "
    "number, a tab, then the line exactly as in the file), up to 2000 lines from the start "
    "unless offset/limit choose another window; lines longer than 2000 characters are cut. "
    "PNG, JPEG, GIF and WebP images are returned as images you can see. PDFs come back as their "
    "text, page by page (pages chooses which). Directories cannot be "
    "read (use Bash `ls` or Glob), nor binary files. Read a file before changing it with Edit "
    "or Write; reading several files in one turn is fine and runs in parallel.";

/* ---- small helpers ------------------------------------------------------- */

/* Appends len bytes as valid UTF-8: each byte that does not start a
 * well-formed sequence becomes U+FFFD, because the result travels as a JSON
 * string and jansson (rightly) refuses invalid UTF-8. Returns the number of
 * characters appended, stopping after max_chars. *used gets the bytes taken. */
static size_t put_utf8(loom_str *out, const unsigned char *p, size_t len, size_t max_chars,
                       size_t *used)
{
    size_t i = 0, chars = 0;
    while (i < len && chars < max_chars) {
        unsigned char c = p[i];
        size_t n = 0;
        uint32_t cp = 0;
        if (c < 0x80) {
            n = 1;
        } else if (c >= 0xc2 && c <= 0xdf) {
            n = 2;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 3;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 4;
            cp = c & 0x07;
        }
        bool ok = n > 0 && i + n <= len;
        for (size_t k = 1; ok && k < n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                ok = false;
            else
                cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        /* Overlongs, surrogates and values past U+10FFFF are not UTF-8. */
        if (ok && ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
                   (n == 4 && (cp < 0x10000 || cp > 0x10ffff))))
            ok = false;
        if (ok) {
            str_append(out, p + i, n);
            i += n;
        } else {
            str_puts(out, "\xef\xbf\xbd");
            i++;
        }
        chars++;
    }
    if (used)
        *used = i;
    return chars;
}

/* The image type by magic bytes (not by name: a .png that is really a JPEG
 * must be labelled as what it is, or the API rejects it). */
static const char *image_type(const unsigned char *p, size_t n)
{
    if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0)
        return "image/png";
    if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
        return "image/jpeg";
    if (n >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0))
        return "image/gif";
    if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0)
        return "image/webp";
    return NULL;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static size_t stem_len(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && dot != name ? (size_t)(dot - name) : strlen(name);
}

/* A name in path's directory that the model probably meant: the same name
 * in another case, the same stem with another extension, or a name within
 * two edits. NULL when nothing is close. Caller frees. */
static char *similar_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || !slash[1])
        return NULL;
    char *dir = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
    const char *want = slash + 1;
    DIR *d = opendir(dir);
    char *best = NULL;
    size_t best_score = SIZE_MAX;
    if (d) {
        struct dirent *e;
        int budget = 10000;  /* a huge directory is not worth a slow error */
        while ((e = readdir(d)) && budget-- > 0) {
            const char *n = e->d_name;
            if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
                continue;
            size_t score;
            if (strcasecmp(n, want) == 0)
                score = 0;
            else if (stem_len(n) == stem_len(want) && strncasecmp(n, want, stem_len(n)) == 0)
                score = 1;
            else if ((score = edit_distance(n, want)) <= 2)
                score += 1;
            else
                continue;
            if (score < best_score) {
                best_score = score;
                free(best);
                loom_str s = LOOM_STR_INIT;
                str_printf(&s, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", n);
                best = str_steal(&s);
            }
        }
        closedir(d);
    }
    free(dir);
    return best;
}

static int missing_file(tool_result *out, const tool_ctx *ctx, const char *path)
{
    char *alt = similar_name(path);
    loom_str msg = LOOM_STR_INIT;
    str_printf(&msg, "File does not exist: %s.", path);
    if (alt)
        str_printf(&msg, " Did you mean %s?", alt);
    if (ctx->cwd)
        str_printf(&msg, " (Current working directory: %s)", ctx->cwd);
    tool_error(out, "%s", msg.ptr);
    str_free(&msg);
    free(alt);
    return 0;
}

/* Reads an optional non-negative integer argument; -1 when absent, -2 when
 * present but not a whole number >= 0. */
static long long int_arg(const json_t *input, const char *key)
{
    json_t *v = json_object_get(input, key);
    if (!v || json_is_null(v))
        return -1;
    if (json_is_integer(v))
        return json_integer_value(v) < 0 ? -2 : json_integer_value(v);
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d >= 0 && d <= 9e15 && d == (double)(long long)d)
            return (long long)d;
    }
    return -2;
}

/* ---- the text pass -------------------------------------------------------- */

typedef struct text_pass {
    long long start, end;    /* window: lines [start, end), 1-based */
    long long line;          /* the line being read, 1-based */
    loom_str cur;            /* the window line so far (first READ_LINE_KEEP bytes) */
    size_t cur_chars;        /* characters in the whole current line */
    size_t cur_bytes;        /* bytes in the whole current line */
    bool in_line;            /* bytes seen since the last newline */
    loom_str out;
    long long shown;         /* lines emitted */
    long long cut_at;        /* first line not emitted for the output cap; 0 = none */
    uint64_t hash;
    uint64_t bytes;
} text_pass;

static void emit_line(text_pass *tp)
{
    if (tp->cut_at)
        return;
    const unsigned char *p = (const unsigned char *)tp->cur.ptr;
    size_t n = tp->cur.len, chars = tp->cur_chars;
    /* The model sees CRLF files as LF: Edit puts the CRs back (edit.c). */
    if (n == tp->cur_bytes && n > 0 && p[n - 1] == '\r') {
        n--;
        chars--;
    }
    loom_str line = LOOM_STR_INIT;
    str_printf(&line, "%6lld\t", tp->line);
    size_t used = 0;
    put_utf8(&line, p ? p : (const unsigned char *)"", n, READ_MAX_LINE_CHARS, &used);
    if (chars > READ_MAX_LINE_CHARS)
        str_printf(&line, "… [line cut: %zu characters in all]", chars);
    str_putc(&line, '\n');
    if (tp->out.len + line.len > READ_MAX_OUTPUT && tp->shown > 0) {
        tp->cut_at = tp->line;
    } else {
        str_append(&tp->out, line.ptr, line.len);
        tp->shown++;
    }
    str_free(&line);
}

/* Feeds a chunk; the window lines are emitted as their newline arrives. */
static void feed(text_pass *tp, const unsigned char *p, size_t len)
{
    tp->hash = hash_fnv1a64(tp->hash, p, len);
    tp->bytes += len;
    size_t i = 0;
    while (i < len) {
        const unsigned char *nl = memchr(p + i, '\n', len - i);
        size_t seg = nl ? (size_t)(nl - (p + i)) : len - i;
        bool want = tp->line >= tp->start && tp->line < tp->end;
        if (want) {
            if (tp->cur.len < READ_LINE_KEEP) {
                size_t room = READ_LINE_KEEP - tp->cur.len;
                str_append(&tp->cur, p + i, seg < room ? seg : room);
            }
            for (size_t k = 0; k < seg; k++)
                tp->cur_chars += (p[i + k] & 0xc0) != 0x80;
            tp->cur_bytes += seg;
        }
        if (seg)
            tp->in_line = true;
        i += seg;
        if (!nl)
            break;
        if (want)
            emit_line(tp);
        str_clear(&tp->cur);
        tp->cur_chars = tp->cur_bytes = 0;
        tp->in_line = false;
        tp->line++;
        i++;
    }
}

/* ---- the tool ------------------------------------------------------------- */

static int read_image(tool_result *out, tool_ctx *ctx, const char *path, int fd,
                      const struct stat *st, const char *mime)
{
    if (st->st_size > READ_MAX_IMAGE)
        return tool_error(out,
                          "The image %s is %lld bytes, more than the %d bytes an image may "
                          "have here. Make a smaller copy first (e.g. with ImageMagick "
                          "`convert` through Bash) and read that.",
                          path, (long long)st->st_size, READ_MAX_IMAGE);
    loom_str data = LOOM_STR_INIT;
    str_reserve(&data, (size_t)st->st_size + 1);
    if (lseek(fd, 0, SEEK_SET) != 0)
        return tool_error(out, "Cannot read %s: %s", path, strerror(errno));
    int rc = file_read_fd(fd, READ_MAX_IMAGE, &data);
    if (rc != 0) {
        int e = errno;
        str_free(&data);
        if (rc < 0)
            return tool_error(out, "Cannot read %s: %s", path, strerror(e));
        return tool_error(out, "The image %s grew past %d bytes while being read.", path,
                          READ_MAX_IMAGE);
    }
    loom_str b64 = LOOM_STR_INIT;
    str_put_base64(&b64, data.ptr, data.len);
    out->image_media_type = xstrdup(mime);
    out->image_data = str_steal(&b64);
    str_printf(&out->text, "Image %s (%s, %zu bytes).", path, mime, data.len);
    out->raw = json_pack("{s:s, s:s, s:I}", "filePath", path, "type", "image", "bytes",
                         (json_int_t)data.len);
    file_state_note(ctx->files, path, st,
                    hash_fnv1a64(HASH_FNV1A64_SEED, data.ptr, data.len));
    str_free(&data);
    return 0;
}

/* Opens path for reading after checking it is a regular file; -1 with the
 * error in out otherwise. st is filled from the open descriptor. */
static int read_open(tool_result *out, const tool_ctx *ctx, const char *path, struct stat *st)
{
    if (stat(path, st) != 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            missing_file(out, ctx, path);
        else
            tool_error(out, "Cannot read %s: %s", path, strerror(e));
        return -1;
    }
    if (S_ISDIR(st->st_mode)) {
        tool_error(out, "%s is a directory, not a file. To see what it holds, use Bash "
                        "(`ls %s`) or the Glob tool.", path, path);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        tool_error(out, "%s is not a regular file (a device, pipe or socket); Read only "
                        "reads files.", path);
        return -1;
    }
    /* O_NONBLOCK: if the path was swapped for a FIFO since the stat, the open
     * must not hang; fstat below catches the swap. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 || fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        tool_error(out, "Cannot read %s: %s", path, strerror(e));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Reads the first READ_SNIFF bytes (fewer at the end of the file) into
 * head; -1 with the error in out on a read error. */
static int read_head(tool_result *out, const char *path, int fd, unsigned char *head,
                     size_t *hn)
{
    *hn = 0;
    while (*hn < READ_SNIFF) {
        ssize_t n = read(fd, head + *hn, READ_SNIFF - *hn);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            tool_error(out, "Cannot read %s: %s", path, strerror(errno));
            return -1;
        }
        if (n == 0)
            break;
        *hn += (size_t)n;
    }
    return 0;
}

/* What the first bytes tell: an image (read as one), a PDF (its text, by
 * page: read_pdf.c), a binary file or an empty one. pages belongs to PDFs
 * only. True when that settled the result. */
static bool read_by_kind(tool_result *out, tool_ctx *ctx, const char *path, int fd,
                         const struct stat *st, const unsigned char *head, size_t hn,
                         const char *pages)
{
    const char *mime = image_type(head, hn);
    if (mime) {
        read_image(out, ctx, path, fd, st, mime);
        return true;
    }
    if (hn >= 5 && memcmp(head, "%PDF-", 5) == 0) {
        read_pdf(out, ctx, path, pages);
        return true;
    }
    if (pages) {
        tool_error(out, "pages is only for PDF files, and %s is not one: use offset and limit "
                        "to choose lines.", path);
        return true;
    }
    if (memchr(head, '\0', hn)) {
        tool_error(out, "%s looks like a binary file (it contains NUL bytes), which Read "
                        "cannot show as text. Inspect it with Bash instead, e.g. `file %s` "
                        "or `xxd %s | head`.", path, path, path);
        return true;
    }
    if (hn == 0) {
        str_printf(&out->text, "(The file %s exists but is empty.)", path);
        out->raw = json_pack("{s:s, s:s, s:I}", "filePath", path, "type", "text",
                             "totalLines", (json_int_t)0);
        file_state_note(ctx->files, path, st, FILE_STATE_HASH_SEED);
        return true;
    }
    return false;
}

/* How the text pass over the rest of the file ended. */
typedef enum { SCAN_DONE, SCAN_PARTIAL, SCAN_CANCELLED, SCAN_FAILED } scan_end;

/* Feeds the rest of the file to tp: to its end (SCAN_DONE), or until the
 * window is shown and READ_SCAN_CAP bytes were looked at (SCAN_PARTIAL). */
static scan_end read_scan(text_pass *tp, tool_ctx *ctx, int fd, int *err)
{
    for (;;) {
        if (tp->line >= tp->end && tp->bytes > READ_SCAN_CAP)
            return SCAN_PARTIAL;
        if (cancel_requested(ctx->cancel))
            return SCAN_CANCELLED;
        unsigned char buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *err = errno;
            return SCAN_FAILED;
        }
        if (n == 0)
            return SCAN_DONE;
        feed(tp, buf, (size_t)n);
    }
}

/* The text and the raw result of a finished pass; complete: the pass saw
 * the whole file, so its line count and hash are known. */
static void read_report(tool_result *out, tool_ctx *ctx, const char *path, const struct stat *st,
                        text_pass *tp, bool complete)
{
    long long start = tp->start;
    /* A last line without a newline is still a line. */
    long long total = tp->line - (tp->in_line ? 0 : 1);
    if (complete && tp->in_line && tp->line >= tp->start && tp->line < tp->end)
        emit_line(tp);

    if (tp->shown == 0 && complete && start > total) {
        str_printf(&out->text, "(The file %s has %lld line%s; offset %lld is past its end.)",
                   path, total, total == 1 ? "" : "s", start);
    } else {
        str_append(&out->text, tp->out.ptr, tp->out.len);
        long long next = tp->cut_at ? tp->cut_at : tp->start + tp->shown;
        if (tp->cut_at)
            str_printf(&out->text,
                       "\n(Output cut at %d KiB after line %lld; read on with offset=%lld.)",
                       READ_MAX_OUTPUT / 1024, next - 1, next);
        else if (complete && total >= next)
            str_printf(&out->text, "\n(… %lld more line%s; use offset=%lld and limit to read on.)",
                       total - next + 1, total - next + 1 == 1 ? "" : "s", next);
        else if (!complete)
            str_printf(&out->text,
                       "\n(More lines follow; the file has %lld bytes. Use offset=%lld and "
                       "limit to read on.)", (long long)st->st_size, next);
    }
    out->raw = json_pack("{s:s, s:s, s:I, s:I, s:b}", "filePath", path, "type", "text",
                         "startLine", (json_int_t)tp->start, "numLines", (json_int_t)tp->shown,
                         "truncated",
                         tp->cut_at != 0 || (complete ? total >= tp->start + tp->shown : true));
    if (complete)
        json_object_set_new(out->raw, "totalLines", json_integer(total));
    /* A partial window still counts as a read (the model chose what to see);
     * the hash covers the whole file only when the pass reached its end.
     * No st: a driver's text, which its caller notes. */
    if (st)
        file_state_note(ctx->files, path, st, complete ? tp->hash : FILE_STATE_NO_HASH);
}

/* The window of lines [start, start + want) of a text file whose first hn
 * bytes are already in head. */
static void read_text(tool_result *out, tool_ctx *ctx, const char *path, int fd,
                      const struct stat *st, const unsigned char *head, size_t hn,
                      long long start, long long want)
{
    text_pass tp = {.start = start, .line = 1, .hash = FILE_STATE_HASH_SEED};
    tp.end = start + want;
    feed(&tp, head, hn);
    int e = 0;
    scan_end end = read_scan(&tp, ctx, fd, &e);
    if (end == SCAN_FAILED)
        tool_error(out, "Cannot read %s: %s", path, strerror(e));
    else if (end == SCAN_CANCELLED)
        tool_error(out, "Read of %s was cancelled.", path);
    else
        read_report(out, ctx, path, st, &tp, end == SCAN_DONE);
    str_free(&tp.cur);
    str_free(&tp.out);
}

/* ---- through the driver (tools/tool_io.h) --------------------------------- */

/* Whether path must be read here even with a driver: a directory, a device,
 * or a file whose first bytes say it is no text (an image, a PDF, binary),
 * which no editor buffer holds. A missing file is the driver's: it may hold
 * an unsaved one. */
static bool read_stays_local(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    if (!S_ISREG(st.st_mode))
        return true;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    unsigned char head[READ_SNIFF];
    ssize_t n;
    do
        n = read(fd, head, sizeof head);
    while (n < 0 && errno == EINTR);
    close(fd);
    size_t hn = n > 0 ? (size_t)n : 0;
    return image_type(head, hn) || (hn >= 5 && memcmp(head, "%PDF-", 5) == 0) ||
           memchr(head, '\0', hn) != NULL;
}

/* The window of the driver's text of path, numbered as a local read; the
 * whole text is in hand, so its line count and hash are always known. */
static void read_driver(tool_result *out, tool_ctx *ctx, const char *path, long long start,
                        long long want)
{
    loom_str text = LOOM_STR_INIT, why = LOOM_STR_INIT;
    if (ctx->io->read_text(ctx->io->ctx, path, &text, &why) != 0) {
        tool_error(out, "Cannot read %s: %s", path, why.len ? why.ptr : "the client failed");
    } else if (text.len == 0) {
        str_printf(&out->text, "(The file %s exists but is empty.)", path);
        out->raw = json_pack("{s:s, s:s, s:I}", "filePath", path, "type", "text",
                             "totalLines", (json_int_t)0);
        file_state_note_text(ctx->files, path, "", 0);
    } else {
        text_pass tp = {.start = start, .line = 1, .hash = FILE_STATE_HASH_SEED};
        tp.end = start + want;
        feed(&tp, (const unsigned char *)text.ptr, text.len);
        read_report(out, ctx, path, NULL, &tp, true);
        file_state_note_text(ctx->files, path, text.ptr, text.len);
        str_free(&tp.cur);
        str_free(&tp.out);
    }
    str_free(&text);
    str_free(&why);
}

static int read_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const char *arg = json_get_str(input, "file_path", NULL);
    if (!arg || !*arg)
        return tool_error(out, "file_path is required: the path of the file to read.");
    long long offset = int_arg(input, "offset"), limit = int_arg(input, "limit");
    if (offset == -2)
        return tool_error(out, "offset must be a line number (1 is the first line).");
    if (limit == -2 || limit == 0)
        return tool_error(out, "limit must be a positive number of lines.");
    const json_t *pages_arg = json_object_get(input, "pages");
    if (pages_arg && !json_is_string(pages_arg) && !json_is_null(pages_arg))
        return tool_error(out, "pages must be a string, like \"1-5\" or \"3\".");
    const char *pages = json_is_string(pages_arg) ? json_string_value(pages_arg) : NULL;
    long long start = offset <= 0 ? 1 : offset;
    long long want = limit < 0 ? READ_DEFAULT_LIMIT : limit;

    char *path = tool_resolve_path(ctx, arg);
    if (TOOL_IO_FILES(ctx->io) && !read_stays_local(path)) {
        read_driver(out, ctx, path, start, want);
        free(path);
        return 0;
    }
    struct stat st;
    int fd = read_open(out, ctx, path, &st);
    unsigned char head[READ_SNIFF];
    size_t hn = 0;
    if (fd >= 0 && read_head(out, path, fd, head, &hn) == 0 &&
        !read_by_kind(out, ctx, path, fd, &st, head, hn, pages)) {
        /* A notebook is shown as cells; offset or limit ask for its JSON. */
        if (notebook_path(path) && offset < 0 && limit < 0 && S_ISREG(st.st_mode))
            read_notebook(out, ctx, path, fd, &st, head, hn, READ_MAX_OUTPUT);
        else
            read_text(out, ctx, path, fd, &st, head, hn, start, want);
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return 0;
}

const tool_def tool_read = {
    .name = "Read",
    .description = read_description,
    .input_schema = read_schema,
    .read_only = true,
    .concurrency_safe = true,
    .validate = NULL,
    .run = read_run,
};

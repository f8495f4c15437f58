/* spill.c — cutting an oversized MCP result and keeping it whole in a file
 * (see spill.h). Owns nothing past one call; any thread. */
#include "ext/mcp/spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fileio.h"
#include "base/utf8.h"
#include "context/tokens.h"

/* Back from i to the start of the character holding byte i. */
static size_t char_start(const char *s, size_t i)
{
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return i;
}

size_t mcp_spill_prefix(const char *s, size_t n, int64_t max_tokens)
{
    if (!s || n == 0 || max_tokens <= 0)
        return 0;
    if (tokens_estimate_text(s, n) <= max_tokens)
        return n;
    /* The estimate grows with the prefix, so the longest fitting prefix is
     * found by bisection on the byte length. */
    size_t lo = 0, hi = n;
    while (lo + 1 < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tokens_estimate_text(s, mid) <= max_tokens)
            lo = mid;
        else
            hi = mid;
    }
    /* A cut inside a character drops the partial character. */
    if (lo < n && ((unsigned char)s[lo] & 0xC0) == 0x80)
        lo = char_start(s, lo);
    return lo;
}

static size_t count_chars(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            c++;
    return c;
}

/* Writes the text to a fresh 0600 file; returns its path (caller frees) or
 * NULL with why filled. */
static char *spill_write(const loom_str *text, const char *spill_dir, const char *stem,
                         loom_str *why)
{
    const char *dir = spill_dir && *spill_dir ? spill_dir : getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    loom_error err;
    loom_error_clear(&err);
    if (file_mkdirs(dir, 0700, &err) != 0) {
        str_printf(why, "%s", err.message);
        return NULL;
    }
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/", dir);
    size_t stem_len = stem ? strlen(stem) : 0;
    if (stem_len > 100)
        stem_len = 100;
    for (size_t i = 0; i < stem_len; i++) {
        char c = stem[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        str_putc(&path, ok && !(i == 0 && c == '.') ? c : '_');
    }
    if (stem_len == 0)
        str_puts(&path, "mcp");
    str_puts(&path, "-XXXXXX.txt");
    int fd = mkstemps(path.ptr, 4); /* mkstemps creates the file 0600 */
    if (fd < 0) {
        str_printf(why, "cannot create a file in %s: %s", dir, strerror(errno));
        str_free(&path);
        return NULL;
    }
    if (file_write_full(fd, text->ptr, text->len) != 0) {
        str_printf(why, "cannot write %s: %s", path.ptr, strerror(errno));
        close(fd);
        unlink(path.ptr);
        str_free(&path);
        return NULL;
    }
    if (close(fd) != 0) {
        str_printf(why, "cannot write %s: %s", path.ptr, strerror(errno));
        unlink(path.ptr);
        str_free(&path);
        return NULL;
    }
    return str_steal(&path);
}

bool mcp_spill_cut(loom_str *text, const char *spill_dir, const char *stem, int64_t max_tokens,
                   json_t *raw)
{
    if (!text || max_tokens <= 0 || text->len == 0 ||
        tokens_estimate_text(text->ptr, text->len) <= max_tokens)
        return false;
    size_t chars = count_chars(text->ptr, text->len);
    loom_str why = LOOM_STR_INIT;
    char *path = spill_write(text, spill_dir, stem, &why);
    str_truncate(text, mcp_spill_prefix(text->ptr, text->len, max_tokens));
    if (path)
        str_printf(text,
                   "\n\n…output cut at %lld tokens; the whole result (%zu chars) is in %s — "
                   "Read it with offset/limit",
                   (long long)max_tokens, chars, path);
    else
        str_printf(text,
                   "\n\n…output cut at %lld tokens; the whole result (%zu chars) could not be "
                   "kept: %s",
                   (long long)max_tokens, chars, str_cstr(&why));
    if (json_is_object(raw)) {
        json_object_set_new(raw, "truncated", json_true());
        if (path)
            json_object_set_new(raw, "spillPath", json_string(path));
    }
    free(path);
    str_free(&why);
    return true;
}

void mcp_put_text(loom_str *out, const char *s, size_t n)
{
    if (!s || n == 0)
        return;
    size_t len = 0;
    char *clean = utf8_sanitize(s, n, &len);
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (clean[i] == '\0') {
            str_append(out, clean + start, i - start);
            start = i + 1;
        }
    }
    str_append(out, clean + start, len - start);
    free(clean);
}

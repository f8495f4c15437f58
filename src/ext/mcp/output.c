/* output.c — MCP server output made fit for the model: sanitized text,
 * described binaries, the raw result without blobs, oversized results cut
 * and kept whole in a file (see output.h). Owns nothing past one call;
 * any thread. */
#include "ext/mcp/output.h"

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
#include "tools/schema.h"

/* Strings in the raw result longer than these are replaced by their size:
 * blobs are useless there, and text is already the result's text. */
#define MCP_RAW_BLOB_MAX 256
#define MCP_RAW_TEXT_MAX 16384

/* Back from i to the start of the character holding byte i. */
static size_t char_start(const char *s, size_t i)
{
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return i;
}

size_t mcp_output_prefix(const char *s, size_t n, int64_t max_tokens)
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

bool mcp_output_spill(loom_str *text, const char *spill_dir, const char *stem, int64_t max_tokens,
                   json_t *raw)
{
    if (!text || max_tokens <= 0 || text->len == 0 ||
        tokens_estimate_text(text->ptr, text->len) <= max_tokens)
        return false;
    size_t chars = count_chars(text->ptr, text->len);
    loom_str why = LOOM_STR_INIT;
    char *path = spill_write(text, spill_dir, stem, &why);
    str_truncate(text, mcp_output_prefix(text->ptr, text->len, max_tokens));
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

void mcp_output_text(loom_str *out, const char *s, size_t n)
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

/* ---- rendering ---------------------------------------------------------- */

/* Decoded size of base64 text (whitespace and padding not counted). */
size_t mcp_output_base64_bytes(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '+' || c == '/' || c == '-' || c == '_')
            k++;
    }
    return k * 3 / 4;
}

void mcp_output_field(loom_str *out, const json_t *v, const char *fallback, size_t max)
{
    if (!json_is_string(v)) {
        str_puts(out, fallback);
        return;
    }
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (n > max) {
        while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
            max--;
        mcp_output_text(out, s, max);
        str_puts(out, "…");
        return;
    }
    mcp_output_text(out, s, n);
}

void mcp_output_resource(loom_str *text, const json_t *res)
{
    if (!json_is_object(res)) {
        str_puts(text, "[resource: malformed]");
        return;
    }
    const json_t *t = json_object_get(res, "text");
    if (json_is_string(t)) {
        mcp_output_text(text, json_string_value(t), json_string_length(t));
        return;
    }
    str_puts(text, "[binary resource ");
    mcp_output_field(text, json_object_get(res, "uri"), "(no uri)", 2000);
    str_puts(text, ": ");
    mcp_output_field(text, json_object_get(res, "mimeType"), "unknown type", 200);
    const json_t *b = json_object_get(res, "blob");
    str_printf(text, ", %zu bytes]",
               json_is_string(b)
                   ? mcp_output_base64_bytes(json_string_value(b), json_string_length(b))
                   : 0);
}

/* The raw result with every long string (a blob, a huge text) replaced
 * by a note of its size. */
static json_t *raw_copy(const json_t *v, const char *key, int depth)
{
    if (depth > SCHEMA_MAX_DEPTH)
        return json_string("[nested too deep]");
    if (json_is_string(v)) {
        size_t n = json_string_length(v);
        bool blob = key && (!strcmp(key, "data") || !strcmp(key, "blob"));
        if ((blob && n > MCP_RAW_BLOB_MAX) || n > MCP_RAW_TEXT_MAX) {
            char note[80];
            snprintf(note, sizeof note, "[%zu %s omitted]", n, blob ? "base64 chars" : "chars");
            return json_string(note);
        }
        /* Sanitized: a string built without jansson's check would make the
         * whole record fail to serialize. */
        loom_str clean = LOOM_STR_INIT;
        mcp_output_text(&clean, json_string_value(v), n);
        json_t *c = json_stringn(str_cstr(&clean), clean.len);
        str_free(&clean);
        return c;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m) json_object_set_new(o, k, raw_copy(m, k, depth + 1));
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m) json_array_append_new(a, raw_copy(m, NULL, depth + 1));
        return a;
    }
    return json_copy((json_t *)v);
}

json_t *mcp_output_raw(const json_t *result)
{
    return raw_copy(result, NULL, 0);
}

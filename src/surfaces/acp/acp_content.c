/* acp_content.c — a session/prompt's content blocks as one Loom goal
 * (acp.h): text as it is; a resource_link to a local file as an @mention
 * (Loom attaches the file through a Read call, so deny rules hold); an
 * embedded text resource inline with its uri; an image written to the
 * session's image folder and named by an @mention (Loom reads the images a
 * prompt names), or a note when there is no folder; audio and blobs as a
 * note. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/acp/acp.h"

static int b64_value(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Decodes base64 (whitespace and padding skipped); NULL when not base64. */
static unsigned char *b64_decode(const char *s, size_t *out_len)
{
    size_t n = strlen(s);
    unsigned char *out = xmalloc(n / 4 * 3 + 4);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '=' || c == '\n' || c == '\r' || c == ' ')
            continue;
        int v = b64_value(c);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *out_len = o;
    return out;
}

static const char *image_ext(const char *mime)
{
    if (!mime)
        return NULL;
    if (strcmp(mime, "image/png") == 0)
        return "png";
    if (strcmp(mime, "image/jpeg") == 0 || strcmp(mime, "image/jpg") == 0)
        return "jpg";
    if (strcmp(mime, "image/gif") == 0)
        return "gif";
    if (strcmp(mime, "image/webp") == 0)
        return "webp";
    return NULL;
}

/* Writes the image; its path (caller frees) or NULL. */
static char *save_image(const char *dir, const char *data, const char *mime)
{
    static unsigned counter;
    const char *ext = image_ext(mime);
    size_t len;
    unsigned char *bytes = (dir && ext && data) ? b64_decode(data, &len) : NULL;
    if (!bytes)
        return NULL;
    /* Made on the first image: a program killed before any leaves nothing. */
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        free(bytes);
        return NULL;
    }
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/image-%u.%s", dir, __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED),
               ext);
    FILE *f = fopen(str_cstr(&path), "wb");
    bool ok = f && fwrite(bytes, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    free(bytes);
    if (!ok) {
        str_free(&path);
        return NULL;
    }
    return str_steal(&path);
}

static void sep(loom_str *g)
{
    if (g->len && g->ptr[g->len - 1] != '\n')
        str_puts(g, "\n\n");
}

/* One block into the goal; -1 with why when it is no content block. */
static int add_block(loom_str *g, const json_t *b, const char *image_dir, char *why, size_t wl,
                     size_t i)
{
    const char *type = json_get_str(b, "type", NULL);
    if (!json_is_object(b) || !type) {
        snprintf(why, wl, "prompt[%zu] is not a content block (an object with \"type\")", i);
        return -1;
    }
    if (strcmp(type, "text") == 0) {
        const char *t = json_get_str(b, "text", NULL);
        if (!t) {
            snprintf(why, wl, "prompt[%zu]: a text block needs \"text\" (a string)", i);
            return -1;
        }
        str_puts(g, t);
    } else if (strcmp(type, "resource_link") == 0) {
        const char *uri = json_get_str(b, "uri", NULL);
        if (!uri) {
            snprintf(why, wl, "prompt[%zu]: a resource_link needs \"uri\" (a string)", i);
            return -1;
        }
        sep(g);
        if (strncmp(uri, "file://", 7) == 0 && !strpbrk(uri + 7, " \t\n"))
            str_printf(g, "@%s", uri + 7);
        else
            str_printf(g, "[%s](%s)", json_get_str(b, "name", uri), uri);
    } else if (strcmp(type, "resource") == 0) {
        const json_t *r = json_get_obj(b, "resource");
        const char *uri = json_get_str(r, "uri", NULL);
        if (!r || !uri) {
            snprintf(why, wl, "prompt[%zu]: a resource needs \"resource\" with \"uri\"", i);
            return -1;
        }
        sep(g);
        const char *text = json_get_str(r, "text", NULL);
        if (text)
            str_printf(g, "<context uri=\"%s\">\n%s\n</context>", uri, text);
        else
            str_printf(g, "[binary resource %s, %s, not included]", uri,
                       json_get_str(r, "mimeType", "of unknown type"));
    } else if (strcmp(type, "image") == 0) {
        const char *data = json_get_str(b, "data", NULL), *mime = json_get_str(b, "mimeType", NULL);
        if (!data || !mime) {
            snprintf(why, wl, "prompt[%zu]: an image needs \"data\" and \"mimeType\"", i);
            return -1;
        }
        char *path = save_image(image_dir, data, mime);
        sep(g);
        if (path)
            str_printf(g, "@%s", path);
        else
            str_printf(g, "[an image (%s) was attached, which Loom could not include]", mime);
        free(path);
    } else if (strcmp(type, "audio") == 0) {
        sep(g);
        str_puts(g, "[an audio clip was attached, which Loom cannot include]");
    } else {
        snprintf(why, wl, "prompt[%zu]: unknown content block type \"%.40s\"", i, type);
        return -1;
    }
    return 0;
}

char *acp_prompt_goal(const json_t *prompt, const char *image_dir, char *why, size_t why_len)
{
    if (!json_is_array(prompt)) {
        snprintf(why, why_len, "\"prompt\" must be an array of content blocks");
        return NULL;
    }
    loom_str g = LOOM_STR_INIT;
    size_t i;
    json_t *b;
    json_array_foreach(prompt, i, b) {
        if (add_block(&g, b, image_dir, why, why_len, i) != 0) {
            str_free(&g);
            return NULL;
        }
    }
    if (!g.len) {
        snprintf(why, why_len, "the prompt is empty");
        str_free(&g);
        return NULL;
    }
    return str_steal(&g);
}

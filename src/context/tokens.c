/* tokens.c — the local token estimator (see tokens.h for the rationale). */
#include "context/tokens.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

int64_t tokens_estimate_text(const char *s, size_t n)
{
    if (!s || !n)
        return 0;
    size_t ascii = 0, other = 0, i = 0;
    /* Eight bytes at a time when they are all ASCII (the common case: the
     * estimate runs over the whole request every turn), one by one else. */
    while (i < n) {
        uint64_t w;
        if (i + 8 <= n && (memcpy(&w, s + i, 8), (w & 0x8080808080808080ULL) == 0)) {
            ascii += 8;
            i += 8;
            continue;
        }
        size_t end = i + 8 < n ? i + 8 : n;
        for (; i < end; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c < 0x80)
                ascii++;
            else if ((c & 0xC0) != 0x80)
                other++; /* a lead byte: one character */
        }
    }
    /* ascii / 3.6, rounded up, in integers. */
    return (int64_t)((ascii * 10 + 35) / 36) + (int64_t)other;
}

int64_t tokens_estimate_cstr(const char *s)
{
    return s ? tokens_estimate_text(s, strlen(s)) : 0;
}

int64_t tokens_estimate_json(const json_t *v)
{
    if (!v)
        return 0;
    char *s = json_dump_compact(v);
    int64_t t = tokens_estimate_cstr(s);
    free(s);
    return t;
}

int64_t tokens_estimate_block(const msg_block *b)
{
    int64_t t = TOKENS_PER_BLOCK;
    switch (b->kind) {
    case MSG_BLOCK_IMAGE:
        return t + TOKENS_PER_IMAGE;
    case MSG_BLOCK_TOOL_USE:
        return t + tokens_estimate_cstr(b->name) + tokens_estimate_json(b->input);
    case MSG_BLOCK_REDACTED_THINKING:
        /* Opaque ciphertext is base64 of the reasoning: ~4/3 of its size. */
        return t + tokens_estimate_cstr(b->data) * 3 / 4;
    default:
        return t + tokens_estimate_cstr(b->text);
    }
}

int64_t tokens_estimate_message(const msg_message *m)
{
    int64_t t = 4;
    for (size_t i = 0; i < m->n_blocks; i++)
        t += tokens_estimate_block(&m->blocks[i]);
    return t;
}

int64_t tokens_estimate_tools(const msg_request *r)
{
    int64_t t = 0;
    for (size_t i = 0; i < r->n_tools; i++)
        t += TOKENS_PER_BLOCK + tokens_estimate_cstr(r->tools[i].name) +
             tokens_estimate_cstr(r->tools[i].description) +
             tokens_estimate_json(r->tools[i].input_schema);
    return t;
}

int64_t tokens_estimate_request(const msg_request *r)
{
    int64_t t = tokens_estimate_cstr(r->system) + tokens_estimate_cstr(r->system_dynamic) +
                tokens_estimate_tools(r);
    for (size_t i = 0; i < r->n_messages; i++)
        t += tokens_estimate_message(&r->messages[i]);
    return t;
}

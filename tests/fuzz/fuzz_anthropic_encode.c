/* fuzz_anthropic_encode.c — differential: a msg_request built from the fuzz
 * bytes goes through the direct Anthropic encoder and through the old
 * tree-building one (tests/unit/anthropic_encode_reference.h); return codes,
 * URL, headers and body must agree byte for byte, or the target aborts.
 *
 * Input: a header byte of flags, then operations, each an opcode byte and
 * its operands; strings are a length byte and that many bytes (cut at a NUL,
 * as C strings are), JSON values are a length byte and text for
 * json_parse_fast (NULL when it does not parse). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/anthropic_encode_reference.h"

typedef struct in {
    const uint8_t *p, *e;
} in;

static unsigned byte(in *r)
{
    return r->p < r->e ? *r->p++ : 0;
}

/* A string operand, or NULL when its length byte is 0xff. Some lengths pick
 * a fixture instead, so escapes and bad UTF-8 are reached quickly. */
static char *string(in *r)
{
    static const char *const fixtures[] = {
        "", "\"\\\n\r\t\b\f\x01\x1f", "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", "\xff",
        "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80", "abcdefgh\"ijklmnop",
    };
    unsigned n = byte(r);
    if (n == 0xff)
        return NULL;
    if (n >= 0xf0)
        return xstrdup(fixtures[(n - 0xf0) % (sizeof fixtures / sizeof fixtures[0])]);
    size_t avail = (size_t)(r->e - r->p);
    if (n > avail)
        n = (unsigned)avail;
    char *s = xstrndup((const char *)r->p, n);
    r->p += n;
    return s;
}

static json_t *deep(unsigned levels)
{
    json_t *v = json_string("leaf");
    for (unsigned i = 0; i < levels; i++)
        v = i % 2 ? json_pack("[o]", v) : json_pack("{s:o}", "k", v);
    return v;
}

static json_t *value(in *r)
{
    unsigned n = byte(r);
    if (n == 0xff)
        return NULL;
    if (n >= 0xf0)
        return deep(2030 + (n - 0xf0) * 2); /* around the 2048-level limit */
    size_t avail = (size_t)(r->e - r->p);
    if (n > avail)
        n = (unsigned)avail;
    json_t *v = json_parse_fast((const char *)r->p, n, JSON_DECODE_ANY, NULL);
    r->p += n;
    return v;
}

static void set(char **field, char *s)
{
    free(*field);
    *field = s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in r = {data, data + size};
    provider_config cfg;
    provider_config_init(&cfg);
    msg_request req = {0};
    unsigned flags = byte(&r);
    req.stream = flags & 1;
    req.system_cache = flags & 2;
    if (flags & 4) {
        free(cfg.model);
        cfg.model = NULL;
    }
    if (flags & 8)
        cfg.api_key = xstrdup("key");
    static const double temps[] = {-1, 0, -0.0, 0.7, 1, 0.1, 1e-300, 1e300, 2.5};
    unsigned t = (flags >> 4) & 15;
    req.temperature = t < 9 ? temps[t] : t == 9 ? INFINITY : t == 10 ? NAN : -INFINITY;
    if (t == 15 && r.e - r.p >= 8) {
        memcpy(&req.temperature, r.p, 8); /* any bits at all */
        r.p += 8;
    }
    msg_message *m = NULL;
    msg_block *b = NULL;
    while (r.p < r.e) {
        unsigned op = byte(&r);
        switch (op % 16) {
        case 0: m = msg_request_add_message(&req, (op >> 4) & 1 ? MSG_ROLE_ASSISTANT
                                                                  : MSG_ROLE_USER);
            b = NULL;
            break;
        case 1: /* a block of kind op>>4 (mod 6), fields set by later ops */
            if (!m)
                m = msg_request_add_message(&req, MSG_ROLE_USER);
            b = msg_message_push(m, (msg_block_kind)((op >> 4) % 6));
            break;
        case 2: if (b) set(&b->text, string(&r)); break;
        case 3: if (b) set(&b->signature, string(&r)); break;
        case 4: if (b) set(&b->data, string(&r)); break;
        case 5: if (b) set(&b->media_type, string(&r)); break;
        case 6: if (b) set(&b->id, string(&r)); break;
        case 7: if (b) set(&b->name, string(&r)); break;
        case 8:
            if (b) {
                json_decref(b->input);
                b->input = value(&r);
            }
            break;
        case 9:
            if (b) {
                b->is_error = (op >> 4) & 1;
                b->cache_control = (op >> 5) & 1;
            }
            break;
        case 10: {
            char *name = string(&r), *desc = string(&r);
            json_t *schema = value(&r);
            msg_request_add_tool(&req, "x", "", schema);
            msg_tool *tool = &req.tools[req.n_tools - 1];
            set(&tool->name, name);
            set(&tool->description, desc);
            if ((op >> 4) & 1) {
                json_decref(tool->input_schema);
                tool->input_schema = NULL;
            }
            break;
        }
        case 11: set(&req.system, string(&r)); break;
        case 12: set(&req.system_dynamic, string(&r)); break;
        case 13: set(&req.model, string(&r)); break;
        case 14: {
            int hi = (int8_t)byte(&r);
            req.max_tokens = hi * 1000 + (int)byte(&r);
            break;
        }
        case 15: {
            int hi = (int8_t)byte(&r);
            req.thinking_budget = hi * 256 + (int)byte(&r);
            break;
        }
        }
    }
    if (encoders_agree(&req, &cfg) != 0)
        abort();
    msg_request_free(&req);
    provider_config_free(&cfg);
    return 0;
}

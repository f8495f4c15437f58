/* json_parse.c — Loom's own JSON reader: one recursive-descent pass over the
 * bytes that builds jansson values directly.
 *
 * jansson's json_loadb pulls every byte through a callback, a UTF-8 stream
 * and a token buffer that is then copied again (~190 instructions a byte);
 * tool schemas, every streamed SSE delta and every session line went through
 * it. Here strings are scanned eight bytes at a time and handed to jansson
 * once (straight from the input when they hold no escape).
 *
 * It accepts and rejects exactly what json_loadb does, for every decode flag
 * (tests/fuzz/fuzz_json_parse.c checks that against jansson 2.14), and
 * builds equal values (reals bit for bit), including jansson's corners:
 *  - RFC 8259 grammar; the top level must be an object or array unless
 *    JSON_DECODE_ANY; trailing data is an error unless JSON_DISABLE_EOF_CHECK;
 *  - strings: valid UTF-8 only (no overlongs, surrogates or past U+10FFFF),
 *    no raw byte below 0x20, \uXXXX surrogates only as a proper pair,
 *    \u0000 only with JSON_ALLOW_NUL and never in a key;
 *  - numbers: no leading zeros, '+', ".5" or "1."; an integer outside
 *    json_int_t is an error (jansson's "too big integer"), a real that
 *    overflows too ("real number overflow"), one that underflows is 0;
 *  - depth: every value counts a level, scalars too, 2048 at most
 *    (JSON_PARSER_MAX_DEPTH); "[[...[1]...]]" fails at 2048 arrays;
 *  - duplicate keys: the last wins in the first one's place, or an error
 *    with JSON_REJECT_DUPLICATES;
 *  - one NUL byte directly after a number or true/false/null is skipped
 *    (jansson's lexer "ungets" it and then mistakes it for an empty buffer).
 * Errors carry jansson's messages ("... near 'token'") and its line, column
 * (characters) and byte position, which are only computed on failure. */
#include "base/str.h"
#include "base/json.h"
#include "base/str.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char uchar;

typedef struct {
    const uchar *start, *end;
    size_t flags;
    json_error_t *error;
    /* Decoded strings that held escapes: a stack, so a key being read stays
     * put while its value (and the strings inside it) are decoded above it. */
    char *scratch;
    size_t cap, top;
    size_t nuls_skipped; /* jansson leaves them out of its position count */
} parser;

/* A string as read: in the input, or at scratch + off when it was decoded. */
typedef struct {
    const char *ptr;
    size_t off, len;
    bool decoded, has_nul;
} jstr;

static bool is_digit(uchar c) { return c >= '0' && c <= '9'; }
static bool is_alpha(uchar c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

static const uchar *skip_ws(const uchar *s, const uchar *e)
{
    while (s < e && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
        s++;
    return s;
}

/* Length of the valid UTF-8 sequence at s (a byte >= 0x80), 0 if invalid.
 * base/utf8.c's utf8_seq_len has the same rules; this copy is inlined into
 * the string loop. */
static size_t utf8_len(const uchar *s, const uchar *e)
{
    uchar c = s[0];
    size_t n = (size_t)(e - s);
    if (c < 0xC2)
        return 0;
    if (c < 0xE0)
        return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F))
            return 0; /* overlong, surrogate */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
            return 0; /* overlong, past U+10FFFF */
        return 4;
    }
    return 0;
}

/* The end of the token starting at s, for error context only. */
static const uchar *token_end(const uchar *s, const uchar *e)
{
    if (s >= e)
        return s;
    if (is_alpha(*s)) {
        while (s < e && is_alpha(*s))
            s++;
        return s;
    }
    if (*s == '-' || is_digit(*s)) {
        s++;
        while (s < e && (is_digit(*s) || *s == '.' || *s == 'e' || *s == 'E' ||
                         *s == '+' || *s == '-'))
            s++;
        return s;
    }
    if (*s == '"') {
        for (s++; s < e && *s != '"'; s++)
            if (*s == '\\' && s + 1 < e)
                s++;
        return s < e ? s + 1 : s;
    }
    if (*s >= 0x80) {
        size_t n = utf8_len(s, e);
        return s + (n ? n : 1);
    }
    return s + 1;
}

/* Records the first error, as jansson words it: the message, then the token
 * [tok, tok_end) as context when it is short, or "near end of file". The
 * position is the byte after the token; line and column (in characters) are
 * those of its last byte. */
static void fail(parser *p, enum json_error_code code, const uchar *tok, const uchar *tok_end,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void fail(parser *p, enum json_error_code code, const uchar *tok, const uchar *tok_end,
                 const char *fmt, ...)
{
    json_error_t *err = p->error;
    if (!err || err->text[0])
        return;
    /* The last byte of text holds the error code (json_error_code()). */
    const size_t room = JSON_ERROR_TEXT_LENGTH - 1;
    va_list ap;
    va_start(ap, fmt);
    int used = vsnprintf(err->text, room, fmt, ap);
    va_end(ap);
    if (used < 0)
        used = 0;

    size_t n = (size_t)(tok_end - tok);
    /* A byte that is no UTF-8 at the start of a token gets no context. */
    bool bare = n == 0 && code == json_error_invalid_utf8;
    if ((size_t)used < room && code != json_error_out_of_memory && !bare && n <= 20) {
        if (n == 0 && code == json_error_invalid_syntax)
            code = json_error_premature_end_of_input;
        if (n > 0)
            used = snprintf(err->text + used, room - (size_t)used, " near '%.*s'", (int)n,
                            (const char *)tok);
        else
            used = snprintf(err->text + used, room - (size_t)used, " near end of file");
        (void)used;
    }

    int line = 1, column = 0;
    for (const uchar *q = p->start; q < tok_end; q++) {
        if (*q == '\n') {
            line++;
            column = 0;
        } else if ((*q & 0xC0) != 0x80) {
            column++;
        }
    }
    err->line = line;
    err->column = column;
    err->position = (int)(tok_end - p->start);
    err->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)code;
}

static json_t *oom(parser *p, const uchar *at)
{
    fail(p, json_error_out_of_memory, at, at, "out of memory");
    return NULL;
}

/* Room for n more bytes on the scratch stack above top + used. */
static bool reserve(parser *p, size_t used, size_t n)
{
    size_t need = p->top + used + n;
    if (need <= p->cap)
        return true;
    size_t cap = p->cap ? p->cap * 2 : 256;
    while (cap < need)
        cap *= 2;
    p->scratch = xrealloc(p->scratch, cap);
    p->cap = cap;
    return true;
}

/* Advances over bytes that need no attention in a string: printable ASCII
 * other than '"' and '\\'. Eight at a time where the machine allows; the
 * lowest flagged byte of each test is exact, so the first stop is too. */
static const uchar *scan_plain(const uchar *s, const uchar *e)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (e - s >= 8) {
        uint64_t x;
        memcpy(&x, s, 8);
        uint64_t quote = x ^ (ones * '"'), bslash = x ^ (ones * '\\');
        uint64_t stop = (x | /* >= 0x80 */
                         ((x - ones * 0x20) & ~x) | /* < 0x20 */
                         ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash)) &
                        highs;
        if (stop)
            return s + (__builtin_ctzll(stop) >> 3);
        s += 8;
    }
#endif
    while (s < e && *s >= 0x20 && *s != '"' && *s != '\\' && *s < 0x80)
        s++;
    return s;
}

static int hex4(const uchar *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int d = str_hex_digit(s[i]);
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

static size_t utf8_put(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Reads the string whose opening quote is at *sp into *out and moves *sp past
 * the closing quote. Without escapes the bytes are used where they are;
 * with them they are decoded onto the scratch stack at p->top (not pushed:
 * the caller keeps them by raising p->top). */
static bool parse_string(parser *p, const uchar **sp, jstr *out)
{
    const uchar *tok = *sp, *s = tok + 1, *e = p->end, *run = s;
    size_t w = 0; /* bytes decoded so far, at scratch + top */
    bool escaped = false;
    out->has_nul = false;
    for (;;) {
        s = scan_plain(s, e);
        if (s == e) {
            fail(p, json_error_premature_end_of_input, tok, s, "premature end of input");
            return false;
        }
        uchar c = *s;
        if (c == '"')
            break;
        if (c >= 0x80) {
            size_t n = utf8_len(s, e);
            if (!n) {
                fail(p, json_error_invalid_utf8, tok, s, "unable to decode byte 0x%x", c);
                return false;
            }
            s += n;
            continue;
        }
        if (c < 0x20) {
            if (c == '\n')
                fail(p, json_error_invalid_syntax, tok, s, "unexpected newline");
            else
                fail(p, json_error_invalid_syntax, tok, s, "control character 0x%x", c);
            return false;
        }
        /* A backslash: move the plain run, then the escape, to scratch. */
        if (!reserve(p, w, (size_t)(s - run) + 4)) {
            oom(p, s);
            return false;
        }
        memcpy(p->scratch + p->top + w, run, (size_t)(s - run));
        w += (size_t)(s - run);
        escaped = true;
        if (++s == e) {
            fail(p, json_error_invalid_syntax, tok, s, "invalid escape");
            return false;
        }
        char *dst = p->scratch + p->top + w;
        switch (*s++) {
        case '"': *dst = '"'; w++; break;
        case '\\': *dst = '\\'; w++; break;
        case '/': *dst = '/'; w++; break;
        case 'b': *dst = '\b'; w++; break;
        case 'f': *dst = '\f'; w++; break;
        case 'n': *dst = '\n'; w++; break;
        case 'r': *dst = '\r'; w++; break;
        case 't': *dst = '\t'; w++; break;
        case 'u': {
            int cp = e - s >= 4 ? hex4(s) : -1;
            if (cp < 0) {
                const uchar *bad = s;
                while (bad < e && str_hex_digit(*bad) >= 0)
                    bad++;
                fail(p, json_error_invalid_syntax, tok, bad < e ? bad + 1 : bad,
                     "invalid escape");
                return false;
            }
            s += 4;
            uint32_t u = (uint32_t)cp;
            if (u >= 0xD800 && u <= 0xDBFF) {
                if (e - s >= 2 && s[0] == '\\' && s[1] == 'u') {
                    int lo = e - s >= 6 ? hex4(s + 2) : -1;
                    if (lo < 0) {
                        fail(p, json_error_invalid_syntax, tok, token_end(tok, e),
                             "invalid escape");
                        return false;
                    }
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        fail(p, json_error_invalid_syntax, tok, token_end(tok, e),
                             "invalid Unicode '\\u%04X\\u%04X'", cp, lo);
                        return false;
                    }
                    s += 6;
                    u = ((u - 0xD800) << 10) + ((uint32_t)lo - 0xDC00) + 0x10000;
                } else {
                    fail(p, json_error_invalid_syntax, tok, token_end(tok, e),
                         "invalid Unicode '\\u%04X'", cp);
                    return false;
                }
            } else if (u >= 0xDC00 && u <= 0xDFFF) {
                fail(p, json_error_invalid_syntax, tok, token_end(tok, e),
                     "invalid Unicode '\\u%04X'", cp);
                return false;
            }
            if (u == 0)
                out->has_nul = true;
            w += utf8_put(dst, u);
            break;
        }
        default:
            fail(p, json_error_invalid_syntax, tok, s, "invalid escape");
            return false;
        }
        run = s;
    }
    /* s is at the closing quote. */
    *sp = s + 1;
    if (!escaped) {
        out->ptr = (const char *)run;
        out->len = (size_t)(s - run);
        out->decoded = false;
        return true;
    }
    if (!reserve(p, w, (size_t)(s - run) + 1)) {
        oom(p, s);
        return false;
    }
    memcpy(p->scratch + p->top + w, run, (size_t)(s - run));
    w += (size_t)(s - run);
    out->off = p->top;
    out->ptr = p->scratch + p->top;
    out->len = w;
    out->decoded = true;
    return true;
}

/* A real from its text [tok, end) through strtod, as jansson does: with the
 * locale's decimal point put in place of '.'. */
static bool real_by_strtod(const uchar *tok, const uchar *end, double *out)
{
    size_t n = (size_t)(end - tok);
    char small[64];
    char *text = n < sizeof small ? small : xmalloc(n + 1);
    memcpy(text, tok, n);
    text[n] = '\0';
    const char *point = localeconv()->decimal_point;
    if (point && *point && *point != '.') {
        char *dot = strchr(text, '.');
        if (dot)
            *dot = *point;
    }
    errno = 0;
    double d = strtod(text, NULL);
    bool overflow = (d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE;
    if (text != small)
        free(text);
    *out = d;
    return !overflow;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A number at *sp: jansson's grammar, an integer when it has neither
 * fraction nor exponent (and fits json_int_t), a real otherwise. */
static json_t *parse_number(parser *p, const uchar **sp)
{
    const uchar *tok = *sp, *s = tok, *e = p->end;
    bool neg = *s == '-';
    if (neg)
        s++;
    const uchar *digits = s;
    if (s == e || !is_digit(*s))
        goto invalid;
    if (*s == '0') {
        s++;
        if (s < e && is_digit(*s)) {
            fail(p, json_error_invalid_syntax, tok, s, "invalid token");
            return NULL;
        }
    } else {
        while (s < e && is_digit(*s))
            s++;
    }
    const uchar *int_end = s, *frac = s;
    bool real = false;
    if (s < e && *s == '.') {
        s++;
        if (s == e || !is_digit(*s))
            goto invalid;
        frac = s;
        while (s < e && is_digit(*s))
            s++;
        real = true;
    }
    const uchar *frac_end = real ? s : frac;
    long exp = 0;
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = false;
        if (s < e && (*s == '+' || *s == '-'))
            eneg = *s++ == '-';
        if (s == e || !is_digit(*s))
            goto invalid;
        while (s < e && is_digit(*s)) {
            if (exp < 100000)
                exp = exp * 10 + (*s - '0');
            s++;
        }
        if (eneg)
            exp = -exp;
        real = true;
    }
    *sp = s;

    size_t int_digits = (size_t)(int_end - digits);
    if (!real && !(p->flags & JSON_DECODE_INT_AS_REAL)) {
        uint64_t v = 0;
        if (int_digits <= 18) {
            for (const uchar *q = digits; q < int_end; q++)
                v = v * 10 + (uint64_t)(*q - '0');
        } else {
            const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
            for (const uchar *q = digits; q < int_end; q++) {
                uint64_t d = (uint64_t)(*q - '0');
                if (v > (limit - d) / 10) {
                    fail(p, json_error_numeric_overflow, tok, s,
                         neg ? "too big negative integer" : "too big integer");
                    return NULL;
                }
                v = v * 10 + d;
            }
        }
        json_int_t i = neg ? (json_int_t)(0 - v) : (json_int_t)v;
        json_t *j = json_integer(i);
        return j ? j : oom(p, s);
    }

    /* Exact without strtod when the digits fit 2^53 and the power of ten is
     * exact (Clinger's fast path): one correctly rounded multiply or divide
     * gives strtod's answer bit for bit. */
    double d;
    size_t frac_digits = (size_t)(frac_end - frac);
    bool done = false;
#if FLT_EVAL_METHOD == 0
    if (int_digits + frac_digits <= 19) {
        uint64_t m = 0;
        for (const uchar *q = digits; q < int_end; q++)
            m = m * 10 + (uint64_t)(*q - '0');
        for (const uchar *q = frac; q < frac_end; q++)
            m = m * 10 + (uint64_t)(*q - '0');
        long e10 = exp - (long)frac_digits;
        if (m == 0) {
            d = 0.0;
            done = true;
        } else if (m <= (1ULL << 53) && e10 >= -22 && e10 <= 22) {
            d = e10 >= 0 ? (double)m * pow10_exact[e10] : (double)m / pow10_exact[-e10];
            done = true;
        }
        if (done && neg)
            d = -d;
    }
#endif
    if (!done && !real_by_strtod(tok, s, &d)) {
        fail(p, json_error_numeric_overflow, tok, s, "real number overflow");
        return NULL;
    }
    json_t *j = json_real(d);
    return j ? j : oom(p, s);

invalid:
    fail(p, json_error_invalid_syntax, tok, token_end(tok, e), "invalid token");
    return NULL;
}

static json_t *parse_value(parser *p, const uchar **sp, size_t depth);

/* jansson skips one NUL byte right after a number or true/false/null. */
static const uchar *after_value(parser *p, const uchar *s, const json_t *v)
{
    if (s < p->end && *s == '\0' &&
        (json_is_number(v) || json_is_boolean(v) || json_is_null(v))) {
        p->nuls_skipped++;
        s++;
    }
    return s;
}

static json_t *parse_array(parser *p, const uchar **sp, size_t depth)
{
    const uchar *s = skip_ws(*sp + 1, p->end), *e = p->end;
    json_t *arr = json_array();
    if (!arr)
        return oom(p, s);
    if (s < e && *s == ']') {
        *sp = s + 1;
        return arr;
    }
    for (;;) {
        if (s == e)
            break;
        json_t *v = parse_value(p, &s, depth + 1);
        if (!v)
            goto fail;
        if (json_array_append_new(arr, v) != 0) {
            oom(p, s);
            goto fail;
        }
        s = skip_ws(after_value(p, s, v), e);
        if (s < e && *s == ',') {
            s = skip_ws(s + 1, e);
            continue;
        }
        if (s < e && *s == ']') {
            *sp = s + 1;
            return arr;
        }
        break;
    }
    fail(p, json_error_invalid_syntax, s, token_end(s, e), "']' expected");
fail:
    json_decref(arr);
    return NULL;
}

static json_t *parse_object(parser *p, const uchar **sp, size_t depth)
{
    const uchar *s = skip_ws(*sp + 1, p->end), *e = p->end;
    json_t *obj = json_object();
    if (!obj)
        return oom(p, s);
    if (s < e && *s == '}') {
        *sp = s + 1;
        return obj;
    }
    size_t base = p->top;
    for (;;) {
        if (s == e || *s != '"') {
            fail(p, json_error_invalid_syntax, s, token_end(s, e), "string or '}' expected");
            goto fail;
        }
        const uchar *key_tok = s;
        jstr key;
        if (!parse_string(p, &s, &key))
            goto fail;
        const uchar *key_end = s;
        if (key.decoded) {
            if (key.has_nul) {
                fail(p, json_error_null_byte_in_key, key_tok, s,
                     "NUL byte in object key not supported");
                goto fail;
            }
            p->top += key.len; /* keep it while the value is read */
        }
        s = skip_ws(s, e);
        if (s == e || *s != ':') {
            fail(p, json_error_invalid_syntax, s, token_end(s, e), "':' expected");
            goto fail;
        }
        s = skip_ws(s + 1, e);
        json_t *v = parse_value(p, &s, depth + 1);
        if (!v)
            goto fail;
        const char *k = key.decoded ? p->scratch + key.off : key.ptr;
        bool reject = p->flags & JSON_REJECT_DUPLICATES;
        size_t members = reject ? json_object_size(obj) : 0;
        if (json_object_setn_new_nocheck(obj, k, key.len, v) != 0) {
            oom(p, s);
            goto fail;
        }
        /* A key seen before replaced its value instead of adding one. Found
         * here rather than looked up first (jansson's way, which hashes each
         * key twice); only which error an input with two faults gets can
         * differ. */
        if (reject && json_object_size(obj) == members) {
            fail(p, json_error_duplicate_key, key_tok, key_end, "duplicate object key");
            goto fail;
        }
        p->top = base;
        s = skip_ws(after_value(p, s, v), e);
        if (s < e && *s == ',') {
            s = skip_ws(s + 1, e);
            continue;
        }
        if (s < e && *s == '}') {
            *sp = s + 1;
            return obj;
        }
        fail(p, json_error_invalid_syntax, s, token_end(s, e), "'}' expected");
        goto fail;
    }
fail:
    p->top = base;
    json_decref(obj);
    return NULL;
}

/* The value whose first byte is at *sp (whitespace skipped); depth counts
 * this value, as jansson's does. */
static json_t *parse_value(parser *p, const uchar **sp, size_t depth)
{
    const uchar *s = *sp, *e = p->end;
    if (depth > JSON_PARSER_MAX_DEPTH) {
        fail(p, json_error_stack_overflow, s, token_end(s, e), "maximum parsing depth reached");
        return NULL;
    }
    if (s == e) {
        fail(p, json_error_invalid_syntax, s, s, "unexpected token");
        return NULL;
    }
    switch (*s) {
    case '{':
        return parse_object(p, sp, depth);
    case '[':
        return parse_array(p, sp, depth);
    case '"': {
        jstr str;
        if (!parse_string(p, sp, &str))
            return NULL;
        if (str.has_nul && !(p->flags & JSON_ALLOW_NUL)) {
            fail(p, json_error_null_character, s, *sp,
                 "\\u0000 is not allowed without JSON_ALLOW_NUL");
            return NULL;
        }
        json_t *v = json_stringn_nocheck(str.ptr, str.len);
        return v ? v : oom(p, *sp);
    }
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return parse_number(p, sp);
    case '}':
    case ']':
    case ',':
    case ':':
        fail(p, json_error_invalid_syntax, s, s + 1, "unexpected token");
        return NULL;
    default:
        break;
    }
    const uchar *t = token_end(s, e);
    if (is_alpha(*s)) {
        size_t n = (size_t)(t - s);
        json_t *v = NULL;
        if (n == 4 && memcmp(s, "true", 4) == 0)
            v = json_true();
        else if (n == 5 && memcmp(s, "false", 5) == 0)
            v = json_false();
        else if (n == 4 && memcmp(s, "null", 4) == 0)
            v = json_null();
        if (v) {
            *sp = t;
            return v;
        }
    } else if (*s >= 0x80 && !utf8_len(s, e)) {
        fail(p, json_error_invalid_utf8, s, s, "unable to decode byte 0x%x", *s);
        return NULL;
    }
    fail(p, json_error_invalid_syntax, s, t, "invalid token");
    return NULL;
}

json_t *json_parse_fast(const char *buf, size_t len, size_t flags, json_error_t *error)
{
    if (error) {
        memset(error, 0, sizeof *error);
        error->line = -1;
        error->column = -1;
        snprintf(error->source, sizeof error->source, "<buffer>");
    }
    parser p = {.start = (const uchar *)buf,
                .end = (const uchar *)buf + (buf ? len : 0),
                .flags = flags,
                .error = error};
    if (!buf) {
        if (error) {
            snprintf(error->text, JSON_ERROR_TEXT_LENGTH - 1, "wrong arguments");
            error->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_invalid_argument;
        }
        return NULL;
    }
    const uchar *s = skip_ws(p.start, p.end), *e = p.end;
    json_t *v = NULL;
    if (!(flags & JSON_DECODE_ANY) && (s == e || (*s != '[' && *s != '{'))) {
        /* jansson reports a bad first token itself before this. */
        if (s < e && *s == '"') {
            jstr str;
            const uchar *q = s;
            if (!parse_string(&p, &q, &str))
                goto out;
        } else if (s < e && (*s == '-' || is_digit(*s))) {
            const uchar *q = s;
            json_t *n = parse_number(&p, &q);
            if (!n)
                goto out;
            json_decref(n);
        } else if (s < e && *s >= 0x80 && !utf8_len(s, e)) {
            fail(&p, json_error_invalid_utf8, s, s, "unable to decode byte 0x%x", *s);
            goto out;
        }
        fail(&p, json_error_invalid_syntax, s, token_end(s, e), "'[' or '{' expected");
        goto out;
    }
    v = parse_value(&p, &s, 1);
    if (!v)
        goto out;
    if (!(flags & JSON_DISABLE_EOF_CHECK)) {
        s = skip_ws(after_value(&p, s, v), e);
        if (s != e) {
            fail(&p, json_error_end_of_input_expected, s, token_end(s, e),
                 "end of file expected");
            json_decref(v);
            v = NULL;
            goto out;
        }
    }
    if (error)
        error->position = (int)((size_t)(s - p.start) - p.nuls_skipped);
out:
    free(p.scratch);
    return v;
}

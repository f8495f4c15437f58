/* secret_scan.c — the credential scanner (see secret_scan.h).
 *
 * One left-to-right pass: at each position every matcher is tried in table
 * order; the first that matches records a hit and the scan resumes after
 * it, so hits never overlap. Matchers are hand-written over a byte alphabet
 * rather than regular expressions: each is a fixed prefix plus a run of one
 * character class, and a tool result of megabytes is scanned in one pass
 * with no allocation. Threading: no state. */
#include "policy/secret_scan.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

#include "base/str.h"

/* Character classes of key bodies. */
enum cls { ALNUM, B64URL /* A-Za-z0-9_- */, UPPERNUM /* A-Z0-9 */, B64 /* A-Za-z0-9+/= */, VALUE };

static bool in_cls(unsigned char c, enum cls k)
{
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    switch (k) {
    case ALNUM: return alnum;
    case B64URL: return alnum || c == '_' || c == '-';
    case UPPERNUM: return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    case B64: return alnum || c == '+' || c == '/' || c == '=';
    case VALUE: return alnum || c == '_' || c == '-' || c == '.' || c == '+' || c == '/' || c == '=' ||
                       c == '~' || c == '!' || c == '@' || c == '#' || c == '$' || c == '%' ||
                       c == '^' || c == '&' || c == '*';
    }
    return false;
}

static size_t run_upto(const char *s, size_t n, size_t i, enum cls k, size_t limit)
{
    size_t j = i;
    while (j < n && j - i < limit && in_cls((unsigned char)s[j], k))
        j++;
    return j - i;
}

static size_t run_of(const char *s, size_t n, size_t i, enum cls k)
{
    return run_upto(s, n, i, k, (size_t)-1);
}

/* A token starts at a word boundary: "task-…" holds "sk-" but no key. */
static bool boundary_before(const char *s, size_t i)
{
    return i == 0 || !in_cls((unsigned char)s[i - 1], B64URL);
}

static bool has_prefix(const char *s, size_t n, size_t i, const char *p)
{
    size_t k = strlen(p);
    return n - i >= k && memcmp(s + i, p, k) == 0;
}

static bool has_digit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= '0' && s[i] <= '9')
            return true;
    return false;
}

/* A prefixed key: prefix, then at least min (at most max, 0 = any) bytes of
 * class k, ending at a boundary. The hit covers prefix and body. */
typedef struct prefixed {
    const char *prefix;
    enum cls body;
    size_t min, max;
    bool need_digit; /* real keys are random: a body with no digit is a word */
    const char *kind;
} prefixed;

/* Longer prefixes of one family first: "sk-ant-" is Anthropic's, the bare
 * "sk-" OpenAI's. Formats as the providers document them. */
static const prefixed prefixed_keys[] = {
    {"sk-ant-", B64URL, 20, 0, true, "anthropic_api_key"},
    {"sk-proj-", B64URL, 20, 0, true, "openai_api_key"},
    {"sk-svcacct-", B64URL, 20, 0, true, "openai_api_key"},
    {"sk-", B64URL, 20, 0, true, "openai_api_key"},
    {"AKIA", UPPERNUM, 16, 16, true, "aws_access_key_id"},
    {"ASIA", UPPERNUM, 16, 16, true, "aws_access_key_id"},
    {"ghp_", ALNUM, 36, 0, true, "github_token"},
    {"gho_", ALNUM, 36, 0, true, "github_token"},
    {"ghu_", ALNUM, 36, 0, true, "github_token"},
    {"ghs_", ALNUM, 36, 0, true, "github_token"},
    {"ghr_", ALNUM, 36, 0, true, "github_token"},
    {"github_pat_", B64URL, 22, 0, true, "github_token"},
    {"glpat-", B64URL, 20, 0, false, "gitlab_token"},
    {"xoxb-", B64URL, 10, 0, true, "slack_token"},
    {"xoxp-", B64URL, 10, 0, true, "slack_token"},
    {"xoxa-", B64URL, 10, 0, true, "slack_token"},
    {"xoxr-", B64URL, 10, 0, true, "slack_token"},
    {"xoxs-", B64URL, 10, 0, true, "slack_token"},
    {"AIza", B64URL, 35, 35, false, "google_api_key"},
    {"sk_live_", ALNUM, 16, 0, false, "stripe_key"},
    {"sk_test_", ALNUM, 16, 0, false, "stripe_key"},
    {"rk_live_", ALNUM, 16, 0, false, "stripe_key"},
    {"npm_", ALNUM, 36, 36, true, "npm_token"},
    {"hf_", ALNUM, 30, 0, true, "huggingface_token"},
};

static size_t match_prefixed(const char *s, size_t n, size_t i, const char **kind)
{
    if (!boundary_before(s, i))
        return 0;
    for (size_t t = 0; t < sizeof prefixed_keys / sizeof prefixed_keys[0]; t++) {
        const prefixed *p = &prefixed_keys[t];
        /* The first byte rules out nearly every row before any compare. */
        if (p->prefix[0] != s[i] || !has_prefix(s, n, i, p->prefix))
            continue;
        size_t pl = strlen(p->prefix);
        size_t body = run_of(s, n, i + pl, p->body);
        /* A fixed-length key glued to more key characters is something else. */
        if (body < p->min || (p->max && body != p->max))
            continue;
        if (p->need_digit && !has_digit(s + i + pl, body))
            continue;
        /* A key ends at a word boundary too: "AKIA…EXAMPLEh" or
         * "ghp_…_suffix" is an identifier. It also keeps masking
         * idempotent: what follows a replacement could never start a key. */
        if (i + pl + body < n && in_cls((unsigned char)s[i + pl + body], B64URL))
            continue;
        *kind = p->kind;
        return pl + body;
    }
    return 0;
}

/* "-----BEGIN [RSA |EC |OPENSSH |ENCRYPTED ]PRIVATE KEY-----" through the
 * matching END line (or the end of the text, when a result was cut). */
static size_t match_private_key(const char *s, size_t n, size_t i, const char **kind)
{
    static const char begin[] = "-----BEGIN ";
    if (!has_prefix(s, n, i, begin))
        return 0;
    /* The header is "-----BEGIN [WORDS ]PRIVATE KEY-----" with WORDS in
     * capitals (RSA, EC, OPENSSH, ENCRYPTED…), as PEM writes it: a looser
     * header would match text that masking has just shortened. */
    size_t j = i + sizeof begin - 1;
    while (j < n && j - i < 64 && ((s[j] >= 'A' && s[j] <= 'Z') || s[j] == ' ')) {
        if (has_prefix(s, n, j, "PRIVATE KEY-----"))
            break;
        j++;
    }
    if (!has_prefix(s, n, j, "PRIVATE KEY-----"))
        return 0;
    size_t eol = j + sizeof "PRIVATE KEY-----" - 1;
    static const char end[] = "-----END ";
    for (size_t q = eol; q + sizeof end - 1 <= n; q++) {
        if (memcmp(s + q, end, sizeof end - 1) != 0)
            continue;
        size_t k = q + sizeof end - 1;
        while (k < n && s[k] != '\n' && k - q < 80) {
            if (k + 5 <= n && memcmp(s + k, "-----", 5) == 0) {
                /* Whatever is glued to the footer goes with it: the key is
                 * masked either way, and the replacement is never followed
                 * by a byte that could start another match. */
                k += 5;
                k += run_of(s, n, k, B64URL);
                *kind = "private_key";
                return k - i;
            }
            k++;
        }
    }
    *kind = "private_key";
    return n - i;
}

/* header.payload.signature, the first two base64url JSON objects ("eyJ"). */
static size_t match_jwt(const char *s, size_t n, size_t i, const char **kind)
{
    if (!boundary_before(s, i) || !has_prefix(s, n, i, "eyJ"))
        return 0;
    size_t j = i;
    for (int part = 0; part < 3; part++) {
        size_t r = run_of(s, n, j, B64URL);
        if (r < 10)
            return 0;
        j += r;
        if (part < 2) {
            if (j >= n || s[j] != '.')
                return 0;
            if (part == 0 && !has_prefix(s, n, j + 1, "eyJ"))
                return 0;
            j++;
        }
    }
    *kind = "jwt";
    return j - i;
}

/* Key names that say their value is a secret (compared case-insensitively,
 * '_' and '-' alike): the suffix must end the name ("api_key", "MY_API_KEY",
 * "client-secret"), so "secretary" or "tokenizer" do not count. */
static const char *const secret_names[] = {
    "apikey", "api_key", "secret_key", "secretkey", "client_secret", "access_token",
    "auth_token", "refresh_token", "private_key", "password", "passwd", "secret", "token",
    "aws_secret_access_key",
};

static int fold(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 'a';
    return c == '-' ? '_' : c;
}

/* Does a secret-like key name end just before position e? */
static bool secret_name_ends_at(const char *s, size_t e)
{
    /* Every name ends in one of these letters: most "=" and ":" of code
     * and logs are ruled out by the byte before them. */
    int last = e > 0 ? fold((unsigned char)s[e - 1]) : 0;
    if (!last || !strchr("ydnt", last))
        return false;
    for (size_t t = 0; t < sizeof secret_names / sizeof secret_names[0]; t++) {
        size_t k = strlen(secret_names[t]);
        if (e < k || last != secret_names[t][k - 1])
            continue;
        size_t b = e - k;
        bool eq = true;
        for (size_t q = 0; q < k && eq; q++)
            eq = fold((unsigned char)s[b + q]) == secret_names[t][q];
        if (!eq)
            continue;
        /* The name starts an identifier or continues one after a separator
         * ("MY_API_KEY"); a letter glued on ("tokensecret") makes it another
         * word. '_' and '-' are not ALNUM. */
        if (b == 0 || !in_cls((unsigned char)s[b - 1], ALNUM))
            return true;
    }
    return false;
}

/* Placeholders and references are not secrets: "${TOKEN}", "<your key>",
 * "xxxxxxxx", "********", "changeme", a value with no variety. */
static bool looks_real(const char *v, size_t n)
{
    if (n < 12)
        return false;
    int lower = 0, upper = 0, digit = 0, other = 0;
    unsigned char seen[256] = {0};
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (!seen[c]++)
            distinct++;
        if (c >= 'a' && c <= 'z')
            lower = 1;
        else if (c >= 'A' && c <= 'Z')
            upper = 1;
        else if (c >= '0' && c <= '9')
            digit = 1;
        else
            other = 1;
    }
    if (v[0] == '$' || v[0] == '%' || v[0] == '*')
        return false;
    if (distinct < 8)
        return false;
    /* A word or two ("correcthorsebattery") is a passphrase we cannot tell
     * from prose; a random value mixes at least three classes. */
    return lower + upper + digit + other >= 3;
}

#define VALUE_JUDGED 64 /* bytes of a value looks_real reads: enough to tell a key from a word */

/* NAME = value, NAME: value, "NAME": "value", NAME=value in an env dump.
 * The hit covers the value only; the name stays readable. */
static size_t match_assignment(const char *s, size_t n, size_t i, size_t *voff, const char **kind)
{
    if (s[i] != '=' && s[i] != ':')
        return 0;
    size_t e = i;
    if (e > 0 && (s[e - 1] == '"' || s[e - 1] == '\''))
        e--;
    while (e > 0 && s[e - 1] == ' ')
        e--;
    if (e > 0 && (s[e - 1] == '"' || s[e - 1] == '\''))
        e--;
    if (!secret_name_ends_at(s, e))
        return 0;
    size_t j = i + 1;
    if (j < n && s[j] == '=')
        return 0; /* "==": a comparison, not an assignment */
    while (j < n && s[j] == ' ')
        j++;
    if (j < n && (s[j] == '"' || s[j] == '\''))
        j++;
    /* Judged on its first bytes only: "token=token=token=…" puts an
     * assignment at every "=", and judging each whole rest of the run
     * would make a scan quadratic in a tool result. A value found real is
     * masked whole, and the scan goes on after it. */
    size_t r = run_upto(s, n, j, VALUE, VALUE_JUDGED);
    if (!looks_real(s + j, r))
        return 0;
    *voff = j;
    *kind = "credential_assignment";
    return r < VALUE_JUDGED ? r : run_of(s, n, j, VALUE);
}

/* The bytes a match can start at: the first bytes of the prefixes, of
 * "-----BEGIN", of "eyJ", and the "=" / ":" of an assignment. Every other
 * byte is passed over without a call. */
static const unsigned char start_byte[256] = {
    ['-'] = 1, ['e'] = 1, ['='] = 1, [':'] = 1, ['s'] = 1, ['A'] = 1,
    ['g'] = 1, ['x'] = 1, ['n'] = 1, ['h'] = 1, ['r'] = 1,
};

/* One matcher at position i: the hit's start and length, 0 when none. */
static size_t match_at(const char *s, size_t n, size_t i, size_t *off, const char **kind)
{
    size_t m;
    *off = i;
    unsigned char c = (unsigned char)s[i];
    if (!start_byte[c])
        return 0;
    if (c == '-' && (m = match_private_key(s, n, i, kind)))
        return m;
    if (c == 'e' && (m = match_jwt(s, n, i, kind)))
        return m;
    if ((c == '=' || c == ':') && (m = match_assignment(s, n, i, off, kind)))
        return m;
    if (c != '-' && c != 'e' && c != '=' && c != ':' && (m = match_prefixed(s, n, i, kind)))
        return m;
    return 0;
}

/* The next hit at or after *from, which moves past it: false when none. */
static bool next_hit(const char *text, size_t len, size_t *from, secret_hit *hit)
{
    for (size_t i = *from; i < len; i++) {
        if (!start_byte[(unsigned char)text[i]])
            continue;
        size_t off;
        const char *kind = NULL;
        size_t m = match_at(text, len, i, &off, &kind);
        if (!m)
            continue;
        assert(off >= i && off + m <= len && kind);
        *hit = (secret_hit){off, m, kind};
        *from = off + m;
        return true;
    }
    *from = len;
    return false;
}

size_t secret_scan(const char *text, size_t len, secret_hit *hits, size_t max)
{
    size_t count = 0, at = 0;
    secret_hit h;
    while (next_hit(text, len, &at, &h)) {
        if (count < max)
            hits[count] = h;
        count++;
    }
    return count;
}

char *secret_mask(const char *text, size_t len, size_t *nmasked)
{
    loom_str out = LOOM_STR_INIT;
    size_t done = 0, count = 0, at = 0;
    secret_hit h;
    while (next_hit(text, len, &at, &h)) {
        str_append(&out, text + done, h.off - done);
        str_printf(&out, "[REDACTED:%s]", h.kind);
        count++;
        done = at;
    }
    str_append(&out, text + done, len - done);
    if (nmasked)
        *nmasked = count;
    char *r = str_steal(&out);
    return r ? r : xstrdup("");
}

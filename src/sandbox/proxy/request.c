/* request.c — the sandbox proxy's reading of a request head and its domain
 * test (request.h). Strict on purpose: the bytes come from a confined
 * command, and the host it names decides whether a connection leaves the
 * machine, so anything ambiguous — a header folded over two lines, a bare
 * CR, a NUL, userinfo in the URL, an origin-form target with only a Host
 * header to go by — is refused rather than guessed at. Threading: none. */
#include "sandbox/proxy/request.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(char *why, size_t cap, const char *msg)
{
    if (why && cap)
        snprintf(why, cap, "%s", msg);
    return -1;
}

/* The CRLF at or after buf+from, before end (the caller knows there is one). */
static const char *crlf(const char *buf, size_t from, size_t end)
{
    return memmem(buf + from, end - from, "\r\n", 2);
}

static bool is_tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Host characters of a registered name (RFC 3986 reg-name, minus the
 * percent-encodings and sub-delims no DNS name holds). */
static bool is_name_char(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_';
}

/* authority = host [":" port], host a name or "[v6]". default_port 0 means
 * the port is required. 0, or -1 with why. */
static int parse_authority(const char *a, size_t n, unsigned default_port, proxy_request *r,
                           char *why, size_t cap)
{
    if (n == 0)
        return fail(why, cap, "the request names no host");
    if (memchr(a, '@', n))
        return fail(why, cap, "user information in the request target is not accepted");
    size_t host_end;
    const char *h = a;
    size_t hn;
    if (a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close)
            return fail(why, cap, "an IPv6 host without its closing ']'");
        h = a + 1;
        hn = (size_t)(close - h);
        host_end = (size_t)(close - a) + 1;
        for (size_t i = 0; i < hn; i++)
            if (!isxdigit((unsigned char)h[i]) && h[i] != ':' && h[i] != '.')
                return fail(why, cap, "an IPv6 host with a character no address has");
        if (hn < 2)
            return fail(why, cap, "an empty IPv6 host");
        r->host_v6 = true;
    } else {
        const char *colon = memchr(a, ':', n);
        hn = colon ? (size_t)(colon - a) : n;
        host_end = hn;
        for (size_t i = 0; i < hn; i++)
            if (!is_name_char((unsigned char)a[i]))
                return fail(why, cap, "the host has a character no domain name has");
    }
    while (hn > 0 && h[hn - 1] == '.' && !r->host_v6)
        hn--;
    if (hn == 0)
        return fail(why, cap, "the request names no host");
    if (hn >= sizeof r->host)
        return fail(why, cap, "the host name is longer than 255 bytes");
    for (size_t i = 0; i < hn; i++)
        r->host[i] = (char)tolower((unsigned char)h[i]);
    r->host[hn] = '\0';

    if (host_end == n) {
        if (!default_port)
            return fail(why, cap, "CONNECT needs host:port");
        r->port = default_port;
        return 0;
    }
    if (a[host_end] != ':' || host_end + 1 == n)
        return fail(why, cap, "a malformed port after the host");
    unsigned long port = 0;
    for (size_t i = host_end + 1; i < n; i++) {
        if (!isdigit((unsigned char)a[i]) || i - host_end > 5)
            return fail(why, cap, "the port must be a number from 1 to 65535");
        port = port * 10 + (unsigned long)(a[i] - '0');
    }
    if (port < 1 || port > 65535)
        return fail(why, cap, "the port must be a number from 1 to 65535");
    r->port = (unsigned)port;
    return 0;
}

/* The target of a non-CONNECT request: "http://authority[/path][?query]". */
static int parse_absolute(const char *buf, size_t off, size_t n, proxy_request *r, char *why,
                          size_t cap)
{
    const char *t = buf + off;
    if (n >= 8 && strncasecmp(t, "https://", 8) == 0)
        return fail(why, cap, "https:// must go through CONNECT (the proxy does not speak TLS)");
    if (n < 7 || strncasecmp(t, "http://", 7) != 0)
        return fail(why, cap,
                    "a proxy request needs an absolute http:// target (or CONNECT host:port)");
    size_t a = 7, e = a;
    while (e < n && t[e] != '/' && t[e] != '?' && t[e] != '#')
        e++;
    if (parse_authority(t + a, e - a, 80, r, why, cap) != 0)
        return -1;
    r->path_off = off + e;
    r->path_len = n - e;
    return 0;
}

int proxy_request_parse(const char *buf, size_t len, proxy_request *r, char *why, size_t cap)
{
    memset(r, 0, sizeof *r);
    if (len > PROXY_HEAD_MAX)
        len = PROXY_HEAD_MAX;
    size_t end = 0;
    for (size_t i = 0; i + 3 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
            end = i + 4;
            break;
        }
    for (size_t i = 0; i < (end ? end : len); i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\0')
            return fail(why, cap, "a NUL byte in the request head");
        if (c == '\r' && (i + 1 >= len || buf[i + 1] != '\n'))
            if (i + 1 < len)
                return fail(why, cap, "a bare CR in the request head");
        if (c == '\n' && (i == 0 || buf[i - 1] != '\r'))
            return fail(why, cap, "a line of the request head not ended by CRLF");
    }
    if (!end)
        return len >= PROXY_HEAD_MAX
                   ? fail(why, cap, "the request head is larger than 16384 bytes")
                   : 0;
    r->head_len = end;

    /* The request line: METHOD SP TARGET SP HTTP/1.x CRLF. */
    const char *line_end = crlf(buf, 0, end);
    size_t ll = (size_t)(line_end - buf);
    size_t m = 0;
    while (m < ll && is_tchar((unsigned char)buf[m]))
        m++;
    if (m == 0 || m >= sizeof r->method || m >= ll || buf[m] != ' ')
        return fail(why, cap, "a malformed request line (METHOD target HTTP/1.x)");
    memcpy(r->method, buf, m);
    r->method[m] = '\0';
    size_t ts = m + 1, te = ts;
    while (te < ll && buf[te] != ' ')
        te++;
    if (te == ts || te >= ll)
        return fail(why, cap, "a malformed request line (METHOD target HTTP/1.x)");
    for (size_t i = ts; i < te; i++)
        if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] == 0x7f)
            return fail(why, cap, "a control character in the request target");
    const char *ver = buf + te + 1;
    if (ll - (te + 1) != 8 || (strncmp(ver, "HTTP/1.1", 8) != 0 && strncmp(ver, "HTTP/1.0", 8) != 0))
        return fail(why, cap, "the request is not HTTP/1.0 or HTTP/1.1");
    memcpy(r->version, ver, 8);
    r->version[8] = '\0';

    r->is_connect = strcmp(r->method, "CONNECT") == 0;
    int rc = r->is_connect ? parse_authority(buf + ts, te - ts, 0, r, why, cap)
                           : parse_absolute(buf, ts, te - ts, r, why, cap);
    if (rc != 0)
        return -1;

    /* The header lines: a token, a colon; no folded continuation lines. */
    r->headers_off = ll + 2;
    size_t p = r->headers_off;
    while (p + 2 <= end - 2) {
        const char *nl = crlf(buf, p, end);
        size_t hl = (size_t)(nl - (buf + p));
        size_t k = 0;
        while (k < hl && is_tchar((unsigned char)buf[p + k]))
            k++;
        if (k == 0 || k >= hl || buf[p + k] != ':')
            return fail(why, cap, buf[p] == ' ' || buf[p] == '\t'
                                      ? "a folded header line (obsolete line folding)"
                                      : "a malformed header line (name: value)");
        p += hl + 2;
    }
    return 1;
}

static bool header_is(const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);
    return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

void proxy_request_upstream_head(const char *buf, const proxy_request *r, loom_str *out)
{
    str_puts(out, r->method);
    str_putc(out, ' ');
    if (r->path_len == 0 || buf[r->path_off] != '/')
        str_putc(out, '/');
    /* A fragment is never sent on the wire. */
    size_t pl = r->path_len;
    const char *hash = memchr(buf + r->path_off, '#', pl);
    if (hash)
        pl = (size_t)(hash - (buf + r->path_off));
    str_append(out, buf + r->path_off, pl);
    str_putc(out, ' ');
    str_puts(out, r->version);
    str_puts(out, "\r\n");
    static const char *const HOP[] = {"Proxy-Connection", "Proxy-Authorization", "Connection",
                                      "Keep-Alive"};
    size_t p = r->headers_off;
    while (p + 2 <= r->head_len - 2) {
        const char *line = buf + p;
        const char *nl = crlf(buf, p, r->head_len);
        size_t n = (size_t)(nl - line);
        bool drop = false;
        for (size_t i = 0; i < sizeof HOP / sizeof *HOP; i++)
            drop = drop || header_is(line, n, HOP[i]);
        if (!drop)
            str_append(out, line, n + 2);
        p += n + 2;
    }
    str_puts(out, "Connection: close\r\n\r\n");
}

bool proxy_domain_valid(const char *entry, char *why, size_t cap)
{
    const char *name = entry;
    if (!entry || !entry[0])
        return fail(why, cap, "an empty domain"), false;
    if (strncmp(entry, "*.", 2) == 0)
        name = entry + 2;
    size_t n = strlen(name);
    if (n == 0 || n > 253)
        return fail(why, cap, "a domain must be a host name of 1 to 253 characters"), false;
    bool v6 = name[0] == '[';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        bool ok = v6 ? (isxdigit(c) || c == ':' || c == '.' || (i == 0 && c == '[') ||
                        (i == n - 1 && c == ']'))
                     : is_name_char(c);
        if (!ok)
            return fail(why, cap,
                        c == '*' ? "a wildcard may only lead, as in \"*.example.com\""
                                 : "a domain may hold letters, digits, '-', '.' and '_' only "
                                   "(an IPv6 address in brackets)"),
                   false;
    }
    if (v6 && (n < 3 || name[n - 1] != ']'))
        return fail(why, cap, "an IPv6 address needs its brackets, as in \"[::1]\""), false;
    return true;
}

/* a[0..an) equals b[0..bn) ignoring ASCII case. */
static bool same(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && strncasecmp(a, b, an) == 0;
}

bool proxy_domain_allowed(const char *host, const char *const *entries, size_t n)
{
    size_t hn = strlen(host);
    while (hn > 0 && host[hn - 1] == '.')
        hn--;
    for (size_t i = 0; i < n; i++) {
        const char *e = entries[i];
        bool wild = strncmp(e, "*.", 2) == 0;
        if (wild)
            e += 2;
        size_t en = strlen(e);
        while (en > 0 && e[en - 1] == '.')
            en--;
        if (en >= 2 && e[0] == '[' && e[en - 1] == ']') {
            e++;
            en -= 2; /* hosts hold IPv6 literals without brackets */
        }
        if (!wild && same(host, hn, e, en))
            return true;
        if (wild && hn > en + 1 && host[hn - en - 1] == '.' && same(host + hn - en, en, e, en))
            return true;
    }
    return false;
}

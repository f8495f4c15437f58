/* http_plain.c — Loom's own HTTP/1.1 client: the transport for http:// URLs
 * that no proxy applies to, which is how Loom talks to local model servers
 * (Ollama, vLLM, llama.cpp, LM Studio, gateways on localhost) and how every
 * test talks to mockllm.
 *
 * It exists for start-up cost, not features: a run against a local server
 * should not load libcurl and its TLS stack at all (docs/http.md). So it
 * does the least a model API needs: one request per connection
 * (Connection: close), no redirects, no compression, no TLS. Anything else
 * goes to http_curl.c, and http_plain_accepts keeps that boundary.
 *
 * Owns: URL parsing for http://, the proxy decision (libcurl's rules, so
 * both transports agree on who goes direct), connecting, framing the request,
 * and reading the response — status line, headers, then a body framed by
 * Content-Length, chunked encoding or the end of the connection. What the
 * response means and how a failure is reported belong to http.c.
 *
 * Every wait is a poll() of at most POLL_SLICE_MS, so cancellation is seen
 * within that time and the idle timeout ("no byte for idle_ms", in either
 * direction) is exact to the slice.
 */
#include "net/http_plain.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/str.h"

#define POLL_SLICE_MS 50
#define READ_BUF_SIZE (16 * 1024)
#define HEAD_CAP (64 * 1024)       /* status lines and headers, 1xx included */
#define TRAILER_CAP (64 * 1024)
#define CHUNK_LINE_CAP (4 * 1024)  /* a chunk-size line with its extensions */
#define MAX_ADDRS 16

/* ---- URL ---- */

typedef struct plain_url {
    char host[256];       /* without the brackets of an IPv6 literal */
    bool ipv6;
    char port[6];
    bool port_default;    /* 80: left out of Host, as curl does */
    const char *target;   /* path and query, pointing into the URL */
    size_t target_len;
    const char *userinfo; /* "user:password", still percent-encoded */
    size_t userinfo_len;
} plain_url;

static bool host_char(char c, bool ipv6)
{
    if (ipv6)
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
               c == ':' || c == '.';
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '-' || c == '.' || c == '_';
}

/* Strict on purpose: whatever this rejects (IDN hosts, zone ids, spaces,
 * other schemes) goes to libcurl, which has always handled such URLs. */
static bool parse_url(const char *url, plain_url *u)
{
    memset(u, 0, sizeof *u);
    if (strncasecmp(url, "http://", 7) != 0)
        return false;
    const char *auth = url + 7;
    size_t auth_len = strcspn(auth, "/?#");
    const char *auth_end = auth + auth_len;
    const char *at = memrchr(auth, '@', auth_len);
    if (at) {
        u->userinfo = auth;
        u->userinfo_len = (size_t)(at - auth);
        auth = at + 1;
    }
    const char *host = auth, *host_end;
    if (*auth == '[') {
        host++;
        host_end = memchr(host, ']', (size_t)(auth_end - host));
        if (!host_end)
            return false;
        u->ipv6 = true;
        auth = host_end + 1;
    } else {
        host_end = memchr(host, ':', (size_t)(auth_end - host));
        if (!host_end)
            host_end = auth_end;
        auth = host_end;
    }
    size_t host_len = (size_t)(host_end - host);
    if (host_len == 0 || host_len >= sizeof u->host)
        return false;
    for (size_t i = 0; i < host_len; i++)
        if (!host_char(host[i], u->ipv6))
            return false;
    memcpy(u->host, host, host_len);
    u->host[host_len] = '\0';

    unsigned port = 80;
    if (auth < auth_end) {
        if (*auth != ':')
            return false;
        auth++;
        if (auth < auth_end) { /* "host:" means the default port, as in curl */
            if (auth_end - auth > 5)
                return false;
            port = 0;
            for (; auth < auth_end; auth++) {
                if (*auth < '0' || *auth > '9')
                    return false;
                port = port * 10 + (unsigned)(*auth - '0');
            }
            if (port == 0 || port > 65535)
                return false;
        }
    }
    snprintf(u->port, sizeof u->port, "%u", port);
    u->port_default = port == 80;

    u->target = auth_end;
    u->target_len = strcspn(auth_end, "#");
    for (size_t i = 0; i < u->target_len; i++) {
        unsigned char c = (unsigned char)u->target[i];
        if (c <= 0x20 || c >= 0x7f)
            return false;
    }
    return true;
}

/* ---- proxy decision: libcurl's rules (lib/url.c, lib/noproxy.c) ---- */

static bool cidr_match(int family, const char *host, const char *token, size_t token_len)
{
    char net[INET6_ADDRSTRLEN + 8];
    if (token_len >= sizeof net)
        return false;
    memcpy(net, token, token_len);
    net[token_len] = '\0';
    unsigned max_bits = family == AF_INET ? 32 : 128, bits = max_bits;
    char *slash = strchr(net, '/');
    if (slash) {
        *slash = '\0';
        char *end;
        unsigned long b = strtoul(slash + 1, &end, 10);
        if (*end || b > max_bits)
            return false;
        bits = b ? (unsigned)b : max_bits; /* curl reads /0 as "all bits" */
    }
    unsigned char a[16], n[16];
    if (inet_pton(family, host, a) != 1 || inet_pton(family, net, n) != 1)
        return false;
    size_t bytes = bits / 8;
    if (memcmp(a, n, bytes) != 0)
        return false;
    unsigned rest = bits % 8;
    if (!rest)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (a[bytes] & mask) == (n[bytes] & mask);
}

static bool no_proxy_match(const plain_url *u, const char *list)
{
    if (!list || !*list)
        return false;
    if (strcmp(list, "*") == 0)
        return true;
    struct in_addr v4;
    bool is_v4 = !u->ipv6 && inet_pton(AF_INET, u->host, &v4) == 1;
    size_t name_len = strlen(u->host);
    /* curl compares an IPv6 literal as a plain name (no brackets), so do we. */
    if (!is_v4 && name_len && u->host[name_len - 1] == '.')
        name_len--;
    const char *p = list;
    while (*p) {
        /* Blanks separate entries as commas do ("a, b" and "a b" alike). */
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *tok = p;
        while (*p && *p != ' ' && *p != '\t' && *p != ',')
            p++;
        size_t len = (size_t)(p - tok);
        if (len && is_v4) {
            if (cidr_match(AF_INET, u->host, tok, len))
                return true;
        } else if (len) {
            if (tok[len - 1] == '.')
                len--;
            if (len && *tok == '.') {
                tok++;
                len--;
            }
            if (len == name_len && strncasecmp(tok, u->host, len) == 0)
                return true;
            if (len && len < name_len && u->host[name_len - len - 1] == '.' &&
                strncasecmp(tok, u->host + name_len - len, len) == 0)
                return true;
        }
    }
    return false;
}

/* curl_getenv: a variable set to "" counts as unset. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool proxy_applies(const plain_url *u)
{
    /* curl reads only the lowercase http_proxy for http:// (an uppercase
     * HTTP_PROXY can be set by a CGI request's "Proxy:" header), then
     * all_proxy and ALL_PROXY; no_proxy shadows NO_PROXY. */
    const char *proxy = env("http_proxy");
    if (!proxy)
        proxy = env("all_proxy");
    if (!proxy)
        proxy = env("ALL_PROXY");
    if (!proxy)
        return false;
    const char *no_proxy = env("no_proxy");
    if (!no_proxy)
        no_proxy = env("NO_PROXY");
    return !no_proxy_match(u, no_proxy);
}

bool http_plain_accepts(const char *url)
{
    plain_url u;
    return parse_url(url, &u) && !proxy_applies(&u);
}

/* ---- the request ---- */

/* "Authorization: Basic ..." from the URL's userinfo, as curl sends it. */
static void put_basic_auth(loom_str *head, const char *ui, size_t n)
{
    loom_str plain = LOOM_STR_INIT;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (ui[i] == '%' && i + 2 < n && (hi = str_hex_digit(ui[i + 1])) >= 0 &&
            (lo = str_hex_digit(ui[i + 2])) >= 0) {
            str_putc(&plain, (char)(hi * 16 + lo));
            i += 2;
        } else {
            str_putc(&plain, ui[i]);
        }
    }
    if (!memchr(plain.ptr ? plain.ptr : "", ':', plain.len))
        str_putc(&plain, ':');
    str_puts(head, "Authorization: Basic ");
    str_put_base64(head, plain.ptr, plain.len);
    str_puts(head, "\r\n");
    str_free(&plain);
}

static bool is_name(const char *h, size_t n, const char *want)
{
    return strlen(want) == n && strncasecmp(h, want, n) == 0;
}

enum { OWN_HOST = 1, OWN_UA = 2, OWN_ACCEPT = 4, OWN_AUTH = 8 };

typedef enum { HDR_SKIP, HDR_SEND, HDR_SEND_EMPTY } hdr_action;

/* What to do with one of the caller's headers, keeping libcurl's
 * conventions so one header list means the same on both transports: "Name:"
 * with nothing after it removes a header this client would add, "Name;"
 * sends it with an empty value, and a caller's Host, User-Agent, Accept or
 * Authorization replaces ours (*replaces says which). Framing headers are
 * this client's alone. */
static hdr_action caller_header(const char *h, size_t *name_len, int *replaces)
{
    size_t n = strcspn(h, ":;");
    *name_len = n;
    *replaces = 0;
    if (!h[n] || n == 0)
        return HDR_SKIP;
    const char *v = h + n + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    bool blank = !*v;
    if (h[n] == ';' && !blank)
        return HDR_SKIP; /* curl ignores these too */
    if (is_name(h, n, "content-length") || is_name(h, n, "connection") ||
        is_name(h, n, "transfer-encoding") || is_name(h, n, "expect"))
        return HDR_SKIP;
    *replaces = is_name(h, n, "host")            ? OWN_HOST
                : is_name(h, n, "user-agent")    ? OWN_UA
                : is_name(h, n, "accept")        ? OWN_ACCEPT
                : is_name(h, n, "authorization") ? OWN_AUTH
                                                 : 0;
    if (h[n] == ';')
        return HDR_SEND_EMPTY;
    return blank ? HDR_SKIP : HDR_SEND;
}

/* False when a caller's header holds a line break, which would let it
 * write headers (or a second request) of its own. */
static bool build_head(const http_request *req, const plain_url *u, const char *method,
                       loom_str *head)
{
    int replaced = 0, r;
    size_t name_len;
    for (const char *const *hp = req->headers; hp && *hp; hp++) {
        if (strpbrk(*hp, "\r\n"))
            return false;
        caller_header(*hp, &name_len, &r);
        replaced |= r;
    }

    str_printf(head, "%s ", method);
    if (u->target_len == 0 || u->target[0] == '?')
        str_putc(head, '/');
    str_append(head, u->target, u->target_len);
    str_puts(head, " HTTP/1.1\r\n");
    if (!(replaced & OWN_HOST))
        str_printf(head, "Host: %s%s%s%s%s\r\n", u->ipv6 ? "[" : "", u->host, u->ipv6 ? "]" : "",
                   u->port_default ? "" : ":", u->port_default ? "" : u->port);
    if (u->userinfo && !(replaced & OWN_AUTH))
        put_basic_auth(head, u->userinfo, u->userinfo_len);
    if (!(replaced & OWN_UA))
        str_puts(head, "User-Agent: " HTTP_USER_AGENT "\r\n");
    if (!(replaced & OWN_ACCEPT))
        str_puts(head, "Accept: */*\r\n");
    for (const char *const *hp = req->headers; hp && *hp; hp++) {
        switch (caller_header(*hp, &name_len, &r)) {
        case HDR_SEND:
            str_puts(head, *hp);
            str_puts(head, "\r\n");
            break;
        case HDR_SEND_EMPTY:
            str_append(head, *hp, name_len);
            str_puts(head, ":\r\n");
            break;
        case HDR_SKIP:
            break;
        }
    }
    if (req->body || strcmp(method, "POST") == 0)
        str_printf(head, "Content-Length: %zu\r\n", req->body ? req->body_len : 0);
    str_puts(head, "Connection: close\r\n\r\n");
    return true;
}

/* ---- the connection ---- */

typedef struct conn {
    http_rx *rx;
    int fd;
    int64_t last_activity_ms;
} conn;

/* One poll slice. Returns poll's revents (0 for a quiet slice), or -1 once
 * the transfer must end: cancelled, idle for too long, or past deadline_ms
 * (when nonzero; then *timed_out is set). */
static int wait_slice(conn *c, int fd, short events, int64_t deadline_ms, bool *timed_out)
{
    http_rx *rx = c->rx;
    if (cancel_requested(rx->req->cancel)) {
        rx->cancelled = true;
        return -1;
    }
    int64_t now = clock_mono_ms();
    if (http_rx_past_deadline(rx, now)) /* slices are short: seen within one */
        return -1;
    int64_t until = deadline_ms ? deadline_ms : c->last_activity_ms + rx->idle_ms;
    if (now >= until) {
        if (deadline_ms)
            *timed_out = true;
        else
            rx->idle_expired = true;
        return -1;
    }
    int ms = until - now < POLL_SLICE_MS ? (int)(until - now) : POLL_SLICE_MS;
    struct pollfd pfd = {.fd = fd, .events = events};
    int n = poll(&pfd, 1, ms);
    if (n < 0)
        return errno == EINTR ? 0 : POLLERR;
    return n ? pfd.revents : 0;
}

typedef struct addr {
    struct sockaddr_storage sa;
    socklen_t len;
} addr;

static void add_addr(addr *list, int *n, const struct sockaddr *sa, socklen_t len)
{
    if (*n < MAX_ADDRS && len <= sizeof list[*n].sa) {
        memcpy(&list[*n].sa, sa, len);
        list[*n].len = len;
        (*n)++;
    }
}

/* Numeric hosts skip the resolver entirely, and so does localhost, which
 * is loopback by definition (RFC 6761): IPv4 first, since that is where
 * local servers listen by default, and a refusal there costs one syscall
 * before ::1 is tried. */
static int resolve(const plain_url *u, addr *list, int *n, char *why, size_t why_cap)
{
    *n = 0;
    size_t hl = strlen(u->host);
    if (strcasecmp(u->host, "localhost") == 0 ||
        (hl > 10 && strcasecmp(u->host + hl - 10, ".localhost") == 0)) {
        unsigned short port = (unsigned short)atoi(u->port);
        struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port),
                                  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        add_addr(list, n, (struct sockaddr *)&a4, sizeof a4);
        add_addr(list, n, (struct sockaddr *)&a6, sizeof a6);
        return 0;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(u->host, u->port, &hints, &res);
    if (rc == EAI_NONAME && !u->ipv6) {
        /* A name: this blocks in the resolver, where cancellation cannot
         * reach; local servers are named by number or "localhost". */
        hints.ai_flags = AI_NUMERICSERV;
        rc = getaddrinfo(u->host, u->port, &hints, &res);
    }
    if (rc != 0) {
        snprintf(why, why_cap, "could not resolve host %s: %s", u->host,
                 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
        add_addr(list, n, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(res);
    if (*n == 0) {
        snprintf(why, why_cap, "could not resolve host %s: no addresses", u->host);
        return -1;
    }
    return 0;
}

/* Connects to the first address that answers, within connect_ms in all.
 * Each address gets an even share of what is left, so one that silently
 * drops packets cannot use up the time of those after it. */
static int open_connection(conn *c, const plain_url *u)
{
    http_rx *rx = c->rx;
    char why[320];
    addr list[MAX_ADDRS];
    int n;
    if (resolve(u, list, &n, why, sizeof why) != 0)
        return http_fail(rx, HTTP_FAIL_BROKEN, why);

    int64_t start = clock_mono_ms(), deadline = start + rx->connect_ms;
    int last_errno = 0;
    bool timed_out = false;
    for (int i = 0; i < n; i++) {
        int64_t now = clock_mono_ms();
        if (now >= deadline) {
            timed_out = true;
            break;
        }
        int64_t mine = now + (deadline - now) / (n - i);
        int fd = socket(list[i].sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int rc = connect(fd, (struct sockaddr *)&list[i].sa, list[i].len);
        if (rc != 0 && errno == EINPROGRESS) {
            bool slow = false;
            for (;;) {
                int ev = wait_slice(c, fd, POLLOUT, mine, &slow);
                if (ev < 0)
                    break;
                if (ev) {
                    int so = 0;
                    socklen_t sl = sizeof so;
                    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0)
                        so = errno;
                    rc = so ? -1 : 0;
                    errno = so;
                    break;
                }
            }
            if (rx->cancelled || rx->deadline_expired) {
                close(fd);
                return http_fail(rx, HTTP_FAIL_NONE, NULL);
            }
            if (slow) {
                timed_out = true;
                close(fd);
                continue;
            }
        }
        if (rc == 0) {
            /* The head and body go out in one sendmsg; small replies to it
             * must not wait for Nagle. */
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            c->fd = fd;
            return 0;
        }
        last_errno = errno;
        close(fd);
    }
    if (timed_out && !last_errno) {
        snprintf(why, sizeof why, "connecting to %s port %s took over %ld ms", u->host, u->port,
                 rx->connect_ms);
        return http_fail(rx, HTTP_FAIL_TIMEOUT, why);
    }
    snprintf(why, sizeof why, "connecting to %s port %s: %s", u->host, u->port,
             strerror(last_errno ? last_errno : ETIMEDOUT));
    return http_fail(rx, timed_out ? HTTP_FAIL_TIMEOUT : HTTP_FAIL_BROKEN, why);
}

/* Sends head and body. Stops early, without failing, when the server
 * answers before taking the whole body (a 413, say): that answer is what the
 * caller needs, and reading it is the next step anyway. A send error is
 * returned as an errno so the read that follows can still find a reply. */
static int send_request(conn *c, const loom_str *head, const char *body, size_t body_len,
                        int *send_errno)
{
    struct iovec iov[2] = {{head->ptr, head->len}, {(void *)body, body ? body_len : 0}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = iov[1].iov_len ? 2 : 1};
    *send_errno = 0;
    while (msg.msg_iovlen) {
        ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (n > 0) {
            c->last_activity_ms = clock_mono_ms();
            size_t left = (size_t)n;
            while (msg.msg_iovlen && left >= msg.msg_iov->iov_len) {
                left -= msg.msg_iov->iov_len;
                msg.msg_iov++;
                msg.msg_iovlen--;
            }
            if (msg.msg_iovlen) {
                msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + left;
                msg.msg_iov->iov_len -= left;
            }
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            *send_errno = errno;
            return 0;
        }
        int ev = wait_slice(c, c->fd, POLLOUT | POLLIN, 0, NULL);
        if (ev < 0)
            return -1;
        if (ev & POLLIN)
            return 0;
    }
    return 0;
}

/* ---- the response ---- */

typedef enum {
    RS_STATUS,     /* expecting a status line */
    RS_HEADERS,
    RS_LENGTH,     /* body of known length */
    RS_CLOSE,      /* body until the server closes */
    RS_CHUNK_SIZE,
    RS_CHUNK_DATA,
    RS_CHUNK_END,  /* the line end after a chunk's data */
    RS_TRAILERS,
    RS_DONE,
} rstate;

typedef enum { FEED_MORE, FEED_DONE, FEED_STOP, FEED_BAD } feed_result;

typedef struct reader {
    http_rx *rx;
    rstate st;
    bool head_only;       /* a HEAD request: no body whatever the headers say */
    bool got_any;         /* any byte at all arrived */
    loom_str line;        /* a line split across reads */
    size_t budget;        /* bytes the current line section may still take */
    uint64_t left;        /* body or chunk bytes still to come */
    long status;
    bool te_seen, te_chunked, cl_seen;
    uint64_t cl;
    char why[160];
} reader;

static feed_result bad(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static feed_result bad(reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    return FEED_BAD;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* A Content-Length value; a list of equal values counts as one (RFC 9112
 * §6.3), anything else is a framing error we must not guess past. */
static bool parse_length(const char *v, size_t n, uint64_t *out)
{
    bool have = false;
    uint64_t first = 0;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && v[j] != ',')
            j++;
        const char *item = v + i;
        size_t len = j - i;
        trim(&item, &len);
        if (!len)
            return false;
        uint64_t x = 0;
        for (size_t k = 0; k < len; k++) {
            if (item[k] < '0' || item[k] > '9' || x > (UINT64_MAX - 9) / 10)
                return false;
            x = x * 10 + (uint64_t)(item[k] - '0');
        }
        if (have && x != first)
            return false;
        first = x;
        have = true;
        i = j + 1;
    }
    *out = first;
    return have;
}

static feed_result on_status_line(reader *r, const char *s, size_t n)
{
    if (n == 0)
        return FEED_MORE; /* RFC 9112 §2.2: blank lines before a message are skipped */
    if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || s[7] < '0' || s[7] > '9' || s[8] != ' ' ||
        s[9] < '1' || s[9] > '9' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9' ||
        (n > 12 && s[12] != ' '))
        return bad(r, "expected an HTTP/1.x status line");
    r->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
    http_rx_status(r->rx, r->status);
    r->te_seen = r->te_chunked = r->cl_seen = false;
    r->st = RS_HEADERS;
    return FEED_MORE;
}

static feed_result end_of_head(reader *r)
{
    if (r->status < 200) {
        if (r->status == 101)
            return bad(r, "the server switched protocols (101), which was not asked for");
        r->st = RS_STATUS; /* interim (100 Continue, 103): the real one follows */
        return FEED_MORE;
    }
    /* RFC 9112 §6.3, in its order. */
    if (r->head_only || r->status == 204 || r->status == 304) {
        r->st = RS_DONE;
    } else if (r->te_seen) {
        r->st = r->te_chunked ? RS_CHUNK_SIZE : RS_CLOSE;
        r->budget = CHUNK_LINE_CAP;
    } else if (r->cl_seen) {
        r->left = r->cl;
        r->st = r->cl ? RS_LENGTH : RS_DONE;
    } else {
        r->st = RS_CLOSE;
    }
    return r->st == RS_DONE ? FEED_DONE : FEED_MORE;
}

static feed_result on_header_line(reader *r, const char *s, size_t n)
{
    if (n == 0)
        return end_of_head(r);
    if (*s == ' ' || *s == '\t')
        return FEED_MORE; /* obsolete line folding: none of the headers we read use it */
    const char *colon = memchr(s, ':', n);
    if (!colon)
        return FEED_MORE;
    const char *name = s, *v = colon + 1;
    size_t name_len = (size_t)(colon - s), vlen = n - name_len - 1;
    trim(&name, &name_len);
    trim(&v, &vlen);
    if (is_name(name, name_len, "content-length")) {
        uint64_t len;
        if (!parse_length(v, vlen, &len) || (r->cl_seen && len != r->cl))
            return bad(r, "an invalid Content-Length");
        r->cl = len;
        r->cl_seen = true;
    } else if (is_name(name, name_len, "transfer-encoding")) {
        /* Only the last coding frames the body. */
        const char *last = memrchr(v, ',', vlen);
        const char *coding = last ? last + 1 : v;
        size_t clen = (size_t)(v + vlen - coding);
        trim(&coding, &clen);
        r->te_seen = true;
        r->te_chunked = is_name(coding, clen, "chunked");
    }
    http_rx_header(r->rx, name, name_len, v, vlen);
    return FEED_MORE;
}

static feed_result on_chunk_size(reader *r, const char *s, size_t n)
{
    uint64_t size = 0;
    size_t i = 0;
    int d;
    for (; i < n && (d = str_hex_digit(s[i])) >= 0; i++) {
        if (size >> 60)
            return bad(r, "a chunk size that overflows");
        size = size << 4 | (uint64_t)d;
    }
    if (i == 0)
        return bad(r, "a malformed chunk size");
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < n && s[i] != ';') /* after ';' come chunk extensions, which mean nothing to us */
        return bad(r, "a malformed chunk size");
    if (size == 0) {
        r->st = RS_TRAILERS;
        r->budget = TRAILER_CAP;
    } else {
        r->left = size;
        r->st = RS_CHUNK_DATA;
    }
    return FEED_MORE;
}

static feed_result on_line(reader *r, const char *s, size_t n)
{
    switch (r->st) {
    case RS_STATUS:
        return on_status_line(r, s, n);
    case RS_HEADERS:
        return on_header_line(r, s, n);
    case RS_CHUNK_SIZE:
        return on_chunk_size(r, s, n);
    case RS_CHUNK_END:
        if (n)
            return bad(r, "a chunk longer than its size");
        r->st = RS_CHUNK_SIZE;
        r->budget = CHUNK_LINE_CAP;
        return FEED_MORE;
    case RS_TRAILERS:
        if (n)
            return FEED_MORE; /* trailer fields: nothing we use */
        r->st = RS_DONE;
        return FEED_DONE;
    default:
        return FEED_MORE;
    }
}

/* Feeds received bytes through the parser; lines are handled in place when
 * they arrive whole, and copied only when a read splits them. */
static feed_result feed(reader *r, const char *data, size_t n)
{
    r->got_any = true;
    while (n) {
        switch (r->st) {
        case RS_DONE:
            return FEED_DONE;
        case RS_CLOSE:
            return http_rx_body(r->rx, data, n) ? FEED_STOP : FEED_MORE;
        case RS_LENGTH:
        case RS_CHUNK_DATA: {
            size_t take = r->left < n ? (size_t)r->left : n;
            if (http_rx_body(r->rx, data, take))
                return FEED_STOP;
            data += take;
            n -= take;
            r->left -= take;
            if (!r->left)
                r->st = r->st == RS_LENGTH ? RS_DONE : RS_CHUNK_END;
            break;
        }
        default: {
            const char *nl = memchr(data, '\n', n);
            size_t take = nl ? (size_t)(nl - data) + 1 : n;
            if (take > r->budget) {
                if (r->st == RS_STATUS || r->st == RS_HEADERS)
                    return bad(r, "the response headers exceed %d KiB", HEAD_CAP / 1024);
                if (r->st == RS_TRAILERS)
                    return bad(r, "the trailer fields exceed %d KiB", TRAILER_CAP / 1024);
                return bad(r, "a chunk-size line over %d bytes", CHUNK_LINE_CAP);
            }
            r->budget -= take;
            if (!nl) {
                str_append(&r->line, data, n);
                return FEED_MORE;
            }
            const char *s = data;
            size_t len = take - 1;
            if (r->line.len) {
                str_append(&r->line, data, len);
                s = r->line.ptr;
                len = r->line.len;
            }
            data += take;
            n -= take;
            if (len && s[len - 1] == '\r')
                len--;
            feed_result fr = on_line(r, s, len);
            str_clear(&r->line);
            if (fr != FEED_MORE)
                return fr;
            break;
        }
        }
    }
    return r->st == RS_DONE ? FEED_DONE : FEED_MORE;
}

/* The server closed the connection: the end of the response, or a cut. */
static int at_eof(reader *r)
{
    http_rx *rx = r->rx;
    switch (r->st) {
    case RS_CLOSE:
    case RS_DONE:
    case RS_TRAILERS: /* every body byte is in; only the final line end is missing */
        return 0;
    case RS_STATUS:
        return http_fail(rx, HTTP_FAIL_BROKEN,
                         r->got_any ? "the connection closed before a complete response"
                                    : "empty reply from server");
    case RS_HEADERS:
        return http_fail(rx, HTTP_FAIL_BROKEN, "the connection closed inside the headers");
    case RS_LENGTH:
        snprintf(r->why, sizeof r->why,
                 "the connection closed with %llu bytes of the body still to come",
                 (unsigned long long)r->left);
        return http_fail(rx, HTTP_FAIL_BROKEN, r->why);
    default:
        return http_fail(rx, HTTP_FAIL_BROKEN, "the connection closed inside the chunked body");
    }
}

static int read_response(conn *c, reader *r, int send_errno)
{
    http_rx *rx = c->rx;
    char buf[READ_BUF_SIZE];
    char why[160];
    for (;;) {
        if (cancel_requested(rx->req->cancel)) {
            rx->cancelled = true;
            return http_fail(rx, HTTP_FAIL_NONE, NULL);
        }
        if (http_rx_past_deadline(rx, clock_mono_ms()))
            return http_fail(rx, HTTP_FAIL_NONE, NULL);
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n > 0) {
            c->last_activity_ms = clock_mono_ms();
            switch (feed(r, buf, (size_t)n)) {
            case FEED_MORE:
                continue;
            case FEED_DONE:
                return 0;
            case FEED_STOP:
                return http_fail(rx, HTTP_FAIL_NONE, NULL);
            case FEED_BAD:
                return http_fail(rx, HTTP_FAIL_PROTOCOL, r->why);
            }
        }
        if (n == 0) {
            if (send_errno && !r->got_any)
                break;
            return at_eof(r);
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (wait_slice(c, c->fd, POLLIN, 0, NULL) < 0)
                return http_fail(rx, HTTP_FAIL_NONE, NULL);
            continue;
        }
        if (!send_errno || r->got_any) {
            snprintf(why, sizeof why, "receiving: %s", strerror(errno));
            return http_fail(rx, HTTP_FAIL_BROKEN, why);
        }
        break;
    }
    /* Nothing came back after a failed send: that failure is the story. */
    snprintf(why, sizeof why, "sending the request: %s", strerror(send_errno));
    return http_fail(rx, HTTP_FAIL_BROKEN, why);
}

int http_plain_perform(http_rx *rx)
{
    const http_request *req = rx->req;
    plain_url u;
    if (!parse_url(req->url, &u))
        return http_fail(rx, HTTP_FAIL_URL, "not an http:// URL this client can use");
    const char *method = req->method ? req->method : req->body ? "POST" : "GET";

    loom_str head = LOOM_STR_INIT;
    if (!build_head(req, &u, method, &head)) {
        str_free(&head);
        return loom_error_set(rx->err, LOOM_ERR_INVALID_REQUEST,
                              "a request header for %s contains a line break", rx->where);
    }

    conn c = {.rx = rx, .fd = -1};
    int ret = open_connection(&c, &u);
    if (ret == 0) {
        c.last_activity_ms = clock_mono_ms();
        int send_errno = 0;
        if (send_request(&c, &head, req->body, req->body_len, &send_errno) != 0) {
            ret = http_fail(rx, HTTP_FAIL_NONE, NULL);
        } else {
            reader r = {.rx = rx, .st = RS_STATUS, .budget = HEAD_CAP,
                        .head_only = strcmp(method, "HEAD") == 0};
            ret = read_response(&c, &r, send_errno);
            str_free(&r.line);
        }
        close(c.fd);
    }
    str_free(&head);
    return ret;
}

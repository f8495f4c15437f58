/* request.h — what the sandbox's filtering proxy (proxy.h) reads from a
 * confined command: the head of one HTTP proxy request (`CONNECT host:port`
 * or a plain-HTTP request in absolute form, `GET http://host/path`), and
 * whether its host is on sandbox.network.allowedDomains. Pure functions over
 * bytes: the input is outside input (a sandboxed command writes it), so
 * every malformed head is an error with a message, never a crash
 * (tests/fuzz/fuzz_proxy_request.c). Threading: none; reentrant. */
#ifndef LOOM_SANDBOX_PROXY_REQUEST_H
#define LOOM_SANDBOX_PROXY_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"

/* The longest request head the proxy reads (request line and headers). */
#define PROXY_HEAD_MAX 16384

typedef struct proxy_request {
    bool is_connect;      /* CONNECT: a tunnel; else a plain-HTTP request */
    char method[16];      /* as sent (a token) */
    char host[256];       /* lowercased; no trailing dot; an IPv6 literal without brackets */
    bool host_v6;         /* host was a bracketed IPv6 literal */
    unsigned port;        /* 1..65535 (80 by default for http://) */
    size_t path_off;      /* plain HTTP: the origin-form path within the head */
    size_t path_len;
    char version[9];      /* "HTTP/1.0" or "HTTP/1.1" */
    size_t headers_off;   /* the first header line within the head */
    size_t head_len;      /* the whole head, its blank line included */
} proxy_request;

/* Parses the head at buf[0..len). 1: complete, *r filled; 0: the blank line
 * that ends the head has not arrived yet (read more; len < PROXY_HEAD_MAX);
 * -1: malformed or too large, why (cap bytes) says what. */
int proxy_request_parse(const char *buf, size_t len, proxy_request *r, char *why, size_t cap);

/* The head to send upstream for a plain-HTTP request r parsed from buf: the
 * request line in origin form, the client's headers but the hop-by-hop
 * ones (Proxy-Connection, Proxy-Authorization, Connection, Keep-Alive), and
 * `Connection: close`, so one connection carries one request to one
 * checked host. Appended to out. */
void proxy_request_upstream_head(const char *buf, const proxy_request *r, loom_str *out);

/* A domain entry is well formed: a host name ("registry.npmjs.org"), an IP
 * literal, or "*." and a name (every subdomain, not the name itself).
 * false with why filled otherwise. */
bool proxy_domain_valid(const char *entry, char *why, size_t cap);
/* host (as proxy_request_parse leaves it) matches one of the entries,
 * case-insensitively, a trailing dot ignored. */
bool proxy_domain_allowed(const char *host, const char *const *entries, size_t n);

#endif

/* fuzz_proxy_request.c — libFuzzer target for the sandbox proxy's request
 * reader (src/sandbox/proxy/request.c): the bytes a sandboxed command sends
 * to Loom's filtering proxy. Every prefix of the input is parsed (as the
 * proxy sees a head arrive in pieces); a complete head must hold together —
 * a host with no '/', ':'-free unless IPv6, a port in range, a head inside
 * the input — and its upstream head must end in the one blank line. The
 * first line is also tried as a domain entry and as a host to match. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "sandbox/proxy/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *buf, size_t len)
{
    proxy_request r;
    char why[200];
    int st = proxy_request_parse(buf, len, &r, why, sizeof why);
    if (st < 0 && !memchr(why, '\0', sizeof why))
        abort();
    if (st != 1)
        return;
    if (r.head_len > len || r.head_len < 4 || r.port < 1 || r.port > 65535 || !r.host[0] ||
        strchr(r.host, '/') || (!r.host_v6 && strchr(r.host, ':')))
        abort();
    if (!r.is_connect) {
        if (r.path_off + r.path_len > r.head_len)
            abort();
        loom_str h = LOOM_STR_INIT;
        proxy_request_upstream_head(buf, &r, &h);
        if (h.len < 4 || memcmp(h.ptr + h.len - 4, "\r\n\r\n", 4) != 0 ||
            strstr(str_cstr(&h), "\r\n\r\n") != h.ptr + h.len - 4)
            abort();
        str_free(&h);
    }
    const char *e[] = {r.host};
    if (!proxy_domain_allowed(r.host, e, 1))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (size)
        memcpy(buf, data, size);
    for (size_t n = 0; n <= size; n += (n < 64 ? 1 : 61))
        check(buf, n);
    check(buf, size);
    /* The first line as a settings entry and a host. */
    size_t l = 0;
    while (l < size && l < 300 && data[l] != '\n' && data[l])
        l++;
    char line[301];
    memcpy(line, data, l);
    line[l] = '\0';
    char why[200];
    if (proxy_domain_valid(line, why, sizeof why)) {
        const char *e[] = {line};
        (void)proxy_domain_allowed("a.example.com", e, 1);
    }
    free(buf);
    return 0;
}

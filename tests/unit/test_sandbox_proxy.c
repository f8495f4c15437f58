/* test_sandbox_proxy.c — the sandbox's filtering proxy: the request reader
 * on a table of heads (complete, partial, malformed), the upstream head it
 * writes, the domain list (entries and matching), the policy's
 * network.allowedDomains, and the proxy itself over loopback: a listed host
 * is relayed to, an unlisted one gets 403 and is counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/str.h"
#include "sandbox/proxy/proxy.h"
#include "sandbox/proxy/request.h"
#include "sandbox/sandbox_policy.h"

static void test_parse_table(void **state)
{
    (void)state;
    static const struct {
        const char *head;
        int st;
        const char *host;
        unsigned port;
        int is_connect;
        const char *why; /* a word of the error */
    } rows[] = {
        {"CONNECT registry.npmjs.org:443 HTTP/1.1\r\nHost: x\r\n\r\n", 1, "registry.npmjs.org", 443, 1, NULL},
        {"GET http://LocalHost.:8080/a HTTP/1.1\r\n\r\n", 1, "localhost", 8080, 0, NULL},
        {"GET http://example.com HTTP/1.0\r\n\r\n", 1, "example.com", 80, 0, NULL},
        {"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", 1, "::1", 8443, 1, NULL},
        {"GET http://example.com/ HTTP/1.1\r\nHost: x", 0, NULL, 0, 0, NULL},
        {"CONNECT example.com HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "host:port"},
        {"CONNECT example.com:0 HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "port"},
        {"CONNECT example.com:65536 HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "port"},
        {"GET /path HTTP/1.1\r\nHost: example.com\r\n\r\n", -1, NULL, 0, 0, "absolute"},
        {"GET https://example.com/ HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "CONNECT"},
        {"GET http://u:p@example.com/ HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "user information"},
        {"GET http://exa mple.com/ HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "HTTP/1.0"},
        {"GET http://example.com/ HTTP/2.0\r\n\r\n", -1, NULL, 0, 0, "HTTP/1.0"},
        {"GET http://example.com/ HTTP/1.1\r\nX: y\r\n z\r\n\r\n", -1, NULL, 0, 0, "folded"},
        {"GET http://example.com/ HTTP/1.1\nX: y\r\n\r\n", -1, NULL, 0, 0, "CRLF"},
        {"GET http://ex\rample.com/ HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "bare CR"},
        {"GET http://ex%41mple.com/ HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "domain name"},
        {"CONNECT [::1:443 HTTP/1.1\r\n\r\n", -1, NULL, 0, 0, "']'"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        proxy_request r;
        char why[200] = "";
        int st = proxy_request_parse(rows[i].head, strlen(rows[i].head), &r, why, sizeof why);
        if (st != rows[i].st)
            fail_msg("row %zu (%s): status %d, want %d (%s)", i, rows[i].head, st, rows[i].st, why);
        if (st == 1) {
            assert_string_equal(r.host, rows[i].host);
            assert_int_equal(r.port, rows[i].port);
            assert_int_equal(r.is_connect, rows[i].is_connect);
        }
        if (rows[i].why && !strstr(why, rows[i].why))
            fail_msg("row %zu: [%s] does not say [%s]", i, why, rows[i].why);
    }
    /* A head that never ends is refused at the limit, not read forever. */
    static char big[PROXY_HEAD_MAX + 10];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET http://a/ HTTP/1.1\r\nX: ", 27);
    proxy_request r;
    char why[200];
    assert_int_equal(proxy_request_parse(big, sizeof big, &r, why, sizeof why), -1);
    assert_non_null(strstr(why, "larger"));
}

static void test_upstream_head(void **state)
{
    (void)state;
    const char *h = "POST http://example.com:81/x?y=1#frag HTTP/1.1\r\nHost: example.com:81\r\n"
                    "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
                    "Connection: keep-alive\r\nContent-Length: 2\r\n\r\nhi";
    proxy_request r;
    char why[200];
    assert_int_equal(proxy_request_parse(h, strlen(h), &r, why, sizeof why), 1);
    loom_str out = LOOM_STR_INIT;
    proxy_request_upstream_head(h, &r, &out);
    assert_string_equal(str_cstr(&out), "POST /x?y=1 HTTP/1.1\r\nHost: example.com:81\r\n"
                                        "Content-Length: 2\r\nConnection: close\r\n\r\n");
    str_free(&out);
    const char *q = "GET http://example.com?a HTTP/1.1\r\n\r\n";
    assert_int_equal(proxy_request_parse(q, strlen(q), &r, why, sizeof why), 1);
    proxy_request_upstream_head(q, &r, &out);
    assert_string_equal(str_cstr(&out), "GET /?a HTTP/1.1\r\nConnection: close\r\n\r\n");
    str_free(&out);
}

static void test_domains(void **state)
{
    (void)state;
    const char *list[] = {"registry.npmjs.org", "*.pythonhosted.org", "[::1]", "LocalHost."};
    assert_true(proxy_domain_allowed("registry.npmjs.org", list, 4));
    assert_true(proxy_domain_allowed("files.pythonhosted.org", list, 4));
    assert_true(proxy_domain_allowed("a.b.pythonhosted.org", list, 4));
    assert_false(proxy_domain_allowed("pythonhosted.org", list, 4));
    assert_false(proxy_domain_allowed("evilpythonhosted.org", list, 4));
    assert_false(proxy_domain_allowed("npmjs.org", list, 4));
    assert_false(proxy_domain_allowed("registry.npmjs.org.evil.test", list, 4));
    assert_true(proxy_domain_allowed("::1", list, 4));
    assert_true(proxy_domain_allowed("localhost", list, 4));
    assert_false(proxy_domain_allowed("127.0.0.1", list, 4));
    char why[200];
    assert_true(proxy_domain_valid("*.example.com", why, sizeof why));
    assert_true(proxy_domain_valid("[::1]", why, sizeof why));
    assert_false(proxy_domain_valid("*", why, sizeof why));
    assert_false(proxy_domain_valid("a.*.com", why, sizeof why));
    assert_non_null(strstr(why, "wildcard"));
    assert_false(proxy_domain_valid("", why, sizeof why));
    assert_false(proxy_domain_valid("http://x", why, sizeof why));
}

static void test_policy_domains(void **state)
{
    (void)state;
    sandbox_policy p;
    loom_error err;
    json_t *s = json_loads("{\"enabled\":true,\"network\":{\"allowedDomains\":[\"a.test\"],"
                           "\"httpProxyPort\":1}}", 0, NULL);
    assert_int_equal(sandbox_policy_from_settings(s, "/tmp", &p, &err), 0);
    assert_int_equal(p.network, SANDBOX_NET_PROXY);
    assert_int_equal(p.allowed_domains.n, 1);
    sandbox_policy q;
    sandbox_policy_copy(&q, &p);
    assert_string_equal(q.allowed_domains.v[0], "a.test");
    sandbox_policy_free(&q);
    sandbox_policy_free(&p);
    json_decref(s);
    s = json_loads("{\"network\":{\"allowedDomains\":[]}}", 0, NULL);
    assert_int_equal(sandbox_policy_from_settings(s, "/tmp", &p, &err), 0);
    assert_int_equal(p.network, SANDBOX_NET_DENY);
    sandbox_policy_free(&p);
    json_decref(s);
    s = json_loads("{\"network\":{\"allowedDomains\":[\"ok.test\", 3]}}", 0, NULL);
    loom_error_clear(&err);
    assert_int_equal(sandbox_policy_from_settings(s, "/tmp", &p, &err) != 0, 1);
    assert_non_null(strstr(err.message, "allowedDomains[1]"));
    sandbox_policy_free(&p);
    json_decref(s);
}

/* A one-shot upstream: accepts one connection, reads a request, answers. */
static int up_fd;
static void *upstream(void *arg)
{
    (void)arg;
    int c = accept(up_fd, NULL, NULL);
    if (c < 0)
        return NULL;
    char buf[2048];
    ssize_t n = recv(c, buf, sizeof buf - 1, 0);
    (void)n;
    const char *ans = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nup";
    (void)!send(c, ans, strlen(ans), 0);
    close(c);
    return NULL;
}

static void ask(unsigned port, const char *req, char *out, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
    size_t have = 0;
    ssize_t n;
    while (have + 1 < cap && (n = recv(fd, out + have, cap - 1 - have, 0)) > 0)
        have += (size_t)n;
    out[have] = '\0';
    close(fd);
}

static void test_proxy_relays_and_refuses(void **state)
{
    (void)state;
    up_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    assert_int_equal(bind(up_fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(up_fd, 4), 0);
    getsockname(up_fd, (struct sockaddr *)&sa, &sl);
    pthread_t t;
    pthread_create(&t, NULL, upstream, NULL);

    const char *domains[] = {"localhost"};
    char err[256];
    net_proxy *px = net_proxy_open(domains, 1, err, sizeof err);
    assert_non_null(px);
    assert_int_equal(net_proxy_serve(px, err, sizeof err), 0);
    char req[256], out[4096];
    snprintf(req, sizeof req, "GET http://localhost:%u/x HTTP/1.1\r\nHost: localhost\r\n\r\n",
             ntohs(sa.sin_port));
    ask(net_proxy_port(px), req, out, sizeof out);
    assert_non_null(strstr(out, "\r\n\r\nup"));
    pthread_join(t, NULL);
    snprintf(req, sizeof req, "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", ntohs(sa.sin_port));
    ask(net_proxy_port(px), req, out, sizeof out);
    assert_non_null(strstr(out, "HTTP/1.1 403"));
    ask(net_proxy_port(px), "BREW coffee HTTP/1.1\r\n\r\n", out, sizeof out);
    assert_non_null(strstr(out, "HTTP/1.1 400"));
    char hosts[64];
    assert_int_equal(net_proxy_refused(px, hosts, sizeof hosts), 1);
    assert_string_equal(hosts, "127.0.0.1");
    /* A connection left open does not keep close() waiting. */
    int idle = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in pa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)net_proxy_port(px)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(idle, (struct sockaddr *)&pa, sizeof pa), 0);
    net_proxy_close(px);
    close(idle);
    close(up_fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_upstream_head),
        cmocka_unit_test(test_domains),
        cmocka_unit_test(test_policy_domains),
        cmocka_unit_test(test_proxy_relays_and_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

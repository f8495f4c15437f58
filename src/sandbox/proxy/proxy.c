/* proxy.c — the sandbox's filtering proxy (proxy.h): a listener on
 * 127.0.0.1, one thread per client connection that reads one request head,
 * checks its host against the allow-list, connects upstream and then relays
 * bytes both ways until either side closes. Every socket is non-blocking
 * and every wait polls a stop pipe too, so net_proxy_close() ends all of it
 * promptly (name lookups excepted: getaddrinfo cannot be interrupted).
 * Threading: the accept thread and the connection threads share only the
 * counters and the refused-host list, under the mutex. */
#include "sandbox/proxy/proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/sig.h"
#include "base/str.h"
#include "sandbox/proxy/request.h"

#define PROXY_MAX_CONNS 64
#define PROXY_IDLE_MS 300000     /* a tunnel silent this long is closed */
#define PROXY_CONNECT_MS 30000   /* upstream connect */
#define PROXY_HEAD_MS 30000      /* the client's request head */

struct net_proxy {
    int listen_fd;
    unsigned port;
    int stop[2]; /* a byte written to stop[1] ends every wait */
    char **domains;
    size_t n_domains;
    bool serving;
    pthread_t accept_thread;
    pthread_mutex_t mu;
    pthread_cond_t idle; /* signalled when conns drops to 0 */
    int conns;
    size_t refused;
    char refused_hosts[256];
};

typedef struct conn {
    net_proxy *px;
    int client;
} conn;

/* Waits until fd has events (or the proxy stops). 1 ready, 0 timeout or stop, -1 error. */
static int wait_fd(net_proxy *px, int fd, short events, int ms)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = px->stop[0], .events = POLLIN}};
        int r = poll(p, 2, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || p[1].revents)
            return r < 0 ? -1 : 0;
        return 1;
    }
}

static bool send_all(net_proxy *px, int fd, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (wait_fd(px, fd, POLLOUT, PROXY_IDLE_MS) != 1)
                return false;
        } else {
            return false;
        }
    }
    return true;
}

static void answer(net_proxy *px, int fd, int code, const char *status, const char *body)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s,
               "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
               "Connection: close\r\n\r\n%s",
               code, status, strlen(body), body);
    (void)send_all(px, fd, s.ptr, s.len);
    str_free(&s);
}

static void note_refused(net_proxy *px, const char *host)
{
    pthread_mutex_lock(&px->mu);
    px->refused++;
    size_t have = strlen(px->refused_hosts);
    bool seen = false;
    /* the list is short: a substring test of ",host," is enough */
    char probe[260];
    snprintf(probe, sizeof probe, ",%s,", host);
    char wrapped[260];
    snprintf(wrapped, sizeof wrapped, ",%s,", px->refused_hosts);
    seen = strstr(wrapped, probe) != NULL;
    if (!seen && have + strlen(host) + 2 < sizeof px->refused_hosts)
        snprintf(px->refused_hosts + have, sizeof px->refused_hosts - have, "%s%s",
                 have ? "," : "", host);
    pthread_mutex_unlock(&px->mu);
}

/* A connected, non-blocking socket to host:port, or -1. */
static int dial(net_proxy *px, const char *host, unsigned port)
{
    char service[8];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, service, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0)
            continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS && wait_fd(px, fd, POLLOUT, PROXY_CONNECT_MS) == 1) {
            int e = 0;
            socklen_t el = sizeof e;
            rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0 ? 0 : -1;
        }
        if (rc != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* Copies bytes both ways until one side closes, idles out or the proxy stops. */
static void relay(net_proxy *px, int a, int b)
{
    char buf[16384];
    bool a_open = true, b_open = true;
    while (a_open || b_open) {
        struct pollfd p[3] = {{.fd = a_open ? a : -1, .events = POLLIN},
                              {.fd = b_open ? b : -1, .events = POLLIN},
                              {.fd = px->stop[0], .events = POLLIN}};
        int r = poll(p, 3, PROXY_IDLE_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || p[2].revents)
            return;
        for (int i = 0; i < 2; i++) {
            if (!p[i].revents)
                continue;
            int from = i == 0 ? a : b, to = i == 0 ? b : a;
            ssize_t n = recv(from, buf, sizeof buf, 0);
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (n <= 0) {
                /* Half-close: the other side may still answer. */
                shutdown(to, SHUT_WR);
                if (i == 0)
                    a_open = false;
                else
                    b_open = false;
                continue;
            }
            if (!send_all(px, to, buf, (size_t)n))
                return;
        }
    }
}

static void serve_conn(net_proxy *px, int client)
{
    char head[PROXY_HEAD_MAX];
    size_t have = 0;
    proxy_request rq;
    char why[200];
    int st = 0;
    while (st == 0) {
        if (wait_fd(px, client, POLLIN, PROXY_HEAD_MS) != 1)
            return;
        ssize_t n = recv(client, head + have, sizeof head - have, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            return;
        have += (size_t)n;
        st = proxy_request_parse(head, have, &rq, why, sizeof why);
    }
    if (st < 0) {
        char body[300];
        snprintf(body, sizeof body, "Loom sandbox proxy: bad request: %s\n", why);
        answer(px, client, 400, "Bad Request", body);
        return;
    }
    if (!proxy_domain_allowed(rq.host, (const char *const *)px->domains, px->n_domains)) {
        note_refused(px, rq.host);
        char body[400];
        snprintf(body, sizeof body,
                 "Loom sandbox: %s is not in sandbox.network.allowedDomains; the connection "
                 "was refused\n",
                 rq.host);
        answer(px, client, 403, "Forbidden", body);
        return;
    }
    int up = dial(px, rq.host, rq.port);
    if (up < 0) {
        char body[400];
        snprintf(body, sizeof body, "Loom sandbox proxy: could not connect to %s:%u\n", rq.host,
                 rq.port);
        answer(px, client, 502, "Bad Gateway", body);
        return;
    }
    bool ok;
    if (rq.is_connect) {
        static const char EST[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
        ok = send_all(px, client, EST, sizeof EST - 1);
    } else {
        loom_str h = LOOM_STR_INIT;
        proxy_request_upstream_head(head, &rq, &h);
        ok = send_all(px, up, h.ptr, h.len);
        str_free(&h);
    }
    /* Bytes that came after the head (a body, or the start of TLS). */
    if (ok && have > rq.head_len)
        ok = send_all(px, up, head + rq.head_len, have - rq.head_len);
    if (ok)
        relay(px, client, up);
    close(up);
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    net_proxy *px = c->px;
    serve_conn(px, c->client);
    close(c->client);
    free(c);
    pthread_mutex_lock(&px->mu);
    if (--px->conns == 0)
        pthread_cond_broadcast(&px->idle);
    pthread_mutex_unlock(&px->mu);
    return NULL;
}

static void *accept_main(void *arg)
{
    net_proxy *px = arg;
    for (;;) {
        if (wait_fd(px, px->listen_fd, POLLIN, -1) != 1)
            break;
        int fd = accept4(px->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&px->mu);
        bool room = px->conns < PROXY_MAX_CONNS;
        if (room)
            px->conns++;
        pthread_mutex_unlock(&px->mu);
        if (!room) {
            answer(px, fd, 503, "Service Unavailable",
                   "Loom sandbox proxy: too many connections at once\n");
            close(fd);
            continue;
        }
        conn *c = xcalloc(1, sizeof *c);
        c->px = px;
        c->client = fd;
        pthread_t t;
        if (sig_thread_create(&t, conn_main, c) != 0) {
            close(fd);
            free(c);
            pthread_mutex_lock(&px->mu);
            if (--px->conns == 0)
                pthread_cond_broadcast(&px->idle);
            pthread_mutex_unlock(&px->mu);
            continue;
        }
        pthread_detach(t);
    }
    return NULL;
}

net_proxy *net_proxy_open(const char *const *domains, size_t n, char *err, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        snprintf(err, cap, "starting the sandbox's network proxy on 127.0.0.1: %s",
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    net_proxy *px = xcalloc(1, sizeof *px);
    px->listen_fd = fd;
    px->port = ntohs(sa.sin_port);
    if (pipe2(px->stop, O_CLOEXEC) != 0) {
        snprintf(err, cap, "starting the sandbox's network proxy: pipe: %s", strerror(errno));
        close(fd);
        free(px);
        return NULL;
    }
    px->domains = xcalloc(n + 1, sizeof *px->domains);
    for (size_t i = 0; i < n; i++)
        px->domains[i] = xstrdup(domains[i]);
    px->n_domains = n;
    pthread_mutex_init(&px->mu, NULL);
    pthread_cond_init(&px->idle, NULL);
    return px;
}

int net_proxy_serve(net_proxy *px, char *err, size_t cap)
{
    if (px->serving)
        return 0;
    if (sig_thread_create(&px->accept_thread, accept_main, px) != 0) {
        snprintf(err, cap, "starting the sandbox's network proxy: no thread");
        return -1;
    }
    px->serving = true;
    return 0;
}

unsigned net_proxy_port(const net_proxy *px) { return px->port; }
int net_proxy_fd(const net_proxy *px) { return px->listen_fd; }

size_t net_proxy_refused(net_proxy *px, char *buf, size_t cap)
{
    pthread_mutex_lock(&px->mu);
    size_t n = px->refused;
    if (buf && cap)
        snprintf(buf, cap, "%s", px->refused_hosts);
    pthread_mutex_unlock(&px->mu);
    return n;
}

void net_proxy_close(net_proxy *px)
{
    if (!px)
        return;
    if (px->serving) {
        (void)!write(px->stop[1], "x", 1);
        pthread_join(px->accept_thread, NULL);
        pthread_mutex_lock(&px->mu);
        while (px->conns > 0)
            pthread_cond_wait(&px->idle, &px->mu);
        pthread_mutex_unlock(&px->mu);
    }
    close(px->listen_fd);
    close(px->stop[0]);
    close(px->stop[1]);
    for (size_t i = 0; i < px->n_domains; i++)
        free(px->domains[i]);
    free(px->domains);
    pthread_mutex_destroy(&px->mu);
    pthread_cond_destroy(&px->idle);
    free(px);
}

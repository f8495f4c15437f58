/* proxy.h — the filtering HTTP proxy behind sandbox.network.allowedDomains.
 * A sandboxed command may open TCP sockets only to this proxy's port on
 * loopback (the seccomp supervisor and Landlock see to that); the proxy
 * reads each request (`CONNECT host:port` for https, an absolute-form
 * request for plain http; request.h), connects upstream only when the host
 * is on the list, and answers 403 otherwise. One proxy per prepared sandbox
 * (sandbox_prepare), so two sessions with different lists never share one.
 *
 * Ownership: net_proxy_open() binds the listener and returns the proxy;
 * net_proxy_serve() starts its accept thread; net_proxy_close() stops every
 * thread, closes every socket and frees it. A process that forks after open
 * (sandbox_apply's supervisor) serves in one process and only closes in the
 * other. Threading: one accept thread, one thread per connection; the
 * public calls are for the owner's thread, net_proxy_refused() for any. */
#ifndef LOOM_SANDBOX_PROXY_PROXY_H
#define LOOM_SANDBOX_PROXY_PROXY_H

#include <stdbool.h>
#include <stddef.h>

typedef struct net_proxy net_proxy;

/* Binds 127.0.0.1 on a free port for the domains (copied). NULL with err
 * filled when no socket could be made. */
net_proxy *net_proxy_open(const char *const *domains, size_t n, char *err, size_t cap);
/* Starts answering (idempotent). 0, or -1 with err filled. */
int net_proxy_serve(net_proxy *px, char *err, size_t cap);
/* The loopback port it listens on. */
unsigned net_proxy_port(const net_proxy *px);
/* The listening descriptor (the seccomp supervisor lets connects reach
 * only it; sandbox_apply closes it in the confined process). */
int net_proxy_fd(const net_proxy *px);
/* How many requests were refused so far, and the first few hosts refused,
 * comma-separated, into buf (for the Bash tool's sandbox note). */
size_t net_proxy_refused(net_proxy *px, char *buf, size_t cap);
/* Stops and frees (NULL is fine). Connections in flight are cut. */
void net_proxy_close(net_proxy *px);

#endif

/* http_plain.h — Loom's own HTTP/1.1 client over a TCP socket: the
 * transport for http:// URLs that no proxy applies to (local model servers,
 * every test). One request per connection, no TLS, no redirects. */
#ifndef LOOM_NET_HTTP_PLAIN_H
#define LOOM_NET_HTTP_PLAIN_H

#include <stdbool.h>

#include "net/http_internal.h"

/* True when this transport should carry url: an http:// URL it can parse,
 * to a host that the proxy environment (http_proxy, all_proxy, ALL_PROXY,
 * minus no_proxy / NO_PROXY) sends directly, by the rules libcurl uses. */
bool http_plain_accepts(const char *url);

/* Performs rx's request (see http_internal.h); 0 or -code with rx->err set. */
int http_plain_perform(http_rx *rx);

#endif

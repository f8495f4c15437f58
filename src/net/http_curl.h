/* http_curl.h — the libcurl transport behind http_perform: https, proxies,
 * and anything else the plain transport does not take. libcurl is loaded
 * with dlopen on the first call, so a run that never needs it never pays
 * for loading it. */
#ifndef LOOM_NET_HTTP_CURL_H
#define LOOM_NET_HTTP_CURL_H

#include "net/http_internal.h"

/* Performs rx's request (see http_internal.h); 0 or -code with rx->err set.
 * LOOM_ERR_CONFIG when libcurl.so.4 cannot be loaded. */
int http_curl_perform(http_rx *rx);

#endif

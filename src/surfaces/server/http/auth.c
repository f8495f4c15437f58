/* auth.c — the bearer token of a request → its principal (the backend's
 * authenticate: objects_token for the real server, compared by SHA-256 in
 * constant time there), and the route's least role.
 *
 * A missing header, another scheme, or a token the server does not know
 * are all the same 401 unauthenticated: which of them it was is not told
 * beyond the message. No state; any thread. */
#include <string.h>
#include <strings.h>

#include "surfaces/server/http/http_internal.h"

const char *role_name(token_role role)
{
    switch (role) {
    case ROLE_VIEWER:
        return "viewer";
    case ROLE_MEMBER:
        return "member";
    case ROLE_APPROVER:
        return "approver";
    default:
        return "admin";
    }
}

bool auth_check(http_req *r, const http_route *route)
{
    if (!route->needs_auth)
        return true;
    const char *h = r->authorization;
    if (!h || !*h) {
        reply_fail(r, 0, LOOM_ERR_UNAUTHENTICATED, NULL,
                   "this call needs a token: Authorization: Bearer <token>");
        return false;
    }
    if (strncasecmp(h, "Bearer ", 7) != 0) {
        reply_fail(r, 0, LOOM_ERR_UNAUTHENTICATED, NULL,
                   "the Authorization header must be \"Bearer <token>\"");
        return false;
    }
    const char *tok = h + 7;
    while (*tok == ' ')
        tok++;
    principal who = {0};
    if (!*tok || !r->ctx->be->authenticate(r->ctx->objs, tok, &who)) {
        reply_fail(r, 0, LOOM_ERR_UNAUTHENTICATED, NULL, "the token is not known to this server");
        return false;
    }
    if (who.role < route->min_role) {
        reply_fail(r, 0, LOOM_ERR_PROJECT_SCOPE_DENIED, NULL,
                   "%s %s needs the role %s; this token has %s", route->method, route->pattern,
                   role_name(route->min_role), role_name(who.role));
        return false;
    }
    r->who = who;
    return true;
}

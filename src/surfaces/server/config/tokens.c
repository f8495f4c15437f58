/* tokens.c — the bearer tokens of tenants.yaml (`tokens: [{token |
 * token_sha256, tenant, role, project?, audit?, actor_id?}]`) and the one
 * lookup the HTTP layer makes with each request.
 *
 * Only the SHA-256 of a token is kept: a plain `token:` is hashed as it is
 * read and the text dropped, so the running server never holds it (and a
 * config that gives only token_sha256 never had it). The lookup hashes what
 * was presented and compares it with every entry in constant time, so
 * neither the time nor an early exit says how close a guess was.
 *
 * Loading runs on the loading thread; objects_token on any thread (the set
 * is read-only by then). */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "base/str.h"
#include "surfaces/server/config/config_internal.h"

static const char *const ROLES[] = {"viewer", "member", "approver", "admin", NULL};

typedef struct token_yaml {
    char *token, *token_sha256, *tenant, *role, *project, *actor_id;
    bool audit;
} token_yaml;

#define Y(f) offsetof(token_yaml, f)
static const cfg_field TOKEN_FIELDS[] = {
    {"token", CFG_TEXT, Y(token), 0, 0, NULL, NULL, NULL},
    {"token_sha256", CFG_TEXT, Y(token_sha256), 0, 0, NULL, NULL, NULL},
    {"tenant", CFG_ID, Y(tenant), 0, 0, NULL, NULL, NULL},
    {"role", CFG_TEXT, Y(role), 0, 0, ROLES, NULL, NULL},
    {"project", CFG_ID, Y(project), 0, 0, NULL, NULL, NULL},
    {"audit", CFG_BOOL, Y(audit), 0, 0, NULL, NULL, NULL},
    {"actor_id", CFG_TEXT, Y(actor_id), 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef Y

static void token_yaml_free(token_yaml *y)
{
    if (y->token) { /* the plain token is not left in freed memory */
        volatile char *v = y->token;
        while (*v)
            *v++ = 0;
    }
    free(y->token), free(y->token_sha256), free(y->tenant), free(y->role);
    free(y->project), free(y->actor_id);
}

static bool hex64(const char *s, char out[65])
{
    if (strlen(s) != 64)
        return false;
    for (size_t i = 0; i < 64; i++) {
        if (!isxdigit((unsigned char)s[i]))
            return false;
        out[i] = (char)tolower((unsigned char)s[i]);
    }
    out[64] = 0;
    return true;
}

static token_role role_of(const char *r)
{
    for (int i = 0; ROLES[i]; i++)
        if (strcmp(ROLES[i], r) == 0)
            return (token_role)i;
    return ROLE_VIEWER;
}

/* The checks of one entry after its keys: which of token/token_sha256, the
 * tenant and project, a hash given twice (lines of both named). */
static int token_entry_fill(server_objects *o, const cfg_at *at, const json_t *tv,
                            const token_yaml *y, token_entry *e, const int *first_lines)
{
    cfg_at k;
    if (!y->token == !y->token_sha256)
        return cfg_fail(at, "give token or token_sha256 (exactly one)");
    if (y->token) {
        sha256_hex(y->token, strlen(y->token), e->sha256_hex);
    } else if (!hex64(y->token_sha256, e->sha256_hex)) {
        cfg_at_child(&k, at, tv, "token_sha256", 0);
        return cfg_fail(&k, "must be 64 hexadecimal digits (the SHA-256 of the token)");
    }
    if (!y->tenant)
        return cfg_fail(at, "tenant is required");
    if (!y->role)
        return cfg_fail(at, "role is required (viewer, member, approver or admin)");
    const tenant_config *t = objects_tenant(o, y->tenant);
    cfg_at_child(&k, at, tv, "tenant", 0);
    if (!t)
        return cfg_fail(&k, "no tenant %s in tenants", y->tenant);
    if (y->project && !objects_project(t, y->project)) {
        cfg_at_child(&k, at, tv, "project", 0);
        return cfg_fail(&k, "tenant %s has no project %s", y->tenant, y->project);
    }
    for (size_t i = 0; i < o->n_tokens; i++)
        if (sha256_equal(o->tokens[i].sha256_hex, e->sha256_hex, 64))
            return cfg_fail(at, "the same token as tokens[%zu] (line %d)", i, first_lines[i]);
    e->tenant_id = xstrdup(y->tenant);
    e->project_id = xstrdup(y->project);
    e->role = role_of(y->role);
    e->audit = y->audit;
    if (y->actor_id) {
        e->actor_id = xstrdup(y->actor_id);
    } else {
        char actor[32];
        snprintf(actor, sizeof actor, "token:%.8s", e->sha256_hex);
        e->actor_id = xstrdup(actor);
    }
    return 0;
}

int cfg_load_tokens(server_objects *o, const cfg_doc *doc, srv_error *err)
{
    json_t *list = doc->root && json_is_object(doc->root) ? json_object_get(doc->root, "tokens")
                                                          : NULL;
    if (!list || json_is_null(list))
        return 0;
    cfg_at top = {.doc = doc, .err = err};
    cfg_at at;
    cfg_at_child(&at, &top, doc->root, "tokens", 0);
    if (!json_is_array(list))
        return cfg_fail(&at, "must be a list of tokens ({token, tenant, role})");
    size_t n = json_array_size(list);
    o->tokens = xcalloc(n + 1, sizeof *o->tokens);
    int *lines = xcalloc(n + 1, sizeof *lines);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        cfg_at one;
        cfg_at_child(&one, &at, list, NULL, i);
        const json_t *tv = json_array_get(list, i);
        token_yaml y = {0};
        token_entry e = {0};
        rc = cfg_check_fields(&one, tv, TOKEN_FIELDS, &y, NULL, NULL);
        if (rc == 0)
            rc = token_entry_fill(o, &one, tv, &y, &e, lines);
        token_yaml_free(&y);
        if (rc != 0) {
            cfg_token_free(&e);
            break;
        }
        lines[o->n_tokens] = cfg_line_of(doc, list, NULL, i);
        o->tokens[o->n_tokens++] = e;
    }
    free(lines);
    return rc;
}

const token_entry *objects_token(const server_objects *o, const char *bearer)
{
    if (!o || !bearer || !*bearer)
        return NULL;
    char hex[65];
    sha256_hex(bearer, strlen(bearer), hex);
    const token_entry *found = NULL;
    for (size_t i = 0; i < o->n_tokens; i++) {
        bool same = sha256_equal(o->tokens[i].sha256_hex, hex, 64);
        if (same && !found)
            found = &o->tokens[i];
    }
    return found;
}

size_t objects_token_count(const server_objects *o)
{
    return o ? o->n_tokens : 0;
}

void cfg_token_free(token_entry *t)
{
    free(t->tenant_id), free(t->project_id), free(t->actor_id);
}

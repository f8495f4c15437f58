/* sandbox_policy.c — what a sandbox policy says (sandbox_policy.h): the
 * policy built from the settings files' "sandbox" blocks, and where a path
 * falls under it (writable, read-denied). Landlock (landlock.c) and seccomp
 * (seccomp.c) put it on a process; this file only reads settings and paths.
 * Threading: no state; every function works on the policy it is given. */
#include "sandbox/sandbox_policy.h"

#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"
#include "sandbox/proxy/request.h"
#include "policy/secrets.h"
#include "policy/trust.h"
#include "sandbox/internal.h"
#include "sandbox/sandbox.h"

/* Devices a command may write (or needs ioctls on) whatever the policy:
 * output thrown away, terminals, pseudo-terminals, randomness. */
const char *const sandbox_devices[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
    "/dev/tty",  "/dev/ptmx", "/dev/pts",
};
const size_t sandbox_n_devices = sizeof sandbox_devices / sizeof *sandbox_devices;

/* ---- paths ----------------------------------------------------------------- */

/* An absolute path with the symlinks of its existing part resolved, the rest
 * kept as written: "/tmp/x/new" → "/private/tmp/x/new". Caller frees. */
static char *path_canon(const char *abs)
{
    char *r = realpath(abs, NULL);
    if (r)
        return r;
    char *copy = path_fold(abs);
    char *slash = strrchr(copy, '/');
    if (!slash || slash == copy) {
        return copy;
    }
    *slash = '\0';
    char *head = path_canon(copy);
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, head);
    if (s.len == 0 || s.ptr[s.len - 1] != '/')
        str_putc(&s, '/');
    str_puts(&s, slash + 1);
    free(head);
    free(copy);
    return str_steal(&s);
}

/* p is root or lies beneath it. */
bool sandbox_path_under(const char *p, const char *root)
{
    assert(root && root[0] == '/');
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return p[0] == '/';
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

void sandbox_paths_add(sandbox_paths *l, const char *path, const char *base)
{
    if (!path || !path[0])
        return;
    l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n++] = path_make_absolute(path, base);
    assert(l->v[l->n - 1][0] == '/'); /* a policy holds absolute paths only */
}

static void paths_free(sandbox_paths *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* ---- policy ---------------------------------------------------------------- */

static void add_default_temp(sandbox_policy *p)
{
    sandbox_paths_add(&p->temp, "/tmp", NULL);
    sandbox_paths_add(&p->temp, "/var/tmp", NULL);
    /* POSIX shared memory and semaphores (Python multiprocessing) live here. */
    sandbox_paths_add(&p->temp, "/dev/shm", NULL);
    const char *t = getenv("TMPDIR");
    if (t && t[0] == '/')
        sandbox_paths_add(&p->temp, t, NULL);
}

void sandbox_policy_init(sandbox_policy *p, const char *workspace)
{
    memset(p, 0, sizeof *p);
    p->workspace = path_make_absolute(workspace && workspace[0] ? workspace : ".", NULL);
    add_default_temp(p);
    const char *home = getenv("HOME");
    if (home && home[0] == '/') {
        /* Credential stores (policy/secrets.h): one list for every tool. */
        for (size_t i = 0; i < secrets_default_count(); i++)
            sandbox_paths_add(&p->deny_read, secrets_default_at(i), home);
    }
    p->network = SANDBOX_NET_DENY;
    p->on_unsupported = SANDBOX_UNSUPPORTED_REFUSE;
}

void sandbox_policy_free(sandbox_policy *p)
{
    if (!p)
        return;
    free(p->workspace);
    paths_free(&p->writable);
    paths_free(&p->temp);
    paths_free(&p->deny_read);
    paths_free(&p->allow_unix);
    paths_free(&p->allowed_domains);
    memset(p, 0, sizeof *p);
}

static void paths_copy(sandbox_paths *dst, const sandbox_paths *src)
{
    dst->n = src->n;
    dst->v = src->n ? xcalloc(src->n, sizeof *dst->v) : NULL;
    for (size_t i = 0; i < src->n; i++)
        dst->v[i] = xstrdup(src->v[i]);
}

void sandbox_policy_copy(sandbox_policy *dst, const sandbox_policy *src)
{
    *dst = *src; /* the scalars */
    dst->workspace = src->workspace ? xstrdup(src->workspace) : NULL;
    paths_copy(&dst->writable, &src->writable);
    paths_copy(&dst->temp, &src->temp);
    paths_copy(&dst->deny_read, &src->deny_read);
    paths_copy(&dst->allow_unix, &src->allow_unix);
    paths_copy(&dst->allowed_domains, &src->allowed_domains);
}

static int add_path_list(const json_t *block, const char *key, const char *base,
                         sandbox_paths *into, loom_error *err)
{
    json_t *v = json_object_get(block, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "sandbox.%s must be an array of path strings", key);
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        const char *s = json_string_value(item);
        if (!s || !s[0])
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "sandbox.%s[%zu] must be a non-empty path string", key, i);
        sandbox_paths_add(into, s, base);
    }
    return 0;
}

/* network.allowedDomains: each entry checked (proxy/request.h); a
 * non-empty list sends TCP through the filtering proxy. The string
 * "network" form, when also given elsewhere, does not mix with it: the last
 * file's network value is the one read. */
static int add_domains(const json_t *net, sandbox_policy *p, loom_error *err)
{
    json_t *v = json_object_get(net, "allowedDomains");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "sandbox.network.allowedDomains must be an array of domain strings");
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        const char *s = json_string_value(item);
        char why[160];
        if (!s || !proxy_domain_valid(s, why, sizeof why))
            return loom_error_set(err, LOOM_ERR_CONFIG, "sandbox.network.allowedDomains[%zu]: %s",
                                  i, s ? why : "must be a string");
        p->allowed_domains.v = xrealloc(p->allowed_domains.v,
                                        (p->allowed_domains.n + 1) * sizeof(char *));
        p->allowed_domains.v[p->allowed_domains.n++] = xstrdup(s);
    }
    if (p->allowed_domains.n)
        p->network = SANDBOX_NET_PROXY;
    return 0;
}

int sandbox_policy_from_settings(const json_t *settings, const char *workspace,
                                 sandbox_policy *p, loom_error *err)
{
    sandbox_policy_init(p, workspace);
    const json_t *block = settings;
    json_t *inner = json_object_get(settings, "sandbox");
    if (inner)
        block = inner;
    if (!block || json_is_null(block))
        return 0;
    int rc = 0;
    if (!json_is_object(block)) {
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "sandbox settings must be a JSON object");
        goto fail;
    }

    json_t *v = json_object_get(block, "enabled");
    if (v && !json_is_boolean(v)) {
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "sandbox.enabled must be true or false");
        goto fail;
    }
    p->enabled = json_is_true(v);

    v = json_object_get(block, "hooks");
    if (v && !json_is_boolean(v)) {
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "sandbox.hooks must be true or false");
        goto fail;
    }
    p->confine_hooks = json_is_true(v);

    v = json_object_get(block, "writableTempDirs");
    if (v && !json_is_boolean(v)) {
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "sandbox.writableTempDirs must be true or false");
        goto fail;
    }
    if (json_is_false(v))
        paths_free(&p->temp);

    if ((rc = add_path_list(block, "writablePaths", p->workspace, &p->writable, err)) < 0 ||
        (rc = add_path_list(block, "denyRead", p->workspace, &p->deny_read, err)) < 0)
        goto fail;

    /* A string is ours; an object is Claude Code's network block: its
     * allowedDomains turn on the filtering proxy. Its keys for a proxy of
     * one's own (httpProxyPort, socksProxyPort) and allowLocalBinding have
     * no meaning here: the network stays at the default, deny (it never
     * widens) and the settings a user brought along still load, as other
     * Claude Code keys Loom has no use for do (docs/sandbox.md). */
    v = json_object_get(block, "network");
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcmp(s, "deny") == 0)
            p->network = SANDBOX_NET_DENY;
        else if (strcmp(s, "allow") == 0)
            p->network = SANDBOX_NET_ALLOW;
        else {
            rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "sandbox.network must be \"deny\" or \"allow\", not \"%s\"", s);
            goto fail;
        }
    } else if (v && !json_is_null(v) && !json_is_object(v)) {
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "sandbox.network must be \"deny\" or \"allow\"");
        goto fail;
    }
    if (json_is_object(v) && (rc = add_domains(v, p, err)) < 0)
        goto fail;
    /* The Unix sockets a denied network still reaches: ours at the top
     * level, Claude Code's inside its network object. */
    if ((rc = add_path_list(block, "allowUnixSockets", p->workspace, &p->allow_unix, err)) < 0 ||
        (json_is_object(v) &&
         (rc = add_path_list(v, "allowUnixSockets", p->workspace, &p->allow_unix, err)) < 0))
        goto fail;

    v = json_object_get(block, "onUnsupported");
    if (v && !json_is_null(v)) {
        const char *s = json_string_value(v);
        if (s && strcmp(s, "refuse") == 0)
            p->on_unsupported = SANDBOX_UNSUPPORTED_REFUSE;
        else if (s && strcmp(s, "warn") == 0)
            p->on_unsupported = SANDBOX_UNSUPPORTED_WARN;
        else {
            rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "sandbox.onUnsupported must be \"refuse\" or \"warn\"");
            goto fail;
        }
    }
    return 0;

fail:
    sandbox_policy_free(p);
    return rc;
}

void sandbox_settings_merge(json_t *acc, const json_t *block)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)block, key, v) {
        json_t *have = json_object_get(acc, key);
        bool list = strcmp(key, "writablePaths") == 0 || strcmp(key, "denyRead") == 0 ||
                    strcmp(key, "allowUnixSockets") == 0;
        if (list && json_is_array(have) && json_is_array(v)) {
            json_t *both = json_copy(have);
            json_array_extend(both, v);
            json_object_set_new(acc, key, both);
        } else {
            json_object_set(acc, key, v);
        }
    }
}

json_t *sandbox_settings_load(const char *cwd, json_t *notices, loom_error *err)
{
    char cwd_buf[PATH_MAX];
    if (!cwd)
        cwd = getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : ".";
    settings_files sf;
    loom_error e;
    loom_error_clear(&e);
    if (settings_load(cwd, &sf, &e) != 0) {
        loom_error_set(err, LOOM_ERR_CONFIG, "%s", e.message);
        return NULL;
    }
    if (notices)
        json_array_extend(notices, sf.warnings);

    /* The project's two files are the repository's words: until the user
     * trusts the folder they pass through the same filter config.c applies
     * for the agent, so a repository cannot widen what a command the user
     * runs by hand (`loom sandbox -- CMD`) may do. Trust is decided on the
     * real path, as config.c decides it. */
    char *real = realpath(cwd, NULL);
    json_t *user = settings_merge(sf.claude_doc[SETTINGS_USER], sf.doc[SETTINGS_USER]);
    bool trusted = trust_workspace_trusted(user, real ? real : cwd);
    json_decref(user);
    free(real);
    json_t *acc = json_object();
    /* Each layer's Claude Code file below Loom's (base/settings.h); with
     * compat off settings_load left it no sandbox block. */
    for (int n = 0; n < 2 * SETTINGS_LAYERS; n++) {
        int i = n / 2;
        bool claude = n % 2 == 0;
        /* The schema let through an object or null (not set). */
        json_t *block = json_object_get(claude ? sf.claude_doc[i] : sf.doc[i], "sandbox");
        if (!json_is_object(block))
            continue;
        json_t *kept = NULL;
        if (i != SETTINGS_USER && !trusted) {
            json_t *only = json_pack("{sO}", "sandbox", block);
            json_t *base = json_object();
            json_t *sink = notices ? notices : json_array();
            kept = trust_filter(only, claude ? settings_claude_name(i) : settings_layer_name(i),
                                base, sink);
            if (!notices)
                json_decref(sink);
            json_decref(base);
            json_decref(only);
            block = json_object_get(kept, "sandbox");
        }
        if (block)
            sandbox_settings_merge(acc, block);
        json_decref(kept);
    }
    settings_files_free(&sf);
    return acc;
}

int sandbox_policy_load(const char *cwd, sandbox_policy *p, loom_error *err)
{
    memset(p, 0, sizeof *p);
    json_t *block = sandbox_settings_load(cwd, NULL, err);
    int rc = block ? sandbox_policy_from_settings(block, cwd, p, err) : -1;
    json_decref(block);
    return rc == 0 ? 0 : -1;
}

/* ---- where a path falls ------------------------------------------------------ */

static bool under_any_canon(const char *canon_path, const sandbox_paths *l)
{
    for (size_t i = 0; i < l->n; i++) {
        char *c = path_canon(l->v[i]);
        bool hit = sandbox_path_under(canon_path, c);
        free(c);
        if (hit)
            return true;
    }
    return false;
}

bool sandbox_path_writable(const sandbox_policy *p, const char *path)
{
    char *abs = path_make_absolute(path, p->workspace);
    char *c = path_canon(abs);
    free(abs);
    bool w = false;
    if (p->workspace) {
        char *ws = path_canon(p->workspace);
        w = sandbox_path_under(c, ws);
        free(ws);
    }
    w = w || under_any_canon(c, &p->writable) || under_any_canon(c, &p->temp);
    for (size_t i = 0; !w && i < sandbox_n_devices; i++)
        w = sandbox_path_under(c, sandbox_devices[i]);
    /* A denied path inside a writable one is cut out of it (see grant). */
    if (w && sandbox_path_read_denied(p, c))
        w = false;
    free(c);
    return w;
}

bool sandbox_path_read_denied(const sandbox_policy *p, const char *path)
{
    char *abs = path_make_absolute(path, p->workspace);
    char *c = path_canon(abs);
    free(abs);
    bool denied = false;
    for (size_t i = 0; !denied && i < p->deny_read.n; i++) {
        char *d = path_canon(p->deny_read.v[i]);
        if (sandbox_path_under(c, d)) {
            denied = true;
            /* A writable path inside the denied one is granted whole. */
            char *ws = p->workspace ? path_canon(p->workspace) : NULL;
            if (ws && sandbox_path_under(ws, d) && strcmp(ws, d) != 0 && sandbox_path_under(c, ws))
                denied = false;
            free(ws);
            for (size_t j = 0; denied && j < p->writable.n; j++) {
                char *w = path_canon(p->writable.v[j]);
                if (sandbox_path_under(w, d) && strcmp(w, d) != 0 && sandbox_path_under(c, w))
                    denied = false;
                free(w);
            }
        }
        free(d);
    }
    free(c);
    return denied;
}


static bool deny_read_cb(const void *ctx, const char *path)
{
    return sandbox_path_read_denied(ctx, path);
}

const secrets_deny *sandbox_secrets_deny(const sandbox_policy *p, secrets_deny *buf)
{
    if (!p || !p->enabled)
        return NULL;
    *buf = (secrets_deny){
        .read_denied = deny_read_cb,
        .ctx = p,
        .paths = p->deny_read.v,
        .n = p->deny_read.n,
        .confines_commands = sandbox_supported() > 0,
    };
    return buf;
}

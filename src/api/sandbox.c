/* sandbox.c — loom_sandbox_confine_self: the sandbox policy of a folder's
 * settings applied to the calling process, for `loom sandbox` (a person
 * trying the policy the agent's commands get), and loom_sandbox_probe. Builds the same policy the
 * agent's Bash tool would, from the same settings and trust filter. Called
 * once, before exec, on the caller's only thread. */
#include "api/internal.h"

#include "sandbox/sandbox.h"

int loom_sandbox_probe(const char **why)
{
    int abi = sandbox_supported();
    if (why)
        *why = abi < 1 ? sandbox_unsupported_reason() : NULL;
    return abi < 1 ? 0 : abi;
}

/* Frees the policy and the extra paths on every return path. */
static int finish(sandbox_policy *p, int rc)
{
    if (p)
        sandbox_policy_free(p);
    return rc;
}

int loom_sandbox_confine_self(const char *cwd, bool allow_network, const char *const *writable,
                              size_t n_writable, loom_notice_fn notice, void *notice_ctx,
                              const char **why_unsupported, loom_status *st)
{
    if (!cwd || !why_unsupported || (n_writable && !writable))
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "loom_sandbox_confine_self: cwd, why_unsupported and "
                              "writable (when n_writable > 0) must not be NULL");
    *why_unsupported = NULL;
    loom_error err;
    loom_error_clear(&err);
    json_t *notices = json_array();
    json_t *block = sandbox_settings_load(cwd, notices, &err);
    size_t ni;
    json_t *n;
    json_array_foreach(notices, ni, n)
        if (notice)
            notice(notice_ctx, json_string_value(n));
    json_decref(notices);
    sandbox_policy p;
    if (!block || sandbox_policy_from_settings(block, cwd, &p, &err) != 0) {
        json_decref(block);
        api_status_from(st, &err);
        return -1;
    }
    json_decref(block);
    /* Asking for the sandbox by name turns it on, whatever "enabled" says. */
    p.enabled = true;
    if (allow_network)
        p.network = SANDBOX_NET_ALLOW;
    for (size_t k = 0; k < n_writable; k++)
        sandbox_paths_add(&p.writable, writable[k], cwd);

    if (sandbox_supported() < 1) {
        *why_unsupported = sandbox_unsupported_reason();
        if (p.on_unsupported == SANDBOX_UNSUPPORTED_REFUSE) {
            api_status_set(st, LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY,
                           "the sandbox is not supported here (%s)", *why_unsupported);
            return finish(&p, -1);
        }
        api_status_ok(st);
        return finish(&p, 1);
    }
    char msg[512];
    if (sandbox_apply(&p, msg, sizeof msg) != 0) {
        api_status_set(st, LOOM_ERR_RUN_BLOCKED_BY_CAPABILITY, "%s", msg);
        return finish(&p, -1);
    }
    api_status_ok(st);
    return finish(&p, 0);
}

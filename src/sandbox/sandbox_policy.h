/* sandbox_policy.h — what a command sandbox policy says (sandbox_policy),
 * where it comes from (the "sandbox" block of the settings files), and where a
 * path falls under it. Built by sandbox_policy.c; put on a process by
 * sandbox.h. A policy is a plain value: each session's governance holds its
 * own (governance/governance.h), so two sessions in one process never share
 * one. Threading: a policy is built by one thread, then only read.
 */
#ifndef LOOM_SANDBOX_SANDBOX_POLICY_H
#define LOOM_SANDBOX_SANDBOX_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "policy/secrets.h"

/* DENY: no sockets but socketpair and allowUnixSockets. ALLOW: open.
 * PROXY: as DENY, plus TCP to Loom's filtering proxy on loopback, which
 * lets through only the hosts of allowed_domains (sandbox/proxy/proxy.h). */
typedef enum { SANDBOX_NET_DENY = 0, SANDBOX_NET_ALLOW, SANDBOX_NET_PROXY } sandbox_network;

/* What to do where the kernel cannot sandbox (no Landlock, no seccomp). */
typedef enum {
    SANDBOX_UNSUPPORTED_REFUSE = 0, /* do not run the command */
    SANDBOX_UNSUPPORTED_WARN,       /* run it unsandboxed, with a notice */
} sandbox_on_unsupported;

/* A list of owned, absolute path strings. */
typedef struct sandbox_paths {
    char **v;
    size_t n;
} sandbox_paths;

typedef struct sandbox_policy {
    bool enabled;
    char *workspace;          /* absolute; writable */
    sandbox_paths writable;   /* extra writable paths (settings, --write) */
    sandbox_paths temp;       /* /tmp, /var/tmp, /dev/shm, $TMPDIR unless disabled */
    sandbox_paths deny_read;  /* the defaults (~/.ssh, …) plus configured ones */
    sandbox_paths allow_unix; /* Unix socket paths connect() may reach with the network denied */
    sandbox_network network;
    sandbox_paths allowed_domains; /* network.allowedDomains (host names, not paths) */
    sandbox_on_unsupported on_unsupported;
    bool confine_hooks;       /* "hooks": true — command hooks run confined too */
} sandbox_policy;

/* Fills p with the defaults for workspace (copied; made absolute against the
 * cwd when relative): enabled false, temp dirs writable, the default denied
 * read paths under $HOME, network denied, refuse when unsupported. Free with
 * sandbox_policy_free. */
void sandbox_policy_init(sandbox_policy *p, const char *workspace);
void sandbox_policy_free(sandbox_policy *p);
/* Appends a copy of path to the list, expanding a leading "~/" to $HOME and
 * resolving a relative path against base (NULL = the cwd). */
void sandbox_paths_add(sandbox_paths *l, const char *path, const char *base);

/* Builds a policy from a settings "sandbox" block (or from a whole settings
 * document holding one): {"enabled", "writablePaths", "denyRead", "network":
 * "deny"|"allow", "onUnsupported": "refuse"|"warn", "writableTempDirs",
 * "allowUnixSockets": [paths]} (Claude Code's "network": {"allowUnixSockets",
 * "allowedDomains"} is read too; a non-empty allowedDomains makes the
 * network SANDBOX_NET_PROXY).
 * NULL or a missing block gives the defaults (sandbox disabled). Unknown keys
 * are ignored so settings written for other harnesses load; a known key of
 * the wrong type is an error naming it. On error p is left empty (freeable). */
int sandbox_policy_from_settings(const json_t *sandbox_settings, const char *workspace,
                                 sandbox_policy *p, loom_error *err);

/* Reads the "sandbox" blocks of the settings files (base/settings.h's
 * layers: the user's, then CWD/.loom/settings.json, then
 * CWD/.loom/settings.local.json, each with Claude Code's file of its level
 * just below it — base/settings.h) and merges them: a later file's scalar wins,
 * path lists are concatenated. While the user does not trust CWD
 * (trust_workspace_trusted) the two project files' blocks pass through
 * trust_filter first, so they can only tighten. notices (NULL: not wanted)
 * gets the settings schema's warnings, then one string per dropped key.
 * Returns a new object (caller decrefs; empty when no file has a block) or
 * NULL with err set for an unreadable or malformed file. */
json_t *sandbox_settings_load(const char *cwd, json_t *notices, loom_error *err);
/* Merges one file's "sandbox" block into acc, as sandbox_settings_load does
 * from disk: the path lists (writablePaths, denyRead, allowUnixSockets) add
 * up — a project adds to what the user denied, never silently drops it —
 * and any other key is replaced. */
void sandbox_settings_merge(json_t *acc, const json_t *block);

/* A deep copy of src into dst (free with sandbox_policy_free). */
void sandbox_policy_copy(sandbox_policy *dst, const sandbox_policy *src);

/* The policy of the settings files for cwd, as the sandbox reads them itself
 * (sandbox_settings_load, then sandbox_policy_from_settings): 0 with *p filled
 * (enabled or not), or -1 with err set and p left empty (freeable). */
int sandbox_policy_load(const char *cwd, sandbox_policy *p, loom_error *err);

/* Whether path (absolute) lies in the policy's writable set / under one of
 * its denied read paths. Paths are compared after resolving symlinks of the
 * part that exists. */
bool sandbox_path_writable(const sandbox_policy *p, const char *path);
bool sandbox_path_read_denied(const sandbox_policy *p, const char *path);


/* The policy's denyRead list as the secret checks of policy/secrets.h see
 * it (they sit below the sandbox and cannot read a policy): buf filled and
 * returned when p is enabled, else NULL (no sandbox: the default stores
 * only). buf borrows p, which must outlive it. */
const secrets_deny *sandbox_secrets_deny(const sandbox_policy *p, secrets_deny *buf);

#endif

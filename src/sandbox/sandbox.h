/* sandbox.h — the OS sandbox for commands Loom runs for the model: what a
 * policy says (sandbox_policy), where it comes from (the "sandbox" block of
 * the settings files), and how it is put on a child process between fork and
 * exec (Landlock for files and TCP, a seccomp filter for socket families and
 * for the metadata calls Landlock does not cover, with a supervisor in Loom
 * that judges the paths seccomp cannot read: sandbox_notify.c).
 *
 * The policy: read and execute everywhere except the denied paths; write only
 * in the workspace, the temp dirs, the extra writable paths and a few devices;
 * no metadata change (chmod, chown, utimes, xattrs) outside the writable
 * area; no network unless the policy allows it, Unix sockets included (but
 * socketpair, and the paths allowUnixSockets lists). Landlock and
 * seccomp are inherited, so the command's every descendant is confined too and
 * nothing in the sandbox can lift it. See docs/sandbox.md.
 *
 * Two ways to apply it:
 *   - sandbox_prepare() in the parent, then sandbox_prep_apply() in the child
 *     (proc_spec.child_setup = sandbox_child_setup): the child only makes
 *     system calls, which is what a child of a threaded process may do.
 *   - sandbox_apply() in the child does both steps; for single-threaded
 *     callers (`loom sandbox`, tests, benchmarks).
 */
#ifndef LOOM_SANDBOX_SANDBOX_H
#define LOOM_SANDBOX_SANDBOX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

typedef enum { SANDBOX_NET_DENY = 0, SANDBOX_NET_ALLOW } sandbox_network;

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
 * "allowUnixSockets": [paths]} (Claude Code's "network": {"allowUnixSockets"}
 * is read too).
 * NULL or a missing block gives the defaults (sandbox disabled). Unknown keys
 * are ignored so settings written for other harnesses load; a known key of
 * the wrong type is an error naming it. On error p is left empty (freeable). */
int sandbox_policy_from_settings(const json_t *sandbox_settings, const char *workspace,
                                 sandbox_policy *p, loom_error *err);

/* Reads the "sandbox" blocks of the settings files (base/settings.h's
 * layers: the user's, then CWD/.loom/settings.json, then
 * CWD/.loom/settings.local.json) and merges them: a later file's scalar wins,
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

/* The highest Landlock ABI this kernel offers (capped by $LOOM_SANDBOX_ABI
 * when set: "0" pretends there is none, for tests), or 0 when Landlock or
 * seccomp is missing and commands cannot be sandboxed. Cached after the
 * first call; thread-safe. */
int sandbox_supported(void);
/* Why sandbox_supported() said 0 (a static string), or NULL when it did not. */
const char *sandbox_unsupported_reason(void);

/* Everything the child needs, built in the parent: an open Landlock ruleset
 * and the seccomp program. */
typedef struct sandbox_prep sandbox_prep;

/* Builds the rules for p (must be enabled and supported; p must outlive
 * *out, the supervisor judges by it). 0, or -1 with a message in err. *out is
 * freed with sandbox_prep_free. */
int sandbox_prepare(const sandbox_policy *p, sandbox_prep **out, char *err, size_t cap);
/* In the child: no_new_privs, Landlock, seccomp. Only system calls, so it is
 * safe after fork in a threaded process. 0, or -1 with a message in err. */
int sandbox_prep_apply(const sandbox_prep *prep, char *err, size_t cap);
void sandbox_prep_free(sandbox_prep *prep);
/* proc_spec.child_setup adapter: ctx is a sandbox_prep. When the proc_spec
 * also has supervise = sandbox_supervise (same ctx), the metadata calls and
 * (with allowUnixSockets) connect() are judged path by path by Loom;
 * without it they are refused outright (EPERM; connect EACCES). */
int sandbox_child_setup(void *ctx, char *msg, size_t cap);
/* proc_spec.supervise adapter (sandbox_notify.c): answers one seccomp
 * notification of the confined command on fd. ctx is the sandbox_prep. */
void sandbox_supervise(void *ctx, int fd);
const sandbox_policy *sandbox_prep_policy(const sandbox_prep *prep);

/* prepare + apply + free in the calling process: confines the caller and
 * everything it starts from now on. For a child of a single-threaded parent
 * (it allocates). 0, or -1 with a message in err. */
int sandbox_apply(const sandbox_policy *p, char *err, size_t cap);

/* The policy the Bash tool uses until tool_ctx carries one. The pointer is
 * kept, not copied: it must outlive every command (NULL clears it). */
void sandbox_set_default(const sandbox_policy *p);
/* The policy for commands run in cwd: the one set with sandbox_set_default,
 * or else (a stopgap until the settings wiring lands) the one built from the
 * settings files for cwd, loaded once per process. NULL when there is none
 * (the sandbox is disabled). When the settings are invalid, NULL with err set:
 * the caller must not run the command unsandboxed. */
const sandbox_policy *sandbox_default_for(const char *cwd, loom_error *err);

/* Whether path (absolute) lies in the policy's writable set / under one of
 * its denied read paths. Paths are compared after resolving symlinks of the
 * part that exists. */
bool sandbox_path_writable(const sandbox_policy *p, const char *path);
bool sandbox_path_read_denied(const sandbox_policy *p, const char *path);

/* The supervisor's pieces (sandbox_notify.c), public for tests.
 * sandbox_resolve_for: path (relative to base, an absolute directory)
 * canonical as thread tid sees it — symlinks followed (the last one only
 * when follow_last), "/proc/self" being tid's. NULL, errno set, when a
 * component does not exist or names no path (a pipe's fd). Caller frees.
 * sandbox_meta_allowed: a canonical path's metadata may change: it lies in
 * the workspace or writablePaths, or beneath (not at) a temp dir, and not
 * under a denied read path; devices never. sandbox_unix_allowed: a
 * canonical socket path is under allowUnixSockets. */
char *sandbox_resolve_for(pid_t tid, const char *base, const char *path, bool follow_last);
bool sandbox_meta_allowed(const sandbox_policy *p, const char *canon);
bool sandbox_unix_allowed(const sandbox_policy *p, const char *canon);

#endif

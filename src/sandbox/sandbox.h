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
 * The policy itself (its settings, where a path falls) is sandbox_policy.h;
 * this header is how it is put on a process: landlock.c (the ruleset, the
 * prep, sandbox_apply), seccomp.c (the programs), sandbox_notify.c (the
 * supervisor).
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
#include "sandbox/sandbox_policy.h"

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
/* With sandbox.network.allowedDomains, the prep runs the filtering proxy
 * (sandbox/proxy/proxy.h) until sandbox_prep_free: its loopback port (0:
 * none), and how many requests it refused (the hosts, comma-separated, in
 * hosts). */
unsigned sandbox_prep_proxy_port(const sandbox_prep *prep);
size_t sandbox_prep_proxy_refused(const sandbox_prep *prep, char *hosts, size_t cap);
/* The proxy variables a command needs to find it (http_proxy, https_proxy,
 * all_proxy, both cases; NO_PROXY dropped), replacing inherited ones in
 * env (a NULL-terminated malloc'd array of malloc'd strings, as
 * shell_env_new gives; reallocated, returned). env unchanged without a
 * proxy. sandbox_apply sets them in the calling process itself. */
char **sandbox_env_with_proxy(const sandbox_prep *prep, char **env);
extern const char *const sandbox_proxy_vars[];
extern const size_t sandbox_n_proxy_vars;

/* prepare + apply + free in the calling process: confines the caller and
 * everything it starts from now on. For a child of a single-threaded parent
 * (it allocates). 0, or -1 with a message in err. */
int sandbox_apply(const sandbox_policy *p, char *err, size_t cap);

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

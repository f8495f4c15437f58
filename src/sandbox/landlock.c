/* landlock.c — puts the command sandbox (sandbox.h) on a process: the
 * Landlock ruleset built from a policy (sandbox_policy.c), joined with the
 * seccomp program (seccomp.c) into a sandbox_prep, entered in the child with
 * system calls only, and sandbox_apply's supervisor. Threading: the support
 * probe runs once (pthread_once); a prep is built by one thread and then
 * only read.
 *
 * Landlock only ever allows: a ruleset names the access rights it handles,
 * and everything handled is denied except beneath the paths a rule opens up.
 * "Read everywhere but ~/.ssh" is therefore built as a walk: from "/" down to
 * each denied path, every entry beside the way is allowed whole, the
 * directories on the way get only the right to be listed, and the denied path
 * itself gets nothing. Writable paths are granted the same way, so a denied
 * path inside the workspace stays unreadable.
 *
 * Landlock's TCP rights (ABI 4+) cover connect and bind; the seccomp filter
 * covers the rest of the network by refusing to create any socket but
 * socketpair()'s (UDP, raw, packet, netlink, Unix…), whatever the ABI. With
 * allowUnixSockets, stream Unix sockets can be made and each connect() goes
 * to the supervisor (sandbox_notify.c), as do the metadata calls (chmod,
 * chown, utimes, xattrs, the inode-flag ioctls), which Landlock does not
 * cover at all. */
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/str.h"
#include "sandbox/internal.h"
#include "sandbox/proxy/proxy.h"

/* ---- Landlock's user API ---------------------------------------------------
 * Declared here rather than taken from <linux/landlock.h>: the build hosts'
 * kernel headers may predate the ABI the running kernel offers (Debian 12's
 * stop at ABI 2), and what counts is the running kernel. Values are the
 * kernel's (Documentation/userspace-api/landlock.rst). */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */

#define LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */

/* Rights that make sense on a file (a rule on a non-directory with any other
 * right is refused with EINVAL). */
#define LL_FS_FILE_RIGHTS                                                                        \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_FS_READ_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_FS_DEVICE_RIGHTS                                                                      \
    (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV | LL_FS_READ_DIR)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

struct ll_net_port_attr {
    uint64_t allowed_access;
    uint64_t port;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

/* ---- support --------------------------------------------------------------- */

static pthread_once_t g_support_once = PTHREAD_ONCE_INIT;
static int g_abi;
static const char *g_unsupported_why;

static void probe_support(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 1) {
        g_unsupported_why = errno == EOPNOTSUPP ? "Landlock is disabled in this kernel"
                                                : "this kernel has no Landlock (Linux 5.13+)";
        g_abi = 0;
        return;
    }
    /* PR_GET_SECCOMP fails with EINVAL only where seccomp is compiled out. */
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
        g_unsupported_why = "this kernel has no seccomp filtering";
        g_abi = 0;
        return;
    }
    const char *cap = getenv("LOOM_SANDBOX_ABI");
    if (cap && cap[0]) {
        long c = strtol(cap, NULL, 10);
        if (c < abi)
            abi = c < 0 ? 0 : c;
        if (abi == 0) {
            g_unsupported_why = "LOOM_SANDBOX_ABI=0 says to treat the sandbox as unsupported";
            g_abi = 0;
            return;
        }
    }
    g_abi = (int)abi;
}

int sandbox_supported(void)
{
    pthread_once(&g_support_once, probe_support);
    return g_abi;
}

const char *sandbox_unsupported_reason(void)
{
    pthread_once(&g_support_once, probe_support);
    return g_abi > 0 ? NULL : g_unsupported_why;
}

static uint64_t handled_fs_for(int abi)
{
    uint64_t fs = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR |
                  LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR |
                  LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK |
                  LL_FS_MAKE_SYM;
    if (abi >= 2)
        fs |= LL_FS_REFER;
    if (abi >= 3)
        fs |= LL_FS_TRUNCATE;
    if (abi >= 5)
        fs |= LL_FS_IOCTL_DEV;
    return fs;
}

/* ---- the Landlock ruleset --------------------------------------------------- */

struct sandbox_prep {
    int ruleset_fd;
    const sandbox_policy *policy;         /* what the supervisor judges by */
    const struct sock_filter *bpf;        /* metadata refused; shared, never freed */
    unsigned short bpf_len;
    const struct sock_filter *notify_bpf; /* metadata to the supervisor */
    unsigned short notify_len;
    net_proxy *proxy;                     /* SANDBOX_NET_PROXY: the filtering proxy */
};

const sandbox_policy *sandbox_prep_policy(const sandbox_prep *prep)
{
    return prep ? prep->policy : NULL;
}

unsigned sandbox_prep_proxy_port(const sandbox_prep *prep)
{
    return prep && prep->proxy ? net_proxy_port(prep->proxy) : 0;
}

size_t sandbox_prep_proxy_refused(const sandbox_prep *prep, char *hosts, size_t cap)
{
    if (hosts && cap)
        hosts[0] = '\0';
    return prep && prep->proxy ? net_proxy_refused(prep->proxy, hosts, cap) : 0;
}

const char *const sandbox_proxy_vars[] = {"http_proxy", "https_proxy", "HTTP_PROXY",
                                          "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
const size_t sandbox_n_proxy_vars = sizeof sandbox_proxy_vars / sizeof *sandbox_proxy_vars;

char **sandbox_env_with_proxy(const sandbox_prep *prep, char **env)
{
    unsigned port = sandbox_prep_proxy_port(prep);
    if (!env || !port)
        return env;
    size_t n = 0;
    while (env[n])
        n++;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool proxy_var = strncasecmp(env[i], "no_proxy=", 9) == 0;
        for (size_t j = 0; j < sandbox_n_proxy_vars && !proxy_var; j++) {
            size_t l = strlen(sandbox_proxy_vars[j]);
            proxy_var = strncmp(env[i], sandbox_proxy_vars[j], l) == 0 && env[i][l] == '=';
        }
        if (proxy_var)
            free(env[i]); /* ours replace what the command would inherit */
        else
            env[k++] = env[i];
    }
    char **out = xrealloc(env, (k + sandbox_n_proxy_vars + 1) * sizeof *out);
    for (size_t j = 0; j < sandbox_n_proxy_vars; j++) {
        char v[64];
        snprintf(v, sizeof v, "%s=http://127.0.0.1:%u", sandbox_proxy_vars[j], port);
        out[k++] = xstrdup(v);
    }
    out[k] = NULL;
    return out;
}

typedef struct {
    int ruleset;
    uint64_t handled;
    char **deny; /* canonical */
    size_t ndeny;
    char *err;
    size_t cap;
    size_t rules;
} builder;

static bool deny_exact(const builder *b, const char *path)
{
    for (size_t i = 0; i < b->ndeny; i++) {
        if (strcmp(b->deny[i], path) == 0)
            return true;
    }
    return false;
}

/* Some denied path lies strictly beneath path. */
static bool deny_below(const builder *b, const char *path)
{
    for (size_t i = 0; i < b->ndeny; i++) {
        if (strcmp(b->deny[i], path) != 0 && sandbox_path_under(b->deny[i], path))
            return true;
    }
    return false;
}

static int add_rule(builder *b, int fd, uint64_t mask, bool is_dir, const char *path)
{
    if (!is_dir)
        mask &= LL_FS_FILE_RIGHTS;
    mask &= b->handled;
    if (!mask)
        return 0;
    struct ll_path_beneath_attr attr = {.allowed_access = mask, .parent_fd = fd};
    if (syscall(SYS_landlock_add_rule, b->ruleset, LL_RULE_PATH_BENEATH, &attr, 0) != 0) {
        snprintf(b->err, b->cap, "landlock_add_rule %s: %s", path, strerror(errno));
        return -1;
    }
    b->rules++;
    return 0;
}

/* Grants mask beneath path (open as fd, O_PATH), except beneath the denied
 * paths: a directory with a denied path inside is not granted whole but
 * opened and walked, each entry granted in turn. Symlinks in a walked
 * directory are skipped: access through them is checked on their target,
 * which has its own place in the walk. */
static int grant(builder *b, int fd, char *path, size_t len, uint64_t mask)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    if (S_ISLNK(st.st_mode) || deny_exact(b, path))
        return 0;
    bool dir = S_ISDIR(st.st_mode);
    if (!dir || !deny_below(b, path))
        return add_rule(b, fd, mask, dir, path);

    /* On the way to a denied path: listable (ls ~ keeps working), but that
     * right reaches the denied directory too, so its names can be listed;
     * its contents cannot be read. */
    if (add_rule(b, fd, mask & LL_FS_READ_DIR, true, path) != 0)
        return -1;
    int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return 0; /* cannot list it: nothing beneath is granted (fail closed) */
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || e->d_type == DT_LNK)
            continue;
        size_t nlen = strlen(name);
        bool root = len == 1;
        if (len + (root ? 0 : 1) + nlen >= PATH_MAX)
            continue;
        size_t clen = len;
        if (!root)
            path[clen++] = '/';
        memcpy(path + clen, name, nlen + 1);
        clen += nlen;
        int cfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (cfd >= 0) {
            rc = grant(b, cfd, path, clen, mask);
            close(cfd);
        }
        path[len] = '\0';
    }
    closedir(d);
    return rc;
}

/* Grants mask beneath a configured path (symlinks followed). A path that
 * does not exist is skipped: there is nothing there to grant. */
static int grant_path(builder *b, const char *configured, uint64_t mask)
{
    char *canon = realpath(configured, NULL);
    if (!canon)
        return 0;
    char path[PATH_MAX];
    size_t len = strlen(canon);
    if (len >= sizeof path) {
        free(canon);
        return 0;
    }
    memcpy(path, canon, len + 1);
    free(canon);
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int rc = grant(b, fd, path, len, mask);
    close(fd);
    return rc;
}

/* guard: the command will be a child of this process (sandbox_prepare),
 * which its signals must not reach; not when this process itself enters
 * the sandbox and execs the command (sandbox_apply). */
static int prepare(const sandbox_policy *p, bool guard, sandbox_prep **out, char *err,
                   size_t cap)
{
    *out = NULL;
    int abi = sandbox_supported();
    if (abi < 1) {
        snprintf(err, cap, "the sandbox is not supported here: %s", sandbox_unsupported_reason());
        return -1;
    }
    bool proxy = p->network == SANDBOX_NET_PROXY;
    bool deny_net = p->network == SANDBOX_NET_DENY || proxy;
    int variant = (deny_net ? BPF_NET_DENY : 0) | (proxy ? BPF_NET_PROXY : 0) |
                  (deny_net && p->allow_unix.n ? BPF_UNIX_LIST : 0) | (guard ? BPF_GUARD : 0);
    unsigned short bpf_len = 0, notify_len = 0;
    const struct sock_filter *bpf = sandbox_bpf_get(variant, &bpf_len, err, cap);
    const struct sock_filter *notify_bpf =
        bpf ? sandbox_bpf_get(variant | BPF_NOTIFY, &notify_len, err, cap) : NULL;
    if (!bpf || !notify_bpf)
        return -1;

    struct ll_ruleset_attr attr = {.handled_access_fs = handled_fs_for(abi)};
    size_t attr_size = sizeof attr.handled_access_fs;
    if (abi >= 4) {
        /* Handling TCP rights without rules for them denies them all. */
        attr.handled_access_net = deny_net ? (LL_NET_BIND_TCP | LL_NET_CONNECT_TCP) : 0;
        attr_size = offsetof(struct ll_ruleset_attr, scoped);
    }
    if (abi >= 6 && deny_net) {
        /* Abstract Unix sockets made outside the sandbox are out of reach
         * (seccomp refuses them too; this also covers inherited sockets). */
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET;
        attr_size = sizeof attr;
    }
    int rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rfd < 0) {
        snprintf(err, cap, "landlock_create_ruleset: %s", strerror(errno));
        return -1;
    }
    /* The proxy: its listener is bound now, so its port can go into the
     * rules (Landlock's by port; the supervisor's by address and port). */
    net_proxy *px = NULL;
    if (proxy) {
        px = net_proxy_open((const char *const *)p->allowed_domains.v, p->allowed_domains.n, err,
                            cap);
        if (!px || (guard && net_proxy_serve(px, err, cap) != 0)) {
            net_proxy_close(px);
            close(rfd);
            return -1;
        }
        struct ll_net_port_attr na = {.allowed_access = LL_NET_CONNECT_TCP,
                                      .port = net_proxy_port(px)};
        if (abi >= 4 && syscall(SYS_landlock_add_rule, rfd, LL_RULE_NET_PORT, &na, 0) != 0) {
            snprintf(err, cap, "landlock_add_rule (the proxy's port): %s", strerror(errno));
            net_proxy_close(px);
            close(rfd);
            return -1;
        }
    }

    builder b = {.ruleset = rfd, .handled = attr.handled_access_fs, .err = err, .cap = cap};
    b.deny = xcalloc(p->deny_read.n + 1, sizeof *b.deny);
    for (size_t i = 0; i < p->deny_read.n; i++) {
        char *c = realpath(p->deny_read.v[i], NULL);
        if (c)
            b.deny[b.ndeny++] = c; /* one that does not exist has nothing to hide */
    }

    int rc = grant_path(&b, "/", LL_FS_READ_RIGHTS);
    /* Everything but making device nodes: a node made in the workspace
     * (mknod ./disk b 8 0) would open the raw disk or memory to a command
     * run as root, and every file with it. Handled, so refused everywhere. */
    uint64_t all = b.handled & ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK);
    if (rc == 0 && p->workspace)
        rc = grant_path(&b, p->workspace, all);
    for (size_t i = 0; rc == 0 && i < p->writable.n; i++)
        rc = grant_path(&b, p->writable.v[i], all);
    for (size_t i = 0; rc == 0 && i < p->temp.n; i++)
        rc = grant_path(&b, p->temp.v[i], all);
    for (size_t i = 0; rc == 0 && i < sandbox_n_devices; i++)
        rc = grant_path(&b, sandbox_devices[i], LL_FS_DEVICE_RIGHTS | LL_FS_READ_RIGHTS);

    for (size_t i = 0; i < b.ndeny; i++)
        free(b.deny[i]);
    free(b.deny);
    if (rc != 0) {
        net_proxy_close(px);
        close(rfd);
        return -1;
    }
    sandbox_prep *prep = xcalloc(1, sizeof *prep);
    prep->proxy = px;
    prep->ruleset_fd = rfd;
    prep->policy = p;
    prep->bpf = bpf;
    prep->bpf_len = bpf_len;
    prep->notify_bpf = notify_bpf;
    prep->notify_len = notify_len;
    *out = prep;
    return 0;
}

int sandbox_prepare(const sandbox_policy *p, sandbox_prep **out, char *err, size_t cap)
{
    return prepare(p, true, out, err, cap);
}

void sandbox_prep_free(sandbox_prep *prep)
{
    if (!prep)
        return;
    if (prep->ruleset_fd >= 0)
        close(prep->ruleset_fd);
    net_proxy_close(prep->proxy);
    free(prep);
}

/* ---- in the child: system calls only ---------------------------------------- */

/* Message building without stdio or locale (not async-signal-safe). */
static void msg_put(char *buf, size_t cap, const char *s)
{
    if (!buf || cap == 0)
        return;
    size_t n = strnlen(buf, cap - 1);
    while (*s && n + 1 < cap)
        buf[n++] = *s++;
    buf[n] = '\0';
}

static void msg_errno(char *buf, size_t cap, const char *what, int e)
{
    if (buf && cap)
        buf[0] = '\0';
    msg_put(buf, cap, "sandbox: ");
    msg_put(buf, cap, what);
    msg_put(buf, cap, ": ");
    const char *name = e == EPERM        ? "operation not permitted (EPERM)"
                       : e == EINVAL     ? "invalid argument (EINVAL)"
                       : e == ENOSYS     ? "not provided by this kernel (ENOSYS)"
                       : e == EOPNOTSUPP ? "not supported (EOPNOTSUPP)"
                       : e == EBADF      ? "bad file descriptor (EBADF)"
                       : e == E2BIG      ? "too many nested sandboxes (E2BIG)"
                       : e == ENOMEM     ? "out of memory (ENOMEM)"
                       : e == EFAULT     ? "bad address (EFAULT)"
                                         : NULL;
    if (name) {
        msg_put(buf, cap, name);
        return;
    }
    char num[16];
    int i = (int)sizeof num - 1;
    num[i] = '\0';
    unsigned v = (unsigned)(e < 0 ? -e : e);
    do
        num[--i] = (char)('0' + v % 10);
    while ((v /= 10) && i > 0);
    msg_put(buf, cap, "errno ");
    msg_put(buf, cap, num + i);
}

/* Enters the sandbox; pass_sock >= 0 is where the seccomp listener goes
 * (to a supervisor), else the metadata calls are refused outright. */
static int prep_apply(const sandbox_prep *prep, int pass_sock, char *err, size_t cap)
{
    /* Required for an unprivileged Landlock or seccomp, and wanted anyway: a
     * setuid program must not be a way out of the sandbox. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        msg_errno(err, cap, "PR_SET_NO_NEW_PRIVS", errno);
        return -1;
    }
    if (prep->ruleset_fd >= 0 &&
        syscall(SYS_landlock_restrict_self, prep->ruleset_fd, 0) != 0) {
        msg_errno(err, cap, "landlock_restrict_self", errno);
        return -1;
    }
    /* With a supervisor in the parent: the filter that asks it, and its
     * listener handed over. The listener is close-on-exec, so the command
     * never holds it (it could answer for itself). A kernel without
     * listeners (before 5.0), or a second supervised filter in the same
     * tree, gets the filter that refuses instead. */
    if (prep->notify_bpf && pass_sock >= 0) {
        struct sock_fprog prog = {.len = prep->notify_len,
                                  .filter = (struct sock_filter *)prep->notify_bpf};
        long lfd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                           &prog);
        if (lfd >= 0) {
            int rc = proc_send_fd(pass_sock, (int)lfd);
            close((int)lfd);
            if (rc != 0) {
                /* Nobody would answer: every metadata call would hang. */
                msg_errno(err, cap, "handing the seccomp listener to Loom", errno);
                return -1;
            }
            return 0;
        }
        /* EBUSY: an outer sandbox already has a supervisor (Loom inside a
         * sandboxed command); this one then refuses outright. */
        if (errno != EINVAL && errno != ENOSYS && errno != EBUSY) {
            msg_errno(err, cap, "installing the seccomp filter", errno);
            return -1;
        }
    }
    if (prep->bpf) {
        struct sock_fprog prog = {.len = prep->bpf_len, .filter = (struct sock_filter *)prep->bpf};
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
            msg_errno(err, cap, "installing the seccomp filter", errno);
            return -1;
        }
    }
    return 0;
}

int sandbox_prep_apply(const sandbox_prep *prep, char *err, size_t cap)
{
    return prep_apply(prep, -1, err, cap);
}

int sandbox_child_setup(void *ctx, char *msg, size_t cap)
{
    /* proc_run hands the listener to its supervise callback, when it has
     * one (it is then sandbox_supervise). */
    int sock = proc_child_can_pass_fd() ? proc_child_pass_sock() : -1;
    return prep_apply((const sandbox_prep *)ctx, sock, msg, cap);
}

/* The supervisor of sandbox_apply: a process of its own, outside the
 * sandbox, that answers the listener until no confined process is left. */
static _Noreturn void supervisor_main(sandbox_prep *prep, int sock)
{
    /* A Ctrl-C meant for the command must not take its supervisor first
     * (the command's calls would then fail, as with no supervisor). */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* Holding the command's stdout would keep a reader of it waiting. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int i = 0; null >= 0 && i < 3; i++)
        dup2(null, i);
    int lfd = proc_recv_fd(sock, true);
    close(sock);
    if (lfd < 0)
        _exit(0);
    /* The filtering proxy lives here too, outside the sandbox, as long as
     * a confined process does. */
    char perr[256];
    if (prep->proxy)
        (void)net_proxy_serve(prep->proxy, perr, sizeof perr);
    for (;;) {
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        int pr = poll(&pfd, 1, -1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0 || (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)))
            _exit(0);
        if (pfd.revents & POLLIN)
            sandbox_supervise(prep, lfd);
    }
}

int sandbox_apply(const sandbox_policy *p, char *err, size_t cap)
{
    sandbox_prep *prep = NULL;
    if (prepare(p, false, &prep, err, cap) != 0)
        return -1;
    /* The supervisor is forked before the caller enters the sandbox, and
     * twice, so that the command the caller execs has no child it does not
     * know about. Without one, metadata calls are refused outright. */
    int sv[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0) {
        pid_t mid = fork();
        if (mid == 0) {
            close(sv[1]);
            pid_t sup = fork();
            if (sup == 0)
                supervisor_main(prep, sv[0]);
            _exit(sup < 0);
        }
        close(sv[0]);
        int st = 0;
        if (mid < 0 || waitpid(mid, &st, 0) != mid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            close(sv[1]);
            sv[1] = -1;
        }
    }
    /* The proxy's listener is the supervisor's to serve; this process only
     * points its proxy variables at it (before exec, on its only thread). */
    if (prep->proxy) {
        char url[40];
        snprintf(url, sizeof url, "http://127.0.0.1:%u", net_proxy_port(prep->proxy));
        for (size_t i = 0; i < sandbox_n_proxy_vars; i++)
            setenv(sandbox_proxy_vars[i], url, 1);
        unsetenv("NO_PROXY");
        unsetenv("no_proxy");
    }
    int rc = prep_apply(prep, sv[1], err, cap);
    if (sv[1] >= 0)
        close(sv[1]);
    sandbox_prep_free(prep);
    return rc;
}


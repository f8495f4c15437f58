/* sandbox.c — builds and applies the command sandbox (sandbox.h): the policy
 * and its settings, the Landlock ruleset, the seccomp program, and the
 * process-wide default policy the Bash tool reads.
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
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/json.h"
#include "base/proc.h"
#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"
#include "policy/secrets.h"
#include "policy/trust.h"

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

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

/* Devices a command may write (or needs ioctls on) whatever the policy:
 * output thrown away, terminals, pseudo-terminals, randomness. */
static const char *const SANDBOX_DEVICES[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
    "/dev/tty",  "/dev/ptmx", "/dev/pts",
};

/* ---- paths ----------------------------------------------------------------- */

/* path made absolute ("~/" → $HOME, relative → base or the cwd) and folded.
 * Caller frees. */
static char *path_absolute(const char *path, const char *base)
{
    loom_str s = LOOM_STR_INIT;
    const char *home = getenv("HOME");
    if ((path[0] == '~' && (path[1] == '/' || path[1] == '\0')) && home && home[0] == '/') {
        str_puts(&s, home);
        str_putc(&s, '/');
        str_puts(&s, path + 1);
    } else if (path[0] == '/') {
        str_puts(&s, path);
    } else {
        char cwd[PATH_MAX];
        if (!base)
            base = getcwd(cwd, sizeof cwd) ? cwd : "/";
        str_puts(&s, base);
        str_putc(&s, '/');
        str_puts(&s, path);
    }
    char *r = path_fold(s.ptr);
    str_free(&s);
    return r;
}

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
static bool path_under(const char *p, const char *root)
{
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
    l->v[l->n++] = path_absolute(path, base);
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
    p->workspace = path_absolute(workspace && workspace[0] ? workspace : ".", NULL);
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
    memset(p, 0, sizeof *p);
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

    /* A string is ours; an object is Claude Code's network block (proxy
     * ports, domain lists) which Loom does not implement: keep the default,
     * deny, rather than fail on settings a user brought along. */
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
    bool trusted = trust_workspace_trusted(sf.doc[SETTINGS_USER], real ? real : cwd);
    free(real);
    json_t *acc = json_object();
    for (int i = 0; i < SETTINGS_LAYERS; i++) {
        /* The schema let through an object or null (not set). */
        json_t *block = json_object_get(sf.doc[i], "sandbox");
        if (!json_is_object(block))
            continue;
        json_t *kept = NULL;
        if (i != SETTINGS_USER && !trusted) {
            json_t *only = json_pack("{sO}", "sandbox", block);
            json_t *base = json_object();
            json_t *sink = notices ? notices : json_array();
            kept = trust_filter(only, settings_layer_name(i), base, sink);
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

/* ---- the seccomp programs ---------------------------------------------------
 * Built with libseccomp once per variant and kept as raw BPF, so a child
 * installs one with one system call and no allocation. Variants: the network
 * denied or not; with allowUnixSockets or not; metadata calls (and connect)
 * sent to the supervisor (NOTIFY) or refused outright (no supervisor); Loom
 * guarded from its commands' signals (GUARD: the command is a child of this
 * process, not this process after an exec, as under `loom sandbox`). */

enum { BPF_NET_DENY = 1, BPF_UNIX_LIST = 2, BPF_NOTIFY = 4, BPF_GUARD = 8, BPF_VARIANTS = 16 };

static pthread_mutex_t g_bpf_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sock_filter *g_bpf[BPF_VARIANTS]; /* built once per pid, never freed */
static unsigned short g_bpf_len[BPF_VARIANTS];
static pid_t g_bpf_pid[BPF_VARIANTS]; /* the process a GUARD program protects */

/* The calls that change a file's metadata, which Landlock does not handle.
 * Names libseccomp may not know yet are added by number (the same on every
 * architecture: the unified syscall table). */
static const char *const META_CALLS[] = {
    "chmod",    "fchmod",    "fchmodat",  "chown",     "fchown",      "lchown",
    "fchownat", "utime",     "utimes",    "futimesat", "utimensat",   "setxattr",
    "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
};
static const int META_CALLS_NEW[] = {452 /* fchmodat2 */, 463 /* setxattrat */,
                                     466 /* removexattrat */, 469 /* file_setattr */};

/* The ioctl families of the filesystems (the type byte of the command):
 * 'f' (inode flags, ext4, fscrypt, fsverity), 'v' (inode generation), 'X'
 * (fsxattrs, XFS, shutdown) and 0x94 (btrfs, clones, the volume label).
 * Their setters change an inode or a whole filesystem through any
 * descriptor, a read-only one included, so every ioctl of these families
 * goes to the supervisor, which lets the known getters through and judges
 * the rest by where the descriptor's object lies. Matched on the type byte
 * alone (mask 0xff00): the kernel reads the command as 32 bits, so a
 * comparison of the whole 64-bit register would let a setter with garbage
 * in the upper half slip past. */
static const unsigned FS_IOCTL_TYPES[] = {'f', 'v', 'X', 0x94};

/* libseccomp's SCMP_A0_32 leaves datum_b to zero-initialisation, which
 * clang's -Wmissing-field-initializers reports; the zero is intended. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* A pid argument equal to v, read as the kernel reads it (an int: the low
 * 32 bits; garbage in the upper half must not slip past). */
#define PID_ARG_IS(n, v) SCMP_CMP64((n), SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)(v))

/* Signals a command must not send: kill(-1) (every process the user may
 * signal — as root, the machine) always; with GUARD, nothing to Loom
 * itself or its process group either, so a command cannot kill or stop the
 * harness that would end it and outlive its call. tkill names a thread
 * without its process and pidfd_send_signal a process by descriptor
 * (pidfd_open, or a /proc/PID directory), so under GUARD they are refused
 * whole: ENOSYS, which the runtimes that use pidfds (Go) take as "no pidfd
 * support here" and fall back to kill(2). Other processes of the user stay
 * reachable (docs/sandbox.md, Limits). */
static int add_signal_rules(scmp_filter_ctx ctx, int variant)
{
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(kill), 1, PID_ARG_IS(0, -1));
    if (rc != 0 || !(variant & BPF_GUARD))
        return rc;
    pid_t self = getpid(), group = getpgrp();
    const pid_t kill_targets[] = {self, -group};
    for (size_t i = 0; rc == 0 && i < sizeof kill_targets / sizeof *kill_targets; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(kill), 1,
                              PID_ARG_IS(0, kill_targets[i]));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(tgkill), 1, PID_ARG_IS(0, self));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(rt_sigqueueinfo), 1,
                              PID_ARG_IS(0, self));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(rt_tgsigqueueinfo), 1,
                              PID_ARG_IS(0, self));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pidfd_open), 1,
                              PID_ARG_IS(0, self));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(tkill), 0);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(pidfd_send_signal), 0);
    return rc;
}
static int add_rules(scmp_filter_ctx ctx, int variant)
{
    uint32_t meta = variant & BPF_NOTIFY ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof META_CALLS / sizeof *META_CALLS; i++) {
        int nr = seccomp_syscall_resolve_name(META_CALLS[i]);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, meta, nr, 0);
    }
    for (size_t i = 0; rc == 0 && i < sizeof META_CALLS_NEW / sizeof *META_CALLS_NEW; i++)
        rc = seccomp_rule_add(ctx, meta, META_CALLS_NEW[i], 0);
    for (size_t i = 0; rc == 0 && i < sizeof FS_IOCTL_TYPES / sizeof *FS_IOCTL_TYPES; i++)
        rc = seccomp_rule_add(ctx, meta, SCMP_SYS(ioctl), 1,
                              SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xff00,
                                         (uint64_t)FS_IOCTL_TYPES[i] << 8));
    /* io_uring can make sockets and set xattrs without those system calls. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(io_uring_setup), 0);
    if (rc == 0)
        rc = add_signal_rules(ctx, variant);
    if (rc != 0 || !(variant & BPF_NET_DENY))
        return rc;

    /* socket() and socketpair() take int arguments: compare the low 32 bits
     * only, or garbage in the upper half of the register would slip past. */
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socketpair), 1,
                          SCMP_A0_32(SCMP_CMP_NE, AF_UNIX));
    if (rc != 0)
        return rc;
    if (!(variant & BPF_UNIX_LIST))
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 0);
    /* Unix stream and seqpacket sockets only: their peer is fixed by
     * connect(), which the supervisor checks. A datagram socket could send to
     * any path with sendto(); SOCK_RAW is a datagram socket for AF_UNIX. */
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                          SCMP_A0_32(SCMP_CMP_NE, AF_UNIX));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 2,
                              SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX),
                              SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 2,
                              SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX),
                              SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW));
    if (rc == 0)
        rc = seccomp_rule_add(ctx,
                              variant & BPF_NOTIFY ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EACCES),
                              SCMP_SYS(connect), 0);
    return rc;
}
#pragma GCC diagnostic pop

/* The program for variant, built on first use. NULL with err set on failure. */
static const struct sock_filter *bpf_get(int variant, unsigned short *len, char *err, size_t cap)
{
    pthread_mutex_lock(&g_bpf_mu);
    /* A GUARD program names this process: a forked Loom builds its own
     * (the old one stays: a prepared sandbox may still point at it). */
    if (g_bpf[variant] && (variant & BPF_GUARD) && g_bpf_pid[variant] != getpid())
        g_bpf[variant] = NULL;
    if (g_bpf[variant]) {
        *len = g_bpf_len[variant];
        pthread_mutex_unlock(&g_bpf_mu);
        return g_bpf[variant];
    }
    int fd = -1;
    struct sock_filter *prog = NULL;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(err, cap, "building the seccomp filter: seccomp_init failed");
        goto out;
    }
    int rc = add_rules(ctx, variant);
    if (rc != 0) {
        snprintf(err, cap, "building the seccomp filter: seccomp_rule_add: %s", strerror(-rc));
        goto out;
    }
    fd = memfd_create("loom-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, cap, "building the seccomp filter: memfd_create: %s", strerror(errno));
        goto out;
    }
    if ((rc = seccomp_export_bpf(ctx, fd)) != 0) {
        snprintf(err, cap, "building the seccomp filter: seccomp_export_bpf: %s", strerror(-rc));
        goto out;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
        size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
        snprintf(err, cap, "building the seccomp filter: a program of unexpected size %lld",
                 (long long)size);
        goto out;
    }
    prog = xmalloc((size_t)size);
    if (pread(fd, prog, (size_t)size, 0) != (ssize_t)size) {
        snprintf(err, cap, "building the seccomp filter: reading it back: %s", strerror(errno));
        free(prog);
        prog = NULL;
        goto out;
    }
    g_bpf[variant] = prog;
    g_bpf_pid[variant] = getpid();
    g_bpf_len[variant] = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
    *len = g_bpf_len[variant];
out:
    if (fd >= 0)
        close(fd);
    if (ctx)
        seccomp_release(ctx);
    pthread_mutex_unlock(&g_bpf_mu);
    return prog;
}

/* ---- the Landlock ruleset --------------------------------------------------- */

struct sandbox_prep {
    int ruleset_fd;
    const sandbox_policy *policy;         /* what the supervisor judges by */
    const struct sock_filter *bpf;        /* metadata refused; shared, never freed */
    unsigned short bpf_len;
    const struct sock_filter *notify_bpf; /* metadata to the supervisor */
    unsigned short notify_len;
};

const sandbox_policy *sandbox_prep_policy(const sandbox_prep *prep)
{
    return prep ? prep->policy : NULL;
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
        if (strcmp(b->deny[i], path) != 0 && path_under(b->deny[i], path))
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
    bool deny_net = p->network == SANDBOX_NET_DENY;
    int variant = (deny_net ? BPF_NET_DENY : 0) |
                  (deny_net && p->allow_unix.n ? BPF_UNIX_LIST : 0) | (guard ? BPF_GUARD : 0);
    unsigned short bpf_len = 0, notify_len = 0;
    const struct sock_filter *bpf = bpf_get(variant, &bpf_len, err, cap);
    const struct sock_filter *notify_bpf =
        bpf ? bpf_get(variant | BPF_NOTIFY, &notify_len, err, cap) : NULL;
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
    for (size_t i = 0; rc == 0 && i < sizeof SANDBOX_DEVICES / sizeof *SANDBOX_DEVICES; i++)
        rc = grant_path(&b, SANDBOX_DEVICES[i], LL_FS_DEVICE_RIGHTS | LL_FS_READ_RIGHTS);

    for (size_t i = 0; i < b.ndeny; i++)
        free(b.deny[i]);
    free(b.deny);
    if (rc != 0) {
        close(rfd);
        return -1;
    }
    sandbox_prep *prep = xcalloc(1, sizeof *prep);
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
    int rc = prep_apply(prep, sv[1], err, cap);
    if (sv[1] >= 0)
        close(sv[1]);
    sandbox_prep_free(prep);
    return rc;
}

/* ---- the default policy ------------------------------------------------------ */

static _Atomic(const sandbox_policy *) g_default;

void sandbox_set_default(const sandbox_policy *p)
{
    atomic_store(&g_default, p);
}

/* Policies loaded from settings, one per cwd, kept for the process's life:
 * a command may still run under one when another cwd is loaded. */
typedef struct loaded_policy {
    struct loaded_policy *next;
    char *cwd;
    sandbox_policy policy;
    bool ok;
    loom_error err;
} loaded_policy;

static pthread_mutex_t g_loaded_mu = PTHREAD_MUTEX_INITIALIZER;
static loaded_policy *g_loaded;

const sandbox_policy *sandbox_default_for(const char *cwd, loom_error *err)
{
    const sandbox_policy *set = atomic_load(&g_default);
    if (set)
        return set->enabled ? set : NULL;
    char cwd_buf[PATH_MAX];
    if (!cwd)
        cwd = getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : "/";

    pthread_mutex_lock(&g_loaded_mu);
    loaded_policy *lp = g_loaded;
    while (lp && strcmp(lp->cwd, cwd) != 0)
        lp = lp->next;
    if (!lp) {
        lp = xcalloc(1, sizeof *lp);
        lp->cwd = xstrdup(cwd);
        loom_error_clear(&lp->err);
        json_t *block = sandbox_settings_load(cwd, NULL, &lp->err);
        lp->ok = block && sandbox_policy_from_settings(block, cwd, &lp->policy, &lp->err) == 0;
        json_decref(block);
        lp->next = g_loaded;
        g_loaded = lp;
    }
    pthread_mutex_unlock(&g_loaded_mu);
    if (!lp->ok) {
        if (err)
            *err = lp->err;
        return NULL;
    }
    return lp->policy.enabled ? &lp->policy : NULL;
}

/* ---- where a path falls ------------------------------------------------------ */

static bool under_any_canon(const char *canon_path, const sandbox_paths *l)
{
    for (size_t i = 0; i < l->n; i++) {
        char *c = path_canon(l->v[i]);
        bool hit = path_under(canon_path, c);
        free(c);
        if (hit)
            return true;
    }
    return false;
}

bool sandbox_path_writable(const sandbox_policy *p, const char *path)
{
    char *abs = path_absolute(path, p->workspace);
    char *c = path_canon(abs);
    free(abs);
    bool w = false;
    if (p->workspace) {
        char *ws = path_canon(p->workspace);
        w = path_under(c, ws);
        free(ws);
    }
    w = w || under_any_canon(c, &p->writable) || under_any_canon(c, &p->temp);
    for (size_t i = 0; !w && i < sizeof SANDBOX_DEVICES / sizeof *SANDBOX_DEVICES; i++)
        w = path_under(c, SANDBOX_DEVICES[i]);
    /* A denied path inside a writable one is cut out of it (see grant). */
    if (w && sandbox_path_read_denied(p, c))
        w = false;
    free(c);
    return w;
}

bool sandbox_path_read_denied(const sandbox_policy *p, const char *path)
{
    char *abs = path_absolute(path, p->workspace);
    char *c = path_canon(abs);
    free(abs);
    bool denied = false;
    for (size_t i = 0; !denied && i < p->deny_read.n; i++) {
        char *d = path_canon(p->deny_read.v[i]);
        if (path_under(c, d)) {
            denied = true;
            /* A writable path inside the denied one is granted whole. */
            char *ws = p->workspace ? path_canon(p->workspace) : NULL;
            if (ws && path_under(ws, d) && strcmp(ws, d) != 0 && path_under(c, ws))
                denied = false;
            free(ws);
            for (size_t j = 0; denied && j < p->writable.n; j++) {
                char *w = path_canon(p->writable.v[j]);
                if (path_under(w, d) && strcmp(w, d) != 0 && path_under(c, w))
                    denied = false;
                free(w);
            }
        }
        free(d);
    }
    free(c);
    return denied;
}

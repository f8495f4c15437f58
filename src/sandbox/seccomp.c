/* seccomp.c — the seccomp programs of the command sandbox (sandbox.h): the
 * metadata calls Landlock does not cover (chmod, chown, utimes, xattrs, the
 * inode-flag ioctls), the socket families, and the signals a command must not
 * send to Loom. Built with libseccomp once per variant and kept as raw BPF,
 * so a child installs one with one system call and no allocation.
 * Threading: the programs are built under a mutex, then only read. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/str.h"
#include "sandbox/internal.h"

/* ---- the seccomp programs ---------------------------------------------------
 * Built with libseccomp once per variant and kept as raw BPF, so a child
 * installs one with one system call and no allocation. Variants: the network
 * denied or not; with allowUnixSockets or not; metadata calls (and connect)
 * sent to the supervisor (NOTIFY) or refused outright (no supervisor); Loom
 * guarded from its commands' signals (GUARD: the command is a child of this
 * process, not this process after an exec, as under `loom sandbox`; the
 * variant bits are in internal.h). */

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
/* The network as far as the filtering proxy (sandbox.network.allowedDomains):
 * Unix stream/seqpacket sockets and TCP sockets may be made — nothing
 * datagram, raw or of another family, so no DNS and no UDP — and every
 * connect() goes to the supervisor, which lets TCP through only to the
 * proxy's loopback port (Unix sockets as allowUnixSockets says). TCP Fast
 * Open's sendto/sendmsg(MSG_FASTOPEN) connects without connect(), so it is
 * refused. libseccomp compares an argument once per rule, so "not one of"
 * is spelled out value by value; all these rules refuse with EACCES, so
 * their overlaps do not matter. */
static int add_proxy_rules(scmp_filter_ctx ctx, int variant)
{
    const uint32_t deny = SCMP_ACT_ERRNO(EACCES);
    int rc = 0;
    /* Families: everything but AF_UNIX (1), AF_INET (2), AF_INET6 (10). */
    for (int fam = 0; rc == 0 && fam < AF_INET6; fam++)
        if (fam != AF_UNIX && fam != AF_INET)
            rc = seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0_32(SCMP_CMP_EQ, fam));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1,
                              SCMP_A0_32(SCMP_CMP_GT, AF_INET6));
    /* Types (the low nibble): Unix may stream or seqpacket; IP only stream. */
    for (int t = 0; rc == 0 && t < 16; t++) {
        if (t != SOCK_STREAM && t != SOCK_SEQPACKET)
            rc = seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX),
                                  SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, t));
        const int ip[] = {AF_INET, AF_INET6};
        for (int k = 0; rc == 0 && k < 2 && t != SOCK_STREAM; k++)
            rc = seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, ip[k]),
                                  SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, t));
    }
    /* Protocols of an IP stream: 0 or IPPROTO_TCP (6); not MPTCP (262),
     * which Landlock's TCP rules may not cover. */
    const int ip[] = {AF_INET, AF_INET6};
    for (int k = 0; rc == 0 && k < 2; k++) {
        rc = seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, ip[k]),
                              SCMP_A2_32(SCMP_CMP_GT, 6));
        for (int pr = 1; rc == 0 && pr < 6; pr++)
            rc = seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2, SCMP_A0_32(SCMP_CMP_EQ, ip[k]),
                                  SCMP_A2_32(SCMP_CMP_EQ, pr));
    }
    const uint32_t fastopen = 0x20000000; /* MSG_FASTOPEN */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, deny, SCMP_SYS(sendto), 1,
                              SCMP_A3_32(SCMP_CMP_MASKED_EQ, fastopen, fastopen));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, deny, SCMP_SYS(sendmsg), 1,
                              SCMP_A2_32(SCMP_CMP_MASKED_EQ, fastopen, fastopen));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, deny, SCMP_SYS(sendmmsg), 1,
                              SCMP_A3_32(SCMP_CMP_MASKED_EQ, fastopen, fastopen));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, variant & BPF_NOTIFY ? SCMP_ACT_NOTIFY : deny,
                              SCMP_SYS(connect), 0);
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
    if (variant & BPF_NET_PROXY)
        return add_proxy_rules(ctx, variant);
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
const struct sock_filter *sandbox_bpf_get(int variant, unsigned short *len, char *err, size_t cap)
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


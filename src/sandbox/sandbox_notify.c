/* sandbox_notify.c — the sandbox's supervisor: answers the seccomp user
 * notifications of a confined command (sandbox.h, sandbox_supervise), for
 * the system calls Landlock does not cover and seccomp alone cannot judge
 * because their argument is a path or an address behind a pointer:
 *
 *   - metadata changes (chmod, chown, utimes, setxattr and their fd and at
 *     forms, the chattr ioctls): let through only when the object lies in the writable area
 *     (the workspace, writablePaths, beneath a temp dir), never a denied
 *     path, a device or a temp dir itself;
 *   - connect() on a Unix socket when the network is denied and
 *     allowUnixSockets lists paths: only to a listed path, never to an
 *     abstract name.
 *
 * The supervisor reads the argument from /proc/TID/mem, resolves the path
 * the way the command's thread would see it (its cwd, its descriptors, its
 * /proc/self), and answers CONTINUE or an errno. Everything that cannot be
 * read or resolved is refused: it fails closed. The caveat every seccomp
 * supervisor has: the kernel re-reads the path after the answer, so another
 * thread of the command that rewrites the buffer, or swaps a symlink, in
 * between can get a different object changed (docs/sandbox.md, Limits).
 *
 * Runs on the thread that runs the command (proc_run's poll loop); no state
 * of its own. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "base/str.h"

/* Newer than some build hosts' headers; the numbers are the same on every
 * architecture (the unified syscall table). */
#define NR_FCHMODAT2 452
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466
#define NR_FILE_SETATTR 469
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* How many symlinks one resolution follows, as the kernel's MAXSYMLINKS. */
#define RESOLVE_MAX_LINKS 40

/* ---- paths as the command sees them ------------------------------------------ */

/* p is root or lies beneath it (both canonical). */
static bool under(const char *p, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return p[0] == '/';
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static char *read_link(const char *path)
{
    char buf[PATH_MAX];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0)
        return NULL;
    buf[n] = '\0';
    return xstrdup(buf);
}

/* One step of the walk: "self" and "thread-self" right under /proc name the
 * command's thread, not Loom. */
static void append_component(loom_str *cur, const char *name, size_t n, pid_t tid)
{
    char num[48];
    if (strcmp(cur->ptr, "/proc") == 0) {
        if (n == 4 && memcmp(name, "self", 4) == 0) {
            snprintf(num, sizeof num, "%d", (int)tid);
            name = num;
            n = strlen(num);
        } else if (n == 11 && memcmp(name, "thread-self", 11) == 0) {
            snprintf(num, sizeof num, "%d/task/%d", (int)tid, (int)tid);
            name = num;
            n = strlen(num);
        }
    }
    if (!(cur->len == 1 && cur->ptr[0] == '/'))
        str_putc(cur, '/');
    str_append(cur, name, n);
}

char *sandbox_resolve_for(pid_t tid, const char *base, const char *path, bool follow_last)
{
    if (!path || (path[0] != '/' && (!base || base[0] != '/')))
        return NULL;
    loom_str todo = LOOM_STR_INIT; /* what is left to walk, absolute */
    if (path[0] == '/') {
        str_puts(&todo, path);
    } else {
        str_puts(&todo, base);
        str_putc(&todo, '/');
        str_puts(&todo, path);
    }
    loom_str cur = LOOM_STR_INIT;
    str_putc(&cur, '/');
    int links = 0, err = EACCES;
    size_t i = 0;
    char *result = NULL;
    for (;;) {
        const char *s = todo.ptr;
        while (s[i] == '/')
            i++;
        if (s[i] == '\0') {
            result = str_steal(&cur);
            break;
        }
        size_t start = i;
        while (s[i] && s[i] != '/')
            i++;
        size_t n = i - start;
        /* "link/" is followed even by the calls that act on a link itself,
         * as the kernel does: only a bare last component is not. */
        bool last = s[i] == '\0';
        if (n == 1 && s[start] == '.')
            continue;
        if (n == 2 && s[start] == '.' && s[start + 1] == '.') {
            char *slash = strrchr(cur.ptr, '/');
            if (slash && slash != cur.ptr) {
                cur.len = (size_t)(slash - cur.ptr);
                cur.ptr[cur.len] = '\0';
            } else {
                cur.len = 1;
                cur.ptr[1] = '\0';
            }
            continue;
        }
        size_t keep = cur.len;
        append_component(&cur, s + start, n, tid);
        struct stat st;
        if (lstat(cur.ptr, &st) != 0) {
            /* The call would fail here too (a metadata call creates
             * nothing); errno says how. */
            err = errno;
            break;
        }
        if (!S_ISLNK(st.st_mode) || (last && !follow_last))
            continue;
        if (++links > RESOLVE_MAX_LINKS) {
            err = ELOOP;
            break;
        }
        char *target = read_link(cur.ptr);
        if (!target || !target[0]) {
            free(target);
            break;
        }
        /* A magic link of /proc/PID/fd to a pipe or socket ("pipe:[12]")
         * names no path: nothing to judge, so nothing is allowed. */
        if (target[0] != '/' && strchr(target, ':') && strchr(target, '[')) {
            free(target);
            break;
        }
        loom_str next = LOOM_STR_INIT;
        if (target[0] != '/') {
            cur.len = keep;
            cur.ptr[keep] = '\0';
            str_puts(&next, cur.ptr);
            str_putc(&next, '/');
        }
        str_puts(&next, target);
        str_puts(&next, s + i);
        free(target);
        str_free(&todo);
        todo = next;
        i = 0;
        cur.len = 1;
        cur.ptr[1] = '\0';
    }
    str_free(&todo);
    str_free(&cur);
    if (!result)
        errno = err;
    return result;
}

/* ---- where the object lies ----------------------------------------------------- */

static bool under_list(const char *canon, const sandbox_paths *l, bool strictly)
{
    for (size_t i = 0; i < l->n; i++) {
        char *r = realpath(l->v[i], NULL);
        bool hit = r && under(canon, r) && !(strictly && strcmp(canon, r) == 0);
        free(r);
        if (hit)
            return true;
    }
    return false;
}

bool sandbox_meta_allowed(const sandbox_policy *p, const char *canon)
{
    if (!canon || canon[0] != '/')
        return false;
    char *ws = p->workspace ? realpath(p->workspace, NULL) : NULL;
    bool in_ws = ws && under(canon, ws);
    bool in = in_ws || under_list(canon, &p->writable, false) ||
              /* beneath a temp dir, never /tmp itself */
              under_list(canon, &p->temp, true);
    if (in) {
        for (size_t i = 0; in && i < p->deny_read.n; i++) {
            char *d = realpath(p->deny_read.v[i], NULL);
            if (d && under(canon, d)) {
                /* A writable root inside the denied path opens it again. */
                bool reopened = ws && under(ws, d) && strcmp(ws, d) != 0 && in_ws;
                for (size_t j = 0; !reopened && j < p->writable.n; j++) {
                    char *w = realpath(p->writable.v[j], NULL);
                    reopened = w && under(w, d) && strcmp(w, d) != 0 && under(canon, w);
                    free(w);
                }
                in = reopened;
            }
            free(d);
        }
    }
    free(ws);
    return in;
}

bool sandbox_unix_allowed(const sandbox_policy *p, const char *canon)
{
    return canon && canon[0] == '/' && under_list(canon, &p->allow_unix, false);
}

/* ---- the command's memory ------------------------------------------------------- */

/* Reads a NUL-terminated string of at most cap-1 bytes at addr, a page at a
 * time (a read across the end of a mapping fails whole). */
static bool read_cstr(int mem, uint64_t addr, char *buf, size_t cap)
{
    size_t got = 0;
    while (got + 1 < cap) {
        size_t page = 4096 - (size_t)((addr + got) % 4096);
        size_t want = cap - 1 - got < page ? cap - 1 - got : page;
        ssize_t n = pread(mem, buf + got, want, (off_t)(addr + got));
        if (n <= 0)
            return false;
        void *nul = memchr(buf + got, '\0', (size_t)n);
        if (nul)
            return true;
        got += (size_t)n;
    }
    return false; /* longer than PATH_MAX: the kernel would refuse it too */
}

static bool read_exact(int mem, uint64_t addr, void *buf, size_t n)
{
    return pread(mem, buf, n, (off_t)addr) == (ssize_t)n;
}

/* ---- the decision ------------------------------------------------------------- */

typedef enum { META_NONE, META_PATH, META_AT, META_FD } meta_form;

typedef struct {
    meta_form form;
    int path_arg;  /* META_PATH, META_AT */
    int flags_arg; /* -1: none */
    bool nofollow; /* acts on a symlink itself */
} meta_call;

static int nr_of(const char *name)
{
    int nr = seccomp_syscall_resolve_name(name);
    return nr == __NR_SCMP_ERROR ? -1 : nr;
}

static meta_call classify(int nr)
{
    static const struct {
        const char *name;
        meta_form form;
        int path_arg, flags_arg;
        bool nofollow;
    } T[] = {
        {"chmod", META_PATH, 0, -1, false},      {"chown", META_PATH, 0, -1, false},
        {"lchown", META_PATH, 0, -1, true},      {"utime", META_PATH, 0, -1, false},
        {"utimes", META_PATH, 0, -1, false},     {"setxattr", META_PATH, 0, -1, false},
        {"lsetxattr", META_PATH, 0, -1, true},   {"removexattr", META_PATH, 0, -1, false},
        {"lremovexattr", META_PATH, 0, -1, true}, {"fchmodat", META_AT, 1, -1, false},
        {"fchownat", META_AT, 1, 4, false},      {"futimesat", META_AT, 1, -1, false},
        {"utimensat", META_AT, 1, 3, false},     {"fchmod", META_FD, -1, -1, false},
        {"fchown", META_FD, -1, -1, false},      {"fsetxattr", META_FD, -1, -1, false},
        {"fremovexattr", META_FD, -1, -1, false},
    };
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
        if (nr_of(T[i].name) == nr)
            return (meta_call){T[i].form, T[i].path_arg, T[i].flags_arg, T[i].nofollow};
    }
    if (nr == nr_of("ioctl")) /* only the filesystems' families are sent here */
        return (meta_call){META_FD, -1, -1, false};
    if (nr == NR_FCHMODAT2)
        return (meta_call){META_AT, 1, 3, false};
    if (nr == NR_SETXATTRAT || nr == NR_REMOVEXATTRAT)
        return (meta_call){META_AT, 1, 2, false};
    if (nr == NR_FILE_SETATTR) /* (dfd, path, attr, size, at_flags) */
        return (meta_call){META_AT, 1, 4, false};
    return (meta_call){META_NONE, -1, -1, false};
}

/* The base a relative path of the thread is taken against: its cwd or the
 * directory open as dirfd. NULL when it names no directory path. */
static char *base_of(pid_t tid, int64_t dirfd)
{
    char link[64];
    if ((int)dirfd == AT_FDCWD)
        snprintf(link, sizeof link, "/proc/%d/cwd", (int)tid);
    else if (dirfd >= 0 && dirfd <= INT32_MAX)
        snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)tid, (int)dirfd);
    else
        return NULL;
    char *t = read_link(link);
    if (t && t[0] != '/') {
        free(t);
        return NULL;
    }
    return t;
}

/* The object a metadata call would change, canonical, or NULL. */
static char *meta_target(const struct seccomp_notif *req, meta_call mc, int mem)
{
    pid_t tid = (pid_t)req->pid;
    const __u64 *a = req->data.args;
    char fdlink[64];
    if (mc.form == META_FD) {
        snprintf(fdlink, sizeof fdlink, "/proc/%d/fd/%d", (int)tid, (int)(int32_t)a[0]);
        if ((int32_t)a[0] < 0)
            return NULL;
        return sandbox_resolve_for(tid, NULL, fdlink, true);
    }
    uint64_t flags = mc.flags_arg >= 0 ? a[mc.flags_arg] : 0;
    bool nofollow = mc.nofollow || (flags & AT_SYMLINK_NOFOLLOW);
    int64_t dirfd = mc.form == META_AT ? (int64_t)(int32_t)a[0] : AT_FDCWD;
    uint64_t addr = a[mc.path_arg];
    char path[PATH_MAX];
    path[0] = '\0';
    if (addr == 0) {
        /* utimensat(fd, NULL, …) and futimesat: the descriptor itself. */
        if (mc.form != META_AT)
            return NULL;
    } else if (!read_cstr(mem, addr, path, sizeof path)) {
        return NULL;
    }
    if (path[0] == '\0') {
        if (addr != 0 && !(flags & AT_EMPTY_PATH))
            return NULL; /* ENOENT for the kernel; nothing to allow */
        if (dirfd == AT_FDCWD)
            snprintf(fdlink, sizeof fdlink, "/proc/%d/cwd", (int)tid);
        else
            snprintf(fdlink, sizeof fdlink, "/proc/%d/fd/%d", (int)tid, (int)dirfd);
        return sandbox_resolve_for(tid, NULL, fdlink, true);
    }
    char *base = path[0] == '/' ? NULL : base_of(tid, dirfd);
    if (path[0] != '/' && !base)
        return NULL;
    char *r = sandbox_resolve_for(tid, base, path, !nofollow);
    free(base);
    return r;
}

/* A TCP connect() to the filtering proxy: loopback (127.0.0.1, ::1, or
 * ::ffff:127.0.0.1) and the proxy's port, nothing else. */
static bool to_proxy(const void *sa, size_t len, unsigned proxy_port)
{
    sa_family_t fam;
    memcpy(&fam, sa, sizeof fam);
    if (!proxy_port)
        return false;
    if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        return ntohs(in.sin_port) == proxy_port && ntohl(in.sin_addr.s_addr) == INADDR_LOOPBACK;
    }
    if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        static const unsigned char v4_lo[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                0, 0, 0xff, 0xff, 127, 0, 0, 1};
        return ntohs(in6.sin6_port) == proxy_port &&
               (IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) ||
                memcmp(&in6.sin6_addr, v4_lo, sizeof v4_lo) == 0);
    }
    return false;
}

/* connect(): 0 to let it through, else the errno. */
static int decide_connect(const sandbox_policy *p, unsigned proxy_port,
                          const struct seccomp_notif *req, int mem)
{
    uint64_t addr = req->data.args[1];
    uint64_t len = req->data.args[2] & 0xffffffffu;
    struct sockaddr_un sun;
    if (len < sizeof(sa_family_t) || len > sizeof sun)
        return EACCES;
    memset(&sun, 0, sizeof sun);
    if (!read_exact(mem, addr, &sun, (size_t)len))
        return EACCES;
    if (sun.sun_family == AF_INET || sun.sun_family == AF_INET6)
        return to_proxy(&sun, (size_t)len, proxy_port) ? 0 : EACCES;
    if (sun.sun_family != AF_UNIX)
        return EACCES; /* no other socket can be made with the network denied */
    size_t plen = (size_t)len - offsetof(struct sockaddr_un, sun_path);
    if (plen == 0 || sun.sun_path[0] == '\0')
        return EACCES; /* unnamed or abstract: never on the list */
    char path[sizeof sun.sun_path + 1];
    memcpy(path, sun.sun_path, plen);
    path[plen] = '\0';
    pid_t tid = (pid_t)req->pid;
    char *base = path[0] == '/' ? NULL : base_of(tid, AT_FDCWD);
    char *canon = (path[0] == '/' || base) ? sandbox_resolve_for(tid, base, path, true) : NULL;
    free(base);
    bool ok = sandbox_unix_allowed(p, canon);
    free(canon);
    return ok ? 0 : EACCES;
}

/* Whether an ioctl of the filesystems' families (seccomp.c sends them all
 * here) only reads: those pass wherever the descriptor points (lsattr,
 * filefrag, fscryptctl status); every other command of the families is a
 * metadata change, judged by location. The kernel reads the command as 32
 * bits. */
static bool ioctl_only_reads(uint64_t arg)
{
    static const uint32_t GETTERS[] = {
        FS_IOC_GETFLAGS,
        FS_IOC32_GETFLAGS,
        FS_IOC_GETVERSION,
        FS_IOC32_GETVERSION,
        FS_IOC_FSGETXATTR,
        FS_IOC_FIEMAP,
        FS_IOC_GETFSLABEL,
#ifdef FS_IOC_GETFSUUID
        FS_IOC_GETFSUUID,
#endif
#ifdef FS_IOC_GETFSSYSFSPATH
        FS_IOC_GETFSSYSFSPATH,
#endif
        FS_IOC_GET_ENCRYPTION_POLICY,
        FS_IOC_GET_ENCRYPTION_POLICY_EX,
        FS_IOC_GET_ENCRYPTION_KEY_STATUS,
        FS_IOC_GET_ENCRYPTION_PWSALT,
        FS_IOC_MEASURE_VERITY,
        FS_IOC_READ_VERITY_METADATA,
    };
    uint32_t cmd = (uint32_t)arg;
    for (size_t i = 0; i < sizeof GETTERS / sizeof *GETTERS; i++)
        if (GETTERS[i] == cmd)
            return true;
    return false;
}

/* 0 to let the call through, else the errno it fails with. */
static int decide(const sandbox_policy *p, unsigned proxy_port, const struct seccomp_notif *req,
                  int listener)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/root", (int)req->pid);
    char *root = read_link(link);
    /* A command that changed its root (root only) sees other paths. */
    bool plain_root = root && strcmp(root, "/") == 0;
    free(root);
    if (!plain_root)
        return EPERM;
    snprintf(link, sizeof link, "/proc/%d/mem", (int)req->pid);
    int mem = open(link, O_RDONLY | O_CLOEXEC);
    if (mem < 0)
        return EPERM;
    /* The descriptor is for the thread that made the call only if it is
     * still waiting on this notification (its tid was not reused). */
    if (seccomp_notify_id_valid(listener, req->id) != 0) {
        close(mem);
        return EPERM;
    }
    int nr = req->data.nr;
    int verdict;
    if (nr == nr_of("ioctl") && ioctl_only_reads(req->data.args[1])) {
        verdict = 0;
    } else if (nr == nr_of("connect")) {
        verdict = decide_connect(p, proxy_port, req, mem);
    } else {
        meta_call mc = classify(nr);
        errno = EPERM;
        char *target = mc.form == META_NONE ? NULL : meta_target(req, mc, mem);
        /* A path that does not resolve fails as the kernel would fail it. */
        int why = errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? errno : EPERM;
        verdict = target ? (sandbox_meta_allowed(p, target) ? 0 : EPERM) : why;
        free(target);
    }
    close(mem);
    /* Everything read since the first check must still be the caller's. */
    if (verdict == 0 && seccomp_notify_id_valid(listener, req->id) != 0)
        verdict = EPERM;
    return verdict;
}

void sandbox_supervise(void *ctx, int fd)
{
    const sandbox_policy *p = sandbox_prep_policy((const sandbox_prep *)ctx);
    struct seccomp_notif *req = NULL;
    struct seccomp_notif_resp *resp = NULL;
    if (seccomp_notify_alloc(&req, &resp) != 0)
        return;
    if (seccomp_notify_receive(fd, req) == 0) {
        int verdict =
            p ? decide(p, sandbox_prep_proxy_port((const sandbox_prep *)ctx), req, fd) : EPERM;
        resp->id = req->id;
        resp->val = 0;
        resp->error = verdict ? -verdict : 0;
        resp->flags = verdict ? 0 : SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        /* ENOENT: the thread is gone (killed, or interrupted by a signal). */
        (void)seccomp_notify_respond(fd, resp);
    }
    seccomp_notify_free(req, resp);
}

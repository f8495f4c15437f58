/* test_sandbox.c — the command sandbox: the policy and its settings, what
 * Landlock and seccomp actually allow once applied (in forked children, so
 * the test process itself stays free), that grandchildren inherit it, the
 * proc_run child_setup hook, and reading denials back out of output.
 *
 * Every confinement test runs in a child that reports through its exit
 * status: 0 when all its checks held, else the number of the first check
 * that failed (see the CHECK lines). Where the kernel cannot sandbox, those
 * tests are skipped, not failed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/proc.h"
#include "base/str.h"
#include "api/internal.h"
#include "governance/governance.h"
#include "loom.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_report.h"

static char base[256];
static char ws[300], other[300], secret[300], public_dir[300], secret_file[300];

/* A child's failed check: exit with its line number (mod 256, but never 0). */
#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "child check failed at line %d: %s (errno %d)\n", __LINE__, #cond,  \
                    errno);                                                                      \
            _exit(__LINE__ % 255 + 1);                                                           \
        }                                                                                        \
    } while (0)

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void write_file(const char *path, const char *text)
{
    loom_error err;
    assert_int_equal(file_write_atomic(path, text, strlen(text), 0644, &err), 0);
}

static int group_setup(void **state)
{
    snprintf(base, sizeof base, "/tmp/loom-sbx-XXXXXX");
    if (!mkdtemp(base))
        return -1;
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(other, sizeof other, "%s/other", base);
    snprintf(secret, sizeof secret, "%s/fix/secret", base);
    snprintf(public_dir, sizeof public_dir, "%s/fix/public", base);
    snprintf(secret_file, sizeof secret_file, "%s/fix/token.txt", base);
    loom_error err;
    if (file_mkdirs(ws, 0755, &err) || file_mkdirs(other, 0755, &err) ||
        file_mkdirs(secret, 0755, &err) || file_mkdirs(public_dir, 0755, &err))
        return -1;
    char p[400];
    snprintf(p, sizeof p, "%s/key", secret);
    write_file(p, "top secret\n");
    snprintf(p, sizeof p, "%s/readme", public_dir);
    write_file(p, "public\n");
    write_file(secret_file, "token\n");
    return 0;
}

static int group_teardown(void **state)
{
    nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* The policy most tests use: workspace ws, no temp dirs (they would make all
 * of /tmp, and so `other`, writable), the secret dir and file denied. */
static void test_policy(sandbox_policy *p, const char *network)
{
    json_t *s = json_pack("{s:{s:b, s:b, s:[s,s], s:s}}", "sandbox", "enabled", 1,
                          "writableTempDirs", 0, "denyRead", secret, secret_file, "network",
                          network);
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(sandbox_policy_from_settings(s, ws, p, &err), 0);
    json_decref(s);
}

static bool can_sandbox(void)
{
    return sandbox_supported() >= 1;
}

/* Runs fn in a forked child under policy p; returns the child's status. */
static int in_child(const sandbox_policy *p, void (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char msg[512];
        if (p && sandbox_apply(p, msg, sizeof msg) != 0) {
            fprintf(stderr, "sandbox_apply: %s\n", msg);
            _exit(99);
        }
        fn(arg);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static int try_create(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

static int try_read(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char c;
    ssize_t n = read(fd, &c, 1);
    close(fd);
    return n >= 0 ? 0 : -errno;
}

/* ---- policy and settings ---------------------------------------------------- */

/* Tests that need a made-up $HOME put the real one back. */
static char *saved_home;

static void fake_home(void)
{
    free(saved_home);
    saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/home/someone", 1);
}

static void real_home(void)
{
    if (saved_home)
        setenv("HOME", saved_home, 1);
    else
        unsetenv("HOME");
    free(saved_home);
    saved_home = NULL;
}

static void test_policy_defaults(void **state)
{
    fake_home();
    sandbox_policy p;
    sandbox_policy_init(&p, "/work/proj");
    assert_false(p.enabled);
    assert_string_equal(p.workspace, "/work/proj");
    assert_int_equal(p.network, SANDBOX_NET_DENY);
    assert_int_equal(p.on_unsupported, SANDBOX_UNSUPPORTED_REFUSE);
    bool ssh = false, docker = false;
    for (size_t i = 0; i < p.deny_read.n; i++) {
        ssh |= strcmp(p.deny_read.v[i], "/home/someone/.ssh") == 0;
        docker |= strcmp(p.deny_read.v[i], "/home/someone/.docker/config.json") == 0;
    }
    assert_true(ssh);
    assert_true(docker);
    bool tmp = false;
    for (size_t i = 0; i < p.temp.n; i++)
        tmp |= strcmp(p.temp.v[i], "/tmp") == 0;
    assert_true(tmp);
    sandbox_policy_free(&p);
    real_home();
}

static void test_from_settings(void **state)
{
    fake_home();
    loom_error err;
    json_t *doc = json_loads("{\"sandbox\": {\"enabled\": true, \"writablePaths\": [\"build\", "
                             "\"/opt/cache\", \"~/.cache/x\"], \"denyRead\": [\"../secrets\"], "
                             "\"network\": \"allow\", \"onUnsupported\": \"warn\", "
                             "\"writableTempDirs\": false, \"excludedCommands\": [\"git\"]}}",
                             0, NULL);
    sandbox_policy p;
    assert_int_equal(sandbox_policy_from_settings(doc, "/work/proj", &p, &err), 0);
    assert_true(p.enabled);
    assert_int_equal(p.writable.n, 3);
    assert_string_equal(p.writable.v[0], "/work/proj/build");
    assert_string_equal(p.writable.v[1], "/opt/cache");
    assert_string_equal(p.writable.v[2], "/home/someone/.cache/x");
    assert_string_equal(p.deny_read.v[p.deny_read.n - 1], "/work/secrets");
    assert_int_equal(p.network, SANDBOX_NET_ALLOW);
    assert_int_equal(p.on_unsupported, SANDBOX_UNSUPPORTED_WARN);
    assert_int_equal(p.temp.n, 0);
    sandbox_policy_free(&p);
    json_decref(doc);

    /* The block alone works too; NULL is the defaults, sandbox off. */
    doc = json_loads("{\"enabled\": true}", 0, NULL);
    assert_int_equal(sandbox_policy_from_settings(doc, "/w", &p, &err), 0);
    assert_true(p.enabled);
    sandbox_policy_free(&p);
    json_decref(doc);
    assert_int_equal(sandbox_policy_from_settings(NULL, "/w", &p, &err), 0);
    assert_false(p.enabled);
    sandbox_policy_free(&p);

    /* Claude Code's network object is tolerated and keeps the default. */
    doc = json_loads("{\"sandbox\": {\"network\": {\"allowUnixSockets\": [\"/x\"]}}}", 0, NULL);
    assert_int_equal(sandbox_policy_from_settings(doc, "/w", &p, &err), 0);
    assert_int_equal(p.network, SANDBOX_NET_DENY);
    sandbox_policy_free(&p);
    json_decref(doc);
    real_home();
}

static void bad_setting(const char *text, const char *expect)
{
    loom_error err;
    loom_error_clear(&err);
    sandbox_policy p;
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    assert_true(sandbox_policy_from_settings(doc, "/w", &p, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    if (!strstr(err.message, expect))
        fail_msg("message [%s] lacks [%s]", err.message, expect);
    assert_null(p.workspace); /* left empty */
    sandbox_policy_free(&p);
    json_decref(doc);
}

static void test_bad_settings(void **state)
{
    bad_setting("{\"sandbox\": {\"enabled\": \"yes\"}}", "sandbox.enabled");
    bad_setting("{\"sandbox\": {\"network\": \"maybe\"}}", "\"maybe\"");
    bad_setting("{\"sandbox\": {\"denyRead\": [\"/a\", 42]}}", "sandbox.denyRead[1]");
    bad_setting("{\"sandbox\": {\"writablePaths\": \"/a\"}}", "sandbox.writablePaths");
    bad_setting("{\"sandbox\": {\"onUnsupported\": \"ignore\"}}", "sandbox.onUnsupported");
    bad_setting("{\"sandbox\": [1]}", "JSON object");
}

static void test_settings_load_merges(void **state)
{
    char home[400], proj[400], p[500];
    snprintf(home, sizeof home, "%s/loomhome", base);
    snprintf(proj, sizeof proj, "%s/mergeproj", base);
    loom_error err;
    snprintf(p, sizeof p, "%s/.loom", proj);
    assert_int_equal(file_mkdirs(home, 0755, &err), 0);
    assert_int_equal(file_mkdirs(p, 0755, &err), 0);
    snprintf(p, sizeof p, "%s/settings.json", home);
    write_file(p, "{\"sandbox\": {\"denyRead\": [\"/user/secret\"], \"network\": \"allow\"}}");
    snprintf(p, sizeof p, "%s/.loom/settings.json", proj);
    write_file(p, "{\"model\": \"x\", \"sandbox\": {\"denyRead\": [\"/proj/secret\"], "
                  "\"enabled\": true}}");
    snprintf(p, sizeof p, "%s/.loom/settings.local.json", proj);
    write_file(p, "{\"sandbox\": {\"network\": \"deny\"}}");
    char *old = getenv("LOOM_HOME") ? strdup(getenv("LOOM_HOME")) : NULL;
    setenv("LOOM_HOME", home, 1);
    json_t *block = sandbox_settings_load(proj, NULL, &err);
    assert_non_null(block);
    assert_true(json_is_true(json_object_get(block, "enabled")));
    assert_string_equal(json_string_value(json_object_get(block, "network")), "deny");
    json_t *deny = json_object_get(block, "denyRead");
    assert_int_equal(json_array_size(deny), 2);
    assert_string_equal(json_string_value(json_array_get(deny, 0)), "/user/secret");
    assert_string_equal(json_string_value(json_array_get(deny, 1)), "/proj/secret");
    json_decref(block);

    /* A malformed file is an error naming it, not a silent "no sandbox". */
    snprintf(p, sizeof p, "%s/.loom/settings.local.json", proj);
    write_file(p, "{\"sandbox\": ");
    loom_error_clear(&err);
    assert_null(sandbox_settings_load(proj, NULL, &err));
    assert_non_null(strstr(err.message, "settings.local.json"));
    if (old) {
        setenv("LOOM_HOME", old, 1);
        free(old);
    } else {
        unsetenv("LOOM_HOME");
    }
}

/* An untrusted folder's own files may only tighten: the loosening keys of
 * both project files are dropped with a notice each, the tightening ones
 * kept; once the user trusts the folder the same files count. */
static void test_settings_load_untrusted(void **state)
{
    (void)state;
    char home[400], proj[400], p[500];
    snprintf(home, sizeof home, "%s/trusthome", base);
    snprintf(proj, sizeof proj, "%s/trustproj", base);
    loom_error err;
    snprintf(p, sizeof p, "%s/.loom", proj);
    assert_int_equal(file_mkdirs(home, 0755, &err), 0);
    assert_int_equal(file_mkdirs(p, 0755, &err), 0);
    snprintf(p, sizeof p, "%s/settings.json", home);
    write_file(p, "{\"sandbox\": {\"writableTempDirs\": false}}");
    snprintf(p, sizeof p, "%s/.loom/settings.json", proj);
    write_file(p, "{\"sandbox\": {\"writablePaths\": [\"/etc\"], \"network\": \"allow\", "
                  "\"denyRead\": [\"/proj/secret\"], \"writableTempDirs\": true}}");
    snprintf(p, sizeof p, "%s/.loom/settings.local.json", proj);
    write_file(p, "{\"sandbox\": {\"allowUnixSockets\": [\"/run/x.sock\"], "
                  "\"onUnsupported\": \"warn\", \"network\": {\"allowUnixSockets\": [\"/y\"]}}}");
    char *old = getenv("LOOM_HOME") ? strdup(getenv("LOOM_HOME")) : NULL;
    char *old_trust = getenv("LOOM_TRUST_WORKSPACE") ? strdup(getenv("LOOM_TRUST_WORKSPACE")) : NULL;
    setenv("LOOM_HOME", home, 1);
    unsetenv("LOOM_TRUST_WORKSPACE");

    json_t *notices = json_array();
    json_t *block = sandbox_settings_load(proj, notices, &err);
    assert_non_null(block);
    assert_null(json_object_get(block, "writablePaths"));
    assert_null(json_object_get(block, "network"));
    assert_null(json_object_get(block, "allowUnixSockets"));
    assert_null(json_object_get(block, "onUnsupported"));
    assert_true(json_is_false(json_object_get(block, "writableTempDirs")));
    assert_int_equal(json_array_size(json_object_get(block, "denyRead")), 1);
    assert_int_equal(json_array_size(notices), 6);
    assert_non_null(strstr(json_string_value(json_array_get(notices, 0)),
                           "ignored .loom/settings.json: sandbox."));
    assert_non_null(strstr(json_string_value(json_array_get(notices, 5)),
                           "ignored .loom/settings.local.json: sandbox."));
    json_decref(block);
    json_decref(notices);

    /* Trusted through the environment: everything counts. */
    setenv("LOOM_TRUST_WORKSPACE", "1", 1);
    block = sandbox_settings_load(proj, NULL, &err);
    assert_non_null(block);
    assert_int_equal(json_array_size(json_object_get(block, "writablePaths")), 1);
    assert_true(json_is_true(json_object_get(block, "writableTempDirs")));
    assert_non_null(json_object_get(block, "allowUnixSockets"));
    json_decref(block);
    unsetenv("LOOM_TRUST_WORKSPACE");

    /* Trusted through trustedWorkspaces (the real path). */
    char *real = realpath(proj, NULL);
    assert_non_null(real);
    snprintf(p, sizeof p, "%s/settings.json", home);
    json_t *user = json_pack("{s[s]}", "trustedWorkspaces", real);
    char *text = json_dumps(user, 0);
    write_file(p, text);
    free(text);
    json_decref(user);
    free(real);
    block = sandbox_settings_load(proj, NULL, &err);
    assert_non_null(block);
    assert_int_equal(json_array_size(json_object_get(block, "writablePaths")), 1);
    assert_non_null(json_object_get(block, "onUnsupported"));
    json_decref(block);

    if (old_trust) {
        setenv("LOOM_TRUST_WORKSPACE", old_trust, 1);
        free(old_trust);
    }
    if (old) {
        setenv("LOOM_HOME", old, 1);
        free(old);
    } else {
        unsetenv("LOOM_HOME");
    }
}

static void test_path_classes(void **state)
{
    sandbox_policy p;
    test_policy(&p, "deny");
    char x[512];
    snprintf(x, sizeof x, "%s/new/file", ws);
    assert_true(sandbox_path_writable(&p, x));
    snprintf(x, sizeof x, "%s/x", other);
    assert_false(sandbox_path_writable(&p, x));
    assert_true(sandbox_path_writable(&p, "/dev/null"));
    snprintf(x, sizeof x, "%s/key", secret);
    assert_true(sandbox_path_read_denied(&p, x));
    assert_true(sandbox_path_read_denied(&p, secret_file));
    snprintf(x, sizeof x, "%s/readme", public_dir);
    assert_false(sandbox_path_read_denied(&p, x));
    /* Relative paths are taken against the workspace. */
    assert_true(sandbox_path_writable(&p, "sub/file"));
    assert_false(sandbox_path_writable(&p, "../other/file"));
    sandbox_policy_free(&p);
}

/* ---- files ------------------------------------------------------------------- */

static void fs_checks(void *arg)
{
    char p[512];
    CHECK(try_create(ws, "inside.txt") == 0);
    CHECK(try_create(other, "outside.txt") == -EACCES);
    snprintf(p, sizeof p, "%s/key", secret);
    CHECK(try_read(p) == -EACCES);
    CHECK(try_read(secret_file) == -EACCES);
    snprintf(p, sizeof p, "%s/readme", public_dir);
    CHECK(try_read(p) == 0);
    CHECK(try_read("/etc/hostname") == 0 || access("/etc/hostname", F_OK) != 0);
    /* Read and execute everywhere else: a program runs. */
    CHECK(system("true") == 0);
    /* Devices a command needs. */
    int fd = open("/dev/null", O_WRONLY | O_TRUNC | O_CLOEXEC);
    CHECK(fd >= 0);
    close(fd);
    /* Nothing here can lift it: a second, wider ruleset only narrows. */
    sandbox_policy wide;
    sandbox_policy_init(&wide, "/");
    wide.deny_read.n = 0;
    char msg[256];
    CHECK(sandbox_apply(&wide, msg, sizeof msg) == 0);
    CHECK(try_create(other, "still.txt") == -EACCES);
}

static void test_files(void **state)
{
    if (!can_sandbox())
        skip();
    sandbox_policy p;
    test_policy(&p, "deny");
    assert_int_equal(in_child(&p, fs_checks, NULL), 0);
    sandbox_policy_free(&p);
    char x[512];
    snprintf(x, sizeof x, "%s/inside.txt", ws);
    assert_true(file_exists(x));
    snprintf(x, sizeof x, "%s/outside.txt", other);
    assert_false(file_exists(x));
}

static void grandchild_checks(void *arg)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* The grandchild, after another exec too. */
        char cmd[600];
        snprintf(cmd, sizeof cmd, "echo x 2>/dev/null > %s/grand.txt", other);
        _exit(system(cmd) == 0 ? 1 : 0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(try_create(other, "child.txt") == -EACCES);
}

static void test_grandchild_confined(void **state)
{
    if (!can_sandbox())
        skip();
    sandbox_policy p;
    test_policy(&p, "deny");
    assert_int_equal(in_child(&p, grandchild_checks, NULL), 0);
    sandbox_policy_free(&p);
    char x[512];
    snprintf(x, sizeof x, "%s/grand.txt", other);
    assert_false(file_exists(x));
}

/* A denied path inside the workspace stays unreadable; the workspace's
 * other subdirectories stay writable. */
static void inner_deny_checks(void *arg)
{
    char p[512];
    snprintf(p, sizeof p, "%s/inner/secret/k", ws);
    CHECK(try_read(p) == -EACCES);
    snprintf(p, sizeof p, "%s/inner/open", ws);
    CHECK(try_create(p, "new.txt") == 0);
    snprintf(p, sizeof p, "%s/inner/open/new.txt", ws);
    CHECK(try_read(p) == 0);
}

static void test_deny_inside_workspace(void **state)
{
    if (!can_sandbox())
        skip();
    char p[512];
    loom_error err;
    snprintf(p, sizeof p, "%s/inner/secret", ws);
    assert_int_equal(file_mkdirs(p, 0755, &err), 0);
    snprintf(p, sizeof p, "%s/inner/secret/k", ws);
    write_file(p, "k\n");
    snprintf(p, sizeof p, "%s/inner/open", ws);
    assert_int_equal(file_mkdirs(p, 0755, &err), 0);
    sandbox_policy pol;
    test_policy(&pol, "deny");
    snprintf(p, sizeof p, "%s/inner/secret", ws);
    sandbox_paths_add(&pol.deny_read, p, NULL);
    assert_int_equal(in_child(&pol, inner_deny_checks, NULL), 0);
    sandbox_policy_free(&pol);
}

/* ---- network ----------------------------------------------------------------- */

static int listen_port(int *fd_out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *fd_out = fd;
    return ntohs(a.sin_port);
}

typedef struct {
    int port;
    int pre_socket; /* made before the sandbox, connected after */
} net_arg;

static int tcp_connect(int fd, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    return connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : -errno;
}

static void net_denied_checks(void *arg)
{
    net_arg *n = arg;
    errno = 0;
    CHECK(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EACCES);
    CHECK(socket(AF_INET6, SOCK_STREAM, 0) < 0 && errno == EACCES);
    CHECK(socket(AF_INET, SOCK_DGRAM, 0) < 0 && errno == EACCES);
    CHECK(socket(AF_NETLINK, SOCK_RAW, 0) < 0 && errno == EACCES);
    /* Landlock's TCP rule (ABI 4+) stops a socket that got in before. */
    if (sandbox_supported() >= 4)
        CHECK(tcp_connect(n->pre_socket, n->port) == -EACCES);
    /* socketpair works; a Unix socket that could reach a daemon does not
     * (issue #10: no allowUnixSockets in this policy). */
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(write(sv[0], "x", 1) == 1);
    char c;
    CHECK(read(sv[1], &c, 1) == 1 && c == 'x');
    CHECK(socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EACCES);
    CHECK(socket(AF_UNIX, SOCK_DGRAM, 0) < 0 && errno == EACCES);
    /* And in a grandchild too. */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EACCES ? 0 : 1);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void net_allowed_checks(void *arg)
{
    net_arg *n = arg;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    CHECK(tcp_connect(fd, n->port) == 0);
    close(fd);
    CHECK(tcp_connect(n->pre_socket, n->port) == 0);
    /* Files are still confined. */
    CHECK(try_create(other, "net.txt") == -EACCES);
}

/* ---- metadata changes and Unix sockets (issue #10, classes 7 and 8) ---------- */

/* Where a metadata change may land: inside the workspace (itself included)
 * and beneath a temp dir; not the temp dir itself, not a device, not a
 * denied path (even inside the workspace), not elsewhere. */
static void test_meta_allowed(void **state)
{
    char tdir[400], wsfile[400], wsdenied[400], tmpfile_[400], otherfile[400];
    snprintf(tdir, sizeof tdir, "%s/tmpdir", base);
    snprintf(wsdenied, sizeof wsdenied, "%s/.creds", ws);
    loom_error err;
    assert_int_equal(file_mkdirs(tdir, 0755, &err), 0);
    assert_int_equal(file_mkdirs(wsdenied, 0755, &err), 0);
    json_t *s = json_pack("{s:b, s:b, s:[s], s:[s]}", "enabled", 1, "writableTempDirs", 0,
                          "denyRead", wsdenied, "writablePaths", tdir);
    sandbox_policy p;
    loom_error_clear(&err);
    assert_int_equal(sandbox_policy_from_settings(s, ws, &p, &err), 0);
    json_decref(s);
    /* A temp dir of its own, to see that its root is excluded. */
    sandbox_paths_add(&p.temp, base, NULL);
    char *rws = realpath(ws, NULL), *rbase = realpath(base, NULL);
    snprintf(wsfile, sizeof wsfile, "%s/a.sh", rws);
    snprintf(tmpfile_, sizeof tmpfile_, "%s/loose", rbase);
    snprintf(otherfile, sizeof otherfile, "%s/f", other);
    assert_true(sandbox_meta_allowed(&p, wsfile));
    assert_true(sandbox_meta_allowed(&p, rws));
    assert_true(sandbox_meta_allowed(&p, tmpfile_)); /* beneath a temp dir */
    assert_false(sandbox_meta_allowed(&p, rbase));  /* the temp dir itself */
    char wsd[420];
    snprintf(wsd, sizeof wsd, "%s/.creds/k", rws);
    assert_false(sandbox_meta_allowed(&p, wsd));
    assert_false(sandbox_meta_allowed(&p, "/dev/null"));
    assert_false(sandbox_meta_allowed(&p, "/etc/passwd"));
    assert_false(sandbox_meta_allowed(&p, NULL));
    assert_false(sandbox_meta_allowed(&p, "relative"));
    free(rws);
    free(rbase);
    sandbox_policy_free(&p);
}

/* Paths are resolved as the command's thread sees them: its /proc/self,
 * symlinks followed (the last only when asked), pipes naming no path. */
static void test_resolve_for(void **state)
{
    char target[400], link[400];
    snprintf(target, sizeof target, "%s/resolve-target", other);
    snprintf(link, sizeof link, "%s/resolve-link", ws);
    write_file(target, "x");
    unlink(link);
    assert_int_equal(symlink(target, link), 0);
    char *rt = realpath(target, NULL), *rws = realpath(ws, NULL);

    char *r = sandbox_resolve_for(getpid(), ws, "resolve-link", true);
    assert_non_null(r);
    assert_string_equal(r, rt);
    free(r);
    r = sandbox_resolve_for(getpid(), ws, "./x/../resolve-link", false);
    assert_null(r); /* "x" does not exist: the kernel would fail too */
    r = sandbox_resolve_for(getpid(), ws, "resolve-link", false);
    char want[500];
    snprintf(want, sizeof want, "%s/resolve-link", rws);
    assert_string_equal(r, want);
    free(r);
    /* A trailing slash makes even lchown follow the link. */
    char dlink[420], dtarget[420];
    snprintf(dlink, sizeof dlink, "%s/dir-link", ws);
    snprintf(dtarget, sizeof dtarget, "%s", other);
    unlink(dlink);
    assert_int_equal(symlink(dtarget, dlink), 0);
    r = sandbox_resolve_for(getpid(), ws, "dir-link/", false);
    char *rother0 = realpath(other, NULL);
    assert_string_equal(r, rother0);
    free(r);
    free(rother0);
    unlink(dlink);

    /* A child with another cwd: /proc/self/cwd is the child's, not ours. */
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(go[1]);
        if (chdir(other) != 0)
            _exit(1);
        char c;
        ssize_t n = read(go[0], &c, 1);
        _exit(n < 0);
    }
    close(go[0]);
    /* Wait until the child has moved. */
    char cwdlink[64], buf[512];
    snprintf(cwdlink, sizeof cwdlink, "/proc/%d/cwd", (int)pid);
    char *rother = realpath(other, NULL);
    for (int i = 0; i < 500; i++) {
        ssize_t n = readlink(cwdlink, buf, sizeof buf - 1);
        if (n > 0) {
            buf[n] = '\0';
            if (strcmp(buf, rother) == 0)
                break;
        }
        usleep(2000);
    }
    r = sandbox_resolve_for(pid, NULL, "/proc/self/cwd/resolve-target", true);
    assert_non_null(r);
    assert_string_equal(r, rt);
    free(r);
    r = sandbox_resolve_for(pid, NULL, "/proc/thread-self/cwd/resolve-target", true);
    assert_non_null(r);
    assert_string_equal(r, rt);
    free(r);
    close(go[1]);
    waitpid(pid, NULL, 0);

    /* Our own pipe: /proc/PID/fd/N names "pipe:[…]", no path. */
    int pp[2];
    assert_int_equal(pipe(pp), 0);
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", pp[0]);
    assert_null(sandbox_resolve_for(getpid(), NULL, fdpath, true));
    close(pp[0]);
    close(pp[1]);
    assert_null(sandbox_resolve_for(getpid(), NULL, "relative", true));
    free(rt);
    free(rws);
    free(rother);
    unlink(link);
}

static void test_allow_unix_settings(void **state)
{
    sandbox_policy p;
    loom_error err;
    loom_error_clear(&err);
    json_t *s = json_pack("{s:b, s:[s], s:{s:[s]}}", "enabled", 1, "allowUnixSockets", "/run/a.sock",
                          "network", "allowUnixSockets", "rel.sock");
    assert_int_equal(sandbox_policy_from_settings(s, ws, &p, &err), 0);
    json_decref(s);
    assert_int_equal(p.allow_unix.n, 2);
    assert_string_equal(p.allow_unix.v[0], "/run/a.sock");
    char want[400];
    snprintf(want, sizeof want, "%s/rel.sock", ws);
    assert_string_equal(p.allow_unix.v[1], want);
    assert_int_equal(p.network, SANDBOX_NET_DENY); /* the object form keeps deny */
    sandbox_policy_free(&p);

    s = json_pack("{s:b, s:s}", "enabled", 1, "allowUnixSockets", "/run/a.sock");
    assert_true(sandbox_policy_from_settings(s, ws, &p, &err) < 0);
    assert_non_null(strstr(err.message, "allowUnixSockets"));
    json_decref(s);
    sandbox_policy_free(&p);
}

static int meta_try(const char *path)
{
    return chmod(path, 0777) == 0 ? 0 : -errno;
}

static void meta_checks(void *arg)
{
    (void)arg;
    char in[400], out[400];
    snprintf(in, sizeof in, "%s/meta-in.sh", ws);
    snprintf(out, sizeof out, "%s/meta-out", other);
    /* Inside: the supervisor lets it through. */
    CHECK(meta_try(in) == 0);
    CHECK(utimensat(AT_FDCWD, in, NULL, 0) == 0);
    CHECK(chown(in, getuid(), getgid()) == 0);
    /* Outside: refused, by path, by descriptor, by /proc/self/fd. */
    CHECK(meta_try(out) == -EPERM);
    CHECK(utimensat(AT_FDCWD, out, NULL, 0) < 0 && errno == EPERM);
    CHECK(chown(out, getuid(), getgid()) < 0 && errno == EPERM);
    int fd = open(out, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK(fchmod(fd, 0777) < 0 && errno == EPERM);
    CHECK(futimens(fd, NULL) < 0 && errno == EPERM);
    char via[64];
    snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
    CHECK(meta_try(via) == -EPERM);
    close(fd);
    /* A missing file fails as it would anyway. */
    char missing[420];
    snprintf(missing, sizeof missing, "%s/nope", ws);
    CHECK(meta_try(missing) == -ENOENT);
}

static void test_metadata_confined(void **state)
{
    if (!can_sandbox())
        skip();
    char in[400], out[400];
    snprintf(in, sizeof in, "%s/meta-in.sh", ws);
    snprintf(out, sizeof out, "%s/meta-out", other);
    write_file(in, "x");
    write_file(out, "x");
    chmod(out, 0644);
    struct stat before, after;
    assert_int_equal(stat(out, &before), 0);
    sandbox_policy p;
    test_policy(&p, "deny");
    assert_int_equal(in_child(&p, meta_checks, NULL), 0);
    sandbox_policy_free(&p);
    assert_int_equal(stat(out, &after), 0);
    assert_int_equal(after.st_mode, before.st_mode);
    assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    assert_int_equal(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);
    assert_int_equal(stat(in, &after), 0);
    assert_int_equal(after.st_mode & 0777, 0777);
}

static void test_network_denied(void **state)
{
    if (!can_sandbox())
        skip();
    int lfd;
    net_arg n = {.port = listen_port(&lfd)};
    n.pre_socket = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sandbox_policy p;
    test_policy(&p, "deny");
    assert_int_equal(in_child(&p, net_denied_checks, &n), 0);
    sandbox_policy_free(&p);
    close(n.pre_socket);
    close(lfd);
}

static void test_network_allowed(void **state)
{
    if (!can_sandbox())
        skip();
    int lfd;
    net_arg n = {.port = listen_port(&lfd)};
    n.pre_socket = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sandbox_policy p;
    test_policy(&p, "allow");
    assert_int_equal(in_child(&p, net_allowed_checks, &n), 0);
    sandbox_policy_free(&p);
    close(n.pre_socket);
    close(lfd);
}

/* ---- through proc_run ------------------------------------------------------------ */

static int failing_setup(void *ctx, char *msg, size_t cap)
{
    snprintf(msg, cap, "%s", (const char *)ctx);
    return -1;
}

static void test_proc_child_setup(void **state)
{
    /* A failing hook: the command does not run; 126 and the message. */
    const char *argv[] = {"sh", "-c", "echo ran", NULL};
    proc_spec spec = {.argv = argv, .child_setup = failing_setup, .child_ctx = "no way"};
    proc_result r;
    loom_error err;
    assert_int_equal(proc_run(&spec, &r, &err), 0);
    assert_int_equal(r.exit_code, 126);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "loom: no way\n");
    proc_result_free(&r);

    if (!can_sandbox())
        return;
    /* The sandbox, prepared here and entered by the child. */
    sandbox_policy p;
    test_policy(&p, "deny");
    sandbox_prep *prep = NULL;
    char msg[256];
    assert_int_equal(sandbox_prepare(&p, &prep, msg, sizeof msg), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "echo in > proc_in.txt && cat proc_in.txt; echo out > %s/proc.txt",
             other);
    const char *argv2[] = {"sh", "-c", cmd, NULL};
    proc_spec spec2 = {.argv = argv2, .cwd = ws, .child_setup = sandbox_child_setup,
                       .child_ctx = prep};
    assert_int_equal(proc_run(&spec2, &r, &err), 0);
    sandbox_prep_free(prep);
    assert_int_not_equal(r.exit_code, 0);
    assert_string_equal(r.out, "in\n");
    assert_non_null(strstr(r.err, "Permission denied"));

    sandbox_denial d;
    sandbox_report_analyze(&p, ws, r.out, r.out_len, r.err, r.err_len, &d);
    assert_true(d.denied);
    assert_int_equal(d.paths.n, 1);
    char expect[512];
    snprintf(expect, sizeof expect, "%s/proc.txt", other);
    assert_string_equal(d.paths.v[0], expect);
    sandbox_denial_free(&d);
    proc_result_free(&r);
    sandbox_policy_free(&p);
}

/* ---- denial reports ---------------------------------------------------------------- */

static void analyze(const sandbox_policy *p, const char *err_text, sandbox_denial *d)
{
    sandbox_report_analyze(p, ws, "", 0, err_text, strlen(err_text), d);
}

static void test_report_paths(void **state)
{
    sandbox_policy p;
    test_policy(&p, "deny");
    sandbox_denial d;
    char text[2048];

    snprintf(text, sizeof text,
             "touch: cannot touch '%s/a': Permission denied\n"
             "mkdir: cannot create directory \xe2\x80\x98%s/b\xe2\x80\x99: Permission denied\n"
             "bash: line 1: ../other/c: Permission denied\n"
             "PermissionError: [Errno 13] Permission denied: '%s/key'\n"
             "cat: %s: Permission denied\n",
             other, other, secret, secret_file);
    analyze(&p, text, &d);
    assert_true(d.denied);
    assert_false(d.network_blocked);
    assert_int_equal(d.paths.n, 5);
    char x[512];
    snprintf(x, sizeof x, "%s/a", other);
    assert_string_equal(d.paths.v[0], x);
    snprintf(x, sizeof x, "%s/c", other);
    assert_string_equal(d.paths.v[2], x);
    assert_int_equal(d.read_paths.n, 2);

    json_t *raw = json_object();
    loom_str t = LOOM_STR_INIT;
    str_puts(&t, "Exit code 1");
    sandbox_report_apply(&p, &d, raw, &t);
    assert_true(json_is_true(json_object_get(raw, "sandboxDenied")));
    assert_int_equal(json_array_size(json_object_get(raw, "sandboxBlockedPaths")), 5);
    assert_true(json_is_false(json_object_get(raw, "networkBlocked")));
    assert_non_null(strstr(str_cstr(&t), "[sandbox]"));
    assert_non_null(strstr(str_cstr(&t), "a protected path"));
    assert_non_null(strstr(str_cstr(&t), "outside the writable area"));
    assert_non_null(strstr(str_cstr(&t), ws));
    str_free(&t);
    json_decref(raw);
    sandbox_denial_free(&d);

    /* Not the sandbox's doing: inside the workspace, a server's refusal,
     * and a path the user could not write anyway. */
    snprintf(text, sizeof text,
             "cp: cannot create regular file '%s/ro.txt': Permission denied\n"
             "git@github.com: Permission denied (publickey).\n"
             "some words without a path\n",
             ws);
    analyze(&p, text, &d);
    assert_false(d.denied);
    assert_int_equal(d.paths.n, 0);
    raw = json_object();
    t = (loom_str)LOOM_STR_INIT;
    str_puts(&t, "ok");
    sandbox_report_apply(&p, &d, raw, &t);
    assert_string_equal(str_cstr(&t), "ok");
    assert_true(json_is_false(json_object_get(raw, "sandboxDenied")));
    assert_int_equal(json_array_size(json_object_get(raw, "sandboxBlockedPaths")), 0);
    str_free(&t);
    json_decref(raw);
    sandbox_denial_free(&d);

    /* Where the user's own permissions refuse a write, the sandbox is not
     * the reason (only observable when not running as root). */
    if (geteuid() != 0) {
        analyze(&p, "touch: cannot touch '/proc/version': Permission denied\n", &d);
        assert_false(d.denied);
        sandbox_denial_free(&d);
    }
    sandbox_policy_free(&p);
}

static void test_report_network(void **state)
{
    static const char *const blocked[] = {
        "bash: socket: Permission denied\nbash: /dev/tcp/127.0.0.1/80: Permission denied\n",
        "curl: (7) Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n",
        "curl: (6) Could not resolve host: example.com\n",
        ("Traceback (most recent call last):\n  File \"<string>\", line 1\n"
         "PermissionError: [Errno 13] Permission denied\n"),
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n",
    };
    sandbox_policy deny, allow;
    test_policy(&deny, "deny");
    test_policy(&allow, "allow");
    for (size_t i = 0; i < sizeof blocked / sizeof *blocked; i++) {
        sandbox_denial d;
        analyze(&deny, blocked[i], &d);
        if (!d.network_blocked || !d.denied)
            fail_msg("not seen as a network block: %s", blocked[i]);
        assert_int_equal(d.paths.n, 0);
        sandbox_denial_free(&d);
        /* With the network allowed, the sandbox did not do it. */
        analyze(&allow, blocked[i], &d);
        assert_false(d.network_blocked);
        sandbox_denial_free(&d);
    }
    sandbox_denial d;
    analyze(&deny, "ssh: connect to host x port 22: Connection refused\n", &d);
    assert_false(d.network_blocked);
    sandbox_denial_free(&d);
    sandbox_policy_free(&deny);
    sandbox_policy_free(&allow);
}

/* The denyRead list reaches the secret checks of every tool through
 * sandbox_secrets_deny (policy/secrets.h cannot read a policy): a path under
 * it is secret, a walk's fence skips it, and a disabled sandbox adds nothing. */
static void test_secrets_deny_bridge(void **state)
{
    (void)state;
    sandbox_policy p;
    test_policy(&p, "deny");
    secrets_deny buf;
    const secrets_deny *deny = sandbox_secrets_deny(&p, &buf);
    assert_non_null(deny);
    char why[600];
    assert_true(secrets_path_is_secret(secret_file, ws, deny, why, sizeof why));
    assert_non_null(strstr(why, "denyRead"));
    assert_false(secrets_path_is_secret(secret_file, ws, NULL, why, sizeof why));
    char key[400];
    snprintf(key, sizeof key, "%s/key", secret);
    assert_true(secrets_path_is_secret(key, ws, deny, NULL, 0));
    assert_false(secrets_path_is_secret(public_dir, ws, deny, NULL, 0));

    secrets_fence f;
    secrets_fence_init(&f, base, deny);
    assert_true(secrets_fence_hit(&f, key));
    assert_false(secrets_fence_hit(&f, public_dir));
    secrets_fence_free(&f);
    assert_true(secrets_dir_holds_secret(base, deny));

    /* Bash's word scan is for commands the kernel does not confine. */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cat %s", secret_file);
    json_t *in = json_pack("{s:s}", "command", cmd);
    assert_int_equal(secrets_call_touches("Bash", in, ws, deny, NULL, 0),
                     !deny->confines_commands);
    json_decref(in);

    p.enabled = false;
    assert_null(sandbox_secrets_deny(&p, &buf));
    sandbox_policy_free(&p);
}

/* A project's sandbox block, written to dir/.loom/settings.json. */
static void write_sandbox_settings(const char *dir, const char *block)
{
    char p[600];
    loom_error err;
    snprintf(p, sizeof p, "%s/.loom", dir);
    assert_int_equal(file_mkdirs(p, 0755, &err), 0);
    snprintf(p, sizeof p, "%s/.loom/settings.json", dir);
    write_file(p, block);
}

static loom_session *session_in(const char *dir, loom_agent **agent)
{
    loom_status st;
    loom_config *cfg = loom_config_new();
    assert_int_equal(loom_config_set(cfg, "provider", "replay", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", "/nonexistent.cassette", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", dir, &st), 0);
    *agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    assert_non_null(*agent);
    loom_session *s = loom_session_new(*agent, &st);
    assert_non_null(s);
    return s;
}

static bool denies(const sandbox_policy *p, const char *path)
{
    for (size_t i = 0; i < p->deny_read.n; i++)
        if (strstr(p->deny_read.v[i], path))
            return true;
    return false;
}

/* The sandbox policy is held by each session's governance, not by the
 * process: two sessions of one process, made for workspaces with different
 * sandbox settings, keep their own policy — freeing one changes nothing for
 * the other — and a session whose settings leave the sandbox disabled has
 * none. */
static void test_session_policies(void **state)
{
    (void)state;
    char a_dir[400], b_dir[400], c_dir[400], home[400];
    snprintf(a_dir, sizeof a_dir, "%s/sess-a", base);
    snprintf(b_dir, sizeof b_dir, "%s/sess-b", base);
    snprintf(c_dir, sizeof c_dir, "%s/sess-c", base);
    snprintf(home, sizeof home, "%s/loom-home", base);
    loom_error err;
    assert_int_equal(file_mkdirs(c_dir, 0755, &err), 0);
    assert_int_equal(file_mkdirs(home, 0755, &err), 0);
    write_sandbox_settings(a_dir, "{\"sandbox\": {\"enabled\": true, \"denyRead\": [\"only-a\"]}}");
    write_sandbox_settings(b_dir, "{\"sandbox\": {\"enabled\": true, \"denyRead\": [\"only-b\"]}}");
    char *old_home = getenv("LOOM_HOME") ? strdup(getenv("LOOM_HOME")) : NULL;
    setenv("LOOM_HOME", home, 1);

    loom_agent *ga, *gb, *gc;
    loom_session *sa = session_in(a_dir, &ga);
    loom_session *sb = session_in(b_dir, &gb);
    loom_session *sc = session_in(c_dir, &gc);
    const sandbox_policy *pa = sa->gov->sandbox, *pb = sb->gov->sandbox;
    assert_non_null(pa);
    assert_non_null(pb);
    assert_ptr_not_equal(pa, pb);
    assert_true(pa->enabled && pb->enabled);
    assert_true(denies(pa, "/sess-a/only-a") && !denies(pa, "only-b"));
    assert_true(denies(pb, "/sess-b/only-b") && !denies(pb, "only-a"));
    assert_null(sc->gov->sandbox);
    assert_null(sc->gov->sandbox_error);

    /* The last session made does not take over the others' policy, and
     * freeing one leaves the other's intact. */
    loom_session_free(sa);
    loom_agent_free(ga);
    assert_true(sb->gov->sandbox->enabled && denies(sb->gov->sandbox, "only-b"));

    /* Invalid settings are held per session too: commands refused there only. */
    write_sandbox_settings(c_dir, "{\"sandbox\": {\"enabled\": true, \"denyRead\": [\"\"]}}");
    loom_agent *gd;
    loom_session *sd = session_in(c_dir, &gd);
    assert_null(sd->gov->sandbox);
    assert_non_null(sd->gov->sandbox_error);
    assert_non_null(strstr(sd->gov->sandbox_error, "denyRead"));
    assert_null(sb->gov->sandbox_error);

    loom_session_free(sd);
    loom_agent_free(gd);
    loom_session_free(sc);
    loom_agent_free(gc);
    loom_session_free(sb);
    loom_agent_free(gb);
    if (old_home) {
        setenv("LOOM_HOME", old_home, 1);
        free(old_home);
    } else {
        unsetenv("LOOM_HOME");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_defaults),
        cmocka_unit_test(test_from_settings),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_settings_load_merges),
        cmocka_unit_test(test_settings_load_untrusted),
        cmocka_unit_test(test_path_classes),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_grandchild_confined),
        cmocka_unit_test(test_deny_inside_workspace),
        cmocka_unit_test(test_meta_allowed),
        cmocka_unit_test(test_resolve_for),
        cmocka_unit_test(test_allow_unix_settings),
        cmocka_unit_test(test_metadata_confined),
        cmocka_unit_test(test_network_denied),
        cmocka_unit_test(test_network_allowed),
        cmocka_unit_test(test_proc_child_setup),
        cmocka_unit_test(test_report_paths),
        cmocka_unit_test(test_report_network),
        cmocka_unit_test(test_secrets_deny_bridge),
        cmocka_unit_test(test_session_policies),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

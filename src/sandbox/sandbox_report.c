/* sandbox_report.c — reads a sandboxed command's output for the marks of a
 * denial and turns them into the structured result fields and the note the
 * model gets (sandbox_report.h).
 *
 * Messages name paths in many shapes: quoted ('x', "x", ‘x’, `x'), bare
 * (/x, ./x, ../x), or as the field before the error in "prog: PATH: error".
 * Every candidate is judged against the policy, so a wrong guess costs
 * nothing: only a path the policy actually keeps from the command survives. */
#include "sandbox/sandbox_report.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* More than this many paths says nothing more to the model. */
#define REPORT_MAX_PATHS 20

/* Case-insensitive search in [s, s+n). */
static const char *find_ci(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; m <= n && i <= n - m; i++) {
        size_t k = 0;
        while (k < m && tolower((unsigned char)s[i + k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == m)
            return s + i;
    }
    return NULL;
}

static const char *const DENIAL_MARKS[] = {
    "permission denied", "operation not permitted", "read-only file system",
    "eacces", "eperm", "erofs",
};

static const char *denial_mark(const char *line, size_t n)
{
    for (size_t i = 0; i < sizeof DENIAL_MARKS / sizeof *DENIAL_MARKS; i++) {
        const char *m = find_ci(line, n, DENIAL_MARKS[i]);
        if (m)
            return m;
    }
    return NULL;
}

/* Words that put a denial on a socket rather than a file. */
static const char *const NET_WORDS[] = {
    "socket", "connect", "/dev/tcp/", "/dev/udp/", "bind", "network", "errno 13]",
};

/* Failures that, with the network denied, mean the sandbox stopped it: no
 * socket could be made, so neither a connection nor a DNS lookup worked. */
static const char *const NET_FAILURES[] = {
    "couldn't connect to server",   "failed to connect",        "could not resolve host",
    "temporary failure in name resolution", "name or service not known",
    "network is unreachable",       "could not resolve",        "getaddrinfo",
    "eai_again",                    "enotfound",                "unable to connect",
    "failed to establish a new connection",
};

static bool path_like(const char *s, size_t n)
{
    if (n == 0 || n >= PATH_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0' || s[i] == '\n')
            return false;
    }
    return s[0] == '/' || (n >= 2 && s[0] == '~' && s[1] == '/') ||
           (n >= 2 && s[0] == '.' && s[1] == '/') || (n >= 3 && memcmp(s, "../", 3) == 0);
}

typedef struct {
    const sandbox_policy *p;
    const char *cwd;
    sandbox_denial *d;
    bool line_had_path; /* a path of this line was judged blocked */
} scan;

static bool listed(const sandbox_paths *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i], s) == 0)
            return true;
    }
    return false;
}

/* Could Loom itself (unsandboxed) write there? If not, the user's own
 * permissions refused it and the sandbox is not the reason. */
static bool writable_outside(const char *abs)
{
    char buf[PATH_MAX];
    size_t n = strlen(abs);
    if (n >= sizeof buf)
        return false;
    memcpy(buf, abs, n + 1);
    for (;;) {
        if (access(buf, W_OK) == 0)
            return true;
        if (errno != ENOENT && errno != ENOTDIR)
            return false;
        char *slash = strrchr(buf, '/');
        if (!slash)
            return false;
        if (slash == buf) {
            if (buf[1] == '\0')
                return false;
            buf[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
}

/* Judges one candidate path of a denial line. */
static void judge(scan *sc, const char *s, size_t n)
{
    while (n > 0 && strchr(":,;.)", s[n - 1]))
        n--;
    if (n == 0 || n >= PATH_MAX)
        return;
    char raw[PATH_MAX];
    memcpy(raw, s, n);
    raw[n] = '\0';
    if (raw[0] == '/' && (strncmp(raw, "/dev/tcp/", 9) == 0 || strncmp(raw, "/dev/udp/", 9) == 0))
        return; /* bash's network pseudo-paths: a network matter */

    /* Resolve against where the command ran, not the policy's workspace. */
    sandbox_paths tmp = {0};
    sandbox_paths_add(&tmp, raw, sc->cwd ? sc->cwd : sc->p->workspace);
    const char *abs = tmp.v[0];
    bool read_denied = sandbox_path_read_denied(sc->p, abs);
    bool blocked = read_denied ||
                   (!sandbox_path_writable(sc->p, abs) && writable_outside(abs));
    if (blocked) {
        sc->line_had_path = true;
        if (!listed(&sc->d->paths, abs) && sc->d->paths.n < REPORT_MAX_PATHS) {
            sandbox_paths_add(&sc->d->paths, abs, NULL);
            if (read_denied)
                sandbox_paths_add(&sc->d->read_paths, abs, NULL);
        }
    }
    free(tmp.v[0]);
    free(tmp.v);
}

/* Quoted segments: ASCII quotes, `x', and the UTF-8 ‘x’ and “x” that GNU
 * tools print in UTF-8 locales. */
static void quoted_candidates(scan *sc, const char *line, size_t n)
{
    static const struct {
        const char *open, *close;
    } Q[] = {
        {"'", "'"}, {"\"", "\""}, {"`", "'"}, {"\xe2\x80\x98", "\xe2\x80\x99"},
        {"\xe2\x80\x9c", "\xe2\x80\x9d"},
    };
    for (size_t q = 0; q < sizeof Q / sizeof *Q; q++) {
        size_t ol = strlen(Q[q].open), cl = strlen(Q[q].close);
        size_t i = 0;
        while (i + ol <= n) {
            if (memcmp(line + i, Q[q].open, ol) != 0) {
                i++;
                continue;
            }
            size_t start = i + ol, j = start;
            while (j + cl <= n && memcmp(line + j, Q[q].close, cl) != 0)
                j++;
            if (j + cl > n)
                break;
            if (j > start && path_like(line + start, j - start))
                judge(sc, line + start, j - start);
            /* A bare name in quotes ('out.txt') is a path too when the
             * message is about it; judge() resolves it against the cwd. */
            else if (j > start && !memchr(line + start, ' ', j - start))
                judge(sc, line + start, j - start);
            i = j + cl;
        }
    }
}

static void scan_line(scan *sc, const char *line, size_t n)
{
    const char *mark = denial_mark(line, n);
    bool deny_net = sc->p->network != SANDBOX_NET_ALLOW;
    sc->line_had_path = false;
    if (mark) {
        quoted_candidates(sc, line, n);
        /* Bare tokens that start like a path. */
        size_t i = 0;
        while (i < n) {
            while (i < n && (isspace((unsigned char)line[i]) || line[i] == '('))
                i++;
            size_t start = i;
            while (i < n && !isspace((unsigned char)line[i]))
                i++;
            if (path_like(line + start, i - start))
                judge(sc, line + start, i - start);
        }
        /* "prog: PATH: Permission denied" with PATH relative and unquoted. */
        size_t before = (size_t)(mark - line);
        if (before >= 2 && line[before - 2] == ':' && line[before - 1] == ' ') {
            size_t end = before - 2, start = end;
            while (start > 0 && !(line[start - 1] == ' ' && start >= 2 && line[start - 2] == ':'))
                start--;
            if (end > start && !memchr(line + start, ' ', end - start))
                judge(sc, line + start, end - start);
        }
    }
    if (!deny_net || sc->d->network_blocked)
        return;
    /* ssh's "Permission denied (publickey)" is a login refused by a server,
     * which means the network worked. */
    if (find_ci(line, n, "(publickey"))
        return;
    if (mark && !sc->line_had_path) {
        for (size_t i = 0; i < sizeof NET_WORDS / sizeof *NET_WORDS; i++) {
            if (find_ci(line, n, NET_WORDS[i])) {
                sc->d->network_blocked = true;
                return;
            }
        }
    }
    for (size_t i = 0; i < sizeof NET_FAILURES / sizeof *NET_FAILURES; i++) {
        if (find_ci(line, n, NET_FAILURES[i])) {
            sc->d->network_blocked = true;
            return;
        }
    }
}

static void scan_lines(scan *sc, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n;
        scan_line(sc, s + i, end - i);
        i = end + 1;
    }
}

/* A command can print megabytes; its error messages are near the start or
 * the end, so only that much of each end is read. */
#define REPORT_SCAN_END ((size_t)256 << 10)

static void scan_text(scan *sc, const char *s, size_t n)
{
    if (!s)
        return;
    if (n <= 2 * REPORT_SCAN_END) {
        scan_lines(sc, s, n);
        return;
    }
    scan_lines(sc, s, REPORT_SCAN_END);
    /* The tail from a line start, so no half line is judged. */
    const char *tail = s + n - REPORT_SCAN_END;
    const char *nl = memchr(tail, '\n', REPORT_SCAN_END);
    if (nl)
        scan_lines(sc, nl + 1, (size_t)(s + n - (nl + 1)));
}

void sandbox_report_analyze(const sandbox_policy *p, const char *cwd, const char *out,
                            size_t out_len, const char *err, size_t err_len, sandbox_denial *d)
{
    memset(d, 0, sizeof *d);
    if (!p)
        return;
    scan sc = {.p = p, .cwd = cwd, .d = d};
    scan_text(&sc, err, err_len);
    scan_text(&sc, out, out_len);
    d->denied = d->network_blocked || d->paths.n > 0;
}

void sandbox_denial_note_proxy(sandbox_denial *d, const char *hosts)
{
    if (!hosts || !hosts[0])
        return;
    snprintf(d->proxy_refused, sizeof d->proxy_refused, "%s", hosts);
    d->network_blocked = d->denied = true;
}

void sandbox_denial_free(sandbox_denial *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->paths.n; i++)
        free(d->paths.v[i]);
    free(d->paths.v);
    for (size_t i = 0; i < d->read_paths.n; i++)
        free(d->read_paths.v[i]);
    free(d->read_paths.v);
    memset(d, 0, sizeof *d);
}

void sandbox_report_apply(const sandbox_policy *p, const sandbox_denial *d, json_t *raw,
                          loom_str *text)
{
    if (raw && json_is_object(raw)) {
        json_t *paths = json_array();
        for (size_t i = 0; i < d->paths.n; i++)
            json_array_append_new(paths, json_string(d->paths.v[i]));
        json_object_set_new(raw, "sandboxDenied", json_boolean(d->denied));
        json_object_set_new(raw, "sandboxBlockedPaths", paths);
        json_object_set_new(raw, "networkBlocked", json_boolean(d->network_blocked));
        if (d->proxy_refused[0])
            json_object_set_new(raw, "networkRefusedHosts", json_string(d->proxy_refused));
    }
    if (!text || !d->denied)
        return;

    if (text->len && text->ptr[text->len - 1] != '\n')
        str_putc(text, '\n');
    str_puts(text, "\n[sandbox] Loom's sandbox blocked this command:\n");
    for (size_t i = 0; i < d->paths.n; i++) {
        if (listed(&d->read_paths, d->paths.v[i]))
            str_printf(text, "- %s: a protected path (sandbox.denyRead); it cannot be read\n",
                       d->paths.v[i]);
        else
            str_printf(text, "- %s: outside the writable area\n", d->paths.v[i]);
    }
    if (d->proxy_refused[0])
        str_printf(text, "- network: the proxy refused %s: not in sandbox.network.allowedDomains\n",
                   d->proxy_refused);
    else if (d->network_blocked && p && p->network == SANDBOX_NET_PROXY)
        str_puts(text, "- network: commands reach only the hosts of "
                       "sandbox.network.allowedDomains, over HTTP(S) through Loom's proxy "
                       "(http_proxy/https_proxy are set); no DNS, no UDP, no other TCP\n");
    else if (d->network_blocked)
        str_puts(text, "- network: commands have no network access (no Unix sockets either, "
                       "but socketpair and the paths in sandbox.allowUnixSockets)\n");
    str_puts(text, "To proceed: ");
    if (d->paths.n > d->read_paths.n)
        str_printf(text, "write inside the workspace (%s)%s instead; ",
                   p && p->workspace ? p->workspace : "the working directory",
                   p && p->temp.n ? " or a temp dir" : "");
    str_puts(text, "do not try to get around the sandbox. If the task really needs this, ask "
                   "the user: they can allow it in .loom/settings.json (sandbox.writablePaths, "
                   "sandbox.network.allowedDomains, sandbox.allowUnixSockets) or approve running "
                   "the command with dangerouslyDisableSandbox: true.");
}

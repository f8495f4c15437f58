/* program_options.c — the table of known programs' global options and the
 * normalizer that drops them (program_options.h has the contract,
 * docs/permissions-rules.md "Global options" the user-facing list).
 *
 * Only options that may stand before the subcommand are listed. An option
 * not in the table stops the normalizer with "unsure": guessing whether it
 * takes a value could make the wrong word the subcommand.
 */
#include "shell/program_options.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"

enum {
    PX_PLUS = 1u << 0,      /* cargo/rustup +toolchain before the subcommand */
    PX_DASH_LONG = 1u << 1, /* single-dash long options with '=' (terraform -chdir=DIR) */
    PX_ASSIGNS = 1u << 2,   /* NAME=value arguments anywhere (make) */
    PX_OPT_NUM = 1u << 3,   /* -j / -l may take an optional number (make) */
    PX_GIT = 1u << 4,       /* -c / --config-env can define aliases or commands */
    PX_ANY_LONG = 1u << 5,  /* --key=value config options of any name (npm) */
};

typedef struct prog_spec {
    const char *name;
    const char *short_val;           /* letters that take a value */
    const char *short_flag;          /* letters that take none */
    const char *const *long_val;     /* long options that take a value */
    const char *const *long_flag;    /* long options that take none */
    unsigned extra;
} prog_spec;

static const char *const GIT_LV[] = {"--git-dir", "--work-tree", "--namespace", "--super-prefix",
                                     "--config-env", "--exec-path", "--list-cmds",
                                     "--attr-source", NULL};
static const char *const GIT_LF[] = {"--no-pager", "--paginate", "--bare",
                                     "--no-replace-objects", "--literal-pathspecs",
                                     "--glob-pathspecs", "--noglob-pathspecs",
                                     "--icase-pathspecs", "--no-optional-locks", "--no-advice",
                                     "--no-lazy-fetch", "--html-path", "--man-path",
                                     "--info-path", NULL};
static const char *const NPM_LV[] = {"--prefix", "--workspace", "--userconfig", "--globalconfig",
                                     "--cache", "--registry", "--loglevel", "--otp", "--cwd",
                                     "--dir", "--filter", "--reporter", "--mutex",
                                     "--modules-folder", "--cache-folder", "--global-folder",
                                     "--use-yarnrc", "--network-timeout", NULL};
static const char *const NPM_LF[] = {"--global", "--silent", "--quiet", "--workspaces",
                                     "--include-workspace-root", "--yes", "--no", "--json",
                                     "--long", "--verbose", "--offline", "--prefer-offline",
                                     "--ignore-scripts", "--no-audit", "--no-fund", "--force",
                                     "--workspace-root", "--recursive", "--frozen-lockfile",
                                     "--no-progress", "--non-interactive", "--color",
                                     "--no-color", "--stream", "--parallel", "--shamefully-hoist",
                                     "--no-default-rc", "--ignore-engines", NULL};
static const char *const DOCKER_LV[] = {"--host", "--context", "--config", "--log-level",
                                        "--tlscacert", "--tlscert", "--tlskey", "--file",
                                        "--project-name", "--project-directory", "--profile",
                                        "--env-file", "--ansi", "--parallel", "--connection",
                                        "--url", "--identity", "--root", "--runroot",
                                        "--storage-driver", "--cgroup-manager", NULL};
static const char *const DOCKER_LF[] = {"--tls", "--tlsverify", "--debug", "--compatibility",
                                        "--dry-run", "--all-resources", "--remote", NULL};
static const char *const KUBE_LV[] = {"--namespace", "--context", "--cluster", "--user",
                                      "--kubeconfig", "--server", "--token", "--as",
                                      "--as-group", "--as-uid", "--request-timeout",
                                      "--certificate-authority", "--client-certificate",
                                      "--client-key", "--cache-dir", "--tls-server-name",
                                      "--username", "--password", "--profile", "--profile-output",
                                      "--log-file", "--v", "--vmodule", "--kube-context",
                                      "--registry-config", "--repository-config",
                                      "--repository-cache", "--burst-limit", "--kube-apiserver",
                                      "--kube-token", "--kube-as-user", "--kube-as-group",
                                      "--kube-ca-file", "--kube-tls-server-name", "--qps", NULL};
static const char *const KUBE_LF[] = {"--insecure-skip-tls-verify", "--match-server-version",
                                      "--warnings-as-errors", "--disable-compression", "--debug",
                                      "--kube-insecure-skip-tls-verify", NULL};
static const char *const CARGO_LV[] = {"--color", "--config", "--explain", NULL};
static const char *const CARGO_LF[] = {"--verbose", "--quiet", "--locked", "--offline",
                                       "--frozen", NULL};
static const char *const MAKE_LV[] = {"--directory", "--file", "--makefile", "--include-dir",
                                      "--old-file", "--assume-old", "--what-if", "--new-file",
                                      "--assume-new", "--jobs", "--load-average", "--eval",
                                      "--output-sync", "--debug", NULL};
static const char *const MAKE_LF[] = {"--keep-going", "--silent", "--quiet", "--dry-run",
                                      "--just-print", "--always-make", "--ignore-errors",
                                      "--environment-overrides", "--no-print-directory",
                                      "--print-directory", "--warn-undefined-variables",
                                      "--no-builtin-rules", "--no-builtin-variables",
                                      "--question", "--touch", "--no-keep-going", "--trace",
                                      "--check-symlink-times", NULL};
static const char *const APT_LV[] = {"--option", "--target-release", "--config-file", NULL};
static const char *const APT_LF[] = {"--yes", "--assume-yes", "--quiet", "--simulate",
                                     "--no-install-recommends", "--install-suggests",
                                     "--fix-broken", "--allow-downgrades", "--purge",
                                     "--allow-unauthenticated", "--force-yes", "--dry-run",
                                     "--no-download", "--reinstall", NULL};
static const char *const PIP_LV[] = {"--python", "--proxy", "--cache-dir", "--log", "--timeout",
                                     "--retries", "--exists-action", "--trusted-host", "--cert",
                                     "--client-cert", "--use-feature", "--use-deprecated", NULL};
static const char *const PIP_LF[] = {"--isolated", "--quiet", "--verbose",
                                     "--disable-pip-version-check", "--no-cache-dir",
                                     "--require-virtualenv", "--no-input", "--no-color",
                                     "--no-python-version-warning", NULL};
static const char *const AWS_LV[] = {"--profile", "--region", "--output", "--endpoint-url",
                                     "--query", "--cli-read-timeout", "--cli-connect-timeout",
                                     "--ca-bundle", "--color", "--cli-binary-format", NULL};
static const char *const AWS_LF[] = {"--debug", "--no-verify-ssl", "--no-paginate",
                                     "--no-sign-request", "--no-cli-pager", "--cli-auto-prompt",
                                     NULL};
static const char *const SYSTEMCTL_LV[] = {"--host", "--machine", "--type", "--property",
                                           "--signal", "--state", "--root", NULL};
static const char *const SYSTEMCTL_LF[] = {"--user", "--system", "--global", "--no-block",
                                           "--now", "--quiet", "--force", "--no-pager", "--all",
                                           "--full", "--no-ask-password", "--runtime", NULL};
static const char *const GO_LV[] = {NULL};
static const char *const NONE[] = {NULL};

static const prog_spec PROGRAMS[] = {
    {"git", "Cc", "pPvh", GIT_LV, GIT_LF, PX_GIT},
    {"npm", "wC", "gsqdlyD", NPM_LV, NPM_LF, PX_ANY_LONG},
    {"pnpm", "CwF", "grsqy", NPM_LV, NPM_LF, PX_ANY_LONG},
    {"yarn", "", "sv", NPM_LV, NPM_LF, PX_ANY_LONG},
    {"bun", "", "", NPM_LV, NPM_LF, 0},
    {"docker", "Hcl", "Dv", DOCKER_LV, DOCKER_LF, 0},
    {"podman", "c", "", DOCKER_LV, DOCKER_LF, 0},
    {"docker-compose", "fp", "", DOCKER_LV, DOCKER_LF, 0},
    {"kubectl", "nsv", "", KUBE_LV, KUBE_LF, 0},
    {"oc", "nsv", "", KUBE_LV, KUBE_LF, 0},
    {"helm", "n", "", KUBE_LV, KUBE_LF, 0},
    {"cargo", "CZ", "vq", CARGO_LV, CARGO_LF, PX_PLUS},
    {"rustup", "", "vq", NONE, CARGO_LF, PX_PLUS},
    {"terraform", "", "", NONE, NONE, PX_DASH_LONG},
    {"tofu", "", "", NONE, NONE, PX_DASH_LONG},
    {"make", "CfIoWjlO", "ksnBieqrRStwL", MAKE_LV, MAKE_LF, PX_ASSIGNS | PX_OPT_NUM},
    {"gmake", "CfIoWjlO", "ksnBieqrRStwL", MAKE_LV, MAKE_LF, PX_ASSIGNS | PX_OPT_NUM},
    {"apt", "otc", "yqs", APT_LV, APT_LF, 0},
    {"apt-get", "otc", "yqsfmdbu", APT_LV, APT_LF, 0},
    {"pip", "", "qv", PIP_LV, PIP_LF, 0},
    {"pip3", "", "qv", PIP_LV, PIP_LF, 0},
    {"aws", "", "", AWS_LV, AWS_LF, 0},
    {"systemctl", "HMtps", "qfal", SYSTEMCTL_LV, SYSTEMCTL_LF, 0},
    {"go", "C", "", GO_LV, NONE, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};

static const prog_spec *find(const char *name)
{
    for (const prog_spec *p = PROGRAMS; p->name; p++)
        if (!strcmp(p->name, name))
            return p;
    return NULL;
}

bool program_options_known(const char *name)
{
    return name && find(name) != NULL;
}

static bool in_list(const char *const *l, const char *s, size_t n)
{
    for (; *l; l++)
        if (strlen(*l) == n && !strncmp(*l, s, n))
            return true;
    return false;
}

/* git config keys whose value is a command git runs, or an alias: after
 * `-c key=value` with one of these, no rule can say what runs. */
static bool git_key_runs(const char *kv)
{
    static const char *const PREFIX[] = {"alias.", "pager.", "filter.", "includeif.",
                                         "include.", "credential.", "difftool.", "mergetool.",
                                         "diff.", "merge.", "gpg.", "remote.", "url.",
                                         "protocol.", "uploadpack.", "receive.", "ssh.",
                                         NULL};
    static const char *const EXACT[] = {"core.pager", "core.sshcommand", "core.editor",
                                        "core.hookspath", "core.fsmonitor", "core.askpass",
                                        "core.gitproxy", "sequence.editor",
                                        "uploadpack.packobjectshook", "protocol.allow", NULL};
    size_t kl = strcspn(kv, "=");
    for (size_t k = 0; PREFIX[k]; k++)
        if (!strncasecmp(kv, PREFIX[k], strlen(PREFIX[k])))
            return true;
    for (size_t k = 0; EXACT[k]; k++)
        if (strlen(EXACT[k]) == kl && !strncasecmp(kv, EXACT[k], kl))
            return true;
    return false;
}

static void unsure(prog_norm *out, const char *fmt, const char *what)
{
    if (out->unsure)
        return;
    out->unsure = true;
    char w[120];
    /* The value is the model's text: cut it at a character boundary, since
     * the reason ends up inside JSON with more text after it. */
    snprintf(w, sizeof w, "%s", what);
    size_t n = strlen(w);
    if (n + 1 == sizeof w) {
        size_t i = n;
        while (i > 0 && ((unsigned char)w[i - 1] & 0xC0) == 0x80)
            i--;
        if (i > 0 && (unsigned char)w[i - 1] >= 0xC0)
            w[i - 1] = '\0';
    }
    snprintf(out->why, sizeof out->why, fmt, w);
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

static bool is_assignment(const char *w)
{
    if (!(isalpha((unsigned char)w[0]) || w[0] == '_'))
        return false;
    size_t k = 1;
    while (isalnum((unsigned char)w[k]) || w[k] == '_')
        k++;
    return w[k] == '=';
}

void program_options_normalize(const char *name, const char *const *argv, size_t argc,
                               const char *const *assign, size_t nassign, prog_norm *out)
{
    memset(out, 0, sizeof *out);
    out->keep = xmalloc((argc ? argc : 1) * sizeof *out->keep);
    const prog_spec *p = name ? find(name) : NULL;
    out->known = p != NULL;
    if (!p || argc == 0) {
        for (size_t k = 0; k < argc; k++)
            out->keep[out->n++] = k;
        return;
    }
    if (p->extra & PX_GIT)
        for (size_t a = 0; a < nassign; a++)
            if (!strncmp(assign[a], "GIT_CONFIG_", 11) || !strncmp(assign[a], "GIT_PAGER=", 10) ||
                !strncmp(assign[a], "GIT_SSH_COMMAND=", 16) ||
                !strncmp(assign[a], "GIT_EXTERNAL_DIFF=", 18) ||
                !strncmp(assign[a], "GIT_EXEC_PATH=", 14))
                unsure(out, "%s defines git configuration or a command git runs", assign[a]);
    out->keep[out->n++] = 0;
    size_t i = 1;
    bool first = true;
    while (i < argc) {
        const char *a = argv[i];
        if (first && (p->extra & PX_PLUS) && a[0] == '+') {
            i++;
            out->changed = true;
            first = false;
            continue;
        }
        first = false;
        if ((p->extra & PX_ASSIGNS) && is_assignment(a)) {
            i++;
            out->changed = true;
            continue;
        }
        if (a[0] != '-' || !a[1])
            break;
        if (!strcmp(a, "--")) {
            i++;
            out->changed = true;
            break;
        }
        if ((p->extra & PX_DASH_LONG) && a[1] != '-') {
            /* terraform -chdir=DIR, -help, -version */
            if (!strncmp(a, "-chdir=", 7) || !strcmp(a, "-help") || !strcmp(a, "-version")) {
                i++;
                out->changed = true;
                continue;
            }
            unsure(out, "unknown option %s before the subcommand", a);
            break;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a, '=');
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            const char *val = eq ? eq + 1 : NULL;
            bool takes = in_list(p->long_val, a, nl);
            if (!takes && !in_list(p->long_flag, a, nl)) {
                if ((p->extra & PX_ANY_LONG) && eq) {
                    i++;
                    out->changed = true;
                    continue;
                }
                unsure(out, "unknown option %s before the subcommand", a);
                break;
            }
            if (takes && !eq) {
                if (i + 1 >= argc)
                    break;
                val = argv[i + 1];
                i++;
            }
            if ((p->extra & PX_GIT) && val && nl == 12 && !strncmp(a, "--config-env", 12) &&
                git_key_runs(val))
                unsure(out, "git --config-env %s defines an alias or a command git runs", val);
            i++;
            out->changed = true;
            continue;
        }
        /* A cluster of short options: flags, then at most one with a value
         * (the rest of the word, or the next word). */
        bool took_next = false;
        bool bad = false;
        for (size_t k = 1; a[k]; k++) {
            char o = a[k];
            if (strchr(p->short_val, o)) {
                const char *val = a + k + 1;
                if ((p->extra & PX_OPT_NUM) && (o == 'j' || o == 'l')) {
                    if (!*val && i + 1 < argc && all_digits(argv[i + 1]))
                        took_next = true;
                    break;
                }
                if (!*val) {
                    if (i + 1 >= argc) {
                        bad = true;
                        break;
                    }
                    val = argv[i + 1];
                    took_next = true;
                }
                if ((p->extra & PX_GIT) && o == 'c' && git_key_runs(val))
                    unsure(out, "git -c %s defines an alias or a command git runs", val);
                break;
            }
            if (!strchr(p->short_flag, o)) {
                unsure(out, "unknown option %s before the subcommand", a);
                bad = true;
                break;
            }
        }
        if (bad)
            break;
        i += took_next ? 2 : 1;
        out->changed = true;
    }
    /* docker container X is docker X (run, rm, exec, kill, …): the
     * management-command spelling of the same subcommand. */
    if (i + 1 < argc && !strcmp(argv[i], "container") &&
        (!strcmp(name, "docker") || !strcmp(name, "podman") || !strcmp(name, "nerdctl"))) {
        i++;
        out->changed = true;
    }
    for (; i < argc; i++) {
        if ((p->extra & PX_ASSIGNS) && is_assignment(argv[i])) {
            out->changed = true;
            continue;
        }
        out->keep[out->n++] = i;
    }
}

void prog_norm_free(prog_norm *n)
{
    free(n->keep);
    n->keep = NULL;
    n->n = 0;
}

/* test_policy_secrets.c — the credential-store list (policy/secrets.h): which
 * paths count as secret in every spelling a tool call can use (absolute,
 * relative, "~/", "..", a symlinked file, a symlinked directory, a store that
 * is itself a symlink), which Bash words and redirections name one, and the
 * fence a search rooted above a store uses to skip it. Runs with HOME set to
 * a fresh temp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/secrets.h"

static char root[256], home[300], proj[300], elsewhere[300];

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void path_of(char *buf, size_t cap, const char *base, const char *rel)
{
    snprintf(buf, cap, "%s/%s", base, rel);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/loom-secrets-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(proj, sizeof proj, "%s/proj", root);
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", root);
    char p[512], q[512];
    mkdir(home, 0700);
    mkdir(proj, 0700);
    mkdir(elsewhere, 0700);
    path_of(p, sizeof p, home, ".ssh");
    mkdir(p, 0700);
    path_of(p, sizeof p, home, ".ssh/id_rsa");
    put_file(p, "key\n");
    path_of(p, sizeof p, home, "notes");
    mkdir(p, 0700);
    path_of(p, sizeof p, home, "notes/todo.txt");
    put_file(p, "todo\n");
    path_of(p, sizeof p, home, ".sshfoo");
    put_file(p, "not a store\n");
    /* ~/.aws is a symlink to a directory elsewhere. */
    path_of(p, sizeof p, elsewhere, "aws-real");
    mkdir(p, 0700);
    path_of(q, sizeof q, elsewhere, "aws-real/credentials");
    put_file(q, "aws\n");
    path_of(q, sizeof q, home, ".aws");
    if (symlink(p, q) != 0)
        return -1;
    /* In the workspace: a link to the key, a link to the store. */
    path_of(p, sizeof p, home, ".ssh/id_rsa");
    path_of(q, sizeof q, proj, "link_key");
    if (symlink(p, q) != 0)
        return -1;
    path_of(p, sizeof p, home, ".ssh");
    path_of(q, sizeof q, proj, "dotssh");
    if (symlink(p, q) != 0)
        return -1;
    /* A loop: a/b → a/b. */
    path_of(q, sizeof q, proj, "loop");
    if (symlink(q, q) != 0)
        return -1;
    setenv("HOME", home, 1);
    return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int teardown(void **state)
{
    (void)state;
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static bool secret(const char *path, const char *cwd)
{
    char why[600];
    return secrets_path_is_secret(path, cwd, NULL, why, sizeof why);
}

static void test_default_list(void **state)
{
    (void)state;
    bool ssh = false, aws = false, netrc = false, docker = false;
    for (size_t i = 0; i < secrets_default_count(); i++) {
        const char *s = secrets_default_at(i);
        ssh |= !strcmp(s, ".ssh");
        aws |= !strcmp(s, ".aws");
        netrc |= !strcmp(s, ".netrc");
        docker |= !strcmp(s, ".docker/config.json");
    }
    assert_true(ssh && aws && netrc && docker);
    /* Every credential file the risk classifier names is a secret path. */
    static const char *const also[] = {"~/.pgpass", "~/.my.cnf", "~/.vault-token",
                                       "~/.config/git/credentials", "~/.cargo/credentials",
                                       "~/.cargo/credentials.toml", "~/.gem/credentials",
                                       "~/.terraform.d/credentials.tfrc.json"};
    for (size_t i = 0; i < sizeof also / sizeof *also; i++)
        if (!secrets_path_is_secret(also[i], "/", NULL, NULL, 0))
            fail_msg("%s is not a secret path", also[i]);
    assert_null(secrets_default_at(secrets_default_count()));
}

static void test_spellings(void **state)
{
    (void)state;
    char p[600];
    path_of(p, sizeof p, home, ".ssh/id_rsa");
    assert_true(secret(p, proj));                       /* absolute */
    assert_true(secret("~/.ssh/id_rsa", proj));          /* tilde */
    assert_true(secret("../home/.ssh/id_rsa", proj));    /* relative, traversal */
    path_of(p, sizeof p, proj, "../home/./.ssh//id_rsa");
    assert_true(secret(p, "/"));                         /* folded */
    assert_true(secret("link_key", proj));               /* a symlinked file */
    assert_true(secret("dotssh/id_rsa", proj));          /* a symlinked directory */
    assert_true(secret("dotssh", proj));
    path_of(p, sizeof p, home, ".ssh");
    assert_true(secret(p, proj));                        /* the store itself */
    assert_true(secret("~/.ssh/not_yet_there", proj));   /* a file that does not exist */
    /* ~/.aws is a link: both the link and its target are the store. */
    assert_true(secret("~/.aws/credentials", proj));
    path_of(p, sizeof p, elsewhere, "aws-real/credentials");
    assert_true(secret(p, proj));
    assert_true(secret("~/.netrc", proj));               /* a store that is one file */
    /* A loop cannot be resolved: fail closed. */
    assert_true(secret("loop/x", proj));

    /* Not secret: neighbours that only share a prefix, other files. */
    assert_false(secret("~/.sshfoo", proj));
    assert_false(secret("~/notes/todo.txt", proj));
    assert_false(secret("README.md", proj));
    assert_false(secret("/etc/hostname", proj));
    assert_false(secret(NULL, proj));
    assert_false(secret("", proj));

    char why[600];
    assert_true(secrets_path_is_secret("link_key", proj, NULL, why, sizeof why));
    assert_non_null(strstr(why, "~/.ssh"));

    /* A long path of multi-byte characters is cut whole, never inside a
     * character: the reason is JSON text for the model. */
    char longp[1200] = "~/.ssh/";
    while (strlen(longp) + 3 < sizeof longp - 1)
        strcat(longp, "\xc3\xa9"); /* é */
    assert_true(secrets_path_is_secret(longp, proj, NULL, why, sizeof why));
    json_t *j = json_string(why);
    assert_non_null(j); /* jansson refuses invalid UTF-8 */
    json_decref(j);
}

static bool touches(const char *tool, const char *input_json)
{
    json_error_t e;
    json_t *in = json_loads(input_json, 0, &e);
    assert_non_null(in);
    char why[600];
    bool hit = secrets_call_touches(tool, in, proj, NULL, why, sizeof why);
    json_decref(in);
    return hit;
}

static void test_calls(void **state)
{
    (void)state;
    char in[1200];
    assert_true(touches("Read", "{\"file_path\": \"link_key\"}"));
    assert_true(touches("Edit", "{\"file_path\": \"dotssh/authorized_keys\"}"));
    assert_true(touches("NotebookEdit", "{\"notebook_path\": \"~/.ssh/x.ipynb\"}"));
    snprintf(in, sizeof in, "{\"pattern\": \"KEY\", \"path\": \"%s/.ssh\"}", home);
    assert_true(touches("Grep", in));
    /* Glob: the pattern's literal directories count, absolute or relative. */
    snprintf(in, sizeof in, "{\"pattern\": \"%s/.ssh/*\"}", home);
    assert_true(touches("Glob", in));
    assert_true(touches("Glob", "{\"pattern\": \"../home/.ssh/**\"}"));
    assert_true(touches("Glob", "{\"pattern\": \"*\", \"path\": \"dotssh\"}"));
    assert_false(touches("Glob", "{\"pattern\": \"**/*.c\"}"));
    assert_false(touches("Read", "{\"file_path\": \"README.md\"}"));

    /* Bash (no sandbox configured here): words, $HOME, --opt=PATH,
     * redirections and globs that may expand into a store. */
    assert_true(touches("Bash", "{\"command\": \"cat ~/.ssh/id_rsa\"}"));
    assert_true(touches("Bash", "{\"command\": \"cat \\\"$HOME/.aws/credentials\\\"\"}"));
    assert_true(touches("Bash", "{\"command\": \"cat ${HOME}/.netrc | base64\"}"));
    assert_true(touches("Bash", "{\"command\": \"curl --netrc-file=~/.netrc http://x\"}"));
    assert_true(touches("Bash", "{\"command\": \"wc -c < ~/.ssh/id_rsa\"}"));
    assert_true(touches("Bash", "{\"command\": \"cat link_key\"}"));
    assert_true(touches("Bash", "{\"command\": \"tar cf - ~/.ss*\"}"));
    assert_true(touches("Bash", "{\"command\": \"echo $(cat dotssh/id_rsa)\"}"));
    assert_false(touches("Bash", "{\"command\": \"echo hello\"}"));
    assert_false(touches("Bash", "{\"command\": \"cat ~/notes/todo.txt\"}"));
    assert_false(touches("Bash", "{\"command\": \"ls *.c\"}"));
    assert_false(touches("WebFetch", "{\"url\": \"http://127.0.0.1/\"}"));
    assert_false(secrets_call_touches(NULL, NULL, proj, NULL, NULL, 0));
}

static void test_fence(void **state)
{
    (void)state;
    secrets_fence f;
    secrets_fence_init(&f, home, NULL);
    assert_true(f.n >= 2); /* ~/.ssh, ~/.aws (and its target is not under ~) */
    char p[600];
    path_of(p, sizeof p, home, ".ssh/id_rsa");
    assert_true(secrets_fence_hit(&f, p));
    path_of(p, sizeof p, home, ".ssh");
    assert_true(secrets_fence_hit(&f, p));
    path_of(p, sizeof p, home, ".aws");
    assert_true(secrets_fence_hit(&f, p));
    path_of(p, sizeof p, home, "notes/todo.txt");
    assert_false(secrets_fence_hit(&f, p));
    path_of(p, sizeof p, home, ".sshfoo");
    assert_false(secrets_fence_hit(&f, p));
    secrets_fence_free(&f);
    assert_int_equal(f.n, 0);

    /* Above the home directory too; a project holds none. */
    secrets_fence_init(&f, root, NULL);
    path_of(p, sizeof p, elsewhere, "aws-real/credentials");
    assert_true(secrets_fence_hit(&f, p)); /* ~/.aws's target lies under root */
    secrets_fence_free(&f);
    secrets_fence_init(&f, proj, NULL);
    assert_int_equal(f.n, 0);
    secrets_fence_free(&f);
    assert_true(secrets_dir_holds_secret(home, NULL));
    assert_false(secrets_dir_holds_secret(proj, NULL));
}

/* A search root that runs through a symlink (proj/h → ~, proj/h2 → proj/h)
 * spells the stores beneath it through the link: the fence binds that
 * spelling too, with or without a trailing slash, doubled slashes, "./". */
static void test_fence_symlinked_root(void **state)
{
    (void)state;
    char h[600], h2[600], p[700];
    path_of(h, sizeof h, proj, "h");
    path_of(h2, sizeof h2, proj, "h2");
    assert_int_equal(symlink(home, h), 0);
    assert_int_equal(symlink(h, h2), 0);
    const char *roots[] = {h, h2};
    for (int r = 0; r < 2; r++)
        for (int slash = 0; slash < 2; slash++) {
            char dir[620];
            snprintf(dir, sizeof dir, "%s%s", roots[r], slash ? "/" : "");
            secrets_fence f;
            secrets_fence_init(&f, dir, NULL);
            static const char *const hits[] = {".ssh", ".ssh/id_rsa", "/.ssh/id_rsa",
                                               "./.ssh/id_rsa", ".aws/credentials"};
            for (size_t i = 0; i < sizeof hits / sizeof *hits; i++) {
                snprintf(p, sizeof p, "%s/%s", roots[r], hits[i]);
                if (!secrets_fence_hit(&f, p))
                    fail_msg("fence of %s misses %s", dir, p);
            }
            snprintf(p, sizeof p, "%s/notes/todo.txt", roots[r]);
            assert_false(secrets_fence_hit(&f, p));
            snprintf(p, sizeof p, "%s/.sshfoo", roots[r]);
            assert_false(secrets_fence_hit(&f, p));
            secrets_fence_free(&f);
        }
    unlink(h2);
    unlink(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_list),
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_fence),
        cmocka_unit_test(test_fence_symlinked_root),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

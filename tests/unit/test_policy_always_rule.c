/* test_policy_always_rule.c — what "always" grants (src/policy/always_rule.c): a
 * table of calls with the exact offer each must get, and for each offer
 * calls it must NOT cover, checked through the real rule engine. The offer
 * is the narrowest grant: the whole command for wrappers and destructive
 * programs, a prefix only for a harmless subcommand, one rule per part of a
 * compound command, nothing for what cannot be read for sure, and for
 * edits a session-only grant inside the workspace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "policy/always_rule.h"
#include "policy/rules.h"

static char dir[PATH_MAX];

typedef struct row {
    const char *tool;
    const char *input;       /* JSON; "@" in it is replaced by the workspace */
    perm_mode mode;
    const char *why;         /* the decision row; NULL = default.ask */
    always_kind kind;
    const char *label;       /* exact label, or NULL (ALWAYS_NONE / checked by prefix) */
    const char *not_covered[4]; /* inputs the saved rules must not allow */
} row;

#define B(cmd) "{\"command\":\"" cmd "\"}"

static const row rows[] = {
    /* an option that runs a program, loads config or writes a file: the
     * approved call is not the harmless kind a prefix stands for */
    {"Bash", B("git fetch --upload-pack=./x origin"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(git fetch --upload-pack=./x origin)",
     {B("git fetch --upload-pack=./evil origin"), B("git fetch origin")}},
    {"Bash", B("git grep -O less foo"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(git grep -O less foo)", {B("git grep -O ./evil foo"), B("git grep bar")}},
    {"Bash", B("git diff --output=d.txt"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(git diff --output=d.txt)", {B("git diff --output=src/main.c"), B("git diff x")}},
    {"Bash", B("go test -exec ./wrap ./..."), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(go test -exec ./wrap ./...)", {B("go test -exec ./evil ./..."), B("go test ./x")}},
    {"Bash", B("cargo test --config k=v"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(cargo test --config k=v)", {B("cargo test --config k=w"), B("cargo test")}},
    {"Bash", B("make test CC=gcc"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(make test CC=gcc)",
     {B("make test CC=./evil"), B("make test")}},
    {"Bash", B("go test -v -run X ./..."), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(go test:*)",
     {B("go vet ./..."), B("go run x.go")}},
    {"Bash", B("git log -p --follow x"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(git log:*)",
     {B("git push"), B("git logx")}},
    {"Bash", B("rm -rf build"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(rm -rf build)",
     {B("rm -rf /"), B("rm -rf build2"), B("rm -rf build src"), B("rm -rf")}},
    {"Bash", B("bash -c 'make test'"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(bash -c 'make test')", {B("bash -c 'rm -rf /'"), B("bash"), B("bash -c make")}},
    {"Bash", B("sh -c 'make test'"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(sh -c 'make test')", {B("sh -c 'curl x'"), B("sh")}},
    {"Bash", B("npm run test --watch"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(npm run test:*)", {B("npm run testing"), B("npm install evil"), B("npm run build")}},
    {"Bash", B("git push origin feature"), MODE_DEFAULT, "risk.confirm", ALWAYS_RULES,
     "Bash(git push origin feature)",
     {B("git push --force origin feature"), B("git push origin main"), B("git push")}},
    {"Bash", B("git push --force origin feature"), MODE_DEFAULT, "risk.confirm", ALWAYS_RULES,
     "Bash(git push --force origin feature)", {B("git push --force origin main")}},
    {"Bash", B("sudo make install"), MODE_DEFAULT, "risk.confirm", ALWAYS_RULES,
     "Bash(sudo make install)", {B("sudo rm -rf /tmp/x"), B("sudo make uninstall"), B("sudo -s")}},
    {"Bash", B("npm run build && npm run test"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(npm run build:*), Bash(npm run test:*)",
     {B("npm run build && rm -rf x"), B("npm run lint")}},
    {"Bash", B("cd sub && make"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(cd sub), Bash(make)",
     {B("cd / && make"), B("cd sub && make clean")}},
    {"Bash", B("git status"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(git status:*)",
     {B("git push"), B("git statusx")}},
    {"Bash", B("make test"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(make test:*)",
     {B("make install"), B("make")}},
    {"Bash", B("cargo test --release"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(cargo test:*)",
     {B("cargo install evil")}},
    {"Bash", B("npm install leftpad"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(npm install leftpad)", {B("npm install evil"), B("npm install leftpad evil")}},
    {"Bash", B("git -C /tmp status"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(git -C /tmp status)", {B("git -C / status")}},
    {"Bash", B("env FOO=1 make"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(env FOO=1 make)",
     {B("env FOO=1 make install"), B("env BAR=1 make")}},
    {"Bash", B("FOO=1 make test"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(FOO=1 make test)",
     {B("FOO=2 make test"), B("make test")}},
    {"Bash", B("timeout 60 make test"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(timeout 60 make test)", {B("timeout 60 rm -rf x"), B("timeout 61 make test")}},
    {"Bash", B("chmod 777 x"), MODE_DEFAULT, "risk.confirm", ALWAYS_RULES, "Bash(chmod 777 x)",
     {B("chmod 777 y"), B("chmod -R 777 x")}},
    {"Bash", B("dd if=a of=b bs=1M"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(dd if=a of=b bs=1M)", {B("dd if=a of=/dev/sda")}},
    {"Bash", B("echo third > c.txt"), MODE_DEFAULT, NULL, ALWAYS_RULES, "Bash(echo third)",
     {B("echo third again > c.txt"), B("echo x")}},
    {"Bash", B("curl -s http://127.0.0.1:9/x"), MODE_DEFAULT, NULL, ALWAYS_RULES,
     "Bash(curl -s http://127.0.0.1:9/x)", {B("curl -s http://127.0.0.1:9/y")}},
    /* No offer: what cannot be read for sure, or changes at run time. */
    {"Bash", B("eval 'rm x'"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("rm -rf $DIR"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("rm *.o"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    /* xargs rm deletes whatever its input names: no rule can allow that
     * (the rules count it as writing any file here), so nothing is offered. */
    {"Bash", B("xargs rm < list.txt"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("rm '*.o'"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("echo $(whoami)"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("rm ~/x"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("ls 'unbalanced"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("cat <(curl x)"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("f() { rm x; }; f"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("X=1"), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B(""), MODE_DEFAULT, NULL, ALWAYS_NONE, NULL, {NULL}},
    /* A question that is asked every time gets no offer. */
    {"Bash", B("git push"), MODE_DEFAULT, "settings.ask", ALWAYS_NONE, NULL, {NULL}},
    {"Bash", B("make"), MODE_DEFAULT, "hook.ask", ALWAYS_NONE, NULL, {NULL}},
    {"Write", "{\"file_path\":\"@/.loom/settings.json\"}", MODE_DEFAULT, "needs_user",
     ALWAYS_NONE, NULL, {NULL}},
    /* Edits: session-only, inside the workspace, from default mode. */
    {"Write", "{\"file_path\":\"@/src/a.c\",\"content\":\"x\"}", MODE_DEFAULT, NULL,
     ALWAYS_SESSION_EDITS, NULL, {NULL}},
    {"Edit", "{\"file_path\":\"src/a.c\",\"old_string\":\"a\",\"new_string\":\"b\"}",
     MODE_DEFAULT, NULL, ALWAYS_SESSION_EDITS, NULL, {NULL}},
    {"Write", "{\"file_path\":\"../outside.txt\",\"content\":\"x\"}", MODE_DEFAULT, NULL,
     ALWAYS_NONE, NULL, {NULL}},
    {"Write", "{\"file_path\":\"/etc/passwd\",\"content\":\"x\"}", MODE_DEFAULT, NULL,
     ALWAYS_NONE, NULL, {NULL}},
    {"Write", "{\"file_path\":\"out/x\",\"content\":\"x\"}", MODE_DEFAULT, NULL, ALWAYS_NONE,
     NULL, {NULL}}, /* out -> a directory outside (a symlink made in setup) */
    {"Write", "{\"file_path\":\"@/src/a.c\",\"content\":\"x\"}", MODE_AUTO, "auto.undecided",
     ALWAYS_NONE, NULL, {NULL}},
    /* WebFetch and MCP. */
    {"WebFetch", "{\"url\":\"https://Docs.RS/tokio/latest\",\"prompt\":\"p\"}", MODE_DEFAULT,
     NULL, ALWAYS_RULES, "WebFetch(domain:docs.rs)",
     {"{\"url\":\"https://evil.com/\"}", "{\"url\":\"https://docs.rs.evil.com/\"}"}},
    {"WebFetch", "{\"url\":\"https://a\\\\b@c.com/\"}", MODE_DEFAULT, NULL, ALWAYS_NONE, NULL,
     {NULL}},
    {"mcp__srv__tool", "{\"q\":\"x\"}", MODE_DEFAULT, NULL, ALWAYS_RULES, "mcp__srv__tool",
     {NULL}},
    {"Task", "{\"description\":\"x\",\"prompt\":\"y\"}", MODE_DEFAULT, NULL, ALWAYS_NONE, NULL,
     {NULL}},
};

static json_t *input_of(const char *text)
{
    loom_str s = LOOM_STR_INIT;
    for (const char *p = text; *p; p++) {
        if (*p == '@')
            str_puts(&s, dir);
        else
            str_putc(&s, *p);
    }
    json_error_t e;
    json_t *j = json_loads(str_cstr(&s), 0, &e);
    if (!j)
        fail_msg("bad test JSON %s: %s", str_cstr(&s), e.text);
    str_free(&s);
    return j;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/loom-always-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/src", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/out", dir);
    assert_int_equal(symlink("/tmp", path), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_table(void **state)
{
    (void)state;
    assert_true(sizeof rows / sizeof rows[0] >= 20);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        json_t *in = input_of(r->input);
        always_offer o;
        always_offer_derive(r->tool, in, dir, r->mode, r->why ? r->why : "default.ask", &o);
        if (o.kind != r->kind)
            fail_msg("row %zu (%s %s): kind %d, want %d (%s)", i, r->tool, r->input, o.kind,
                     r->kind, o.why_not);
        if (r->kind == ALWAYS_NONE) {
            assert_null(o.label);
            assert_int_equal(o.n_rules, 0);
            assert_true(o.why_not[0] != '\0');
            json_t *j = always_offer_json(&o);
            assert_string_equal(json_string_value(json_object_get(j, "kind")), "none");
            assert_string_equal(json_string_value(json_object_get(j, "why_not")), o.why_not);
            json_decref(j);
        } else if (r->kind == ALWAYS_SESSION_EDITS) {
            assert_int_equal(o.n_rules, 0);
            assert_non_null(strstr(o.label, dir));
            assert_non_null(strstr(o.label, "this session"));
        } else {
            if (strcmp(o.label, r->label) != 0)
                fail_msg("row %zu (%s): label \"%s\", want \"%s\"", i, r->input, o.label,
                         r->label);
            /* The saved rules allow the call itself, and nothing broader. */
            perm_rules *rs = perm_rules_new();
            loom_error err;
            for (size_t k = 0; k < o.n_rules; k++)
                assert_int_equal(perm_rules_add(rs, PERM_ALLOW, o.rules[k], RULE_SRC_LOCAL, &err), 0);
            assert_int_equal(perm_rules_check(rs, r->tool, in, dir).verdict, PERM_ALLOW);
            for (size_t k = 0; k < 4 && r->not_covered[k]; k++) {
                json_t *other = input_of(r->not_covered[k]);
                if (perm_rules_check(rs, r->tool, other, dir).verdict == PERM_ALLOW)
                    fail_msg("row %zu: %s also allows %s", i, o.label, r->not_covered[k]);
                json_decref(other);
            }
            perm_rules_free(rs);
            json_t *j = always_offer_json(&o);
            assert_string_equal(json_string_value(json_object_get(j, "kind")), "rules");
            assert_string_equal(json_string_value(json_object_get(j, "label")), o.label);
            assert_int_equal(json_array_size(json_object_get(j, "rules")), o.n_rules);
            assert_string_equal(json_string_value(json_object_get(j, "saved_to")),
                                ".loom/settings.local.json");
            json_decref(j);
        }
        always_offer_clear(&o);
        json_decref(in);
    }
}

/* Fuzz-ish: commands of every shape never crash, and every offer made is
 * allowed back by its own rules (the module proves it; this checks). */
static void test_offers_are_consistent(void **state)
{
    (void)state;
    static const char *const parts[] = {"rm", "-rf", "build", "&&", "|", ";", "sudo", "env",
                                        "A=1", "'q q'", "\\\"x\\\"", "$X", "git", "push",
                                        "npm", "run", "test", "(", ")", "{", "}", "*", "~",
                                        "xargs", "bash", "-c", ">", "f", "\\n", "#"};
    unsigned seed = 7;
    int offers = 0;
    for (int round = 0; round < 3000; round++) {
        loom_str cmd = LOOM_STR_INIT;
        int words = 1 + round % 7;
        for (int w = 0; w < words; w++) {
            seed = seed * 1103515245u + 12345u;
            str_printf(&cmd, "%s%s", w ? " " : "", parts[(seed >> 16) % (sizeof parts / sizeof parts[0])]);
        }
        loom_str js = LOOM_STR_INIT;
        str_printf(&js, "{\"command\":\"%s\"}", str_cstr(&cmd));
        json_t *in = json_loads(str_cstr(&js), 0, NULL);
        if (in) {
            always_offer o;
            always_offer_derive("Bash", in, dir, MODE_DEFAULT, "default.ask", &o);
            if (o.kind == ALWAYS_RULES) {
                offers++;
                perm_rules *rs = perm_rules_new();
                loom_error err;
                for (size_t k = 0; k < o.n_rules; k++)
                    assert_int_equal(perm_rules_add(rs, PERM_ALLOW, o.rules[k], RULE_SRC_LOCAL, &err), 0);
                assert_int_equal(perm_rules_check(rs, "Bash", in, dir).verdict, PERM_ALLOW);
                for (size_t k = 0; k < o.n_rules; k++)
                    assert_null(strstr(o.rules[k], "$"));
                perm_rules_free(rs);
            }
            always_offer_clear(&o);
            json_decref(in);
        }
        str_free(&js);
        str_free(&cmd);
    }
    assert_true(offers > 100); /* the mix does reach offers */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_offers_are_consistent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

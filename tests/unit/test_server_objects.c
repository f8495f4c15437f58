/* test_server_objects.c — the declarative objects of loom serve
 * (src/surfaces/server/config/): every kind loads from examples/serve, each
 * class of error names FILE:LINE: key.path, the cross-file references, the
 * tokens and the visibility of global and tenant objects. Each test writes
 * its own config folder under $TMPDIR. One thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/sha256.h"
#include "base/str.h"
#include "surfaces/server/config/objects.h"
#include "tmpdir.h"

static char dir[4096];

static int setup(void **state)
{
    (void)state;
    return tmpdir_make(dir, sizeof dir, "srvobj", true);
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(dir);
}

/* Loads dir, which must fail with a message containing want. */
static void expect_error(const char *want)
{
    srv_error err = {0};
    server_objects *o = objects_load_all(dir, "/srv/ws", &err);
    if (o || !strstr(err.message, want))
        fail_msg("wanted an error with \"%s\", got %s \"%s\"", want, o ? "success" : "error",
                 err.message);
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    srv_error_clear(&err);
}

static server_objects *load_ok(void)
{
    srv_error err = {0};
    server_objects *o = objects_load_all(dir, "/srv/ws", &err);
    if (!o)
        fail_msg("load failed: %s", err.message);
    return o;
}

static const char *TENANTS =
    "tenants:\n"
    "  acme:\n"
    "    projects:\n"
    "      web: {workspace: /w/acme/web}\n"
    "  globex: {}\n"
    "tokens:\n"
    "  - {token: tok-acme, tenant: acme, role: admin}\n"
    "  - {token: tok-globex, tenant: globex, role: viewer}\n";

static void examples_load(void **state)
{
    (void)state;
    const char *data = getenv("LOOM_TEST_DATA");
    assert_non_null(data);
    char ex[4096];
    snprintf(ex, sizeof ex, "%s/../examples/serve", data);
    srv_error err = {0};
    server_objects *o = objects_load_all(ex, "/srv/ws", &err);
    if (!o)
        fail_msg("%s", err.message);

    const agent_profile *p = objects_profile(o, "coding_default", "acme");
    assert_non_null(p);
    assert_string_equal(p->model, "gpt-5.4");
    assert_int_equal(p->skills.n, 2);
    assert_int_equal(p->tools_allow.n, 4);
    assert_string_equal(p->policies.items[0], "policy_safe_default");
    assert_int_equal(p->max_depth, 3);
    assert_int_equal(p->max_turns, 100);
    assert_true(p->enable_verification);
    json_t *j = json_loads(p->json, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "profile_id")), "coding_default");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "scopes"),
                                                          "tenant_scope")),
                        "acme");
    json_decref(j);
    assert_null(objects_profile(o, "coding_default", "globex"));
    assert_string_equal(objects_default_profile(o, "globex")->id, "default");

    const policy_set *pol = objects_policy(o, "policy_safe_default", "globex");
    assert_non_null(pol);
    assert_string_equal(pol->mode, "default");
    assert_string_equal(pol->deny.items[1], "Bash(git reset --hard:*)");
    assert_string_equal(pol->ask.items[1], "Bash(rm -rf:*)");
    assert_int_equal(pol->approval_timeout_seconds, 600);
    assert_string_equal(pol->allow_quote_from.items[0], "official_docs");
    assert_string_equal(pol->require_citation_for.items[0], "external_web");
    assert_non_null(strstr(pol->json, "\"policy_id\":\"policy_safe_default\""));
    assert_non_null(strstr(pol->json, "git reset --hard\"")); /* served as written */

    const knowledge_source *rd = objects_knowledge_source(o, "repo_docs", "acme");
    assert_non_null(rd);
    assert_string_equal(rd->scope, "project");
    assert_string_equal(rd->project_id, "webapp");
    assert_string_equal(rd->trust_tier, "high");
    assert_true(rd->path[0] == '/');
    assert_non_null(strstr(rd->path, "/docs"));
    assert_null(strstr(rd->path, ".."));
    const knowledge_source *wiki = objects_knowledge_source(o, "team_wiki", "acme");
    assert_true(wiki->allow_search);
    assert_false(wiki->allow_quote);
    assert_non_null(objects_knowledge_source(o, "official_python_docs", "globex"));
    assert_null(objects_knowledge_source(o, "team_wiki", "globex"));

    const tenant_config *acme = objects_tenant(o, "acme");
    assert_int_equal(acme->n_projects, 2);
    assert_int_equal(acme->quotas.concurrent_runs, 4);
    assert_int_equal(acme->quotas.tokens_per_session, 2000000);
    assert_int_equal(acme->n_webhooks, 1);
    assert_string_equal(acme->webhooks[0].id, "wh_1");
    assert_int_equal(acme->webhooks[0].events.n, 2);
    const tenant_config *globex = objects_tenant(o, "globex");
    assert_int_equal(globex->quotas.concurrent_runs, 2);
    assert_int_equal(globex->quotas.max_artifacts_per_run, 20);
    assert_int_equal(objects_token_count(o), 3);
    const token_entry *t = objects_token(o, "globex-approver-example-token");
    assert_non_null(t);
    assert_string_equal(t->tenant_id, "globex");
    assert_int_equal(t->role, ROLE_APPROVER);
    t = objects_token(o, "acme-webapp-member-token");
    assert_string_equal(t->project_id, "webapp");
    assert_int_equal(t->role, ROLE_MEMBER);
    assert_true(strncmp(t->actor_id, "token:", 6) == 0 && strlen(t->actor_id) == 14);
    t = objects_token(o, "acme-admin-example-token");
    assert_true(t->audit);
    assert_string_equal(t->actor_id, "alice@acme");

    const knowledge_source *vis[8];
    assert_int_equal(objects_knowledge_sources_visible(o, "acme", "webapp", vis, 8), 3);
    assert_int_equal(objects_knowledge_sources_visible(o, "acme", "infra", vis, 8), 2);
    assert_int_equal(objects_knowledge_sources_visible(o, "globex", "main", vis, 8), 1);
    assert_string_equal(vis[0]->id, "official_python_docs");
    objects_free(o);
}

static void unknown_key_suggests(void **state)
{
    (void)state;
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  p1:\n    modle: x\n");
    expect_error("profiles.yaml:3: profiles.p1.modle: unknown key (did you mean model?)");
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  p1:\n    runtime:\n      max_dept: 2\n");
    expect_error("profiles.yaml:4: profiles.p1.runtime.max_dept: unknown key (did you mean "
                 "max_depth?)");
}

static void wrong_type(void **state)
{
    (void)state;
    tmpdir_write(dir, "profiles.yaml",
                 "profiles:\n  coding_default:\n    runtime:\n      max_depth: deep\n");
    expect_error("profiles.yaml:4: profiles.coding_default.runtime.max_depth: must be a whole "
                 "number from 0 to 16, not \"deep\"");
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  p:\n    skills: coding\n");
    expect_error("profiles.yaml:3: profiles.p.skills: must be a list of texts");
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  p:\n    provider: gemini\n");
    expect_error("profiles.p.provider: must be one of anthropic, openai");
    tmpdir_write(dir, "profiles.yaml", "");
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n  k:\n    type: web\n    retrieval_policy:\n"
                 "      allow_quote: maybe\n");
    expect_error("knowledge_sources.yaml:5: knowledge_sources.k.retrieval_policy.allow_quote: "
                 "must be true or false");
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n  k:\n    type: web\n    trust: high\n    trust_tier: low\n");
    expect_error("give trust or trust_tier, not both");
}

static void bad_id(void **state)
{
    (void)state;
    tmpdir_write(dir, "policies.yaml", "policies:\n  ok: {}\n  \"not ok!\": {}\n");
    expect_error("policies.yaml:3: policies.not ok!: not an id");
    tmpdir_write(dir, "policies.yaml", "");
    tmpdir_write(dir, "tenants.yaml", "tenants:\n  acme:\n    projects:\n      a/b: {}\n");
    expect_error("tenants.yaml:4: tenants.acme.projects.a/b: not an id");
}

static void dangling_reference(void **state)
{
    (void)state;
    tmpdir_write(dir, "policies.yaml", "policies:\n  safe: {}\n");
    tmpdir_write(dir, "profiles.yaml",
                 "profiles:\n  p:\n    policies:\n      - safe\n      - missing\n");
    expect_error("profiles.yaml:5: profiles.p.policies[1]: no policy missing in policies.yaml");
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  p:\n    knowledge_sources: [nope]\n");
    expect_error("profiles.yaml:3: profiles.p.knowledge_sources[0]: no knowledge source nope");
}

static void cross_tenant_reference(void **state)
{
    (void)state;
    tmpdir_write(dir, "tenants.yaml", TENANTS);
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n  wiki: {type: mcp, tenant: acme}\n");
    tmpdir_write(dir, "profiles.yaml",
                 "profiles:\n  g:\n    tenant: globex\n    knowledge_sources: [wiki]\n");
    expect_error("profiles.yaml:4: profiles.g.knowledge_sources[0]: the knowledge source wiki "
                 "belongs to tenant acme, not globex");
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  g:\n    knowledge_sources: [wiki]\n");
    expect_error("a global profile names only global ones");
    tmpdir_write(dir, "profiles.yaml",
                 "profiles:\n  a:\n    tenant: acme\n    knowledge_sources: [wiki]\n");
    server_objects *o = load_ok();
    objects_free(o);
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  a:\n    tenant: initech\n");
    expect_error("profiles.yaml:3: profiles.a.tenant: no tenant initech in tenants.yaml");
}

static void duplicate_token(void **state)
{
    (void)state;
    char text[1024];
    char hex[65];
    sha256_hex("same", 4, hex);
    snprintf(text, sizeof text,
             "tenants: {acme: {}}\ntokens:\n  - {token: same, tenant: acme, role: admin}\n"
             "  - {token_sha256: %s, tenant: acme, role: viewer}\n",
             hex);
    tmpdir_write(dir, "tenants.yaml", text);
    expect_error("tenants.yaml:4: tokens[1]: the same token as tokens[0] (line 3)");
    tmpdir_write(dir, "tenants.yaml",
                 "tenants: {acme: {}}\ntokens:\n  - {token: a, token_sha256: b, tenant: acme, "
                 "role: admin}\n");
    expect_error("tokens[0]: give token or token_sha256 (exactly one)");
    tmpdir_write(dir, "tenants.yaml",
                 "tenants: {acme: {}}\ntokens:\n  - {token_sha256: abc, tenant: acme, role: admin}\n");
    expect_error("tokens[0].token_sha256: must be 64 hexadecimal digits");
}

static void bad_role_and_token_scope(void **state)
{
    (void)state;
    tmpdir_write(dir, "tenants.yaml",
                 "tenants: {acme: {}}\ntokens:\n  - token: t\n    tenant: acme\n    role: root\n");
    expect_error("tenants.yaml:5: tokens[0].role: must be one of viewer, member, approver, "
                 "admin, not \"root\"");
    tmpdir_write(dir, "tenants.yaml",
                 "tenants: {acme: {}}\ntokens:\n  - {token: t, tenant: acme, role: admin, "
                 "project: nope}\n");
    expect_error("tokens[0].project: tenant acme has no project nope");
    tmpdir_write(dir, "tenants.yaml",
                 "tenants: {acme: {}}\ntokens:\n  - {token: t, tenant: other, role: admin}\n");
    expect_error("tokens[0].tenant: no tenant other");
}

static void workspace_and_path_resolved(void **state)
{
    (void)state;
    tmpdir_write(dir, "tenants.yaml",
                 "tenants:\n  acme:\n    projects:\n      web: {workspace: ws/web}\n"
                 "      abs: {workspace: /abs/x/../y}\n      none: {}\n");
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n  docs: {type: filesystem, path: ./docs/../docs2}\n");
    server_objects *o = load_ok();
    const tenant_config *t = objects_tenant(o, "acme");
    char want[8192];
    snprintf(want, sizeof want, "%s/ws/web", dir);
    assert_string_equal(objects_project(t, "web")->workspace, want);
    assert_string_equal(objects_project(t, "abs")->workspace, "/abs/y");
    assert_string_equal(objects_project(t, "none")->workspace, "/srv/ws");
    snprintf(want, sizeof want, "%s/docs2", dir);
    assert_string_equal(objects_knowledge_source(o, "docs", NULL)->path, want);
    objects_free(o);
    tmpdir_write(dir, "knowledge_sources.yaml", "knowledge_sources:\n  docs: {type: filesystem}\n");
    expect_error("knowledge_sources.yaml:2: knowledge_sources.docs: a filesystem source needs path");
}

static void alias_bomb_refused(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "profiles:\n  p:\n    skills: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 10; i++)
        str_printf(&s, "    k%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
                   i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    tmpdir_write(dir, "profiles.yaml", str_cstr(&s));
    str_free(&s);
    clock_t t0 = clock();
    expect_error("profiles.yaml:4: aliases (*name) are not supported");
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
}

static void too_deep_and_too_big(void **state)
{
    (void)state;
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "profiles:\n  p:\n    skills: ");
    for (int i = 0; i < 40; i++)
        str_puts(&s, "[");
    for (int i = 0; i < 40; i++)
        str_puts(&s, "]");
    str_puts(&s, "\n");
    tmpdir_write(dir, "profiles.yaml", str_cstr(&s));
    expect_error("profiles.yaml:3: nested deeper than 32 levels");
    str_clear(&s);
    str_puts(&s, "policies:\n");
    while (s.len < 1100 * 1024)
        str_puts(&s, "# padding padding padding padding padding padding padding padding\n");
    tmpdir_write(dir, "policies.yaml", str_cstr(&s));
    expect_error("policies.yaml:1: the file is larger than 1 MB");
    str_free(&s);
    tmpdir_write(dir, "policies.yaml", "policies: {}\n---\npolicies: {}\n");
    expect_error("policies.yaml:2: one YAML document per file");
    tmpdir_write(dir, "policies.yaml", "policies:\n  a: {}\n  a: {}\n");
    expect_error("policies.yaml:3: a: the key is given twice");
    tmpdir_write(dir, "policies.yaml", "policies: [unclosed\n");
    expect_error("policies.yaml:");
}

static void empty_dir_default_tenant(void **state)
{
    (void)state;
    server_objects *o = load_ok();
    const tenant_config *t = objects_tenant(o, "default");
    assert_non_null(t);
    assert_int_equal(t->n_projects, 1);
    assert_string_equal(objects_project(t, "default")->workspace, "/srv/ws");
    assert_int_equal(t->quotas.concurrent_runs, 8);
    assert_int_equal(t->quotas.max_tool_seconds, 600);
    assert_int_equal(objects_token_count(o), 0);
    assert_null(objects_token(o, "anything"));
    assert_null(objects_default_profile(o, "default"));
    objects_free(o);
    srv_error err = {0};
    o = objects_load_all(NULL, "/srv/ws", &err);
    assert_non_null(objects_tenant(o, "default"));
    objects_free(o);
    snprintf(dir + strlen(dir), 16, "/missing");
    expect_error("the config folder does not exist");
    *strrchr(dir, '/') = 0;
}

static void token_lookup(void **state)
{
    (void)state;
    tmpdir_write(dir, "tenants.yaml", TENANTS);
    server_objects *o = load_ok();
    const token_entry *a = objects_token(o, "tok-acme");
    assert_non_null(a);
    assert_string_equal(a->tenant_id, "acme");
    assert_int_equal(a->role, ROLE_ADMIN);
    assert_null(a->project_id);
    char hex[65];
    sha256_hex("tok-acme", 8, hex);
    assert_string_equal(a->sha256_hex, hex);
    assert_null(objects_token(o, "tok-acme "));
    assert_null(objects_token(o, "tok-acm"));
    assert_null(objects_token(o, ""));
    assert_null(objects_token(o, NULL));
    const token_entry *g = objects_token(o, "tok-globex");
    assert_string_equal(g->tenant_id, "globex");
    assert_int_equal(g->role, ROLE_VIEWER);
    /* globex's token never opens acme's project. */
    assert_null(objects_project(objects_tenant(o, g->tenant_id), "web"));
    objects_free(o);
}

static void visibility(void **state)
{
    (void)state;
    tmpdir_write(dir, "tenants.yaml", TENANTS);
    tmpdir_write(dir, "policies.yaml",
                 "policies:\n  global_pol: {}\n  acme_pol: {tenant: acme}\n");
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n  g: {type: web}\n  t: {type: mcp, tenant: acme}\n"
                 "  pj: {type: web, tenant: acme, project: web}\n");
    tmpdir_write(dir, "profiles.yaml",
                 "profiles:\n  first: {tenant: acme, policies: [acme_pol, global_pol]}\n"
                 "  shared: {policies: [global_pol]}\n");
    server_objects *o = load_ok();
    assert_non_null(objects_policy(o, "global_pol", "acme"));
    assert_non_null(objects_policy(o, "global_pol", "globex"));
    assert_non_null(objects_policy(o, "global_pol", NULL));
    assert_non_null(objects_policy(o, "acme_pol", "acme"));
    assert_null(objects_policy(o, "acme_pol", "globex"));
    assert_null(objects_policy(o, "acme_pol", NULL));
    assert_null(objects_policy(o, "nope", "acme"));
    assert_string_equal(objects_knowledge_source(o, "pj", "acme")->scope, "project");
    assert_string_equal(objects_knowledge_source(o, "t", "acme")->scope, "tenant");
    assert_string_equal(objects_knowledge_source(o, "g", "acme")->scope, "global");
    assert_string_equal(objects_default_profile(o, "acme")->id, "first");
    assert_string_equal(objects_default_profile(o, "globex")->id, "shared");
    const knowledge_source *vis[4];
    assert_int_equal(objects_knowledge_sources_visible(o, "acme", NULL, vis, 4), 2);
    assert_int_equal(objects_knowledge_sources_visible(o, "acme", "web", vis, 4), 3);
    assert_int_equal(objects_knowledge_sources_visible(o, "acme", "web", vis, 1), 1);
    objects_free(o);
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n  x: {type: web, scope: global, tenant: acme}\n");
    tmpdir_write(dir, "profiles.yaml", "");
    expect_error("knowledge_sources.x.scope: a global source has no tenant or project");
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n  x: {type: web, tenant: acme, project: nope}\n");
    expect_error("knowledge_sources.yaml:2: knowledge_sources.x.project: tenant acme has no "
                 "project nope");
}

static void files_separate(void **state)
{
    (void)state;
    tmpdir_write(dir, "profiles.yaml", "policies:\n  p: {}\n");
    expect_error("profiles.yaml:1: policies: belongs in policies.yaml: the files are never "
                 "merged");
    tmpdir_write(dir, "profiles.yaml", "profiles:\n  p:\n    permissions: {mode: plan}\n");
    expect_error("profiles.yaml:3: profiles.p.permissions: not a key here: a policy key: "
                 "policies go in policies.yaml");
    tmpdir_write(dir, "profiles.yaml", "");
    tmpdir_write(dir, "policies.yaml", "policies:\n  p:\n    model: x\n");
    expect_error("policies.yaml:3: policies.p.model: not a key here: a profile key");
    tmpdir_write(dir, "policies.yaml", "knowledge_sources: {}\n");
    expect_error("policies.yaml:1: knowledge_sources: belongs in knowledge_sources.yaml");
    tmpdir_write(dir, "policies.yaml", "");
    tmpdir_write(dir, "tenants.yaml", "tenants: {}\nprofiles: {}\n");
    expect_error("tenants.yaml:2: profiles: belongs in profiles.yaml");
}

static void webhooks_checked(void **state)
{
    (void)state;
    tmpdir_write(dir, "tenants.yaml",
                 "tenants:\n  acme:\n    webhooks:\n      - {url: http://127.0.0.1:1/h, secret: "
                 "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, events: [run.started]}\n");
    expect_error("tenants.yaml:4: tenants.acme.webhooks[0].events[0]: must be one of "
                 "run.completed");
    tmpdir_write(dir, "tenants.yaml",
                 "tenants:\n  acme:\n    webhooks:\n      - url: http://127.0.0.1:1/h\n"
                 "        secret: plain\n");
    expect_error("tenants.yaml:5: tenants.acme.webhooks[0].secret: must be whsec_");
    tmpdir_write(dir, "tenants.yaml",
                 "tenants:\n  acme:\n    quotas: {concurrent_runs: 0}\n");
    expect_error("tenants.acme.quotas.concurrent_runs: must be a whole number from 1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(examples_load),
        cmocka_unit_test_setup_teardown(unknown_key_suggests, setup, teardown),
        cmocka_unit_test_setup_teardown(wrong_type, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_id, setup, teardown),
        cmocka_unit_test_setup_teardown(dangling_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(cross_tenant_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(duplicate_token, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_role_and_token_scope, setup, teardown),
        cmocka_unit_test_setup_teardown(workspace_and_path_resolved, setup, teardown),
        cmocka_unit_test_setup_teardown(alias_bomb_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(too_deep_and_too_big, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_dir_default_tenant, setup, teardown),
        cmocka_unit_test_setup_teardown(token_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(visibility, setup, teardown),
        cmocka_unit_test_setup_teardown(files_separate, setup, teardown),
        cmocka_unit_test_setup_teardown(webhooks_checked, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

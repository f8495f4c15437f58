/* test_provider_helper.c — helper model calls (provider/helper.h): the
 * resolution chain (per-purpose setting → per-tier setting → provider
 * default table → main model), the settings' errors, the breaker, the
 * record queue by owner, and the effort dialect table (provider/effort.h).
 * A fake model behind the router's port stands in for the provider. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "provider/effort.h"
#include "provider/helper.h"

static int fake_fail;           /* the fake fails while set */
static char fake_model[64];     /* the model the last request named */
static long fake_timeout;
static int fake_calls;

static int fake(void *ctx, const provider_config *cfg, const msg_request *req,
                const provider_stream_sink *sink, const loom_cancel *cancel, msg_response *out,
                loom_error *err)
{
    (void)ctx, (void)sink, (void)cancel;
    fake_calls++;
    snprintf(fake_model, sizeof fake_model, "%s", req->model);
    fake_timeout = cfg->request_timeout_ms;
    if (fake_fail)
        return loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE, "HTTP 500");
    memset(out, 0, sizeof *out);
    out->message.role = MSG_ROLE_ASSISTANT;
    msg_message_add_text(&out->message, "fine");
    out->usage.input_tokens = 7;
    out->usage.output_tokens = 2;
    return 0;
}

static helper_router *router(provider_config *cfg, const char *model, const char *settings)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->model = (char *)model;
    cfg->kind = PROVIDER_ANTHROPIC;
    cfg->max_retries = 3;
    helper_router *r = helper_router_new(cfg);
    provider_port port = {.complete = fake};
    helper_router_set_port(r, &port);
    if (settings) {
        json_t *doc = json_loads(settings, 0, NULL);
        assert_non_null(doc);
        loom_error err;
        const char *name = "user settings";
        assert_int_equal(helper_router_configure(r, &doc, &name, 1, &err), 0);
        json_decref(doc);
    }
    return r;
}

static void test_resolution_chain(void **state)
{
    (void)state;
    provider_config cfg;
    helper_tier t;
    /* The provider default table: Claude's lite is Haiku, reasoning Opus. */
    helper_router *r = router(&cfg, "claude-sonnet-5-5", NULL);
    assert_string_equal(helper_resolve(r, HELPER_PERMISSION_CLASSIFIER, HELPER_TIER_DEFAULT,
                                       NULL, &t), "claude-haiku-5-5");
    assert_int_equal(t, HELPER_TIER_LITE);
    assert_string_equal(helper_resolve(r, HELPER_COMPACTION, HELPER_TIER_DEFAULT, NULL, &t),
                        "claude-sonnet-5-5");
    assert_int_equal(t, HELPER_TIER_MAIN);
    assert_string_equal(helper_resolve(r, HELPER_TITLE, HELPER_TIER_REASONING, NULL, NULL),
                        "claude-opus-5-5");
    /* A hook's own model: an alias, a tier, or inherit. */
    assert_string_equal(helper_resolve(r, HELPER_HOOK_PROMPT, HELPER_TIER_DEFAULT, "opus", NULL),
                        "claude-opus-5-5");
    assert_string_equal(helper_resolve(r, HELPER_HOOK_PROMPT, HELPER_TIER_DEFAULT, "inherit",
                                       NULL), "claude-sonnet-5-5");
    helper_router_free(r);

    /* A model with no row: every tier is the main model. */
    r = router(&cfg, "llama3", NULL);
    assert_string_equal(helper_resolve(r, HELPER_HOOK_PROMPT, HELPER_TIER_DEFAULT, NULL, NULL),
                        "llama3");
    helper_router_free(r);

    /* Settings: per-tier, then per-purpose (a tier name or a model). */
    r = router(&cfg, "claude-sonnet-5-5",
               "{\"modelTiers\": {\"lite\": \"small-1\"}, \"helperModels\": "
               "{\"compaction\": \"lite\", \"title\": \"haiku\", "
               "\"hook_prompt\": {\"model\": \"reasoning\", \"effort\": \"low\", \"timeout\": 5}}}");
    assert_string_equal(helper_resolve(r, HELPER_PERMISSION_CLASSIFIER, HELPER_TIER_DEFAULT,
                                       NULL, NULL), "small-1");
    assert_string_equal(helper_resolve(r, HELPER_COMPACTION, HELPER_TIER_DEFAULT, NULL, &t),
                        "small-1");
    assert_int_equal(t, HELPER_TIER_LITE);
    assert_string_equal(helper_resolve(r, HELPER_TITLE, HELPER_TIER_DEFAULT, NULL, NULL),
                        "claude-haiku-5-5");
    assert_string_equal(helper_resolve(r, HELPER_HOOK_PROMPT, HELPER_TIER_DEFAULT, NULL, NULL),
                        "claude-opus-5-5");
    /* The call goes to the route's model with its timeout. */
    msg_request req;
    memset(&req, 0, sizeof req);
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "judge");
    helper_spec spec = {.purpose = HELPER_HOOK_PROMPT, .tier = HELPER_TIER_DEFAULT,
                        .judgment = true};
    msg_response resp;
    loom_error err;
    assert_int_equal(helper_call(r, &spec, &req, NULL, &resp, &err), 0);
    assert_string_equal(fake_model, "claude-opus-5-5");
    assert_int_equal(fake_timeout, 5000);
    assert_int_equal(req.max_tokens, 512);
    assert_true(req.temperature < 0); /* the Messages API takes none */
    msg_response_free(&resp);
    msg_request_free(&req);
    helper_router_free(r);
}

static void test_settings_errors(void **state)
{
    (void)state;
    static const struct {
        const char *doc, *want;
    } cases[] = {
        {"{\"helperModels\": {\"classifer\": \"lite\"}}", "helperModels.classifer: unknown purpose"},
        {"{\"helperModels\": {\"title\": 3}}", "helperModels.title: expected a tier"},
        {"{\"helperModels\": {\"title\": {\"effort\": \"max\"}}}", "effort: expected none"},
        {"{\"helperModels\": {\"title\": {\"timeout\": -1}}}", "timeout: expected seconds"},
        {"{\"helperModels\": {\"title\": {\"modle\": \"lite\"}}}", "unknown key"},
        {"{\"helperModels\": []}", "helperModels: expected an object"},
        {"{\"modelTiers\": {\"tiny\": \"x\"}}", "modelTiers.tiny: unknown tier"},
        {"{\"modelTiers\": {\"lite\": \"\"}}", "modelTiers.lite: expected a model name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        provider_config cfg = {.model = "m"};
        helper_router *r = helper_router_new(&cfg);
        json_t *doc = json_loads(cases[i].doc, 0, NULL);
        const char *name = ".loom/settings.json";
        loom_error err;
        assert_int_not_equal(helper_router_configure(r, &doc, &name, 1, &err), 0);
        if (!strstr(err.message, cases[i].want) || !strstr(err.message, ".loom/settings.json"))
            fail_msg("%s: got \"%s\"", cases[i].doc, err.message);
        json_decref(doc);
        helper_router_free(r);
    }
}

static void test_breaker_and_queue(void **state)
{
    (void)state;
    provider_config cfg;
    helper_router *r = router(&cfg, "mock-main", NULL);
    int owner_a, owner_b;
    msg_response resp;
    loom_error err;
    fake_fail = 1;
    fake_calls = 0;
    for (int i = 0; i < HELPER_BREAKER_FAILURES + 2; i++) {
        msg_request req;
        memset(&req, 0, sizeof req);
        helper_spec spec = {.purpose = HELPER_HOOK_PROMPT, .tier = HELPER_TIER_DEFAULT,
                            .owner = i % 2 ? &owner_b : &owner_a};
        assert_int_not_equal(helper_call(r, &spec, &req, NULL, &resp, &err), 0);
        if (i >= HELPER_BREAKER_FAILURES)
            assert_non_null(strstr(err.message, "circuit breaker is open"));
        msg_request_free(&req);
    }
    assert_int_equal(fake_calls, HELPER_BREAKER_FAILURES);
    assert_true(helper_breaker_open(r, HELPER_HOOK_PROMPT));
    /* Per purpose: another purpose still calls. */
    assert_false(helper_breaker_open(r, HELPER_TITLE));
    {
        provider_config c2;
        helper_router *off = router(&c2, "mock-main",
                                    "{\"helperModels\": {\"permission_classifier\": false}}");
        msg_request rq;
        memset(&rq, 0, sizeof rq);
        helper_spec sp = {.purpose = HELPER_PERMISSION_CLASSIFIER, .tier = HELPER_TIER_DEFAULT};
        int before = fake_calls;
        assert_int_not_equal(helper_call(off, &sp, &rq, NULL, &resp, &err), 0);
        assert_non_null(strstr(err.message, "turned off in settings"));
        assert_int_equal(fake_calls, before);
        msg_request_free(&rq);
        helper_record *rr;
        size_t nn;
        helper_router_take(off, NULL, true, &rr, &nn);
        assert_int_equal(nn, 1);
        assert_string_equal(rr[0].status, "off");
        helper_record_free(&rr[0]);
        free(rr);
        helper_router_free(off);
    }
    fake_fail = 0;
    msg_request req;
    memset(&req, 0, sizeof req);
    helper_spec spec = {.purpose = HELPER_TITLE, .tier = HELPER_TIER_DEFAULT, .owner = &owner_a};
    assert_int_equal(helper_call(r, &spec, &req, NULL, &resp, &err), 0);
    msg_response_free(&resp);
    msg_request_free(&req);
    /* Each owner takes its own records. */
    helper_record *recs;
    size_t n;
    helper_router_take(r, &owner_b, false, &recs, &n);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++)
        helper_record_free(&recs[i]);
    free(recs);
    helper_router_take(r, &owner_a, false, &recs, &n);
    assert_int_equal(n, 4);
    assert_string_equal(recs[0].status, "error");
    assert_string_equal(recs[2].status, "breaker_open");
    assert_string_equal(recs[3].status, "ok");
    assert_int_equal(recs[3].usage.input_tokens, 7);
    json_t *j = helper_record_json(&recs[3]);
    assert_string_equal(json_string_value(json_object_get(j, "purpose")), "title");
    assert_string_equal(json_string_value(json_object_get(j, "tier")), "lite");
    json_decref(j);
    for (size_t i = 0; i < n; i++)
        helper_record_free(&recs[i]);
    free(recs);
    helper_router_free(r);
}

static void test_effort_dialects(void **state)
{
    (void)state;
    provider_config c = {.model = "claude-opus-5-5"};
    helper_effort_apply(HELPER_EFFORT_MEDIUM, &c);
    assert_int_equal(c.thinking_budget, 8192);
    assert_string_equal(c.reasoning_effort, "");
    provider_config o = {.model = "o3"};
    helper_effort_apply(HELPER_EFFORT_HIGH, &o);
    assert_string_equal(o.reasoning_effort, "high");
    assert_int_equal(o.thinking_budget, 0);
    provider_config keep = {.model = "claude-opus-5-5", .thinking_budget = 4096};
    helper_effort_apply(HELPER_EFFORT_DEFAULT, &keep);
    assert_int_equal(keep.thinking_budget, 4096);
    helper_effort_apply(HELPER_EFFORT_NONE, &keep);
    assert_int_equal(keep.thinking_budget, 0);
    helper_effort e;
    assert_int_equal(helper_effort_parse("low", &e), 0);
    assert_int_equal(e, HELPER_EFFORT_LOW);
    assert_int_equal(helper_effort_parse("max", &e), -1);
    assert_int_equal(helper_effort_thinking_budget(HELPER_EFFORT_LOW), 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolution_chain),
        cmocka_unit_test(test_settings_errors),
        cmocka_unit_test(test_breaker_and_queue),
        cmocka_unit_test(test_effort_dialects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

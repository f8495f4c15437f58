/* test_provider_models.c — the model table (provider/models.c): defaults,
 * limits and request shaping per family, and the one caller that depends on
 * the shaping most, auto mode's classifier request, as encoded for each API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"
#include "policy/model_classifier.h"
#include "provider/models.h"
#include "provider/provider.h"

static void test_defaults_are_current_models(void **state)
{
    (void)state;
    /* @anthropic-ai/sdk 1.15.0's Model lists claude-sonnet-5-5 and no longer
     * claude-sonnet-4-5; openai 6.49.0's ChatModel still lists gpt-4.1. */
    assert_string_equal(MODELS_DEFAULT_ANTHROPIC, "claude-sonnet-5-5");
    assert_string_equal(MODELS_DEFAULT_OPENAI, "gpt-4.1");
    assert_int_equal(model_reasoning(MODELS_DEFAULT_ANTHROPIC), MODEL_REASONING_BUDGET);
    assert_true(models_lookup(MODELS_DEFAULT_ANTHROPIC).max_output_tokens > 0);
}

static void test_limits_by_prefix(void **state)
{
    (void)state;
    assert_int_equal(models_lookup("claude-opus-4-8").max_output_tokens, 32000);
    assert_int_equal(models_lookup("claude-sonnet-4-6").max_output_tokens, 64000);
    assert_int_equal(models_lookup("claude-3-5-haiku-latest").max_output_tokens, 8192);
    assert_int_equal(models_lookup("gpt-4.1-mini").context_window, 1047576);
    assert_int_equal(models_lookup("gpt-5.4").context_window, 400000);
    model_info u = models_lookup("some-local-model");
    assert_int_equal(u.context_window, 128000);
    assert_int_equal(u.max_output_tokens, 8192);
    assert_int_equal(models_lookup(NULL).context_window, 128000);
}

static void test_temperature(void **state)
{
    (void)state;
    /* Refused by gpt-5 / o-series; absent from the current Anthropic types. */
    const char *no[] = {"gpt-5", "gpt-5.6-sol", "gpt-5-mini", "o3", "o3-mini", "o4-mini", "o1",
                        "claude-sonnet-5-5", "claude-opus-4-7", "claude-haiku-4-5",
                        "claude-3-5-sonnet-20241022"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(model_accepts_temperature(no[i]));
    const char *yes[] = {"gpt-4.1", "gpt-4o-mini", "llama3", "qwen2.5-coder", "unknown", NULL};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(model_accepts_temperature(yes[i]));
}

static void test_reasoning_and_cap_field(void **state)
{
    (void)state;
    assert_int_equal(model_reasoning("gpt-5"), MODEL_REASONING_EFFORT);
    assert_int_equal(model_reasoning("o4-mini"), MODEL_REASONING_EFFORT);
    assert_int_equal(model_reasoning("gpt-4.1"), MODEL_REASONING_NONE);
    assert_int_equal(model_reasoning("claude-opus-5"), MODEL_REASONING_BUDGET);
    assert_int_equal(model_reasoning("claude-3-7-sonnet-latest"), MODEL_REASONING_BUDGET);
    assert_int_equal(model_reasoning("claude-3-5-haiku"), MODEL_REASONING_NONE);
    assert_int_equal(models_lookup("claude-sonnet-4-6").thinking_min_budget, 1024);
    assert_string_equal(model_max_tokens_field("gpt-5"), "max_completion_tokens");
    assert_string_equal(model_max_tokens_field("o3"), "max_completion_tokens");
    assert_string_equal(model_max_tokens_field("gpt-4.1"), "max_tokens");
    assert_string_equal(model_max_tokens_field("llama3"), "max_tokens");
}

/* The classifier's request, encoded by a codec, as its JSON body. */
static json_t *classifier_body(const provider_codec_ops *codec, const char *base_url,
                               const char *model)
{
    provider_config cfg = {.base_url = (char *)base_url, .api_key = "k", .model = (char *)model};
    json_t *input = json_pack("{s:s}", "command", "ls");
    msg_request req;
    model_classifier_request(&cfg, "Bash", input, "/p", NULL, &req);
    json_decref(input);
    provider_http_call call;
    memset(&call, 0, sizeof call);
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(codec->encode(&req, &cfg, &call, &err), 0);
    json_t *body = json_loadb(call.body.ptr, call.body.len, 0, NULL);
    assert_non_null(body);
    provider_http_call_free(&call);
    msg_request_free(&req);
    return body;
}

static void test_classifier_sends_only_accepted_parameters(void **state)
{
    (void)state;
    /* gpt-5 behind OpenAI, and behind a proxy (mockllm's loopback URL). */
    const char *urls[] = {"https://api.openai.com/v1", "http://127.0.0.1:9/v1"};
    for (size_t i = 0; i < 2; i++) {
        json_t *b = classifier_body(&openai_chat_codec, urls[i], "gpt-5");
        assert_null(json_object_get(b, "temperature"));
        assert_null(json_object_get(b, "max_tokens"));
        assert_int_equal(json_get_int(b, "max_completion_tokens", 0), 300);
        json_decref(b);
        b = classifier_body(&openai_responses_codec, urls[i], "gpt-5");
        assert_null(json_object_get(b, "temperature"));
        assert_int_equal(json_get_int(b, "max_output_tokens", 0), 300);
        json_decref(b);
    }
    json_t *b = classifier_body(&anthropic_codec, "https://api.anthropic.com", "claude-sonnet-5-5");
    assert_null(json_object_get(b, "temperature"));
    assert_int_equal(json_get_int(b, "max_tokens", 0), 300);
    json_decref(b);
    /* A model that takes temperature still gets the deterministic 0. */
    b = classifier_body(&openai_chat_codec, "https://api.openai.com/v1", "gpt-4.1");
    assert_non_null(json_object_get(b, "temperature"));
    assert_true(json_number_value(json_object_get(b, "temperature")) == 0.0);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_current_models),
        cmocka_unit_test(test_limits_by_prefix),
        cmocka_unit_test(test_temperature),
        cmocka_unit_test(test_reasoning_and_cap_field),
        cmocka_unit_test(test_classifier_sends_only_accepted_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

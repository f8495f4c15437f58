/* test_model_aliases.c — the alias and price tables (provider/models.c) and
 * their loom.h face (api/models.c): aliases resolve to the current ids and
 * nothing else is renamed; prices are found by id, a dated snapshot or a
 * [1m] suffix, never by a shorter family prefix; one request is priced per
 * kind of token, Haiku 5.5's second tier included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"
#include "loom.h"
#include "provider/models.h"

/* Dollars compared to the tenth of a cent's millionth: the sums are exact
 * decimal products, so only float rounding can differ. */
#define assert_usd(got, want) assert_true((got) > (want) - 1e-9 && (got) < (want) + 1e-9)

static void aliases_resolve_to_current_ids(void **state)
{
    (void)state;
    assert_string_equal(models_resolve("sonnet"), "claude-sonnet-5-5");
    assert_string_equal(models_resolve("opus"), "claude-opus-5-5");
    assert_string_equal(models_resolve("haiku"), "claude-haiku-5-5");
    assert_string_equal(models_resolve("fable"), "claude-fable-5-1");
    assert_true(models_is_alias("sonnet"));
    /* OpenAI's names are ids: listed, resolved to themselves, not aliases. */
    assert_string_equal(models_resolve("gpt-5"), "gpt-5");
    assert_false(models_is_alias("gpt-5"));
    /* Anything else comes back as given (the same pointer). */
    const char *novel = "claude-brand-new-9";
    assert_ptr_equal(models_resolve(novel), novel);
    assert_false(models_is_alias(novel));
    assert_false(models_is_alias("Sonnet")); /* ids are case-sensitive; so are aliases */
    assert_null(models_resolve(NULL));
    assert_false(models_is_alias(NULL));
}

static void every_listed_model_has_a_price_and_its_vendor(void **state)
{
    (void)state;
    size_t n = 0;
    const model_alias *a;
    for (size_t i = 0; (a = models_alias_at(i)); i++, n++) {
        model_price p;
        assert_true(models_price(a->id, &p));
        assert_true(p.input > 0 && p.output > p.input);
        assert_string_equal(models_vendor(a->id), a->provider);
    }
    assert_true(n >= 8);
    assert_null(models_alias_at(n));
    assert_null(models_vendor("qwen2.5-coder"));
    assert_string_equal(models_vendor("o3-mini"), "openai");
    assert_null(models_vendor("ollama"));
}

static void prices_match_the_id_not_a_shorter_family(void **state)
{
    (void)state;
    model_price p;
    assert_true(models_price("claude-sonnet-5-5", &p));
    assert_usd(p.input, 2);
    assert_usd(p.output, 10);
    assert_usd(p.cache_write, 2.50);
    assert_usd(p.cache_read, 0.10);
    /* Opus 4.5 is $5, not the $15 of claude-opus-4 (a prefix of its id). */
    assert_true(models_price("claude-opus-4-5", &p));
    assert_usd(p.input, 5);
    assert_true(models_price("claude-opus-4-20250514", &p)); /* a dated snapshot of Opus 4 */
    assert_usd(p.input, 15);
    assert_true(models_price("claude-haiku-4-5-20251001", &p));
    assert_usd(p.input, 1);
    assert_true(models_price("claude-sonnet-5-5[1m]", &p));
    assert_usd(p.input, 2);
    /* gpt-5-mini is not gpt-5, nor gpt-5.4; a dated gpt-5 is gpt-5. */
    assert_true(models_price("gpt-5-mini", &p));
    assert_usd(p.input, 0.25);
    assert_true(models_price("gpt-5.4", &p));
    assert_usd(p.input, 2.50);
    assert_true(models_price("gpt-5-2025-08-07", &p));
    assert_usd(p.input, 1.25);
    /* No price: false and zeroed, never a guess from a family. */
    assert_false(models_price("gpt-5.6-sol", &p));
    assert_false(models_price("claude-brand-new-9", &p));
    assert_usd(p.input, 0);
    assert_false(models_price("claude-sonnet-5-5-extra", &p));
    assert_false(models_price(NULL, &p));
}

static void a_request_is_priced_per_kind_of_token(void **state)
{
    (void)state;
    model_price p;
    assert_true(models_price("claude-sonnet-5-5", &p));
    assert_usd(model_price_cost(&p, 1000000, 100000, 0, 0, 0), 3.0);
    assert_usd(model_price_cost(&p, 0, 0, 1000000, 0, 0), 2.50);
    assert_usd(model_price_cost(&p, 0, 0, 0, 1000000, 0), 0.10);
    /* A 1-hour cache write: 2× input ($4), the rest of the writes at the
     * 5-minute price; a 1-hour count over the writes is capped to them. */
    assert_usd(p.cache_write_1h, 4.0);
    assert_usd(model_price_cost(&p, 0, 0, 1000000, 0, 250000), 0.75 * 2.50 + 0.25 * 4.0);
    assert_usd(model_price_cost(&p, 0, 0, 1000000, 0, 5000000), 4.0);
    assert_usd(model_price_cost(&p, 0, 0, 1000000, 0, -3), 2.50);
    assert_string_equal(p.as_of, "2026-12-02");
    /* Haiku 5.5: $0.10/$0.50 up to a 100,000-token prompt; past it every
     * token of the request at $0.50/$2.50 — cache tokens count toward it. */
    assert_true(models_price("claude-haiku-5-5", &p));
    assert_usd(model_price_cost(&p, 100000, 10000, 0, 0, 0), 0.01 + 0.005);
    assert_usd(model_price_cost(&p, 200000, 10000, 0, 0, 0), 0.10 + 0.025);
    assert_usd(model_price_cost(&p, 10000, 0, 0, 100000, 0), 0.005 + 0.005);
    /* its second tier's 1-hour write: 2× that tier's input */
    assert_usd(model_price_cost(&p, 200000, 0, 1000000, 0, 1000000), 0.10 + 1.0);
    /* OpenAI charges no cache writes; cached input at its own price. */
    assert_true(models_price("gpt-5", &p));
    assert_usd(p.cache_write, 0);
    assert_usd(p.cache_write_1h, 0);
    assert_usd(model_price_cost(&p, 0, 0, 0, 1000000, 0), 0.125);
}

static json_t *parsed(char *text)
{
    assert_non_null(text);
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(doc);
    return doc;
}

static void the_api_lists_the_dated_table(void **state)
{
    (void)state;
    assert_string_equal(loom_model_resolve("opus"), "claude-opus-5-5");
    json_t *doc = parsed(loom_models_json());
    assert_string_equal(json_get_str(doc, "date", ""), MODELS_TABLE_DATE);
    const json_t *first = json_array_get(json_get_arr(doc, "models"), 0);
    assert_string_equal(json_get_str(first, "alias", ""), "sonnet");
    assert_string_equal(json_get_str(first, "id", ""), "claude-sonnet-5-5");
    assert_string_equal(json_get_str(first, "provider", ""), "anthropic");
    assert_true(json_get_int(first, "context_window", 0) > 0);
    assert_usd(json_get_num(json_object_get(first, "price"), "output", 0), 10);
    json_decref(doc);

    doc = parsed(loom_model_info_json("haiku"));
    assert_string_equal(json_get_str(doc, "alias", ""), "haiku");
    assert_string_equal(json_get_str(doc, "id", ""), "claude-haiku-5-5");
    const json_t *tier = json_object_get(json_object_get(doc, "price"), "long_prompt");
    assert_int_equal(json_get_int(tier, "above", 0), 100000);
    assert_usd(json_get_num(tier, "cache_write_1h", 0), 1.0);
    assert_usd(json_get_num(json_object_get(doc, "price"), "cache_write_1h", 0), 0.20);
    assert_string_equal(json_get_str(json_object_get(doc, "price"), "as_of", ""), "2026-12-02");
    json_decref(doc);
    doc = parsed(loom_model_info_json("some-local-model"));
    assert_null(json_object_get(doc, "price"));
    assert_null(json_object_get(doc, "alias"));
    json_decref(doc);
    assert_null(loom_model_info_json(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aliases_resolve_to_current_ids),
        cmocka_unit_test(every_listed_model_has_a_price_and_its_vendor),
        cmocka_unit_test(prices_match_the_id_not_a_shorter_family),
        cmocka_unit_test(a_request_is_priced_per_kind_of_token),
        cmocka_unit_test(the_api_lists_the_dated_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

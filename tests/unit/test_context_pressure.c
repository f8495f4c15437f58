/* test_context_pressure.c — the local token estimate and ρ accounting:
 * local figures alone, the provider's count plus what was added, and the
 * scaled estimate after the context changed shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "context/pressure.h"
#include "context/tokens.h"

static void test_estimate_text(void **state)
{
    (void)state;
    assert_int_equal(tokens_estimate_text(NULL, 5), 0);
    assert_int_equal(tokens_estimate_text("abc", 0), 0);
    assert_int_equal(tokens_estimate_cstr(NULL), 0);
    assert_int_equal(tokens_estimate_cstr(""), 0);
    /* ASCII: 3.6 bytes per token, rounded up. */
    assert_int_equal(tokens_estimate_cstr("a"), 1);
    assert_int_equal(tokens_estimate_cstr("abc"), 1);
    assert_int_equal(tokens_estimate_cstr("abcd"), 2);
    char buf[361];
    memset(buf, 'x', 360);
    buf[360] = '\0';
    assert_int_equal(tokens_estimate_cstr(buf), 100);
    assert_int_equal(tokens_estimate_text(buf, 36), 10);
    assert_int_equal(tokens_estimate_text(buf, 37), 11);
    /* Non-ASCII: one token per character, whatever its byte length. */
    assert_int_equal(tokens_estimate_cstr("日本語"), 3);      /* 9 bytes */
    assert_int_equal(tokens_estimate_cstr("журнал"), 6);     /* 12 bytes */
    assert_int_equal(tokens_estimate_cstr("😀"), 1);          /* 4 bytes */
    assert_int_equal(tokens_estimate_cstr("héllo"), 2 + 1);  /* 4 ASCII + é */
    /* Only n bytes count. */
    assert_int_equal(tokens_estimate_text("日本語", 3), 1);
}

static void test_estimate_request(void **state)
{
    (void)state;
    msg_request req = {0};
    assert_int_equal(tokens_estimate_request(&req), 0);
    msg_message *m = msg_request_add_message(&req, MSG_ROLE_USER);
    msg_message_add_text(m, "abcd"); /* 2 */
    assert_int_equal(tokens_estimate_message(m), 4 + TOKENS_PER_BLOCK + 2);
    msg_message_add_image(m, "image/png", "AAAA");
    assert_int_equal(tokens_estimate_request(&req),
                     4 + 2 * TOKENS_PER_BLOCK + 2 + TOKENS_PER_IMAGE);
    req.system = strdup("abc"); /* 1 */
    assert_int_equal(tokens_estimate_request(&req),
                     1 + 4 + 2 * TOKENS_PER_BLOCK + 2 + TOKENS_PER_IMAGE);
    msg_request_free(&req);
}

static void test_pressure_local(void **state)
{
    (void)state;
    pressure p = {.window = 200000};
    pressure_source src = PRESSURE_API;
    assert_int_equal(pressure_tokens(&p, 12345, &src), 12345);
    assert_int_equal(src, PRESSURE_LOCAL);
    assert_string_equal(pressure_source_name(src), "local-estimate");
    assert_int_equal(pressure_tokens(&p, 7, NULL), 7);
    /* A provider that reports nothing leaves the local estimate. */
    msg_usage none = {0};
    pressure_report(&p, &none, 1000);
    assert_int_equal(pressure_tokens(&p, 1500, &src), 1500);
    assert_int_equal(src, PRESSURE_LOCAL);
    assert_true(pressure_rho(&p, 100000) == 0.5);
    p.window = 0;
    assert_true(pressure_rho(&p, 100000) == 0.0);
}

static void test_pressure_api(void **state)
{
    (void)state;
    pressure p = {.window = 100000};
    /* The provider counted 12,000 (input + cache reads + writes) for a
     * request Loom estimated at 10,000. */
    msg_usage u = {.input_tokens = 2000, .cache_read_tokens = 9000,
                    .cache_creation_tokens = 1000, .output_tokens = 500};
    pressure_report(&p, &u, 10000);
    pressure_source src;
    assert_int_equal(pressure_tokens(&p, 10000, &src), 12000);
    assert_int_equal(src, PRESSURE_API);
    assert_string_equal(pressure_source_name(src), "api-usage");
    /* 800 estimated tokens added since: reported + the difference. */
    assert_int_equal(pressure_tokens(&p, 10800, &src), 12800);
    assert_int_equal(src, PRESSURE_API);
    assert_true(pressure_rho(&p, 12800) == 0.128);

    /* A smaller estimate (something was dropped) is scaled instead. */
    assert_int_equal(pressure_tokens(&p, 5000, &src), 6000);
    assert_int_equal(src, PRESSURE_SCALED);

    /* After a compaction the difference rule no longer holds: scaled by
     * 12,000 / 10,000, even for a larger estimate. */
    pressure_reset_shape(&p);
    assert_int_equal(pressure_tokens(&p, 20000, &src), 24000);
    assert_int_equal(src, PRESSURE_SCALED);
    assert_string_equal(pressure_source_name(src), "api-scaled");
    assert_int_equal(pressure_tokens(&p, 4000, &src), 4800);

    /* The next report in the new shape restores the difference rule. */
    msg_usage u2 = {.input_tokens = 3000};
    pressure_report(&p, &u2, 2500);
    assert_int_equal(pressure_tokens(&p, 2600, &src), 3100);
    assert_int_equal(src, PRESSURE_API);
}

static void test_pressure_ratio_clamped(void **state)
{
    (void)state;
    pressure_source src;
    pressure p = {.window = 100000};
    msg_usage hi = {.input_tokens = 50000};
    pressure_report(&p, &hi, 1000); /* ratio 50 */
    pressure_reset_shape(&p);
    assert_int_equal(pressure_tokens(&p, 2000, &src), 6000); /* × 3 */
    assert_int_equal(src, PRESSURE_SCALED);

    pressure q = {.window = 100000};
    msg_usage lo = {.input_tokens = 100};
    pressure_report(&q, &lo, 10000); /* ratio 0.01 */
    pressure_reset_shape(&q);
    assert_int_equal(pressure_tokens(&q, 2000, &src), 1000); /* × 0.5 */

    /* Within the bounds the ratio stands. */
    pressure r = {.window = 100000};
    msg_usage mid = {.input_tokens = 700};
    pressure_report(&r, &mid, 1000);
    pressure_reset_shape(&r);
    assert_int_equal(pressure_tokens(&r, 2000, &src), 1400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_text),
        cmocka_unit_test(test_estimate_request),
        cmocka_unit_test(test_pressure_local),
        cmocka_unit_test(test_pressure_api),
        cmocka_unit_test(test_pressure_ratio_clamped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

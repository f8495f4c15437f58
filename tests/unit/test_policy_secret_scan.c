/* test_policy_secret_scan.c — the credential scanner (policy/secret_scan.h):
 * each documented key format is found with its kind and exact extent; the
 * near misses that fill real tool output (words with a key's prefix,
 * placeholders, environment references, comparisons) are not; masking
 * keeps the surrounding text, keeps an assignment's name readable, and is
 * idempotent. The sample keys are made up; none is real. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/secret_scan.h"

static size_t scan(const char *s, secret_hit *h, size_t max)
{
    return secret_scan(s, strlen(s), h, max);
}

/* The text holds exactly one secret: `secret`, of kind `kind`. */
static void finds_one(const char *text, const char *secret, const char *kind)
{
    secret_hit h[4];
    size_t n = scan(text, h, 4);
    if (n != 1)
        fail_msg("%zu hits in \"%s\", wanted 1 (%s)", n, text, kind);
    assert_string_equal(h[0].kind, kind);
    const char *at = strstr(text, secret);
    assert_non_null(at);
    assert_int_equal(h[0].off, (size_t)(at - text));
    assert_int_equal(h[0].len, strlen(secret));
}

static void finds_none(const char *text)
{
    secret_hit h[4];
    size_t n = scan(text, h, 4);
    if (n != 0)
        fail_msg("\"%s\" reported as %s at %zu+%zu", text, h[0].kind, h[0].off, h[0].len);
}

static void provider_keys_are_found_with_their_kind(void **state)
{
    (void)state;
    finds_one("export ANTHROPIC=sk-ant-api03-Ab3dEf9hIjKlMnOpQrStUvWxYz0123456789_-AA done",
              "sk-ant-api03-Ab3dEf9hIjKlMnOpQrStUvWxYz0123456789_-AA", "anthropic_api_key");
    finds_one("key: sk-proj-9aZx8bYw7cVu6dTs5eRq4fPo3gNm", "sk-proj-9aZx8bYw7cVu6dTs5eRq4fPo3gNm",
              "openai_api_key");
    finds_one("(sk-4bC9dE2fG7hJ1kL6mN0pQ3rS8tU5vW)", "sk-4bC9dE2fG7hJ1kL6mN0pQ3rS8tU5vW",
              "openai_api_key");
    finds_one("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id");
    finds_one("token ghp_1234567890abcdefghijABCDEFGHIJ123456 end",
              "ghp_1234567890abcdefghijABCDEFGHIJ123456", "github_token");
    finds_one("SLACK xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij", "slack_token");
    finds_one("g AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q x",
              "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google_api_key");
    finds_one("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
              "stripe_key");
}

static void private_key_blocks_are_found_whole(void **state)
{
    (void)state;
    const char *block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
                        "-----END OPENSSH PRIVATE KEY-----";
    char text[512];
    snprintf(text, sizeof text, "cat id_ed25519\n%s\nok\n", block);
    finds_one(text, block, "private_key");
    /* A result cut in the middle of the key still masks the rest. */
    const char *cut = "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow";
    finds_one(cut, cut + 2, "private_key");
    /* A certificate is public. */
    finds_none("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----");
}

static void jwts_and_assignments_are_found(void **state)
{
    (void)state;
    const char *jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N";
    char text[256];
    snprintf(text, sizeof text, "Authorization: Bearer %s\n", jwt);
    finds_one(text, jwt, "jwt");
    finds_one("DB_PASSWORD=h7Gq2xPz9LmR4t", "h7Gq2xPz9LmR4t", "credential_assignment");
    finds_one("{\"client_secret\": \"Zr8Kq2Lm9Xv4Tp7B\"}", "Zr8Kq2Lm9Xv4Tp7B",
              "credential_assignment");
    finds_one("api_key: 'Q9w8E7r6T5y4U3i2'", "Q9w8E7r6T5y4U3i2", "credential_assignment");
}

static void near_misses_are_not_secrets(void **state)
{
    (void)state;
    finds_none("task-runner and disk-usage are words with sk- inside");
    finds_none("sk-learn is a library, sk-abcdefghijklmnopqrstuvwxyz has no digit");
    finds_none("password = getpass()");
    finds_none("token: ${GITHUB_TOKEN}");
    finds_none("API_KEY=<your key here>");
    finds_none("password=xxxxxxxxxxxxxxxx");
    finds_none("if token == expected_value_123ABC:");
    finds_none("secretary = AbcDef123456789Q");
    finds_none("tokenizer: Xy9Wv8Ut7Sr6Qp5O");
    finds_none("AKIAIOSFODNN7EXAMPLEXX is too long for an access key id");
    finds_none("AKIAIOSFODNN7EXAMPLEh is glued to a word");
    finds_none("ghp_1234567890abcdefghijABCDEFGHIJ123456_suffix is an identifier");
    finds_none("");
}

static void several_hits_come_in_order_and_count_past_max(void **state)
{
    (void)state;
    const char *t = "a=1 AKIAIOSFODNN7EXAMPLE b ghp_1234567890abcdefghijABCDEFGHIJ123456 "
                    "c sk-4bC9dE2fG7hJ1kL6mN0pQ3rS8tU5vW";
    secret_hit h[2];
    assert_int_equal(scan(t, h, 2), 3);
    assert_string_equal(h[0].kind, "aws_access_key_id");
    assert_string_equal(h[1].kind, "github_token");
    assert_true(h[0].off + h[0].len <= h[1].off);
    assert_int_equal(scan(t, NULL, 0), 3);
}

static void masking_keeps_the_text_and_is_idempotent(void **state)
{
    (void)state;
    const char *t = "ok DB_PASSWORD=h7Gq2xPz9LmR4t and sk-ant-api03-Ab3dEf9hIjKlMnOpQrSt12 end";
    size_t n = 0;
    char *m = secret_mask(t, strlen(t), &n);
    assert_int_equal(n, 2);
    assert_string_equal(m, "ok DB_PASSWORD=[REDACTED:credential_assignment] and "
                           "[REDACTED:anthropic_api_key] end");
    /* The fuzzer's case: a key glued to a word must not become a word
     * starting a new key once its neighbour is masked. */
    const char *glued = "x ASIA7ASIA73KIHASA7GKhf_xxxxxxxxx73KIHASA7GKhxxxxxx73KIHASA7GKhf_x";
    char *g = secret_mask(glued, strlen(glued), &n);
    assert_int_equal(secret_scan(g, strlen(g), NULL, 0), 0);
    free(g);
    size_t n2 = 9;
    char *again = secret_mask(m, strlen(m), &n2);
    assert_int_equal(n2, 0);
    assert_string_equal(again, m);
    free(again);
    free(m);
    m = secret_mask("", 0, &n);
    assert_string_equal(m, "");
    assert_int_equal(n, 0);
    free(m);
}

static void text_need_not_be_terminated(void **state)
{
    (void)state;
    /* The key is cut by len: only the part inside the buffer counts. */
    const char buf[] = "AKIAIOSFODNN7EXAMPLE";
    secret_hit h[1];
    assert_int_equal(secret_scan(buf, 19, h, 1), 0);
    assert_int_equal(secret_scan(buf, 20, h, 1), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(provider_keys_are_found_with_their_kind),
        cmocka_unit_test(private_key_blocks_are_found_whole),
        cmocka_unit_test(jwts_and_assignments_are_found),
        cmocka_unit_test(near_misses_are_not_secrets),
        cmocka_unit_test(several_hits_come_in_order_and_count_past_max),
        cmocka_unit_test(masking_keeps_the_text_and_is_idempotent),
        cmocka_unit_test(text_need_not_be_terminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

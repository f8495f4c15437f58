/* test_base_sha256.c — SHA-256 on the FIPS 180-4 examples and a
 * million-byte message, HMAC-SHA256 on RFC 4231's cases (a key longer than
 * a block among them), base64 decoding on RFC 4648 §10 and its refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/sha256.h"

static void hex(const unsigned char *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha256_known_answers(void **state)
{
    (void)state;
    char h[65];
    sha256_hex("abc", 3, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_hex("", 0, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* A million 'a's, fed in uneven pieces, crosses every block boundary case. */
    sha256_ctx c;
    sha256_init(&c);
    char chunk[997];
    memset(chunk, 'a', sizeof chunk);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof chunk ? left : sizeof chunk;
        sha256_update(&c, chunk, n);
        left -= n;
    }
    unsigned char d[32];
    sha256_final(&c, d);
    hex(d, 32, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_hmac_rfc4231(void **state)
{
    (void)state;
    unsigned char key[131], out[32];
    char h[65];
    memset(key, 0x0b, 20);
    hmac_sha256(key, 20, "Hi There", 8, out);
    hex(out, 32, h);
    assert_string_equal(h, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out);
    hex(out, 32, h);
    assert_string_equal(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, 131);
    const char *m = "Test Using Larger Than Block-Size Key - Hash Key First";
    hmac_sha256(key, 131, m, strlen(m), out);
    hex(out, 32, h);
    assert_string_equal(h, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void test_base64_rfc4648(void **state)
{
    (void)state;
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        unsigned char dec[16];
        long n = base64_decode(want[i], strlen(want[i]), dec);
        assert_int_equal(n, (long)strlen(in[i]));
        assert_memory_equal(dec, in[i], (size_t)n);
    }
}

static void test_base64_refuses_what_is_not_canonical(void **state)
{
    (void)state;
    unsigned char out[16];
    const char *bad[] = {"Zg=", "Zg", "Z===", "Zh==", "Zm9v\n", "Zm 9", "Zg==Zg==", "Zm-v", "=Zg="};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (base64_decode(bad[i], strlen(bad[i]), out) != -1)
            fail_msg("base64 \"%s\" was accepted", bad[i]);
}

static void test_equal_compares_every_byte(void **state)
{
    (void)state;
    unsigned char a[32] = {0}, b[32] = {0};
    assert_true(sha256_equal(a, b, 32));
    b[31] = 1;
    assert_false(sha256_equal(a, b, 32));
    b[31] = 0;
    b[0] = 0x80;
    assert_false(sha256_equal(a, b, 32));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_known_answers),
        cmocka_unit_test(test_hmac_rfc4231),
        cmocka_unit_test(test_base64_rfc4648),
        cmocka_unit_test(test_base64_refuses_what_is_not_canonical),
        cmocka_unit_test(test_equal_compares_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

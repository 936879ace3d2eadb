/* SHA-256 against the FIPS 180-4 / NIST example vectors, block-boundary lengths and the
 * incremental interface fed in every chunk size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/sha256.h"

static void expect_hex(const void *data, size_t len, const char *want)
{
    char got[65];
    xpb_sha256_hex(got, data, len);
    assert_string_equal(got, want);
}

static void test_abc(void **state)
{
    (void)state;
    expect_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_empty(void **state)
{
    (void)state;
    expect_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_hex(NULL, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_448_bits(void **state)
{
    (void)state;
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(strlen(m) * 8, 448);
    expect_hex(m, strlen(m), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_896_bits(void **state)
{
    (void)state;
    const char *m =
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
        "klmnopqrlmnopqrsmnopqrstnopqrstu";
    assert_int_equal(strlen(m) * 8, 896);
    expect_hex(m, strlen(m), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a(void **state)
{
    (void)state;
    size_t n = 1000000;
    char *m = malloc(n);
    assert_non_null(m);
    memset(m, 'a', n);
    expect_hex(m, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    /* The same through the incremental interface, 1000 bytes at a time. */
    struct xpb_sha256_ctx ctx;
    uint8_t digest[32];
    char hex[65];
    xpb_sha256_init(&ctx);
    for (size_t i = 0; i < n; i += 1000)
        xpb_sha256_update(&ctx, m + i, 1000);
    xpb_sha256_final(&ctx, digest);
    xpb_sha256_to_hex(hex, digest);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(m);
}

/* Lengths around the padding boundaries (55/56 bytes: one or two final blocks). Expected values
 * from Python's hashlib. */
static void test_padding_boundaries(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        const char *hex;
    } cases[] = {
        {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
        {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
        {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
    };
    char buf[128];
    memset(buf, 'a', sizeof buf);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_hex(buf, cases[i].n, cases[i].hex);
}

/* Every chunk size from 1 to 130 over 2560 bytes of 0..255 gives the one-shot digest. */
static void test_incremental_chunks(void **state)
{
    (void)state;
    uint8_t data[2560];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)i;
    const char *want = "e392378f849d67bbb1a7bbec84f1098ae3faa751049c009a850130ce6073d91a";
    expect_hex(data, sizeof data, want);
    for (size_t chunk = 1; chunk <= 130; chunk++) {
        struct xpb_sha256_ctx ctx;
        uint8_t digest[32];
        char hex[65];
        xpb_sha256_init(&ctx);
        for (size_t off = 0; off < sizeof data; off += chunk) {
            size_t n = sizeof data - off < chunk ? sizeof data - off : chunk;
            xpb_sha256_update(&ctx, data + off, n);
        }
        xpb_sha256_final(&ctx, digest);
        xpb_sha256_to_hex(hex, digest);
        assert_string_equal(hex, want);
    }
}

static void test_raw_digest_matches_hex(void **state)
{
    (void)state;
    uint8_t d[32];
    xpb_sha256(d, "abc", 3);
    assert_int_equal(d[0], 0xba);
    assert_int_equal(d[1], 0x78);
    assert_int_equal(d[31], 0xad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abc),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_448_bits),
        cmocka_unit_test(test_896_bits),
        cmocka_unit_test(test_million_a),
        cmocka_unit_test(test_padding_boundaries),
        cmocka_unit_test(test_incremental_chunks),
        cmocka_unit_test(test_raw_digest_matches_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

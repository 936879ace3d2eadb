/* The arena of base/arena.h: zeroed and aligned memory, blocks larger than the default, copies
 * and formatted strings, arrays that grow by copying, release and reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/arena.h"

static void test_alloc(void **state)
{
    (void)state;
    xpb_arena a = {0};
    for (size_t size = 0; size < 300; size += 7) {
        unsigned char *p = xpb_arena_alloc(&a, size);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (size_t i = 0; i < size; i++)
            assert_int_equal(p[i], 0);
        memset(p, 0xAB, size);
    }
    char *big = xpb_arena_alloc(&a, 1u << 20); /* larger than a block: a block of its own */
    assert_non_null(big);
    big[(1u << 20) - 1] = 'x';
    assert_false(xpb_arena_failed(&a));
    assert_string_equal(xpb_arena_strdup(&a, "copy"), "copy");
    assert_null(xpb_arena_strdup(&a, NULL));
    assert_string_equal(xpb_arena_printf(&a, "%s-%d", "f", 12), "f-12");
    assert_false(xpb_arena_failed(&a));
    xpb_arena_free(&a);
    assert_non_null(xpb_arena_alloc(&a, 8)); /* usable again */
    xpb_arena_free(&a);
}

static void test_push(void **state)
{
    (void)state;
    xpb_arena a = {0};
    int *items = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        int *slot = xpb_arena_push(&a, (void **)&items, &n, &cap, sizeof *items);
        assert_non_null(slot);
        assert_int_equal(*slot, 0);
        *slot = i;
    }
    assert_int_equal(n, 1000);
    assert_true(cap >= n);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(items[i], i);
    xpb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc),
        cmocka_unit_test(test_push),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

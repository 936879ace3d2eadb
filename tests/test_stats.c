/* Summary statistics of step times and the host's random streams. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "program/rng.h"
#include "run/stats.h"

static void test_summary(void **state)
{
    (void)state;
    /* Unsorted 1..10: NumPy gives p50 5.5, p95 9.55, p99 9.91, std (ddof 1) 3.02765. */
    const double v[10] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
    xpb_summary s;
    assert_int_equal(xpb_summarize(&s, v, 10), 0);
    assert_true(fabs(s.mean - 5.5) < 1e-12);
    assert_true(fabs(s.p50 - 5.5) < 1e-12);
    assert_true(fabs(s.p95 - 9.55) < 1e-12);
    assert_true(fabs(s.p99 - 9.91) < 1e-12);
    assert_true(fabs(s.cv - 3.0276503540974917 / 5.5) < 1e-12);
    assert_true(s.min == 1 && s.max == 10);
    assert_true(v[0] == 7); /* input untouched */
    const double one = 4.0;
    assert_int_equal(xpb_summarize(&s, &one, 1), 0);
    assert_true(s.p50 == 4.0 && s.p99 == 4.0 && s.cv == 0);
    assert_int_equal(xpb_summarize(&s, v, 0), -1);
}

static void test_rng_streams(void **state)
{
    (void)state;
    xpb_rng a, b, c;
    xpb_rng_init(&a, 42, "conv1.weight", 0);
    xpb_rng_init(&b, 42, "conv1.weight", 0);
    xpb_rng_init(&c, 42, "conv1.bias", 0);
    int same_ab = 1, same_ac = 1;
    for (int i = 0; i < 100; i++) {
        uint64_t x = xpb_rng_next(&a), y = xpb_rng_next(&b), z = xpb_rng_next(&c);
        same_ab &= x == y;
        same_ac &= x == z;
    }
    assert_true(same_ab);
    assert_false(same_ac);
    /* Moments of uniform and normal draws. */
    double su = 0, sn = 0, sn2 = 0;
    const int n = 200000;
    xpb_rng_init(&a, 7, "moments", 1);
    for (int i = 0; i < n; i++) {
        double u = xpb_rng_uniform(&a), z = xpb_rng_normal(&a);
        assert_true(u >= 0 && u < 1);
        su += u;
        sn += z;
        sn2 += z * z;
    }
    assert_true(fabs(su / n - 0.5) < 0.005);
    assert_true(fabs(sn / n) < 0.01);
    assert_true(fabs(sn2 / n - 1.0) < 0.02);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_rng_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

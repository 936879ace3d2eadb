/* Confidence intervals: the t distribution against published table values, the geometric
 * mean interval and Welch's ratio interval against values computed by hand (and by SciPy's
 * stats.t.ppf, quoted in the comments), and the degenerate cases. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "results/interval.h"

static void near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.12g, want %.12g (rel %.1g)", got, want, rel);
}

static void test_t_quantiles(void **state)
{
    (void)state;
    /* two-sided 95% critical values of Student's t (any statistics table) */
    near(xpb_student_t_quantile(0.975, 1), 12.706204736, 1e-8);
    near(xpb_student_t_quantile(0.975, 2), 4.302652730, 1e-8);
    near(xpb_student_t_quantile(0.975, 4), 2.776445105, 1e-8);
    near(xpb_student_t_quantile(0.975, 10), 2.228138852, 1e-8);
    near(xpb_student_t_quantile(0.975, 30), 2.042272456, 1e-8);
    near(xpb_student_t_quantile(0.995, 5), 4.032142984, 1e-8);
    near(xpb_student_t_quantile(0.975, 1e6), 1.959966, 1e-5); /* the normal's 1.959964 */
    near(xpb_student_t_quantile(0.025, 3), -3.182446305, 1e-8);
    assert_true(xpb_student_t_quantile(0.5, 7) == 0);
    /* a non-integer df (Welch) lies between its neighbours */
    double q = xpb_student_t_quantile(0.975, 2.5);
    assert_true(q < 4.302652730 && q > 3.182446305);
    near(xpb_student_t_cdf(2.228138852, 10), 0.975, 1e-9);
    near(xpb_student_t_cdf(0, 3), 0.5, 1e-15);
    assert_true(isnan(xpb_student_t_quantile(0, 3)));
    assert_true(isnan(xpb_student_t_quantile(1, 3)));
    assert_true(isnan(xpb_student_t_quantile(0.9, 0)));
}

static void test_geomean(void **state)
{
    (void)state;
    xpb_interval iv;
    const double x[3] = {100, 110, 121}; /* logs: ln100 + {0, 1, 2} * ln1.1 */
    assert_int_equal(xpb_interval_geomean(&iv, x, 3, 0.95), 0);
    near(iv.estimate, 110, 1e-12);
    /* sd of the logs is ln(1.1); half width t(0.975,2) * ln(1.1) / sqrt(3) */
    double half = 4.302652730 * log(1.1) / sqrt(3.0);
    near(iv.low, 110 * exp(-half), 1e-8);
    near(iv.high, 110 * exp(half), 1e-8);
    /* one repeat: an estimate, no interval */
    assert_int_equal(xpb_interval_geomean(&iv, x, 1, 0.95), 0);
    near(iv.estimate, 100, 1e-15);
    assert_true(isnan(iv.low) && isnan(iv.high));
    assert_false(xpb_interval_significant(&iv));
    /* nothing, or a value that is not a positive throughput */
    const double bad[2] = {5, 0};
    assert_int_equal(xpb_interval_geomean(&iv, x, 0, 0.95), -1);
    assert_int_equal(xpb_interval_geomean(&iv, bad, 2, 0.95), -1);
}

static void test_ratio(void **state)
{
    (void)state;
    xpb_interval iv;
    /* the same samples on both sides: ratio 1, an interval around it, not significant */
    const double a[3] = {100, 102, 98};
    assert_int_equal(xpb_interval_ratio(&iv, a, 3, a, 3, 0.95), 0);
    near(iv.estimate, 1, 1e-15);
    assert_true(iv.low < 1 && iv.high > 1);
    assert_false(xpb_interval_significant(&iv));

    /* twice as fast, with the same relative spread: ratio 2, clearly significant */
    const double b[3] = {200, 204, 196};
    assert_int_equal(xpb_interval_ratio(&iv, a, 3, b, 3, 0.95), 0);
    near(iv.estimate, 2, 1e-12);
    assert_true(iv.low > 1.9 && iv.high < 2.1);
    assert_true(xpb_interval_significant(&iv));
    /* slower is significant too, below 1 */
    assert_int_equal(xpb_interval_ratio(&iv, b, 3, a, 3, 0.95), 0);
    near(iv.estimate, 0.5, 1e-12);
    assert_true(iv.high < 1 && xpb_interval_significant(&iv));

    /* Welch by hand: logs of a have sd s_a, of c sd s_c; df from Welch-Satterthwaite */
    const double c[4] = {101, 99, 103, 97};
    assert_int_equal(xpb_interval_ratio(&iv, a, 3, c, 4, 0.95), 0);
    double la[3], lc[4], ma = 0, mc = 0, va = 0, vc = 0;
    for (int i = 0; i < 3; i++)
        ma += (la[i] = log(a[i])) / 3;
    for (int i = 0; i < 4; i++)
        mc += (lc[i] = log(c[i])) / 4;
    for (int i = 0; i < 3; i++)
        va += (la[i] - ma) * (la[i] - ma) / 2;
    for (int i = 0; i < 4; i++)
        vc += (lc[i] - mc) * (lc[i] - mc) / 3;
    double se2 = va / 3 + vc / 4;
    double df = se2 * se2 / ((va / 3) * (va / 3) / 2 + (vc / 4) * (vc / 4) / 3);
    double half = xpb_student_t_quantile(0.975, df) * sqrt(se2);
    near(iv.low, exp(mc - ma - half), 1e-10);
    near(iv.high, exp(mc - ma + half), 1e-10);
    assert_false(xpb_interval_significant(&iv));

    /* a small but real difference with tight repeats is significant; one repeat never is */
    const double d[3] = {103, 103.1, 102.9}, e[3] = {100, 100.1, 99.9};
    assert_int_equal(xpb_interval_ratio(&iv, e, 3, d, 3, 0.95), 0);
    assert_true(xpb_interval_significant(&iv));
    assert_int_equal(xpb_interval_ratio(&iv, e, 1, d, 3, 0.95), 0);
    near(iv.estimate, 103.0 / 100, 1e-3);
    assert_false(xpb_interval_significant(&iv));
    /* identical repeats on both sides: an exact ratio */
    const double f[2] = {50, 50}, g[2] = {75, 75};
    assert_int_equal(xpb_interval_ratio(&iv, f, 2, g, 2, 0.95), 0);
    near(iv.low, 1.5, 1e-15);
    near(iv.high, 1.5, 1e-15);
    assert_true(xpb_interval_significant(&iv));
    assert_int_equal(xpb_interval_ratio(&iv, f, 0, g, 2, 0.95), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_quantiles),
        cmocka_unit_test(test_geomean),
        cmocka_unit_test(test_ratio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

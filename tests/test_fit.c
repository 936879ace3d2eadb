/* The report's polynomial fit (core/report/report_fit.h): exact recovery of polynomials of each
 * degree, the degree leave-one-out picks on noisy and on exact data, R², the leave-one-out
 * error against a hand computation, projection, conditioning at large batch sizes, the largest
 * batch within a budget, where throughput saturates, and the arguments it refuses. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/report_fit.h"

static const double batches[] = {1, 2, 4, 8, 16, 32, 64};
#define N_BATCHES 7

/* A deterministic noise in [-1, 1]. */
static double noise(unsigned i)
{
    uint32_t s = i * 2654435761u + 12345u;
    s ^= s >> 13;
    s *= 1274126177u;
    return ((double)(s >> 8) / (double)(1u << 24)) * 2 - 1;
}

static void test_exact_polynomials(void **state)
{
    (void)state;
    static const double coef[4][4] = {
        {5, 0, 0, 0}, {3, 2, 0, 0}, {1, -0.5, 0.25, 0}, {2, 1, -0.1, 0.01}};
    for (int d = 0; d <= 3; d++) {
        double y[N_BATCHES];
        for (int i = 0; i < N_BATCHES; i++) {
            double x = batches[i];
            y[i] = coef[d][0] + coef[d][1] * x + coef[d][2] * x * x + coef[d][3] * x * x * x;
        }
        xpb_fit f;
        assert_int_equal(xpb_fit_poly(&f, batches, y, N_BATCHES, 3), XPB_OK);
        assert_int_equal(f.degree, d); /* exact data: the lowest degree that fits */
        for (int k = 0; k <= 3; k++)
            assert_true(fabs(f.coef[k] - coef[d][k]) < 1e-9 * (1 + fabs(coef[d][k])));
        assert_true(f.r2 > 1 - 1e-12);
        assert_true(f.loo_rmse < 1e-8);
        assert_int_equal(f.n, N_BATCHES);
        double x = 256,
               want = coef[d][0] + coef[d][1] * x + coef[d][2] * x * x + coef[d][3] * x * x * x;
        assert_true(fabs(xpb_fit_eval(&f, x) - want) < 1e-7 * (1 + fabs(want)));
    }
}

/* Memory-like data: a fixed part plus a per-sample part, with 1% noise. Leave-one-out keeps the
 * line, and the line predicts batch 128 within a few percent. */
static void test_noisy_line(void **state)
{
    (void)state;
    double y[N_BATCHES];
    for (int i = 0; i < N_BATCHES; i++)
        y[i] = (30e6 + 2e6 * batches[i]) * (1 + 0.01 * noise((unsigned)i));
    xpb_fit f;
    assert_int_equal(xpb_fit_poly(&f, batches, y, N_BATCHES, 3), XPB_OK);
    assert_int_equal(f.degree, 1);
    assert_true(f.r2 > 0.999 && f.r2 <= 1);
    assert_true(fabs(xpb_fit_eval(&f, 128) / (30e6 + 2e6 * 128) - 1) < 0.03);
    for (int d = 0; d <= 3; d++) /* every degree was tried, the line had the least error */
        assert_true(isfinite(f.loo_rmse_by_degree[d]) &&
                    f.loo_rmse_by_degree[d] >= f.loo_rmse_by_degree[1]);
    assert_true(f.loo_rmse == f.loo_rmse_by_degree[1]);
}

/* Leave-one-out of the mean, by hand: predicting y_i by the mean of the others. */
static void test_loo_by_hand(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4}, y[] = {1, 3, 2, 6};
    xpb_fit f;
    assert_int_equal(xpb_fit_poly_degree(&f, x, y, 4, 0), XPB_OK);
    assert_int_equal(f.degree, 0);
    assert_true(fabs(f.coef[0] - 3) < 1e-12);
    double sum = 0;
    for (int i = 0; i < 4; i++) {
        double others = (12 - y[i]) / 3;
        sum += (others - y[i]) * (others - y[i]);
    }
    assert_true(fabs(f.loo_rmse - sqrt(sum / 4)) < 1e-12);
    /* R² of the mean is 0; of the least-squares line 1 - SSres/SStot by hand */
    assert_true(fabs(f.r2) < 1e-12);
    assert_int_equal(xpb_fit_poly_degree(&f, x, y, 4, 1), XPB_OK);
    double slope = 1.4, icpt = 3 - 1.4 * 2.5, ss_res = 0, ss_tot = 0; /* by hand */
    for (int i = 0; i < 4; i++) {
        ss_res += pow(y[i] - (icpt + slope * x[i]), 2);
        ss_tot += pow(y[i] - 3, 2);
    }
    assert_true(fabs(f.coef[1] - slope) < 1e-12 && fabs(f.coef[0] - icpt) < 1e-12);
    assert_true(fabs(f.r2 - (1 - ss_res / ss_tot)) < 1e-12);
}

/* Batches up to 65536: a cubic's powers span 14 orders of magnitude; scaling keeps it exact. */
static void test_large_batches(void **state)
{
    (void)state;
    double x[8], y[8];
    for (int i = 0; i < 8; i++) {
        x[i] = pow(4, i + 1); /* 4 .. 65536 */
        y[i] = 1e9 + 3e4 * x[i] + 0.5 * x[i] * x[i] + 1e-6 * x[i] * x[i] * x[i];
    }
    xpb_fit f;
    assert_int_equal(xpb_fit_poly(&f, x, y, 8, 3), XPB_OK);
    assert_int_equal(f.degree, 3);
    for (int i = 0; i < 8; i++)
        assert_true(fabs(xpb_fit_eval(&f, x[i]) / y[i] - 1) < 1e-9);
}

static void test_few_points(void **state)
{
    (void)state;
    const double x[] = {8, 8, 8}, y[] = {10, 12, 14};
    xpb_fit f;
    assert_int_equal(xpb_fit_poly(&f, x, y, 1, 3), XPB_OK); /* one point: its value */
    assert_int_equal(f.degree, 0);
    assert_true(f.coef[0] == 10 && isnan(f.loo_rmse));
    assert_int_equal(xpb_fit_poly(&f, x, y, 3, 3), XPB_OK); /* one distinct x: the mean */
    assert_int_equal(f.degree, 0);
    assert_true(fabs(f.coef[0] - 12) < 1e-12 && isfinite(f.loo_rmse));
    const double x2[] = {1, 2, 3}, y2[] = {2, 4, 6};
    assert_int_equal(xpb_fit_poly(&f, x2, y2, 3, 3), XPB_OK); /* three points: at most a line */
    assert_int_equal(f.degree, 1);
    assert_true(isnan(f.loo_rmse_by_degree[2]) && isnan(f.loo_rmse_by_degree[3]));
    assert_int_equal(xpb_fit_poly_degree(&f, x, y, 3, 1), XPB_INVALID_ARGUMENT);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    const double x[] = {1, 2, NAN}, y[] = {1, 2, 3};
    xpb_fit f;
    assert_int_equal(xpb_fit_poly(&f, x, y, 0, 3), XPB_INVALID_ARGUMENT);
    assert_int_equal(xpb_fit_poly(&f, x, y, 3, 3), XPB_INVALID_ARGUMENT);
    assert_int_equal(xpb_fit_poly(&f, x, y, 2, -1), XPB_INVALID_ARGUMENT);
    assert_int_equal(xpb_fit_poly_degree(&f, x, y, 2, 4), XPB_INVALID_ARGUMENT);
}

static void test_largest_within(void **state)
{
    (void)state;
    const double x[] = {1, 2, 4, 8}, y[] = {110, 120, 140, 180}; /* 100 + 10 b */
    xpb_fit f;
    assert_int_equal(xpb_fit_poly(&f, x, y, 4, 3), XPB_OK);
    assert_int_equal(xpb_fit_largest_within(&f, 1000, 65536), 90);
    assert_int_equal(xpb_fit_largest_within(&f, 1000.5, 65536), 90);
    assert_int_equal(xpb_fit_largest_within(&f, 1010, 65536), 91);
    assert_int_equal(xpb_fit_largest_within(&f, 100, 65536), 0); /* batch 1 needs 110 */
    assert_int_equal(xpb_fit_largest_within(&f, 1e12, 65536), 65536);
}

/* Step time a + c b: throughput b / (a + c b) tends to 1/c and reaches 90% of its best in
 * [1, 64] at the smallest b with b / (a + c b) >= 0.9 * 64 / (a + 64 c). */
static void test_saturation(void **state)
{
    (void)state;
    double y[N_BATCHES];
    const double a = 0.010, c = 0.001; /* 10 ms fixed, 1 ms per sample */
    for (int i = 0; i < N_BATCHES; i++)
        y[i] = a + c * batches[i];
    xpb_fit f;
    assert_int_equal(xpb_fit_poly(&f, batches, y, N_BATCHES, 3), XPB_OK);
    xpb_saturation s;
    assert_int_equal(xpb_fit_saturation(&s, &f, 1, 64), XPB_OK);
    double best = 64 / (a + 64 * c);
    assert_true(fabs(s.best - best) < 1e-6 * best);
    long want = 1;
    while (want / (a + want * c) < 0.9 * best)
        want++;
    assert_int_equal(s.batch, want);
    double gain = (64 / (a + 64 * c)) / (32 / (a + 32 * c)) - 1;
    assert_true(fabs(s.last_gain - gain) < 1e-9);
    assert_int_equal(s.saturated, gain < 0.05);
    /* a fixed cost only: throughput doubles with the batch, never saturates */
    const double flat[N_BATCHES] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
    assert_int_equal(xpb_fit_poly(&f, batches, flat, N_BATCHES, 3), XPB_OK);
    assert_int_equal(xpb_fit_saturation(&s, &f, 1, 64), XPB_OK);
    assert_int_equal(s.batch, 58); /* 0.9 * 64 = 57.6 */
    assert_true(fabs(s.last_gain - 1) < 1e-9 && !s.saturated);
    assert_int_equal(xpb_fit_saturation(&s, &f, 0, 64), XPB_INVALID_ARGUMENT);
    assert_int_equal(xpb_fit_saturation(&s, &f, 8, 4), XPB_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_polynomials), cmocka_unit_test(test_noisy_line),
        cmocka_unit_test(test_loo_by_hand),       cmocka_unit_test(test_large_batches),
        cmocka_unit_test(test_few_points),        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_largest_within),    cmocka_unit_test(test_saturation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* cpu_onednn's vectorizable exp, sigmoid and tanh (plugins/backend_cpu_onednn/vecmath.h, used
 * by the LSTM cell and softmax cross-entropy kernels) against the C library over fp32's range:
 * within a few ulps everywhere, tanh accurate near 0 where 1 - 2 / (e^2x + 1) is not, the
 * clamped ends finite, and a NaN passed through (the run's divergence check needs it). The
 * header needs neither oneDNN nor the plugin; the test includes it from the source tree. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../plugins/backend_cpu_onednn/vecmath.h"

/* |got - want| / |want| (want != 0), as a double */
static double rel(float got, double want)
{
    return fabs((double)got - want) / fabs(want);
}

static void test_exp(void **state)
{
    (void)state;
    double worst = 0.0;
    for (double x = -87.0; x <= 88.0; x += 1.0 / 4096) {
        double r = rel(odn_fast_exp((float)x), exp((double)(float)x));
        worst = r > worst ? r : worst;
    }
    if (worst > 2e-7) /* measured 1.0e-7 */
        fail_msg("exp: worst relative error %.3g", worst);
    assert_true(odn_fast_exp(0.0f) == 1.0f);
    /* the ends are clamped: finite, never 0 or inf */
    assert_true(isfinite(odn_fast_exp(1000.0f)) && odn_fast_exp(1000.0f) > 1e38f);
    assert_true(odn_fast_exp(-1000.0f) > 0.0f && odn_fast_exp(-1000.0f) < 1e-37f);
    assert_true(isfinite(odn_fast_exp(INFINITY)));
    assert_true(isnan(odn_fast_exp(NAN)));
}

static void test_sigmoid(void **state)
{
    (void)state;
    double worst = 0.0;
    for (double x = -80.0; x <= 80.0; x += 1.0 / 1024) {
        float xf = (float)x;
        double want = 1.0 / (1.0 + exp(-(double)xf));
        double r = rel(odn_fast_sigmoid(xf), want);
        worst = r > worst ? r : worst;
    }
    if (worst > 2.5e-7) /* measured 1.4e-7 */
        fail_msg("sigmoid: worst relative error %.3g", worst);
    assert_true(odn_fast_sigmoid(0.0f) == 0.5f);
    assert_true(odn_fast_sigmoid(INFINITY) == 1.0f);
    assert_true(odn_fast_sigmoid(-INFINITY) >= 0.0f && odn_fast_sigmoid(-INFINITY) < 1e-37f);
    assert_true(isnan(odn_fast_sigmoid(NAN)));
}

static void test_tanh(void **state)
{
    (void)state;
    double worst = 0.0, worst_at = 0.0;
    for (double x = -12.0; x <= 12.0; x += 1.0 / 2048) {
        float xf = (float)x;
        if (xf == 0.0f)
            continue;
        double r = rel(odn_fast_tanh(xf), tanh((double)xf));
        if (r > worst) {
            worst = r;
            worst_at = x;
        }
    }
    /* near 0, by powers of two, and both sides of the 0.3 switch */
    const float near[] = {1e-30f, 1e-12f, 1e-6f, 3e-4f, 0.01f, 0.2999999f, 0.3f, 0.3000001f};
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++)
        for (int sign = -1; sign <= 1; sign += 2) {
            float xf = (float)sign * near[i];
            double r = rel(odn_fast_tanh(xf), tanh((double)xf));
            if (r > worst) {
                worst = r;
                worst_at = xf;
            }
        }
    if (worst > 3e-7) /* measured 2.0e-7 */
        fail_msg("tanh: worst relative error %.3g at %.9g", worst, worst_at);
    assert_true(odn_fast_tanh(0.0f) == 0.0f);
    assert_true(odn_fast_tanh(INFINITY) == 1.0f && odn_fast_tanh(-INFINITY) == -1.0f);
    assert_true(odn_fast_tanh(40.0f) == 1.0f && odn_fast_tanh(-40.0f) == -1.0f);
    assert_true(isnan(odn_fast_tanh(NAN)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp),
        cmocka_unit_test(test_sigmoid),
        cmocka_unit_test(test_tanh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Reference kernels: batch norm (train, infer, backward) and instance norm (forward,
 * backward) against naive double-precision computations and finite differences. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gradcheck.h"

/* Naive per-channel statistics of x[N,C,S] in double. */
static void naive_stats(const float *x, int64_t n, int64_t c, int64_t s, int64_t ch, double *mean,
                        double *var)
{
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < s; j++)
            sum += x[(i * c + ch) * s + j];
    *mean = sum / (double)(n * s);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < s; j++) {
            double d = x[(i * c + ch) * s + j] - *mean;
            sq += d * d;
        }
    *var = sq / (double)(n * s);
}

/* BATCHNORM_TRAIN on x of `ndim` dims (N, C[, H, W]): y, saved stats and the running-stat
 * update (unbiased variance) against a naive computation. */
static void check_bn_train_forward(uint32_t ndim, const int64_t *dims)
{
    xpb_op_attrs at = {.eps = 1e-5f, .momentum = 0.1f};
    int64_t n = dims[0], c = dims[1], s = ndim == 4 ? dims[2] * dims[3] : 1;
    gc_op g;
    gc_op_init(&g, XPB_OP_BATCHNORM_TRAIN, &at);
    float *x = gc_in(&g, ndim, dims);
    float *gamma = gc_in(&g, 1, (int64_t[]){c});
    float *beta = gc_in(&g, 1, (int64_t[]){c});
    float *rm = gc_in(&g, 1, (int64_t[]){c});
    float *rv = gc_in(&g, 1, (int64_t[]){c});
    float *y = gc_out(&g, ndim, dims);
    float *ws_mean = gc_out(&g, 1, (int64_t[]){c});
    float *ws_var = gc_out(&g, 1, (int64_t[]){c});
    int64_t numel = gc_in_numel(&g, 0);
    gc_fill(x, numel, 1, -2.0, 3.0);
    gc_fill(gamma, c, 2, 0.5, 1.5);
    gc_fill(beta, c, 3, -1.0, 1.0);
    gc_fill(rm, c, 4, -0.5, 0.5);
    gc_fill(rv, c, 5, 0.5, 2.0);
    float rm0[16], rv0[16];
    assert_true(c <= 16);
    memcpy(rm0, rm, (size_t)c * sizeof *rm);
    memcpy(rv0, rv, (size_t)c * sizeof *rv);

    assert_int_equal(gc_run(&g), XPB_OK);

    double *want_y = calloc((size_t)numel, sizeof *want_y);
    double want_mean[16] = {0}, want_var[16] = {0}, want_rm[16] = {0}, want_rv[16] = {0};
    assert_non_null(want_y);
    double count = (double)(n * s);
    for (int64_t ch = 0; ch < c; ch++) {
        double mean, var;
        naive_stats(x, n, c, s, ch, &mean, &var);
        want_mean[ch] = mean;
        want_var[ch] = var;
        want_rm[ch] = 0.9 * rm0[ch] + 0.1 * mean;
        want_rv[ch] = 0.9 * rv0[ch] + 0.1 * var * count / (count - 1);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < s; j++) {
                int64_t k = (i * c + ch) * s + j;
                want_y[k] = (x[k] - mean) / sqrt(var + 1e-5) * gamma[ch] + beta[ch];
            }
    }
    assert_true(gc_allclose(y, want_y, numel, 1e-5, 1e-5, "bn train y"));
    assert_true(gc_allclose(ws_mean, want_mean, c, 1e-6, 1e-6, "bn train mean"));
    assert_true(gc_allclose(ws_var, want_var, c, 1e-6, 1e-6, "bn train biased var"));
    assert_true(gc_allclose(rm, want_rm, c, 1e-6, 1e-6, "bn running mean"));
    assert_true(gc_allclose(rv, want_rv, c, 1e-6, 1e-6, "bn running var (unbiased)"));
    free(want_y);
    gc_op_free(&g);
}

static void test_bn_train_forward_4d(void **state)
{
    (void)state;
    check_bn_train_forward(4, (int64_t[]){3, 4, 5, 6});
}

static void test_bn_train_forward_2d(void **state)
{
    (void)state;
    check_bn_train_forward(2, (int64_t[]){7, 5});
}

/* A hand-sized case: one channel holding 1, 2, 3, 4 (mean 2.5, biased var 1.25, unbiased
 * 5/3), running stats from 0 and 1 with momentum 0.5. */
static void test_bn_train_hand(void **state)
{
    (void)state;
    xpb_op_attrs at = {.eps = 0.0f, .momentum = 0.5f};
    gc_op g;
    gc_op_init(&g, XPB_OP_BATCHNORM_TRAIN, &at);
    float *x = gc_in(&g, 4, (int64_t[]){2, 1, 1, 2});
    float *gamma = gc_in(&g, 1, (int64_t[]){1});
    float *beta = gc_in(&g, 1, (int64_t[]){1});
    float *rm = gc_in(&g, 1, (int64_t[]){1});
    float *rv = gc_in(&g, 1, (int64_t[]){1});
    float *y = gc_out(&g, 4, (int64_t[]){2, 1, 1, 2});
    gc_out(&g, 1, (int64_t[]){1});
    gc_out(&g, 1, (int64_t[]){1});
    for (int i = 0; i < 4; i++)
        x[i] = (float)(i + 1);
    gamma[0] = 2.0f;
    beta[0] = 1.0f;
    rm[0] = 0.0f;
    rv[0] = 1.0f;
    assert_int_equal(gc_run(&g), XPB_OK);
    double sd = sqrt(1.25);
    double want_y[4] = {-1.5 / sd * 2 + 1, -0.5 / sd * 2 + 1, 0.5 / sd * 2 + 1, 1.5 / sd * 2 + 1};
    assert_true(gc_allclose(y, want_y, 4, 1e-6, 1e-6, "bn hand y"));
    assert_float_equal(rm[0], 1.25f, 1e-6f);
    assert_float_equal(rv[0], 0.5f + 0.5f * (5.0f / 3.0f), 1e-6f);
    gc_op_free(&g);
}

static void test_bn_train_single_value_rejected(void **state)
{
    (void)state;
    xpb_op_attrs at = {.eps = 1e-5f, .momentum = 0.1f};
    gc_op g;
    gc_op_init(&g, XPB_OP_BATCHNORM_TRAIN, &at);
    gc_in(&g, 4, (int64_t[]){1, 2, 1, 1});
    for (int i = 0; i < 4; i++)
        gc_in(&g, 1, (int64_t[]){2});
    gc_out(&g, 4, (int64_t[]){1, 2, 1, 1});
    gc_out(&g, 1, (int64_t[]){2});
    gc_out(&g, 1, (int64_t[]){2});
    assert_int_not_equal(gc_run(&g), XPB_OK);
    assert_true(strlen(g.err) > 0);
    gc_op_free(&g);
}

static void test_bn_infer(void **state)
{
    (void)state;
    xpb_op_attrs at = {.eps = 1e-3f};
    int64_t dims[4] = {2, 3, 4, 4};
    gc_op g;
    gc_op_init(&g, XPB_OP_BATCHNORM_INFER, &at);
    float *x = gc_in(&g, 4, dims);
    float *gamma = gc_in(&g, 1, (int64_t[]){3});
    float *beta = gc_in(&g, 1, (int64_t[]){3});
    float *rm = gc_in(&g, 1, (int64_t[]){3});
    float *rv = gc_in(&g, 1, (int64_t[]){3});
    float *y = gc_out(&g, 4, dims);
    int64_t numel = gc_in_numel(&g, 0);
    gc_fill(x, numel, 11, -2.0, 2.0);
    gc_fill(gamma, 3, 12, 0.5, 1.5);
    gc_fill(beta, 3, 13, -1.0, 1.0);
    gc_fill(rm, 3, 14, -0.5, 0.5);
    gc_fill(rv, 3, 15, 0.5, 2.0);
    assert_int_equal(gc_run(&g), XPB_OK);
    double want[96];
    for (int64_t k = 0; k < numel; k++) {
        int64_t ch = (k / 16) % 3;
        want[k] = (x[k] - rm[ch]) / sqrt((double)rv[ch] + 1e-3) * gamma[ch] + beta[ch];
    }
    assert_true(gc_allclose(y, want, numel, 1e-5, 1e-5, "bn infer y"));
    gc_op_free(&g);
}

/* BATCHNORM_BWD with dy = r against finite differences of BATCHNORM_TRAIN's y with respect to
 * x, gamma and beta. */
static void check_bn_bwd(uint32_t ndim, const int64_t *dims)
{
    xpb_op_attrs at = {.eps = 1e-5f, .momentum = 0.1f};
    int64_t c = dims[1];
    gc_op f, b;
    gc_op_init(&f, XPB_OP_BATCHNORM_TRAIN, &at);
    float *x = gc_in(&f, ndim, dims);
    float *gamma = gc_in(&f, 1, (int64_t[]){c});
    float *beta = gc_in(&f, 1, (int64_t[]){c});
    float *rm = gc_in(&f, 1, (int64_t[]){c});
    float *rv = gc_in(&f, 1, (int64_t[]){c});
    gc_out(&f, ndim, dims);
    float *ws_mean = gc_out(&f, 1, (int64_t[]){c});
    float *ws_var = gc_out(&f, 1, (int64_t[]){c});
    int64_t numel = gc_in_numel(&f, 0);
    gc_fill(x, numel, 21, -2.0, 2.0);
    gc_fill(gamma, c, 22, 0.5, 1.5);
    gc_fill(beta, c, 23, -1.0, 1.0);
    gc_fill(rv, c, 24, 1.0, 1.0);
    (void)rm;
    assert_int_equal(gc_run(&f), XPB_OK);

    gc_op_init(&b, XPB_OP_BATCHNORM_BWD, &at);
    float *dy = gc_in(&b, ndim, dims);
    memcpy(gc_in(&b, ndim, dims), x, (size_t)numel * sizeof *x);
    memcpy(gc_in(&b, 1, (int64_t[]){c}), gamma, (size_t)c * sizeof *gamma);
    memcpy(gc_in(&b, 1, (int64_t[]){c}), ws_mean, (size_t)c * sizeof *ws_mean);
    memcpy(gc_in(&b, 1, (int64_t[]){c}), ws_var, (size_t)c * sizeof *ws_var);
    float *dx = gc_out(&b, ndim, dims);
    float *dgamma = gc_out(&b, 1, (int64_t[]){c});
    float *dbeta = gc_out(&b, 1, (int64_t[]){c});
    gc_fill(dy, numel, 25, -1.0, 1.0);
    assert_int_equal(gc_run(&b), XPB_OK);

    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 2e-3, 2e-3, "bn dx"));
    assert_true(gc_gradcheck(&f, 0, dy, 1, dgamma, 1e-2, 2e-3, 2e-3, "bn dgamma"));
    assert_true(gc_gradcheck(&f, 0, dy, 2, dbeta, 1e-2, 2e-3, 2e-3, "bn dbeta"));
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_bn_bwd_4d(void **state)
{
    (void)state;
    check_bn_bwd(4, (int64_t[]){2, 3, 3, 4});
}

static void test_bn_bwd_2d(void **state)
{
    (void)state;
    check_bn_bwd(2, (int64_t[]){6, 4});
}

static void test_instancenorm_forward(void **state)
{
    (void)state;
    xpb_op_attrs at = {.eps = 1e-5f};
    int64_t dims[4] = {2, 3, 4, 5};
    gc_op g;
    gc_op_init(&g, XPB_OP_INSTANCENORM, &at);
    float *x = gc_in(&g, 4, dims);
    float *y = gc_out(&g, 4, dims);
    float *ws_mean = gc_out(&g, 2, (int64_t[]){2, 3});
    float *ws_var = gc_out(&g, 2, (int64_t[]){2, 3});
    gc_fill(x, 120, 31, -3.0, 5.0);
    assert_int_equal(gc_run(&g), XPB_OK);
    double want_y[120], want_mean[6], want_var[6];
    for (int64_t p = 0; p < 6; p++) {
        double mean, var;
        naive_stats(x + p * 20, 1, 1, 20, 0, &mean, &var);
        want_mean[p] = mean;
        want_var[p] = var;
        for (int64_t j = 0; j < 20; j++)
            want_y[p * 20 + j] = (x[p * 20 + j] - mean) / sqrt(var + 1e-5);
    }
    assert_true(gc_allclose(y, want_y, 120, 1e-5, 1e-5, "instancenorm y"));
    assert_true(gc_allclose(ws_mean, want_mean, 6, 1e-6, 1e-6, "instancenorm mean"));
    assert_true(gc_allclose(ws_var, want_var, 6, 1e-6, 1e-6, "instancenorm var"));
    gc_op_free(&g);
}

static void test_instancenorm_bwd(void **state)
{
    (void)state;
    xpb_op_attrs at = {.eps = 1e-5f};
    int64_t dims[4] = {2, 2, 3, 4};
    gc_op f, b;
    gc_op_init(&f, XPB_OP_INSTANCENORM, &at);
    float *x = gc_in(&f, 4, dims);
    gc_out(&f, 4, dims);
    float *ws_mean = gc_out(&f, 2, (int64_t[]){2, 2});
    float *ws_var = gc_out(&f, 2, (int64_t[]){2, 2});
    gc_fill(x, 48, 41, -2.0, 2.0);
    assert_int_equal(gc_run(&f), XPB_OK);

    gc_op_init(&b, XPB_OP_INSTANCENORM_BWD, &at);
    float *dy = gc_in(&b, 4, dims);
    memcpy(gc_in(&b, 4, dims), x, 48 * sizeof *x);
    memcpy(gc_in(&b, 2, (int64_t[]){2, 2}), ws_mean, 4 * sizeof *ws_mean);
    memcpy(gc_in(&b, 2, (int64_t[]){2, 2}), ws_var, 4 * sizeof *ws_var);
    float *dx = gc_out(&b, 4, dims);
    gc_fill(dy, 48, 42, -1.0, 1.0);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 2e-3, 2e-3, "instancenorm dx"));
    gc_op_free(&f);
    gc_op_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_train_forward_4d),
        cmocka_unit_test(test_bn_train_forward_2d),
        cmocka_unit_test(test_bn_train_hand),
        cmocka_unit_test(test_bn_train_single_value_rejected),
        cmocka_unit_test(test_bn_infer),
        cmocka_unit_test(test_bn_bwd_4d),
        cmocka_unit_test(test_bn_bwd_2d),
        cmocka_unit_test(test_instancenorm_forward),
        cmocka_unit_test(test_instancenorm_bwd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

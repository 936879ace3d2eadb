/* Reference kernels of op set 3: LAYER_NORM over the last axis (odd sizes, 1-D to 4-D, the
 * workspace's mean and 1 / sqrt(var + eps)) against a direct computation in double, its
 * backward (dx, dgamma, dbeta, unwanted outputs) against finite differences, and GELU in both
 * modes (exact erf and PyTorch's tanh approximation) with its backward. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

static void check_layer_norm(uint32_t nd, const int64_t *xd, float eps, uint64_t seed)
{
    int64_t d = xd[nd - 1], sd[4] = {1, 1, 1, 1};
    uint32_t ns = nd > 1 ? nd - 1 : 1;
    for (uint32_t k = 0; k + 1 < nd; k++)
        sd[k] = xd[k];
    char what[96];
    snprintf(what, sizeof what, "layer norm %uD, D %lld", nd, (long long)d);
    gc_op f, b;
    gc_op_init(&f, XPB_OP_LAYER_NORM, &(xpb_op_attrs){.eps = eps});
    float *x = gc_in(&f, nd, xd), *gamma = gc_in(&f, 1, &d), *beta = gc_in(&f, 1, &d);
    float *y = gc_out(&f, nd, xd), *mean = gc_out(&f, ns, sd), *rstd = gc_out(&f, ns, sd);
    int64_t n = gc_in_numel(&f, 0), rows = n / d;
    gc_fill(x, n, seed, -2, 3);
    gc_fill(gamma, d, seed + 1, 0.5, 1.5);
    gc_fill(beta, d, seed + 2, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    double *want = malloc(sizeof(double) * (size_t)n), *wm = malloc(sizeof(double) * (size_t)rows);
    double *wr = malloc(sizeof(double) * (size_t)rows);
    assert_true(want && wm && wr);
    for (int64_t r = 0; r < rows; r++) {
        double s = 0, q = 0;
        for (int64_t j = 0; j < d; j++)
            s += x[r * d + j];
        wm[r] = s / (double)d;
        for (int64_t j = 0; j < d; j++)
            q += (x[r * d + j] - wm[r]) * (x[r * d + j] - wm[r]);
        wr[r] = 1.0 / sqrt(q / (double)d + eps); /* biased variance */
        for (int64_t j = 0; j < d; j++)
            want[r * d + j] = (x[r * d + j] - wm[r]) * wr[r] * gamma[j] + beta[j];
    }
    assert_true(gc_allclose(y, want, n, 1e-6, 1e-6, what));
    assert_true(gc_allclose(mean, wm, rows, 1e-7, 1e-6, "layer norm ws_mean"));
    assert_true(gc_allclose(rstd, wr, rows, 1e-7, 1e-6, "layer norm ws_rstd"));
    free(want);
    free(wm);
    free(wr);

    gc_op_init(&b, XPB_OP_LAYER_NORM_BWD, &(xpb_op_attrs){.eps = eps});
    float *dy = gc_in(&b, nd, xd);
    memcpy(gc_in(&b, nd, xd), x, sizeof(float) * (size_t)n);
    memcpy(gc_in(&b, 1, &d), gamma, sizeof(float) * (size_t)d);
    memcpy(gc_in(&b, ns, sd), mean, sizeof(float) * (size_t)rows);
    memcpy(gc_in(&b, ns, sd), rstd, sizeof(float) * (size_t)rows);
    float *dx = gc_out(&b, nd, xd), *dg = gc_out(&b, 1, &d), *dbt = gc_out(&b, 1, &d);
    gc_fill(dy, n, seed + 3, -1, 1);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 2e-4, 1e-3, "layer norm dx"));
    assert_true(gc_gradcheck(&f, 0, dy, 1, dg, 0.25, 1e-4, 1e-4, "layer norm dgamma"));
    assert_true(gc_gradcheck(&f, 0, dy, 2, dbt, 0.25, 1e-4, 1e-4, "layer norm dbeta"));
    /* dgamma and dbeta not wanted: dx unchanged; dx not wanted: dgamma unchanged */
    float *keep = malloc(sizeof(float) * (size_t)n);
    assert_non_null(keep);
    memcpy(keep, dx, sizeof(float) * (size_t)n);
    float keep_g[64];
    assert_true(d <= 64);
    memcpy(keep_g, dg, sizeof(float) * (size_t)d);
    gc_unwanted(&b, 1);
    gc_unwanted(&b, 2);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_memory_equal(keep, b.out[0], sizeof(float) * (size_t)n);
    memcpy(keep, dy, sizeof(float) * (size_t)n);
    gc_op_free(&b);
    gc_op_init(&b, XPB_OP_LAYER_NORM_BWD, &(xpb_op_attrs){.eps = eps});
    memcpy(gc_in(&b, nd, xd), keep, sizeof(float) * (size_t)n);
    memcpy(gc_in(&b, nd, xd), x, sizeof(float) * (size_t)n);
    memcpy(gc_in(&b, 1, &d), gamma, sizeof(float) * (size_t)d);
    memcpy(gc_in(&b, ns, sd), mean, sizeof(float) * (size_t)rows);
    memcpy(gc_in(&b, ns, sd), rstd, sizeof(float) * (size_t)rows);
    gc_out(&b, nd, xd), gc_out(&b, 1, &d), gc_out(&b, 1, &d);
    gc_unwanted(&b, 0);
    if (gc_run(&b) != XPB_OK)
        fail_msg("%s", b.err);
    assert_memory_equal(keep_g, b.out[1], sizeof(float) * (size_t)d);
    free(keep);
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_layer_norm(void **state)
{
    (void)state;
    check_layer_norm(3, (const int64_t[]){2, 3, 7}, 1e-5f, 1);
    check_layer_norm(2, (const int64_t[]){5, 16}, 1e-5f, 2);
    check_layer_norm(1, (const int64_t[]){9}, 1e-3f, 3);
    check_layer_norm(4, (const int64_t[]){2, 1, 3, 5}, 0.0f, 4);
    check_layer_norm(2, (const int64_t[]){3, 1}, 1e-5f, 5); /* D = 1: y = beta */
}

/* The workspace outputs may be unwanted; y is the same. */
static void test_layer_norm_without_ws(void **state)
{
    (void)state;
    int64_t xd[2] = {4, 6}, d = 6, sd = 4;
    gc_op f;
    gc_op_init(&f, XPB_OP_LAYER_NORM, &(xpb_op_attrs){.eps = 1e-5f});
    gc_fill(gc_in(&f, 2, xd), 24, 1, -1, 1);
    gc_fill(gc_in(&f, 1, &d), 6, 2, 0.5, 1.5);
    gc_fill(gc_in(&f, 1, &d), 6, 3, -1, 1);
    float *y = gc_out(&f, 2, xd);
    gc_out(&f, 1, &sd), gc_out(&f, 1, &sd);
    assert_int_equal(gc_run(&f), XPB_OK);
    float keep[24];
    memcpy(keep, y, sizeof keep);
    gc_unwanted(&f, 1);
    gc_unwanted(&f, 2);
    memset(y, 0, sizeof keep);
    assert_int_equal(gc_run(&f), XPB_OK);
    assert_memory_equal(keep, y, sizeof keep);
    gc_op_free(&f);
}

/* ---- GELU ---- */

static double naive_gelu(double x, int tanh_approx)
{
    if (tanh_approx)
        return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

static void test_gelu(void **state)
{
    (void)state;
    for (uint32_t mode = 0; mode < 2; mode++) {
        int64_t d[2] = {7, 11};
        gc_op f, b;
        gc_op_init(&f, XPB_OP_GELU, NULL);
        f.op.approximate = mode;
        float *x = gc_in(&f, 2, d), *y = gc_out(&f, 2, d);
        gc_fill(x, 77, 10 + mode, -5, 5);
        x[0] = 0.0f, x[1] = 1.0f, x[2] = -1.0f, x[3] = 8.0f, x[4] = -8.0f;
        assert_int_equal(gc_run(&f), XPB_OK);
        double want[77];
        for (int i = 0; i < 77; i++)
            want[i] = naive_gelu(x[i], (int)mode);
        assert_true(gc_allclose(y, want, 77, 1e-7, 1e-6, mode ? "gelu tanh" : "gelu erf"));
        /* PyTorch 1.13: F.gelu(1.0) and F.gelu(1.0, approximate='tanh') */
        assert_float_equal(y[1], mode ? 0.841191990607f : 0.841344746069f, 1e-7f);

        gc_op_init(&b, XPB_OP_GELU_BWD, NULL);
        b.op.approximate = mode;
        float *dy = gc_in(&b, 2, d);
        memcpy(gc_in(&b, 2, d), x, sizeof(float) * 77);
        float *dx = gc_out(&b, 2, d);
        gc_fill(dy, 77, 20 + mode, -1, 1);
        assert_int_equal(gc_run(&b), XPB_OK);
        assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 2e-4, 1e-3,
                                 mode ? "gelu tanh dx" : "gelu erf dx"));
        gc_op_free(&f);
        gc_op_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_norm),
        cmocka_unit_test(test_layer_norm_without_ws),
        cmocka_unit_test(test_gelu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Reference kernels: softmax cross-entropy, MSE and L1 losses and their backward ops. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gradcheck.h"

#define N 5
#define K 7

/* SOFTMAX_XENT(logits[n,k], labels[n]) -> loss[1], prob[n,k]; pointers into *g. */
static void xent_op(gc_op *g, int64_t n, int64_t k, float **z, int32_t **labels, float **loss,
                    float **prob)
{
    gc_op_init(g, XPB_OP_SOFTMAX_XENT, NULL);
    *z = gc_in(g, 2, (int64_t[]){n, k});
    *labels = gc_in_i32(g, 1, (int64_t[]){n});
    *loss = gc_out(g, 1, (int64_t[]){1});
    *prob = gc_out(g, 2, (int64_t[]){n, k});
}

static void test_xent_forward(void **state)
{
    (void)state;
    gc_op g;
    float *z, *loss, *prob;
    int32_t *labels;
    xent_op(&g, N, K, &z, &labels, &loss, &prob);
    gc_fill(z, N * K, 1, -4.0, 4.0);
    for (int i = 0; i < N; i++)
        labels[i] = (i * 3) % K;
    assert_int_equal(gc_run(&g), XPB_OK);
    double want_prob[N * K], want_loss = 0;
    for (int i = 0; i < N; i++) {
        double sum = 0;
        for (int j = 0; j < K; j++)
            sum += exp((double)z[i * K + j]);
        for (int j = 0; j < K; j++)
            want_prob[i * K + j] = exp((double)z[i * K + j]) / sum;
        want_loss += -log(want_prob[i * K + labels[i]]);
    }
    want_loss /= N;
    assert_true(gc_allclose(loss, &want_loss, 1, 1e-6, 1e-6, "xent loss"));
    assert_true(gc_allclose(prob, want_prob, N * K, 1e-7, 1e-6, "xent prob"));
    gc_op_free(&g);
}

/* Logits far beyond exp's range in float (and in double) give finite, exact answers. */
static void test_xent_huge_logits(void **state)
{
    (void)state;
    gc_op g;
    float *z, *loss, *prob;
    int32_t *labels;
    xent_op(&g, 3, 3, &z, &labels, &loss, &prob);
    const float v[9] = {1000.0f, 999.0f, 0.0f, 1e30f, -1e30f, 0.0f, -1e30f, -1e30f, -1e30f};
    memcpy(z, v, sizeof v);
    labels[0] = 1; /* -log softmax = log(1 + e + e^-999) */
    labels[1] = 0; /* 0 */
    labels[2] = 2; /* all equal: log 3 */
    assert_int_equal(gc_run(&g), XPB_OK);
    double want_loss = (log(1.0 + exp(1.0)) + 0.0 + log(3.0)) / 3.0;
    assert_true(gc_allclose(loss, &want_loss, 1, 1e-6, 1e-6, "xent huge loss"));
    double want_prob[9] = {1.0 / (1.0 + exp(-1.0)),
                           exp(-1.0) / (1.0 + exp(-1.0)),
                           0.0,
                           1.0,
                           0.0,
                           0.0,
                           1.0 / 3,
                           1.0 / 3,
                           1.0 / 3};
    assert_true(gc_allclose(prob, want_prob, 9, 1e-7, 1e-6, "xent huge prob"));
    for (int i = 0; i < 9; i++)
        assert_true(isfinite(prob[i]));
    gc_op_free(&g);
}

static void test_xent_bad_label(void **state)
{
    (void)state;
    gc_op g;
    float *z, *loss, *prob;
    int32_t *labels;
    xent_op(&g, 4, 3, &z, &labels, &loss, &prob);
    labels[2] = 7;
    assert_int_equal(gc_run(&g), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(g.err, "test")); /* the layer */
    assert_non_null(strstr(g.err, "sample 2"));
    assert_non_null(strstr(g.err, "label 7"));
    labels[2] = 0;
    labels[3] = -1;
    assert_int_equal(gc_run(&g), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(g.err, "sample 3"));
    assert_non_null(strstr(g.err, "label -1"));
    labels[3] = 2; /* the last class is valid */
    assert_int_equal(gc_run(&g), XPB_OK);
    gc_op_free(&g);

    gc_op_init(&g, XPB_OP_SOFTMAX_XENT_BWD, &(xpb_op_attrs){.scale = 1.0f});
    gc_in(&g, 2, (int64_t[]){2, 3});
    int32_t *lb = gc_in_i32(&g, 1, (int64_t[]){2});
    gc_out(&g, 2, (int64_t[]){2, 3});
    lb[1] = 3;
    assert_int_equal(gc_run(&g), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(g.err, "sample 1"));
    gc_op_free(&g);
}

static void test_xent_bwd(void **state)
{
    (void)state;
    float scale = 0.7f;
    gc_op f, b;
    float *z, *loss, *prob;
    int32_t *labels;
    xent_op(&f, N, K, &z, &labels, &loss, &prob);
    gc_fill(z, N * K, 2, -3.0, 3.0);
    for (int i = 0; i < N; i++)
        labels[i] = (i * 5 + 1) % K;
    assert_int_equal(gc_run(&f), XPB_OK);

    gc_op_init(&b, XPB_OP_SOFTMAX_XENT_BWD, &(xpb_op_attrs){.scale = scale});
    memcpy(gc_in(&b, 2, (int64_t[]){N, K}), prob, N * K * sizeof *prob);
    memcpy(gc_in_i32(&b, 1, (int64_t[]){N}), labels, N * sizeof *labels);
    float *dz = gc_out(&b, 2, (int64_t[]){N, K});
    assert_int_equal(gc_run(&b), XPB_OK);
    /* Exact form: scale * (prob - onehot) / N. */
    double want[N * K];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < K; j++)
            want[i * K + j] = scale * ((double)prob[i * K + j] - (j == labels[i])) / N;
    assert_true(gc_allclose(dz, want, N * K, 1e-7, 1e-6, "xent dlogits exact"));
    assert_true(gc_gradcheck(&f, 0, &scale, 0, dz, 1e-2, 1e-4, 1e-3, "xent dlogits"));
    gc_op_free(&f);
    gc_op_free(&b);
}

/* MSE_LOSS or L1_LOSS (kind) and its backward (bwd_kind) on x, t of 24 elements. */
static void check_regression_loss(uint32_t kind, uint32_t bwd_kind, int l1)
{
    int64_t dims[3] = {2, 3, 4};
    float scale = 2.5f;
    gc_op f, b;
    gc_op_init(&f, kind, NULL);
    float *x = gc_in(&f, 3, dims);
    float *t = gc_in(&f, 3, dims);
    float *loss = gc_out(&f, 1, (int64_t[]){1});
    gc_fill(x, 24, 3, -2.0, 2.0);
    gc_fill(t, 24, 4, -2.0, 2.0);
    for (int i = 0; i < 24; i++) /* keep |x - t| >= 0.1: no kink of |.| inside x +- h */
        if (fabsf(x[i] - t[i]) < 0.1f)
            x[i] = t[i] + 0.15f;
    assert_int_equal(gc_run(&f), XPB_OK);
    double want = 0;
    for (int i = 0; i < 24; i++) {
        double d = (double)x[i] - t[i];
        want += l1 ? fabs(d) : d * d;
    }
    want /= 24;
    assert_true(gc_allclose(loss, &want, 1, 1e-7, 1e-6, l1 ? "l1 loss" : "mse loss"));

    gc_op_init(&b, bwd_kind, &(xpb_op_attrs){.scale = scale});
    memcpy(gc_in(&b, 3, dims), x, sizeof(float) * 24);
    memcpy(gc_in(&b, 3, dims), t, sizeof(float) * 24);
    float *dx = gc_out(&b, 3, dims);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, &scale, 0, dx, 5e-2, 1e-4, 1e-3, l1 ? "l1 dx" : "mse dx"));
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_mse(void **state)
{
    (void)state;
    check_regression_loss(XPB_OP_MSE_LOSS, XPB_OP_MSE_LOSS_BWD, 0);
}

static void test_l1(void **state)
{
    (void)state;
    check_regression_loss(XPB_OP_L1_LOSS, XPB_OP_L1_LOSS_BWD, 1);
}

/* Hand values: sign(0) = 0 in L1's backward; MSE's factor 2 and the mean. */
static void test_loss_bwd_hand(void **state)
{
    (void)state;
    gc_op b;
    gc_op_init(&b, XPB_OP_L1_LOSS_BWD, &(xpb_op_attrs){.scale = 4.0f});
    float *x = gc_in(&b, 1, (int64_t[]){4});
    float *t = gc_in(&b, 1, (int64_t[]){4});
    float *dx = gc_out(&b, 1, (int64_t[]){4});
    const float xv[4] = {1.0f, -1.0f, 0.5f, 3.0f}, tv[4] = {0.0f, 0.0f, 0.5f, 3.5f};
    memcpy(x, xv, sizeof xv);
    memcpy(t, tv, sizeof tv);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_float_equal(dx[0], 1.0f, 0.0f);
    assert_float_equal(dx[1], -1.0f, 0.0f);
    assert_float_equal(dx[2], 0.0f, 0.0f);
    assert_float_equal(dx[3], -1.0f, 0.0f);
    gc_op_free(&b);

    gc_op_init(&b, XPB_OP_MSE_LOSS_BWD, &(xpb_op_attrs){.scale = 1.0f});
    x = gc_in(&b, 1, (int64_t[]){2});
    t = gc_in(&b, 1, (int64_t[]){2});
    dx = gc_out(&b, 1, (int64_t[]){2});
    x[0] = 3.0f, t[0] = 1.0f, x[1] = 0.0f, t[1] = 0.5f;
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_float_equal(dx[0], 2.0f, 1e-7f); /* 2 * 2 / 2 */
    assert_float_equal(dx[1], -0.5f, 1e-7f);
    gc_op_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xent_forward),
        cmocka_unit_test(test_xent_huge_logits),
        cmocka_unit_test(test_xent_bad_label),
        cmocka_unit_test(test_xent_bwd),
        cmocka_unit_test(test_mse),
        cmocka_unit_test(test_l1),
        cmocka_unit_test(test_loss_bwd_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

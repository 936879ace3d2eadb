/* Reference kernels: LINEAR forward against hand-computed values and a direct loop, its
 * backward ops against finite differences, and the gradient checker itself (it must reject a
 * wrong gradient). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* x = [1 2 3; 4 5 6], w = [1 0 -1; 2 1 0], b = [0.5, -1]:
 * y = [1-3+0.5, 2+2-1; 4-6+0.5, 8+5-1] = [-1.5 3; -1.5 12]. */
static void test_linear_hand_computed(void **state)
{
    (void)state;
    gc_op f;
    gc_op_init(&f, XPB_OP_LINEAR, NULL);
    float *x = gc_in(&f, 2, (int64_t[]){2, 3});
    float *w = gc_in(&f, 2, (int64_t[]){2, 3});
    float *b = gc_in(&f, 1, (int64_t[]){2});
    float *y = gc_out(&f, 2, (int64_t[]){2, 2});
    const float xv[6] = {1, 2, 3, 4, 5, 6}, wv[6] = {1, 0, -1, 2, 1, 0};
    memcpy(x, xv, sizeof xv);
    memcpy(w, wv, sizeof wv);
    b[0] = 0.5f;
    b[1] = -1.0f;
    assert_int_equal(gc_run(&f), XPB_OK);
    const double want[4] = {-1.5, 3, -1.5, 12};
    assert_true(gc_allclose(y, want, 4, 0, 0, "linear hand-computed"));
    gc_op_free(&f);
}

static void run_linear_case(int64_t n, int64_t in_f, int64_t out_f, int bias, uint64_t seed)
{
    int64_t xd[2] = {n, in_f}, wd[2] = {out_f, in_f}, bd_[1] = {out_f}, yd[2] = {n, out_f};
    gc_op f, bd, bw;
    gc_op_init(&f, XPB_OP_LINEAR, NULL);
    float *x = gc_in(&f, 2, xd), *w = gc_in(&f, 2, wd);
    float *b = bias ? gc_in(&f, 1, bd_) : NULL;
    float *y = gc_out(&f, 2, yd);
    gc_fill(x, n * in_f, seed, -1, 1);
    gc_fill(w, out_f * in_f, seed + 1, -1, 1);
    if (b)
        gc_fill(b, out_f, seed + 2, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);

    double *want = malloc(sizeof(double) * (size_t)(n * out_f));
    assert_non_null(want);
    for (int64_t i = 0; i < n; i++)
        for (int64_t o = 0; o < out_f; o++) {
            double s = b ? b[o] : 0.0;
            for (int64_t k = 0; k < in_f; k++)
                s += (double)x[i * in_f + k] * w[o * in_f + k];
            want[i * out_f + o] = s;
        }
    assert_true(gc_allclose(y, want, n * out_f, 1e-5, 1e-5, "linear forward"));
    free(want);

    gc_op_init(&bd, XPB_OP_LINEAR_BWD_DATA, NULL);
    float *dy = gc_in(&bd, 2, yd);
    memcpy(gc_in(&bd, 2, wd), w, sizeof(float) * (size_t)(out_f * in_f));
    gc_out(&bd, 2, xd);
    gc_fill(dy, n * out_f, seed + 3, -1, 1);
    assert_int_equal(gc_run(&bd), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, bd.out[0], 0.25, 1e-4, 1e-4, "linear dx"));

    gc_op_init(&bw, XPB_OP_LINEAR_BWD_WEIGHTS, NULL);
    memcpy(gc_in(&bw, 2, yd), dy, sizeof(float) * (size_t)(n * out_f));
    memcpy(gc_in(&bw, 2, xd), x, sizeof(float) * (size_t)(n * in_f));
    gc_out(&bw, 2, wd);
    if (b)
        gc_out(&bw, 1, bd_);
    assert_int_equal(gc_run(&bw), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 1, bw.out[0], 0.25, 1e-4, 1e-4, "linear dw"));
    if (b)
        assert_true(gc_gradcheck(&f, 0, dy, 2, bw.out[1], 0.25, 1e-4, 1e-4, "linear db"));

    gc_op_free(&f);
    gc_op_free(&bd);
    gc_op_free(&bw);
}

static void test_linear_cases(void **state)
{
    (void)state;
    run_linear_case(1, 1, 1, 1, 10);
    run_linear_case(3, 5, 7, 1, 20);
    run_linear_case(5, 9, 2, 0, 30);
    run_linear_case(7, 70, 67, 1, 40); /* across ref_gemm's blocks */
}

/* The harness must be able to fail: a gradient off by 1% in one element is rejected. */
static void test_gradcheck_rejects_wrong_gradient(void **state)
{
    (void)state;
    gc_op f, bd;
    gc_op_init(&f, XPB_OP_LINEAR, NULL);
    float *x = gc_in(&f, 2, (int64_t[]){2, 3});
    float *w = gc_in(&f, 2, (int64_t[]){4, 3});
    gc_out(&f, 2, (int64_t[]){2, 4});
    gc_fill(x, 6, 1, -1, 1);
    gc_fill(w, 12, 2, -1, 1);
    gc_op_init(&bd, XPB_OP_LINEAR_BWD_DATA, NULL);
    float *dy = gc_in(&bd, 2, (int64_t[]){2, 4});
    memcpy(gc_in(&bd, 2, (int64_t[]){4, 3}), w, sizeof(float) * 12);
    float *dx = gc_out(&bd, 2, (int64_t[]){2, 3});
    gc_fill(dy, 8, 3, -1, 1);
    assert_int_equal(gc_run(&bd), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 1e-4, 1e-4, "linear dx (right)"));
    dx[4] *= 1.01f;
    assert_false(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 1e-4, 1e-4, "linear dx (wrong)"));
    dx[4] = NAN;
    assert_false(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 1e-4, 1e-4, "linear dx (NaN)"));
    gc_op_free(&f);
    gc_op_free(&bd);
}

static void test_linear_check_messages(void **state)
{
    (void)state;
    gc_op f;
    gc_op_init(&f, XPB_OP_LINEAR, NULL);
    f.op.layer = "fc1";
    gc_in(&f, 2, (int64_t[]){8, 256});
    gc_in(&f, 2, (int64_t[]){10, 255});
    gc_out(&f, 2, (int64_t[]){8, 10});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "LINEAR (layer 'fc1')"));
    assert_non_null(strstr(f.err, "input w"));
    assert_non_null(strstr(f.err, "[10, 255]"));
    f.in_desc[1].dims[1] = 256;
    assert_int_equal(gc_check(&f), XPB_OK);
    f.out_desc[0].dims[1] = 11;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "must be [8, 10], found [8, 11]"));
    f.out_desc[0].dims[1] = 10;
    /* x must be 2-D (flattening is an explicit RESHAPE) */
    f.in_desc[0].ndim = 4;
    f.in_desc[0].dims[1] = 16;
    f.in_desc[0].dims[2] = 4;
    f.in_desc[0].dims[3] = 4;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "2-D"));
    gc_op_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_hand_computed),
        cmocka_unit_test(test_linear_cases),
        cmocka_unit_test(test_gradcheck_rejects_wrong_gradient),
        cmocka_unit_test(test_linear_check_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

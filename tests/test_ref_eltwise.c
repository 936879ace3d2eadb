/* Reference kernels: activations (forward and backward), add, reshape, fill and copy. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gradcheck.h"

#define N_ELEM 60

/* Inputs in [-2, 2] kept at least 0.05 away from 0, so that finite differences of ReLU and
 * LeakyReLU never cross the kink. */
static void fill_away_from_zero(float *x, int64_t n, uint64_t seed)
{
    gc_fill(x, n, seed, -2.0, 2.0);
    for (int64_t i = 0; i < n; i++)
        if (fabsf(x[i]) < 0.05f)
            x[i] = x[i] < 0 ? x[i] - 0.05f : x[i] + 0.05f;
}

/* Forward op `kind` on x, compared with `naive`; then its backward op `bwd_kind` (dy, y) with
 * dy = r, compared with finite differences of the forward op. */
static void check_activation(uint32_t kind, uint32_t bwd_kind, const xpb_op_attrs *at,
                             double (*naive)(double x, const xpb_op_attrs *at), const char *what)
{
    int64_t dims[4] = {2, 3, 2, 5};
    gc_op f, b;
    gc_op_init(&f, kind, at);
    float *x = gc_in(&f, 4, dims);
    float *y = gc_out(&f, 4, dims);
    fill_away_from_zero(x, N_ELEM, 7);
    assert_int_equal(gc_run(&f), XPB_OK);
    double want[N_ELEM];
    for (int i = 0; i < N_ELEM; i++)
        want[i] = naive(x[i], at);
    assert_true(gc_allclose(y, want, N_ELEM, 1e-6, 1e-6, what));

    gc_op_init(&b, bwd_kind, at);
    float *dy = gc_in(&b, 4, dims);
    memcpy(gc_in(&b, 4, dims), y, N_ELEM * sizeof *y);
    float *dx = gc_out(&b, 4, dims);
    gc_fill(dy, N_ELEM, 8, -1.0, 1.0);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 1e-3, 1e-3, what));
    gc_op_free(&f);
    gc_op_free(&b);
}

static double naive_relu(double x, const xpb_op_attrs *at)
{
    (void)at;
    return x > 0 ? x : 0;
}

static double naive_leaky(double x, const xpb_op_attrs *at)
{
    return x > 0 ? x : (double)at->negative_slope * x;
}

static double naive_tanh(double x, const xpb_op_attrs *at)
{
    (void)at;
    return tanh(x);
}

static void test_relu(void **state)
{
    (void)state;
    check_activation(XPB_OP_RELU, XPB_OP_RELU_BWD, NULL, naive_relu, "relu");
}

static void test_leaky_relu(void **state)
{
    (void)state;
    xpb_op_attrs at = {.negative_slope = 0.2f};
    check_activation(XPB_OP_LEAKY_RELU, XPB_OP_LEAKY_RELU_BWD, &at, naive_leaky, "leaky_relu");
}

static void test_tanh(void **state)
{
    (void)state;
    check_activation(XPB_OP_TANH, XPB_OP_TANH_BWD, NULL, naive_tanh, "tanh");
}

/* The backward ops read y, not x: exact values at hand-picked points. */
static void test_activation_bwd_hand(void **state)
{
    (void)state;
    xpb_op_attrs at = {.negative_slope = 0.25f};
    gc_op b;
    gc_op_init(&b, XPB_OP_LEAKY_RELU_BWD, &at);
    float *dy = gc_in(&b, 1, (int64_t[]){3});
    float *y = gc_in(&b, 1, (int64_t[]){3});
    float *dx = gc_out(&b, 1, (int64_t[]){3});
    dy[0] = 2.0f, dy[1] = 2.0f, dy[2] = 2.0f;
    y[0] = 1.0f, y[1] = 0.0f, y[2] = -0.5f;
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_float_equal(dx[0], 2.0f, 0.0f);
    assert_float_equal(dx[1], 0.5f, 0.0f);
    assert_float_equal(dx[2], 0.5f, 0.0f);
    gc_op_free(&b);

    gc_op_init(&b, XPB_OP_TANH_BWD, NULL);
    dy = gc_in(&b, 1, (int64_t[]){2});
    y = gc_in(&b, 1, (int64_t[]){2});
    dx = gc_out(&b, 1, (int64_t[]){2});
    dy[0] = 3.0f, dy[1] = 1.0f;
    y[0] = 0.5f, y[1] = -1.0f;
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_float_equal(dx[0], 2.25f, 1e-7f);
    assert_float_equal(dx[1], 0.0f, 1e-7f);
    gc_op_free(&b);

    gc_op_init(&b, XPB_OP_RELU_BWD, NULL);
    dy = gc_in(&b, 1, (int64_t[]){2});
    y = gc_in(&b, 1, (int64_t[]){2});
    dx = gc_out(&b, 1, (int64_t[]){2});
    dy[0] = 3.0f, dy[1] = 4.0f;
    y[0] = 0.0f, y[1] = 0.1f;
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_float_equal(dx[0], 0.0f, 0.0f);
    assert_float_equal(dx[1], 4.0f, 0.0f);
    gc_op_free(&b);
}

static void test_add(void **state)
{
    (void)state;
    int64_t dims[3] = {3, 4, 5};
    gc_op g;
    gc_op_init(&g, XPB_OP_ADD, NULL);
    float *a = gc_in(&g, 3, dims);
    float *b = gc_in(&g, 3, dims);
    float *y = gc_out(&g, 3, dims);
    gc_fill(a, N_ELEM, 1, -3.0, 3.0);
    gc_fill(b, N_ELEM, 2, -3.0, 3.0);
    assert_int_equal(gc_run(&g), XPB_OK);
    double want[N_ELEM];
    for (int i = 0; i < N_ELEM; i++)
        want[i] = (double)(a[i] + b[i]);
    assert_true(gc_allclose(y, want, N_ELEM, 0.0, 0.0, "add"));
    /* The autodiff passes dy to both inputs unchanged: d/da and d/db of sum(r * y) are r. */
    float r[N_ELEM];
    gc_fill(r, N_ELEM, 3, -1.0, 1.0);
    assert_true(gc_gradcheck(&g, 0, r, 0, r, 1e-2, 1e-4, 1e-4, "add da"));
    assert_true(gc_gradcheck(&g, 0, r, 1, r, 1e-2, 1e-4, 1e-4, "add db"));
    gc_op_free(&g);
}

static void test_reshape(void **state)
{
    (void)state;
    gc_op g;
    gc_op_init(&g, XPB_OP_RESHAPE, NULL);
    float *x = gc_in(&g, 4, (int64_t[]){2, 3, 2, 5});
    float *y = gc_out(&g, 2, (int64_t[]){2, 30});
    gc_fill(x, N_ELEM, 4, -1.0, 1.0);
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_memory_equal(x, y, N_ELEM * sizeof *x);
    gc_op_free(&g);
}

static void test_fill(void **state)
{
    (void)state;
    xpb_op_attrs at = {.value = -3.5f};
    gc_op g;
    gc_op_init(&g, XPB_OP_FILL, &at);
    float *y = gc_out(&g, 2, (int64_t[]){4, 5});
    y[7] = 123.0f;
    assert_int_equal(gc_run(&g), XPB_OK);
    for (int i = 0; i < 20; i++)
        assert_float_equal(y[i], -3.5f, 0.0f);
    gc_op_free(&g);
}

static void test_copy(void **state)
{
    (void)state;
    gc_op g;
    gc_op_init(&g, XPB_OP_COPY, NULL);
    float *x = gc_in(&g, 2, (int64_t[]){6, 10});
    float *y = gc_out(&g, 2, (int64_t[]){6, 10});
    gc_fill(x, N_ELEM, 5, -10.0, 10.0);
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_memory_equal(x, y, N_ELEM * sizeof *x);
    gc_op_free(&g);

    gc_op_init(&g, XPB_OP_COPY, NULL);
    int32_t *xi = gc_in_i32(&g, 1, (int64_t[]){4});
    int32_t *yi = gc_out_i32(&g, 1, (int64_t[]){4});
    for (int i = 0; i < 4; i++)
        xi[i] = -7 + 1000000 * i;
    assert_int_equal(gc_run(&g), XPB_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(yi[i], -7 + 1000000 * i);
    gc_op_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relu), cmocka_unit_test(test_leaky_relu),
        cmocka_unit_test(test_tanh), cmocka_unit_test(test_activation_bwd_hand),
        cmocka_unit_test(test_add),  cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_fill), cmocka_unit_test(test_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

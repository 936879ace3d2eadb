/* Reference kernels of op set 3: SOFTMAX over the last axis (scale, an additive mask with -inf
 * entries broadcast over the leading dims, causal masking on square and non-square scores, a
 * 1-D row, huge inputs, a row whose every key is hidden) against a direct computation in double,
 * and SOFTMAX_BWD against finite differences of the forward op, masked and causal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* softmax(scale * x + mask (+ causal)) of every row of x[.., sq, sk] in double. */
static void naive_softmax(double *want, const float *x, const float *mask, int64_t rows, int64_t sq,
                          int64_t sk, double scale, int causal)
{
    for (int64_t r = 0; r < rows; r++) {
        int64_t q = r % sq;
        double z[64], m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < sk; j++) {
            z[j] = scale * x[r * sk + j] + (mask ? mask[q * sk + j] : 0.0);
            if (causal && j > q)
                z[j] = -INFINITY;
            m = z[j] > m ? z[j] : m;
        }
        for (int64_t j = 0; j < sk; j++)
            sum += exp(z[j] - m);
        for (int64_t j = 0; j < sk; j++)
            want[r * sk + j] = m == -INFINITY ? NAN : exp(z[j] - m) / sum;
    }
}

/* Forward against naive_softmax, then the backward against finite differences. With `masked`
 * an additive mask [Sq, Sk] of values in [-1, 1) also hides about one key in three with -inf
 * (never key 0). */
static void check_softmax(uint32_t nd, const int64_t *xd, float scale, int causal, int masked,
                          uint64_t seed)
{
    int64_t sk = xd[nd - 1], sq = nd > 1 ? xd[nd - 2] : 1;
    char what[128];
    snprintf(what, sizeof what, "softmax %uD [.., %lld, %lld] scale %g%s%s", nd, (long long)sq,
             (long long)sk, (double)scale, causal ? " causal" : "", masked ? " masked" : "");
    gc_op f, b;
    gc_op_init(&f, XPB_OP_SOFTMAX, &(xpb_op_attrs){.scale = scale});
    f.op.causal = (uint32_t)causal;
    float *x = gc_in(&f, nd, xd);
    float *mask = masked ? gc_in(&f, 2, (int64_t[]){sq, sk}) : NULL;
    float *y = gc_out(&f, nd, xd);
    int64_t n = gc_in_numel(&f, 0), rows = n / sk;
    assert_true(sk <= 64);
    gc_fill(x, n, seed, -2, 2);
    if (mask) {
        gc_fill(mask, sq * sk, seed + 1, -1, 1);
        for (int64_t i = 0; i < sq * sk; i++)
            if (i % sk != 0 && (i * 7) % 3 == 0)
                mask[i] = -INFINITY;
    }
    assert_int_equal(gc_run(&f), XPB_OK);
    double *want = malloc(sizeof(double) * (size_t)n);
    assert_non_null(want);
    naive_softmax(want, x, mask, rows, sq, sk, scale, causal);
    assert_true(gc_allclose(y, want, n, 1e-7, 1e-6, what));
    for (int64_t i = 0; i < n; i++) /* hidden keys get exactly 0 */
        if (want[i] == 0.0)
            assert_true(y[i] == 0.0f);
    free(want);

    gc_op_init(&b, XPB_OP_SOFTMAX_BWD, &(xpb_op_attrs){.scale = scale});
    b.op.causal = (uint32_t)causal;
    float *dy = gc_in(&b, nd, xd);
    memcpy(gc_in(&b, nd, xd), y, sizeof(float) * (size_t)n);
    float *dx = gc_out(&b, nd, xd);
    gc_fill(dy, n, seed + 2, -1, 1);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 2e-4, 1e-3, what));
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_softmax_cases(void **state)
{
    (void)state;
    check_softmax(4, (const int64_t[]){2, 3, 4, 6}, 0.35f, 0, 0, 1);
    check_softmax(4, (const int64_t[]){2, 2, 5, 5}, 1.0f, 1, 0, 2);    /* causal */
    check_softmax(3, (const int64_t[]){3, 4, 6}, 0.5f, 0, 1, 3);       /* masked */
    check_softmax(4, (const int64_t[]){1, 2, 3, 5}, 0.7f, 1, 1, 4);    /* both, Sq < Sk */
    check_softmax(2, (const int64_t[]){7, 3}, 1.0f, 1, 0, 5);          /* causal, Sq > Sk */
    check_softmax(1, (const int64_t[]){7}, 2.0f, 0, 0, 6);             /* one row */
    check_softmax(4, (const int64_t[]){2, 1, 1, 33}, 0.125f, 0, 1, 7); /* one query, odd keys */
}

/* Huge inputs stay finite (the row maximum is subtracted); every key hidden gives NaN as
 * PyTorch does; a causal row 0 sees key 0 alone. */
static void test_softmax_edges(void **state)
{
    (void)state;
    gc_op f;
    gc_op_init(&f, XPB_OP_SOFTMAX, &(xpb_op_attrs){.scale = 1.0f});
    float *x = gc_in(&f, 2, (int64_t[]){3, 2});
    float *mask = gc_in(&f, 2, (int64_t[]){3, 2});
    float *y = gc_out(&f, 2, (int64_t[]){3, 2});
    memcpy(x, (float[]){1000, 1001, 1e30f, 1e30f, 1, 2}, 24);
    memcpy(mask, (float[]){0, 0, 0, 0, -INFINITY, -INFINITY}, 24);
    assert_int_equal(gc_run(&f), XPB_OK);
    double e = exp(-1.0);
    assert_true(gc_allclose(y, (double[]){e / (1 + e), 1 / (1 + e), 0.5, 0.5}, 4, 1e-7, 1e-6,
                            "softmax huge inputs"));
    assert_true(isnan(y[4]) && isnan(y[5]));
    f.op.causal = 1;
    memset(mask, 0, 24);
    assert_int_equal(gc_run(&f), XPB_OK);
    assert_true(y[0] == 1.0f && y[1] == 0.0f);
    gc_op_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_cases),
        cmocka_unit_test(test_softmax_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

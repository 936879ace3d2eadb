/* Reference kernels of op set 3: MATMUL (every transpose combination, with and without bias)
 * and BATCHED_MATMUL (batch dims broadcast as torch.matmul's: a missing leading dim, dims of 1
 * on either side) against direct loops in double, and their backward ops against finite
 * differences, including gradients summed over broadcast batch dims and unwanted outputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* Element (r, c) of op(m) for m held row-major with `cols` columns, transposed when t. */
static double elem(const float *m, int64_t cols, int t, int64_t r, int64_t c)
{
    return t ? m[c * cols + r] : m[r * cols + c];
}

/* want[M,N] = op(a) op(b) (+ bias) in double. */
static void naive_matmul(double *want, const float *a, const float *b, const float *bias, int64_t m,
                         int64_t k, int64_t n, uint32_t tr)
{
    int ta = (tr & XPB_TRANSPOSE_A) != 0, tb = (tr & XPB_TRANSPOSE_B) != 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = bias ? bias[j] : 0.0;
            for (int64_t p = 0; p < k; p++)
                s += elem(a, ta ? m : k, ta, i, p) * elem(b, tb ? k : n, tb, p, j);
            want[i * n + j] = s;
        }
}

static void run_matmul_case(int64_t m, int64_t k, int64_t n, uint32_t tr, int bias, uint64_t seed)
{
    int ta = (tr & XPB_TRANSPOSE_A) != 0, tb = (tr & XPB_TRANSPOSE_B) != 0;
    int64_t ad[2] = {ta ? k : m, ta ? m : k}, bd[2] = {tb ? n : k, tb ? k : n};
    int64_t yd[2] = {m, n}, nd[1] = {n};
    char what[96];
    gc_op f, g;
    gc_op_init(&f, XPB_OP_MATMUL, NULL);
    f.op.transpose = tr;
    float *a = gc_in(&f, 2, ad), *b = gc_in(&f, 2, bd), *bs = bias ? gc_in(&f, 1, nd) : NULL;
    float *y = gc_out(&f, 2, yd);
    gc_fill(a, m * k, seed, -1, 1);
    gc_fill(b, k * n, seed + 1, -1, 1);
    if (bs)
        gc_fill(bs, n, seed + 2, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    double *want = malloc(sizeof(double) * (size_t)(m * n));
    assert_non_null(want);
    naive_matmul(want, a, b, bs, m, k, n, tr);
    snprintf(what, sizeof what, "matmul %lldx%lldx%lld transpose %u%s", (long long)m, (long long)k,
             (long long)n, tr, bias ? " bias" : "");
    assert_true(gc_allclose(y, want, m * n, 1e-5, 1e-5, what));
    free(want);

    gc_op_init(&g, XPB_OP_MATMUL_BWD, NULL);
    g.op.transpose = tr;
    float *dy = gc_in(&g, 2, yd);
    memcpy(gc_in(&g, 2, ad), a, sizeof(float) * (size_t)(m * k));
    memcpy(gc_in(&g, 2, bd), b, sizeof(float) * (size_t)(k * n));
    gc_out(&g, 2, ad), gc_out(&g, 2, bd);
    if (bias)
        gc_out(&g, 1, nd);
    gc_fill(dy, m * n, seed + 3, -1, 1);
    assert_int_equal(gc_run(&g), XPB_OK);
    /* linear in every input: a large step is exact up to rounding */
    assert_true(gc_gradcheck(&f, 0, dy, 0, g.out[0], 0.25, 1e-4, 1e-4, "matmul da"));
    assert_true(gc_gradcheck(&f, 0, dy, 1, g.out[1], 0.25, 1e-4, 1e-4, "matmul db"));
    if (bias)
        assert_true(gc_gradcheck(&f, 0, dy, 2, g.out[2], 0.25, 1e-4, 1e-4, "matmul dbias"));

    /* da not wanted: db alone is the same */
    float *db = malloc(sizeof(float) * (size_t)(k * n));
    assert_non_null(db);
    memcpy(db, g.out[1], sizeof(float) * (size_t)(k * n));
    gc_unwanted(&g, 0);
    memset(g.out[1], 0, sizeof(float) * (size_t)(k * n));
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_memory_equal(db, g.out[1], sizeof(float) * (size_t)(k * n));
    free(db);
    gc_op_free(&f);
    gc_op_free(&g);
}

static void test_matmul(void **state)
{
    (void)state;
    for (uint32_t tr = 0; tr < 4; tr++) {
        run_matmul_case(3, 5, 4, tr, 1, 10 + tr);
        run_matmul_case(1, 1, 1, tr, 0, 20 + tr);
        run_matmul_case(7, 67, 9, tr, tr == 2, 30 + tr); /* across ref_gemm's K blocks */
    }
}

/* y = [1 2; 3 4] @ [5 6; 7 8] + [1, -1] = [20 21; 44 49]. */
static void test_matmul_hand_computed(void **state)
{
    (void)state;
    gc_op f;
    gc_op_init(&f, XPB_OP_MATMUL, NULL);
    float *a = gc_in(&f, 2, (int64_t[]){2, 2}), *b = gc_in(&f, 2, (int64_t[]){2, 2});
    float *bias = gc_in(&f, 1, (int64_t[]){2}), *y = gc_out(&f, 2, (int64_t[]){2, 2});
    memcpy(a, (float[]){1, 2, 3, 4}, 16);
    memcpy(b, (float[]){5, 6, 7, 8}, 16);
    bias[0] = 1, bias[1] = -1;
    assert_int_equal(gc_run(&f), XPB_OK);
    assert_true(gc_allclose(y, (double[]){20, 21, 44, 49}, 4, 0, 0, "matmul hand-computed"));
    /* transpose A and B: a^T b^T = [1 3; 2 4] [5 7; 6 8] + bias = [24 30; 35 45] */
    f.op.transpose = XPB_TRANSPOSE_A | XPB_TRANSPOSE_B;
    assert_int_equal(gc_run(&f), XPB_OK);
    assert_true(gc_allclose(y, (double[]){24, 30, 35, 45}, 4, 0, 0, "matmul a^T b^T"));
    gc_op_free(&f);
}

/* ---- batched ---- */

/* dims of an operand of 3 or 4 dims as 2 batch dims (a missing leading one is 1) + matrix */
static void batch4(int64_t out[4], uint32_t nd, const int64_t *d)
{
    out[0] = nd == 4 ? d[0] : 1;
    for (int i = 1; i < 4; i++)
        out[i] = d[nd - 4 + (uint32_t)i];
}

/* The matrix of an operand (batch dims b4) for y's batch index (i0, i1), broadcast. */
static const float *mat_at(const float *p, const int64_t b4[4], int64_t i0, int64_t i1)
{
    int64_t j0 = b4[0] == 1 ? 0 : i0, j1 = b4[1] == 1 ? 0 : i1;
    return p + (j0 * b4[1] + j1) * b4[2] * b4[3];
}

static void run_bmm_case(uint32_t na, const int64_t *ad, uint32_t nb, const int64_t *bd,
                         uint32_t tr, uint64_t seed)
{
    int ta = (tr & XPB_TRANSPOSE_A) != 0, tb = (tr & XPB_TRANSPOSE_B) != 0;
    int64_t a4[4], b4[4];
    batch4(a4, na, ad);
    batch4(b4, nb, bd);
    int64_t m = ta ? a4[3] : a4[2], k = ta ? a4[2] : a4[3], n = tb ? b4[2] : b4[3];
    int64_t y0 = a4[0] > b4[0] ? a4[0] : b4[0], y1 = a4[1] > b4[1] ? a4[1] : b4[1];
    uint32_t ny = na > nb ? na : nb;
    int64_t yd[4] = {y0, y1, m, n}, *yds = ny == 4 ? yd : yd + 1;
    char what[96];
    snprintf(what, sizeof what, "batched matmul %uD x %uD transpose %u, y %lldx%lldx%lldx%lld", na,
             nb, tr, (long long)y0, (long long)y1, (long long)m, (long long)n);
    gc_op f, g;
    gc_op_init(&f, XPB_OP_BATCHED_MATMUL, NULL);
    f.op.transpose = tr;
    float *a = gc_in(&f, na, ad), *b = gc_in(&f, nb, bd), *y = gc_out(&f, ny, yds);
    int64_t n_a = gc_in_numel(&f, 0), n_b = gc_in_numel(&f, 1), n_y = gc_out_numel(&f, 0);
    gc_fill(a, n_a, seed, -1, 1);
    gc_fill(b, n_b, seed + 1, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    double *want = malloc(sizeof(double) * (size_t)n_y);
    assert_non_null(want);
    for (int64_t i0 = 0; i0 < y0; i0++)
        for (int64_t i1 = 0; i1 < y1; i1++)
            naive_matmul(want + (i0 * y1 + i1) * m * n, mat_at(a, a4, i0, i1),
                         mat_at(b, b4, i0, i1), NULL, m, k, n, tr);
    assert_true(gc_allclose(y, want, n_y, 1e-5, 1e-5, what));
    free(want);

    gc_op_init(&g, XPB_OP_BATCHED_MATMUL_BWD, NULL);
    g.op.transpose = tr;
    float *dy = gc_in(&g, ny, yds);
    memcpy(gc_in(&g, na, ad), a, sizeof(float) * (size_t)n_a);
    memcpy(gc_in(&g, nb, bd), b, sizeof(float) * (size_t)n_b);
    gc_out(&g, na, ad), gc_out(&g, nb, bd);
    gc_fill(dy, n_y, seed + 2, -1, 1);
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, g.out[0], 0.25, 1e-4, 1e-4, "batched matmul da"));
    assert_true(gc_gradcheck(&f, 0, dy, 1, g.out[1], 0.25, 1e-4, 1e-4, "batched matmul db"));
    /* db not wanted: da unchanged */
    float *da = malloc(sizeof(float) * (size_t)n_a);
    assert_non_null(da);
    memcpy(da, g.out[0], sizeof(float) * (size_t)n_a);
    gc_unwanted(&g, 1);
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_memory_equal(da, g.out[0], sizeof(float) * (size_t)n_a);
    free(da);
    gc_op_free(&f);
    gc_op_free(&g);
}

static void test_batched_matmul(void **state)
{
    (void)state;
    for (uint32_t tr = 0; tr < 4; tr++) {
        int ta = tr & 1, tb = (tr >> 1) & 1;
        /* same batch dims, 4-D (attention's q k^T and p v) */
        run_bmm_case(4, (int64_t[]){2, 3, ta ? 5 : 4, ta ? 4 : 5}, 4,
                     (int64_t[]){2, 3, tb ? 3 : 5, tb ? 5 : 3}, tr, 100 + tr);
        /* a 3-D against b 4-D: a broadcast along the missing leading dim */
        run_bmm_case(3, (int64_t[]){3, ta ? 2 : 4, ta ? 4 : 2}, 4,
                     (int64_t[]){2, 3, tb ? 5 : 2, tb ? 2 : 5}, tr, 200 + tr);
        /* dims of 1 on both sides: a [2, 1, ..], b [1, 3, ..] */
        run_bmm_case(4, (int64_t[]){2, 1, ta ? 3 : 5, ta ? 5 : 3}, 4,
                     (int64_t[]){1, 3, tb ? 7 : 3, tb ? 3 : 7}, tr, 300 + tr);
        /* both 3-D, b broadcast along dim 0 */
        run_bmm_case(3, (int64_t[]){4, ta ? 6 : 1, ta ? 1 : 6}, 3,
                     (int64_t[]){1, tb ? 2 : 6, tb ? 6 : 2}, tr, 400 + tr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_hand_computed),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_batched_matmul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

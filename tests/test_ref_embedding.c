/* Reference kernels of op set 3: EMBEDDING (1-D to 3-D indices) against a direct gather, its
 * backward with repeated indices (which accumulate) and the padding row (which gets zeros)
 * against a direct scatter and against finite differences of the forward op, and the run-time
 * refusal of an index outside the table, naming the layer and the position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* Forward and backward of one case: indices [id] in [0, v) with repeats, weight [v, d]. */
static void check_embedding(uint32_t nd, const int64_t *id, int64_t v, int64_t d, int padding_idx,
                            uint64_t seed)
{
    int64_t wd[2] = {v, d}, yd[4];
    for (uint32_t k = 0; k < nd; k++)
        yd[k] = id[k];
    yd[nd] = d;
    gc_op f, b;
    gc_op_init(&f, XPB_OP_EMBEDDING, NULL);
    if (padding_idx >= 0) {
        f.op.index_flags = XPB_INDEX_PADDING;
        f.op.padding_idx = padding_idx;
    }
    int32_t *idx = gc_in_i32(&f, nd, id);
    float *w = gc_in(&f, 2, wd), *y = gc_out(&f, nd + 1, yd);
    int64_t n = gc_in_numel(&f, 0);
    uint64_t s = seed;
    for (int64_t p = 0; p < n; p++) /* about n / v repeats of each index */
        idx[p] = (int32_t)(gc_rng_next(&s) % (uint64_t)v);
    idx[0] = idx[n - 1] = (int32_t)(v - 1); /* at least one repeat, and the last row */
    if (padding_idx >= 0)
        idx[n / 2] = padding_idx; /* the padding row is read like any other */
    gc_fill(w, v * d, seed + 1, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    for (int64_t p = 0; p < n; p++)
        assert_memory_equal(y + p * d, w + (int64_t)idx[p] * d, sizeof(float) * (size_t)d);

    gc_op_init(&b, XPB_OP_EMBEDDING_BWD, NULL);
    b.op.index_flags = f.op.index_flags;
    b.op.padding_idx = f.op.padding_idx;
    float *dy = gc_in(&b, nd + 1, yd);
    memcpy(gc_in_i32(&b, nd, id), idx, sizeof(int32_t) * (size_t)n);
    float *dw = gc_out(&b, 2, wd);
    gc_fill(dy, n * d, seed + 2, -1, 1);
    for (int64_t i = 0; i < v * d; i++)
        dw[i] = NAN; /* every element is written, unused rows too */
    assert_int_equal(gc_run(&b), XPB_OK);
    double *want = calloc((size_t)(v * d), sizeof *want);
    assert_non_null(want);
    for (int64_t p = 0; p < n; p++)
        if (idx[p] != padding_idx)
            for (int64_t j = 0; j < d; j++)
                want[idx[p] * d + j] += dy[p * d + j];
    assert_true(gc_allclose(dw, want, v * d, 1e-6, 1e-6, "embedding dweight (scatter-add)"));
    if (padding_idx >= 0) {
        for (int64_t j = 0; j < d; j++)
            assert_true(dw[padding_idx * d + j] == 0.0f);
    } else {
        /* without padding, the gradient is exactly that of the forward op */
        assert_true(gc_gradcheck(&f, 0, dy, 1, dw, 0.25, 1e-5, 1e-5, "embedding dweight"));
    }
    free(want);
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_embedding(void **state)
{
    (void)state;
    check_embedding(2, (const int64_t[]){4, 9}, 7, 5, -1, 1);    /* tokens [B, S] */
    check_embedding(2, (const int64_t[]){4, 9}, 7, 5, 3, 2);     /* with a padding row */
    check_embedding(1, (const int64_t[]){13}, 50, 3, 0, 3);      /* most rows unused */
    check_embedding(3, (const int64_t[]){2, 3, 4}, 2, 6, -1, 4); /* two rows, many repeats */
    check_embedding(1, (const int64_t[]){1}, 1, 1, -1, 5);
}

/* An index outside [0, V) is refused at run time, naming the op, the layer and the position;
 * the backward checks again. */
static void test_embedding_index_out_of_range(void **state)
{
    (void)state;
    static const int32_t bad[3] = {-1, 5, 1 << 30};
    for (int k = 0; k < 3; k++)
        for (int bwd = 0; bwd < 2; bwd++) {
            gc_op g;
            gc_op_init(&g, bwd ? XPB_OP_EMBEDDING_BWD : XPB_OP_EMBEDDING, NULL);
            g.op.layer = "tok_emb";
            int32_t *idx;
            if (bwd) {
                gc_in(&g, 3, (int64_t[]){2, 3, 4});
                idx = gc_in_i32(&g, 2, (int64_t[]){2, 3});
                gc_out(&g, 2, (int64_t[]){5, 4});
            } else {
                idx = gc_in_i32(&g, 2, (int64_t[]){2, 3});
                gc_in(&g, 2, (int64_t[]){5, 4});
                gc_out(&g, 3, (int64_t[]){2, 3, 4});
            }
            idx[4] = bad[k];
            assert_int_equal(gc_run(&g), XPB_INVALID_ARGUMENT);
            char want[256];
            snprintf(
                want, sizeof want,
                "%s (layer 'tok_emb'): position [1, 1] of the indices [2, 3] holds %d, outside "
                "the 5 rows [0, 5) of the weight",
                bwd ? "EMBEDDING_BWD" : "EMBEDDING", bad[k]);
            assert_string_equal(g.err, want);
            gc_op_free(&g);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedding),
        cmocka_unit_test(test_embedding_index_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

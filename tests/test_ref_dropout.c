/* Reference kernels: dropout's seeded mask stream (bit-exact against an independent
 * implementation of docs/ops.md), its statistics and determinism, and dropout backward. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gradcheck.h"

#define BIG 100000

/* splitmix64 exactly as docs/ops.md writes it (independent of the kernel's copy). */
static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* DROPOUT(x[n]) -> y[n], mask[n] with attrs p and seed. */
static void dropout_op(gc_op *g, int64_t n, float p, uint64_t seed, float **x, float **y,
                       float **mask)
{
    gc_op_init(g, XPB_OP_DROPOUT, &(xpb_op_attrs){.dropout_p = p, .seed = seed});
    *x = gc_in(g, 1, (int64_t[]){n});
    *y = gc_out(g, 1, (int64_t[]){n});
    *mask = gc_out(g, 1, (int64_t[]){n});
}

static void test_dropout_bit_exact(void **state)
{
    (void)state;
    const float p = 0.3f;
    const uint64_t seed = 12345;
    gc_op g;
    float *x, *y, *mask;
    dropout_op(&g, 1000, p, seed, &x, &y, &mask);
    gc_fill(x, 1000, 1, -1.0, 1.0);
    for (uint64_t c = 0; c < 3; c++) {
        g.call_index = c;
        assert_int_equal(gc_run(&g), XPB_OK);
        uint64_t h = mix(seed + 0x9E3779B97F4A7C15ull * (c + 1));
        for (int64_t i = 0; i < 1000; i++) {
            double u = (double)(mix(h + (uint64_t)i) >> 40) / 16777216.0;
            float want_mask = u >= (double)p ? 1.0f / (1.0f - p) : 0.0f;
            assert_memory_equal(&mask[i], &want_mask, sizeof(float));
            float want_y = x[i] * want_mask;
            assert_memory_equal(&y[i], &want_y, sizeof(float));
        }
    }
    gc_op_free(&g);
}

static void test_dropout_statistics(void **state)
{
    (void)state;
    const float p = 0.3f;
    gc_op g;
    float *x, *y, *mask;
    dropout_op(&g, BIG, p, 42, &x, &y, &mask);
    for (int64_t i = 0; i < BIG; i++)
        x[i] = 1.0f;
    assert_int_equal(gc_run(&g), XPB_OK);
    int64_t dropped = 0;
    double sum_y = 0;
    for (int64_t i = 0; i < BIG; i++) {
        assert_true(mask[i] == 0.0f || mask[i] == 1.0f / (1.0f - p));
        dropped += mask[i] == 0.0f;
        sum_y += y[i];
    }
    /* Binomial(1e5, 0.3): sd 0.00145 of the fraction; 0.01 is ~7 sd. */
    double frac = (double)dropped / BIG;
    printf("dropped fraction %.5f (p %.2f), mean of y %.5f\n", frac, p, sum_y / BIG);
    assert_true(fabs(frac - 0.3) < 0.01);
    assert_true(fabs(sum_y / BIG - 1.0) < 0.02); /* inverted dropout keeps the expectation */
    /* Neighbouring elements are independent: P(both dropped) ~ p^2. */
    int64_t both = 0;
    for (int64_t i = 0; i + 1 < BIG; i += 2)
        both += mask[i] == 0.0f && mask[i + 1] == 0.0f;
    assert_true(fabs((double)both / (BIG / 2) - 0.09) < 0.01);
    gc_op_free(&g);
}

/* Same seed and call: the same mask; another call or another seed: a different one. */
static void test_dropout_determinism(void **state)
{
    (void)state;
    gc_op a, b;
    float *xa, *ya, *ma, *xb, *yb, *mb;
    dropout_op(&a, 4096, 0.5f, 7, &xa, &ya, &ma);
    dropout_op(&b, 4096, 0.5f, 7, &xb, &yb, &mb);
    assert_int_equal(gc_run(&a), XPB_OK);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_memory_equal(ma, mb, 4096 * sizeof *ma);

    b.call_index = 1;
    assert_int_equal(gc_run(&b), XPB_OK);
    int differ = 0;
    for (int i = 0; i < 4096; i++)
        differ += ma[i] != mb[i];
    assert_true(differ > 1500); /* ~2048 expected for independent masks */

    b.call_index = 0;
    b.op.attrs.seed = 8;
    assert_int_equal(gc_run(&b), XPB_OK);
    differ = 0;
    for (int i = 0; i < 4096; i++)
        differ += ma[i] != mb[i];
    assert_true(differ > 1500);
    gc_op_free(&a);
    gc_op_free(&b);
}

static void test_dropout_p_edges(void **state)
{
    (void)state;
    gc_op g;
    float *x, *y, *mask;
    dropout_op(&g, 512, 0.0f, 3, &x, &y, &mask);
    gc_fill(x, 512, 2, -5.0, 5.0);
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_memory_equal(x, y, 512 * sizeof *x); /* p = 0: identity */
    for (int i = 0; i < 512; i++)
        assert_float_equal(mask[i], 1.0f, 0.0f);

    g.op.attrs.dropout_p = 1.0f;
    assert_int_equal(gc_run(&g), XPB_OK);
    for (int i = 0; i < 512; i++) { /* p = 1: zeros, never inf or NaN */
        assert_float_equal(y[i], 0.0f, 0.0f);
        assert_float_equal(mask[i], 0.0f, 0.0f);
    }
    gc_op_free(&g);
}

static void test_dropout_bwd(void **state)
{
    (void)state;
    gc_op f, b;
    float *x, *y, *mask;
    dropout_op(&f, 200, 0.4f, 99, &x, &y, &mask);
    f.call_index = 5;
    gc_fill(x, 200, 3, -2.0, 2.0);
    assert_int_equal(gc_run(&f), XPB_OK);

    gc_op_init(&b, XPB_OP_DROPOUT_BWD, &(xpb_op_attrs){.dropout_p = 0.4f});
    float *dy = gc_in(&b, 1, (int64_t[]){200});
    memcpy(gc_in(&b, 1, (int64_t[]){200}), mask, 200 * sizeof *mask);
    float *dx = gc_out(&b, 1, (int64_t[]){200});
    gc_fill(dy, 200, 4, -1.0, 1.0);
    assert_int_equal(gc_run(&b), XPB_OK);
    double want[200];
    for (int i = 0; i < 200; i++)
        want[i] = (double)(dy[i] * mask[i]);
    assert_true(gc_allclose(dx, want, 200, 0.0, 0.0, "dropout dx exact"));
    /* The forward op reruns with the same call_index, hence the same mask. */
    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 1e-2, 1e-4, 1e-4, "dropout dx"));
    gc_op_free(&f);
    gc_op_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dropout_bit_exact),   cmocka_unit_test(test_dropout_statistics),
        cmocka_unit_test(test_dropout_determinism), cmocka_unit_test(test_dropout_p_edges),
        cmocka_unit_test(test_dropout_bwd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

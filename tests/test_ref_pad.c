/* Reference kernels: REFLECTION_PAD against hand-computed values and a direct loop, its
 * backward op against finite differences. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* PyTorch's ReflectionPad2d((2, 2, 1, 1)) of [[1 2 3], [4 5 6]]:
 *   6 5 4 5 6 5 4
 *   3 2 1 2 3 2 1
 *   6 5 4 5 6 5 4
 *   3 2 1 2 3 2 1 */
static void test_reflection_pad_hand_computed(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.pad[0] = 1;
    at.pad[1] = 2;
    gc_op f;
    gc_op_init(&f, XPB_OP_REFLECTION_PAD, &at);
    float *x = gc_in(&f, 4, (int64_t[]){1, 1, 2, 3});
    float *y = gc_out(&f, 4, (int64_t[]){1, 1, 4, 7});
    for (int i = 0; i < 6; i++)
        x[i] = (float)(i + 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    const double want[28] = {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1,
                             6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1};
    assert_true(gc_allclose(y, want, 28, 0, 0, "reflection pad hand-computed"));

    /* backward of all ones: how many times each input element was copied */
    gc_op b;
    gc_op_init(&b, XPB_OP_REFLECTION_PAD_BWD, &at);
    float *dy = gc_in(&b, 4, (int64_t[]){1, 1, 4, 7});
    float *dx = gc_out(&b, 4, (int64_t[]){1, 1, 2, 3});
    for (int i = 0; i < 28; i++)
        dy[i] = 1.0f;
    assert_int_equal(gc_run(&b), XPB_OK);
    const double counts[6] = {4, 6, 4, 4, 6, 4};
    assert_true(gc_allclose(dx, counts, 6, 0, 0, "reflection pad backward counts"));
    gc_op_free(&f);
    gc_op_free(&b);
}

static int64_t reflect_index(int64_t i, int64_t n)
{
    if (i < 0)
        i = -i;
    if (i > n - 1)
        i = 2 * (n - 1) - i;
    return i;
}

static void run_pad_case(int64_t n, int64_t c, int64_t h, int64_t w, int32_t ph, int32_t pw,
                         uint64_t seed)
{
    xpb_op_attrs at = {0};
    at.pad[0] = ph;
    at.pad[1] = pw;
    int64_t oh = h + 2 * ph, ow = w + 2 * pw;
    int64_t xd[4] = {n, c, h, w}, yd[4] = {n, c, oh, ow};
    gc_op f, b;
    gc_op_init(&f, XPB_OP_REFLECTION_PAD, &at);
    float *x = gc_in(&f, 4, xd);
    float *y = gc_out(&f, 4, yd);
    gc_fill(x, n * c * h * w, seed, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    int64_t ny = n * c * oh * ow;
    double *want = malloc(sizeof(double) * (size_t)ny);
    assert_non_null(want);
    for (int64_t p = 0; p < n * c; p++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                want[(p * oh + i) * ow + j] =
                    x[(p * h + reflect_index(i - ph, h)) * w + reflect_index(j - pw, w)];
    assert_true(gc_allclose(y, want, ny, 0, 0, "reflection pad forward"));

    gc_op_init(&b, XPB_OP_REFLECTION_PAD_BWD, &at);
    float *dy = gc_in(&b, 4, yd);
    gc_out(&b, 4, xd);
    gc_fill(dy, ny, seed + 1, -1, 1);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, b.out[0], 1e-2, 1e-4, 1e-4, "reflection pad dx"));
    free(want);
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_reflection_pad_cases(void **state)
{
    (void)state;
    run_pad_case(1, 3, 5, 7, 1, 1, 600); /* residual blocks' pad 1 */
    run_pad_case(2, 2, 5, 7, 3, 3, 610); /* CycleGAN's pad 3 */
    run_pad_case(1, 1, 4, 6, 3, 5, 620); /* pad = size - 1: the largest allowed */
    run_pad_case(1, 2, 3, 3, 0, 2, 630); /* no padding on one axis */
}

static void test_reflection_pad_check_messages(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.pad[0] = at.pad[1] = 3;
    gc_op f;
    gc_op_init(&f, XPB_OP_REFLECTION_PAD, &at);
    f.op.layer = "gen.pad0";
    gc_in(&f, 4, (int64_t[]){1, 3, 3, 7});
    gc_out(&f, 4, (int64_t[]){1, 3, 9, 13});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT); /* pad 3 on a 3-row plane */
    assert_non_null(strstr(f.err, "REFLECTION_PAD (layer 'gen.pad0')"));
    assert_non_null(strstr(f.err, "smaller"));
    f.in_desc[0].dims[2] = 4;
    f.out_desc[0].dims[2] = 10;
    assert_int_equal(gc_check(&f), XPB_OK);
    f.out_desc[0].dims[3] = 12;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "must be [1, 3, 10, 13], found [1, 3, 10, 12]"));
    gc_op_free(&f);

    gc_op_init(&f, XPB_OP_REFLECTION_PAD_BWD, &at);
    gc_in(&f, 4, (int64_t[]){1, 3, 10, 12});
    gc_out(&f, 4, (int64_t[]){1, 3, 4, 7});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "input dy"));
    gc_op_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reflection_pad_hand_computed),
        cmocka_unit_test(test_reflection_pad_cases),
        cmocka_unit_test(test_reflection_pad_check_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Reference kernels: MAXPOOL (values, ws_index, ties), AVGPOOL (both count_include_pad
 * modes) and GLOBAL_AVGPOOL against direct loops over an explicitly padded image, and every
 * backward op against finite differences of its forward op. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

typedef struct pool_case {
    int64_t n, c, h, w;
    int32_t kh, kw, sh, sw, ph, pw;
} pool_case;

static xpb_op_attrs pool_attrs(const pool_case *pc, int count_include_pad)
{
    xpb_op_attrs at = {0};
    at.kernel[0] = pc->kh;
    at.kernel[1] = pc->kw;
    at.stride[0] = pc->sh;
    at.stride[1] = pc->sw;
    at.pad[0] = pc->ph;
    at.pad[1] = pc->pw;
    at.count_include_pad = count_include_pad;
    return at;
}

static int64_t pool_out(const pool_case *pc, int d)
{
    int64_t in = d ? pc->w : pc->h, k = d ? pc->kw : pc->kh;
    int64_t s = d ? pc->sw : pc->sh, p = d ? pc->pw : pc->ph;
    return (in + 2 * p - k) / s + 1;
}

/* Distinct values (multiples of 0.01, shuffled): no ties, gaps far above the FD step. */
static void fill_distinct(float *x, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)((double)(i - n / 2) * 0.01);
    uint64_t s = seed;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(gc_rng_next(&s) % (uint64_t)(i + 1));
        float t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}

/* One plane padded with `fill` into a (h + 2ph) x (w + 2pw) buffer; inside[] marks real
 * pixels. The caller owns both buffers. */
static void pad_plane(const pool_case *pc, const float *plane, double fill, double *padded,
                      int *inside)
{
    int64_t hp = pc->h + 2 * pc->ph, wp = pc->w + 2 * pc->pw;
    for (int64_t i = 0; i < hp; i++)
        for (int64_t j = 0; j < wp; j++) {
            int64_t si = i - pc->ph, sj = j - pc->pw;
            int in = si >= 0 && si < pc->h && sj >= 0 && sj < pc->w;
            padded[i * wp + j] = in ? plane[si * pc->w + sj] : fill;
            inside[i * wp + j] = in;
        }
}

/* Direct pooling over the padded image. mode 0: max (and its index), 1: average over the
 * full window, 2: average over the real pixels of the window. */
static void direct_pool(const pool_case *pc, const float *x, int mode, double *y, int32_t *idx)
{
    int64_t oh = pool_out(pc, 0), ow = pool_out(pc, 1);
    int64_t hp = pc->h + 2 * pc->ph, wp = pc->w + 2 * pc->pw;
    double *padded = malloc(sizeof(double) * (size_t)(hp * wp));
    int *inside = malloc(sizeof(int) * (size_t)(hp * wp));
    assert_non_null(padded);
    assert_non_null(inside);
    for (int64_t p = 0; p < pc->n * pc->c; p++) {
        pad_plane(pc, x + p * pc->h * pc->w, mode == 0 ? -INFINITY : 0.0, padded, inside);
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double best = -INFINITY, sum = 0.0;
                int64_t best_at = -1, count = 0;
                for (int64_t u = 0; u < pc->kh; u++)
                    for (int64_t v = 0; v < pc->kw; v++) {
                        int64_t r = i * pc->sh + u, c = j * pc->sw + v;
                        double val = padded[r * wp + c];
                        if (inside[r * wp + c] && (best_at < 0 || val > best)) {
                            best = val;
                            best_at = (r - pc->ph) * pc->w + (c - pc->pw);
                        }
                        sum += val;
                        count += inside[r * wp + c];
                    }
                int64_t o = (p * oh + i) * ow + j;
                if (mode == 0) {
                    y[o] = best;
                    idx[o] = (int32_t)best_at;
                } else {
                    y[o] = sum / (double)(mode == 1 ? pc->kh * pc->kw : count);
                }
            }
    }
    free(padded);
    free(inside);
}

static const pool_case pool_cases[] = {
    /* n  c  h  w kh kw sh sw ph pw */
    {1, 3, 5, 7, 3, 3, 2, 2, 1, 1}, /* ResNet's stem pool on an odd image */
    {2, 2, 6, 6, 2, 2, 2, 2, 0, 0}, /* the classifiers' 2x2 pool */
    {1, 2, 5, 7, 3, 2, 1, 2, 1, 1}, /* overlapping rows, asymmetric */
    {1, 1, 4, 5, 4, 5, 1, 1, 2, 2}, /* windows hanging over every edge */
};

static void run_maxpool_case(const pool_case *pc, uint64_t seed)
{
    xpb_op_attrs at = pool_attrs(pc, 0);
    int64_t xd[4] = {pc->n, pc->c, pc->h, pc->w};
    int64_t yd[4] = {pc->n, pc->c, pool_out(pc, 0), pool_out(pc, 1)};
    gc_op f, b;
    gc_op_init(&f, XPB_OP_MAXPOOL, &at);
    float *x = gc_in(&f, 4, xd);
    float *y = gc_out(&f, 4, yd);
    int32_t *idx = gc_out_i32(&f, 4, yd);
    fill_distinct(x, gc_in_numel(&f, 0), seed);
    assert_int_equal(gc_run(&f), XPB_OK);
    int64_t ny = gc_out_numel(&f, 0);
    double *want = malloc(sizeof(double) * (size_t)ny);
    int32_t *want_idx = malloc(sizeof(int32_t) * (size_t)ny);
    assert_non_null(want);
    assert_non_null(want_idx);
    direct_pool(pc, x, 0, want, want_idx);
    assert_true(gc_allclose(y, want, ny, 0, 0, "maxpool forward"));
    assert_memory_equal(idx, want_idx, sizeof(int32_t) * (size_t)ny);

    gc_op_init(&b, XPB_OP_MAXPOOL_BWD, &at);
    float *dy = gc_in(&b, 4, yd);
    memcpy(gc_in_i32(&b, 4, yd), idx, sizeof(int32_t) * (size_t)ny);
    gc_out(&b, 4, xd);
    gc_fill(dy, ny, seed + 1, -1, 1);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, b.out[0], 1e-3, 1e-4, 1e-4, "maxpool dx"));
    free(want);
    free(want_idx);
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_maxpool_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++)
        run_maxpool_case(&pool_cases[i], 300 + i);
}

/* Ties pick the first maximum in row-major window order; all-equal negative windows that hang
 * over the padding pick their first real pixel (padding is -inf, never chosen). */
static void test_maxpool_ties(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.kernel[0] = at.kernel[1] = 2;
    at.stride[0] = at.stride[1] = 2;
    gc_op f;
    gc_op_init(&f, XPB_OP_MAXPOOL, &at);
    float *x = gc_in(&f, 4, (int64_t[]){1, 1, 2, 4});
    float *y = gc_out(&f, 4, (int64_t[]){1, 1, 1, 2});
    int32_t *idx = gc_out_i32(&f, 4, (int64_t[]){1, 1, 1, 2});
    const float xv[8] = {1, 3, 0, 0, 3, 3, 0, 0};
    memcpy(x, xv, sizeof xv);
    assert_int_equal(gc_run(&f), XPB_OK);
    assert_true(y[0] == 3.0f && y[1] == 0.0f);
    assert_int_equal(idx[0], 1); /* 3 at (0,1) before (1,0) and (1,1) */
    assert_int_equal(idx[1], 2); /* all zero: the first, (0,2) */
    gc_op_free(&f);

    /* 3x3 stride 2 pad 1 on a 3x3 plane of -5: every window starts in the padding */
    at.kernel[0] = at.kernel[1] = 3;
    at.pad[0] = at.pad[1] = 1;
    gc_op_init(&f, XPB_OP_MAXPOOL, &at);
    x = gc_in(&f, 4, (int64_t[]){1, 1, 3, 3});
    y = gc_out(&f, 4, (int64_t[]){1, 1, 2, 2});
    idx = gc_out_i32(&f, 4, (int64_t[]){1, 1, 2, 2});
    for (int i = 0; i < 9; i++)
        x[i] = -5.0f;
    assert_int_equal(gc_run(&f), XPB_OK);
    const int32_t want_idx[4] = {0, 1, 3, 4};
    for (int i = 0; i < 4; i++) {
        assert_true(y[i] == -5.0f);
        assert_int_equal(idx[i], want_idx[i]);
    }

    /* backward of the tie: the whole gradient goes to the chosen element, overlaps add */
    gc_op b;
    gc_op_init(&b, XPB_OP_MAXPOOL_BWD, &at);
    float *dy = gc_in(&b, 4, (int64_t[]){1, 1, 2, 2});
    memcpy(gc_in_i32(&b, 4, (int64_t[]){1, 1, 2, 2}), idx, sizeof want_idx);
    float *dx = gc_out(&b, 4, (int64_t[]){1, 1, 3, 3});
    dy[0] = 1, dy[1] = 2, dy[2] = 4, dy[3] = 8;
    assert_int_equal(gc_run(&b), XPB_OK);
    const double want_dx[9] = {1, 2, 0, 4, 8, 0, 0, 0, 0};
    assert_true(gc_allclose(dx, want_dx, 9, 0, 0, "maxpool tie backward"));
    gc_op_free(&f);
    gc_op_free(&b);
}

/* A corrupt ws_index is reported, not written out of bounds. */
static void test_maxpool_bwd_bad_index(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.kernel[0] = at.kernel[1] = 2;
    at.stride[0] = at.stride[1] = 2;
    gc_op b;
    gc_op_init(&b, XPB_OP_MAXPOOL_BWD, &at);
    b.op.layer = "pool1";
    gc_in(&b, 4, (int64_t[]){1, 1, 1, 1});
    int32_t *idx = gc_in_i32(&b, 4, (int64_t[]){1, 1, 1, 1});
    gc_out(&b, 4, (int64_t[]){1, 1, 2, 2});
    idx[0] = 4;
    assert_int_equal(gc_run(&b), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(b.err, "pool1"));
    gc_op_free(&b);
}

static void run_avgpool_case(const pool_case *pc, int count_include_pad, uint64_t seed)
{
    xpb_op_attrs at = pool_attrs(pc, count_include_pad);
    int64_t xd[4] = {pc->n, pc->c, pc->h, pc->w};
    int64_t yd[4] = {pc->n, pc->c, pool_out(pc, 0), pool_out(pc, 1)};
    char what[64];
    gc_op f, b;
    gc_op_init(&f, XPB_OP_AVGPOOL, &at);
    float *x = gc_in(&f, 4, xd);
    float *y = gc_out(&f, 4, yd);
    gc_fill(x, gc_in_numel(&f, 0), seed, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    int64_t ny = gc_out_numel(&f, 0);
    double *want = malloc(sizeof(double) * (size_t)ny);
    assert_non_null(want);
    direct_pool(pc, x, count_include_pad ? 1 : 2, want, NULL);
    snprintf(what, sizeof what, "avgpool forward (count_include_pad %d)", count_include_pad);
    assert_true(gc_allclose(y, want, ny, 1e-6, 1e-6, what));

    gc_op_init(&b, XPB_OP_AVGPOOL_BWD, &at);
    float *dy = gc_in(&b, 4, yd);
    gc_out(&b, 4, xd);
    gc_fill(dy, ny, seed + 1, -1, 1);
    assert_int_equal(gc_run(&b), XPB_OK);
    snprintf(what, sizeof what, "avgpool dx (count_include_pad %d)", count_include_pad);
    assert_true(gc_gradcheck(&f, 0, dy, 0, b.out[0], 0.25, 1e-4, 1e-4, what));
    free(want);
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_avgpool_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++) {
        run_avgpool_case(&pool_cases[i], 1, 400 + i);
        run_avgpool_case(&pool_cases[i], 0, 500 + i);
    }
}

/* 3x3 pad 1 on [1 2; 3 4]: the top-left window holds the 4 pixels: 10/9 or 10/4. */
static void test_avgpool_hand_computed(void **state)
{
    (void)state;
    for (int cip = 0; cip < 2; cip++) {
        xpb_op_attrs at = {0};
        at.kernel[0] = at.kernel[1] = 3;
        at.stride[0] = at.stride[1] = 2;
        at.pad[0] = at.pad[1] = 1;
        at.count_include_pad = cip;
        gc_op f;
        gc_op_init(&f, XPB_OP_AVGPOOL, &at);
        float *x = gc_in(&f, 4, (int64_t[]){1, 1, 2, 2});
        float *y = gc_out(&f, 4, (int64_t[]){1, 1, 1, 1});
        x[0] = 1, x[1] = 2, x[2] = 3, x[3] = 4;
        assert_int_equal(gc_run(&f), XPB_OK);
        const double want = cip ? 10.0 / 9.0 : 10.0 / 4.0;
        assert_true(gc_allclose(y, &want, 1, 1e-7, 0, "avgpool hand-computed"));
        gc_op_free(&f);
    }
}

static void test_global_avgpool(void **state)
{
    (void)state;
    int64_t xd[4] = {2, 3, 5, 7}, yd[4] = {2, 3, 1, 1};
    gc_op f, b;
    gc_op_init(&f, XPB_OP_GLOBAL_AVGPOOL, NULL);
    float *x = gc_in(&f, 4, xd);
    float *y = gc_out(&f, 4, yd);
    gc_fill(x, 210, 77, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    double want[6];
    for (int p = 0; p < 6; p++) {
        double s = 0;
        for (int i = 0; i < 35; i++)
            s += x[p * 35 + i];
        want[p] = s / 35.0;
    }
    assert_true(gc_allclose(y, want, 6, 1e-7, 1e-6, "global avgpool forward"));

    gc_op_init(&b, XPB_OP_GLOBAL_AVGPOOL_BWD, NULL);
    float *dy = gc_in(&b, 4, yd);
    gc_out(&b, 4, xd);
    gc_fill(dy, 6, 78, -1, 1);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, b.out[0], 0.25, 1e-4, 1e-4, "global avgpool dx"));
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_pool_check_messages(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.kernel[0] = at.kernel[1] = 3;
    at.stride[0] = at.stride[1] = 2;
    at.pad[0] = at.pad[1] = 2; /* more than half the kernel */
    gc_op f;
    gc_op_init(&f, XPB_OP_MAXPOOL, &at);
    f.op.layer = "pool1";
    gc_in(&f, 4, (int64_t[]){1, 3, 5, 7});
    gc_out(&f, 4, (int64_t[]){1, 3, 3, 4});
    gc_out_i32(&f, 4, (int64_t[]){1, 3, 3, 4});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "MAXPOOL (layer 'pool1')"));
    assert_non_null(strstr(f.err, "pad"));
    f.op.attrs.pad[0] = f.op.attrs.pad[1] = 1;
    assert_int_equal(gc_check(&f), XPB_OK);
    f.out_desc[1].dtype = XPB_DTYPE_F32; /* ws_index must be I32 */
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "ws_index"));
    f.out_desc[1].dtype = XPB_DTYPE_I32;
    f.out_desc[0].dims[2] = 2;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "must be [1, 3, 3, 4], found [1, 3, 2, 4]"));
    gc_op_free(&f);

    /* ws_index is optional (inference programs) */
    gc_op_init(&f, XPB_OP_MAXPOOL, &at);
    f.op.attrs.pad[0] = f.op.attrs.pad[1] = 1;
    gc_in(&f, 4, (int64_t[]){1, 3, 5, 7});
    gc_out(&f, 4, (int64_t[]){1, 3, 3, 4});
    assert_int_equal(gc_run(&f), XPB_OK);
    gc_op_free(&f);

    gc_op_init(&f, XPB_OP_GLOBAL_AVGPOOL, NULL);
    gc_in(&f, 4, (int64_t[]){2, 3, 5, 7});
    gc_out(&f, 2, (int64_t[]){2, 3});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "must be [2, 3, 1, 1], found [2, 3]"));
    gc_op_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maxpool_cases),         cmocka_unit_test(test_maxpool_ties),
        cmocka_unit_test(test_maxpool_bwd_bad_index), cmocka_unit_test(test_avgpool_cases),
        cmocka_unit_test(test_avgpool_hand_computed), cmocka_unit_test(test_global_avgpool),
        cmocka_unit_test(test_pool_check_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

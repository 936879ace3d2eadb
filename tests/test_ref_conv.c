/* Reference kernels: ref_gemm against a naive triple loop, CONV2D and CONV_T2D forward
 * against hand-computed values and direct loops, and every backward op against finite
 * differences of its forward op. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* ---- ref_gemm ---- */

/* want[i][j] = alpha * sum_p op(A)[i][p] op(B)[p][j] + beta * c0[i][j], in double. */
static void naive_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, double beta,
                       const float *c0, int64_t ldc, double *want)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double sum = 0.0;
            for (int64_t p = 0; p < k; p++) {
                double av = ta ? a[p * lda + i] : a[i * lda + p];
                double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
                sum += av * bv;
            }
            double prev = beta == 0.0 ? 0.0 : beta * c0[i * ldc + j];
            want[i * n + j] = alpha * sum + prev;
        }
}

/* One gemm with padded leading dimensions; C's padding columns must stay untouched. */
static void check_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, float beta)
{
    int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
    int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
    int64_t lda = a_cols + 3, ldb = b_cols + 1, ldc = n + 2;
    float *a = malloc(sizeof(float) * (size_t)(a_rows * lda));
    float *b = malloc(sizeof(float) * (size_t)(b_rows * ldb));
    float *c = malloc(sizeof(float) * (size_t)(m * ldc));
    float *c0 = malloc(sizeof(float) * (size_t)(m * ldc));
    double *want = malloc(sizeof(double) * (size_t)(m * n));
    float *got = malloc(sizeof(float) * (size_t)(m * n));
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_non_null(c0);
    assert_non_null(want);
    assert_non_null(got);
    gc_fill(a, a_rows * lda, 11 + (uint64_t)m, -1, 1);
    gc_fill(b, b_rows * ldb, 23 + (uint64_t)n, -1, 1);
    gc_fill(c0, m * ldc, 37 + (uint64_t)k, -1, 1);
    if (beta == 0.0f)
        for (int64_t i = 0; i < m; i++)
            c0[i * ldc] = NAN; /* beta 0 must overwrite, not multiply */
    memcpy(c, c0, sizeof(float) * (size_t)(m * ldc));

    ref_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    naive_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c0, ldc, want);

    for (int64_t i = 0; i < m; i++) {
        memcpy(got + i * n, c + i * ldc, sizeof(float) * (size_t)n);
        for (int64_t j = n; j < ldc; j++)
            assert_memory_equal(&c[i * ldc + j], &c0[i * ldc + j], sizeof(float));
    }
    char what[128];
    snprintf(what, sizeof what, "gemm ta %d tb %d m %lld n %lld k %lld beta %g", ta, tb,
             (long long)m, (long long)n, (long long)k, (double)beta);
    assert_true(gc_allclose(got, want, m * n, 1e-5 * (double)k, 1e-5, what));
    free(a);
    free(b);
    free(c);
    free(c0);
    free(want);
    free(got);
}

static void test_gemm_all_transposes(void **state)
{
    (void)state;
    /* sizes below, at and across the block sizes (64 x 128 x 64) */
    static const int64_t sizes[][3] = {{1, 1, 1},      {5, 7, 3},     {3, 1, 9},
                                       {70, 133, 130}, {64, 128, 64}, {129, 3, 65}};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                check_gemm(ta, tb, sizes[s][0], sizes[s][1], sizes[s][2], 1.0f, 0.0f);
                check_gemm(ta, tb, sizes[s][0], sizes[s][1], sizes[s][2], -1.5f, 0.5f);
            }
}

static void test_gemm_k_zero_scales_c(void **state)
{
    (void)state;
    float c[4] = {1, 2, 3, 4};
    float dummy = 0;
    ref_gemm(0, 0, 2, 2, 0, 1.0f, &dummy, 1, &dummy, 2, 2.0f, c, 2);
    assert_true(c[0] == 2.0f && c[1] == 4.0f && c[2] == 6.0f && c[3] == 8.0f);
}

/* ---- convolutions ---- */

typedef struct conv_case {
    int64_t n, c, h, w; /* x */
    int64_t k, kh, kw;  /* output channels, kernel */
    int32_t sh, sw, ph, pw, dh, dw, oph, opw;
    int bias;
} conv_case;

static xpb_op_attrs conv_attrs(const conv_case *cc)
{
    xpb_op_attrs at = {0};
    at.stride[0] = cc->sh;
    at.stride[1] = cc->sw;
    at.pad[0] = cc->ph;
    at.pad[1] = cc->pw;
    at.dilation[0] = cc->dh;
    at.dilation[1] = cc->dw;
    at.output_padding[0] = cc->oph;
    at.output_padding[1] = cc->opw;
    return at;
}

/* Output size of the case along one dim (conv2d or transposed). */
static int64_t out_size(const conv_case *cc, int transposed, int d)
{
    int64_t in = d ? cc->w : cc->h, k = d ? cc->kw : cc->kh;
    int64_t s = d ? cc->sw : cc->sh, p = d ? cc->pw : cc->ph, dil = d ? cc->dw : cc->dh;
    int64_t op = d ? cc->opw : cc->oph;
    if (transposed)
        return (in - 1) * s - 2 * p + dil * (k - 1) + op + 1;
    return (in + 2 * p - dil * (k - 1) - 1) / s + 1;
}

/* y = conv2d(x, w) + b by the definition, in double. */
static void direct_conv2d(const conv_case *cc, const float *x, const float *w, const float *b,
                          int64_t oh, int64_t ow, double *y)
{
    for (int64_t n = 0; n < cc->n; n++)
        for (int64_t k = 0; k < cc->k; k++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double sum = b ? b[k] : 0.0;
                    for (int64_t c = 0; c < cc->c; c++)
                        for (int64_t u = 0; u < cc->kh; u++)
                            for (int64_t v = 0; v < cc->kw; v++) {
                                int64_t ih = i * cc->sh - cc->ph + u * cc->dh;
                                int64_t iw = j * cc->sw - cc->pw + v * cc->dw;
                                if (ih < 0 || ih >= cc->h || iw < 0 || iw >= cc->w)
                                    continue;
                                sum += (double)w[((k * cc->c + c) * cc->kh + u) * cc->kw + v] *
                                       x[((n * cc->c + c) * cc->h + ih) * cc->w + iw];
                            }
                    y[((n * cc->k + k) * oh + i) * ow + j] = sum;
                }
}

/* y = conv_transpose2d(x, w[C,K,kh,kw]) + b by the scatter definition, in double. */
static void direct_conv_t2d(const conv_case *cc, const float *x, const float *w, const float *b,
                            int64_t oh, int64_t ow, double *y)
{
    for (int64_t n = 0; n < cc->n; n++)
        for (int64_t k = 0; k < cc->k; k++)
            for (int64_t i = 0; i < oh * ow; i++)
                y[(n * cc->k + k) * oh * ow + i] = b ? b[k] : 0.0;
    for (int64_t n = 0; n < cc->n; n++)
        for (int64_t c = 0; c < cc->c; c++)
            for (int64_t h = 0; h < cc->h; h++)
                for (int64_t wi = 0; wi < cc->w; wi++)
                    for (int64_t k = 0; k < cc->k; k++)
                        for (int64_t u = 0; u < cc->kh; u++)
                            for (int64_t v = 0; v < cc->kw; v++) {
                                int64_t yh = h * cc->sh - cc->ph + u * cc->dh;
                                int64_t yw = wi * cc->sw - cc->pw + v * cc->dw;
                                if (yh < 0 || yh >= oh || yw < 0 || yw >= ow)
                                    continue;
                                y[((n * cc->k + k) * oh + yh) * ow + yw] +=
                                    (double)x[((n * cc->c + c) * cc->h + h) * cc->w + wi] *
                                    w[((c * cc->k + k) * cc->kh + u) * cc->kw + v];
                            }
}

/* Forward against the direct loop; backward data / weights / bias against finite differences
 * of the forward op. */
static void run_conv_case(const conv_case *cc, int transposed, uint64_t seed)
{
    xpb_op_attrs at = conv_attrs(cc);
    int64_t oh = out_size(cc, transposed, 0), ow = out_size(cc, transposed, 1);
    int64_t xdims[4] = {cc->n, cc->c, cc->h, cc->w};
    int64_t ydims[4] = {cc->n, cc->k, oh, ow};
    int64_t wdims[4] = {transposed ? cc->c : cc->k, transposed ? cc->k : cc->c, cc->kh, cc->kw};
    int64_t bdims[1] = {cc->k};
    char what[160];
    const char *name = transposed ? "conv_t2d" : "conv2d";

    gc_op f;
    gc_op_init(&f, transposed ? XPB_OP_CONV_T2D : XPB_OP_CONV2D, &at);
    float *x = gc_in(&f, 4, xdims);
    float *w = gc_in(&f, 4, wdims);
    float *b = cc->bias ? gc_in(&f, 1, bdims) : NULL;
    float *y = gc_out(&f, 4, ydims);
    gc_fill(x, gc_in_numel(&f, 0), seed, -1, 1);
    gc_fill(w, gc_in_numel(&f, 1), seed + 1, -1, 1);
    if (b)
        gc_fill(b, cc->k, seed + 2, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);

    int64_t ny = gc_out_numel(&f, 0);
    double *want = malloc(sizeof(double) * (size_t)ny);
    assert_non_null(want);
    if (transposed)
        direct_conv_t2d(cc, x, w, b, oh, ow, want);
    else
        direct_conv2d(cc, x, w, b, oh, ow, want);
    snprintf(what, sizeof what, "%s forward", name);
    assert_true(gc_allclose(y, want, ny, 1e-5, 1e-5, what));
    free(want);

    /* backward data: dy, w -> dx */
    gc_op bd;
    gc_op_init(&bd, transposed ? XPB_OP_CONV_T2D_BWD_DATA : XPB_OP_CONV2D_BWD_DATA, &at);
    float *dy = gc_in(&bd, 4, ydims);
    memcpy(gc_in(&bd, 4, wdims), w, sizeof(float) * (size_t)gc_in_numel(&f, 1));
    gc_out(&bd, 4, xdims);
    gc_fill(dy, ny, seed + 3, -1, 1);
    assert_int_equal(gc_run(&bd), XPB_OK);
    snprintf(what, sizeof what, "%s dx", name);
    assert_true(gc_gradcheck(&f, 0, dy, 0, bd.out[0], 0.25, 1e-4, 1e-4, what));

    /* backward weights: dy, x -> dw [, db] */
    gc_op bw;
    gc_op_init(&bw, transposed ? XPB_OP_CONV_T2D_BWD_WEIGHTS : XPB_OP_CONV2D_BWD_WEIGHTS, &at);
    memcpy(gc_in(&bw, 4, ydims), dy, sizeof(float) * (size_t)ny);
    memcpy(gc_in(&bw, 4, xdims), x, sizeof(float) * (size_t)gc_in_numel(&f, 0));
    gc_out(&bw, 4, wdims);
    if (b)
        gc_out(&bw, 1, bdims);
    assert_int_equal(gc_run(&bw), XPB_OK);
    snprintf(what, sizeof what, "%s dw", name);
    assert_true(gc_gradcheck(&f, 0, dy, 1, bw.out[0], 0.25, 1e-4, 1e-4, what));
    if (b) {
        snprintf(what, sizeof what, "%s db", name);
        assert_true(gc_gradcheck(&f, 0, dy, 2, bw.out[1], 0.25, 1e-4, 1e-4, what));
    }

    gc_op_free(&f);
    gc_op_free(&bd);
    gc_op_free(&bw);
}

static const conv_case conv2d_cases[] = {
    /* n  c  h  w  k kh kw sh sw ph pw dh dw oph opw bias */
    {1, 3, 5, 7, 4, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1}, /* odd image, stride 2, pad 1 */
    {2, 3, 5, 7, 2, 3, 2, 1, 2, 2, 1, 2, 1, 0, 0, 1}, /* dilation 2, asymmetric attrs */
    {1, 3, 5, 7, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0}, /* 1x1, no bias */
    {2, 2, 6, 5, 3, 2, 3, 2, 1, 0, 1, 2, 2, 0, 0, 1}, /* even kernel, dilation 2 */
    {1, 1, 4, 4, 1, 4, 4, 1, 1, 0, 0, 1, 1, 0, 0, 1}, /* kernel = image: 1x1 output */
};

static const conv_case conv_t2d_cases[] = {
    /* n  c  h  w  k kh kw sh sw ph pw dh dw oph opw bias */
    {1, 3, 5, 7, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, /* CycleGAN's upsampling shape */
    {2, 2, 3, 4, 3, 3, 2, 2, 1, 1, 0, 2, 2, 1, 1, 1}, /* dilation 2, output_padding < dil */
    {1, 3, 5, 7, 2, 4, 4, 2, 2, 1, 1, 1, 1, 0, 0, 0}, /* even kernel, no bias */
    {1, 2, 3, 3, 2, 1, 1, 3, 2, 0, 0, 1, 1, 2, 1, 1}, /* 1x1 kernel leaves gaps */
};

static void test_conv2d_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conv2d_cases / sizeof conv2d_cases[0]; i++)
        run_conv_case(&conv2d_cases[i], 0, 100 + 10 * i);
}

static void test_conv_t2d_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conv_t2d_cases / sizeof conv_t2d_cases[0]; i++)
        run_conv_case(&conv_t2d_cases[i], 1, 200 + 10 * i);
}

/* 1x1x3x3 image 1..9, 2x2 kernel [1 2; 3 4], bias 0.5, stride 1:
 * y = [1+4+12+20, 2+6+15+24, 4+10+21+32, 5+12+24+36] + 0.5 = [37.5, 47.5, 67.5, 77.5]. */
static void test_conv2d_hand_computed(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.stride[0] = at.stride[1] = 1;
    at.dilation[0] = at.dilation[1] = 1;
    gc_op f;
    gc_op_init(&f, XPB_OP_CONV2D, &at);
    float *x = gc_in(&f, 4, (int64_t[]){1, 1, 3, 3});
    float *w = gc_in(&f, 4, (int64_t[]){1, 1, 2, 2});
    float *b = gc_in(&f, 1, (int64_t[]){1});
    float *y = gc_out(&f, 4, (int64_t[]){1, 1, 2, 2});
    for (int i = 0; i < 9; i++)
        x[i] = (float)(i + 1);
    for (int i = 0; i < 4; i++)
        w[i] = (float)(i + 1);
    b[0] = 0.5f;
    assert_int_equal(gc_run(&f), XPB_OK);
    const double want[4] = {37.5, 47.5, 67.5, 77.5};
    assert_true(gc_allclose(y, want, 4, 0, 0, "conv2d hand-computed"));
    gc_op_free(&f);
}

/* Transposed 2x2 stride 2: each input pixel becomes a 2x2 block scaled by w; with pad 1 and
 * output_padding 1 the outer ring is cut on top/left and one row/col kept at the bottom/right.
 * x = [1 2; 3 4], w = [1 10; 100 1000], stride 2, pad 0 -> 4x4 blocks. */
static void test_conv_t2d_hand_computed(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.stride[0] = at.stride[1] = 2;
    at.dilation[0] = at.dilation[1] = 1;
    gc_op f;
    gc_op_init(&f, XPB_OP_CONV_T2D, &at);
    float *x = gc_in(&f, 4, (int64_t[]){1, 1, 2, 2});
    float *w = gc_in(&f, 4, (int64_t[]){1, 1, 2, 2});
    float *y = gc_out(&f, 4, (int64_t[]){1, 1, 4, 4});
    x[0] = 1, x[1] = 2, x[2] = 3, x[3] = 4;
    w[0] = 1, w[1] = 10, w[2] = 100, w[3] = 1000;
    assert_int_equal(gc_run(&f), XPB_OK);
    const double want[16] = {1, 10, 2, 20, 100, 1000, 200, 2000,
                             3, 30, 4, 40, 300, 3000, 400, 4000};
    assert_true(gc_allclose(y, want, 16, 0, 0, "conv_t2d hand-computed"));
    gc_op_free(&f);

    /* pad 1, output_padding 1: OH = (2-1)*2 - 2 + 1 + 1 + 1 = 3, rows/cols 1..3 of the above */
    at.pad[0] = at.pad[1] = 1;
    at.output_padding[0] = at.output_padding[1] = 1;
    gc_op_init(&f, XPB_OP_CONV_T2D, &at);
    x = gc_in(&f, 4, (int64_t[]){1, 1, 2, 2});
    w = gc_in(&f, 4, (int64_t[]){1, 1, 2, 2});
    y = gc_out(&f, 4, (int64_t[]){1, 1, 3, 3});
    x[0] = 1, x[1] = 2, x[2] = 3, x[3] = 4;
    w[0] = 1, w[1] = 10, w[2] = 100, w[3] = 1000;
    assert_int_equal(gc_run(&f), XPB_OK);
    const double want_pad[9] = {1000, 200, 2000, 30, 4, 40, 3000, 400, 4000};
    assert_true(gc_allclose(y, want_pad, 9, 0, 0, "conv_t2d pad 1 output_padding 1"));
    gc_op_free(&f);
}

/* An image large enough that im2col works in several bands of rows (more than 2^22 column
 * entries): forward, backward data and backward weights against direct loops. */
static void test_conv2d_banded(void **state)
{
    (void)state;
    conv_case cc = {1, 64, 97, 95, 2, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1};
    xpb_op_attrs at = conv_attrs(&cc);
    int64_t oh = out_size(&cc, 0, 0), ow = out_size(&cc, 0, 1);
    int64_t xdims[4] = {cc.n, cc.c, cc.h, cc.w}, ydims[4] = {cc.n, cc.k, oh, ow};
    int64_t wdims[4] = {cc.k, cc.c, cc.kh, cc.kw}, bdims[1] = {cc.k};
    assert_true(cc.c * cc.kh * cc.kw * oh * ow > ((int64_t)1 << 22));

    gc_op f, bd, bw;
    gc_op_init(&f, XPB_OP_CONV2D, &at);
    float *x = gc_in(&f, 4, xdims), *w = gc_in(&f, 4, wdims), *b = gc_in(&f, 1, bdims);
    gc_out(&f, 4, ydims);
    gc_fill(x, gc_in_numel(&f, 0), 5, -1, 1);
    gc_fill(w, gc_in_numel(&f, 1), 6, -1, 1);
    gc_fill(b, cc.k, 7, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    int64_t ny = gc_out_numel(&f, 0), nx = gc_in_numel(&f, 0), nw = gc_in_numel(&f, 1);
    double *want = malloc(sizeof(double) * (size_t)(nx > ny ? nx : ny));
    assert_non_null(want);
    direct_conv2d(&cc, x, w, b, oh, ow, want);
    assert_true(gc_allclose(f.out[0], want, ny, 1e-4, 1e-4, "conv2d banded forward"));

    gc_op_init(&bd, XPB_OP_CONV2D_BWD_DATA, &at);
    float *dy = gc_in(&bd, 4, ydims);
    memcpy(gc_in(&bd, 4, wdims), w, sizeof(float) * (size_t)nw);
    gc_out(&bd, 4, xdims);
    gc_fill(dy, ny, 8, -1, 1);
    assert_int_equal(gc_run(&bd), XPB_OK);
    /* dx[c, ih, iw] = sum dy[k, i, j] * w[k, c, u, v] over (i*s - p + u, j*s - p + v) = (ih, iw) */
    memset(want, 0, sizeof(double) * (size_t)nx);
    for (int64_t k = 0; k < cc.k; k++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t c = 0; c < cc.c; c++)
                    for (int64_t u = 0; u < 3; u++)
                        for (int64_t v = 0; v < 3; v++) {
                            int64_t ih = i - 1 + u, iw = j - 1 + v;
                            if (ih < 0 || ih >= cc.h || iw < 0 || iw >= cc.w)
                                continue;
                            want[(c * cc.h + ih) * cc.w + iw] +=
                                (double)dy[(k * oh + i) * ow + j] *
                                w[((k * cc.c + c) * 3 + u) * 3 + v];
                        }
    assert_true(gc_allclose(bd.out[0], want, nx, 1e-4, 1e-4, "conv2d banded dx"));

    gc_op_init(&bw, XPB_OP_CONV2D_BWD_WEIGHTS, &at);
    memcpy(gc_in(&bw, 4, ydims), dy, sizeof(float) * (size_t)ny);
    memcpy(gc_in(&bw, 4, xdims), x, sizeof(float) * (size_t)nx);
    gc_out(&bw, 4, wdims);
    gc_out(&bw, 1, bdims);
    assert_int_equal(gc_run(&bw), XPB_OK);
    double wantb[2] = {0, 0};
    memset(want, 0, sizeof(double) * (size_t)nw);
    for (int64_t k = 0; k < cc.k; k++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double g = dy[(k * oh + i) * ow + j];
                wantb[k] += g;
                for (int64_t c = 0; c < cc.c; c++)
                    for (int64_t u = 0; u < 3; u++)
                        for (int64_t v = 0; v < 3; v++) {
                            int64_t ih = i - 1 + u, iw = j - 1 + v;
                            if (ih < 0 || ih >= cc.h || iw < 0 || iw >= cc.w)
                                continue;
                            want[((k * cc.c + c) * 3 + u) * 3 + v] +=
                                g * x[(c * cc.h + ih) * cc.w + iw];
                        }
            }
    /* sums of ~9000 products of magnitude <= 1: fp32 accumulation error well below 1e-2 */
    assert_true(gc_allclose(bw.out[0], want, nw, 1e-2, 1e-4, "conv2d banded dw"));
    assert_true(gc_allclose(bw.out[1], wantb, 2, 1e-6, 1e-6, "conv2d banded db"));

    free(want);
    gc_op_free(&f);
    gc_op_free(&bd);
    gc_op_free(&bw);
}

/* ---- ref_check_op on convolutions ---- */

static void test_conv_check_messages(void **state)
{
    (void)state;
    xpb_op_attrs at = {0};
    at.stride[0] = at.stride[1] = 2;
    at.pad[0] = at.pad[1] = 1;
    at.dilation[0] = at.dilation[1] = 1;
    gc_op f;

    /* wrong output shape: the message names op, layer, tensor, expected and found */
    gc_op_init(&f, XPB_OP_CONV2D, &at);
    f.op.layer = "conv3";
    gc_in(&f, 4, (int64_t[]){1, 3, 5, 7});
    gc_in(&f, 4, (int64_t[]){4, 3, 3, 3});
    gc_out(&f, 4, (int64_t[]){1, 4, 3, 3});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "CONV2D (layer 'conv3')"));
    assert_non_null(strstr(f.err, "output y"));
    assert_non_null(strstr(f.err, "must be [1, 4, 3, 4], found [1, 4, 3, 3]"));
    f.out_desc[0].dims[3] = 4;
    assert_int_equal(gc_check(&f), XPB_OK);

    /* channel mismatch between x and w */
    f.in_desc[1].dims[1] = 2;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "input w"));
    f.in_desc[1].dims[1] = 3;

    /* dilation 0 and stride 0 are invalid */
    f.op.attrs.dilation[1] = 0;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "dilation"));
    f.op.attrs.dilation[1] = 1;
    f.op.attrs.stride[0] = 0;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    f.op.attrs.stride[0] = 2;

    /* a bias of the wrong length */
    gc_in(&f, 1, (int64_t[]){3});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "input b"));
    f.in_desc[2].dims[0] = 4;
    assert_int_equal(gc_check(&f), XPB_OK);

    /* an I32 weight */
    f.in_desc[1].dtype = XPB_DTYPE_I32;
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "F32"));
    gc_op_free(&f);

    /* transposed: output_padding must be smaller than stride or dilation */
    at.output_padding[0] = at.output_padding[1] = 2;
    gc_op_init(&f, XPB_OP_CONV_T2D, &at);
    gc_in(&f, 4, (int64_t[]){1, 3, 5, 7});
    gc_in(&f, 4, (int64_t[]){3, 4, 3, 3});
    gc_out(&f, 4, (int64_t[]){1, 4, 11, 15});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "output_padding"));
    f.op.attrs.output_padding[0] = f.op.attrs.output_padding[1] = 1;
    f.out_desc[0].dims[2] = 10;
    f.out_desc[0].dims[3] = 14;
    assert_int_equal(gc_check(&f), XPB_OK);
    gc_op_free(&f);

    /* backward weights: dw's channels come from x, dy must match the forward output */
    gc_op_init(&f, XPB_OP_CONV2D_BWD_WEIGHTS, &at);
    f.op.attrs.output_padding[0] = f.op.attrs.output_padding[1] = 0;
    gc_in(&f, 4, (int64_t[]){1, 4, 3, 3}); /* dy: should be [1, 4, 3, 4] */
    gc_in(&f, 4, (int64_t[]){1, 3, 5, 7});
    gc_out(&f, 4, (int64_t[]){4, 3, 3, 3});
    assert_int_equal(gc_check(&f), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(f.err, "input dy"));
    assert_non_null(strstr(f.err, "[1, 4, 3, 4]"));
    gc_op_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_all_transposes),  cmocka_unit_test(test_gemm_k_zero_scales_c),
        cmocka_unit_test(test_conv2d_hand_computed), cmocka_unit_test(test_conv_t2d_hand_computed),
        cmocka_unit_test(test_conv2d_cases),         cmocka_unit_test(test_conv_t2d_cases),
        cmocka_unit_test(test_conv2d_banded),        cmocka_unit_test(test_conv_check_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
